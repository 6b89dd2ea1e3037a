//! Long maintenance operations, one batch per call: re-embedding the memories of a tenant with
//! the embedder capture uses now, and purging expired content. The procedures
//! memory_fabric.reembed_memories() and memory_fabric.purge_expired_memories() (src/api/)
//! call a batch, report progress with a NOTICE and commit, so a cancelled run keeps every batch
//! before the one it was in, and running it again resumes where it stopped: a batch picks only
//! what is still to do.
//!
//! The batch functions are SECURITY DEFINER (the procedures run as their caller, since a
//! procedure that commits cannot be), and check the caller's tenant grant and pin on each call.

use crate::embedder::embedding_function;
use crate::error::raise;
use crate::events;
use crate::gucs;
use crate::policy;
use crate::spi::{col, plan, INT4, INT8, TEXT, TEXT_ARRAY};
use memory_fabric_core::{Error, Kind};
use pgrx::prelude::*;
use pgrx::spi::SpiClient;
use serde_json::json;

/// The model capture gives a vector when the caller passes none, and the function that makes it:
/// memory_fabric.embedding_function's (resolved, see capture::embedding_function), else the
/// built-in embedder's (None).
pub fn current_embedder(client: &SpiClient<'_>) -> (String, Option<String>) {
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
pub fn require_no_transaction_block(procedure: &str) {
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



/// The tenant's retention: each write class's in seconds and 'default', as the JSON object
/// PURGE_DUE reads, and the shortest of them.
pub struct Retention {
    pub json: String,
    pub shortest: i64,
}

pub fn retention(client: &SpiClient<'_>, tenant: &str) -> Retention {
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
pub const PURGE_DUE: &str = "memory_fabric.promoted_memory \
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
                value = NULL, embedding = NULL, evidence_refs = '[]', \
                content_hash = memory_fabric._erased_digest(m.content_hash) FROM due WHERE m.id = due.id RETURNING m.candidate_id"
        )
    })
}

const PURGE_CANDIDATES: &str = "UPDATE memory_fabric.candidates SET erased_at = pg_catalog.clock_timestamp(), \
     text = '[erased]', value = NULL, embedding = NULL, metadata = '{}', evidence_refs = '[]', \
     content_hash = memory_fabric._erased_digest(content_hash) WHERE id = ANY ($1) AND erased_at IS NULL";

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
