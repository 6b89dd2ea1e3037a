\set p 2 * random(0, :npairs - 1) + 1
SELECT (memory_fabric.capture_memory(s.tenant_id, s.text, 'agent', 'INTERNAL', user_id => s.user_id, intent_id => s.intent_id, embedding => s.embedding::real[]::vector, embedding_model => 'bench-384')).id FROM (SELECT set_config('memory_fabric.tenant_id', q.tenant_id, true) AS pin, q.* FROM bench.probes q WHERE q.id = :p) s;
