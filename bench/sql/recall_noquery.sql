\set p 2 * random(0, :npairs - 1) + 1
SELECT count(*) FROM (SELECT set_config('memory_fabric.tenant_id', q.tenant_id, true) AS pin, q.* FROM bench.probes q WHERE q.id = :p) s, LATERAL memory_fabric.recall(s.tenant_id, s.intent_id, user_id => s.user_id, classification_allowed => ARRAY['PUBLIC', 'INTERNAL', 'PII']) r;
