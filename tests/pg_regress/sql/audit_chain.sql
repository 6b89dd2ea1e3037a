-- The audit trail's hash chain (0.20.0): every event and decision is a link of its tenant's chain,
-- made when its transaction commits; verify_audit() recomputes the chain and names the first link
-- that does not hold. A superuser disables the append-only guards and alters, deletes or inserts
-- rows behind them: each is found. Erasure keeps the chain whole.
\set SHOW_CONTEXT never
DO $$
DECLARE r text;
BEGIN
    FOREACH r IN ARRAY ARRAY['regress_audit_agent', 'regress_audit_rv', 'regress_audit_admin'] LOOP
        IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r) THEN EXECUTE format('DROP ROLE %I', r); END IF;
    END LOOP;
END $$;
CREATE ROLE regress_audit_agent IN ROLE memory_fabric_agent;
CREATE ROLE regress_audit_rv IN ROLE memory_fabric_reviewer;
CREATE ROLE regress_audit_admin IN ROLE memory_fabric_admin;
SELECT count(*) FROM unnest(ARRAY['regress_audit_agent', 'regress_audit_rv', 'regress_audit_admin']) r,
    unnest(ARRAY['t_audit_a', 't_audit_b', 't_audit_c', 't_audit_d', 't_audit_e']) t,
    LATERAL memory_fabric.grant_tenant(r, t) g;

-- Some history in each tenant, as ordinary roles: promotions (events), an operator's facts that
-- wait for a second person, approved and rejected (decisions and events), a retraction.
CREATE FUNCTION pg_temp.history(t text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE c text; q1 text; q2 text; m text;
BEGIN
    SET LOCAL ROLE regress_audit_agent;
    PERFORM set_config('memory_fabric.tenant_id', t, true);
    FOREACH c IN ARRAY ARRAY['Customer cus_1 prefers email.', 'The Porto depot opens at 08:00.',
                             'Refunds are paid within five days.'] LOOP
        SELECT x.id INTO c FROM memory_fabric.capture_memory(t, c, 'agent', 'INTERNAL', user_id => 'cus_1') x;
        PERFORM memory_fabric.review_candidate(c);
        SELECT p.id INTO m FROM memory_fabric.promote(c) p;
    END LOOP;
    SET LOCAL ROLE regress_audit_rv;
    SELECT x.id INTO q1 FROM memory_fabric.capture_memory(t, 'Invoices go out on the first of the month.', 'operator', 'INTERNAL',
                                                           actor => 'op:ana') x;
    SELECT x.id INTO q2 FROM memory_fabric.capture_memory(t, 'Cus_1 asked to be called "Dr. Lee".', 'operator', 'INTERNAL',
                                                           user_id => 'cus_1', actor => 'op:ana') x;
    PERFORM memory_fabric.review_candidate(q1);
    PERFORM memory_fabric.review_candidate(q2);
    SET LOCAL ROLE regress_audit_admin;
    PERFORM set_config('memory_fabric.tenant_id', t, true);
    PERFORM memory_fabric.approve(q1, 'op:ben', 'checked with finance');
    PERFORM memory_fabric.reject(q2, 'op:ben', 'not about the account');
    PERFORM memory_fabric.retract(m, 'superseded by the new refund rule', 'op:ben');
END $$;
SELECT pg_temp.history(t) FROM unnest(ARRAY['t_audit_a', 't_audit_b', 't_audit_c', 't_audit_d', 't_audit_e']) t;

-- Each tenant's chain: as many links as events and decisions, numbered from 1, each carrying the
-- digest of the one before it, and whole.
SELECT c.tenant_id, count(*) AS links, min(c.seq), max(c.seq),
       count(*) = (SELECT count(*) FROM memory_fabric.events e WHERE e.tenant_id = c.tenant_id)
                + (SELECT count(*) FROM memory_fabric.decisions d WHERE d.tenant_id = c.tenant_id) AS every_row,
       count(*) FILTER (WHERE c.source = 'decisions') AS decisions
FROM memory_fabric.audit_chain c WHERE c.tenant_id LIKE 't\_audit\__' GROUP BY 1 ORDER BY 1;
SELECT count(*) AS unlinked FROM memory_fabric.audit_chain c
LEFT JOIN memory_fabric.audit_chain b ON b.tenant_id = c.tenant_id AND b.seq = c.seq - 1
WHERE c.tenant_id LIKE 't\_audit\__' AND c.prev_digest <> coalesce(b.digest, repeat('0', 64));

-- verify_audit as the tenant's admin: intact, and the head it reports is the newest link.
SET ROLE regress_audit_admin;
SET memory_fabric.tenant_id = 't_audit_a';
SELECT links, intact, broken_seq, broken_table, problem, head_seq,
       head_digest = (SELECT c.digest FROM memory_fabric.audit_chain c WHERE c.tenant_id = 't_audit_a'
                      ORDER BY c.seq DESC LIMIT 1) AS head_is_newest
FROM memory_fabric.verify_audit('t_audit_a');
-- an admin reads its pinned tenant's links, no one else's
SELECT count(*) > 0 AS reads_own, count(*) FILTER (WHERE tenant_id <> 't_audit_a') AS others FROM memory_fabric.audit_chain;
-- another tenant than the pin, and roles without the admin's powers, are refused
SELECT regress_try($$SELECT * FROM memory_fabric.verify_audit('t_audit_b')$$);
RESET ROLE;
SET ROLE regress_audit_rv;
SET memory_fabric.tenant_id = 't_audit_a';
SELECT regress_try($$SELECT * FROM memory_fabric.verify_audit('t_audit_a')$$);
SELECT regress_try($$SELECT count(*) FROM memory_fabric.audit_chain$$);
SELECT regress_try($$SELECT count(*) FROM memory_fabric.audit_heads$$);
RESET ROLE;
SET ROLE regress_audit_agent;
SET memory_fabric.tenant_id = 't_audit_a';
SELECT regress_try($$SELECT * FROM memory_fabric.verify_audit('t_audit_a')$$);
RESET ROLE;
RESET memory_fabric.tenant_id;

-- The links are append-only like the rest.
SELECT regress_try($$UPDATE memory_fabric.audit_chain SET digest = repeat('f', 64) WHERE tenant_id = 't_audit_a' AND seq = 1$$);
SELECT regress_try($$DELETE FROM memory_fabric.audit_chain WHERE tenant_id = 't_audit_a'$$);

-- Erasure removes the subject's text and the salts of its rows, and the chain still holds: what
-- never changes is still checked, the commitment to the erased text is kept but can no longer be
-- tested against a guess.
SELECT candidates_erased > 0 AS erased FROM memory_fabric.forget_subject('t_audit_a', 'cus_1', 'erasure request');
SELECT count(*) FILTER (WHERE e.erased_at IS NOT NULL) > 0 AS some_erased,
       count(*) FILTER (WHERE e.erased_at IS NOT NULL AND e.audit_salt IS NOT NULL) AS erased_with_salt,
       count(*) FILTER (WHERE e.erased_at IS NULL AND e.audit_salt IS NULL) AS live_without_salt
FROM memory_fabric.events e WHERE e.tenant_id = 't_audit_a';
SELECT count(*) FILTER (WHERE d.erased_at IS NOT NULL) AS decisions_erased,
       count(*) FILTER (WHERE d.erased_at IS NOT NULL AND d.audit_salt IS NOT NULL) AS with_salt
FROM memory_fabric.decisions d WHERE d.tenant_id = 't_audit_a';
SELECT links, intact, problem FROM memory_fabric.verify_audit('t_audit_a');

-- Now the superuser goes behind the guards (triggers disabled), one tenant per alteration.
CREATE FUNCTION pg_temp.behind_guards(sql text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    ALTER TABLE memory_fabric.events DISABLE TRIGGER ALL;
    ALTER TABLE memory_fabric.decisions DISABLE TRIGGER ALL;
    ALTER TABLE memory_fabric.audit_chain DISABLE TRIGGER ALL;
    EXECUTE sql;
    ALTER TABLE memory_fabric.decisions ENABLE TRIGGER ALL;  -- the foreign keys' internal triggers
    ALTER TABLE memory_fabric.events ENABLE TRIGGER ALL;
    ALTER TABLE memory_fabric.audit_chain ENABLE TRIGGER ALL;
    ALTER TABLE memory_fabric.events ENABLE ALWAYS TRIGGER guard_update, ENABLE ALWAYS TRIGGER guard_delete,
        ENABLE ALWAYS TRIGGER guard_truncate, ENABLE ALWAYS TRIGGER audit_chain;
    ALTER TABLE memory_fabric.decisions ENABLE ALWAYS TRIGGER guard_update, ENABLE ALWAYS TRIGGER guard_delete,
        ENABLE ALWAYS TRIGGER guard_truncate, ENABLE ALWAYS TRIGGER audit_chain;
    ALTER TABLE memory_fabric.audit_chain ENABLE ALWAYS TRIGGER guard_update, ENABLE ALWAYS TRIGGER guard_delete,
        ENABLE ALWAYS TRIGGER guard_truncate;
END $$;
-- The seq of a tenant's link to a row (for the expected break).
CREATE FUNCTION pg_temp.seq_of(t text, src text, n int) RETURNS bigint LANGUAGE sql AS $$
    SELECT c.seq FROM memory_fabric.audit_chain c WHERE c.tenant_id = t AND c.source = src ORDER BY c.seq OFFSET n - 1 LIMIT 1
$$;
-- b: the reason in a decision's notes rewritten
SELECT pg_temp.seq_of('t_audit_b', 'decisions', 1) AS b_seq \gset
SELECT pg_temp.behind_guards(format($$UPDATE memory_fabric.decisions SET notes = 'approved without checking'
    WHERE id = (SELECT row_id FROM memory_fabric.audit_chain WHERE tenant_id = 't_audit_b' AND seq = %s)$$, :b_seq));
-- c: who approved, rewritten (a field that never changes)
SELECT pg_temp.seq_of('t_audit_c', 'decisions', 1) AS c_seq \gset
SELECT pg_temp.behind_guards(format($$UPDATE memory_fabric.decisions SET decided_by_role = 'regress_audit_rv'
    WHERE id = (SELECT row_id FROM memory_fabric.audit_chain WHERE tenant_id = 't_audit_c' AND seq = %s)$$, :c_seq));
-- d: an event deleted from the middle of the chain
SELECT pg_temp.seq_of('t_audit_d', 'events', 2) AS d_seq \gset
SELECT pg_temp.behind_guards(format($$DELETE FROM memory_fabric.events
    WHERE id = (SELECT row_id FROM memory_fabric.audit_chain WHERE tenant_id = 't_audit_d' AND seq = %s)$$, :d_seq));
-- e: an event inserted past the chain's trigger, then the newest link and its row deleted
SELECT pg_temp.behind_guards($$INSERT INTO memory_fabric.events (id, tenant_id, kind, payload, actor_role)
    VALUES ('ev_forged', 't_audit_e', 'memory.promoted', '{"memory_id": "pm_none"}', 'regress_audit_admin')$$);
SELECT t AS tenant, v.intact, v.broken_seq = s.want AS at_the_altered_link, v.broken_table,
       regexp_replace(v.broken_id, '^(ev|dc)_[0-9]{8}t.*', '\1_<id>') AS broken_id, v.problem
FROM (VALUES ('t_audit_a', NULL::bigint), ('t_audit_b', :b_seq), ('t_audit_c', :c_seq), ('t_audit_d', :d_seq),
             ('t_audit_e', NULL)) s(t, want),
     LATERAL memory_fabric.verify_audit(s.t) v
ORDER BY 1;
SELECT pg_temp.behind_guards($$DELETE FROM memory_fabric.events WHERE id = 'ev_forged'$$);
SELECT max(seq) AS e_last FROM memory_fabric.audit_chain WHERE tenant_id = 't_audit_e' \gset
SELECT pg_temp.behind_guards(format($$
    DELETE FROM memory_fabric.decisions WHERE id IN (SELECT row_id FROM memory_fabric.audit_chain
                                                     WHERE tenant_id = 't_audit_e' AND seq = %1$s AND source = 'decisions');
    DELETE FROM memory_fabric.events WHERE id IN (SELECT row_id FROM memory_fabric.audit_chain
                                                  WHERE tenant_id = 't_audit_e' AND seq = %1$s AND source = 'events');
    DELETE FROM memory_fabric.audit_chain WHERE tenant_id = 't_audit_e' AND seq = %1$s$$, :e_last));
SELECT intact, broken_seq = :e_last AS after_the_last_link, problem FROM memory_fabric.verify_audit('t_audit_e');

-- A transaction that rolls back leaves no link; the chain goes on after it.
BEGIN;
SET LOCAL ROLE regress_audit_admin;
SET LOCAL memory_fabric.tenant_id = 't_audit_a';
SELECT count(*) FROM memory_fabric.retract((SELECT id FROM memory_fabric.promoted_memory
    WHERE tenant_id = 't_audit_a' AND retracted_at IS NULL ORDER BY id LIMIT 1), 'rolled back', 'op:ben');
ROLLBACK;
SELECT links, intact FROM memory_fabric.verify_audit('t_audit_a');

-- The intent boundary (0.20.0). A memory of an intent that contradicts a cross-intent memory is
-- returned beside it by recall for that intent: a person decides (coexist, human), it is not
-- promoted on the agent's word by naming an intent.
SELECT count(*) FROM memory_fabric.grant_tenant('regress_audit_agent', 't_intent');
SET ROLE regress_audit_agent;
SET memory_fabric.tenant_id = 't_intent';
SELECT (memory_fabric.promote(c.id)).id IS NOT NULL AS promoted
FROM memory_fabric.capture_memory('t_intent', 'Customer cus_9 prefers email.', 'agent', 'INTERNAL', user_id => 'cus_9',
    entity => 'cus_9', predicate => 'contact_channel', value => '"email"') c,
    LATERAL memory_fabric.review_candidate(c.id) r;
SELECT id AS ci FROM memory_fabric.capture_memory('t_intent', 'Customer cus_9 prefers phone calls.', 'agent', 'INTERNAL',
    user_id => 'cus_9', intent_id => 'support.billing', entity => 'cus_9', predicate => 'contact_channel', value => '"phone"') \gset
SELECT status, contradiction_resolution, reviewer, reason FROM memory_fabric.review_candidate(:'ci');
SELECT stage FROM memory_fabric.review_status(:'ci');
SELECT regress_try(format('SELECT memory_fabric.promote(%L)', :'ci'));

-- The intent pin: a transaction pinned to an intent captures only memories of that intent and
-- recalls that intent or the cross-intent memories.
SET memory_fabric.intent_id = 'support.billing';
SELECT regress_try($$SELECT memory_fabric.capture_memory('t_intent', 'Customer cus_9 lives in Porto.', 'agent', 'INTERNAL',
    user_id => 'cus_9')$$);
SELECT regress_try($$SELECT memory_fabric.capture_memory('t_intent', 'Customer cus_9 lives in Porto.', 'agent', 'INTERNAL',
    user_id => 'cus_9', intent_id => 'sales')$$);
SELECT intent_id FROM memory_fabric.capture_memory('t_intent', 'Customer cus_9 pays by card.', 'agent', 'INTERNAL',
    user_id => 'cus_9', intent_id => 'support.billing');
SELECT regress_try($$SELECT count(*) FROM memory_fabric.recall('t_intent', 'sales', user_id => 'cus_9')$$);
SELECT regress_try($$SELECT count(*) FROM memory_fabric.recall_fact('t_intent', 'sales', 'cus_9', 'contact_channel', user_id => 'cus_9')$$);
SELECT count(*) AS cross_intent FROM memory_fabric.recall('t_intent', NULL, user_id => 'cus_9');
SELECT count(*) AS billing FROM memory_fabric.recall('t_intent', 'support.billing', user_id => 'cus_9');
RESET memory_fabric.intent_id;
RESET memory_fabric.tenant_id;
RESET ROLE;
