-- memory_fabric 0.20.0 → 0.21.0: review that holds on real traffic (issue 40).
-- * Review reads what each text claims (core/src/claim.rs) before it compares: only incompatible
--   values of one keyed attribute of one subject conflict; events, values among several, other
--   subjects and other speakers do not. That is in the library; nothing here.
-- * A contradiction no rule resolves (resolution block) is no longer left where nobody looks:
--   review queues it for a person (reviewer human), or rejects it where the tenant's policy says
--   contradiction.on_block reject. review_queue lists, besides, every blocked contradiction that
--   an older version reviewed (reviewer auto), and review_status says waiting_for_human for
--   them until a person decides.
-- * approve() takes a resolution (supersede or coexist) for a contradiction, kept in the new
--   column decisions.resolution, in memory_history and in the memory.promoted event (so in the
--   audit chain); approve(text, text, text) is replaced by approve(text, text, text, text).
-- * The default policy ('*') gets a new version with the contradiction section.
-- Its statements are the install script's own; tests/upgrade/run.sh checks that it ends with the
-- catalog of a fresh install.
\echo Use "ALTER EXTENSION memory_fabric UPDATE TO '0.21.0'" to load this file. \quit

-- As in the install script, every name is resolved under pg_catalog alone.
SET LOCAL search_path = pg_catalog, pg_temp;

-- ---- A contradiction that is not promoted waits for a person ----

ALTER TABLE memory_fabric.decisions ADD COLUMN resolution text
    CHECK (resolution IS NULL OR (resolution IN ('supersede', 'coexist') AND action = 'approve'));
-- as every text column roles read: no statistics (row estimates tell nothing of other tenants)
ALTER TABLE memory_fabric.decisions ALTER COLUMN resolution SET STATISTICS 0;
COMMENT ON COLUMN memory_fabric.decisions.resolution IS
    'What an approval did with the candidate''s contradiction: supersede (the memory it contradicts retracted) or coexist (both stand)';

CREATE OR REPLACE VIEW memory_fabric.review_queue WITH (security_invoker = true) AS
SELECT r.tenant_id, r.candidate_id, r.id AS review_id, c.user_id, c.intent_id, r.proposed_tier,
       c.text AS proposed_text, c.evidence_refs, c.classification, c.source, c.actor,
       r.priority_score, r.reason, r.status, r.contradicts_id, r.contradiction_resolution,
       r.reviewed_at AS enqueued_at
FROM memory_fabric.reviews r
JOIN memory_fabric.candidates c ON c.id = r.candidate_id
WHERE (r.reviewer = 'human'
       -- a contradiction no rule resolved, reviewed before 0.21.0 queued it (reviewer auto)
       OR (r.status = 'contradicts' AND r.contradiction_resolution = 'block'))
  AND NOT EXISTS (SELECT 1 FROM memory_fabric.reviews n
                  WHERE n.candidate_id = r.candidate_id AND (n.reviewed_at, n.id) > (r.reviewed_at, r.id))
  AND NOT EXISTS (SELECT 1 FROM memory_fabric.decisions d
                  WHERE d.candidate_id = r.candidate_id AND d.decided_at >= r.reviewed_at)
  AND NOT EXISTS (SELECT 1 FROM memory_fabric.promoted_memory p WHERE p.candidate_id = r.candidate_id);
COMMENT ON VIEW memory_fabric.review_queue IS 'Candidates waiting for a human approve / reject / edit, among them every contradiction no rule resolved';

DROP FUNCTION memory_fabric.approve(text, text, text);
DROP FUNCTION memory_fabric._approve(text, text, text);
CREATE FUNCTION memory_fabric."_approve"(
	"candidate_id" TEXT, /* Option < & str > */
	"approver" TEXT, /* Option < & str > */
	"notes" TEXT, /* Option < & str > */
	"resolution" TEXT /* Option < & str > */
) RETURNS TEXT /* String */
VOLATILE PARALLEL UNSAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_approve_wrapper';
CREATE FUNCTION memory_fabric.approve(candidate_id text, approver text, notes text DEFAULT NULL, resolution text DEFAULT NULL)
RETURNS memory_fabric.promoted_memory
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_id  text := memory_fabric._approve(approve.candidate_id, approve.approver, approve.notes, approve.resolution);
    v_row memory_fabric.promoted_memory;
BEGIN
    SELECT * INTO STRICT v_row FROM memory_fabric.promoted_memory AS m WHERE m.id = v_id;
    RETURN v_row;
END
$$;
COMMENT ON FUNCTION memory_fabric.approve IS
    'Approve a queued candidate (the approver must differ from its actor) and promote it; for a contradiction, resolution supersede or coexist says what becomes of the memory it contradicts';
REVOKE ALL ON FUNCTION memory_fabric.approve(text, text, text, text), memory_fabric._approve(text, text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric.approve(text, text, text, text) TO memory_fabric_reviewer, memory_fabric_admin;

CREATE OR REPLACE FUNCTION memory_fabric.review_status(candidate_id text)
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

CREATE OR REPLACE FUNCTION memory_fabric.memory_history(id text)
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

-- The default policy's contradiction section, in a new version of it.
INSERT INTO memory_fabric.policies (tenant_id, version, body, created_by, note)
SELECT '*', GREATEST(pg_catalog.nextval('memory_fabric.policy_versions'),
                     (SELECT pg_catalog.max(version) + 1 FROM memory_fabric.policies))::integer,
       p.body || pg_catalog.jsonb_build_object('contradiction', memory_fabric._default_policy() -> 'contradiction'),
       'memory_fabric', '0.21.0: a contradiction no rule resolves waits for a person (contradiction.on_block queue)'
FROM (SELECT body FROM memory_fabric.policies WHERE tenant_id = '*' ORDER BY version DESC LIMIT 1) p
WHERE NOT p.body ? 'contradiction';

-- The role that installed the extension may call every function (sql/finalize.sql).
GRANT EXECUTE ON FUNCTION memory_fabric._approve(text, text, text, text), memory_fabric.approve(text, text, text, text)
    TO @extowner@;
