//! `memory_fabric.review_status()`: where one candidate stands, for the agent that captured it.

use crate::error::raise;
use crate::security;
use pgrx::prelude::*;

/// Internal: refuses a candidate the caller may not ask about with the error an unknown id gets
/// (P0002): one of a tenant it does not act for, or, unless it has a reviewer's or an admin's
/// powers, one that another role captured. An agent learns nothing about other agents' captures.
#[pg_extern(volatile, parallel_unsafe)]
#[search_path(pg_catalog, pg_temp)]
fn _require_own_candidate(candidate_id: Option<&str>) {
    let id = crate::args::require_text("candidate_id", candidate_id);
    Spi::connect(|client| {
        let c = security::candidate_for_caller(client, &id);
        let (reviewer, admin) = security::caller_powers(client);
        let own = c.captured_by.as_deref().is_some_and(|r| security::is_caller(client, r));
        if !(own || reviewer || admin || security::caller_is_administrator(client)) {
            raise(crate::rows::candidate_not_found(&id));
        }
    })
}

extension_sql!(
    r#"
CREATE FUNCTION memory_fabric.review_status(candidate_id text)
RETURNS TABLE (id text, stage text, status text, reviewer text, reason text, tier text,
               duplicate_of text, contradicts text, resolution text, reviewed_at timestamptz,
               decision text, decided_at timestamptz, new_candidate_id text,
               memory_id text, promoted_at timestamptz, retracted_at timestamptz, captured_at timestamptz)
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    PERFORM memory_fabric._require_own_candidate(review_status.candidate_id);
    -- stage, first match: erased; retracted or promoted; rejected or edited by an operator;
    -- unreviewed; in the review queue (the view's own test: a human-tier review, or a
    -- contradiction no rule resolved, with no later review, decision or promotion); refused by
    -- review; else promote() would take it
    RETURN QUERY
    SELECT c.id,
           CASE WHEN c.erased_at IS NOT NULL THEN 'erased'
                WHEN p.retracted_at IS NOT NULL THEN 'retracted'
                WHEN p.id IS NOT NULL THEN 'promoted'
                WHEN d.action = 'reject' THEN 'rejected'
                WHEN d.action = 'edit' THEN 'edited'
                WHEN r.id IS NULL THEN 'unreviewed'
                WHEN (r.reviewer = 'human' OR (r.status = 'contradicts' AND r.contradiction_resolution = 'block'))
                     AND (d.id IS NULL OR d.decided_at < r.reviewed_at) THEN 'waiting_for_human'
                WHEN r.status = 'rejected' THEN 'rejected'
                WHEN r.status = 'duplicate_of' THEN 'duplicate'
                ELSE 'promotable' END,
           r.status, r.reviewer, r.reason, r.proposed_tier, r.duplicate_of_id, r.contradicts_id,
           r.contradiction_resolution, r.reviewed_at, d.action, d.decided_at, d.new_candidate_id,
           p.id, p.promoted_at, p.retracted_at, c.captured_at
    FROM memory_fabric.candidates c
    LEFT JOIN LATERAL (SELECT x.* FROM memory_fabric.reviews x WHERE x.candidate_id = c.id
                       ORDER BY x.reviewed_at DESC, x.id DESC LIMIT 1) r ON true
    LEFT JOIN LATERAL (SELECT x.* FROM memory_fabric.decisions x WHERE x.candidate_id = c.id
                       ORDER BY x.decided_at DESC, x.id DESC LIMIT 1) d ON true
    LEFT JOIN memory_fabric.promoted_memory p ON p.candidate_id = c.id
    WHERE c.id = review_status.candidate_id;
END
$$;
COMMENT ON FUNCTION memory_fabric.review_status IS
    'Where a candidate stands (unreviewed, promotable, waiting_for_human (also a contradiction no rule resolved: a person decides), duplicate, rejected, edited, promoted, retracted, erased): an agent asks about its own captures';
REVOKE ALL ON FUNCTION memory_fabric.review_status(text), memory_fabric._require_own_candidate(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric.review_status(text) TO memory_fabric_agent, memory_fabric_reviewer, memory_fabric_admin;
"#,
    name = "review_status",
    requires = [_require_own_candidate],
);
