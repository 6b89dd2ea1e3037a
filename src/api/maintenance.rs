//! Long maintenance operations, one batch per call: re-embedding the memories of a tenant with
//! the embedder capture uses now, and purging expired content. The procedures
//! memory_fabric.reembed_memories() and memory_fabric.purge_expired_memories() (sql/finalize.sql)
//! call a batch, report progress with a NOTICE and commit, so a cancelled run keeps every batch
//! before the one it was in, and running it again resumes where it stopped: a batch picks only
//! what is still to do.
//!
//! The batch functions are SECURITY DEFINER (the procedures run as their caller, since a
//! procedure that commits cannot be), and check the caller's tenant grant and pin on each call.

use crate::embedder::{embed_text, embedding_function, registered_dimensions};
use crate::error::{raise, OrRaise};
use crate::events;
use crate::gucs;
use crate::policy;
use crate::args::require_text;
use crate::security::{caller_name, require_tenant};
use crate::spi::{col, plan, FLOAT4_ARRAY, INT4, INT8, TEXT, TEXT_ARRAY};
use memory_fabric_core::capture::check_embedding;
use memory_fabric_core::{Error, Kind};
use pgrx::prelude::*;
use pgrx::spi::SpiClient;
use serde_json::json;

/// The model capture gives a vector when the caller passes none, and the function that makes it:
/// memory_fabric.embedding_function's (resolved, see capture::embedding_function), else the
/// built-in embedder's (None).
fn current_embedder(client: &SpiClient<'_>) -> (String, Option<String>) {
    match gucs::get(&gucs::EMBEDDING_FUNCTION) {
        Some(func) => {
            let (qualified, model) = embedding_function(client, &func);
            (model, Some(qualified))
        }
        None => (crate::embedder::builtin_model().to_owned(), None),
    }
}

/// The procedures commit after every batch, which they cannot do inside a transaction block:
/// refused up front (25001, as VACUUM is), before any batch runs.
fn require_no_transaction_block(procedure: &str) {
    if unsafe { pg_sys::IsTransactionBlock() } {
        raise(Error::new(Kind::ActiveTransaction, format!("{procedure} cannot run inside a transaction block"))
            .detail("It commits after every batch, so that a cancelled run keeps the batches it finished.")
            .hint(format!("CALL {procedure} on its own, outside BEGIN … COMMIT.")));
    }
}

pub fn require_batch(batch_size: Option<i32>, default: i32) -> i32 {
    let b = batch_size.unwrap_or(default);
    if !(1..=100_000).contains(&b) {
        raise(Error::invalid("batch_size must be between 1 and 100000").detail(format!("{b} was given.")));
    }
    b
}

const REEMBED_PENDING: &str = "SELECT count(*) FROM memory_fabric.promoted_memory \
     WHERE tenant_id = $1 AND erased_at IS NULL AND embedding IS NOT NULL AND embedding_model <> $2";

/// Internal, for reembed_memories(): the model memories will be re-embedded with, and how many
/// memories of the tenant are not embedded with it yet (live or not; erased ones have no vector).
#[pg_extern(volatile, parallel_unsafe, security_definer)]
fn _reembed_pending(
    tenant_id: Option<&str>,
    batch_size: Option<i32>,
) -> TableIterator<'static, (name!(model, String), name!(pending, i64))> {
    require_no_transaction_block("memory_fabric.reembed_memories()");
    let tenant = crate::args::require_tenant_id(tenant_id);
    require_batch(batch_size, 200);
    let (model, pending) = Spi::connect(|client| {
        require_tenant(client, &tenant);
        let (model, _) = current_embedder(client);
        let pending = client
            .select(&*plan(client, REEMBED_PENDING, &[TEXT, TEXT], false), Some(1), &[tenant.as_str().into(), model.as_str().into()])
            .and_then(|t| t.first().get_one::<i64>())
            .unwrap_or_else(|e| error!("memory_fabric: cannot count memories: {e}"))
            .unwrap_or(0);
        (model, pending)
    });
    TableIterator::once((model, pending))
}

// The models of the tenant's memories that have a vector, other than the target: a loose index
// scan of promoted_model, one probe per model however many memories each has.
const REEMBED_MODELS: &str = "WITH RECURSIVE m(model) AS ( \
       (SELECT embedding_model FROM memory_fabric.promoted_memory \
        WHERE tenant_id = $1 AND erased_at IS NULL AND embedding IS NOT NULL ORDER BY embedding_model LIMIT 1) \
       UNION ALL \
       SELECT (SELECT p.embedding_model FROM memory_fabric.promoted_memory p \
               WHERE p.tenant_id = $1 AND p.erased_at IS NULL AND p.embedding IS NOT NULL AND p.embedding_model > m.model \
               ORDER BY p.embedding_model LIMIT 1) \
       FROM m WHERE m.model IS NOT NULL) \
     SELECT coalesce(pg_catalog.array_agg(model), '{}') FROM m WHERE model IS NOT NULL AND model <> $2";
// A batch of the memories of one model still to do, in id order: a range of promoted_model, so
// each batch visits only those. (Without the order the planner may scan the table, expecting the
// rows to be spread evenly: they are not, the ones done are.) Rows are locked as they are picked,
// so two runs (or a retraction) never write the same row at once: a concurrent run waits, then
// skips the row it re-reads as done. Retracted and expired memories are re-embedded too: recall as
// of a past instant still reads them.
const REEMBED_PICK: &str = "SELECT id, text, embedding_model FROM memory_fabric.promoted_memory \
     WHERE tenant_id = $1 AND embedding_model = $2 AND erased_at IS NULL AND embedding IS NOT NULL \
     ORDER BY id LIMIT $3 FOR UPDATE";
// One statement per batch: $2 holds the batch's vectors end to end, $3 dimensions each, the k-th
// for the k-th id of $1.
const REEMBED_SET: &str = "UPDATE memory_fabric.promoted_memory m \
     SET embedding = ($2::real[])[(u.k - 1) * $3 + 1 : u.k * $3], embedding_model = $4 \
     FROM pg_catalog.unnest($1::text[]) WITH ORDINALITY AS u(id, k) WHERE m.id = u.id RETURNING m.id";

/// Internal, for reembed_memories(): re-embeds up to batch_size memories of the tenant that are
/// not embedded with `model` yet, which must be the model of the embedder capture uses now.
/// Returns how many it re-embedded (0: none left). Nothing is written if any vector is refused.
#[pg_extern(volatile, parallel_unsafe, security_definer)]
fn _reembed_batch(tenant_id: Option<&str>, model: Option<&str>, batch_size: Option<i32>) -> i32 {
    let tenant = crate::args::require_tenant_id(tenant_id);
    let model = require_text("model", model);
    let batch = require_batch(batch_size, 200);
    Spi::connect_mut(|client| {
        require_tenant(client, &tenant);
        let (now, func) = current_embedder(client);
        if now != model {
            raise(Error::wrong_state(format!("the embedder's model is {now}, not {model}"))
                .detail("memory_fabric.embedding_function or memory_fabric.embedding_model changed during the run.")
                .hint("Run memory_fabric.reembed_memories() again: it re-embeds with the embedder in use."));
        }
        let max_dims = policy::for_tenant(client, &tenant).policy.limits.embedding_max_dimensions;
        let models: Vec<String> = client
            .select(&*plan(client, REEMBED_MODELS, &[TEXT, TEXT], false), Some(1), &[tenant.as_str().into(), model.as_str().into()])
            .and_then(|t| t.first().get_one::<Vec<String>>())
            .unwrap_or_else(|e| error!("memory_fabric: cannot read embedding models: {e}"))
            .unwrap_or_default();
        if models.is_empty() {
            return 0;
        }
        // up to batch_size memories, model by model
        let mut picked: Vec<(String, String, String)> = Vec::new();
        for m in &models {
            let want = batch - picked.len() as i32;
            if want <= 0 {
                break;
            }
            picked.extend(
                client
                    .update(&*plan(client, REEMBED_PICK, &[TEXT, TEXT, INT4], true), None, &[tenant.as_str().into(), m.as_str().into(), want.into()])
                    .unwrap_or_else(|e| error!("memory_fabric: cannot read memories: {e}"))
                    .map(|r| (col(&r, 1).unwrap_or_default(), col(&r, 2).unwrap_or_default(), col(&r, 3).unwrap_or_default())),
            );
        }
        let mut from: std::collections::BTreeMap<String, usize> = Default::default();
        let mut vectors: Vec<f32> = Vec::new();
        let mut dims = 0usize;
        for (_, text, old) in &picked {
            pgrx::check_for_interrupts!();
            let v = match &func {
                Some(qualified) => {
                    let v = embed_text(client, qualified, text);
                    check_embedding(&v, None, max_dims).or_raise();
                    let d = registered_dimensions(client, &tenant, &model, v.len() as i32);
                    check_embedding(&v, Some(d as usize), max_dims).or_raise();
                    v
                }
                None => crate::embedder::embed_with(&model, text),
            };
            // every vector of one model has its registered dimension (checked above)
            dims = v.len();
            vectors.extend_from_slice(&v);
            *from.entry(old.clone()).or_default() += 1;
        }
        if !picked.is_empty() {
            let ids: Vec<&str> = picked.iter().map(|(id, _, _)| id.as_str()).collect();
            let done = client
                .update(
                    &*plan(client, REEMBED_SET, &[TEXT_ARRAY, FLOAT4_ARRAY, INT4, TEXT], true),
                    None,
                    &[ids.clone().into(), vectors.into(), (dims as i32).into(), model.as_str().into()],
                )
                .unwrap_or_else(|e| error!("memory_fabric: cannot re-embed memories: {e}"))
                .filter_map(|r| col::<String>(&r, 1))
                .count();
            if done != ids.len() {
                error!("memory_fabric: re-embedded {done} of the {} memories locked for it", ids.len());
            }
            events::emit(client, &tenant, "memory.reembedded", &format!("model:{model}"), Some(&caller_name(client)),
                         json!({"model": model, "from": from, "count": ids.len(), "memories": ids}));
        }
        picked.len() as i32
    })
}

/// The tenant's retention: each write class's in seconds and 'default', as the JSON object
/// PURGE_DUE reads, and the shortest of them.
pub struct Retention {
    json: String,
    shortest: i64,
}

fn retention(client: &SpiClient<'_>, tenant: &str) -> Retention {
    let pol = policy::for_tenant(client, tenant);
    let mut m: serde_json::Map<String, serde_json::Value> =
        pol.policy.retention_seconds.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
    m.entry("default").or_insert_with(|| json!(pol.policy.retention_of(None)));
    let shortest = m.values().filter_map(|v| v.as_i64()).min().unwrap_or(0);
    Retention { json: serde_json::Value::Object(m).to_string(), shortest }
}

// Memories expired longer ago than their write class's retention. A batch takes them in expiry
// order, which promoted_expired (tenant_id, expires_at) gives, so it reads only the oldest expiries
// instead of sorting the tenant's every expiring memory (an id tie-break would need that sort);
// the bound on expires_at alone (older than the shortest retention) stops it early.
const PURGE_DUE: &str = "memory_fabric.promoted_memory \
       WHERE tenant_id = $1 AND erased_at IS NULL AND expires_at IS NOT NULL \
         AND expires_at < pg_catalog.clock_timestamp() - $3 * interval '1 second' \
         AND expires_at + coalesce(($2::jsonb ->> write_class)::bigint, ($2::jsonb ->> 'default')::bigint) * interval '1 second' \
             < pg_catalog.clock_timestamp()";

fn purge_batch_sql() -> &'static str {
    static SQL: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    SQL.get_or_init(|| {
        format!(
            "WITH due AS (SELECT id FROM {PURGE_DUE} ORDER BY expires_at LIMIT $4) \
             UPDATE memory_fabric.promoted_memory m SET erased_at = pg_catalog.clock_timestamp(), text = '[erased]', \
                value = NULL, embedding = NULL FROM due WHERE m.id = due.id RETURNING m.candidate_id"
        )
    })
}

const PURGE_CANDIDATES: &str = "UPDATE memory_fabric.candidates SET erased_at = pg_catalog.clock_timestamp(), \
     text = '[erased]', value = NULL, embedding = NULL, metadata = '{}' WHERE id = ANY ($1) AND erased_at IS NULL";

/// Tombstones up to `batch` memories of the tenant that are due (and their candidates); returns
/// how many memories.
pub fn purge_batch(client: &mut SpiClient<'_>, tenant: &str, retention: &Retention, batch: i32) -> i64 {
    let ids: Vec<String> = client
        .update(
            &*plan(client, purge_batch_sql(), &[TEXT, TEXT, INT8, INT4], true),
            None,
            &[tenant.into(), retention.json.as_str().into(), retention.shortest.into(), batch.into()],
        )
        .unwrap_or_else(|e| error!("memory_fabric: cannot purge: {e}"))
        .filter_map(|r| col::<String>(&r, 1))
        .collect();
    if !ids.is_empty() {
        let n = ids.len() as i64;
        client
            .update(&*plan(client, PURGE_CANDIDATES, &[TEXT_ARRAY], true), None, &[ids.into()])
            .unwrap_or_else(|e| error!("memory_fabric: cannot purge candidates: {e}"));
        return n;
    }
    0
}

/// Expiry purging in one transaction (memory_fabric.purge_expired): every batch until none is
/// due, then one event. Returns how many memories.
pub fn purge_all(client: &mut SpiClient<'_>, tenant: &str, batch: i32) -> i64 {
    let retention = retention(client, tenant);
    let mut total = 0i64;
    loop {
        pgrx::check_for_interrupts!();
        let n = purge_batch(client, tenant, &retention, batch);
        if n == 0 {
            break;
        }
        total += n;
    }
    if total > 0 {
        events::emit(client, tenant, "memory.erased", "expired", None, json!({"reason": "expired", "memories": total}));
    }
    total
}

/// Internal, for purge_expired_memories(): how many memories of the tenant are due for purging.
#[pg_extern(volatile, parallel_unsafe, security_definer)]
fn _purge_expired_pending(tenant_id: Option<&str>, batch_size: Option<i32>) -> i64 {
    require_no_transaction_block("memory_fabric.purge_expired_memories()");
    let tenant = crate::args::require_tenant_id(tenant_id);
    require_batch(batch_size, 1000);
    Spi::connect(|client| {
        require_tenant(client, &tenant);
        let r = retention(client, &tenant);
        client
            .select(
                &format!("SELECT count(*) FROM {PURGE_DUE}"),
                Some(1),
                &[tenant.as_str().into(), r.json.as_str().into(), r.shortest.into()],
            )
            .and_then(|t| t.first().get_one::<i64>())
            .unwrap_or_else(|e| error!("memory_fabric: cannot count expired memories: {e}"))
            .unwrap_or(0)
    })
}

/// Internal, for purge_expired_memories(): one batch of expiry purging, with its own event.
/// Returns how many memories it tombstoned (0: none is due).
#[pg_extern(volatile, parallel_unsafe, security_definer)]
fn _purge_expired_batch(tenant_id: Option<&str>, batch_size: Option<i32>) -> i64 {
    let tenant = crate::args::require_tenant_id(tenant_id);
    let batch = require_batch(batch_size, 1000);
    Spi::connect_mut(|client| {
        require_tenant(client, &tenant);
        let r = retention(client, &tenant);
        let n = purge_batch(client, &tenant, &r, batch);
        if n > 0 {
            events::emit(client, &tenant, "memory.erased", "expired", None, json!({"reason": "expired", "memories": n}));
        }
        n
    })
}
