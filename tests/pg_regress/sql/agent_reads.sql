-- What agents read besides recall (0.18.0): review_status(), where a candidate stands, and
-- recall_fact(), the memories that state one fact. Both as ordinary roles.
\set SHOW_CONTEXT never
DO $$
DECLARE r text;
BEGIN
    FOREACH r IN ARRAY ARRAY['regress_reads_a', 'regress_reads_b', 'regress_reads_rv'] LOOP
        IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r) THEN EXECUTE format('DROP ROLE %I', r); END IF;
    END LOOP;
END $$;
CREATE ROLE regress_reads_a IN ROLE memory_fabric_agent;
CREATE ROLE regress_reads_b IN ROLE memory_fabric_agent;
CREATE ROLE regress_reads_rv IN ROLE memory_fabric_reviewer;
SELECT count(*) FROM unnest(ARRAY['regress_reads_a', 'regress_reads_b', 'regress_reads_rv']) r,
    LATERAL memory_fabric.grant_tenant(r, 't_reads') g;
SELECT count(*) FROM memory_fabric.grant_tenant('regress_reads_a', 't_reads_other');
-- decisions about a deploy wait for a human in this tenant
SELECT version > 1 AS new_version FROM memory_fabric.set_policy('t_reads', '{"human_review": {"write_classes": ["decision_outcome"]}}');

SET ROLE regress_reads_a;
SET memory_fabric.tenant_id = 't_reads';
-- the stages one by one
SELECT id AS c1 FROM memory_fabric.capture_memory('t_reads', 'Customer cus_1 prefers email.', 'agent', 'INTERNAL',
    user_id => 'cus_1', entity => 'cus_1', predicate => 'contact_channel', value => '"email"') \gset
SELECT stage, status, reviewer, memory_id FROM memory_fabric.review_status(:'c1');
SELECT count(*) FROM memory_fabric.review_candidate(:'c1');
SELECT stage, status, reviewer, tier FROM memory_fabric.review_status(:'c1');
SELECT id AS m1 FROM memory_fabric.promote(:'c1') \gset
SELECT stage, memory_id = :'m1' AS its_memory, promoted_at IS NOT NULL AS promoted FROM memory_fabric.review_status(:'c1');
-- a duplicate
SELECT id AS c2 FROM memory_fabric.capture_memory('t_reads', 'Customer cus_1 prefers email.', 'agent', 'INTERNAL',
    user_id => 'cus_1') \gset
SELECT count(*) FROM memory_fabric.review_candidate(:'c2');
SELECT stage, status, duplicate_of = :'m1' AS of_m1 FROM memory_fabric.review_status(:'c2');
-- a contradiction the review blocks
SELECT id AS c3 FROM memory_fabric.capture_memory('t_reads', 'Customer cus_1 prefers phone calls.', 'agent', 'INTERNAL',
    user_id => 'cus_1', entity => 'cus_1', predicate => 'contact_channel', value => '"phone"') \gset
SELECT count(*) FROM memory_fabric.review_candidate(:'c3');
SELECT stage, status, resolution, contradicts = :'m1' AS with_m1 FROM memory_fabric.review_status(:'c3');
-- one that waits for a human, then an operator's rejection
SELECT id AS c4 FROM memory_fabric.capture_memory('t_reads', 'The March deploy was rolled back.', 'agent', 'INTERNAL',
    write_class => 'decision_outcome') \gset
SELECT count(*) FROM memory_fabric.review_candidate(:'c4');
SELECT stage, reviewer, reason FROM memory_fabric.review_status(:'c4');
RESET ROLE;
SET ROLE regress_reads_rv;
SET memory_fabric.tenant_id = 't_reads';
SELECT action FROM memory_fabric.reject(:'c4', 'op:rv', 'not ours');
-- a reviewer may ask about any candidate of the tenant
SELECT stage, decision FROM memory_fabric.review_status(:'c4');
RESET ROLE;
SET ROLE regress_reads_a;
SET memory_fabric.tenant_id = 't_reads';
SELECT stage, decision, decided_at IS NOT NULL AS decided FROM memory_fabric.review_status(:'c4');

-- Another agent of the tenant, an unknown id and a NULL get the same not-found error; a tenant
-- the caller holds but did not pin names the pin.
RESET ROLE;
SET ROLE regress_reads_b;
SET memory_fabric.tenant_id = 't_reads';
SELECT public.regress_try(format('SELECT * FROM memory_fabric.review_status(%L)', :'c1')) = 
       replace(public.regress_try('SELECT * FROM memory_fabric.review_status(''mc_unknown'')'), 'mc_unknown', 'mc_<id>')
       AS same_as_unknown;
SELECT public.regress_try('SELECT * FROM memory_fabric.review_status(NULL)');
RESET ROLE;
SET ROLE regress_reads_a;
SET memory_fabric.tenant_id = 't_reads_other';
SELECT public.regress_try(format('SELECT * FROM memory_fabric.review_status(%L)', :'c1'));
SET memory_fabric.tenant_id = 't_reads';

-- recall_fact: the fact's visible memories, the user's before the user-less, whatever their rank
SELECT memory_id = :'m1' AS m1, text, score, relevance, recency > 0.99 AS recent, importance, in_contradiction, value
FROM memory_fabric.recall_fact('t_reads', NULL, 'cus_1', 'contact_channel', user_id => 'cus_1');
SELECT id AS c5 FROM memory_fabric.capture_memory('t_reads', 'Customers are contacted by email by default.', 'agent', 'INTERNAL',
    entity => 'cus_1', predicate => 'contact_channel', value => '"email"') \gset
SELECT count(*) FROM memory_fabric.review_candidate(:'c5');
SELECT id AS m5 FROM memory_fabric.promote(:'c5') \gset
SELECT memory_id = :'m1' AS m1, memory_id = :'m5' AS m5, user_scope FROM memory_fabric.recall_fact('t_reads', NULL, 'cus_1', 'contact_channel', user_id => 'cus_1');
SELECT memory_id = :'m1' AS m1 FROM memory_fabric.recall_fact('t_reads', NULL, 'cus_1', 'contact_channel', user_id => 'cus_1', max_recalls => 1);
-- another user sees only the user-less one; another predicate, another classification: none
SELECT memory_id = :'m5' AS m5 FROM memory_fabric.recall_fact('t_reads', NULL, 'cus_1', 'contact_channel', user_id => 'cus_2');
SELECT count(*) FROM memory_fabric.recall_fact('t_reads', NULL, 'cus_1', 'address', user_id => 'cus_1');
SELECT count(*) FROM memory_fabric.recall_fact('t_reads', NULL, 'cus_1', 'contact_channel', user_id => 'cus_1',
    classification_allowed => ARRAY['PUBLIC']);
-- the arguments recall refuses, it refuses
SELECT public.regress_try('SELECT * FROM memory_fabric.recall_fact(''t_reads'', NULL, NULL, ''contact_channel'')');
SELECT public.regress_try('SELECT * FROM memory_fabric.recall_fact(''t_reads'', NULL, ''cus_1'', ''contact_channel'', max_recalls => 0)');
SELECT public.regress_try('SELECT * FROM memory_fabric.recall_fact(''t_reads'', NULL, ''cus_1'', ''contact_channel'', classification_allowed => NULL)');
SELECT public.regress_try(E'SELECT * FROM memory_fabric.recall_fact(''t_reads'', NULL, ''cus_1'', ''contact_channel'', user_id => ''cus\u200b1'')');
-- another tenant: refused before anything is read
SELECT public.regress_try('SELECT * FROM memory_fabric.recall_fact(''t_nobody'', NULL, ''cus_1'', ''contact_channel'')');
RESET ROLE;

-- A retraction hides the memory now, and as_of replays it as it was.
SELECT now() AS before_retraction \gset
SET memory_fabric.tenant_id = 't_reads';
SELECT retracted_by FROM memory_fabric.retract(:'m1', 'wrong customer', 'op:admin');
SET ROLE regress_reads_a;
SET memory_fabric.tenant_id = 't_reads';
SELECT memory_id = :'m5' AS m5 FROM memory_fabric.recall_fact('t_reads', NULL, 'cus_1', 'contact_channel', user_id => 'cus_1');
SELECT memory_id = :'m1' AS m1 FROM memory_fabric.recall_fact('t_reads', NULL, 'cus_1', 'contact_channel', user_id => 'cus_1',
    as_of => :'before_retraction');
SELECT stage, retracted_at IS NOT NULL AS retracted FROM memory_fabric.review_status(:'c1');
RESET ROLE;
RESET memory_fabric.tenant_id;
-- PUBLIC may call neither; the roles may
SELECT p.proname, has_function_privilege('public', p.oid, 'EXECUTE') AS public_may,
       has_function_privilege('memory_fabric_agent', p.oid, 'EXECUTE') AS agent_may
FROM pg_proc p WHERE p.pronamespace = 'memory_fabric'::regnamespace
  AND p.proname IN ('review_status', 'recall_fact', '_require_own_candidate') ORDER BY 1;
