//! `memory_fabric.revoke_tenant()`: withdraw a tenant grant (kept, marked revoked).

use crate::security::{active_grant, caller_name, with_grant_target, REVOKE};
use crate::error::raise;
use crate::events;
use crate::spi::{plan, TEXT};
use memory_fabric_core::{Error, Kind};
use pgrx::prelude::*;
use serde_json::json;

/// Internal: the body of memory_fabric.revoke_tenant(). Returns the revoked grant's id.
#[pg_extern(volatile, parallel_unsafe)]
#[search_path(pg_catalog, pg_temp)]
fn _revoke_tenant(role: Option<&str>, tenant_id: Option<&str>) -> String {
    with_grant_target(role, tenant_id, |client, role, tenant| {
        let Some(id) = active_grant(client, &role, &tenant) else {
            raise(Error::new(Kind::NotFound, format!("role \"{role}\" has no grant for tenant \"{tenant}\"")));
        };
        let by = caller_name(client);
        let p = plan(client, REVOKE, &[TEXT, TEXT], true);
        client
            .update(&*p, None, &[id.as_str().into(), by.as_str().into()])
            .unwrap_or_else(|e| error!("memory_fabric: cannot revoke: {e}"));
        events::emit(client, &tenant, "memory.tenant_revoked", &id, Some(&by), json!({"role": role}));
        id
    })
}

extension_sql!(
    r#"
CREATE FUNCTION memory_fabric.revoke_tenant(role text, tenant_id text)
RETURNS memory_fabric.tenant_grants
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_id  text := memory_fabric._revoke_tenant(revoke_tenant.role, revoke_tenant.tenant_id);
    v_row memory_fabric.tenant_grants;
BEGIN
    SELECT * INTO STRICT v_row FROM memory_fabric.tenant_grants AS g WHERE g.id = v_id;
    RETURN v_row;
END
$$;
COMMENT ON FUNCTION memory_fabric.revoke_tenant IS 'Withdraw a tenant grant (kept, marked revoked)';
REVOKE ALL ON FUNCTION memory_fabric.revoke_tenant(text, text), memory_fabric._revoke_tenant(text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric.revoke_tenant(text, text) TO memory_fabric_admin;
"#,
    name = "revoke_tenant",
    requires = [_revoke_tenant],
);
