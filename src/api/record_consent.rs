//! `memory_fabric.record_consent()`: record a subject's consent.

use crate::ids::new_id;
use crate::error::raise;
use crate::events;
use crate::security::require_tenant;
use crate::spi::{col, plan, TEXT, TEXT_ARRAY, TIMESTAMPTZ};
use memory_fabric_core::{Error, Kind};
use pgrx::datum::TimestampWithTimeZone;
use pgrx::prelude::*;
use serde_json::json;

const CONSENT_INSERT: &str = "INSERT INTO memory_fabric.consents (id, tenant_id, subject, purpose, predicates_allowed, \
     classifications_allowed, basis, valid_until, evidence_refs, auditor_id, supersedes) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10, $11)";

/// Most elements in a consent's lists (predicates, classifications, evidence refs).
const LIST_MAX: usize = 64;

/// Longest evidence ref of a consent, in bytes.
const REF_MAX: usize = 1024;

#[allow(clippy::too_many_arguments)]
#[pg_extern(volatile, parallel_unsafe)]
#[search_path(pg_catalog, pg_temp)]
fn _record_consent(
    tenant_id: Option<&str>,
    subject: Option<&str>,
    purpose: Option<&str>,
    basis: Option<&str>,
    predicates_allowed: Option<Vec<Option<String>>>,
    classifications_allowed: Option<Vec<Option<String>>>,
    valid_until: Option<TimestampWithTimeZone>,
    evidence_refs: Option<&str>,
    auditor_id: Option<&str>,
    supersedes: Option<&str>,
) -> String {
    let tenant = crate::args::require_tenant_id(tenant_id);
    let subject = crate::args::require_name("subject", subject);
    let purpose = crate::args::require_name("purpose", purpose);
    let basis = crate::args::require_name("basis", basis);
    let auditor_id = auditor_id.map(|a| crate::args::require_name("auditor_id", Some(a)));
    let auditor_id = auditor_id.as_deref();
    let list = |name: &str, v: Option<Vec<Option<String>>>| -> Vec<String> {
        let v = v.unwrap_or_default();
        if v.len() > LIST_MAX {
            raise(Error::limit(format!("{name} has too many elements"))
                .detail(format!("It has {}; at most {LIST_MAX} are allowed.", v.len())));
        }
        v.into_iter()
            .map(|x| match x {
                Some(s) if !s.trim().is_empty() => crate::args::require_name(name, Some(&s)),
                _ => raise(Error::invalid(format!("{name} must not contain NULL or empty elements"))),
            })
            .collect()
    };
    let predicates = list("predicates_allowed", predicates_allowed);
    let classifications = list("classifications_allowed", classifications_allowed);
    let refs = evidence_refs.unwrap_or("[]");
    match serde_json::from_str::<serde_json::Value>(refs) {
        Ok(serde_json::Value::Array(a)) if a.iter().all(|x| x.as_str().is_some_and(|s| !s.trim().is_empty())) => {
            if a.len() > LIST_MAX || a.iter().any(|x| x.as_str().is_some_and(|s| s.len() > REF_MAX)) {
                raise(Error::limit("evidence_refs is too large")
                    .detail(format!("At most {LIST_MAX} references of at most {REF_MAX} bytes each are allowed.")));
            }
        }
        _ => raise(Error::invalid("evidence_refs must be a JSON array of non-empty strings")),
    }
    Spi::connect_mut(|client| {
        require_tenant(client, &tenant);
        if let Some(ts) = valid_until {
            let past = client
                .select("SELECT $1 <= pg_catalog.clock_timestamp()", Some(1), &[ts.into()])
                .and_then(|t| t.first().get_one::<bool>())
                .ok()
                .flatten()
                .unwrap_or(false);
            if past {
                raise(Error::invalid("valid_until is in the past").hint("A consent must be valid for some time to come."));
            }
        }
        if let Some(s) = supersedes {
            let found = client
                .select("SELECT subject FROM memory_fabric.consents WHERE id = $1 AND tenant_id = $2", Some(1), &[s.into(), tenant.as_str().into()])
                .unwrap_or_else(|e| error!("memory_fabric: cannot read consents: {e}"))
                .into_iter()
                .next()
                .and_then(|r| col::<String>(&r, 1));
            match found {
                None => raise(Error::new(Kind::NotFound, format!("consent \"{s}\" does not exist"))),
                Some(prev) if prev != subject => raise(
                    Error::invalid(format!("consent \"{s}\" is for another subject"))
                        .detail(format!("It is for \"{prev}\"; a consent only supersedes one of the same subject.")),
                ),
                _ => {}
            }
        }
        let id = new_id("cns");
        let p = plan(client, CONSENT_INSERT, &[TEXT, TEXT, TEXT, TEXT, TEXT_ARRAY, TEXT_ARRAY, TEXT, TIMESTAMPTZ, TEXT, TEXT, TEXT], true);
        client
            .update(
                &*p,
                None,
                &[
                    id.as_str().into(),
                    tenant.as_str().into(),
                    subject.as_str().into(),
                    purpose.as_str().into(),
                    predicates.into(),
                    classifications.into(),
                    basis.as_str().into(),
                    valid_until.into(),
                    refs.into(),
                    auditor_id.into(),
                    supersedes.into(),
                ],
            )
            .unwrap_or_else(|e| error!("memory_fabric: cannot record consent: {e}"));
        events::emit(client, &tenant, "memory.consent_recorded", &id, None, json!({"subject": subject, "purpose": purpose, "supersedes": supersedes}));
        id
    })
}

extension_sql!(
    r#"
CREATE FUNCTION memory_fabric.record_consent(
    tenant_id text, subject text, purpose text, basis text,
    predicates_allowed text[] DEFAULT '{}', classifications_allowed text[] DEFAULT '{}',
    valid_until timestamptz DEFAULT NULL, evidence_refs jsonb DEFAULT '[]', auditor_id text DEFAULT NULL,
    supersedes text DEFAULT NULL)
RETURNS memory_fabric.consents
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_id  text := memory_fabric._record_consent(record_consent.tenant_id, record_consent.subject,
        record_consent.purpose, record_consent.basis, record_consent.predicates_allowed,
        record_consent.classifications_allowed, record_consent.valid_until, record_consent.evidence_refs::text,
        record_consent.auditor_id, record_consent.supersedes);
    v_row memory_fabric.consents;
BEGIN
    SELECT * INTO STRICT v_row FROM memory_fabric.consents AS k WHERE k.id = v_id;
    RETURN v_row;
END
$$;
COMMENT ON FUNCTION memory_fabric.record_consent IS
    'Record a consent: subject, purpose, predicates and classifications allowed, basis, validity';
REVOKE ALL ON FUNCTION memory_fabric.record_consent(text, text, text, text, text[], text[], timestamptz, jsonb, text, text), memory_fabric._record_consent FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric.record_consent(text, text, text, text, text[], text[], timestamptz, jsonb, text, text) TO memory_fabric_admin;
"#,
    name = "record_consent",
    requires = [_record_consent],
);
