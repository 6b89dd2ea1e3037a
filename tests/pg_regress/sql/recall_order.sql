-- recall's ranking against its definition, over many scopes. Without a query, recall reads the
-- user's and the user-less memories from two indexes in (priority, promoted_at) order and merges
-- them; with a query it scores the scope, read from promoted_scope_vectors or, for rows too wide
-- for it (here every 7th, a 700-dimension model), through promoted_scope_wide. Both must return
-- exactly what the plain definition (SPEC: filters, then priority DESC, promoted_at DESC, id; or
-- the score) returns, ties included.
\set SHOW_CONTEXT never
SET client_min_messages = warning;
INSERT INTO memory_fabric.embedding_models (tenant_id, model, dimensions, registered_by)
    VALUES ('t_ord', 'ord-3', 3, current_user), ('t_ord', 'ord-wide', 700, current_user);
-- 600 memories written on the bulk path (the owner may insert; nothing may update), with many
-- exact ties: 3 priorities x 4 instants, 3 user scopes, 3 intent scopes, 3 classifications, some
-- retracted, some expired, some promoted after the as_of instant used below.
INSERT INTO memory_fabric.candidates (id, tenant_id, user_id, intent_id, source, text, classification, embedding,
                                      embedding_model, content_hash, policy_version)
SELECT format('mc_ord%s', lpad(i::text, 4, '0')), 't_ord', (ARRAY['u1', 'u2', NULL])[i % 3 + 1],
       (ARRAY['a', 'b', NULL])[(i / 3) % 3 + 1], 'agent', format('memory %s', i),
       (ARRAY['PUBLIC', 'INTERNAL', 'PII'])[(i / 9) % 3 + 1],
       CASE WHEN i % 7 = 0 THEN array_cat(ARRAY[sin(i), cos(i), sin(i * 7) + 1.5], array_fill(0.01::real, ARRAY[697]))::vector
            ELSE ARRAY[sin(i), cos(i), sin(i * 7) + 1.5]::real[]::vector END,
       CASE WHEN i % 7 = 0 THEN 'ord-wide' ELSE 'ord-3' END, md5(i::text) || md5(i::text), 1
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
SELECT count(*) AS memories, count(DISTINCT (priority, promoted_at)) AS distinct_keys,
       count(*) FILTER (WHERE memory_fabric._scope_fits(tenant_id, user_id, intent_scope, embedding_model, id,
                                                        classification, consent_id, embedding)) AS in_vectors_index
FROM memory_fabric.promoted_memory WHERE tenant_id = 't_ord';

-- The definition, written plainly.
CREATE FUNCTION pg_temp.expected(usr text, intent text, k integer, cls text[], at timestamptz, q vector, qm text)
RETURNS text[] LANGUAGE sql AS $$
    WITH s AS MATERIALIZED (SELECT memory_fabric._recall_settings('t_ord') AS w),
    live AS (
        SELECT m.*, CASE WHEN m.embedding_model = qm THEN 1 - (m.embedding <=> q) END AS rel FROM memory_fabric.promoted_memory m
        WHERE m.tenant_id = 't_ord' AND (m.user_id IS NULL OR m.user_id = usr)
          AND (m.intent_scope IS NULL OR m.intent_scope = intent) AND m.promoted_at <= at
          AND (m.retracted_at IS NULL OR m.retracted_at > at) AND (m.expires_at IS NULL OR m.expires_at > at)
          AND m.classification = ANY (cls)),
    scored AS (
        SELECT l.id, l.priority, l.promoted_at,
               CASE WHEN q IS NOT NULL THEN w[1] * coalesce(l.rel, 0)
                    + w[2] * power(0.5, greatest(extract(epoch FROM at - l.promoted_at), 0) / 86400.0 / w[4])
                    + w[3] * l.priority::double precision END AS sco, w[5] AS floor
        FROM live l, s)
    SELECT coalesce(array_agg(id ORDER BY sco DESC NULLS LAST, priority DESC, promoted_at DESC, id), '{}')
    FROM (SELECT * FROM scored WHERE sco IS NULL OR sco >= floor
          ORDER BY sco DESC NULLS LAST, priority DESC, promoted_at DESC, id LIMIT k) t
$$;
CREATE TEMP TABLE cases AS
SELECT usr, intent, k, cls, at, q, qm
FROM unnest(ARRAY['u1', 'u2', NULL, 'u9']) usr, unnest(ARRAY['a', 'b', NULL]) intent,
     unnest(ARRAY[1, 3, 8, 50, 1000]) k,
     (VALUES (ARRAY['PUBLIC']), (ARRAY['PUBLIC', 'INTERNAL', 'PII'])) c(cls),
     unnest(ARRAY[timestamptz '2026-01-12 00:00+00', timestamptz '2026-03-01 00:00+00']) at,
     (VALUES (NULL::vector, NULL), ('[0.3, -0.8, 1.9]'::vector, 'ord-3'),
             (array_cat(ARRAY[0.3, -0.8, 1.9]::real[], array_fill(0.01::real, ARRAY[697]))::vector, 'ord-wide')) v(q, qm);
CREATE TEMP TABLE results AS
SELECT c.*, ARRAY(SELECT r.memory_id FROM memory_fabric.recall('t_ord', c.intent, user_id => c.usr, max_recalls => c.k,
                                          classification_allowed => c.cls, as_of => c.at, query_embedding => c.q,
                                          query_embedding_model => c.qm) r) AS got,
       pg_temp.expected(c.usr, c.intent, c.k, c.cls, c.at, c.q, c.qm) AS want
FROM cases c;
SELECT count(*) AS cases, count(*) FILTER (WHERE got = want) AS same_as_definition,
       count(*) FILTER (WHERE cardinality(got) > 0) AS non_empty, count(*) FILTER (WHERE cardinality(got) = k) AS full,
       count(*) FILTER (WHERE qm = 'ord-3') AS with_query, count(*) FILTER (WHERE qm = 'ord-wide') AS with_wide_query
FROM results;
-- Any case that differs, to read when the count above is not all of them.
SELECT usr, intent, k, cls, at, qm, got, want FROM results WHERE got IS DISTINCT FROM want LIMIT 5;

-- With a query, recall scores exactly only the candidates _recall_candidates() finds from the
-- quantised embeddings (promoted_scope_sq8). A scope of 2,400 memories of a 64-dimension model
-- whose similarities to the query are close together, under every filter above, and priorities
-- and instants that tie: recall must still return what the definition returns, and the
-- candidates must be a small part of the scope (the count below is what keeps that honest).
INSERT INTO memory_fabric.embedding_models (tenant_id, model, dimensions) VALUES ('t_ord', 'ord-64', 64);
INSERT INTO memory_fabric.candidates (id, tenant_id, user_id, intent_id, source, text, classification, embedding,
                                      embedding_model, content_hash, policy_version)
SELECT format('mc_sq8%s', lpad(i::text, 4, '0')), 't_ord', (ARRAY['u1', NULL])[i % 2 + 1],
       (ARRAY['a', NULL])[(i / 2) % 2 + 1], 'agent', format('memory %s', i),
       (ARRAY['PUBLIC', 'INTERNAL', 'PII'])[(i / 4) % 3 + 1],
       (SELECT array_agg(1 + 0.05 * sin(i * 12.9898 + d * 78.233))::real[] FROM generate_series(1, 64) d)::vector,
       'ord-64', md5('sq8' || i) || md5(i::text), 1
FROM generate_series(1, 2400) i;
INSERT INTO memory_fabric.reviews (id, tenant_id, candidate_id, status, proposed_tier, priority_score, reviewer, policy_version)
SELECT 'rv_' || substr(c.id, 4), c.tenant_id, c.id, 'pending_promotion', 'semantic', 0.5, 'auto', 1
FROM memory_fabric.candidates c WHERE c.id LIKE 'mc\_sq8%';
INSERT INTO memory_fabric.promoted_memory (id, candidate_id, review_id, tenant_id, user_id, intent_scope, text, classification,
    source, tier, priority, embedding, embedding_model, content_hash, promoted_by, promoted_at, expires_at,
    retracted_at, retracted_by, retraction_reason)
SELECT 'pm_' || substr(c.id, 4), c.id, 'rv_' || substr(c.id, 4), c.tenant_id, c.user_id, c.intent_id, c.text,
       c.classification, c.source, 'semantic', (ARRAY[0.5, 0.7, 0.9])[(n / 12) % 3 + 1], c.embedding, c.embedding_model,
       c.content_hash, 'auto',
       timestamptz '2026-01-01 00:00+00' + ((n / 36) % 4) * interval '10 days',
       CASE WHEN n % 17 = 0 THEN timestamptz '2026-01-20 00:00+00' END,
       CASE WHEN n % 13 = 0 THEN timestamptz '2026-01-15 00:00+00' END,
       CASE WHEN n % 13 = 0 THEN 'test' END, CASE WHEN n % 13 = 0 THEN 'test' END
FROM memory_fabric.candidates c, LATERAL (SELECT substr(c.id, 7)::int AS n) x
WHERE c.id LIKE 'mc\_sq8%';
CREATE TEMP TABLE sq8_cases AS
SELECT usr, intent, k, cls, at, q, 'ord-64' AS qm
FROM unnest(ARRAY['u1', NULL]) usr, unnest(ARRAY['a', NULL]) intent, unnest(ARRAY[1, 8, 50]) k,
     (VALUES (ARRAY['PUBLIC']), (ARRAY['PUBLIC', 'INTERNAL', 'PII'])) c(cls),
     unnest(ARRAY[timestamptz '2026-01-12 00:00+00', timestamptz '2026-03-01 00:00+00']) at,
     (SELECT (SELECT array_agg(1 + 0.05 * cos(j * 3.7 + d * 1.3))::real[] FROM generate_series(1, 64) d)::vector AS q
      FROM generate_series(1, 3) j) v;
CREATE TEMP TABLE sq8_results AS
SELECT c.*, ARRAY(SELECT r.memory_id FROM memory_fabric.recall('t_ord', c.intent, user_id => c.usr, max_recalls => c.k,
                                          classification_allowed => c.cls, as_of => c.at, query_embedding => c.q,
                                          query_embedding_model => c.qm) r) AS got,
       pg_temp.expected(c.usr, c.intent, c.k, c.cls, c.at, c.q, c.qm) AS want,
       cardinality(memory_fabric._recall_candidates('t_ord', c.usr, c.intent, c.cls, c.at,
                   memory_fabric._recall_settings('t_ord'), c.k, c.qm, c.q::real[], NULL, NULL, NULL, NULL, NULL, NULL))
           AS candidates,
       (SELECT count(*) FROM memory_fabric.promoted_memory m WHERE m.tenant_id = 't_ord'
          AND coalesce(m.user_id = c.usr, m.user_id IS NULL) AND coalesce(m.intent_scope = c.intent, m.intent_scope IS NULL)
          AND m.promoted_at <= c.at AND (m.retracted_at IS NULL OR m.retracted_at > c.at)
          AND (m.expires_at IS NULL OR m.expires_at > c.at) AND m.classification = ANY (c.cls)) AS visible
FROM sq8_cases c;
SELECT count(*) AS cases, count(*) FILTER (WHERE got = want) AS same_as_definition,
       count(*) FILTER (WHERE cardinality(got) = k) AS full,
       count(*) FILTER (WHERE k <= 8) AS up_to_8,
       count(*) FILTER (WHERE k <= 8 AND candidates >= k AND candidates * 4 < visible) AS up_to_8_pruned_to_a_quarter,
       min(visible) AS fewest_visible, max(visible) AS most_visible
FROM sq8_results;
SELECT usr, intent, k, cls, at, got, want, candidates, visible FROM sq8_results WHERE got IS DISTINCT FROM want LIMIT 5;
SELECT usr, intent, k, cls, at, candidates, visible FROM sq8_results
WHERE k <= 8 AND (candidates * 4 >= visible OR candidates < k) LIMIT 5;

-- Review's exact search compares only the memories _nearest_candidates() keeps, by id: their K
-- (5) nearest must be the scope's 5 nearest (the same user, cross-intent or of the intent, live,
-- of the model), for queries near none of them and for copies of some of them.
CREATE TEMP TABLE nearest AS
SELECT u, i, q,
       ARRAY(SELECT m.id FROM unnest(memory_fabric._nearest_candidates('t_ord', u, i, 'ord-64', q::real[], 5)) k(id)
             JOIN memory_fabric.promoted_memory m ON m.id = k.id
             WHERE m.tenant_id = 't_ord' AND m.user_id IS NOT DISTINCT FROM u AND coalesce(m.intent_scope = i, m.intent_scope IS NULL)
               AND m.embedding_model = 'ord-64' AND m.retracted_at IS NULL
               AND (m.expires_at IS NULL OR m.expires_at > clock_timestamp())
             ORDER BY m.embedding <=> q, m.id LIMIT 5) AS got,
       ARRAY(SELECT m.id FROM memory_fabric.promoted_memory m
             WHERE m.tenant_id = 't_ord' AND m.user_id IS NOT DISTINCT FROM u AND coalesce(m.intent_scope = i, m.intent_scope IS NULL)
               AND m.embedding_model = 'ord-64' AND m.retracted_at IS NULL
               AND (m.expires_at IS NULL OR m.expires_at > clock_timestamp())
             ORDER BY m.embedding <=> q, m.id LIMIT 5) AS want,
       cardinality(memory_fabric._nearest_candidates('t_ord', u, i, 'ord-64', q::real[], 5)) AS kept
FROM unnest(ARRAY['u1', NULL]) u, unnest(ARRAY['a', NULL]) i,
     (SELECT DISTINCT q FROM sq8_cases
      UNION ALL SELECT embedding FROM memory_fabric.promoted_memory WHERE id IN ('pm_sq80101', 'pm_sq80202', 'pm_sq80303')) v;
SELECT count(*) AS searches, count(*) FILTER (WHERE got = want) AS same_nearest,
       count(*) FILTER (WHERE cardinality(got) = 5) AS five_found, max(kept) AS most_kept
FROM nearest;
SELECT u, i, got, want, kept FROM nearest WHERE got IS DISTINCT FROM want LIMIT 5;

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


-- Recall with a query and review's exact search read the rows their candidates functions keep by
-- id, and the rows too wide for promoted_scope_sq8 through promoted_scope_wide.
EXPLAIN (COSTS OFF)
SELECT p.id, p.priority, p.promoted_at, 1 - (p.embedding <=> '[0.3, -0.8, 1.9]')
FROM unnest(memory_fabric._nearest_candidates('t_ord', 'u1', NULL, 'ord-3', '{0.3, -0.8, 1.9}', 5)) k(id)
CROSS JOIN LATERAL (SELECT m.* FROM memory_fabric.promoted_memory m WHERE m.id = k.id OFFSET 0) p
WHERE p.tenant_id = 't_ord' AND p.user_id = 'u1' AND p.intent_scope IS NULL AND p.classification = ANY ('{PUBLIC}')
UNION ALL
SELECT p.id, p.priority, p.promoted_at, NULL FROM memory_fabric.promoted_memory p
WHERE p.tenant_id = 't_ord' AND p.user_id = 'u1' AND p.intent_scope IS NULL AND p.classification = ANY ('{PUBLIC}')
  AND NOT memory_fabric._scope_fits(p.tenant_id, p.user_id, p.intent_scope, p.embedding_model, p.id, p.classification,
                                    p.consent_id, p.embedding);
-- Review's exact search reads the scope's live rows, their quantised embeddings, index-only from
-- the smaller promoted_scope_bits (which recall above cannot use: it holds no retracted rows).
EXPLAIN (COSTS OFF)
SELECT p.id, p.embedding_bits <~> binary_quantize('[0.3, -0.8, 1.9]'::vector) FROM memory_fabric.promoted_memory p
WHERE p.tenant_id = 't_ord' AND p.user_id = 'u1' AND p.intent_scope IS NULL AND p.embedding_model = 'ord-3'
  AND p.retracted_at IS NULL AND (p.expires_at IS NULL OR p.expires_at > clock_timestamp())
  AND memory_fabric._scope_fits(p.tenant_id, p.user_id, p.intent_scope, p.embedding_model, p.id, p.classification,
                                p.consent_id, p.embedding);
-- Review's retracted neighbours: read index-only from promoted_retracted, and the rows too wide
-- for it through promoted_retracted_wide.
EXPLAIN (COSTS OFF)
SELECT m.id, m.content_hash, m.embedding_model, m.embedding FROM memory_fabric.promoted_memory m
WHERE m.tenant_id = 't_ord' AND m.user_id = 'u1' AND m.retracted_at IS NOT NULL AND m.erased_at IS NULL
  AND memory_fabric._scope_fits(m.tenant_id, m.user_id, m.content_hash, m.embedding_model, m.id, '', NULL, m.embedding)
UNION ALL
SELECT m.id, m.content_hash, m.embedding_model, m.embedding FROM memory_fabric.promoted_memory m
WHERE m.tenant_id = 't_ord' AND m.user_id = 'u1' AND m.retracted_at IS NOT NULL AND m.erased_at IS NULL
  AND NOT memory_fabric._scope_fits(m.tenant_id, m.user_id, m.content_hash, m.embedding_model, m.id, '', NULL, m.embedding);

-- The widest rows promoted_scope_vectors takes: counted bytes at exactly 2400 are stored, one byte
-- more goes to promoted_scope_wide, and no insert may fail on the btree entry limit (2704 bytes).
-- Rows a and b put the bytes in a 500-dimension embedding and a long user id; rows c and d spread
-- them over six identifiers of about 200 bytes each (each then has a 4-byte header and padding).
CREATE TEMP TABLE fit AS
SELECT f.*, 'mc_' || substr(f.id, 4) AS cand
FROM (VALUES
    ('a', 't_fit', repeat('u', 374), NULL, 'fit-500', 'PUBLIC', 500, 'pm_fit_a'),
    ('b', 't_fit', repeat('u', 375), NULL, 'fit-500', 'PUBLIC', 500, 'pm_fit_b'),
    ('c', 't_fit' || repeat('t', 195), repeat('u', 200), repeat('i', 200), 'fit-' || repeat('m', 196),
     repeat('C', 200), 300, 'pm_fit_c' || repeat('x', 192)),
    ('d', 't_fit' || repeat('t', 195), repeat('u', 200), repeat('i', 200), 'fit-' || repeat('m', 196),
     repeat('C', 200), 300, 'pm_fit_d' || repeat('x', 193))) f(n, tenant, usr, intent, model, cls, dims, id);
INSERT INTO memory_fabric.candidates (id, tenant_id, user_id, intent_id, source, text, classification, embedding,
                                      embedding_model, content_hash, policy_version)
SELECT f.cand, f.tenant, f.usr, f.intent, 'agent', 'fit ' || f.n, f.cls, array_fill(0.5::real, ARRAY[f.dims])::vector,
       f.model, md5(f.n) || md5(f.n), 1
FROM fit f;
INSERT INTO memory_fabric.reviews (id, tenant_id, candidate_id, status, proposed_tier, priority_score, reviewer, policy_version)
SELECT 'rv_' || substr(f.cand, 4), f.tenant, f.cand, 'pending_promotion', 'semantic', 0.5, 'auto', 1 FROM fit f;
INSERT INTO memory_fabric.promoted_memory (id, candidate_id, review_id, tenant_id, user_id, intent_scope, text,
    classification, source, tier, priority, embedding, embedding_model, content_hash, promoted_by)
SELECT f.id, c.id, 'rv_' || substr(c.id, 4), c.tenant_id, c.user_id, c.intent_id, c.text, c.classification,
       c.source, 'semantic', 0.5, c.embedding, c.embedding_model, c.content_hash, 'auto'
FROM fit f JOIN memory_fabric.candidates c ON c.id = f.cand;
SELECT f.n, octet_length(m.tenant_id) + octet_length(m.user_id) + coalesce(octet_length(m.intent_scope), 0)
           + octet_length(m.embedding_model) + octet_length(m.id) + octet_length(m.classification)
           + 4 * vector_dims(m.embedding) AS counted_bytes,
       memory_fabric._scope_fits(m.tenant_id, m.user_id, m.intent_scope, m.embedding_model, m.id, m.classification,
                                 m.consent_id, m.embedding) AS fits
FROM fit f JOIN memory_fabric.promoted_memory m ON m.id = f.id ORDER BY f.n;
-- each is recalled with its relevance, from whichever index holds it (c and d share a scope)
SELECT f.n, f.id = ANY (r.ids) AS found, r.relevances
FROM fit f, LATERAL (SELECT array_agg(x.memory_id) AS ids, array_agg(round(x.relevance::numeric, 6)) AS relevances
                     FROM memory_fabric.recall(f.tenant, f.intent, user_id => f.usr, classification_allowed => ARRAY[f.cls],
                                               query_embedding => array_fill(0.5::real, ARRAY[f.dims])::vector,
                                               query_embedding_model => f.model) x) r
ORDER BY f.n;

-- Review's exact search reads the same two indexes: a near-duplicate of a wide memory (700
-- dimensions, through promoted_scope_wide) and of a narrow one are both found.
SELECT status, duplicate_of_id FROM memory_fabric.review_candidate((memory_fabric.capture_memory('t_ord',
    'memory 7', 'agent', 'PUBLIC', user_id => 'u2', intent_id => 'b',
    embedding => (SELECT embedding FROM memory_fabric.candidates WHERE id = 'mc_ord0007'), embedding_model => 'ord-wide')).id);
SELECT status, duplicate_of_id FROM memory_fabric.review_candidate((memory_fabric.capture_memory('t_ord',
    'memory 8', 'agent', 'PUBLIC', intent_id => 'b',
    embedding => (SELECT embedding FROM memory_fabric.candidates WHERE id = 'mc_ord0008'), embedding_model => 'ord-3')).id);
