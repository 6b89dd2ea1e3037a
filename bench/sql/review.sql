\set r random(1, :nreview)
SELECT (memory_fabric.review_candidate(s.candidate_id)).status FROM (SELECT set_config('memory_fabric.tenant_id', q.tenant_id, true) AS pin, q.* FROM bench.review_pool q WHERE q.n = :r) s;
