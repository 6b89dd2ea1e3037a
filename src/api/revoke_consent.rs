//! `memory_fabric.revoke_consent()`: revoke a consent and retract what depended on it.

use crate::error::raise;
use crate::events;
use crate::args::require_text;
use crate::security::caller_name;
use crate::spi::{col, plan, TEXT};
use memory_fabric_core::{Error, Kind};
use pgrx::prelude::*;
use serde_json::json;

const CONSENT_OF: &str = "SELECT tenant_id, revoked_at IS NOT NULL FROM memory_fabric.consents WHERE id = $1";
const CONSENT_REVOKE: &str = "UPDATE memory_fabric.consents SET revoked_at = pg_catalog.clock_timestamp(), revoked_by = $2, \
     revocation_reason = $3 WHERE id = $1";
const RETRACT_DEPENDENT: &str = "UPDATE memory_fabric.promoted_memory SET retracted_at = pg_catalog.clock_timestamp(), \
     retracted_by = $2, retraction_reason = 'consent_revoked' WHERE consent_id = $1 AND retracted_at IS NULL RETURNING id";

/// Revokes a consent (write-once) and, in the same transaction, retracts every live memory that
/// depended on it. Recall already hides them from the revocation instant, even without this pass.
#[pg_extern(volatile, parallel_unsafe)]
#[search_path(pg_catalog, pg_temp)]
fn _revoke_consent(consent_id: Option<&str>, reason: Option<&str>) -> String {
    let id = require_text("consent_id", consent_id);
    let reason = crate::args::require_reason("reason", reason);
    Spi::connect_mut(|client| {
        crate::xact::lock(client, "consent", &[Some(id.as_str())]);
        let found = client
            .select(&*plan(client, CONSENT_OF, &[TEXT], false), Some(1), &[id.as_str().into()])
            .unwrap_or_else(|e| error!("memory_fabric: cannot read consent: {e}"))
            .into_iter()
            .next()
            .map(|r| (col::<String>(&r, 1).unwrap_or_default(), col::<bool>(&r, 2).unwrap_or(false)));
        let not_found = || Error::new(Kind::NotFound, format!("consent \"{id}\" does not exist"));
        let Some((tenant, revoked)) = found else {
            raise(not_found());
        };
        crate::security::require_row_tenant(client, &tenant, not_found);
        if revoked {
            raise(Error::wrong_state(format!("consent \"{id}\" is already revoked")));
        }
        let by = caller_name(client);
        client
            .update(&*plan(client, CONSENT_REVOKE, &[TEXT, TEXT, TEXT], true), None, &[id.as_str().into(), by.as_str().into(), reason.as_str().into()])
            .unwrap_or_else(|e| error!("memory_fabric: cannot revoke consent: {e}"));
        let retracted: Vec<String> = client
            .update(&*plan(client, RETRACT_DEPENDENT, &[TEXT, TEXT], true), None, &[id.as_str().into(), by.as_str().into()])
            .unwrap_or_else(|e| error!("memory_fabric: cannot retract dependent memories: {e}"))
            .filter_map(|r| col::<String>(&r, 1))
            .collect();
        for m in &retracted {
            events::emit(client, &tenant, "memory.retracted", m, Some(&by), json!({"reason": "consent_revoked", "consent_id": id}));
        }
        events::emit(client, &tenant, "memory.consent_revoked", &id, Some(&by), json!({"reason": reason, "retracted": retracted.len(), "memories": retracted}));
        id
    })
}

extension_sql!(
    r#"
CREATE FUNCTION memory_fabric.revoke_consent(consent_id text, reason text)
RETURNS memory_fabric.consents
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_id  text := memory_fabric._revoke_consent(revoke_consent.consent_id, revoke_consent.reason);
    v_row memory_fabric.consents;
BEGIN
    SELECT * INTO STRICT v_row FROM memory_fabric.consents AS k WHERE k.id = v_id;
    RETURN v_row;
END
$$;
COMMENT ON FUNCTION memory_fabric.revoke_consent IS
    'Revoke a consent and retract every memory that depended on it';
REVOKE ALL ON FUNCTION memory_fabric.revoke_consent(text, text), memory_fabric._revoke_consent(text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric.revoke_consent(text, text) TO memory_fabric_admin;
"#,
    name = "revoke_consent",
    requires = [_revoke_consent],
);
