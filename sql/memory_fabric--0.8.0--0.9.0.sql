-- memory_fabric 0.8.0 → 0.9.0: the visibility rules stated once (memory_fabric._visible_memories,
-- read by recall and explain_recall), recall written without a template, and catalog comments
-- that cite only what is in the repository.
-- Written by hand; tests/upgrade/run.sh checks that it ends with the catalog of a fresh install.
\echo Use "ALTER EXTENSION memory_fabric UPDATE TO '0.9.0'" to load this file. \quit

-- As in the install script, every name is resolved under pg_catalog alone.
SET LOCAL search_path = pg_catalog, pg_temp;

-- Cosine similarity of two vectors of one model. Its body is parsed here, with pgvector's
-- operator bound once, so it depends on no search_path; queries that call it (recall) get it
-- inlined, the operator itself, and need not name pgvector's schema.
DO $$ BEGIN EXECUTE pg_catalog.replace($ddl$
CREATE FUNCTION memory_fabric._cosine_similarity(a @pgvector@.vector, b @pgvector@.vector) RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN 1 - (a OPERATOR(@pgvector@.<=>) b)
$ddl$, '@pgvector@', memory_fabric._pgvector_schema()); END $$;
COMMENT ON FUNCTION memory_fabric._cosine_similarity IS 'Cosine similarity of two vectors (1 - cosine distance)';
REVOKE ALL ON FUNCTION memory_fabric._cosine_similarity FROM PUBLIC;

-- The visibility rules, stated once: the promoted memories a recall for (tenant, user, intent,
-- classifications) may see at instant `at`. A memory is visible when it was promoted by then
-- and neither retracted nor expired yet, its classification is allowed, it is the user's or
-- user-less, of the intent or cross-intent, and the consent it depends on, if any, was recorded
-- by then and neither revoked nor past its validity. recall reads it (inlined, so each of its
-- queries keeps its own index), and so does explain_recall. Parsed here, so it depends on no
-- search_path; as the caller's, row-level security applies to a direct call. It returns the
-- columns its readers use.
-- What memory_fabric._visible_memories() returns: the columns its readers use, typed as in
-- promoted_memory. A function's own result columns lose their typmod, and priority as a plain
-- numeric no longer matches promoted_recall's order: recall would sort the scope.
DO $$ BEGIN EXECUTE pg_catalog.replace($ddl$
CREATE TYPE memory_fabric._visible_memory AS (
    id text, tenant_id text, user_id text, intent_scope text, classification text, consent_id text,
    priority numeric(3,2), promoted_at timestamptz, contradicts_id text, embedding_model text,
    embedding @pgvector@.vector)
$ddl$, '@pgvector@', memory_fabric._pgvector_schema()); END $$;
CREATE FUNCTION memory_fabric._visible_memories(for_tenant text, for_user text, for_intent text,
                                                classifications text[], at timestamptz)
RETURNS SETOF memory_fabric._visible_memory
LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT m.id, m.tenant_id, m.user_id, m.intent_scope, m.classification, m.consent_id, m.priority, m.promoted_at,
           m.contradicts_id, m.embedding_model, m.embedding
    FROM memory_fabric.promoted_memory m
    WHERE m.tenant_id = _visible_memories.for_tenant
      AND (m.user_id IS NULL OR m.user_id = _visible_memories.for_user)
      AND (m.intent_scope IS NULL OR m.intent_scope = _visible_memories.for_intent)
      AND m.promoted_at <= _visible_memories.at
      AND (m.retracted_at IS NULL OR m.retracted_at > _visible_memories.at)
      AND (m.expires_at IS NULL OR m.expires_at > _visible_memories.at)
      AND m.classification = ANY (_visible_memories.classifications)
      AND (m.consent_id IS NULL OR EXISTS (
            SELECT 1 FROM memory_fabric.consents k
            WHERE k.id = m.consent_id AND k.captured_at <= _visible_memories.at
              AND (k.revoked_at IS NULL OR k.revoked_at > _visible_memories.at)
              AND (k.valid_until IS NULL OR k.valid_until > _visible_memories.at)));
END;
COMMENT ON FUNCTION memory_fabric._visible_memories IS
    'The promoted memories a recall for a tenant, user, intent and classification set may see at an instant';
REVOKE ALL ON FUNCTION memory_fabric._visible_memories FROM PUBLIC;

-- Recall by text gets each query vector with its model's name; a query vector's dimensions are
-- checked against the model's by memory_fabric._query_dimensions.
DROP FUNCTION memory_fabric._embed_query(text, text);
CREATE FUNCTION memory_fabric."_embed_query"(
	"tenant_id" TEXT, /* & str */
	"query_text" TEXT /* & str */
) RETURNS TABLE (
	"builtin_model" TEXT,  /* String */
	"builtin" real[],  /* Vec < f32 > */
	"semantic_model" TEXT,  /* Option < String > */
	"semantic" real[],  /* :: std :: option :: Option < Vec < f32 > > */
	"function_model" TEXT,  /* Option < String > */
	"function_embedding" real[]  /* :: std :: option :: Option < Vec < f32 > > */
)
STRICT VOLATILE PARALLEL UNSAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_embed_query_wrapper';
CREATE FUNCTION memory_fabric."_query_dimensions"(
	"tenant_id" TEXT, /* & str */
	"model" TEXT /* & str */
) RETURNS INT /* Option < i32 > */
STRICT STABLE PARALLEL SAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_query_dimensions_wrapper';
REVOKE ALL ON FUNCTION memory_fabric._embed_query(text, text), memory_fabric._query_dimensions(text, text) FROM PUBLIC;

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
        -- With a query every visible row in scope is scored, read in eight index ranges: the
        -- user's and the user-less rows, cross-intent or of the intent, each from
        -- promoted_scope_vectors (index-only, in scope order) or, for the rows too wide for it,
        -- through promoted_scope_wide. The similarity is computed once per row (OFFSET 0 keeps
        -- the planner from copying it into the score), and the score floor is applied to the
        -- top rows only, which is the same: the rows are ordered by score first.
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
                      FROM memory_fabric._visible_memories(recall.tenant_id, recall.user_id, recall.intent_id,
                                                           recall.classification_allowed, t) p
                      WHERE p.user_id = recall.user_id AND p.intent_scope IS NULL
                        AND memory_fabric._scope_fits(p.tenant_id, p.user_id, p.intent_scope, p.embedding_model,
                                                    p.id, p.classification, p.consent_id, p.embedding)
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
                        AND memory_fabric._scope_fits(p.tenant_id, p.user_id, p.intent_scope, p.embedding_model,
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
                        AND memory_fabric._scope_fits(p.tenant_id, p.user_id, p.intent_scope, p.embedding_model,
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
                        AND memory_fabric._scope_fits(p.tenant_id, p.user_id, p.intent_scope, p.embedding_model,
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

CREATE OR REPLACE FUNCTION memory_fabric.explain_recall(
    tenant_id text, memory_id text, intent_id text DEFAULT NULL, user_id text DEFAULT NULL,
    classification_allowed text[] DEFAULT ARRAY['PUBLIC', 'INTERNAL'], as_of timestamptz DEFAULT NULL)
RETURNS TABLE (visible boolean, reasons text[], memory text, at timestamptz)
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_variable
DECLARE
    t  timestamptz := coalesce(explain_recall.as_of, pg_catalog.clock_timestamp());
    m  memory_fabric.promoted_memory;
    k  memory_fabric.consents;
    r  text[] := '{}';
    ts constant text := 'YYYY-MM-DD HH24:MI:SS "UTC"';
BEGIN
    PERFORM memory_fabric._require_tenant(explain_recall.tenant_id);
    SELECT * INTO m FROM memory_fabric.promoted_memory p
    WHERE p.id = explain_recall.memory_id AND p.tenant_id = explain_recall.tenant_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'memory "%" does not exist', explain_recall.memory_id USING ERRCODE = 'no_data_found',
            DETAIL = format('No promoted memory with that id belongs to tenant "%s".', explain_recall.tenant_id);
    END IF;
    IF m.promoted_at > t THEN
        r := r || format('not promoted yet: promoted at %s', to_char(m.promoted_at AT TIME ZONE 'UTC', ts));
    END IF;
    IF m.retracted_at IS NOT NULL AND m.retracted_at <= t THEN
        r := r || format('retracted at %s by %s: %s', to_char(m.retracted_at AT TIME ZONE 'UTC', ts),
                         m.retracted_by, m.retraction_reason);
    END IF;
    IF m.expires_at IS NOT NULL AND m.expires_at <= t THEN
        r := r || format('expired at %s (%s tier)', to_char(m.expires_at AT TIME ZONE 'UTC', ts), m.tier);
    END IF;
    IF m.erased_at IS NOT NULL AND m.erased_at <= t THEN
        r := r || format('erased at %s', to_char(m.erased_at AT TIME ZONE 'UTC', ts));
    END IF;
    IF NOT (m.classification = ANY (coalesce(explain_recall.classification_allowed, '{}'))) THEN
        r := r || format('classification %s is not in the allowed set %s', m.classification,
                         coalesce(explain_recall.classification_allowed, '{}'));
    END IF;
    IF m.user_id IS NOT NULL AND m.user_id IS DISTINCT FROM explain_recall.user_id THEN
        r := r || format('scoped to user %s', m.user_id);
    END IF;
    IF m.intent_scope IS NOT NULL AND m.intent_scope IS DISTINCT FROM explain_recall.intent_id THEN
        r := r || format('scoped to intent %s', m.intent_scope);
    END IF;
    IF m.consent_id IS NOT NULL THEN
        SELECT * INTO k FROM memory_fabric.consents c WHERE c.id = m.consent_id;
        IF k.revoked_at IS NOT NULL AND k.revoked_at <= t THEN
            r := r || format('consent %s revoked at %s: %s', k.id, to_char(k.revoked_at AT TIME ZONE 'UTC', ts),
                             k.revocation_reason);
        ELSIF k.valid_until IS NOT NULL AND k.valid_until <= t THEN
            r := r || format('consent %s expired at %s', k.id, to_char(k.valid_until AT TIME ZONE 'UTC', ts));
        ELSIF k.captured_at > t THEN
            r := r || format('consent %s not recorded yet', k.id);
        END IF;
    END IF;
    -- visible is what recall applies (memory_fabric._visible_memories); the reasons above say why not
    RETURN QUERY SELECT EXISTS (
        SELECT 1 FROM memory_fabric._visible_memories(explain_recall.tenant_id, explain_recall.user_id,
            explain_recall.intent_id, coalesce(explain_recall.classification_allowed, '{}'), t) v
        WHERE v.id = m.id), r, m.text, t;
END
$$;
COMMENT ON FUNCTION memory_fabric.explain_recall IS
    'Whether a memory was visible to a recall at an instant, and every reason it was hidden';

COMMENT ON VIEW memory_fabric.metrics IS
    'Per tenant: captures, verdicts, queue depth and age, contradiction backlog and resolution time, promotions, recall hit rate, memories promoted without consent';
COMMENT ON FUNCTION memory_fabric.record_consent IS
    'Record a consent: subject, purpose, predicates and classifications allowed, basis, validity';

-- What a fresh install grants its owner on every function.
GRANT EXECUTE ON FUNCTION memory_fabric._cosine_similarity, memory_fabric._visible_memories,
    memory_fabric._embed_query(text, text), memory_fabric._query_dimensions(text, text) TO @extowner@;
