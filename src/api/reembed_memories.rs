//! `memory_fabric.reembed_memories()`: re-embed a tenant's memories with the embedder capture uses now,
//! committing after every batch.

use crate::pipeline::maintenance::{current_embedder, require_batch, require_no_transaction_block};
use crate::embedder::{embed_text, registered_dimensions};
use crate::error::{raise, OrRaise};
use crate::events;
use crate::policy;
use crate::args::require_identifier;
use crate::security::{caller_name, require_tenant};
use crate::spi::{col, plan, FLOAT4_ARRAY, INT4, TEXT, TEXT_ARRAY};
use memory_fabric_core::capture::check_embedding;
use memory_fabric_core::Error;
use pgrx::prelude::*;
use serde_json::json;

const REEMBED_PENDING: &str = "SELECT count(*) FROM memory_fabric.promoted_memory \
     WHERE tenant_id = $1 AND erased_at IS NULL AND embedding IS NOT NULL AND embedding_model <> $2";

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

/// Internal, for reembed_memories(): the model memories will be re-embedded with, and how many
/// memories of the tenant are not embedded with it yet (live or not; erased ones have no vector).
#[pg_extern(volatile, parallel_unsafe, security_definer)]
#[search_path(pg_catalog, pg_temp)]
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

/// Internal, for reembed_memories(): re-embeds up to batch_size memories of the tenant that are
/// not embedded with `model` yet, which must be the model of the embedder capture uses now.
/// Returns how many it re-embedded (0: none left). Nothing is written if any vector is refused.
#[pg_extern(volatile, parallel_unsafe, security_definer)]
#[search_path(pg_catalog, pg_temp)]
fn _reembed_batch(tenant_id: Option<&str>, model: Option<&str>, batch_size: Option<i32>) -> i32 {
    let tenant = crate::args::require_tenant_id(tenant_id);
    let model = require_identifier("model", model);
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

extension_sql!(
    r#"
CREATE PROCEDURE memory_fabric.reembed_memories(tenant_id text, batch_size integer DEFAULT 200)
LANGUAGE plpgsql
AS $$
#variable_conflict use_variable
DECLARE
    v_model text;
    v_total bigint;
    v_done  bigint := 0;
    v_n     integer;
BEGIN
    SELECT p.model, p.pending INTO v_model, v_total
    FROM memory_fabric._reembed_pending(reembed_memories.tenant_id, reembed_memories.batch_size) AS p;
    IF v_total = 0 THEN
        RAISE NOTICE 'every memory of tenant "%" is embedded with %', reembed_memories.tenant_id, v_model;
        RETURN;
    END IF;
    LOOP
        v_n := memory_fabric._reembed_batch(reembed_memories.tenant_id, v_model, reembed_memories.batch_size);
        EXIT WHEN v_n = 0;
        v_done := v_done + v_n;
        RAISE NOTICE '%', pg_catalog.format('re-embedded %s of %s memories of tenant "%s" with %s (%s%%)', v_done,
            greatest(v_total, v_done), reembed_memories.tenant_id, v_model, v_done * 100 / greatest(v_total, v_done));
        COMMIT;
    END LOOP;
END
$$;
COMMENT ON PROCEDURE memory_fabric.reembed_memories IS
    'Re-embed a tenant''s memories with the embedder capture uses now, committing after every batch (resumable)';
REVOKE ALL ON FUNCTION memory_fabric._reembed_pending(text, integer), memory_fabric._reembed_batch(text, text, integer) FROM PUBLIC;
REVOKE ALL ON PROCEDURE memory_fabric.reembed_memories(text, integer) FROM PUBLIC;
-- admin: the procedure, and the batch functions it calls as the caller
GRANT EXECUTE ON FUNCTION memory_fabric._reembed_pending(text, integer), memory_fabric._reembed_batch(text, text, integer) TO memory_fabric_admin;
GRANT EXECUTE ON PROCEDURE memory_fabric.reembed_memories(text, integer) TO memory_fabric_admin, @extowner@;
"#,
    name = "reembed_memories",
    requires = [_reembed_pending, _reembed_batch],
);
