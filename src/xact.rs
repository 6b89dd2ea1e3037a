//! Transaction guards: the lock that serialises pipeline steps, and the one clock reading that
//! writes of a step share.

use crate::spi::{plan, TEXT};
use pgrx::prelude::*;
use pgrx::spi::SpiClient;

/// Takes a lock on a key until the transaction ends, serialising concurrent pipeline steps on
/// the same candidate, memory, scope, subject, consent or policy.
///
/// The lock is a row lock on memory_fabric.locks, which no role but the extension's functions
/// can read or write: a role without rights on a tenant can neither take it first nor see its
/// key (advisory locks, which any role can take and pg_locks shows to everyone, could stall a
/// tenant). The row is the key's hash; two keys that share a hash only serialise more.
///
/// SPI runs statements read-only, reusing the caller's snapshot, until the transaction has an
/// id. Every step that locks is about to write, so it takes the id first: each later statement
/// then gets a fresh snapshot (READ COMMITTED) and sees what committed while we waited.
pub fn lock(client: &mut SpiClient<'_>, key: &str) {
    let p = plan(
        client,
        "INSERT INTO memory_fabric.locks AS l (key) VALUES (pg_catalog.hashtextextended($1, 0)) \
         ON CONFLICT (key) DO UPDATE SET key = excluded.key WHERE false",
        &[TEXT],
        true,
    );
    unsafe {
        pg_sys::GetCurrentTransactionId();
    }
    // ON CONFLICT DO UPDATE locks the existing row even when its WHERE is false, and a row that
    // another transaction is inserting makes this one wait for it: either way, one holder.
    client
        .update(&*p, None, &[key.into()])
        .unwrap_or_else(|e| error!("memory_fabric: cannot take lock: {e}"));
}

/// The key of a scope (a tenant and a user) for lock(): one promotion at a time per scope. Its
/// hash also keys the scope's row in memory_fabric.scope_versions (sql/schema.sql,
/// _scope_changed()).
pub fn scope_key(tenant_id: &str, user_id: Option<&str>) -> String {
    format!("scope:{tenant_id}:{}", user_id.unwrap_or(""))
}

/// The wall clock, read once, for writes that must share one instant.
pub fn clock(client: &SpiClient<'_>) -> pgrx::datum::TimestampWithTimeZone {
    client
        .select("SELECT pg_catalog.clock_timestamp()", Some(1), &[])
        .and_then(|t| t.first().get_one::<pgrx::datum::TimestampWithTimeZone>())
        .ok()
        .flatten()
        .unwrap_or_else(|| error!("memory_fabric: no clock"))
}
