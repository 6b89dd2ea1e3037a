//! `memory_fabric.purge_expired_memories()`: tombstone expired content past retention, committing
//! after every batch.

use crate::pipeline::maintenance::{purge_batch, require_batch, require_no_transaction_block, retention, PURGE_DUE};
use crate::events;
use crate::security::require_tenant;
use pgrx::prelude::*;
use serde_json::json;

/// Internal, for purge_expired_memories(): how many memories of the tenant are due for purging.
#[pg_extern(volatile, parallel_unsafe, security_definer)]
#[search_path(pg_catalog, pg_temp)]
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
#[search_path(pg_catalog, pg_temp)]
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

extension_sql!(
    r#"
CREATE PROCEDURE memory_fabric.purge_expired_memories(tenant_id text, batch_size integer DEFAULT 1000)
LANGUAGE plpgsql
AS $$
#variable_conflict use_variable
DECLARE
    v_total bigint;
    v_done  bigint := 0;
    v_n     bigint;
BEGIN
    v_total := memory_fabric._purge_expired_pending(purge_expired_memories.tenant_id, purge_expired_memories.batch_size);
    IF v_total = 0 THEN
        RAISE NOTICE 'no memory of tenant "%" is due for purging', purge_expired_memories.tenant_id;
        RETURN;
    END IF;
    LOOP
        v_n := memory_fabric._purge_expired_batch(purge_expired_memories.tenant_id, purge_expired_memories.batch_size);
        EXIT WHEN v_n = 0;
        v_done := v_done + v_n;
        RAISE NOTICE '%', pg_catalog.format('purged %s of %s expired memories of tenant "%s" (%s%%)', v_done,
            greatest(v_total, v_done), purge_expired_memories.tenant_id, v_done * 100 / greatest(v_total, v_done));
        COMMIT;
    END LOOP;
END
$$;
COMMENT ON PROCEDURE memory_fabric.purge_expired_memories IS
    'Tombstone the content of expired memories past retention, committing after every batch (resumable)';
REVOKE ALL ON FUNCTION memory_fabric._purge_expired_pending(text, integer), memory_fabric._purge_expired_batch(text, integer) FROM PUBLIC;
REVOKE ALL ON PROCEDURE memory_fabric.purge_expired_memories(text, integer) FROM PUBLIC;
-- admin: the procedure, and the batch functions it calls as the caller
GRANT EXECUTE ON FUNCTION memory_fabric._purge_expired_pending(text, integer), memory_fabric._purge_expired_batch(text, integer) TO memory_fabric_admin;
GRANT EXECUTE ON PROCEDURE memory_fabric.purge_expired_memories(text, integer) TO memory_fabric_admin, @extowner@;
"#,
    name = "purge_expired_memories",
    requires = [_purge_expired_pending, _purge_expired_batch],
);
