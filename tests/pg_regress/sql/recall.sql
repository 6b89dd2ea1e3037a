-- recall: every filter, as_of, ordering, scoring, provenance, and the flags.
\set SHOW_CONTEXT never
-- Promote through the real pipeline (approving human-tier items as another person).
CREATE FUNCTION pg_temp.remember(tenant text, body text, src text, cls text, usr text DEFAULT NULL,
                                 intent text DEFAULT NULL, conf double precision DEFAULT NULL,
                                 refs jsonb DEFAULT '[]', actor text DEFAULT 'agent:test')
RETURNS text LANGUAGE plpgsql AS $$
DECLARE c text; r memory_fabric.reviews; m text;
BEGIN
    SELECT id INTO c FROM memory_fabric.capture_memory(tenant, body, src, cls, user_id => usr, intent_id => intent,
                                                        confidence => conf, evidence_refs => refs, actor => actor);
    r := memory_fabric.review_candidate(c);
    IF r.reviewer = 'human' THEN
        SELECT id INTO m FROM memory_fabric.approve(c, 'reviewer:other');
    ELSE
        SELECT id INTO m FROM memory_fabric.promote(c);
    END IF;
    RETURN m;
END $$;

SELECT pg_temp.remember('t_rc', 'Tenant-wide: support hours are 9 to 17 CET.', 'system', 'PUBLIC') AS tenantwide \gset
SELECT pg_temp.remember('t_rc', 'Customer u1 prefers Portuguese.', 'agent', 'INTERNAL', usr => 'u1') AS u1_pref \gset
SELECT pg_temp.remember('t_rc', 'Customer u2 prefers German.', 'agent', 'INTERNAL', usr => 'u2') AS u2_pref \gset
SELECT pg_temp.remember('t_rc', 'Customer u1 card ends in 4242.', 'agent', 'PII', usr => 'u1', intent => 'billing.charge') AS u1_pii \gset
SELECT pg_temp.remember('t_rc', 'Refund requests need an order number.', 'agent', 'INTERNAL', intent => 'support.refund') AS refund_rule \gset
SELECT pg_temp.remember('t_rc', 'Operator note: u1 is a VIP account.', 'operator', 'CONFIDENTIAL', usr => 'u1', actor => 'operator:alice') AS vip \gset
SELECT pg_temp.remember('t_rc', 'Customer u1 might be moving to Berlin.', 'agent', 'INTERNAL', usr => 'u1', conf => 0.3) AS rumour \gset
SELECT pg_temp.remember('t_rc_other', 'Other tenant: u1 prefers French.', 'agent', 'INTERNAL', usr => 'u1') AS other_tenant \gset

-- Without a query: priority, then recency. Cross-intent and user-less rows included.
SELECT text, tier, priority, score, low_confidence, in_contradiction
FROM memory_fabric.recall('t_rc', 'support.refund', user_id => 'u1');
-- Anonymous recall: tenant-wide memories only, never another user's.
SELECT text FROM memory_fabric.recall('t_rc', 'support.refund');
-- Another user.
SELECT text FROM memory_fabric.recall('t_rc', 'support.refund', user_id => 'u2');
-- Another intent: the refund rule is scoped to support.refund.
SELECT text FROM memory_fabric.recall('t_rc', 'sales.upsell', user_id => 'u1');
-- The classification set decides: PII and CONFIDENTIAL only when allowed.
SELECT text FROM memory_fabric.recall('t_rc', 'billing.charge', user_id => 'u1',
                                      classification_allowed => ARRAY['PII', 'CONFIDENTIAL']);
SELECT count(*) FROM memory_fabric.recall('t_rc', 'billing.charge', user_id => 'u1', classification_allowed => '{}');
-- Another tenant never sees t_rc's rows, and t_rc never sees theirs.
SELECT text FROM memory_fabric.recall('t_rc_other', 'support.refund', user_id => 'u1',
                                      classification_allowed => ARRAY['PUBLIC', 'INTERNAL', 'PII', 'CONFIDENTIAL']);
-- max_recalls is a stingy top-k.
SELECT text FROM memory_fabric.recall('t_rc', 'support.refund', user_id => 'u1', max_recalls => 2);

-- Provenance on every row.
SELECT text, candidate_id IS NOT NULL AS candidate, evidence_refs, source, captured_at <= promoted_at AS captured_first,
       consent_id, classification, user_scope, intent_scope, embedding_model
FROM memory_fabric.recall('t_rc', 'billing.charge', user_id => 'u1', classification_allowed => ARRAY['PII'])
ORDER BY text;

-- With a query: score = 0.6 relevance + 0.25 recency + 0.15 importance, ranked, floored.
SELECT text, round(score::numeric, 3) AS score, round(relevance::numeric, 3) AS relevance,
       round(recency::numeric, 3) AS recency, importance, low_confidence,
       abs(score - (0.6 * relevance + 0.25 * recency + 0.15 * importance)) < 1e-9 AS blend
FROM memory_fabric.recall('t_rc', 'support.refund', user_id => 'u1', query_text => 'which language does customer u1 prefer?');
-- A higher floor drops what does not clear it: nothing beats a misleading recall.
INSERT INTO memory_fabric.policies (tenant_id, version, body) VALUES ('t_rc', 30, '{"recall": {"min_score": 0.7}}');
SELECT count(*) AS above_floor
FROM memory_fabric.recall('t_rc', 'support.refund', user_id => 'u1', query_text => 'unrelated words about volcanoes');
SELECT text FROM memory_fabric.recall('t_rc', 'support.refund', user_id => 'u1', query_text => 'Customer u1 prefers Portuguese.');

-- The caller's own vectors: compared only with memories of the same model (the built-in
-- model's memory has no relevance to this query, so it falls under the floor).
SELECT pg_temp.remember('t_vec', 'Vector memory A', 'agent', 'PUBLIC') AS va \gset
SELECT count(*) FROM memory_fabric.register_embedding_model('t_vec', 'app-3d', 3);
SELECT id AS vc FROM memory_fabric.capture_memory('t_vec', 'Vector memory B', 'agent', 'PUBLIC',
    embedding => '[1, 0, 0]', embedding_model => 'app-3d') \gset
-- review cannot compare it with memory A, of the built-in model: a person decides (0.16.0)
SELECT status, reviewer, reason, reviewer_notes FROM memory_fabric.review_candidate(:'vc');
SELECT count(*) FROM memory_fabric.approve(:'vc', 'op:vectors');
SELECT text, round(relevance::numeric, 3) AS relevance, embedding_model
FROM memory_fabric.recall('t_vec', NULL, query_embedding => '[1, 0, 0]', query_embedding_model => 'app-3d',
                          classification_allowed => ARRAY['PUBLIC'])
ORDER BY text;

-- Conflicts are surfaced, never hidden: a coexisting contradiction flags both sides.
SELECT pg_temp.remember('t_cx', 'Returns are accepted within 30 days.', 'agent', 'PUBLIC') AS general \gset
SELECT pg_temp.remember('t_cx', 'Returns are accepted within 60 days.', 'agent', 'PUBLIC', intent => 'support.eu') AS eu \gset
SELECT text, in_contradiction, contradicts = ARRAY[CASE WHEN text LIKE '%30%' THEN :'eu' ELSE :'general' END] AS points_at_other
FROM memory_fabric.recall('t_cx', 'support.eu', classification_allowed => ARRAY['PUBLIC']) ORDER BY text;
-- Outside the EU scope the exception is not visible, so nothing conflicts there.
SELECT text, in_contradiction, contradicts FROM memory_fabric.recall('t_cx', 'support.us', classification_allowed => ARRAY['PUBLIC']);

-- as_of: what was believed at an instant, before and after a supersede and a retraction.
SELECT pg_temp.remember('t_asof', 'The on-call lead is Dana.', 'agent', 'INTERNAL') AS dana \gset
SELECT clock_timestamp() AS t_dana \gset
SELECT pg_temp.remember('t_asof', 'The on-call lead is Omar.', 'system', 'INTERNAL') AS omar \gset
SELECT clock_timestamp() AS t_omar \gset
SELECT count(*) FROM memory_fabric.retract(:'omar', 'rotation ended', 'operator:bob');
SELECT 'before anything' AS at, count(*) FROM memory_fabric.recall('t_asof', NULL, as_of => '2000-01-01')
UNION ALL SELECT 'after Dana', count(*) FROM memory_fabric.recall('t_asof', NULL, as_of => :'t_dana')
UNION ALL SELECT 'now', count(*) FROM memory_fabric.recall('t_asof', NULL);
SELECT text FROM memory_fabric.recall('t_asof', NULL, as_of => :'t_dana');
SELECT text FROM memory_fabric.recall('t_asof', NULL, as_of => :'t_omar');
-- Expiry: a working-tier memory is gone an hour after promotion.
SELECT pg_temp.remember('t_asof', 'Working note: customer is on hold.', 'agent', 'PII', intent => 'sales.call') AS note \gset
SELECT count(*) AS in_59_minutes FROM memory_fabric.recall('t_asof', 'sales.call', classification_allowed => ARRAY['PII'],
                                                          as_of => clock_timestamp() + interval '59 minutes');
SELECT count(*) AS in_61_minutes FROM memory_fabric.recall('t_asof', 'sales.call', classification_allowed => ARRAY['PII'],
                                                          as_of => clock_timestamp() + interval '61 minutes');

-- Bad arguments.
SELECT * FROM memory_fabric.recall(NULL, 'x');
\echo :SQLSTATE
SELECT * FROM memory_fabric.recall('', 'x');
\echo :SQLSTATE
SELECT * FROM memory_fabric.recall('t_rc', 'x', max_recalls => 0);
\echo :SQLSTATE
SELECT * FROM memory_fabric.recall('t_rc', 'x', max_recalls => 100000);
\echo :SQLSTATE
SELECT * FROM memory_fabric.recall('t_rc', 'x', classification_allowed => NULL);
\echo :SQLSTATE
SELECT * FROM memory_fabric.recall('t_rc', 'x', query_text => '  ');
\echo :SQLSTATE
SELECT * FROM memory_fabric.recall('t_vec', 'x', query_embedding => '[1, 0, 0]');
\echo :SQLSTATE
SELECT * FROM memory_fabric.recall('t_vec', 'x', query_embedding => '[1, 0]', query_embedding_model => 'app-3d');
\echo :SQLSTATE
SELECT * FROM memory_fabric.recall('t_vec', 'x', query_embedding => '[1, 0]', query_embedding_model => 'memory_fabric/hash-384-v1');
\echo :SQLSTATE
