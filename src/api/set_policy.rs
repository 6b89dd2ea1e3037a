//! `memory_fabric.set_policy()`: write a new policy version.

use crate::error::{raise, OrRaise};
use crate::events;
use crate::policy;
use crate::security::{caller_name, require_tenant};
use crate::spi::{plan, INT4, TEXT};
use memory_fabric_core::policy::{merge, rename_legacy_keys, Policy};
use memory_fabric_core::redact::Redactor;
use memory_fabric_core::{Error, Kind};
use pgrx::prelude::*;
use serde_json::json;

/// Largest policy patch, in bytes (the default policy is about 2 KB).
const PATCH_MAX: usize = 256 * 1024;

// From the sequence; past the newest version if rows were written around set_policy() (a
// restore, the owner's own INSERT), which the unique version then keeps apart.
const POLICY_NEXT: &str = "SELECT GREATEST(pg_catalog.nextval('memory_fabric.policy_versions'), \
     (SELECT pg_catalog.max(version) + 1 FROM memory_fabric.policies))::integer";
const POLICY_INSERT: &str = "INSERT INTO memory_fabric.policies (tenant_id, version, body, created_by, note) \
     VALUES ($1, $2, $3::jsonb, $4, $5)";
const POLICY_BODY: &str = "SELECT body::text FROM memory_fabric.policies WHERE version = $1";

/// Writes a new policy version for a tenant ('*': the default): the policy in force with the
/// patch merged in, validated (and its redaction rules compiled) before it is written.
#[pg_extern(volatile, parallel_unsafe)]
#[search_path(pg_catalog, pg_temp)]
fn _set_policy(tenant_id: Option<&str>, patch: Option<&str>, note: Option<&str>) -> i32 {
    let tenant = crate::args::require_tenant_id(tenant_id);
    let note = crate::args::require_note("note", note);
    if let Some(p) = patch.filter(|p| p.len() > PATCH_MAX) {
        raise(Error::limit("patch is too large").detail(format!("It has {} bytes; at most {PATCH_MAX} are allowed.", p.len())));
    }
    let patch: serde_json::Value = serde_json::from_str(patch.unwrap_or("null"))
        .unwrap_or_else(|_| raise(Error::invalid("patch is not valid JSON")));
    if !patch.is_object() {
        raise(Error::invalid("patch must be a JSON object").hint("Pass the keys to change, e.g. '{\"trust\": {\"min_confidence\": 0.6}}'."));
    }
    Spi::connect_mut(|client| {
        if tenant == "*" && !crate::security::caller_is_administrator(client) {
            raise(Error::new(Kind::Privilege, "only a superuser or the extension's owner can change the default policy ('*')"));
        }
        require_tenant(client, &tenant);
        // One change at a time per tenant: versions come from a sequence, so tenants never wait
        // for each other.
        crate::xact::lock(client, "policies", &[Some(tenant.as_str())]);
        let current = policy::current_version(client, &tenant);
        let mut body: serde_json::Value = client
            .select(&*plan(client, POLICY_BODY, &[INT4], false), Some(1), &[current.into()])
            .and_then(|t| t.first().get_one::<String>())
            .ok()
            .flatten()
            .and_then(|b| serde_json::from_str(&b).ok())
            .unwrap_or_else(Policy::default_json);
        let mut patch = patch.clone();
        rename_legacy_keys(&mut body);
        rename_legacy_keys(&mut patch);
        merge(&mut body, &patch);
        let parsed = Policy::from_json(&body).or_raise();
        Redactor::new(parsed.default_redaction, &parsed.redaction_rules).or_raise();
        let version: i32 = client
            .select(POLICY_NEXT, Some(1), &[])
            .and_then(|t| t.first().get_one::<i32>())
            .unwrap_or_else(|e| error!("memory_fabric: cannot number the policy version: {e}"))
            .unwrap_or_else(|| error!("memory_fabric: cannot number the policy version"));
        let by = caller_name(client);
        client
            .update(
                &*plan(client, POLICY_INSERT, &[TEXT, INT4, TEXT, TEXT, TEXT], true),
                None,
                &[tenant.as_str().into(), version.into(), body.to_string().as_str().into(), by.as_str().into(), note.into()],
            )
            .unwrap_or_else(|e| error!("memory_fabric: cannot write policy: {e}"));
        events::emit(client, &tenant, "memory.policy_changed", &format!("policy:{version}"), Some(&by), json!({"version": version, "patch": patch}));
        version
    })
}

extension_sql!(
    r#"
CREATE FUNCTION memory_fabric.set_policy(tenant_id text, patch jsonb, note text DEFAULT NULL)
RETURNS memory_fabric.policies
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_version integer := memory_fabric._set_policy(set_policy.tenant_id, set_policy.patch::text, set_policy.note);
    v_row     memory_fabric.policies;
BEGIN
    SELECT * INTO STRICT v_row FROM memory_fabric.policies AS p WHERE p.version = v_version;
    RETURN v_row;
END
$$;
COMMENT ON FUNCTION memory_fabric.set_policy IS
    'Write a new policy version: the policy in force with the patch merged in, validated first';
REVOKE ALL ON FUNCTION memory_fabric.set_policy(text, jsonb, text), memory_fabric._set_policy(text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric.set_policy(text, jsonb, text) TO memory_fabric_admin;
"#,
    name = "set_policy",
    requires = [_set_policy],
);
