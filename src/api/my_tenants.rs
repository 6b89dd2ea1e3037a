//! `memory_fabric.my_tenants()`: the tenants the calling role may act for.

use crate::role::caller;
use crate::spi::{plan, OID};
use pgrx::prelude::*;

/// The live grants of the role and of every role it is a member of (as grant checks count them:
/// pg_has_role USAGE). Read as the extension's owner, so row-level security, which shows a role
/// only its pinned tenant's grants, does not hide the others from the one list it may see.
const GRANTS: &str = "SELECT g.tenant_id, g.role_name, g.granted_at FROM memory_fabric.tenant_grants g \
     WHERE g.revoked_at IS NULL AND pg_catalog.pg_has_role($1, g.role_oid, 'USAGE') \
     ORDER BY g.tenant_id, g.role_name, g.granted_at";

/// Internal: the body of memory_fabric.my_tenants().
#[pg_extern(volatile, parallel_unsafe)]
#[search_path(pg_catalog, pg_temp)]
fn _my_tenants() -> TableIterator<
    'static,
    (name!(tenant_id, String), name!(role_name, String), name!(granted_at, TimestampWithTimeZone)),
> {
    let rows: Vec<(String, String, TimestampWithTimeZone)> = Spi::connect(|client| {
        client
            .select(&*plan(client, GRANTS, &[OID], false), None, &[caller().into()])
            .unwrap_or_else(|e| error!("memory_fabric: cannot read tenant grants: {e}"))
            .map(|r| {
                let t: Option<String> = r.get(1).unwrap_or(None);
                let n: Option<String> = r.get(2).unwrap_or(None);
                let at: Option<TimestampWithTimeZone> = r.get(3).unwrap_or(None);
                (t.unwrap_or_default(), n.unwrap_or_default(), at.expect("granted_at is NOT NULL"))
            })
            .collect()
    });
    TableIterator::new(rows)
}

extension_sql!(
    r#"
CREATE FUNCTION memory_fabric.my_tenants()
RETURNS TABLE (tenant_id text, role_name text, granted_at timestamptz)
LANGUAGE sql VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$ SELECT t.tenant_id, t.role_name, t.granted_at FROM memory_fabric._my_tenants() t $$;
COMMENT ON FUNCTION memory_fabric.my_tenants IS
    'The tenants the calling role may act for: its live grants and those of the roles it is a member of (''*'': every tenant)';
REVOKE ALL ON FUNCTION memory_fabric.my_tenants(), memory_fabric._my_tenants() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric.my_tenants() TO memory_fabric_agent, memory_fabric_reviewer, memory_fabric_admin;
"#,
    name = "my_tenants",
    requires = [_my_tenants],
);
