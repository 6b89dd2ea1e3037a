//! Tenant isolation: who may act for which tenant.
//!
//! A role may act for tenant T when it is a superuser or the role that installed the extension,
//! or when
//!   1. it holds (directly or through role membership) a live grant for T or for '*'
//!      (memory_fabric.grant_tenant), and
//!   2. the transaction is pinned to T: SET LOCAL memory_fabric.tenant_id = 'T'.
//! The role is the session's current role (SET ROLE counts), read with GetOuterUserId so that the
//! answer is the same inside the SECURITY DEFINER functions that do the work. Every public function
//! checks it on entry; row-level security applies the same rule to direct reads of the tables.

use crate::error::raise;
use crate::gucs;
use crate::args::require_text;
use crate::role::caller;
use crate::rows;
use crate::spi::{col, plan, OID, TEXT};
use memory_fabric_core::{Error, Kind};
use pgrx::prelude::*;
use pgrx::spi::SpiClient;

fn caller_is_superuser() -> bool {
    unsafe { pg_sys::superuser_arg(caller()) }
}

/// Superusers and the role that installed the extension administer its data: they act for
/// every tenant without grants or a pin, and may grant every tenant.
pub fn caller_is_administrator(client: &SpiClient<'_>) -> bool {
    caller_is_superuser()
        || client
            .select(
                "SELECT extowner = $1 FROM pg_catalog.pg_extension WHERE extname = 'memory_fabric'",
                Some(1),
                &[caller().into()],
            )
            .and_then(|t| t.first().get_one::<bool>())
            .ok()
            .flatten()
            .unwrap_or(false)
}

pub fn caller_name(client: &SpiClient<'_>) -> String {
    client
        .select("SELECT pg_catalog.pg_get_userbyid($1)::text", Some(1), &[caller().into()])
        .and_then(|t| t.first().get_one::<String>())
        .ok()
        .flatten()
        .unwrap_or_else(|| "?".into())
}

/// What the caller's grants let it claim and do beyond an agent's: (reviewer, admin). A reviewer
/// is a role that may execute memory_fabric.approve(), an admin one that may execute
/// memory_fabric.set_policy() (superusers and the extension's owner are both).
pub fn caller_powers(client: &SpiClient<'_>) -> (bool, bool) {
    let p = plan(
        client,
        "SELECT pg_catalog.has_function_privilege($1, 'memory_fabric.approve(text, text, text, text)', 'EXECUTE'), \
                pg_catalog.has_function_privilege($1, 'memory_fabric.set_policy(text, jsonb, text)', 'EXECUTE')",
        &[OID],
        false,
    );
    let (reviewer, admin) = client
        .select(&*p, Some(1), &[caller().into()])
        .and_then(|t| t.first().get_two::<bool, bool>())
        .unwrap_or_else(|e| error!("memory_fabric: cannot read privileges: {e}"));
    (reviewer == Some(true), admin == Some(true))
}

/// Refuses (42501) a source the caller's grants do not allow it to claim: any role that may
/// capture claims "agent"; "operator" takes a reviewer, "system" an admin.
pub fn require_source_claim(client: &SpiClient<'_>, source: &str) {
    let needs = match source {
        "operator" => "a reviewer",
        "system" => "an admin",
        _ => return,
    };
    let (reviewer, admin) = caller_powers(client);
    if (source == "operator" && !reviewer) || (source == "system" && !admin) {
        raise(
            denied(format!("role \"{}\" cannot capture with source \"{source}\"", caller_name(client)))
                .detail(format!("Source \"{source}\" is claimed by {needs} role; an agent captures with source \"agent\"."))
                .hint("Capture with source => 'agent', or ask a reviewer to capture the fact."),
        );
    }
}

/// Whether `role` (a role name recorded on a row) is the caller for four eyes: the same role, or
/// one that is a member of the other (either can act as the other). A role that no longer
/// exists is nobody. Superuser status is not membership here: every role is not a superuser's.
pub fn is_caller(client: &SpiClient<'_>, role: &str) -> bool {
    let oid: Option<pg_sys::Oid> = client
        .select(&*plan(client, "SELECT oid FROM pg_catalog.pg_roles WHERE rolname = $1", &[TEXT], false), Some(1), &[role.into()])
        .and_then(|t| if t.is_empty() { Ok(None) } else { t.first().get_one::<pg_sys::Oid>() })
        .unwrap_or_else(|e| error!("memory_fabric: cannot read roles: {e}"));
    let me = caller();
    oid.is_some_and(|o| unsafe { o == me || pg_sys::is_member_of_role_nosuper(me, o) || pg_sys::is_member_of_role_nosuper(o, me) })
}

/// The pinned tenant exactly as set, if any (unset and empty both mean none). Never trimmed:
/// the grant check, row-level security and the rows compare the same bytes.
pub fn pin() -> Option<String> {
    gucs::get_exact(&gucs::TENANT_ID)
}

/// The pinned intent exactly as set, if any (unset and empty both mean none).
pub fn intent_pin() -> Option<String> {
    gucs::get_exact(&gucs::INTENT_ID)
}

/// Refuses (42501) an intent outside the transaction's intent pin, when there is one. A capture
/// must name the pinned intent: a memory without one is recalled for every intent. A recall may
/// name it, or none (it then reads the cross-intent memories, which the pinned intent reads too).
pub fn require_intent(intent: Option<&str>, capture: bool) {
    let Some(p) = intent_pin() else { return };
    match intent {
        Some(i) if i == p => {}
        Some(i) => raise(
            denied(format!("intent \"{i}\" is not the pinned intent"))
                .detail(format!("This transaction is pinned to intent \"{p}\".")),
        ),
        None if capture => raise(
            denied("a memory without an intent is outside the pinned intent".into())
                .detail(format!("This transaction is pinned to intent \"{p}\"; a memory without an intent is recalled for every intent."))
                .hint(format!("Pass intent_id => '{}'.", p.replace('\'', "''"))),
        ),
        None => {}
    }
}

/// (is the caller the extension's owner, does it hold a live grant for the tenant or for '*')
const ACCESS: &str = "SELECT coalesce((SELECT e.extowner = $2 FROM pg_catalog.pg_extension e WHERE e.extname = 'memory_fabric'), false), \
     EXISTS (SELECT 1 FROM memory_fabric.tenant_grants g JOIN pg_catalog.pg_roles r ON r.oid = g.role_oid \
             WHERE g.revoked_at IS NULL AND (g.tenant_id = $1 OR g.tenant_id = '*') \
               AND pg_catalog.pg_has_role($2, r.oid, 'USAGE'))";

fn access(client: &SpiClient<'_>, tenant: &str) -> (bool, bool) {
    let p = plan(client, ACCESS, &[TEXT, pgrx::pg_sys::PgOid::BuiltIn(pgrx::pg_sys::BuiltinOid::OIDOID)], false);
    let (owner, granted) = client
        .select(&*p, Some(1), &[tenant.into(), caller().into()])
        .and_then(|t| t.first().get_two::<bool, bool>())
        .unwrap_or_else(|e| error!("memory_fabric: cannot read tenant grants: {e}"));
    (owner == Some(true), granted == Some(true))
}

fn denied(message: String) -> Error {
    Error::new(Kind::Privilege, message)
}

/// Refuses (42501) unless the transaction is pinned to `tenant`.
fn require_pin(client: &SpiClient<'_>, tenant: &str) {
    match pin() {
        None => raise(
            denied(format!("memory_fabric.tenant_id is not set for role \"{}\"", caller_name(client)))
                .detail(format!("Acting for tenant \"{tenant}\" needs the transaction pinned to it."))
                .hint(format!(
                    "Run SET LOCAL memory_fabric.tenant_id = '{}' in the transaction first (or SET it for the session, before a CALL of a procedure that commits).",
                    tenant.replace('\'', "''")
                )),
        ),
        Some(p) if p != tenant => raise(
            denied(format!("tenant \"{tenant}\" is not the pinned tenant"))
                .detail(format!("This transaction is pinned to tenant \"{p}\".")),
        ),
        _ => {}
    }
}

/// Refuses (42501) unless the caller may act for `tenant`, a tenant the caller named itself.
pub fn require_tenant(client: &SpiClient<'_>, tenant: &str) {
    if caller_is_superuser() {
        return;
    }
    let (owner, granted) = access(client, tenant);
    if owner {
        return;
    }
    require_pin(client, tenant);
    if !granted {
        raise(
            denied(format!("role \"{}\" has no access to tenant \"{tenant}\"", caller_name(client)))
                .hint("An admin can grant it with memory_fabric.grant_tenant()."),
        );
    }
}

/// Refuses a row the caller found by its id unless the caller may act for the row's tenant. A
/// caller with no grant for that tenant gets `not_found()`, the very error an unknown id gives,
/// so an id cannot tell it which tenants exist or what they are called; a caller granted the
/// tenant gets require_tenant()'s own errors (the pin, 42501).
pub fn require_row_tenant(client: &SpiClient<'_>, tenant: &str, not_found: impl FnOnce() -> Error) {
    if caller_is_superuser() {
        return;
    }
    let (owner, granted) = access(client, tenant);
    if owner {
        return;
    }
    if !granted {
        raise(not_found());
    }
    require_pin(client, tenant);
}

/// Internal: the tenant check, for the SQL functions (explain_recall, memory_history).
#[pg_extern(volatile, parallel_unsafe)]
#[search_path(pg_catalog, pg_temp)]
fn _require_tenant(tenant_id: Option<&str>) {
    let t = crate::args::require_tenant_id(tenant_id);
    Spi::connect(|client| require_tenant(client, &t));
}

/// Internal: the check of a row found by its id, for memory_history (SECURITY DEFINER, so row-level
/// security does not hide the row): P0002 with `not_found` unless the caller may read the tenant.
#[pg_extern(volatile, parallel_unsafe)]
#[search_path(pg_catalog, pg_temp)]
fn _require_row_tenant(tenant_id: &str, not_found: &str) {
    Spi::connect(|client| require_row_tenant(client, tenant_id, || Error::new(Kind::NotFound, not_found)));
}

thread_local! {
    // The statement _visible_tenant() last answered, and its answer.
    static VISIBLE: std::cell::RefCell<Option<((u32, i64, pg_sys::Oid), Option<String>)>> =
        const { std::cell::RefCell::new(None) };
}

/// The statement being run: its local transaction and its start. Every query of one top-level
/// statement (its subqueries, and the functions it calls) shares it.
fn statement() -> (u32, i64) {
    unsafe {
        #[cfg(any(feature = "pg13", feature = "pg14", feature = "pg15", feature = "pg16"))]
        let lxid = (*pg_sys::MyProc).lxid;
        #[cfg(not(any(feature = "pg13", feature = "pg14", feature = "pg15", feature = "pg16")))]
        let lxid = (*pg_sys::MyProc).vxid.lxid;
        (lxid, pg_sys::GetCurrentStatementStartTimestamp())
    }
}

/// Internal, for row-level security: the one tenant whose rows the querying role may read in
/// this statement, or NULL. It is the pin as the statement first found it, and only when the
/// caller holds that same tenant (or administers the extension): setting the pin again later in
/// the statement (set_config in a subquery) changes nothing until the next statement.
#[pg_extern(stable, parallel_safe, security_definer)]
#[search_path(pg_catalog, pg_temp)]
fn _visible_tenant() -> Option<String> {
    let key = {
        let (lxid, at) = statement();
        (lxid, at, caller())
    };
    if let Some(v) = VISIBLE.with(|m| m.borrow().as_ref().filter(|(k, _)| *k == key).map(|(_, v)| v.clone())) {
        return v;
    }
    let v = pin().filter(|t| {
        caller_is_superuser()
            || Spi::connect(|client| {
                let (owner, granted) = access(client, t);
                owner || granted
            })
    });
    VISIBLE.with(|m| *m.borrow_mut() = Some((key, v.clone())));
    v
}

/// The C symbol of 0.6.0 and earlier, whose row-level security policies call it until
/// ALTER EXTENSION UPDATE replaces them: whether the caller may read the pinned tenant. No
/// 0.7.0 object uses it (its SQL function is dropped by the update).
#[pg_extern(sql = false, stable, parallel_safe, security_definer)]
fn _pin_allowed() -> bool {
    _visible_tenant().is_some()
}

pub const ACTIVE: &str = "SELECT id FROM memory_fabric.tenant_grants WHERE role_oid = (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = $1) AND tenant_id = $2 \
     AND revoked_at IS NULL";
pub const INSERT: &str = "INSERT INTO memory_fabric.tenant_grants (id, role_name, tenant_id, granted_by, role_oid) \
     SELECT $1, $2, $3, $4, r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = $2";
pub const REVOKE: &str = "UPDATE memory_fabric.tenant_grants SET revoked_at = pg_catalog.clock_timestamp(), revoked_by = $2 \
     WHERE id = $1";

/// The role's canonical name, or 22023.
pub fn role_name(client: &SpiClient<'_>, role: &str) -> String {
    client
        .select("SELECT rolname::text FROM pg_catalog.pg_roles WHERE rolname = $1", Some(1), &[role.into()])
        .and_then(|t| if t.is_empty() { Ok(None) } else { t.first().get_one::<String>() })
        .unwrap_or_else(|e| error!("memory_fabric: cannot read roles: {e}"))
        .unwrap_or_else(|| raise(Error::invalid(format!("role \"{role}\" does not exist"))))
}

pub fn require_grantor(client: &SpiClient<'_>, tenant: &str) {
    if tenant == "*" && !caller_is_administrator(client) {
        raise(denied("only a superuser or the extension's owner can grant or revoke access to every tenant ('*')".into()));
    }
    require_tenant(client, tenant);
}

pub fn active_grant(client: &SpiClient<'_>, role: &str, tenant: &str) -> Option<String> {
    client
        .select(&*plan(client, ACTIVE, &[TEXT, TEXT], false), Some(1), &[role.into(), tenant.into()])
        .unwrap_or_else(|e| error!("memory_fabric: cannot read tenant grants: {e}"))
        .into_iter()
        .next()
        .and_then(|r| col(&r, 1))
}

/// Runs `f(client, role, tenant)` for grant_tenant / revoke_tenant, after checking the arguments,
/// serialising on the (role, tenant) pair and checking the caller may grant that tenant.
pub fn with_grant_target(role: Option<&str>, tenant_id: Option<&str>, f: impl FnOnce(&mut SpiClient<'_>, String, String) -> String) -> String {
    let role = require_text("role", role);
    let tenant = crate::args::require_tenant_id(tenant_id);
    Spi::connect_mut(|client| {
        crate::xact::lock(client, "grant", &[Some(role.as_str()), Some(tenant.as_str())]);
        let role = role_name(client, &role);
        require_grantor(client, &tenant);
        f(client, role, tenant)
    })
}

/// Writing a correction takes a reviewer (or admin) role: corrections outrank what they correct.
pub fn require_correction_writer(client: &SpiClient<'_>) {
    let (reviewer, _) = caller_powers(client);
    if !reviewer {
        raise(Error::new(Kind::Privilege, "writing a correction needs the memory_fabric_reviewer role")
            .detail(format!("Role \"{}\" captured a candidate of write class correction.", caller_name(client)))
            .hint("Capture it as another write class, or have a reviewer capture the correction."));
    }
}

/// The candidate, if the caller may act for its tenant (see security::require_row_tenant), or P0002.
pub fn candidate_for_caller(client: &SpiClient<'_>, id: &str) -> rows::Candidate {
    let c = rows::candidate(client, id);
    require_row_tenant(client, &c.tenant_id, || rows::candidate_not_found(id));
    c
}

// Row-level security: every table has it enabled and forced (sql/schema.sql). For everyone
// but the extension's owner only SELECT has a policy: rows of the pinned tenant, to a role
// granted that tenant. No pin, an empty pin or no grant: nothing. The tenant is
// _visible_tenant(): the pin as the statement first found it, checked against the grant for that
// same value, so a pin changed inside the statement (set_config in a subquery) shows nothing
// more. With no INSERT/UPDATE/DELETE policy, even a role mistakenly granted those privileges
// cannot write. The owner sees and restores every row (dump and restore); the append-only
// guards hold for it as for everyone.
extension_sql!(
    r#"
DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['candidates', 'embedding_models', 'reviews', 'decisions', 'consents',
                             'promoted_memory', 'events', 'tenant_grants', 'policies', 'recall_log', 'audit_chain'] LOOP
        EXECUTE pg_catalog.format('CREATE POLICY tenant_read ON memory_fabric.%I FOR SELECT USING (%s)', t,
            CASE WHEN t = 'policies' THEN 'tenant_id = ''*'' OR ' ELSE '' END ||
            'tenant_id = (SELECT memory_fabric._visible_tenant())');
        EXECUTE pg_catalog.format('CREATE POLICY owner_all ON memory_fabric.%I FOR ALL TO @extowner@ '
                                  'USING (true) WITH CHECK (true)', t);
    END LOOP;
END
$$;
-- The chain's heads: only the owner's (restore); verify_audit reads them as the extension.
CREATE POLICY owner_all ON memory_fabric.audit_heads FOR ALL TO @extowner@ USING (true) WITH CHECK (true);
-- The policies call it as whichever role queries a table, so every role may: it only answers
-- whether the caller itself may read the pinned tenant.
GRANT EXECUTE ON FUNCTION memory_fabric._visible_tenant() TO PUBLIC;
REVOKE ALL ON FUNCTION memory_fabric._require_tenant(text), memory_fabric._require_row_tenant(text, text) FROM PUBLIC;
"#,
    name = "row_level_security",
    requires = [_visible_tenant, _require_tenant, _require_row_tenant],
);
