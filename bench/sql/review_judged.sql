\set r random(1, :njudge)
SELECT (memory_fabric.review_candidate(s.candidate_id)).status FROM (SELECT set_config('memory_fabric.tenant_id', q.tenant_id, true) AS pin, q.* FROM bench.judge_pool q WHERE q.n = :r) s;
