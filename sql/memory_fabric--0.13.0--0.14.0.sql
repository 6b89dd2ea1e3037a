-- memory_fabric 0.13.0 → 0.14.0: recall with a query vector and review's exact search compare only
-- the memories that could be among their results.
-- * promoted_scope_sq8 holds, for the rows whose values fit a btree entry (_scope_fits), the
--   embedding quantised to a byte a dimension with the bounds of its rounding
--   (memory_fabric._embedding_sq8()).
-- * memory_fabric._recall_candidates() reads a scope's entries of it and bounds each memory's
--   score; recall() scores exactly, with the vectors, only the memories whose upper bound reaches
--   the max_recalls-th best lower bound.
-- * memory_fabric._nearest_candidates() does the same for review's exact search (the K nearest
--   by similarity), and promoted_scope_vectors, which held every fitting row's full vector and
--   which nothing reads any more, is dropped.
-- Building the index reads every promoted memory once (10 s for the update of a database of 1M
-- memories on the machine BENCHMARKS.md was measured on).
-- Its statements are the install script's own (the three new functions as pgrx declares them,
-- the index, recall() in full); tests/upgrade/run.sh checks that it ends with the catalog of a
-- fresh install.
\echo Use "ALTER EXTENSION memory_fabric UPDATE TO '0.14.0'" to load this file. \quit

-- As in the install script, every name is resolved under pg_catalog alone.
SET LOCAL search_path = pg_catalog, pg_temp;

CREATE FUNCTION memory_fabric."_embedding_sq8"(
	"embedding" real[] /* pgrx :: Array < '_, f32 > */
) RETURNS bytea /* :: std :: option :: Option < Vec < u8 > > */
IMMUTABLE STRICT PARALLEL SAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_embedding_sq8_wrapper';
-- The scopes of the promoted memories whose values fit a btree entry (_scope_fits; sql/schema.sql),
-- with each embedding quantised to a byte a dimension and the bounds of its rounding
-- (_embedding_sq8) instead of four bytes a dimension. Recall with a query vector
-- (_recall_candidates(), src/api/recall.rs) and review's exact search (_nearest_candidates(),
-- src/pipeline/review.rs) read a scope's entries and bound every memory's similarity, then read
-- only the memories that could be among their results by id. Here rather than in sql/schema.sql
-- because its key calls a function of this library, created after schema.sql.
CREATE INDEX promoted_scope_sq8 ON memory_fabric.promoted_memory
    (tenant_id, user_id, intent_scope, embedding_model, memory_fabric._embedding_sq8(embedding::real[]))
    INCLUDE (retracted_at, expires_at, promoted_at, classification, consent_id, priority, id)
    WHERE memory_fabric._scope_fits(tenant_id, user_id, intent_scope, embedding_model, id, classification,
                                    consent_id, embedding);
REVOKE ALL ON FUNCTION memory_fabric._embedding_sq8 FROM PUBLIC;

CREATE FUNCTION memory_fabric."_recall_candidates"(
	"tenant_id" TEXT, /* & str */
	"user_id" TEXT, /* Option < & str > */
	"intent_id" TEXT, /* Option < & str > */
	"classifications" TEXT[], /* Vec < Option < String > > */
	"at" timestamp with time zone, /* TimestampWithTimeZone */
	"s" double precision[], /* Vec < f64 > */
	"max_recalls" INT, /* i32 */
	"model_1" TEXT, /* Option < & str > */
	"vector_1" real[], /* :: std :: option :: Option < Vec < f32 > > */
	"model_2" TEXT, /* Option < & str > */
	"vector_2" real[], /* :: std :: option :: Option < Vec < f32 > > */
	"model_3" TEXT, /* Option < & str > */
	"vector_3" real[], /* :: std :: option :: Option < Vec < f32 > > */
	"model_4" TEXT, /* Option < & str > */
	"vector_4" real[] /* :: std :: option :: Option < Vec < f32 > > */
) RETURNS TEXT[] /* Vec < String > */
STABLE PARALLEL RESTRICTED
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_recall_candidates_wrapper';

-- Review's exact search reads the candidates of promoted_scope_sq8 too, and nothing reads
-- promoted_scope_vectors any more.
CREATE FUNCTION memory_fabric."_nearest_candidates"(
	"tenant_id" TEXT, /* & str */
	"user_id" TEXT, /* Option < & str > */
	"intent_id" TEXT, /* Option < & str > */
	"model" TEXT, /* & str */
	"embedding" real[], /* Vec < f32 > */
	"k" INT /* i32 */
) RETURNS TEXT[] /* Vec < String > */
STABLE PARALLEL RESTRICTED
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_nearest_candidates_wrapper';
REVOKE ALL ON FUNCTION memory_fabric._nearest_candidates FROM PUBLIC;
DROP INDEX memory_fabric.promoted_scope_vectors;
COMMENT ON FUNCTION memory_fabric._scope_fits IS
    'Whether a promoted memory''s scope columns and embedding fit the covering scope indexes (promoted_scope_wide keys the rest)';

-- recall() scores only the candidates of the rows that fit promoted_scope_vectors.
SET LOCAL client_min_messages = warning;  -- the %TYPE notices
CREATE OR REPLACE FUNCTION memory_fabric.recall(
    tenant_id              text,
    intent_id              text,
    user_id                text        DEFAULT NULL,
    max_recalls            integer     DEFAULT 8,
    classification_allowed text[]      DEFAULT ARRAY['PUBLIC', 'INTERNAL'],
    query_text             text        DEFAULT NULL,
    query_embedding        memory_fabric.promoted_memory.embedding%TYPE DEFAULT NULL,
    as_of                  timestamptz DEFAULT NULL,
    query_embedding_model  text        DEFAULT NULL)
RETURNS TABLE (
    memory_id text, text text, tier text, priority numeric, score double precision,
    relevance double precision, recency double precision, importance double precision,
    low_confidence boolean, in_contradiction boolean, contradicts text[],
    candidate_id text, evidence_refs jsonb, source text, captured_at timestamptz, consent_id text,
    classification text, user_scope text, intent_scope text, entity text, predicate text, value jsonb,
    write_class text, confidence double precision, promoted_at timestamptz, expires_at timestamptz,
    embedding_model text)
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
DECLARE
    t         timestamptz := coalesce(recall.as_of, pg_catalog.clock_timestamp());
    s         double precision[];
    has_query boolean := recall.query_text IS NOT NULL OR recall.query_embedding IS NOT NULL;
    dims      integer;
    want_dims integer;
    -- the query text's vectors, each with its model (NULL: not embedded with that one)
    q_b_model text;
    q_b       memory_fabric.promoted_memory.embedding%TYPE;
    q_s_model text;
    q_s       memory_fabric.promoted_memory.embedding%TYPE;
    q_f_model text;
    q_f       memory_fabric.promoted_memory.embedding%TYPE;
    top_ids   text[];
    top_rel   double precision[];
    top_sco   double precision[];
BEGIN
    IF recall.tenant_id IS NULL OR pg_catalog.btrim(recall.tenant_id) = '' THEN
        RAISE EXCEPTION 'tenant_id must not be null or empty' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF recall.max_recalls IS NULL OR recall.max_recalls < 1 OR recall.max_recalls > 1000 THEN
        RAISE EXCEPTION 'max_recalls must be between 1 and 1000' USING ERRCODE = 'invalid_parameter_value',
            DETAIL = format('%s was given.', coalesce(recall.max_recalls::text, 'NULL'));
    END IF;
    IF recall.classification_allowed IS NULL THEN
        RAISE EXCEPTION 'classification_allowed must not be null' USING ERRCODE = 'invalid_parameter_value',
            HINT = 'Pass an empty array to recall nothing, or the classifications this run may see.';
    END IF;
    IF recall.query_text IS NOT NULL AND pg_catalog.btrim(recall.query_text) = '' THEN
        RAISE EXCEPTION 'query_text must not be empty' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- the caller may act for the tenant (42501 otherwise), checked before anything is read; then
    -- the tenant's weights
    s := memory_fabric._recall_settings(recall.tenant_id);
    IF recall.query_embedding IS NOT NULL THEN
        IF recall.query_embedding_model IS NULL THEN
            RAISE EXCEPTION 'query_embedding requires query_embedding_model' USING ERRCODE = 'invalid_parameter_value',
                DETAIL = 'Vectors are only compared with vectors of the same model.';
        END IF;
        dims := pg_catalog.array_length(recall.query_embedding::real[], 1);
        want_dims := memory_fabric._query_dimensions(recall.tenant_id, recall.query_embedding_model);
        IF want_dims IS NOT NULL AND want_dims <> dims THEN
            RAISE EXCEPTION 'query_embedding has % dimensions, expected %', dims, want_dims
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
    END IF;

    IF recall.query_text IS NOT NULL THEN
        SELECT e.builtin_model, e.builtin, e.semantic_model, e.semantic, e.function_model, e.function_embedding
          INTO q_b_model, q_b, q_s_model, q_s, q_f_model, q_f
        FROM memory_fabric._embed_query(recall.tenant_id, recall.query_text) e;
    END IF;

    IF NOT has_query THEN
        -- Without a query the order is priority DESC, promoted_at DESC, id: the user's memories
        -- and the user-less ones are read in that order from promoted_recall and
        -- promoted_recall_userless, each stopping after max_recalls rows (WITH TIES, so the id
        -- tie-break stays exact), and merged. This reads a few index entries whatever the size
        -- of the scope.
        SELECT coalesce(array_agg(x.id ORDER BY x.priority DESC, x.promoted_at DESC, x.id), '{}') INTO top_ids
        FROM (SELECT u.id, u.priority, u.promoted_at
              FROM ((SELECT m.id, m.priority, m.promoted_at
                     FROM memory_fabric._visible_memories(recall.tenant_id, recall.user_id, recall.intent_id,
                                                          recall.classification_allowed, t) m
                     WHERE m.user_id = recall.user_id
                     ORDER BY m.priority DESC, m.promoted_at DESC FETCH FIRST recall.max_recalls ROWS WITH TIES)
                    UNION ALL
                    (SELECT m.id, m.priority, m.promoted_at
                     FROM memory_fabric._visible_memories(recall.tenant_id, recall.user_id, recall.intent_id,
                                                          recall.classification_allowed, t) m
                     WHERE m.user_id IS NULL
                     ORDER BY m.priority DESC, m.promoted_at DESC FETCH FIRST recall.max_recalls ROWS WITH TIES)) u
              ORDER BY u.priority DESC, u.promoted_at DESC, u.id
              LIMIT recall.max_recalls) x;
    ELSE
        -- With a query every visible row in scope is scored: the user's and the user-less rows,
        -- cross-intent or of the intent. Of the rows that fit promoted_scope_sq8, only those
        -- _recall_candidates() finds could be among the first max_recalls (it bounds their
        -- scores from promoted_scope_sq8, a byte a dimension; it runs in this statement, so with
        -- its snapshot); they are read by id (OFFSET 0: one primary-key lookup each, never a scan
        -- of the scope joined to them). The rows too wide for it are read through
        -- promoted_scope_wide, in four index ranges. The similarity is computed once per row
        -- (OFFSET 0 keeps the planner from copying it into the score), and the score floor is
        -- applied to the top rows only, which is the same: the rows are ordered by score first.
        -- (Scoring candidates instead, the first rows by priority and the nearest by an HNSW
        -- search within the scope filters, was slower on 1M memories: the filtered index search
        -- alone took 54 ms a call, measured with pg_stat_statements.)
        SELECT coalesce(array_agg(x.id ORDER BY x.sco DESC, x.priority DESC, x.promoted_at DESC, x.id), '{}'),
               array_agg(x.rel ORDER BY x.sco DESC, x.priority DESC, x.promoted_at DESC, x.id),
               array_agg(x.sco ORDER BY x.sco DESC, x.priority DESC, x.promoted_at DESC, x.id)
          INTO top_ids, top_rel, top_sco
        FROM (SELECT y.* FROM (
              SELECT sc.id, sc.priority, sc.promoted_at, sc.rel,
                     s[1] * coalesce(sc.rel, 0)
                     + s[2] * pg_catalog.power(0.5, greatest(pg_catalog.date_part('epoch', t - sc.promoted_at), 0) / 86400.0 / s[4])
                     + s[3] * sc.priority::double precision AS sco
              FROM (SELECT m.id, m.priority, m.promoted_at,
                           CASE WHEN m.embedding IS NULL THEN NULL
                                WHEN m.embedding_model = q_b_model THEN memory_fabric._cosine_similarity(m.embedding, q_b)
                                WHEN m.embedding_model = q_s_model THEN memory_fabric._cosine_similarity(m.embedding, q_s)
                                WHEN m.embedding_model = q_f_model THEN memory_fabric._cosine_similarity(m.embedding, q_f)
                                WHEN m.embedding_model = recall.query_embedding_model
                                    THEN memory_fabric._cosine_similarity(m.embedding, recall.query_embedding)
                           END AS rel
                    FROM (
                      SELECT p.id, p.priority, p.promoted_at, p.embedding, p.embedding_model
                      FROM pg_catalog.unnest(memory_fabric._recall_candidates(recall.tenant_id, recall.user_id, recall.intent_id,
                               recall.classification_allowed, t, s, recall.max_recalls, q_b_model, q_b::real[],
                               q_s_model, q_s::real[], q_f_model, q_f::real[],
                               recall.query_embedding_model, recall.query_embedding::real[])) AS k(id)
                      CROSS JOIN LATERAL (SELECT m.id FROM memory_fabric.promoted_memory m WHERE m.id = k.id OFFSET 0) b
                      JOIN memory_fabric._visible_memories(recall.tenant_id, recall.user_id, recall.intent_id,
                                                           recall.classification_allowed, t) p ON p.id = b.id
                      UNION ALL
                      SELECT p.id, p.priority, p.promoted_at, p.embedding, p.embedding_model
                      FROM memory_fabric._visible_memories(recall.tenant_id, recall.user_id, recall.intent_id,
                                                           recall.classification_allowed, t) p
                      WHERE p.user_id = recall.user_id AND p.intent_scope IS NULL
                        AND NOT memory_fabric._scope_fits(p.tenant_id, p.user_id, p.intent_scope, p.embedding_model,
                                                    p.id, p.classification, p.consent_id, p.embedding)
                      UNION ALL
                      SELECT p.id, p.priority, p.promoted_at, p.embedding, p.embedding_model
                      FROM memory_fabric._visible_memories(recall.tenant_id, recall.user_id, recall.intent_id,
                                                           recall.classification_allowed, t) p
                      WHERE p.user_id = recall.user_id AND p.intent_scope = recall.intent_id
                        AND NOT memory_fabric._scope_fits(p.tenant_id, p.user_id, p.intent_scope, p.embedding_model,
                                                    p.id, p.classification, p.consent_id, p.embedding)
                      UNION ALL
                      SELECT p.id, p.priority, p.promoted_at, p.embedding, p.embedding_model
                      FROM memory_fabric._visible_memories(recall.tenant_id, recall.user_id, recall.intent_id,
                                                           recall.classification_allowed, t) p
                      WHERE p.user_id IS NULL AND p.intent_scope IS NULL
                        AND NOT memory_fabric._scope_fits(p.tenant_id, p.user_id, p.intent_scope, p.embedding_model,
                                                    p.id, p.classification, p.consent_id, p.embedding)
                      UNION ALL
                      SELECT p.id, p.priority, p.promoted_at, p.embedding, p.embedding_model
                      FROM memory_fabric._visible_memories(recall.tenant_id, recall.user_id, recall.intent_id,
                                                           recall.classification_allowed, t) p
                      WHERE p.user_id IS NULL AND p.intent_scope = recall.intent_id
                        AND NOT memory_fabric._scope_fits(p.tenant_id, p.user_id, p.intent_scope, p.embedding_model,
                                                    p.id, p.classification, p.consent_id, p.embedding)
                    ) m
                    OFFSET 0) sc
              ORDER BY sco DESC, sc.priority DESC, sc.promoted_at DESC, sc.id
              LIMIT recall.max_recalls) y
              WHERE y.sco >= s[5]) x;
    END IF;

    RETURN QUERY
    WITH top AS (
        SELECT u.id, u.rel, u.sco, u.ord FROM ROWS FROM (pg_catalog.unnest(top_ids), pg_catalog.unnest(top_rel), pg_catalog.unnest(top_sco))
                 WITH ORDINALITY AS u(id, rel, sco, ord)
        WHERE u.id IS NOT NULL
    ), res AS (
        SELECT m.id, m.text, m.tier, m.priority, tp.sco, tp.rel,
               pg_catalog.power(0.5, greatest(extract(epoch FROM t - m.promoted_at), 0) / 86400.0 / s[4]) AS rec,
               m.priority::double precision AS imp,
               (m.confidence IS NOT NULL AND m.confidence < s[6]) OR (has_query AND tp.sco < s[6]) AS low,
               pg_catalog.cardinality(x.ids) > 0 AS conflicted, x.ids,
               m.candidate_id, m.evidence_refs, m.source, c.captured_at, m.consent_id, m.classification,
               m.user_id, m.intent_scope, m.entity, m.predicate, m.value, m.write_class, m.confidence,
               m.promoted_at, m.expires_at, m.embedding_model, tp.ord
        FROM top tp
        JOIN memory_fabric.promoted_memory m ON m.id = tp.id
        JOIN memory_fabric.candidates c ON c.id = m.candidate_id
        CROSS JOIN LATERAL (
            -- only conflicts this recall could see itself
            SELECT coalesce(array_agg(o.id ORDER BY o.id), '{}') AS ids
            FROM memory_fabric._visible_memories(recall.tenant_id, recall.user_id, recall.intent_id,
                                                 recall.classification_allowed, t) o
            WHERE o.id = m.contradicts_id OR o.contradicts_id = m.id) x
    ), logged AS (
        -- one row whatever res holds; writes only when memory_fabric.log_recalls is on
        SELECT memory_fabric._log_recall(recall.tenant_id, recall.intent_id, recall.user_id,
                   recall.classification_allowed, recall.query_text, recall.as_of, recall.max_recalls,
                   coalesce(array_agg(r.id ORDER BY r.ord), '{}'), array_agg(r.sco ORDER BY r.ord)) AS done
        FROM res r
    )
    SELECT r.id, r.text, r.tier, r.priority, r.sco, r.rel, r.rec, r.imp, r.low, r.conflicted, r.ids,
           r.candidate_id, r.evidence_refs, r.source, r.captured_at, r.consent_id, r.classification,
           r.user_id, r.intent_scope, r.entity, r.predicate, r.value, r.write_class, r.confidence,
           r.promoted_at, r.expires_at, r.embedding_model
    -- logged is the outer side, so it runs even when res is empty (a miss is logged too)
    FROM logged LEFT JOIN res r ON true
    WHERE r.id IS NOT NULL
    ORDER BY r.ord;
END
$$;
COMMENT ON FUNCTION memory_fabric.recall IS
    'Recall promoted memories for a tenant, user, intent and classification set, now or as of an instant';
REVOKE ALL ON FUNCTION memory_fabric.recall, memory_fabric._recall_settings(text), memory_fabric._embed_query(text, text),
    memory_fabric._recall_candidates,
    memory_fabric._query_dimensions(text, text), memory_fabric._log_recall FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric.recall TO memory_fabric_agent, memory_fabric_reviewer, memory_fabric_admin;
GRANT EXECUTE ON FUNCTION memory_fabric._embedding_sq8, memory_fabric._recall_candidates,
    memory_fabric._nearest_candidates TO @extowner@;
