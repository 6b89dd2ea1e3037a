//! `memory_fabric.forget_subject()`: erasure, tombstones for a subject's content.

use crate::events;
use crate::args::require_identifier;
use crate::security::{caller_name, require_tenant};
use crate::spi::{plan, TEXT, TIMESTAMPTZ};
use pgrx::prelude::*;
use serde_json::json;

const ERASE_CANDIDATES: &str = "UPDATE memory_fabric.candidates SET erased_at = $3, \
     text = '[erased]', value = NULL, embedding = NULL, metadata = '{}' \
     WHERE tenant_id = $1 AND (user_id = $2 OR entity = $2) AND erased_at IS NULL RETURNING id";
const ERASE_MEMORIES: &str = "UPDATE memory_fabric.promoted_memory SET erased_at = $4, \
     text = '[erased]', value = NULL, embedding = NULL, \
     retracted_at = coalesce(retracted_at, $4), retracted_by = coalesce(retracted_by, $3), \
     retraction_reason = coalesce(retraction_reason, 'erased') \
     WHERE tenant_id = $1 AND (user_id = $2 OR entity = $2) AND erased_at IS NULL RETURNING id";

/// Erasure: every candidate and memory of a subject (its user_id, or its entity) keeps its id,
/// timestamps, hash and audit trail, and loses its content (text, value, embedding, metadata) to
/// a tombstone. Live memories are retracted with it. Returns (candidates, memories) erased.
#[pg_extern(volatile, parallel_unsafe)]
#[search_path(pg_catalog, pg_temp)]
fn _forget_subject(tenant_id: Option<&str>, user_id: Option<&str>, reason: Option<&str>) -> Vec<i64> {
    let tenant = crate::args::require_tenant_id(tenant_id);
    let subject = require_identifier("user_id", user_id);
    let reason = crate::args::require_reason("reason", reason);
    Spi::connect_mut(|client| {
        require_tenant(client, &tenant);
        crate::xact::lock(client, "subject", &[Some(tenant.as_str()), Some(subject.as_str())]);
        let by = caller_name(client);
        // One instant for the whole erasure, so its history reads in a stable order.
        let at = crate::xact::clock(client);
        let cands = client
            .update(&*plan(client, ERASE_CANDIDATES, &[TEXT, TEXT, TIMESTAMPTZ], true), None, &[tenant.as_str().into(), subject.as_str().into(), at.into()])
            .unwrap_or_else(|e| error!("memory_fabric: cannot erase candidates: {e}"))
            .len() as i64;
        let mems = client
            .update(&*plan(client, ERASE_MEMORIES, &[TEXT, TEXT, TEXT, TIMESTAMPTZ], true), None, &[tenant.as_str().into(), subject.as_str().into(), by.as_str().into(), at.into()])
            .unwrap_or_else(|e| error!("memory_fabric: cannot erase memories: {e}"))
            .len() as i64;
        events::emit(client, &tenant, "memory.erased", &format!("subject:{subject}"), Some(&by),
                     json!({"reason": reason, "candidates": cands, "memories": mems}));
        vec![cands, mems]
    })
}

extension_sql!(
    r#"
CREATE FUNCTION memory_fabric.forget_subject(tenant_id text, user_id text, reason text)
RETURNS TABLE (candidates_erased bigint, memories_erased bigint)
LANGUAGE sql VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
    SELECT r[1], r[2] FROM memory_fabric._forget_subject(forget_subject.tenant_id, forget_subject.user_id,
                                                         forget_subject.reason) AS r
$$;
COMMENT ON FUNCTION memory_fabric.forget_subject IS
    'Erasure: replace a subject''s captured content with tombstones, keeping ids, times, hashes and audit';
REVOKE ALL ON FUNCTION memory_fabric.forget_subject(text, text, text), memory_fabric._forget_subject(text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric.forget_subject(text, text, text) TO memory_fabric_admin;
"#,
    name = "forget_subject",
    requires = [_forget_subject],
);
