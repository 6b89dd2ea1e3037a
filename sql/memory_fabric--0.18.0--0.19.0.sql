-- memory_fabric 0.18.0 → 0.19.0: two reads for the operator's console.
-- * my_tenants(): the tenants the calling role may act for (its live grants and those of the
--   roles it is a member of), which row-level security does not let it list otherwise.
-- * candidate_evidence(candidate_id): each evidence ref of a candidate with the untrusted origin
--   the provenance gate gives it, by the policy of its effective review.
-- Nothing stored changes. Its statements are the install script's own; tests/upgrade/run.sh
-- checks that it ends with the catalog of a fresh install.
\echo Use "ALTER EXTENSION memory_fabric UPDATE TO '0.19.0'" to load this file. \quit

-- As in the install script, every name is resolved under pg_catalog alone.
SET LOCAL search_path = pg_catalog, pg_temp;

CREATE FUNCTION memory_fabric."_my_tenants"() RETURNS TABLE (
	"tenant_id" TEXT,  /* String */
	"role_name" TEXT,  /* String */
	"granted_at" timestamp with time zone  /* TimestampWithTimeZone */
)
STRICT VOLATILE PARALLEL UNSAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_my_tenants_wrapper';
CREATE FUNCTION memory_fabric."_candidate_evidence"(
	"candidate_id" TEXT /* Option < & str > */
) RETURNS TABLE (
	"evidence_ref" TEXT,  /* String */
	"untrusted_origin" TEXT,  /* Option < String > */
	"policy_version" INT  /* i32 */
)
VOLATILE PARALLEL UNSAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_candidate_evidence_wrapper';

CREATE FUNCTION memory_fabric.my_tenants()
RETURNS TABLE (tenant_id text, role_name text, granted_at timestamptz)
LANGUAGE sql VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$ SELECT t.tenant_id, t.role_name, t.granted_at FROM memory_fabric._my_tenants() t $$;
COMMENT ON FUNCTION memory_fabric.my_tenants IS
    'The tenants the calling role may act for: its live grants and those of the roles it is a member of (''*'': every tenant)';
REVOKE ALL ON FUNCTION memory_fabric.my_tenants(), memory_fabric._my_tenants() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric.my_tenants() TO memory_fabric_agent, memory_fabric_reviewer, memory_fabric_admin;

CREATE FUNCTION memory_fabric.candidate_evidence(candidate_id text)
RETURNS TABLE (evidence_ref text, untrusted_origin text, policy_version integer)
LANGUAGE sql VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$ SELECT e.evidence_ref, e.untrusted_origin, e.policy_version FROM memory_fabric._candidate_evidence(candidate_id) e $$;
COMMENT ON FUNCTION memory_fabric.candidate_evidence IS
    'A candidate''s evidence refs, each with the untrusted origin the provenance gate gives it (NULL: trusted), by the policy of its effective review';
REVOKE ALL ON FUNCTION memory_fabric.candidate_evidence(text), memory_fabric._candidate_evidence(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric.candidate_evidence(text) TO memory_fabric_reviewer, memory_fabric_admin;
