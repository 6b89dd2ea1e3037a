-- recall@1 of review's nearest-neighbour search: for every pool candidate whose true nearest
-- memory (exact scan, as the owner) is a duplicate (similarity >= 0.94), review must name it.
SELECT count(*) AS probes, round(avg((r.duplicate_of_id = ex.id)::int), 4) AS recall_at_1
FROM bench.review_pool rp
JOIN memory_fabric.candidates c ON c.id = rp.candidate_id
CROSS JOIN LATERAL (SELECT m.id, 1 - (m.embedding <=> c.embedding) AS sim FROM memory_fabric.promoted_memory m
    WHERE m.tenant_id = c.tenant_id AND (m.user_id = c.user_id OR (m.user_id IS NULL AND c.user_id IS NULL))
      AND (m.intent_scope IS NULL OR m.intent_scope = c.intent_id) AND m.retracted_at IS NULL
      AND (m.expires_at IS NULL OR m.expires_at > now()) AND m.embedding_model = 'bench-384'
    ORDER BY m.embedding <=> c.embedding LIMIT 1) ex
CROSS JOIN LATERAL (SELECT r.* FROM memory_fabric.reviews r WHERE r.candidate_id = c.id
    ORDER BY r.reviewed_at DESC, r.id DESC LIMIT 1) r
WHERE ex.sim >= 0.94;
