-- What the operator's console reads besides the queue (0.19.0): my_tenants(), the tenants a role
-- may act for, and candidate_evidence(), each evidence ref with its provenance. As ordinary roles.
\set SHOW_CONTEXT never
DO $$
DECLARE r text;
BEGIN
    FOREACH r IN ARRAY ARRAY['regress_ops_a', 'regress_ops_rv', 'regress_ops_team', 'regress_ops_none'] LOOP
        IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r) THEN EXECUTE format('DROP ROLE %I', r); END IF;
    END LOOP;
END $$;
CREATE ROLE regress_ops_team;
CREATE ROLE regress_ops_a IN ROLE memory_fabric_agent;
CREATE ROLE regress_ops_rv IN ROLE memory_fabric_reviewer, regress_ops_team;
CREATE ROLE regress_ops_none IN ROLE memory_fabric_reviewer;
SELECT count(*) FROM memory_fabric.grant_tenant('regress_ops_a', 't_ops');
SELECT count(*) FROM memory_fabric.grant_tenant('regress_ops_rv', 't_ops');
-- through a group role, and a revoked grant
SELECT count(*) FROM memory_fabric.grant_tenant('regress_ops_team', 't_ops_team');
SELECT count(*) FROM memory_fabric.grant_tenant('regress_ops_rv', 't_ops_gone');
SELECT count(*) FROM memory_fabric.revoke_tenant('regress_ops_rv', 't_ops_gone');

-- Each role lists its own live grants, its groups' too, and nobody else's; no pin is needed.
SET ROLE regress_ops_rv;
SELECT tenant_id, role_name FROM memory_fabric.my_tenants();
RESET ROLE;
SET ROLE regress_ops_a;
SELECT tenant_id, role_name FROM memory_fabric.my_tenants();
RESET ROLE;
SET ROLE regress_ops_none;
SELECT count(*) FROM memory_fabric.my_tenants();
RESET ROLE;

-- candidate_evidence: each ref with the origin the provenance gate gives it (NULL: trusted)
SET ROLE regress_ops_a;
SET memory_fabric.tenant_id = 't_ops';
SELECT id AS c1 FROM memory_fabric.capture_memory('t_ops', 'The Lisbon depot closes at six.', 'agent', 'INTERNAL',
    evidence_refs => '["ticket:81", "web:forum/thread-9", "https://example.org/depots", "tool:fetch:https://x", "tool:fetcher:1"]') \gset
-- an agent may not read it
SELECT public.regress_try(format('SELECT * FROM memory_fabric.candidate_evidence(%L)', :'c1'));
SELECT count(*) FROM memory_fabric.review_candidate(:'c1');
RESET ROLE;
SET ROLE regress_ops_rv;
SET memory_fabric.tenant_id = 't_ops';
SELECT evidence_ref, untrusted_origin, policy_version = 1 AS default_policy FROM memory_fabric.candidate_evidence(:'c1');
-- by the policy its review used: a later policy that trusts web: changes nothing for it, and
-- classifies a new candidate by itself
RESET ROLE;
SELECT version AS v2 FROM memory_fabric.set_policy('t_ops', '{"provenance": {"untrusted": ["url:", "file:", "doc:", "email:", "tool:fetch"]}}') \gset
SET ROLE regress_ops_rv;
SET memory_fabric.tenant_id = 't_ops';
SELECT count(*) FILTER (WHERE untrusted_origin = 'web:') AS web_untrusted FROM memory_fabric.candidate_evidence(:'c1');
SELECT id AS c2 FROM memory_fabric.capture_memory('t_ops', 'The Porto depot closes at five.', 'operator', 'INTERNAL',
    evidence_refs => '["web:forum/thread-9"]') \gset
SELECT evidence_ref, untrusted_origin, policy_version = :v2 AS in_force FROM memory_fabric.candidate_evidence(:'c2');
-- unknown, NULL, another tenant's: the errors an id gets
SELECT public.regress_try('SELECT * FROM memory_fabric.candidate_evidence(''mc_unknown'')');
SELECT public.regress_try('SELECT * FROM memory_fabric.candidate_evidence(NULL)');
RESET ROLE;
SET ROLE regress_ops_none;
SET memory_fabric.tenant_id = 't_ops';
SELECT public.regress_try(format('SELECT * FROM memory_fabric.candidate_evidence(%L)', :'c1')) =
       replace(public.regress_try('SELECT * FROM memory_fabric.candidate_evidence(''mc_unknown'')'), 'mc_unknown', 'mc_<id>')
       AS same_as_unknown;
RESET ROLE;
RESET memory_fabric.tenant_id;
SELECT p.proname, has_function_privilege('public', p.oid, 'EXECUTE') AS public_may,
       has_function_privilege('memory_fabric_agent', p.oid, 'EXECUTE') AS agent_may,
       has_function_privilege('memory_fabric_reviewer', p.oid, 'EXECUTE') AS reviewer_may
FROM pg_proc p WHERE p.pronamespace = 'memory_fabric'::regnamespace
  AND p.proname IN ('my_tenants', '_my_tenants', 'candidate_evidence', '_candidate_evidence') ORDER BY 1;
