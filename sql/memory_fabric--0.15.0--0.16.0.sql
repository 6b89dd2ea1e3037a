-- memory_fabric 0.15.0 → 0.16.0: the fast paths, erasure and the bulk path hold under races and
-- hostile agents.
-- * A caller's vector is accepted only for a model a tenant admin registered
--   (memory_fabric.register_embedding_model(), embedding_models.registered_by, write-once). The
--   models captures used before 0.16.0 keep the dimension they fixed and must be registered once
--   to take callers' vectors again. Review sends a candidate whose scope holds memories of other
--   models to a human (reason unreviewed_models).
-- * Capture and recall refuse a vector whose sum of squares is zero, subnormal or infinite in
--   single precision; review rejects a candidate captured with one before (reason
--   unusable_vector). A live memory stored with one, whose similarity to every vector is 1 or not
--   a number, is retracted here (retracted_by memory_fabric 0.16.0, an event each).
-- * Locks and scope versions are keyed by SHA-256 of length-prefixed parts: scope_versions.key
--   becomes a uuid (memory_fabric._scope_version_key()). The table is emptied: every scope has no
--   version until it changes next, so reviews recorded before the update are decided again in
--   full by promote().
-- * Erasure covers everything about a subject: decisions, events, recall_log and consents get a
--   write-once erased_at, and the append-only guard lets erasure write their tombstones, evidence
--   refs emptied and a content hash's keyed digest (memory_fabric._erased_digest(), its key a new
--   random one in memory_fabric.secrets). The erasures made before are finished here as 0.16.0
--   makes them; forget_subject() called again for a subject reaches what 0.16.0 adds (an entity
--   or user named "<kind>:<subject>").
-- * The text columns of the tables roles read keep no statistics (their rows in pg_statistic
--   are removed here): row estimates tell nothing of other tenants.
-- * promoted_retracted and promoted_retracted_wide are keyed by model too (rebuilt here; they hold
--   the retracted memories only).
-- * The default policy ('*') gets a new version with the provenance gate's new defaults when its
--   newest version still holds 0.15.0's; tenants' own policies are left as written.
-- Its statements are the install script's own; tests/upgrade/run.sh checks that it ends with the
-- catalog of a fresh install.
\echo Use "ALTER EXTENSION memory_fabric UPDATE TO '0.16.0'" to load this file. \quit

-- As in the install script, every name is resolved under pg_catalog alone.
SET LOCAL search_path = pg_catalog, pg_temp;

-- Models a tenant admin registered.
ALTER TABLE memory_fabric.embedding_models ADD COLUMN registered_by text;
COMMENT ON TABLE memory_fabric.embedding_models IS
    'Dimension of every embedding model seen per tenant, and which a tenant admin registered for callers'' vectors; append-only except write-once registered_by';
COMMENT ON COLUMN memory_fabric.embedding_models.registered_by IS
    'The role that registered the model for callers'' vectors (memory_fabric.register_embedding_model); NULL: dimension only';

-- Erasure's reach.
ALTER TABLE memory_fabric.decisions ADD COLUMN erased_at timestamptz;
COMMENT ON TABLE memory_fabric.decisions IS
    'Approve / reject / edit decisions on queued candidates; append-only except the erasure of their notes';
ALTER TABLE memory_fabric.consents ADD COLUMN erased_at timestamptz;
COMMENT ON TABLE memory_fabric.consents IS
    'Consent records; append-only except write-once revoked_at, revoked_by, revocation_reason and their erasure';
ALTER TABLE memory_fabric.events ADD COLUMN erased_at timestamptz;
COMMENT ON TABLE memory_fabric.events IS 'Audit events; append-only except the erasure of their payload''s free text';
ALTER TABLE memory_fabric.recall_log ADD COLUMN erased_at timestamptz;
COMMENT ON TABLE memory_fabric.recall_log IS 'What each recall returned (memory_fabric.log_recalls); append-only except the erasure of the query text';

CREATE TABLE memory_fabric.secrets (name text PRIMARY KEY, value bytea NOT NULL CHECK (octet_length(value) >= 32));
COMMENT ON TABLE memory_fabric.secrets IS 'Keys no role may read (the erasure digest''s); superuser only';
REVOKE ALL ON memory_fabric.secrets FROM PUBLIC;
ALTER TABLE memory_fabric.secrets ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;

-- Scope versions keyed by a digest of the tenant and the user.
DELETE FROM memory_fabric.scope_versions;
ALTER TABLE memory_fabric.scope_versions ALTER COLUMN key TYPE uuid USING pg_catalog.gen_random_uuid();

-- The retracted memories' indexes keyed by model too (review's look for other models).
DROP INDEX memory_fabric.promoted_retracted;
DROP INDEX memory_fabric.promoted_retracted_wide;
CREATE INDEX promoted_retracted ON memory_fabric.promoted_memory (tenant_id, user_id, embedding_model)
    INCLUDE (content_hash, id, embedding)
    WHERE retracted_at IS NOT NULL AND erased_at IS NULL
      AND memory_fabric._scope_fits(tenant_id, user_id, content_hash, embedding_model, id, '', NULL, embedding);
CREATE INDEX promoted_retracted_wide ON memory_fabric.promoted_memory (tenant_id, user_id, embedding_model)
    WHERE retracted_at IS NOT NULL AND erased_at IS NULL
      AND NOT memory_fabric._scope_fits(tenant_id, user_id, content_hash, embedding_model, id, '', NULL, embedding);

-- The functions of this library that are new.
CREATE FUNCTION memory_fabric."_check_recall"(
	"tenant_id" TEXT, /* & str */
	"user_id" TEXT, /* Option < & str > */
	"intent_id" TEXT, /* Option < & str > */
	"query_embedding_model" TEXT, /* Option < & str > */
	"query_embedding" real[] /* :: std :: option :: Option < Vec < f32 > > */
) RETURNS void
STABLE PARALLEL SAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_check_recall_wrapper';
CREATE FUNCTION memory_fabric."_erased_digest"(
	"content_hash" TEXT /* & str */
) RETURNS TEXT /* String */
STRICT STABLE PARALLEL SAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_erased_digest_wrapper';
CREATE FUNCTION memory_fabric."_lock_key"(
	"kind" TEXT, /* & str */
	"parts" TEXT[] /* Vec < Option < String > > */
) RETURNS bigint /* i64 */
IMMUTABLE STRICT PARALLEL SAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_lock_key_wrapper';
CREATE FUNCTION memory_fabric."_random_bytes"(
	"n" INT /* i32 */
) RETURNS bytea /* Vec < u8 > */
STRICT VOLATILE PARALLEL SAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_random_bytes_wrapper';
CREATE FUNCTION memory_fabric."_register_embedding_model"(
	"tenant_id" TEXT, /* Option < & str > */
	"model" TEXT, /* Option < & str > */
	"dimensions" INT /* Option < i32 > */
) RETURNS void
VOLATILE PARALLEL UNSAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_register_embedding_model_wrapper';
CREATE FUNCTION memory_fabric."_scope_version_key"(
	"tenant_id" TEXT, /* Option < & str > */
	"user_id" TEXT /* Option < & str > */
) RETURNS uuid /* Option < pgrx :: Uuid > */
IMMUTABLE PARALLEL SAFE
SET search_path TO pg_catalog, pg_temp
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_scope_version_key_wrapper';
REVOKE ALL ON FUNCTION memory_fabric._check_recall, memory_fabric._erased_digest(text), memory_fabric._lock_key,
    memory_fabric._random_bytes(integer), memory_fabric._register_embedding_model(text, text, integer),
    memory_fabric._scope_version_key FROM PUBLIC;
DROP FUNCTION memory_fabric._query_dimensions(text, text);

-- The SQL functions of sql/schema.sql that are new or changed.
CREATE FUNCTION memory_fabric._names_subject(name text, subject text) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN name = subject OR (pg_catalog.strpos(name, ':') > 0
                          AND pg_catalog.substr(name, pg_catalog.strpos(name, ':') + 1) = subject);
COMMENT ON FUNCTION memory_fabric._names_subject IS
    'Whether an identifier names a subject: the subject itself, or <kind>:<subject>';
REVOKE ALL ON FUNCTION memory_fabric._names_subject FROM PUBLIC;
CREATE FUNCTION memory_fabric._erased_payload(p jsonb) RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT coalesce(pg_catalog.jsonb_object_agg(e.key,
               CASE WHEN e.key = ANY (ARRAY['candidate_id', 'review_id', 'decision_id', 'consent_id', 'memory_id',
                                            'supersedes', 'superseded_by', 'coexists_with', 'contradicts', 'tier',
                                            'resolution', 'promoted_by', 'event', 'version', 'model'])
                         OR pg_catalog.jsonb_typeof(e.value) IN ('number', 'boolean', 'null')
                    THEN e.value ELSE '"[erased]"'::jsonb END), '{}'::jsonb)
           || '{"erased": true}'::jsonb
    FROM pg_catalog.jsonb_each(_erased_payload.p) e;
END;
COMMENT ON FUNCTION memory_fabric._erased_payload IS
    'An event payload without its free text, as erasure leaves it';
REVOKE ALL ON FUNCTION memory_fabric._erased_payload FROM PUBLIC;
CREATE OR REPLACE FUNCTION memory_fabric._scope_changed() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    -- in key order, so that two statements changing the same scopes lock their rows alike
    INSERT INTO memory_fabric.scope_versions AS v (key, version, changes)
    SELECT s.key, pg_catalog.gen_random_uuid(),
           pg_catalog.jsonb_build_array(pg_catalog.jsonb_build_object('from', NULL, 'ids',
               CASE WHEN TG_OP = 'INSERT' AND s.n <= 16 THEN pg_catalog.to_jsonb(s.ids) END))
    FROM (SELECT memory_fabric._scope_version_key(n.tenant_id, n.user_id) AS key,
                 pg_catalog.array_agg(n.id ORDER BY n.id) AS ids, count(*) AS n
          FROM changed n GROUP BY 1) s
    ORDER BY s.key
    ON CONFLICT (key) DO UPDATE SET version = excluded.version,
        changes = (SELECT coalesce(pg_catalog.jsonb_agg(a.e ORDER BY a.i), '[]')
                   FROM pg_catalog.jsonb_array_elements(v.changes || pg_catalog.jsonb_build_array(
                            pg_catalog.jsonb_build_object('from', v.version, 'ids', excluded.changes -> 0 -> 'ids')))
                        WITH ORDINALITY a(e, i)
                   WHERE a.i > pg_catalog.jsonb_array_length(v.changes) + 1 - 16);
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION memory_fabric._guard_write_once() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    o jsonb := to_jsonb(OLD);
    n jsonb := to_jsonb(NEW);
    k text;
    set_once boolean := false;
    erasing boolean := 'erased_at' = ANY (TG_ARGV) AND o ->> 'erased_at' IS NULL AND n ->> 'erased_at' IS NOT NULL;
    reembedding boolean := TG_TABLE_NAME = 'promoted_memory' AND NOT erasing AND o ->> 'erased_at' IS NULL
        AND o ->> 'embedding' IS NOT NULL AND n ->> 'embedding' IS NOT NULL
        AND n ->> 'embedding_model' <> '' AND n ->> 'embedding_model' IS DISTINCT FROM o ->> 'embedding_model';
    tombstone constant jsonb := '{"text": "[erased]", "value": null, "embedding": null, "metadata": {},
        "evidence_refs": [], "notes": "[erased]", "query_text": null, "retraction_reason": "[erased]",
        "revocation_reason": "[erased]"}';
    expected jsonb;
BEGIN
    FOR k IN SELECT jsonb_object_keys(n) ORDER BY 1 LOOP
        CONTINUE WHEN o -> k IS NOT DISTINCT FROM n -> k;
        -- a generated column (promoted_memory.embedding_bits): PostgreSQL computes it after this
        -- trigger, so NEW holds NULL for it here, and no statement can set it
        CONTINUE WHEN n -> k = 'null'::jsonb AND EXISTS (
            SELECT 1 FROM pg_catalog.pg_attribute a
            WHERE a.attrelid = TG_RELID AND a.attname = k AND a.attgenerated <> '');
        IF erasing AND (tombstone ? k OR k IN ('content_hash', 'payload'))
           AND NOT (k = ANY (TG_ARGV) AND o ->> k IS NULL) THEN
            -- a content hash becomes its keyed digest (a superuser's function: no other role can
            -- make one), a payload loses its free text
            expected := CASE k WHEN 'content_hash' THEN pg_catalog.to_jsonb(memory_fabric._erased_digest(o ->> k))
                               WHEN 'payload' THEN memory_fabric._erased_payload(o -> k)
                               ELSE tombstone -> k END;
            IF n -> k IS DISTINCT FROM expected THEN
                RAISE EXCEPTION 'cannot update column "%" of table "%.%"', k, TG_TABLE_SCHEMA, TG_TABLE_NAME
                    USING ERRCODE = 'object_not_in_prerequisite_state',
                          DETAIL = format('Rule: erasure may only replace %s with its tombstone %s.', k,
                                          CASE k WHEN 'content_hash' THEN 'digest' ELSE expected::text END);
            END IF;
        ELSIF reembedding AND k IN ('embedding', 'embedding_model') THEN
            NULL;  -- a new vector of another model, checked above
        ELSIF k <> ALL (TG_ARGV) THEN
            RAISE EXCEPTION 'cannot update column "%" of table "%.%"', k, TG_TABLE_SCHEMA, TG_TABLE_NAME
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      DETAIL = CASE WHEN k IN ('embedding', 'embedding_model') AND TG_TABLE_NAME = 'promoted_memory'
                          THEN 'Rule: a memory''s vector changes only with its embedding model, to another model, '
                               'and never after erasure.'
                          ELSE format('Rule: %s is append-only; only the write-once columns %s may be set.',
                                      TG_TABLE_NAME, array_to_string(TG_ARGV, ', ')) END;
        ELSIF o ->> k IS NOT NULL THEN
            RAISE EXCEPTION 'cannot update column "%" of table "%.%"', k, TG_TABLE_SCHEMA, TG_TABLE_NAME
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      DETAIL = format('Rule: %s is write-once; it may change from NULL to a value, never again.', k);
        END IF;
        set_once := true;
    END LOOP;
    IF NOT set_once THEN
        RAISE EXCEPTION 'cannot update table "%.%"', TG_TABLE_SCHEMA, TG_TABLE_NAME
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = format('Rule: %s is append-only; an update must set a write-once column (%s) from NULL.',
                                  TG_TABLE_NAME, array_to_string(TG_ARGV, ', '));
    END IF;
    RETURN NEW;
END
$$;


-- The guards' write-once columns.
DO $$
DECLARE
    t    text;
    once text[];
BEGIN
    FOR t, once IN VALUES ('embedding_models', '{registered_by}'::text[]), ('decisions', '{erased_at}'),
        ('consents', '{revoked_at,revoked_by,revocation_reason,erased_at}'), ('events', '{erased_at}'),
        ('recall_log', '{erased_at}') LOOP
        EXECUTE pg_catalog.format('DROP TRIGGER guard_update ON memory_fabric.%I', t);
        EXECUTE pg_catalog.format('CREATE TRIGGER guard_update BEFORE UPDATE ON memory_fabric.%I FOR EACH ROW '
                                  'EXECUTE FUNCTION memory_fabric._guard_write_once(%s)', t,
                                  (SELECT pg_catalog.string_agg(pg_catalog.quote_literal(c), ', ')
                                   FROM pg_catalog.unnest(once) c));
        EXECUTE pg_catalog.format('ALTER TABLE memory_fabric.%I ENABLE ALWAYS TRIGGER guard_update', t);
    END LOOP;
END
$$;

-- No statistics of the text columns, and none left from before.
DO $$
DECLARE
    c record;
BEGIN
    FOR c IN SELECT a.attrelid::pg_catalog.regclass AS rel, a.attname
             FROM pg_catalog.pg_attribute a
             WHERE a.attrelid = ANY (ARRAY['memory_fabric.policies', 'memory_fabric.candidates', 'memory_fabric.embedding_models',
                                           'memory_fabric.reviews', 'memory_fabric.decisions', 'memory_fabric.consents',
                                           'memory_fabric.promoted_memory', 'memory_fabric.events',
                                           'memory_fabric.tenant_grants', 'memory_fabric.recall_log']::pg_catalog.regclass[])
               AND a.attnum > 0 AND NOT a.attisdropped
               AND a.atttypid = ANY (ARRAY['pg_catalog.text', 'pg_catalog.jsonb', 'pg_catalog.text[]',
                                           'pg_catalog.varbit']::pg_catalog.regtype[])
             ORDER BY 1, 2 LOOP
        EXECUTE pg_catalog.format('ALTER TABLE %s ALTER COLUMN %I SET STATISTICS 0', c.rel, c.attname);
    END LOOP;
END
$$;
DELETE FROM pg_catalog.pg_statistic s USING pg_catalog.pg_attribute a
WHERE a.attrelid = s.starelid AND a.attnum = s.staattnum AND a.attstattarget = 0
  AND a.attrelid = ANY (ARRAY['memory_fabric.policies', 'memory_fabric.candidates', 'memory_fabric.embedding_models',
                              'memory_fabric.reviews', 'memory_fabric.decisions', 'memory_fabric.consents',
                              'memory_fabric.promoted_memory', 'memory_fabric.events',
                              'memory_fabric.tenant_grants', 'memory_fabric.recall_log']::pg_catalog.regclass[]);

-- Registering a model.
CREATE FUNCTION memory_fabric.register_embedding_model(tenant_id text, model text, dimensions integer)
RETURNS memory_fabric.embedding_models
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_row memory_fabric.embedding_models;
BEGIN
    PERFORM memory_fabric._register_embedding_model(register_embedding_model.tenant_id, register_embedding_model.model,
                                                     register_embedding_model.dimensions);
    SELECT * INTO STRICT v_row FROM memory_fabric.embedding_models AS m
    WHERE m.tenant_id = register_embedding_model.tenant_id AND m.model = register_embedding_model.model;
    RETURN v_row;
END
$$;
COMMENT ON FUNCTION memory_fabric.register_embedding_model IS
    'Accept callers'' vectors of an embedding model for a tenant (a tenant admin''s decision: review compares memories by them)';
REVOKE ALL ON FUNCTION memory_fabric.register_embedding_model(text, text, integer),
    memory_fabric._register_embedding_model(text, text, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric.register_embedding_model(text, text, integer) TO memory_fabric_admin;

-- Recall checks its identifiers and its query vector's norm, and scores no NaN.
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
    END IF;
    PERFORM memory_fabric._check_recall(recall.tenant_id, recall.user_id, recall.intent_id, recall.query_embedding_model,
                                        recall.query_embedding::real[]);

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
                           -- not a number (a vector stored before its norm was checked): no relevance
                           NULLIF(CASE WHEN m.embedding IS NULL THEN NULL
                                WHEN m.embedding_model = q_b_model THEN memory_fabric._cosine_similarity(m.embedding, q_b)
                                WHEN m.embedding_model = q_s_model THEN memory_fabric._cosine_similarity(m.embedding, q_s)
                                WHEN m.embedding_model = q_f_model THEN memory_fabric._cosine_similarity(m.embedding, q_f)
                                WHEN m.embedding_model = recall.query_embedding_model
                                    THEN memory_fabric._cosine_similarity(m.embedding, recall.query_embedding)
                           END, 'NaN'::double precision) AS rel
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
    memory_fabric._check_recall, memory_fabric._log_recall FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric.recall TO memory_fabric_agent, memory_fabric_reviewer, memory_fabric_admin;
RESET client_min_messages;

COMMENT ON FUNCTION memory_fabric.forget_subject IS
    'Erasure: replace everything captured about a subject with tombstones and keyed digests, keeping ids, times and the audit';

-- The key of the erasure digest, and the role that installed the extension may call the new
-- functions (but that one).
INSERT INTO memory_fabric.secrets (name, value) VALUES ('erasure_digest', memory_fabric._random_bytes(32));
GRANT EXECUTE ON FUNCTION memory_fabric._check_recall, memory_fabric._lock_key, memory_fabric._random_bytes(integer),
    memory_fabric._register_embedding_model(text, text, integer), memory_fabric._scope_version_key,
    memory_fabric.register_embedding_model(text, text, integer),
    memory_fabric._names_subject, memory_fabric._erased_payload TO @extowner@;
REVOKE ALL ON FUNCTION memory_fabric._erased_digest(text) FROM @extowner@;

-- The erasures made before 0.16.0 are finished as 0.16.0 makes them. Every erased candidate and
-- memory (by forget_subject() or by expiry purging) loses its evidence refs and keeps its content
-- hash's keyed digest only. For each subject erased (its memory.erased event, subject_id
-- 'subject:<subject>'), the rows that erasure reached lose what forget_subject() takes now: the
-- retraction reasons people wrote, the operators' notes on its candidates, the free text of the
-- events about them, and, as they stood at the erasure, the query text of the subject's recalls and
-- the evidence and revocation reasons of its consents. The guard of candidates and promoted_memory
-- lets an erasure happen once, so it is off for this statement only; the other tables' erasures
-- are their first and pass it.
ALTER TABLE memory_fabric.candidates DISABLE TRIGGER guard_update;
ALTER TABLE memory_fabric.promoted_memory DISABLE TRIGGER guard_update;
CREATE TEMPORARY TABLE erased_subjects ON COMMIT DROP AS
SELECT e.tenant_id, pg_catalog.substr(e.subject_id, 9) AS subject, pg_catalog.max(e.created_at) AS at
FROM memory_fabric.events e
WHERE e.kind = 'memory.erased' AND e.subject_id LIKE 'subject:_%'
GROUP BY 1, 2;
-- the erased candidates and memories about those subjects, found once
CREATE TEMPORARY TABLE erased_rows ON COMMIT DROP AS
SELECT c.tenant_id, c.id, true AS candidate FROM memory_fabric.candidates c
WHERE c.erased_at IS NOT NULL AND EXISTS (
    SELECT 1 FROM pg_temp.erased_subjects s
    WHERE s.tenant_id = c.tenant_id
      AND (memory_fabric._names_subject(c.user_id, s.subject) OR memory_fabric._names_subject(c.entity, s.subject)))
UNION ALL
SELECT p.tenant_id, p.id, false FROM memory_fabric.promoted_memory p
WHERE p.erased_at IS NOT NULL AND EXISTS (
    SELECT 1 FROM pg_temp.erased_subjects s
    WHERE s.tenant_id = p.tenant_id
      AND (memory_fabric._names_subject(p.user_id, s.subject) OR memory_fabric._names_subject(p.entity, s.subject)));
DO $$
DECLARE
    c bigint;
    m bigint;
BEGIN
    UPDATE memory_fabric.candidates
    SET text = '[erased]', value = NULL, embedding = NULL, metadata = '{}', evidence_refs = '[]',
        content_hash = memory_fabric._erased_digest(content_hash)
    WHERE erased_at IS NOT NULL;
    GET DIAGNOSTICS c = ROW_COUNT;
    UPDATE memory_fabric.promoted_memory p
    SET text = '[erased]', value = NULL, embedding = NULL, evidence_refs = '[]',
        content_hash = memory_fabric._erased_digest(p.content_hash),
        retraction_reason = CASE
            WHEN p.retraction_reason IS NULL
              OR p.retraction_reason ~ '^(erased|consent_revoked|superseded by pm_[0-9a-z_]+)$'
              OR NOT EXISTS (SELECT 1 FROM pg_temp.erased_rows r WHERE r.id = p.id AND NOT r.candidate)
            THEN p.retraction_reason ELSE '[erased]' END
    WHERE p.erased_at IS NOT NULL;
    GET DIAGNOSTICS m = ROW_COUNT;
    IF c + m > 0 THEN
        RAISE NOTICE 'memory_fabric 0.16.0 finished the erasure of % candidates and % memories erased before', c, m;
    END IF;
END
$$;
ALTER TABLE memory_fabric.candidates ENABLE ALWAYS TRIGGER guard_update;
ALTER TABLE memory_fabric.promoted_memory ENABLE ALWAYS TRIGGER guard_update;
UPDATE memory_fabric.decisions d
SET erased_at = pg_catalog.clock_timestamp(), notes = CASE WHEN d.notes IS NULL THEN NULL ELSE '[erased]' END
FROM pg_temp.erased_rows erased
WHERE erased.candidate AND d.tenant_id = erased.tenant_id AND (d.candidate_id = erased.id OR d.new_candidate_id = erased.id)
  AND d.erased_at IS NULL;
UPDATE memory_fabric.events e
SET erased_at = pg_catalog.clock_timestamp(), payload = memory_fabric._erased_payload(e.payload)
FROM pg_temp.erased_rows erased
WHERE e.tenant_id = erased.tenant_id AND e.subject_id = erased.id AND e.erased_at IS NULL;
UPDATE memory_fabric.recall_log r
SET erased_at = pg_catalog.clock_timestamp(), query_text = NULL
FROM pg_temp.erased_subjects s
WHERE r.tenant_id = s.tenant_id AND memory_fabric._names_subject(r.user_id, s.subject)
  AND r.recalled_at <= s.at AND r.erased_at IS NULL;
UPDATE memory_fabric.consents k
SET erased_at = pg_catalog.clock_timestamp(), evidence_refs = '[]',
    revocation_reason = CASE WHEN k.revocation_reason IS NULL THEN NULL ELSE '[erased]' END
FROM pg_temp.erased_subjects s
WHERE k.tenant_id = s.tenant_id AND memory_fabric._names_subject(k.subject, s.subject)
  AND k.captured_at <= s.at AND k.erased_at IS NULL;
DROP TABLE pg_temp.erased_rows, pg_temp.erased_subjects;

-- The live memories whose vector cannot be compared (the sum of its squares is zero, subnormal or
-- infinite in single precision: pgvector's norm, in double, outside the square roots of the
-- smallest and the largest normal single) are retracted, each with an event.
DO $$
DECLARE
    n bigint;
BEGIN
    EXECUTE pg_catalog.format($q$
        WITH gone AS (
            UPDATE memory_fabric.promoted_memory m
            SET retracted_at = pg_catalog.clock_timestamp(), retracted_by = 'memory_fabric 0.16.0',
                retraction_reason = 'its vector cannot be compared: the sum of its squares is zero, subnormal or infinite in single precision'
            WHERE m.retracted_at IS NULL AND m.embedding IS NOT NULL
              AND NOT %1$s.vector_norm(m.embedding) BETWEEN 1.0842022e-19 AND 1.8446743e19
            RETURNING m.id, m.tenant_id)
        INSERT INTO memory_fabric.events (id, tenant_id, kind, subject_id, actor, payload)
        SELECT 'ev_' || pg_catalog.to_char(pg_catalog.clock_timestamp() AT TIME ZONE 'UTC', 'YYYYMMDD"t"HH24MISS') || '_'
                   || pg_catalog.substr(pg_catalog.md5(g.id || pg_catalog.random()::text), 1, 12),
               g.tenant_id, 'memory.retracted', g.id, 'memory_fabric 0.16.0', '{"reason": "unusable_vector"}'
        FROM gone g$q$, memory_fabric._pgvector_schema());
    GET DIAGNOSTICS n = ROW_COUNT;
    IF n > 0 THEN
        RAISE NOTICE 'memory_fabric 0.16.0 retracted % memories whose vectors cannot be compared', n;
    END IF;
END
$$;

-- The default policy's provenance gate, where it is still 0.15.0's default.
INSERT INTO memory_fabric.policies (tenant_id, version, body, created_by, note)
SELECT '*', GREATEST(pg_catalog.nextval('memory_fabric.policy_versions'),
                     (SELECT pg_catalog.max(version) + 1 FROM memory_fabric.policies))::integer,
       pg_catalog.jsonb_set(p.body, '{provenance}', memory_fabric._default_policy() -> 'provenance'),
       'memory_fabric', '0.16.0: any untrusted evidence waits for a human; content-fetching tools and URLs are untrusted'
FROM (SELECT body FROM memory_fabric.policies WHERE tenant_id = '*' ORDER BY version DESC LIMIT 1) p
WHERE p.body -> 'provenance' = '{"untrusted": ["tool:", "web:", "file:", "doc:"], "untrusted_only": "human"}'::jsonb;
