-- A contradiction that is not promoted waits for a person (0.21.0): a contradiction no rule
-- resolves (resolution block) is queued for a human, and a reviewer supersedes the memory, keeps
-- both or rejects it; or the tenant's policy rejects such contradictions. As ordinary roles.
\set SHOW_CONTEXT never
DO $$
DECLARE r text;
BEGIN
    FOREACH r IN ARRAY ARRAY['regress_blk_agent', 'regress_blk_both', 'regress_blk_rv', 'regress_blk_rv2', 'regress_blk_admin'] LOOP
        IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r) THEN EXECUTE format('DROP ROLE %I', r); END IF;
    END LOOP;
END $$;
CREATE ROLE regress_blk_agent IN ROLE memory_fabric_agent;
-- an agent that is a reviewer too: it may not approve what it captured (four eyes)
CREATE ROLE regress_blk_both IN ROLE memory_fabric_agent, memory_fabric_reviewer;
CREATE ROLE regress_blk_rv IN ROLE memory_fabric_reviewer;
CREATE ROLE regress_blk_rv2 IN ROLE memory_fabric_reviewer;
CREATE ROLE regress_blk_admin IN ROLE memory_fabric_admin;
SELECT count(*) FROM unnest(ARRAY['regress_blk_agent', 'regress_blk_both', 'regress_blk_rv', 'regress_blk_rv2',
                                  'regress_blk_admin']) r,
    LATERAL (SELECT memory_fabric.grant_tenant(r, 't_blk') UNION ALL SELECT memory_fabric.grant_tenant(r, 't_blk_rej')) g;

-- Runs one statement and reports its outcome as SQLSTATE, message, detail and hint, ids and
-- times masked (public.regress_try without the hint).
CREATE FUNCTION public.regress_blk_try(sql text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    st text; msg text; det text; hint text;
    id_re constant text := '(mc|pm|rv|dc|ev|cns)_[0-9]{8}t[0-9]{6}_[0-9a-z]{12}';
BEGIN
    EXECUTE sql;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL, hint = PG_EXCEPTION_HINT;
    RETURN st || ': ' || regexp_replace(msg, id_re, '\1_<id>', 'g')
        || coalesce(nullif(E'\nDETAIL: ' || regexp_replace(det, id_re, '\1_<id>', 'g'), E'\nDETAIL: '), '')
        || coalesce(nullif(E'\nHINT: ' || regexp_replace(hint, id_re, '\1_<id>', 'g'), E'\nHINT: '), '');
END
$$;

-- An agent's fact, then another value of it from the same agent, with no more evidence: no rule
-- resolves the contradiction (block).
SET ROLE regress_blk_agent;
SET memory_fabric.tenant_id = 't_blk';
SELECT id AS c1 FROM memory_fabric.capture_memory('t_blk', 'Customer cus_9 prefers email.', 'agent', 'INTERNAL',
    user_id => 'cus_9', entity => 'customer:cus_9', predicate => 'contact_channel', value => '"email"') \gset
SELECT count(*) FROM memory_fabric.review_candidate(:'c1');
SELECT id AS m1 FROM memory_fabric.promote(:'c1') \gset
SELECT id AS blocked FROM memory_fabric.capture_memory('t_blk', 'Customer cus_9 prefers phone calls.', 'agent', 'INTERNAL',
    user_id => 'cus_9', entity => 'customer:cus_9', predicate => 'contact_channel', value => '"phone"') \gset
SELECT status, contradiction_resolution, contradicts_id = :'m1' AS with_m1, reviewer, reason,
       reviewer_notes LIKE '%no rule resolves it: a person decides%' AS says_who_decides
FROM memory_fabric.review_candidate(:'blocked');
-- it waits for a human, as review_status tells the agent that captured it
SELECT stage, status, reviewer, resolution, contradicts = :'m1' AS with_m1 FROM memory_fabric.review_status(:'blocked');
-- promote refuses it, and says who decides
SELECT public.regress_blk_try(format('SELECT memory_fabric.promote(%L)', :'blocked'));
-- an agent may not approve at all
SELECT public.regress_blk_try(format('SELECT memory_fabric.approve(%L, %L, resolution => %L)', :'blocked', 'op:agent', 'supersede'));
-- the old value is still what recall returns
SELECT text, in_contradiction FROM memory_fabric.recall('t_blk', NULL, user_id => 'cus_9');
RESET ROLE;

-- In the review queue, as a reviewer of the tenant sees it
SET ROLE regress_blk_rv;
SET memory_fabric.tenant_id = 't_blk';
SELECT status, contradiction_resolution, contradicts_id = :'m1' AS with_m1, reason, proposed_text
FROM memory_fabric.review_queue WHERE candidate_id = :'blocked';
SELECT stage, detail ->> 'reason' AS reason FROM memory_fabric.memory_history(:'blocked')
WHERE stage = 'event memory.queued';
-- approving it needs a resolution: the choices are listed
SELECT public.regress_blk_try(format('SELECT memory_fabric.approve(%L, %L)', :'blocked', 'op:rv'));
SELECT public.regress_blk_try(format('SELECT memory_fabric.approve(%L, %L, resolution => %L)', :'blocked', 'op:rv', 'block'));
SELECT public.regress_blk_try(format('SELECT memory_fabric.approve(%L, %L, resolution => %L)', :'blocked', 'op:rv', 'reject'));
-- a candidate that is no contradiction takes none
SELECT id AS plain FROM memory_fabric.capture_memory('t_blk', 'Refunds above 500 euros need a manager''s sign-off.', 'operator',
    'INTERNAL', actor => 'op:rv') \gset
SELECT status, reviewer, reason FROM memory_fabric.review_candidate(:'plain');
RESET ROLE;
SET ROLE regress_blk_rv2;
SET memory_fabric.tenant_id = 't_blk';
SELECT public.regress_blk_try(format('SELECT memory_fabric.approve(%L, %L, resolution => %L)', :'plain', 'op:rv2', 'supersede'));
SELECT tier, promoted_by, supersedes_id, in_contradiction FROM memory_fabric.approve(:'plain', 'op:rv2');
RESET ROLE;

-- Four eyes as for any human tier: the role that captured a contradiction may not decide it.
SET ROLE regress_blk_both;
SET memory_fabric.tenant_id = 't_blk';
SELECT id AS own FROM memory_fabric.capture_memory('t_blk', 'Customer cus_9 prefers text messages.', 'agent', 'INTERNAL',
    user_id => 'cus_9', entity => 'customer:cus_9', predicate => 'contact_channel', value => '"sms"', actor => 'agent:both') \gset
SELECT status, contradiction_resolution, reviewer FROM memory_fabric.review_candidate(:'own');
SELECT public.regress_blk_try(format('SELECT memory_fabric.approve(%L, %L, resolution => %L)', :'own', 'op:both', 'coexist'));
RESET ROLE;

-- supersede: the candidate is promoted and the memory it contradicts retracted, in one
-- transaction; the decision and the promotion's event record the resolution
SET ROLE regress_blk_rv;
SET memory_fabric.tenant_id = 't_blk';
SELECT id AS m2 FROM memory_fabric.approve(:'blocked', 'op:rv', notes => 'the customer asked for calls',
                                           resolution => 'supersede') \gset
SELECT candidate_id = :'blocked' AS its_memory, supersedes_id = :'m1' AS supersedes_m1, in_contradiction, promoted_by, text
FROM memory_fabric.promoted_memory WHERE id = :'m2';
SELECT retracted_at IS NOT NULL AS m1_retracted, retracted_by = :'m2' AS by_m2, retraction_reason = 'superseded by ' || :'m2' AS why
FROM memory_fabric.promoted_memory WHERE id = :'m1';
SELECT action, decided_by, resolution, notes FROM memory_fabric.decisions WHERE candidate_id = :'blocked';
SELECT stage, detail - 'role' - 'expires_at' - 'supersedes' AS detail, detail ->> 'supersedes' = :'m1' AS supersedes_m1
FROM memory_fabric.memory_history(:'blocked') WHERE stage IN ('decided', 'promoted');
SELECT detail ->> 'resolution' AS resolution, detail ->> 'supersedes' = :'m1' AS supersedes_m1
FROM memory_fabric.memory_history(:'blocked') WHERE stage = 'event memory.promoted';
SELECT count(*) AS still_queued FROM memory_fabric.review_queue WHERE candidate_id = :'blocked';
-- deciding it again: it is promoted
SELECT public.regress_blk_try(format('SELECT memory_fabric.approve(%L, %L, resolution => %L)', :'blocked', 'op:rv', 'supersede'));
SELECT public.regress_blk_try(format('SELECT memory_fabric.reject(%L, %L, %L)', :'blocked', 'op:rv', 'too late'));
RESET ROLE;
SET ROLE regress_blk_agent;
SET memory_fabric.tenant_id = 't_blk';
SELECT stage, memory_id = :'m2' AS its_memory FROM memory_fabric.review_status(:'blocked');
SELECT text, in_contradiction FROM memory_fabric.recall('t_blk', NULL, user_id => 'cus_9');
RESET ROLE;

-- The other waiting contradiction was reviewed against the memory just superseded: approving it
-- as it was reviewed is refused, since the promoted memories changed since (promote decides again).
SET ROLE regress_blk_rv;
SET memory_fabric.tenant_id = 't_blk';
SELECT contradicts_id = :'m1' AS against_m1 FROM memory_fabric.review_queue WHERE candidate_id = :'own';
SELECT public.regress_blk_try(format('SELECT memory_fabric.approve(%L, %L, resolution => %L)', :'own', 'op:rv', 'coexist'));
SELECT count(*) AS nothing_recorded FROM memory_fabric.decisions WHERE candidate_id = :'own';
-- reviewed again, it contradicts the new memory and waits again
SELECT status, contradiction_resolution, contradicts_id = :'m2' AS against_m2, reviewer FROM memory_fabric.review_candidate(:'own');
-- coexist: both stand, and recall marks both
SELECT id AS m3 FROM memory_fabric.approve(:'own', 'op:rv', resolution => 'coexist') \gset
SELECT contradicts_id = :'m2' AS with_m2, in_contradiction, supersedes_id
FROM memory_fabric.promoted_memory WHERE id = :'m3';
SELECT retracted_at FROM memory_fabric.promoted_memory WHERE id = :'m2';
SELECT action, resolution FROM memory_fabric.decisions WHERE candidate_id = :'own';
RESET ROLE;
SET ROLE regress_blk_agent;
SET memory_fabric.tenant_id = 't_blk';
SELECT text, in_contradiction, cardinality(contradicts) AS conflicts FROM memory_fabric.recall('t_blk', NULL, user_id => 'cus_9')
ORDER BY text;
RESET ROLE;

-- reject: the memory stays; so does the rejected candidate's history
SET ROLE regress_blk_agent;
SET memory_fabric.tenant_id = 't_blk';
SELECT id AS later FROM memory_fabric.capture_memory('t_blk', 'Customer cus_9 prefers letters.', 'agent', 'INTERNAL',
    user_id => 'cus_9', entity => 'customer:cus_9', predicate => 'contact_channel', value => '"letter"') \gset
SELECT status, contradiction_resolution, reviewer FROM memory_fabric.review_candidate(:'later');
RESET ROLE;
SET ROLE regress_blk_rv2;
SET memory_fabric.tenant_id = 't_blk';
SELECT count(*) AS queued FROM memory_fabric.review_queue WHERE candidate_id = :'later';
SELECT action, resolution FROM memory_fabric.reject(:'later', 'op:rv2', 'the customer did not say so');
SELECT count(*) AS queued FROM memory_fabric.review_queue WHERE candidate_id = :'later';
SELECT public.regress_blk_try(format('SELECT memory_fabric.approve(%L, %L, resolution => %L)', :'later', 'op:rv2', 'supersede'));
RESET ROLE;
SET ROLE regress_blk_agent;
SET memory_fabric.tenant_id = 't_blk';
SELECT stage, decision FROM memory_fabric.review_status(:'later');
SELECT count(*) AS live FROM memory_fabric.recall('t_blk', NULL, user_id => 'cus_9');
RESET ROLE;

-- edit: an operator rewrites a waiting contradiction; the new candidate supersedes it and goes
-- through review like any other (an operator's fact outranks the agent's memory: supersede, for a
-- second person to approve)
SET ROLE regress_blk_agent;
SET memory_fabric.tenant_id = 't_blk';
SELECT m.id AS m4 FROM memory_fabric.capture_memory('t_blk', 'The Faro depot opens at 8:00.', 'agent', 'INTERNAL',
    entity => 'depot:faro', predicate => 'opens_at', value => '"08:00"') c, memory_fabric.review_candidate(c.id) r,
    memory_fabric.promote(c.id) m \gset
SELECT id AS to_edit FROM memory_fabric.capture_memory('t_blk', 'The Faro depot opens at 9:00.', 'agent', 'INTERNAL',
    entity => 'depot:faro', predicate => 'opens_at', value => '"09:00"') \gset
SELECT status, contradiction_resolution, reviewer FROM memory_fabric.review_candidate(:'to_edit');
RESET ROLE;
SET ROLE regress_blk_rv;
SET memory_fabric.tenant_id = 't_blk';
SELECT candidate_id AS edited FROM memory_fabric.edit(:'to_edit', 'op:rv', 'The Faro depot opens at 9:30.',
                                                      value => '"09:30"') \gset
SELECT status, contradiction_resolution, contradicts_id = :'m4' AS against_m4, reviewer, reason
FROM memory_fabric.reviews WHERE candidate_id = :'edited';
SELECT count(*) AS old_queued FROM memory_fabric.review_queue WHERE candidate_id = :'to_edit';
RESET ROLE;
SET ROLE regress_blk_rv2;
SET memory_fabric.tenant_id = 't_blk';
SELECT supersedes_id = :'m4' AS supersedes_m4 FROM memory_fabric.approve(:'edited', 'op:rv2');
SELECT action, resolution FROM memory_fabric.decisions WHERE candidate_id = :'edited';
RESET ROLE;

-- A policy may reject such contradictions instead: the verdict is rejected, naming the
-- contradiction, and nobody is asked.
SET ROLE regress_blk_admin;
SET memory_fabric.tenant_id = 't_blk_rej';
SELECT public.regress_blk_try($$SELECT memory_fabric.set_policy('t_blk_rej', '{"contradiction": {"on_block": "drop"}}')$$);
SELECT public.regress_blk_try($$SELECT memory_fabric.set_policy('t_blk_rej', '{"contradiction": {"when": "reject"}}')$$);
SELECT version > 1 AS new_version, body -> 'contradiction' AS contradiction
FROM memory_fabric.set_policy('t_blk_rej', '{"contradiction": {"on_block": "reject"}}');
RESET ROLE;
SET ROLE regress_blk_agent;
SET memory_fabric.tenant_id = 't_blk_rej';
SELECT m.id AS r1 FROM memory_fabric.capture_memory('t_blk_rej', 'Customer cus_5 prefers email.', 'agent', 'INTERNAL',
    user_id => 'cus_5', entity => 'customer:cus_5', predicate => 'contact_channel', value => '"email"') c,
    memory_fabric.review_candidate(c.id) r, memory_fabric.promote(c.id) m \gset
SELECT id AS refused FROM memory_fabric.capture_memory('t_blk_rej', 'Customer cus_5 prefers phone calls.', 'agent', 'INTERNAL',
    user_id => 'cus_5', entity => 'customer:cus_5', predicate => 'contact_channel', value => '"phone"') \gset
SELECT status, contradiction_resolution, contradicts_id = :'r1' AS with_r1, reviewer, reason,
       reviewer_notes LIKE '%the policy rejects such a contradiction (contradiction.on_block reject)' AS says_why
FROM memory_fabric.review_candidate(:'refused');
SELECT stage, status, reason FROM memory_fabric.review_status(:'refused');
RESET ROLE;
SET ROLE regress_blk_rv;
SET memory_fabric.tenant_id = 't_blk_rej';
SELECT count(*) AS queued FROM memory_fabric.review_queue WHERE tenant_id = 't_blk_rej';
SELECT detail ->> 'resolution' AS resolution, detail ->> 'contradicts' = :'r1' AS with_r1
FROM memory_fabric.memory_history(:'refused') WHERE stage = 'event memory.contradiction';
SELECT public.regress_blk_try(format('SELECT memory_fabric.approve(%L, %L, resolution => %L)', :'refused', 'op:rv', 'supersede'));
SELECT public.regress_blk_try(format('SELECT memory_fabric.approve(%L, %L)', :'refused', 'op:rv'));
RESET ROLE;

-- the audit chains hold over all of it
SET ROLE regress_blk_admin;
SET memory_fabric.tenant_id = 't_blk';
SELECT intact FROM memory_fabric.verify_audit('t_blk');
SET memory_fabric.tenant_id = 't_blk_rej';
SELECT intact FROM memory_fabric.verify_audit('t_blk_rej');
RESET ROLE;
RESET memory_fabric.tenant_id;
DROP FUNCTION public.regress_blk_try(text);
