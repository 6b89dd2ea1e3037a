//! `memory_fabric.candidate_evidence()`: a candidate's evidence refs as the provenance gate
//! classifies them.

use crate::policy;
use crate::spi::{plan, TEXT};
use pgrx::prelude::*;

/// The policy version of the candidate's effective review (the newest), if it has one.
const REVIEW_POLICY: &str = "SELECT policy_version FROM memory_fabric.reviews WHERE candidate_id = $1 \
     ORDER BY reviewed_at DESC, id DESC LIMIT 1";

/// Internal: the body of memory_fabric.candidate_evidence(). Each ref in order, with the untrusted
/// origin the gate gives it (NULL: trusted), by the policy its effective review used, else by the
/// policy in force; and that policy's version.
#[pg_extern(volatile, parallel_unsafe)]
#[search_path(pg_catalog, pg_temp)]
fn _candidate_evidence(
    candidate_id: Option<&str>,
) -> TableIterator<'static, (name!(evidence_ref, String), name!(untrusted_origin, Option<String>), name!(policy_version, i32))>
{
    let id = crate::args::require_text("candidate_id", candidate_id);
    let rows = Spi::connect(|client| {
        let c = crate::security::candidate_for_caller(client, &id);
        let reviewed: Option<i32> = client
            .select(&*plan(client, REVIEW_POLICY, &[TEXT], false), Some(1), &[id.as_str().into()])
            .and_then(|t| if t.is_empty() { Ok(None) } else { t.first().get_one::<i32>() })
            .unwrap_or_else(|e| error!("memory_fabric: cannot read reviews: {e}"));
        let (version, pol) = match reviewed {
            Some(v) => (v, policy::at_version(client, v)),
            None => {
                let p = policy::for_tenant(client, &c.tenant_id);
                (p.version, p.policy.clone())
            }
        };
        let refs: Vec<String> = serde_json::from_str(&c.evidence_refs).unwrap_or_default();
        refs.into_iter()
            .map(|r| {
                let origin = pol.provenance.origin(&r);
                (r, origin, version)
            })
            .collect::<Vec<_>>()
    });
    TableIterator::new(rows)
}

extension_sql!(
    r#"
CREATE FUNCTION memory_fabric.candidate_evidence(candidate_id text)
RETURNS TABLE (evidence_ref text, untrusted_origin text, policy_version integer)
LANGUAGE sql VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$ SELECT e.evidence_ref, e.untrusted_origin, e.policy_version FROM memory_fabric._candidate_evidence(candidate_id) e $$;
COMMENT ON FUNCTION memory_fabric.candidate_evidence IS
    'A candidate''s evidence refs, each with the untrusted origin the provenance gate gives it (NULL: trusted), by the policy of its effective review';
REVOKE ALL ON FUNCTION memory_fabric.candidate_evidence(text), memory_fabric._candidate_evidence(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric.candidate_evidence(text) TO memory_fabric_reviewer, memory_fabric_admin;
"#,
    name = "candidate_evidence",
    requires = [_candidate_evidence],
);
