//! `memory_fabric.grant_tenant()`: let a role act for a tenant.

use crate::security::{active_grant, caller_name, with_grant_target, INSERT};
use crate::ids::new_id;
use crate::events;
use crate::spi::{plan, TEXT};
use pgrx::prelude::*;
use serde_json::json;

/// Internal: the body of memory_fabric.grant_tenant(). Idempotent; returns the grant's id.
#[pg_extern(volatile, parallel_unsafe)]
#[search_path(pg_catalog, pg_temp)]
fn _grant_tenant(role: Option<&str>, tenant_id: Option<&str>) -> String {
    with_grant_target(role, tenant_id, |client, role, tenant| {
        if let Some(id) = active_grant(client, &role, &tenant) {
            return id;
        }
        let id = new_id("tg");
        let by = caller_name(client);
        let p = plan(client, INSERT, &[TEXT, TEXT, TEXT, TEXT], true);
        client
            .update(&*p, None, &[id.as_str().into(), role.as_str().into(), tenant.as_str().into(), by.as_str().into()])
            .unwrap_or_else(|e| error!("memory_fabric: cannot grant: {e}"));
        events::emit(client, &tenant, "memory.tenant_granted", &id, Some(&by), json!({"role": role}));
        id
    })
}

extension_sql!(
    r#"
CREATE FUNCTION memory_fabric.grant_tenant(role text, tenant_id text)
RETURNS memory_fabric.tenant_grants
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_id  text := memory_fabric._grant_tenant(grant_tenant.role, grant_tenant.tenant_id);
    v_row memory_fabric.tenant_grants;
BEGIN
    SELECT * INTO STRICT v_row FROM memory_fabric.tenant_grants AS g WHERE g.id = v_id;
    RETURN v_row;
END
$$;
COMMENT ON FUNCTION memory_fabric.grant_tenant IS
    'Let a role (and its members) act for a tenant, or every tenant with ''*'' (superuser only)';
REVOKE ALL ON FUNCTION memory_fabric.grant_tenant(text, text), memory_fabric._grant_tenant(text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric.grant_tenant(text, text) TO memory_fabric_admin;
"#,
    name = "grant_tenant",
    requires = [_grant_tenant],
);
