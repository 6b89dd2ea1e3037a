-- memory_fabric 0.6.0 → 0.7.0: the tenant boundary and the install hold against hostile roles.
-- Written by hand; tests/upgrade/run.sh checks that it ends with the catalog of a fresh install.
\echo Use "ALTER EXTENSION memory_fabric UPDATE TO '0.7.0'" to load this file. \quit

-- As in the install script, every name is resolved under pg_catalog alone: nothing a database
-- owner planted in public or in memory_fabric runs here, and everything of ours is qualified.
SET LOCAL search_path = pg_catalog, pg_temp;

CREATE FUNCTION memory_fabric._pgvector_schema() RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT pg_catalog.quote_ident(n.nspname) FROM pg_catalog.pg_extension e
    JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'vector'
$$;
COMMENT ON FUNCTION memory_fabric._pgvector_schema() IS 'The schema pgvector is installed in, quoted';
REVOKE ALL ON FUNCTION memory_fabric._pgvector_schema() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric._pgvector_schema() TO @extowner@;

-- Row-level security sees one tenant per statement: the pin as the statement first found it,
-- checked against the grant for that same value (was: the pin read on every row, the grant
-- checked once, so a pin changed inside a statement showed another tenant's rows).
CREATE FUNCTION memory_fabric."_visible_tenant"() RETURNS TEXT /* Option < String > */
STRICT STABLE SECURITY DEFINER PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_visible_tenant_wrapper';
ALTER FUNCTION memory_fabric._visible_tenant() SET search_path = pg_catalog, pg_temp;
REVOKE ALL ON FUNCTION memory_fabric._visible_tenant() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric._visible_tenant() TO PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric._visible_tenant() TO @extowner@;
DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['candidates', 'embedding_models', 'reviews', 'decisions', 'consents',
                             'promoted_memory', 'events', 'tenant_grants', 'policies', 'recall_log'] LOOP
        EXECUTE format('ALTER POLICY tenant_read ON memory_fabric.%I USING (%s)', t,
            CASE WHEN t = 'policies' THEN 'tenant_id = ''*'' OR ' ELSE '' END ||
            'tenant_id = (SELECT memory_fabric._visible_tenant())');
    END LOOP;
END
$$;
DROP FUNCTION memory_fabric._pin_allowed();

-- Serialisation: row locks on a table no role can read or lock (was: advisory locks on keys
-- any role could take first).
CREATE TABLE memory_fabric.locks (key bigint PRIMARY KEY);
COMMENT ON TABLE memory_fabric.locks IS 'Keys the pipeline serialises on, as row locks; no role reads or locks them';
ALTER TABLE memory_fabric.locks ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory_fabric.locks FORCE ROW LEVEL SECURITY;
REVOKE ALL ON memory_fabric.locks FROM PUBLIC;

-- Policy versions from a sequence, so set_policy() locks its own tenant only.
CREATE SEQUENCE memory_fabric.policy_versions AS integer START 2;
REVOKE ALL ON SEQUENCE memory_fabric.policy_versions FROM PUBLIC;
-- the extension's owner dumps and restores its value with the data
GRANT SELECT, UPDATE ON SEQUENCE memory_fabric.policy_versions TO @extowner@;
SELECT pg_catalog.setval('memory_fabric.policy_versions', pg_catalog.max(p.version)) FROM memory_fabric.policies p;
SELECT pg_catalog.pg_extension_config_dump('memory_fabric.policy_versions', '');

-- Who did it is the database role that called (the role before SECURITY DEFINER), recorded
-- beside any display name; rows written before 0.7.0 keep NULL there.
ALTER TABLE memory_fabric.candidates ADD COLUMN captured_by text;
ALTER TABLE memory_fabric.reviews ADD COLUMN reviewed_by text;
ALTER TABLE memory_fabric.decisions ADD COLUMN decided_by_role text;
ALTER TABLE memory_fabric.promoted_memory ADD COLUMN promoted_by_role text;
ALTER TABLE memory_fabric.events ADD COLUMN actor_role text;
COMMENT ON COLUMN memory_fabric.candidates.captured_by IS 'The database role that captured it';
COMMENT ON COLUMN memory_fabric.reviews.reviewed_by IS 'The database role that ran the review';
COMMENT ON COLUMN memory_fabric.decisions.decided_by_role IS 'The database role that decided (decided_by is the name it gave)';
COMMENT ON COLUMN memory_fabric.promoted_memory.promoted_by_role IS 'The database role that promoted it (promoted_by is the approver''s name, or auto)';
COMMENT ON COLUMN memory_fabric.events.actor_role IS 'The database role that acted (actor is the name it gave, else the role)';

-- Tenant grants are bound to the role's OID (was: its name, which a role dropped and created
-- again inherited). Existing grants take the OID of the role now holding the name; a grant whose
-- role no longer exists stays, unmatched, in the history.
ALTER TABLE memory_fabric.tenant_grants ADD COLUMN role_oid oid;
COMMENT ON COLUMN memory_fabric.tenant_grants.role_oid IS 'The granted role''s OID, which the access check matches';
ALTER TABLE memory_fabric.tenant_grants DISABLE TRIGGER guard_update;
UPDATE memory_fabric.tenant_grants g SET role_oid = r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = g.role_name;
ALTER TABLE memory_fabric.tenant_grants ENABLE ALWAYS TRIGGER guard_update;
DROP INDEX memory_fabric.tenant_grants_active;
CREATE UNIQUE INDEX tenant_grants_active ON memory_fabric.tenant_grants (role_oid, tenant_id)
    WHERE revoked_at IS NULL;

-- memory_history names the role at each step, and answers another tenant's id as an unknown one.
CREATE FUNCTION memory_fabric."_require_row_tenant"("tenant_id" TEXT, "not_found" TEXT) RETURNS void
STRICT VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_require_row_tenant_wrapper';
ALTER FUNCTION memory_fabric._require_row_tenant(text, text) SET search_path = pg_catalog, pg_temp;
REVOKE ALL ON FUNCTION memory_fabric._require_row_tenant(text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric._require_row_tenant(text, text) TO @extowner@;
CREATE OR REPLACE FUNCTION memory_fabric.memory_history(id text)
RETURNS TABLE (at timestamptz, stage text, ref text, detail jsonb)
LANGUAGE plpgsql VOLATILE
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
                   'role', r.reviewed_by))
        FROM memory_fabric.reviews r WHERE r.candidate_id = cand.id
        UNION ALL
        SELECT d.decided_at, 3, 'decided', d.id,
               jsonb_strip_nulls(jsonb_build_object('action', d.action, 'by', d.decided_by, 'role', d.decided_by_role,
                                                    'notes', d.notes, 'new_candidate', d.new_candidate_id))
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
ALTER FUNCTION memory_fabric.memory_history(text) SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
