//! `memory_fabric.purge_expired()`: tombstone expired content, in one transaction.

use crate::security::require_tenant;
use pgrx::prelude::*;

/// Expiry purging: memories expired longer ago than their write class's retention lose their
/// content (and their candidates') to a tombstone, in batches, in this one transaction. Returns
/// how many memories. (memory_fabric.purge_expired_memories() commits after each batch instead.)
#[pg_extern(volatile, parallel_unsafe)]
#[search_path(pg_catalog, pg_temp)]
fn _purge_expired(tenant_id: Option<&str>, batch_size: Option<i32>) -> i64 {
    let tenant = crate::args::require_tenant_id(tenant_id);
    let batch = crate::pipeline::maintenance::require_batch(batch_size, 1000);
    Spi::connect_mut(|client| {
        require_tenant(client, &tenant);
        crate::pipeline::maintenance::purge_all(client, &tenant, batch)
    })
}

extension_sql!(
    r#"
CREATE FUNCTION memory_fabric.purge_expired(tenant_id text, batch_size integer DEFAULT 1000)
RETURNS bigint
LANGUAGE sql VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$ SELECT memory_fabric._purge_expired(purge_expired.tenant_id, purge_expired.batch_size) $$;
COMMENT ON FUNCTION memory_fabric.purge_expired IS
    'Tombstone the content of memories expired longer ago than their write class''s retention';
REVOKE ALL ON FUNCTION memory_fabric.purge_expired(text, integer), memory_fabric._purge_expired(text, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric.purge_expired(text, integer) TO memory_fabric_admin;
"#,
    name = "purge_expired",
    requires = [_purge_expired],
);
