-- Turns the candidates loaded since the last run into reviews and promoted memories (the bulk
-- path), with seed 000 tiers and priorities, 5% retracted and 5% expired.
\set ON_ERROR_STOP 1
INSERT INTO memory_fabric.reviews (id, tenant_id, candidate_id, status, proposed_tier, priority_score, reviewer, policy_version, reviewed_at)
SELECT 'rv_' || substr(c.id, 4), c.tenant_id, c.id, 'pending_promotion',
       CASE WHEN c.source = 'operator' THEN 'durable' WHEN c.intent_id LIKE 'support.%' THEN 'episodic'
            WHEN c.classification = 'PII' THEN 'working' ELSE 'semantic' END,
       CASE c.source WHEN 'operator' THEN 0.9 WHEN 'system' THEN 0.7 ELSE 0.5 END, 'auto', 1, c.captured_at
FROM memory_fabric.candidates c
WHERE c.id LIKE 'mc\_bench\_%' AND NOT EXISTS (SELECT 1 FROM memory_fabric.reviews r WHERE r.candidate_id = c.id);
INSERT INTO memory_fabric.promoted_memory (id, candidate_id, review_id, tenant_id, user_id, intent_scope, text, classification,
    source, tier, priority, embedding, embedding_model, content_hash, promoted_by, promoted_at, expires_at,
    retracted_at, retracted_by, retraction_reason)
SELECT 'pm_' || substr(c.id, 4), c.id, r.id, c.tenant_id, c.user_id, c.intent_id, c.text, c.classification, c.source,
       r.proposed_tier, r.priority_score, c.embedding, c.embedding_model, c.content_hash, 'auto',
       now() - (h % 86400) * interval '1 minute',
       CASE WHEN h % 20 = 0 THEN now() - interval '1 day'
            ELSE now() + CASE r.proposed_tier WHEN 'working' THEN interval '1 hour' WHEN 'episodic' THEN interval '30 days'
                                              WHEN 'semantic' THEN interval '365 days' END END,
       CASE WHEN h % 20 = 1 THEN now() END, CASE WHEN h % 20 = 1 THEN 'bench' END, CASE WHEN h % 20 = 1 THEN 'bench' END
FROM memory_fabric.candidates c
JOIN memory_fabric.reviews r ON r.candidate_id = c.id
CROSS JOIN LATERAL (SELECT abs(hashtext(c.id)) AS h) x
WHERE c.id LIKE 'mc\_bench\_%' AND NOT EXISTS (SELECT 1 FROM memory_fabric.promoted_memory p WHERE p.candidate_id = c.id);
