//! `memory_fabric.memory_history()`: the whole life of a candidate or memory, in order.

use pgrx::prelude::*;

extension_sql!(
    r#"
CREATE FUNCTION memory_fabric.memory_history(id text)
RETURNS TABLE (at timestamptz, stage text, ref text, detail jsonb)
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_variable
DECLARE
    cand memory_fabric.candidates;
    mem  text;
BEGIN
    SELECT c.* INTO cand FROM memory_fabric.candidates c
    WHERE c.id = memory_history.id
       OR c.id = (SELECT p.candidate_id FROM memory_fabric.promoted_memory p WHERE p.id = memory_history.id);
    IF NOT FOUND THEN
        RAISE EXCEPTION 'candidate or memory "%" does not exist', memory_history.id USING ERRCODE = 'no_data_found';
    END IF;
    -- another tenant's id gives the very error an unknown one gives
    PERFORM memory_fabric._require_row_tenant(cand.tenant_id,
        pg_catalog.format('candidate or memory "%s" does not exist', memory_history.id));
    SELECT p.id INTO mem FROM memory_fabric.promoted_memory p WHERE p.candidate_id = cand.id;
    RETURN QUERY
    SELECT h.at, h.stage, h.ref, h.detail FROM (
        SELECT cand.captured_at AS at, 1 AS o, 'captured' AS stage, cand.id AS ref,
               jsonb_build_object('source', cand.source, 'actor', cand.actor, 'role', cand.captured_by,
                                  'classification', cand.classification, 'text', cand.text,
                                  'redactions', cand.redaction_count, 'supersedes', cand.supersedes) AS detail
        UNION ALL
        SELECT r.reviewed_at, 2, 'reviewed', r.id,
               jsonb_strip_nulls(jsonb_build_object('status', r.status, 'tier', r.proposed_tier, 'priority', r.priority_score,
                   'reviewer', r.reviewer, 'reason', r.reason, 'duplicate_of', r.duplicate_of_id,
                   'contradicts', r.contradicts_id, 'resolution', r.contradiction_resolution,
                   'consent_id', r.consent_id, 'rejection_of', r.rejection_of_id, 'policy_version', r.policy_version,
                   'role', r.reviewed_by, 'similarity', r.similarity, 'notes', r.reviewer_notes,
                   'judge_model', r.judge_model, 'judge', r.judge_scores))
        FROM memory_fabric.reviews r WHERE r.candidate_id = cand.id
        UNION ALL
        SELECT d.decided_at, 3, 'decided', d.id,
               jsonb_strip_nulls(jsonb_build_object('action', d.action, 'by', d.decided_by, 'role', d.decided_by_role,
                                                    'notes', d.notes, 'new_candidate', d.new_candidate_id,
                                                    'resolution', d.resolution))
        FROM memory_fabric.decisions d WHERE d.candidate_id = cand.id
        UNION ALL
        SELECT p.promoted_at, 4, 'promoted', p.id,
               jsonb_strip_nulls(jsonb_build_object('tier', p.tier, 'priority', p.priority, 'by', p.promoted_by,
                   'role', p.promoted_by_role, 'expires_at', p.expires_at, 'supersedes', p.supersedes_id,
                   'consent_id', p.consent_id))
        FROM memory_fabric.promoted_memory p WHERE p.id = mem
        UNION ALL
        SELECT p.retracted_at, 5, 'retracted', p.id,
               jsonb_build_object('by', p.retracted_by, 'reason', p.retraction_reason)
        FROM memory_fabric.promoted_memory p WHERE p.id = mem AND p.retracted_at IS NOT NULL
        UNION ALL
        SELECT x.erased_at, 6, 'erased', x.id, '{}'::jsonb
        FROM (SELECT cand.id, cand.erased_at UNION ALL
              SELECT p.id, p.erased_at FROM memory_fabric.promoted_memory p WHERE p.id = mem) x
        WHERE x.erased_at IS NOT NULL
        UNION ALL
        SELECT e.created_at, 7, 'event ' || e.kind, e.id, e.payload
        FROM memory_fabric.events e WHERE e.subject_id IN (cand.id, mem)
    ) h
    ORDER BY h.at, h.o, h.ref;
END
$$;
COMMENT ON FUNCTION memory_fabric.memory_history IS
    'A candidate''s or memory''s life: capture, reviews, decisions, promotion, retraction, erasure, events';
REVOKE ALL ON FUNCTION memory_fabric.memory_history(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric.memory_history(text) TO memory_fabric_reviewer, memory_fabric_admin;
"#,
    name = "memory_history",
    requires = [_require_row_tenant],
);
