-- review_candidate: every verdict, tier, priority and resolution.
\set SHOW_CONTEXT never
-- Capture-and-review in one call, printing the verdict without ids.
CREATE FUNCTION pg_temp.verdict(r memory_fabric.reviews)
RETURNS TABLE (status text, tier text, priority numeric, reviewer text, reason text, resolution text, similarity numeric)
LANGUAGE sql AS $$
    SELECT r.status, r.proposed_tier, r.priority_score, r.reviewer, r.reason, r.contradiction_resolution,
           round(r.similarity::numeric, 2)
$$;

-- Tier and priority exactly as seed 000 tierFor / priorityFor.
SELECT v.* FROM memory_fabric.capture_memory('t_tier', 'Operator fact with one ref.', 'operator', 'PII',
         intent_id => 'support.refund.execute', evidence_refs => '["op:1"]') c,
     memory_fabric.review_candidate(c.id) r, pg_temp.verdict(r) v;
SELECT v.* FROM memory_fabric.capture_memory('t_tier', 'Agent note during a support case.', 'agent', 'PII',
         intent_id => 'support.case.triage') c,
     memory_fabric.review_candidate(c.id) r, pg_temp.verdict(r) v;
SELECT v.* FROM memory_fabric.capture_memory('t_tier', 'Agent note holding personal data.', 'agent', 'PII',
         intent_id => 'sales.upsell') c,
     memory_fabric.review_candidate(c.id) r, pg_temp.verdict(r) v;
SELECT v.* FROM memory_fabric.capture_memory('t_tier', 'System fact with three refs.', 'system', 'INTERNAL',
         evidence_refs => '["a", "b", "c"]') c,
     memory_fabric.review_candidate(c.id) r, pg_temp.verdict(r) v;
SELECT v.* FROM memory_fabric.capture_memory('t_tier', 'System fact with ten refs.', 'system', 'INTERNAL',
         evidence_refs => '["1","2","3","4","5","6","7","8","9","10"]') c,
     memory_fabric.review_candidate(c.id) r, pg_temp.verdict(r) v;

-- Durable candidates are queued for a human, with a memory.queued event.
SELECT proposed_tier, proposed_text, reason, source FROM memory_fabric.review_queue
WHERE tenant_id = 't_tier' ORDER BY enqueued_at;
SELECT kind, payload ->> 'tier' AS tier, payload ->> 'reason' AS reason
FROM memory_fabric.events WHERE tenant_id = 't_tier' ORDER BY created_at;

-- Duplicates: same content (case and spacing aside), same structured fact, near-identical text.
SELECT id AS base FROM memory_fabric.capture_memory('t_dup', 'The warehouse ships orders on weekdays only.',
    'agent', 'INTERNAL', entity => 'site:warehouse_1', predicate => 'ships_on', value => '"weekdays"') \gset
SELECT status FROM memory_fabric.review_candidate(:'base');
SELECT id AS base_pm FROM memory_fabric.promote(:'base') \gset
SELECT v.*, r.duplicate_of_id = :'base_pm' AS points_at_memory
FROM memory_fabric.capture_memory('t_dup', '  the WAREHOUSE ships orders on weekdays only.', 'agent', 'INTERNAL') c,
     memory_fabric.review_candidate(c.id) r, pg_temp.verdict(r) v;
SELECT v.*, r.duplicate_of_id = :'base_pm' AS points_at_memory
FROM memory_fabric.capture_memory('t_dup', 'Shipping happens Monday to Friday.', 'agent', 'INTERNAL',
         entity => 'site:warehouse_1', predicate => 'ships_on', value => '"weekdays"') c,
     memory_fabric.review_candidate(c.id) r, pg_temp.verdict(r) v;
SELECT v.*, r.duplicate_of_id = :'base_pm' AS points_at_memory
FROM memory_fabric.capture_memory('t_dup', 'The warehouse ships orders on weekdays only!', 'agent', 'INTERNAL') c,
     memory_fabric.review_candidate(c.id) r, pg_temp.verdict(r) v;
-- ... but never across users, tenants or into a narrower intent scope.
SELECT v.status FROM memory_fabric.capture_memory('t_dup', 'The warehouse ships orders on weekdays only.',
         'agent', 'INTERNAL', user_id => 'cust_1') c, memory_fabric.review_candidate(c.id) r, pg_temp.verdict(r) v;
SELECT v.status FROM memory_fabric.capture_memory('t_dup_other', 'The warehouse ships orders on weekdays only.',
         'agent', 'INTERNAL') c, memory_fabric.review_candidate(c.id) r, pg_temp.verdict(r) v;

-- Contradictions, each with a memory.contradiction event.
-- (kb: is the tenant's own knowledge base; evidence only from doc:, web:, tool: or file: waits for a
-- human, see security.sql section 15)
SELECT id AS ret FROM memory_fabric.capture_memory('t_con', 'Returns are accepted within 30 days of delivery.',
    'agent', 'PUBLIC', evidence_refs => '["kb:returns_v1"]') \gset
SELECT status FROM memory_fabric.review_candidate(:'ret');
SELECT id AS ret_pm FROM memory_fabric.promote(:'ret') \gset
-- a different number, same trust and evidence: the conservative default, block
SELECT v.*, r.contradicts_id = :'ret_pm' AS points_at_memory
FROM memory_fabric.capture_memory('t_con', 'Returns are accepted within 45 days of delivery.', 'agent', 'PUBLIC',
         evidence_refs => '["chat:42"]') c,
     memory_fabric.review_candidate(c.id) r, pg_temp.verdict(r) v;
-- fresher with more evidence: supersede
SELECT v.* FROM memory_fabric.capture_memory('t_con', 'Returns are accepted within 45 days of delivery.', 'agent', 'PUBLIC',
         evidence_refs => '["doc:returns_v2", "ticket:88"]') c,
     memory_fabric.review_candidate(c.id) r, pg_temp.verdict(r) v;
-- from a more trusted source: supersede
SELECT v.* FROM memory_fabric.capture_memory('t_con', 'Returns are accepted within 60 days of delivery.', 'system', 'PUBLIC') c,
     memory_fabric.review_candidate(c.id) r, pg_temp.verdict(r) v;
-- a correction: supersede, and corrections are human-reviewed only when durable
SELECT v.* FROM memory_fabric.capture_memory('t_con', 'Returns are accepted within 14 days of delivery.', 'agent', 'PUBLIC',
         write_class => 'correction') c,
     memory_fabric.review_candidate(c.id) r, pg_temp.verdict(r) v;
-- a different intent scope: coexist
SELECT v.* FROM memory_fabric.capture_memory('t_con', 'Returns are accepted within 90 days of delivery.', 'agent', 'PUBLIC',
         intent_id => 'support.eu_returns') c,
     memory_fabric.review_candidate(c.id) r, pg_temp.verdict(r) v;
-- negation
SELECT id AS inv FROM memory_fabric.capture_memory('t_con', 'Customer cus_77 wants paper invoices.', 'agent', 'INTERNAL') \gset
SELECT status FROM memory_fabric.review_candidate(:'inv');
SELECT count(*) AS promoted FROM memory_fabric.promote(:'inv');
SELECT v.* FROM memory_fabric.capture_memory('t_con', 'Customer cus_77 does not want paper invoices.', 'agent', 'INTERNAL') c,
     memory_fabric.review_candidate(c.id) r, pg_temp.verdict(r) v;
-- a swapped value
SELECT v.* FROM memory_fabric.capture_memory('t_con', 'Customer cus_77 wants email invoices.', 'agent', 'INTERNAL') c,
     memory_fabric.review_candidate(c.id) r, pg_temp.verdict(r) v;
-- the same structured key with another value, however different the words
SELECT id AS ch FROM memory_fabric.capture_memory('t_con', 'Preferred channel: email.', 'agent', 'INTERNAL',
    entity => 'customer:cus_77', predicate => 'prefers_channel', value => '"email"') \gset
SELECT status FROM memory_fabric.review_candidate(:'ch');
SELECT count(*) AS promoted FROM memory_fabric.promote(:'ch');
SELECT v.* FROM memory_fabric.capture_memory('t_con', 'Phone only from now on, please.', 'operator', 'INTERNAL',
         entity => 'customer:cus_77', predicate => 'prefers_channel', value => '"phone"') c,
     memory_fabric.review_candidate(c.id) r, pg_temp.verdict(r) v;
-- an elaboration is compatible: new
SELECT v.* FROM memory_fabric.capture_memory('t_con', 'Customer cus_77 wants paper invoices sent to the Lisbon office.',
         'agent', 'INTERNAL') c,
     memory_fabric.review_candidate(c.id) r, pg_temp.verdict(r) v;
SELECT kind, payload ->> 'resolution' AS resolution, payload ->> 'reason' AS reason
FROM memory_fabric.events WHERE tenant_id = 't_con' AND kind = 'memory.contradiction' ORDER BY created_at;

-- A judge function replaces the assertion heuristic (superuser-only setting).
CREATE FUNCTION public.regress_judge(a text, b text) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$ SELECT a ILIKE '%phone%' $$;
SET memory_fabric.contradiction_function = 'public.regress_judge';
SELECT v.* FROM memory_fabric.capture_memory('t_con', 'Customer cus_77 wants paper invoices by phone.', 'agent', 'INTERNAL') c,
     memory_fabric.review_candidate(c.id) r, pg_temp.verdict(r) v;
SELECT v.* FROM memory_fabric.capture_memory('t_con', 'Customer cus_77 wants 5 paper invoices.', 'agent', 'INTERNAL') c,
     memory_fabric.review_candidate(c.id) r, pg_temp.verdict(r) v;
SET memory_fabric.contradiction_function = 'public.no_such_judge';
SELECT memory_fabric.review_candidate(id) FROM memory_fabric.capture_memory('t_con', 'Customer cus_77 wants paper invoices daily.', 'agent', 'INTERNAL');
\echo :SQLSTATE
RESET memory_fabric.contradiction_function;

-- The trust floor: a policy's minimum confidence and source trust reject at review.
INSERT INTO memory_fabric.policies (tenant_id, version, body)
VALUES ('t_trust', 10, '{"trust": {"min_confidence": 0.7, "min_source_trust": 0.7}}');
SELECT v.* FROM memory_fabric.capture_memory('t_trust', 'Low confidence guess.', 'system', 'PUBLIC', confidence => 0.4) c,
     memory_fabric.review_candidate(c.id) r, pg_temp.verdict(r) v;
SELECT v.* FROM memory_fabric.capture_memory('t_trust', 'Agent claim from a low-trust source.', 'agent', 'PUBLIC') c,
     memory_fabric.review_candidate(c.id) r, pg_temp.verdict(r) v;
SELECT v.* FROM memory_fabric.capture_memory('t_trust', 'Confident system fact.', 'system', 'PUBLIC', confidence => 0.9) c,
     memory_fabric.review_candidate(c.id) r, pg_temp.verdict(r) v;

-- Review is deterministic: reviewing again gives the same verdict, as a new review row.
SELECT id AS det FROM memory_fabric.capture_memory('t_con', 'Customer cus_77 wants paper invoices.', 'operator', 'INTERNAL') \gset
SELECT count(DISTINCT (status, duplicate_of_id, proposed_tier, priority_score, reviewer, reason)) AS verdicts,
       count(DISTINCT id) AS reviews
FROM (SELECT r.* FROM memory_fabric.review_candidate(:'det') r
      UNION ALL SELECT r.* FROM memory_fabric.review_candidate(:'det') r) s;

-- Refusals.
SELECT memory_fabric.review_candidate('mc_20260101t000000_000000000000');
\echo :SQLSTATE
SELECT memory_fabric.review_candidate(NULL);
\echo :SQLSTATE
SELECT memory_fabric.review_candidate('');
\echo :SQLSTATE
SELECT public.regress_try(format('SELECT memory_fabric.review_candidate(%L)', :'base'));
