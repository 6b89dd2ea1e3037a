-- recall@8 of recall() with a query vector: for probes of every size of tenant (100 in probe
-- order, and 50 of the three largest tenants), the share of the top 8 by exact scoring of the
-- scope, written out here from the rules (README's recall section), that recall() returned.
-- Run as the owner; the weights are the tenant's policy's.
WITH big AS (
    SELECT tenant_id FROM memory_fabric.promoted_memory GROUP BY tenant_id ORDER BY count(*) DESC LIMIT 3
), probes AS (
    (SELECT p.* FROM bench.probes p WHERE p.kind = 'fresh' ORDER BY p.id LIMIT 100)
    UNION ALL
    (SELECT p.* FROM bench.probes p JOIN big USING (tenant_id) WHERE p.kind = 'fresh' ORDER BY p.id LIMIT 50)
), scored AS (
    SELECT q.id AS probe, got.ids AS got, ex.ids AS want
    FROM probes q
    CROSS JOIN LATERAL (SELECT memory_fabric._recall_settings(q.tenant_id) AS s, pg_catalog.clock_timestamp() AS t) w
    CROSS JOIN LATERAL (
        SELECT coalesce(array_agg(r.memory_id), '{}') AS ids
        FROM memory_fabric.recall(q.tenant_id, q.intent_id, user_id => q.user_id,
                                  classification_allowed => ARRAY['PUBLIC', 'INTERNAL', 'PII'],
                                  query_embedding => q.embedding::real[]::vector, query_embedding_model => 'bench-384') r) got
    CROSS JOIN LATERAL (
        SELECT coalesce(array_agg(x.id), '{}') AS ids FROM (
            SELECT m.id,
                   w.s[1] * coalesce(CASE WHEN m.embedding_model = 'bench-384' THEN 1 - (m.embedding <=> q.embedding::real[]::vector) END, 0)
                   + w.s[2] * power(0.5, greatest(extract(epoch FROM w.t - m.promoted_at), 0) / 86400.0 / w.s[4])
                   + w.s[3] * m.priority::float8 AS sco
            FROM memory_fabric.promoted_memory m
            WHERE m.tenant_id = q.tenant_id
              AND (m.user_id = q.user_id OR m.user_id IS NULL)
              AND (m.intent_scope IS NULL OR m.intent_scope = q.intent_id)
              AND m.retracted_at IS NULL AND (m.expires_at IS NULL OR m.expires_at > w.t)
              AND m.classification IN ('PUBLIC', 'INTERNAL', 'PII')
              AND (m.consent_id IS NULL OR EXISTS (SELECT 1 FROM memory_fabric.consents k WHERE k.id = m.consent_id
                   AND k.revoked_at IS NULL AND (k.valid_until IS NULL OR k.valid_until > w.t)))
            ORDER BY sco DESC LIMIT 8) x
        WHERE x.sco >= w.s[5]) ex
)
SELECT count(*) AS probes,
       round(coalesce(sum((SELECT count(*) FROM unnest(want) u WHERE u = ANY (got)))::numeric
             / nullif(sum(cardinality(want)), 0), 1), 4) AS recall_at_8
FROM scored;
