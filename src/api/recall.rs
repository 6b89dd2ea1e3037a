//! Stage 4, recall: the SQL function memory_fabric.recall (sql/finalize.sql) does the filtering
//! and ranking; these helpers give it the tenant's weights and the query's embeddings.

use crate::embedder::embed_with_function;
use crate::error::raise;
use crate::gucs;
use crate::policy;
use crate::embedder;
use memory_fabric_core::{redact::Outcome, Error};
use pgrx::prelude::*;

/// [relevance weight, recency weight, importance weight, half-life in days, minimum score,
/// low-confidence threshold] from the policy in force for the tenant, once the caller is known to
/// act for it (42501 otherwise): recall's entry check and its settings in one call.
#[pg_extern(stable, parallel_safe)]
fn _recall_settings(tenant_id: &str) -> Vec<f64> {
    let tenant_id = crate::args::require_tenant_id(Some(tenant_id));
    let tenant_id = tenant_id.as_str();
    Spi::connect(|client| {
        crate::security::require_tenant(client, tenant_id);
        let r = policy::for_tenant(client, tenant_id).policy.recall;
        vec![r.w_relevance, r.w_recency, r.w_importance, r.half_life_days, r.min_score, r.low_confidence]
    })
}

/// The query text embedded the way memories are: redacted with the tenant's rules, then by the
/// hashing built-in embedder (cheap, so memories embedded with it still score), by the semantic
/// one when it is the built-in model in force, and by the embedding function when one is
/// configured (with its model name).
#[pg_extern(volatile, parallel_unsafe)]
fn _embed_query(
    tenant_id: &str,
    query_text: &str,
) -> TableIterator<
    'static,
    (
        name!(builtin, Vec<f32>),
        name!(semantic, Option<Vec<f32>>),
        name!(function_embedding, Option<Vec<f32>>),
        name!(function_model, Option<String>),
    ),
> {
    if query_text.len() > 1 << 20 {
        raise(Error::limit("query_text is too long").detail("At most 1 MB of query text is embedded."));
    }
    let row = Spi::connect(|client| {
        let pol = policy::for_tenant(client, tenant_id);
        let text = pol.redactor.redact_str(query_text, &mut Outcome::default());
        let hash = embedder::embed_with(embedder::HASH, &text);
        let semantic = (embedder::builtin_model() == embedder::SEMANTIC).then(|| embedder::embed_with(embedder::SEMANTIC, &text));
        let (f, m) = match gucs::get(&gucs::EMBEDDING_FUNCTION) {
            Some(func) => {
                let (v, m) = embed_with_function(client, &func, &text);
                (Some(v), Some(m))
            }
            None => (None, None),
        };
        (hash, semantic, f, m)
    });
    TableIterator::once(row)
}
