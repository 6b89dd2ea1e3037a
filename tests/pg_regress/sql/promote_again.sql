-- promote() checks that the review's verdict still holds. While no promoted memory of the scope
-- has been inserted or updated since the review (memory_fabric.scope_versions), it decides again
-- on the memories the review compared, read by id, instead of searching the scope; when memories
-- were only inserted since (and the scope remembers which: its last 16 changes), on those and the
-- inserted ones of the review's scope, as the search would select among them (DEBUG1 says which).
-- Anything else that changed the scope, or a compared memory that expired, makes it review again
-- in full.
\set SHOW_CONTEXT never
DO $$ BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'regress_again_agent') THEN DROP ROLE regress_again_agent; END IF;
END $$;
CREATE ROLE regress_again_agent IN ROLE memory_fabric_agent;
SELECT count(*) FROM memory_fabric.grant_tenant('regress_again_agent', 't_again');
-- Promotes a candidate; with DEBUG1 messages shown, promote() says when it read the review's
-- memories again instead of searching the scope.
CREATE FUNCTION pg_temp.promote_traced(c text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE outcome text;
BEGIN
    SET LOCAL client_min_messages = debug1;
    outcome := public.regress_try(format('SELECT memory_fabric.promote(%L)', c));
    RESET client_min_messages;
    RETURN outcome;
END $$;
GRANT EXECUTE ON FUNCTION pg_temp.promote_traced(text) TO PUBLIC;

-- As an ordinary role: a memory, then a candidate reviewed against it. The review records the
-- scope's version and what it compared.
SET ROLE regress_again_agent;
SET memory_fabric.tenant_id = 't_again';
SELECT id AS m1 FROM memory_fabric.capture_memory('t_again', 'The Porto office opens at nine.', 'agent', 'INTERNAL', user_id => 'u1') \gset
SELECT status FROM memory_fabric.review_candidate(:'m1');
SELECT id AS m1_pm FROM memory_fabric.promote(:'m1') \gset
SELECT id AS c1 FROM memory_fabric.capture_memory('t_again', 'Invoices go out on the first Monday of each month.', 'agent', 'INTERNAL', user_id => 'u1') \gset
SELECT status, scope_version IS NOT NULL AS has_version, neighbour_ids = ARRAY[:'m1_pm'] AS compared_with_m1,
       retracted_ids FROM memory_fabric.review_candidate(:'c1');
-- nothing changed in the scope since: decided again on m1, without a search
SELECT pg_temp.promote_traced(:'c1');
-- the role reads nothing of the versions, and cannot write them
SELECT public.regress_try('SELECT count(*) FROM memory_fabric.scope_versions') AS read_versions;
SELECT public.regress_try('UPDATE memory_fabric.scope_versions SET version = gen_random_uuid()') AS write_versions;

-- A promotion in the scope since the review: the memory promoted is read with those compared, and
-- a near-duplicate promoted in between is found (refused, as before).
SELECT id AS c2 FROM memory_fabric.capture_memory('t_again', 'Visitors sign in at the front desk.', 'agent', 'INTERNAL', user_id => 'u1') \gset
SELECT id AS c3 FROM memory_fabric.capture_memory('t_again', 'Visitors sign in at the front desk!', 'agent', 'INTERNAL', user_id => 'u1') \gset
SELECT r2.status, r3.status FROM memory_fabric.review_candidate(:'c2') r2, memory_fabric.review_candidate(:'c3') r3;
SELECT pg_temp.promote_traced(:'c2');
SELECT pg_temp.promote_traced(:'c3');
-- reviewed again, it is the duplicate it now is
SELECT status, duplicate_of_id IS NOT NULL AS names_it FROM memory_fabric.review_candidate(:'c3');

-- Another user's scope changing is not this scope changing.
SELECT id AS c4 FROM memory_fabric.capture_memory('t_again', 'Parking is free after six in the evening.', 'agent', 'INTERNAL', user_id => 'u1') \gset
SELECT status FROM memory_fabric.review_candidate(:'c4');
SELECT id AS o1 FROM memory_fabric.capture_memory('t_again', 'The Braga office closes at five.', 'agent', 'INTERNAL', user_id => 'u2') \gset
SELECT status FROM memory_fabric.review_candidate(:'o1');
SELECT pg_temp.promote_traced(:'o1');
SELECT pg_temp.promote_traced(:'c4');
-- Memories promoted since the review into the user's scope, of another intent and cross-intent:
-- only the cross-intent one is of the candidate's scope (intent ops.x). The verdict is the one a
-- search now gives.
SELECT id AS c10 FROM memory_fabric.capture_memory('t_again', 'Deliveries arrive at the loading bay before noon.', 'agent', 'INTERNAL',
    user_id => 'u1', intent_id => 'ops.x') \gset
SELECT status FROM memory_fabric.review_candidate(:'c10');
SELECT id AS q1 FROM memory_fabric.capture_memory('t_again', 'Deliveries arrive at the loading bay before noon!', 'agent', 'INTERNAL',
    user_id => 'u1', intent_id => 'sales.y') \gset
SELECT id AS q2 FROM memory_fabric.capture_memory('t_again', 'Keys to the meeting rooms hang at reception.', 'agent', 'INTERNAL', user_id => 'u1') \gset
SELECT r1.status, r2.status FROM memory_fabric.review_candidate(:'q1') r1, memory_fabric.review_candidate(:'q2') r2;
SELECT count(*) FROM memory_fabric.promote(:'q1');
SELECT count(*) FROM memory_fabric.promote(:'q2');
SELECT pg_temp.promote_traced(:'c10');
-- More than 16 changes since the review: the scope no longer remembers the first, so promote()
-- searches again (no DEBUG1).
SELECT id AS c11 FROM memory_fabric.capture_memory('t_again', 'The archive room is locked on weekends.', 'agent', 'INTERNAL', user_id => 'u1') \gset
SELECT status FROM memory_fabric.review_candidate(:'c11');
DO $$
DECLARE c text;
BEGIN
    FOR i IN 1..17 LOOP
        SELECT id INTO c FROM memory_fabric.capture_memory('t_again',
            format('Locker %s takes code %s.', md5(i::text), md5((i * 7919)::text)), 'agent', 'INTERNAL', user_id => 'u1');
        PERFORM memory_fabric.review_candidate(c);
        PERFORM memory_fabric.promote(c);
    END LOOP;
END $$;
SELECT pg_temp.promote_traced(:'c11');
RESET ROLE;

-- A retraction in the scope since the review: searched again (the verdict still holds).
SELECT id AS c5 FROM memory_fabric.capture_memory('t_again', 'Printer toner is ordered every quarter.', 'agent', 'INTERNAL', user_id => 'u1') \gset
SELECT status FROM memory_fabric.review_candidate(:'c5');
SELECT (memory_fabric.retract(:'m1_pm', 'moved', 'operator:ana')).id = :'m1_pm' AS retracted;
SELECT pg_temp.promote_traced(:'c5');

-- A rejection since the review changes no promoted memory, so the review's memories are read
-- again by id; the rejections are read anew, and a repeat of the rejected candidate is refused.
SELECT id AS c6 FROM memory_fabric.capture_memory('t_again', 'Umbrellas are lent to guests on rainy days.', 'agent', 'INTERNAL', user_id => 'u1') \gset
SELECT status FROM memory_fabric.review_candidate(:'c6');
SELECT id AS c7 FROM memory_fabric.capture_memory('t_again', 'Umbrellas are lent to guests on rainy days!', 'agent', 'INTERNAL', user_id => 'u1') \gset
SELECT status FROM memory_fabric.review_candidate(:'c7');
SELECT action FROM memory_fabric.reject(:'c7', 'operator:ana', 'no umbrellas any more');
SELECT pg_temp.promote_traced(:'c6');

-- A compared memory that expired since the review: searched again.
SELECT version > 0 AS short_ttl FROM memory_fabric.set_policy('t_again_exp',
    '{"ttl_seconds": {"working": 1}, "consent": {"classifications": []}}');
SELECT id AS e1 FROM memory_fabric.capture_memory('t_again_exp', 'Call the Lisbon client back on Tuesday.', 'agent', 'PII',
    user_id => 'u1', intent_id => 'sales.x') \gset
SELECT proposed_tier FROM memory_fabric.review_candidate(:'e1');
SELECT id AS e1_pm FROM memory_fabric.promote(:'e1') \gset
SELECT id AS e2 FROM memory_fabric.capture_memory('t_again_exp', 'The quarterly report is due in March.', 'agent', 'PII',
    user_id => 'u1', intent_id => 'sales.x') \gset
SELECT status, :'e1_pm' = ANY (neighbour_ids) AS compared_with_e1 FROM memory_fabric.review_candidate(:'e2');
SELECT pg_sleep(1.2);
SELECT pg_temp.promote_traced(:'e2');

-- Capture, review and promotion in one transaction: nothing else can change the scope in between.
BEGIN;
SELECT id AS c8 FROM memory_fabric.capture_memory('t_again', 'Team lunches are booked through the events calendar.', 'agent', 'INTERNAL', user_id => 'u1') \gset
SELECT status FROM memory_fabric.review_candidate(:'c8');
SELECT pg_temp.promote_traced(:'c8');
COMMIT;

-- Reviews recorded before 0.13.0 have no version: searched again. (A review's recorded basis is
-- written by review alone; here one without it stands in for an old one.)
SELECT id AS c9 FROM memory_fabric.capture_memory('t_again', 'Bicycles may be parked in the courtyard.', 'agent', 'INTERNAL', user_id => 'u1') \gset
SELECT count(*) FROM memory_fabric.review_candidate(:'c9');
INSERT INTO memory_fabric.reviews (id, tenant_id, candidate_id, status, proposed_tier, priority_score, reviewer, policy_version, reviewed_at)
SELECT 'rv_' || substr(r.id, 4, 16) || 'zzzzzzzzzzzz', r.tenant_id, r.candidate_id, r.status, r.proposed_tier, r.priority_score, r.reviewer,
       r.policy_version, r.reviewed_at + interval '1 second'
FROM memory_fabric.reviews r WHERE r.candidate_id = :'c9';
SELECT pg_temp.promote_traced(:'c9');
SELECT count(*) FROM memory_fabric.revoke_tenant('regress_again_agent', 't_again');
