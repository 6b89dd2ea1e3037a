-- recall's ranking against its definition, over many scopes. Without a query, recall reads the
-- user's and the user-less memories from two indexes in (priority, promoted_at) order and merges
-- them; with a query it scores the scope. Both must return exactly what the plain definition
-- (SPEC: filters, then priority DESC, promoted_at DESC, id; or the score) returns, ties included.
\set SHOW_CONTEXT never
SET client_min_messages = warning;
INSERT INTO memory_fabric.embedding_models (tenant_id, model, dimensions) VALUES ('t_ord', 'ord-3', 3);
-- 600 memories written on the bulk path (the owner may insert; nothing may update), with many
-- exact ties: 3 priorities x 4 instants, 3 user scopes, 3 intent scopes, 3 classifications, some
-- retracted, some expired, some promoted after the as_of instant used below.
INSERT INTO memory_fabric.candidates (id, tenant_id, user_id, intent_id, source, text, classification, embedding,
                                      embedding_model, content_hash, policy_version)
SELECT format('mc_ord%s', lpad(i::text, 4, '0')), 't_ord', (ARRAY['u1', 'u2', NULL])[i % 3 + 1],
       (ARRAY['a', 'b', NULL])[(i / 3) % 3 + 1], 'agent', format('memory %s', i),
       (ARRAY['PUBLIC', 'INTERNAL', 'PII'])[(i / 9) % 3 + 1],
       ARRAY[sin(i), cos(i), sin(i * 7) + 1.5]::real[]::vector, 'ord-3', md5(i::text) || md5(i::text), 1
FROM generate_series(1, 600) i;
INSERT INTO memory_fabric.reviews (id, tenant_id, candidate_id, status, proposed_tier, priority_score, reviewer, policy_version)
SELECT 'rv_' || substr(c.id, 4), c.tenant_id, c.id, 'pending_promotion', 'semantic', 0.5, 'auto', 1
FROM memory_fabric.candidates c WHERE c.tenant_id = 't_ord';
INSERT INTO memory_fabric.promoted_memory (id, candidate_id, review_id, tenant_id, user_id, intent_scope, text, classification,
    source, tier, priority, embedding, embedding_model, content_hash, promoted_by, promoted_at, expires_at,
    retracted_at, retracted_by, retraction_reason)
SELECT 'pm_' || substr(c.id, 4), c.id, 'rv_' || substr(c.id, 4), c.tenant_id, c.user_id, c.intent_id, c.text,
       c.classification, c.source, 'semantic', (ARRAY[0.5, 0.7, 0.9])[(n / 27) % 3 + 1], c.embedding, c.embedding_model,
       c.content_hash, 'auto',
       timestamptz '2026-01-01 00:00+00' + ((n / 81) % 4) * interval '10 days',
       CASE WHEN n % 17 = 0 THEN timestamptz '2026-01-20 00:00+00' END,
       CASE WHEN n % 13 = 0 THEN timestamptz '2026-01-15 00:00+00' END,
       CASE WHEN n % 13 = 0 THEN 'test' END, CASE WHEN n % 13 = 0 THEN 'test' END
FROM memory_fabric.candidates c, LATERAL (SELECT substr(c.id, 7)::int AS n) x
WHERE c.tenant_id = 't_ord';
SELECT count(*) AS memories, count(DISTINCT (priority, promoted_at)) AS distinct_keys
FROM memory_fabric.promoted_memory WHERE tenant_id = 't_ord';

-- The definition, written plainly.
CREATE FUNCTION pg_temp.expected(usr text, intent text, k integer, cls text[], at timestamptz, q vector)
RETURNS text[] LANGUAGE sql AS $$
    WITH s AS MATERIALIZED (SELECT memory_fabric._recall_settings('t_ord') AS w),
    live AS (
        SELECT m.*, 1 - (m.embedding <=> q) AS rel FROM memory_fabric.promoted_memory m
        WHERE m.tenant_id = 't_ord' AND (m.user_id IS NULL OR m.user_id = usr)
          AND (m.intent_scope IS NULL OR m.intent_scope = intent) AND m.promoted_at <= at
          AND (m.retracted_at IS NULL OR m.retracted_at > at) AND (m.expires_at IS NULL OR m.expires_at > at)
          AND m.classification = ANY (cls)),
    scored AS (
        SELECT l.id, l.priority, l.promoted_at,
               CASE WHEN q IS NOT NULL THEN w[1] * l.rel
                    + w[2] * power(0.5, greatest(extract(epoch FROM at - l.promoted_at), 0) / 86400.0 / w[4])
                    + w[3] * l.priority::double precision END AS sco, w[5] AS floor
        FROM live l, s)
    SELECT coalesce(array_agg(id ORDER BY sco DESC NULLS LAST, priority DESC, promoted_at DESC, id), '{}')
    FROM (SELECT * FROM scored WHERE sco IS NULL OR sco >= floor
          ORDER BY sco DESC NULLS LAST, priority DESC, promoted_at DESC, id LIMIT k) t
$$;
CREATE TEMP TABLE cases AS
SELECT usr, intent, k, cls, at, q
FROM unnest(ARRAY['u1', 'u2', NULL, 'u9']) usr, unnest(ARRAY['a', 'b', NULL]) intent,
     unnest(ARRAY[1, 3, 8, 50, 1000]) k,
     (VALUES (ARRAY['PUBLIC']), (ARRAY['PUBLIC', 'INTERNAL', 'PII'])) c(cls),
     unnest(ARRAY[timestamptz '2026-01-12 00:00+00', timestamptz '2026-03-01 00:00+00']) at,
     (VALUES (NULL::vector), ('[0.3, -0.8, 1.9]'::vector)) v(q);
CREATE TEMP TABLE results AS
SELECT c.*, ARRAY(SELECT r.memory_id FROM memory_fabric.recall('t_ord', c.intent, user_id => c.usr, max_recalls => c.k,
                                          classification_allowed => c.cls, as_of => c.at, query_embedding => c.q,
                                          query_embedding_model => CASE WHEN c.q IS NOT NULL THEN 'ord-3' END) r) AS got,
       pg_temp.expected(c.usr, c.intent, c.k, c.cls, c.at, c.q) AS want
FROM cases c;
SELECT count(*) AS cases, count(*) FILTER (WHERE got = want) AS same_as_definition,
       count(*) FILTER (WHERE cardinality(got) > 0) AS non_empty, count(*) FILTER (WHERE cardinality(got) = k) AS full,
       count(*) FILTER (WHERE q IS NOT NULL) AS with_query
FROM results;
-- Any case that differs, to read when the count above is not all of them.
SELECT usr, intent, k, cls, at, q IS NOT NULL AS has_query, got, want FROM results WHERE got IS DISTINCT FROM want LIMIT 5;

-- The plan recall uses without a query: both halves in index order, nothing sorted whole.
EXPLAIN (COSTS OFF)
SELECT u.id FROM ((SELECT m.id, m.priority, m.promoted_at FROM memory_fabric.promoted_memory m
                   WHERE m.tenant_id = 't_ord' AND m.user_id = 'u1' ORDER BY m.priority DESC, m.promoted_at DESC
                   FETCH FIRST 8 ROWS WITH TIES)
                  UNION ALL
                  (SELECT m.id, m.priority, m.promoted_at FROM memory_fabric.promoted_memory m
                   WHERE m.tenant_id = 't_ord' AND m.user_id IS NULL ORDER BY m.priority DESC, m.promoted_at DESC
                   FETCH FIRST 8 ROWS WITH TIES)) u
ORDER BY u.priority DESC, u.promoted_at DESC, u.id LIMIT 8;

