//! Transaction guards: the lock that serialises pipeline steps, and the one clock reading that
//! writes of a step share.

use crate::spi::{plan, INT8};
use pgrx::prelude::*;
use pgrx::spi::SpiClient;

/// Takes a lock until the transaction ends on a kind of thing and its parts (a candidate's id; a
/// tenant and a user; …), serialising concurrent pipeline steps on the same candidate, memory,
/// scope, subject, consent or policy.
///
/// The lock is a row lock on memory_fabric.locks, which no role but the extension's functions
/// can read or write: a role without rights on a tenant can neither take it first nor see its
/// key (advisory locks, which any role can take and pg_locks shows to everyone, could stall a
/// tenant). The row is keyed by 64 bits of the SHA-256 of the kind and the length-prefixed parts
/// (memory_fabric_core::keys): two different things share a row only by a collision of SHA-256,
/// which no one can bring about, so no tenant's ids can be chosen to stall another's steps.
///
/// SPI runs statements read-only, reusing the caller's snapshot, until the transaction has an
/// id. Every step that locks is about to write, so it takes the id first: each later statement
/// then gets a fresh snapshot (READ COMMITTED) and sees what committed while we waited.
pub fn lock(client: &mut SpiClient<'_>, kind: &str, parts: &[Option<&str>]) {
    let p = plan(
        client,
        "INSERT INTO memory_fabric.locks AS l (key) VALUES ($1) \
         ON CONFLICT (key) DO UPDATE SET key = excluded.key WHERE false",
        &[INT8],
        true,
    );
    unsafe {
        pg_sys::GetCurrentTransactionId();
    }
    let key = memory_fabric_core::keys::lock_key(kind, parts);
    // ON CONFLICT DO UPDATE locks the existing row even when its WHERE is false, and a row that
    // another transaction is inserting makes this one wait for it: either way, one holder.
    client
        .update(&*p, None, &[key.into()])
        .unwrap_or_else(|e| error!("memory_fabric: cannot take lock: {e}"));
}

/// The key of a scope's row in memory_fabric.scope_versions (memory_fabric_core::keys), as the
/// statement trigger on promoted_memory computes it (sql/schema.sql, _scope_changed()).
#[pg_extern(immutable, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn _scope_version_key(tenant_id: Option<&str>, user_id: Option<&str>) -> Option<pgrx::Uuid> {
    Some(pgrx::Uuid::from_bytes(memory_fabric_core::keys::version_key(tenant_id?, user_id)))
}

/// The key lock() takes for a kind and its parts (a null part: absent): for tests and for a
/// superuser looking into memory_fabric.locks.
#[pg_extern(immutable, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn _lock_key(kind: &str, parts: Vec<Option<String>>) -> i64 {
    let parts: Vec<Option<&str>> = parts.iter().map(|p| p.as_deref()).collect();
    memory_fabric_core::keys::lock_key(kind, &parts)
}

extension_sql!(
    "REVOKE ALL ON FUNCTION memory_fabric._scope_version_key, memory_fabric._lock_key FROM PUBLIC;\n",
    name = "key_privileges",
    requires = [_scope_version_key, _lock_key],
);

/// Locks a scope (a tenant and a user): one promotion at a time per scope.
pub fn lock_scope(client: &mut SpiClient<'_>, tenant_id: &str, user_id: Option<&str>) {
    lock(client, "scope", &[Some(tenant_id), user_id]);
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
