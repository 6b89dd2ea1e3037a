-- Runs last in the extension script, after the Rust functions exist. Names are resolved under
-- pg_catalog alone again, as in schema.sql.
SET LOCAL search_path = pg_catalog, pg_temp;

-- The built-in default policy; its body comes from the Rust core (one source of defaults).
INSERT INTO memory_fabric.policies (tenant_id, version, body, created_by, note)
VALUES ('*', 1, memory_fabric._default_policy(), 'memory_fabric', 'built-in default');

-- capture_memory: the public capture function. A thin PL/pgSQL shell so it can take
-- pgvector's type and return the stored row; validation, redaction, hashing, embedding and the
-- insert happen in memory_fabric._capture (Rust), and nothing is written if any check fails.
DO $$ BEGIN EXECUTE pg_catalog.replace($ddl$
CREATE FUNCTION memory_fabric.capture_memory(
    tenant_id       text,
    text            text,
    source          text,
    classification  text,
    user_id         text             DEFAULT NULL,
    intent_id       text             DEFAULT NULL,
    evidence_refs   jsonb            DEFAULT '[]',
    entity          text             DEFAULT NULL,
    predicate       text             DEFAULT NULL,
    value           jsonb            DEFAULT NULL,
    write_class     text             DEFAULT NULL,
    confidence      double precision DEFAULT NULL,
    actor           text             DEFAULT NULL,
    embedding       @pgvector@.vector DEFAULT NULL,
    embedding_model text             DEFAULT NULL,
    supersedes      text             DEFAULT NULL,
    metadata        jsonb            DEFAULT '{}'
) RETURNS memory_fabric.candidates
LANGUAGE plpgsql VOLATILE
AS $body$
#variable_conflict use_variable
DECLARE
    v_id  text;
    v_row memory_fabric.candidates;
BEGIN
    v_id := memory_fabric._capture(
        capture_memory.tenant_id, capture_memory.text, capture_memory.source,
        capture_memory.classification, capture_memory.user_id, capture_memory.intent_id,
        capture_memory.evidence_refs::text, capture_memory.entity, capture_memory.predicate,
        capture_memory.value::text, capture_memory.write_class, capture_memory.confidence,
        capture_memory.actor, capture_memory.embedding::real[], capture_memory.embedding_model,
        capture_memory.supersedes, capture_memory.metadata::text);
    SELECT * INTO STRICT v_row FROM memory_fabric.candidates AS c WHERE c.id = v_id;
    RETURN v_row;
END
$body$
$ddl$, '@pgvector@', memory_fabric._pgvector_schema()); END $$;
COMMENT ON FUNCTION memory_fabric.capture_memory IS
    'Capture anything into the append-only candidates log: validated, redacted, hashed, embedded';

-- The pipeline. Each public function is a thin PL/pgSQL shell over an internal Rust function
-- that does the work and returns the id of the row it wrote; the shell returns that row.

CREATE FUNCTION memory_fabric.review_candidate(candidate_id text)
RETURNS memory_fabric.reviews
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_id  text := memory_fabric._review(review_candidate.candidate_id);
    v_row memory_fabric.reviews;
BEGIN
    SELECT * INTO STRICT v_row FROM memory_fabric.reviews AS r WHERE r.id = v_id;
    RETURN v_row;
END
$$;
COMMENT ON FUNCTION memory_fabric.review_candidate IS
    'Review a candidate: trust, dedup, contradiction, tier and priority; queue durable ones for a human';

CREATE FUNCTION memory_fabric.promote(candidate_id text, approver text DEFAULT NULL)
RETURNS memory_fabric.promoted_memory
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_id  text := memory_fabric._promote(promote.candidate_id, promote.approver);
    v_row memory_fabric.promoted_memory;
BEGIN
    SELECT * INTO STRICT v_row FROM memory_fabric.promoted_memory AS m WHERE m.id = v_id;
    RETURN v_row;
END
$$;
COMMENT ON FUNCTION memory_fabric.promote IS
    'Promote a reviewed candidate: the only way into promoted_memory';

CREATE FUNCTION memory_fabric.approve(candidate_id text, approver text, notes text DEFAULT NULL)
RETURNS memory_fabric.promoted_memory
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_id  text := memory_fabric._approve(approve.candidate_id, approve.approver, approve.notes);
    v_row memory_fabric.promoted_memory;
BEGIN
    SELECT * INTO STRICT v_row FROM memory_fabric.promoted_memory AS m WHERE m.id = v_id;
    RETURN v_row;
END
$$;
COMMENT ON FUNCTION memory_fabric.approve IS
    'Approve a queued candidate (the approver must differ from its actor) and promote it';

CREATE FUNCTION memory_fabric.reject(candidate_id text, approver text, reason text)
RETURNS memory_fabric.decisions
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_id  text := memory_fabric._reject(reject.candidate_id, reject.approver, reject.reason);
    v_row memory_fabric.decisions;
BEGIN
    SELECT * INTO STRICT v_row FROM memory_fabric.decisions AS d WHERE d.id = v_id;
    RETURN v_row;
END
$$;
COMMENT ON FUNCTION memory_fabric.reject IS 'Reject a candidate; it can never be promoted';

CREATE FUNCTION memory_fabric.edit(candidate_id text, editor text, text text,
                                   classification text DEFAULT NULL, evidence_refs jsonb DEFAULT NULL,
                                   value jsonb DEFAULT NULL, notes text DEFAULT NULL)
RETURNS memory_fabric.reviews
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_id  text := memory_fabric._edit(edit.candidate_id, edit.editor, edit.text, edit.classification,
                                      edit.evidence_refs::text, edit.value::text, edit.notes);
    v_row memory_fabric.reviews;
BEGIN
    SELECT * INTO STRICT v_row FROM memory_fabric.reviews AS r WHERE r.id = v_id;
    RETURN v_row;
END
$$;
COMMENT ON FUNCTION memory_fabric.edit IS
    'Capture an edited candidate that supersedes this one, and review it';

CREATE FUNCTION memory_fabric.retract(memory_id text, reason text, retracted_by text)
RETURNS memory_fabric.promoted_memory
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_id  text := memory_fabric._retract(retract.memory_id, retract.reason, retract.retracted_by);
    v_row memory_fabric.promoted_memory;
BEGIN
    SELECT * INTO STRICT v_row FROM memory_fabric.promoted_memory AS m WHERE m.id = v_id;
    RETURN v_row;
END
$$;
COMMENT ON FUNCTION memory_fabric.retract IS
    'Retract a memory (never deleted); its duplicates go back to the human queue';

-- The human review queue: candidates whose effective review waits for a human decision.
CREATE VIEW memory_fabric.review_queue WITH (security_invoker = true) AS
SELECT r.tenant_id, r.candidate_id, r.id AS review_id, c.user_id, c.intent_id, r.proposed_tier,
       c.text AS proposed_text, c.evidence_refs, c.classification, c.source, c.actor,
       r.priority_score, r.reason, r.status, r.contradicts_id, r.contradiction_resolution,
       r.reviewed_at AS enqueued_at
FROM memory_fabric.reviews r
JOIN memory_fabric.candidates c ON c.id = r.candidate_id
WHERE r.reviewer = 'human'
  AND NOT EXISTS (SELECT 1 FROM memory_fabric.reviews n
                  WHERE n.candidate_id = r.candidate_id AND (n.reviewed_at, n.id) > (r.reviewed_at, r.id))
  AND NOT EXISTS (SELECT 1 FROM memory_fabric.decisions d
                  WHERE d.candidate_id = r.candidate_id AND d.decided_at >= r.reviewed_at)
  AND NOT EXISTS (SELECT 1 FROM memory_fabric.promoted_memory p WHERE p.candidate_id = r.candidate_id);
COMMENT ON VIEW memory_fabric.review_queue IS 'Candidates waiting for a human approve / reject / edit';

-- recall: the only read path. Its body names pgvector's schema, fixed here at install time, so it
-- does not depend on the caller's search_path. It records what it returned when
-- memory_fabric.log_recalls is on.
--
-- The filters (%2$s below) are written once and used by every query of the body.
-- Without a query the order is priority DESC, promoted_at DESC, id: the user's memories and the
-- user-less ones are read in that order from promoted_recall and promoted_recall_userless, each
-- stopping after max_recalls rows (WITH TIES, so the id tie-break stays exact), and merged. A
-- recall without a query reads a few index entries whatever the size of the scope.
DO $install$
DECLARE
    vs  text := memory_fabric._pgvector_schema();
    flt text := $flt$
          AND (m.intent_scope IS NULL OR m.intent_scope = recall.intent_id)
          AND m.promoted_at <= t
          AND (m.retracted_at IS NULL OR m.retracted_at > t)
          AND (m.expires_at IS NULL OR m.expires_at > t)
          AND m.classification = ANY (recall.classification_allowed)
          AND (m.consent_id IS NULL OR EXISTS (
                SELECT 1 FROM memory_fabric.consents k
                WHERE k.id = m.consent_id AND k.captured_at <= t
                  AND (k.revoked_at IS NULL OR k.revoked_at > t)
                  AND (k.valid_until IS NULL OR k.valid_until > t)))$flt$;
    -- recall with a query reads its scope in eight index ranges: the user's or the user-less
    -- rows, cross-intent or of the intent, each from promoted_scope_vectors or (too wide for it)
    -- through promoted_scope_wide; one template (%3$s below) writes them all
    scope_parts text := (
        SELECT string_agg(format($part$                      SELECT p.id, p.priority, p.promoted_at, p.embedding, p.embedding_model, p.intent_scope, p.retracted_at,
                             p.expires_at, p.classification, p.consent_id
                      FROM memory_fabric.promoted_memory p WHERE p.tenant_id = recall.tenant_id
                          AND %s AND %s
                          AND %smemory_fabric._scope_fits(p.tenant_id, p.user_id, p.intent_scope, p.embedding_model, p.id,
                                                      p.classification, p.consent_id, p.embedding)$part$, u.c, i.c, f.c),
                          E'\n                      UNION ALL\n' ORDER BY u.o, i.o, f.o)
        FROM (VALUES (1, 'p.user_id = recall.user_id'), (2, 'p.user_id IS NULL')) u(o, c),
             (VALUES (1, 'p.intent_scope IS NULL'), (2, 'p.intent_scope = recall.intent_id')) i(o, c),
             (VALUES (1, ''), (2, 'NOT ')) f(o, c));
BEGIN
    EXECUTE format($fn$
CREATE FUNCTION memory_fabric.recall(
    tenant_id              text,
    intent_id              text,
    user_id                text        DEFAULT NULL,
    max_recalls            integer     DEFAULT 8,
    classification_allowed text[]      DEFAULT ARRAY['PUBLIC', 'INTERNAL'],
    query_text             text        DEFAULT NULL,
    query_embedding        %1$s.vector DEFAULT NULL,
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
-- the security pass below sets the same; written here too, so that the upgrade's
-- CREATE OR REPLACE keeps them (its statements are planned once per session, see 0.4.0)
SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET plan_cache_mode = force_generic_plan
AS $body$
#variable_conflict use_column
DECLARE
    t         timestamptz := coalesce(recall.as_of, pg_catalog.clock_timestamp());
    s         double precision[];
    q_builtin real[];
    q_sem     real[];
    q_fn      real[];
    q_fn_mod  text;
    has_query boolean := recall.query_text IS NOT NULL OR recall.query_embedding IS NOT NULL;
    reg_dims  integer;
    top_ids   text[];
    top_rel   double precision[];
    top_sco   double precision[];
    q_b       %1$s.vector;
    q_s       %1$s.vector;
    q_f       %1$s.vector;
BEGIN
    IF recall.tenant_id IS NULL OR pg_catalog.btrim(recall.tenant_id) = '' THEN
        RAISE EXCEPTION 'tenant_id must not be null or empty' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF recall.max_recalls IS NULL OR recall.max_recalls < 1 OR recall.max_recalls > 1000 THEN
        RAISE EXCEPTION 'max_recalls must be between 1 and 1000' USING ERRCODE = 'invalid_parameter_value',
            DETAIL = format('%%s was given.', coalesce(recall.max_recalls::text, 'NULL'));
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
        SELECT dimensions INTO reg_dims FROM memory_fabric.embedding_models m
        WHERE m.tenant_id = recall.tenant_id AND m.model = recall.query_embedding_model;
        IF recall.query_embedding_model IN ('memory_fabric/hash-384-v1', 'sentence-transformers/all-MiniLM-L6-v2') THEN
            reg_dims := 384;
        END IF;
        IF reg_dims IS NOT NULL AND reg_dims <> %1$s.vector_dims(recall.query_embedding) THEN
            RAISE EXCEPTION 'query_embedding has %% dimensions, expected %%',
                %1$s.vector_dims(recall.query_embedding), reg_dims USING ERRCODE = 'invalid_parameter_value';
        END IF;
    END IF;

    IF recall.query_text IS NOT NULL THEN
        SELECT e.builtin, e.semantic, e.function_embedding, e.function_model INTO q_builtin, q_sem, q_fn, q_fn_mod
        FROM memory_fabric._embed_query(recall.tenant_id, recall.query_text) e;
    END IF;

    IF NOT has_query THEN
        SELECT coalesce(array_agg(x.id ORDER BY x.priority DESC, x.promoted_at DESC, x.id), '{}') INTO top_ids
        FROM (SELECT u.id, u.priority, u.promoted_at
              FROM ((SELECT m.id, m.priority, m.promoted_at FROM memory_fabric.promoted_memory m
                     WHERE m.tenant_id = recall.tenant_id AND m.user_id = recall.user_id %2$s
                     ORDER BY m.priority DESC, m.promoted_at DESC FETCH FIRST recall.max_recalls ROWS WITH TIES)
                    UNION ALL
                    (SELECT m.id, m.priority, m.promoted_at FROM memory_fabric.promoted_memory m
                     WHERE m.tenant_id = recall.tenant_id AND m.user_id IS NULL %2$s
                     ORDER BY m.priority DESC, m.promoted_at DESC FETCH FIRST recall.max_recalls ROWS WITH TIES)) u
              ORDER BY u.priority DESC, u.promoted_at DESC, u.id
              LIMIT recall.max_recalls) x;
    ELSE
        -- With a query every live row in scope is scored: the user's and the user-less rows,
        -- cross-intent or of the intent, each read from promoted_scope_vectors (index-only, in
        -- scope order) or, for the rows too wide for it, through promoted_scope_wide. The
        -- distance is computed once per row (OFFSET 0 keeps the planner from copying it into
        -- the score), and the score floor is applied to the top rows only, which is the same:
        -- the rows are ordered by score first.
        -- (Scoring candidates instead, the first rows by priority and the nearest by an HNSW
        -- search within the scope filters, was slower on 1M memories: the filtered index search
        -- alone took 54 ms a call, measured with pg_stat_statements.)
        q_b := q_builtin::%1$s.vector;
        q_s := q_sem::%1$s.vector;
        q_f := q_fn::%1$s.vector;
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
                                WHEN m.embedding_model = 'memory_fabric/hash-384-v1' AND q_b IS NOT NULL
                                    THEN 1 - (m.embedding OPERATOR(%1$s.<=>) q_b)
                                WHEN m.embedding_model = 'sentence-transformers/all-MiniLM-L6-v2' AND q_s IS NOT NULL
                                    THEN 1 - (m.embedding OPERATOR(%1$s.<=>) q_s)
                                WHEN m.embedding_model = q_fn_mod
                                    THEN 1 - (m.embedding OPERATOR(%1$s.<=>) q_f)
                                WHEN m.embedding_model = recall.query_embedding_model
                                    THEN 1 - (m.embedding OPERATOR(%1$s.<=>) recall.query_embedding)
                           END AS rel
                    FROM (
%3$s) m
                    WHERE true %2$s
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
            SELECT coalesce(array_agg(o.id ORDER BY o.id), '{}') AS ids
            FROM memory_fabric.promoted_memory o
            WHERE o.tenant_id = m.tenant_id AND (o.id = m.contradicts_id OR o.contradicts_id = m.id)
              -- only conflicts this recall could see itself
              AND (o.user_id IS NULL OR o.user_id = recall.user_id)
              AND (o.intent_scope IS NULL OR o.intent_scope = recall.intent_id)
              AND o.classification = ANY (recall.classification_allowed)
              AND o.promoted_at <= t AND (o.retracted_at IS NULL OR o.retracted_at > t)
              AND (o.expires_at IS NULL OR o.expires_at > t)) x
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
$body$
$fn$, vs, flt, scope_parts);
END
$install$;
COMMENT ON FUNCTION memory_fabric.recall IS
    'Recall promoted memories for a tenant, user, intent and classification set, now or as of an instant';

CREATE FUNCTION memory_fabric.grant_tenant(role text, tenant_id text)
RETURNS memory_fabric.tenant_grants
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_id  text := memory_fabric._grant_tenant(grant_tenant.role, grant_tenant.tenant_id);
    v_row memory_fabric.tenant_grants;
BEGIN
    SELECT * INTO STRICT v_row FROM memory_fabric.tenant_grants AS g WHERE g.id = v_id;
    RETURN v_row;
END
$$;
COMMENT ON FUNCTION memory_fabric.grant_tenant IS
    'Let a role (and its members) act for a tenant, or every tenant with ''*'' (superuser only)';

CREATE FUNCTION memory_fabric.revoke_tenant(role text, tenant_id text)
RETURNS memory_fabric.tenant_grants
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_id  text := memory_fabric._revoke_tenant(revoke_tenant.role, revoke_tenant.tenant_id);
    v_row memory_fabric.tenant_grants;
BEGIN
    SELECT * INTO STRICT v_row FROM memory_fabric.tenant_grants AS g WHERE g.id = v_id;
    RETURN v_row;
END
$$;
COMMENT ON FUNCTION memory_fabric.revoke_tenant IS 'Withdraw a tenant grant (kept, marked revoked)';

-- ---------------------------------------------------------------------------------------------
-- Security. Everything below is also what the 0.1.0 → 0.2.0 upgrade script applies.

-- The three roles, created if missing (roles are cluster-wide and outlive the extension).
DO $$
DECLARE
    r text;
BEGIN
    FOREACH r IN ARRAY ARRAY['memory_fabric_agent', 'memory_fabric_reviewer', 'memory_fabric_admin'] LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = r) THEN
            EXECUTE format('CREATE ROLE %I NOLOGIN', r);
        END IF;
    END LOOP;
END
$$;

-- SECURITY DEFINER, and why: ordinary roles hold no INSERT/UPDATE/DELETE/TRUNCATE on any table,
-- so every write (and the row each function returns) goes through these functions with the
-- extension owner's rights. Each checks on entry that the calling role may act for the tenant
-- (grant + pin, memory_fabric/src/security.rs); search_path is pinned so nothing a caller plants
-- in a schema can stand in for a built-in, and every body names its objects with their schema.
ALTER FUNCTION memory_fabric.capture_memory SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION memory_fabric.review_candidate(text) SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION memory_fabric.promote(text, text) SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION memory_fabric.approve(text, text, text) SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION memory_fabric.reject(text, text, text) SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION memory_fabric.edit(text, text, text, text, jsonb, jsonb, text)
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION memory_fabric.retract(text, text, text) SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION memory_fabric.grant_tenant(text, text) SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION memory_fabric.revoke_tenant(text, text) SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
-- recall reads across the tables to assemble one tenant's rows after the same entry check.
ALTER FUNCTION memory_fabric.recall SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
-- _visible_tenant is SECURITY DEFINER (declared in Rust) because the row-level security policies,
-- which run as the querying role, must read tenant_grants, which that role cannot.
-- Every other function runs as its caller: the internal ones are reached only through the
-- functions above (or by superusers), and the trigger functions only raise.
DO $$
DECLARE
    f regprocedure;
BEGIN
    FOR f IN SELECT p.oid::regprocedure FROM pg_catalog.pg_proc p
             WHERE p.pronamespace = 'memory_fabric'::regnamespace
               AND NOT EXISTS (SELECT 1 FROM unnest(p.proconfig) c WHERE c LIKE 'search_path=%') LOOP
        EXECUTE format('ALTER FUNCTION %s SET search_path = pg_catalog, pg_temp', f);
    END LOOP;
END
$$;

-- PUBLIC gets nothing; each role gets exactly what its job needs.
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA memory_fabric FROM PUBLIC;
REVOKE ALL ON ALL TABLES IN SCHEMA memory_fabric FROM PUBLIC;
GRANT USAGE ON SCHEMA memory_fabric TO memory_fabric_agent, memory_fabric_reviewer, memory_fabric_admin;
-- agent: capture, review and promote what needs no human, recall.
GRANT EXECUTE ON FUNCTION memory_fabric.capture_memory,
    memory_fabric.review_candidate(text), memory_fabric.promote(text, text)
    TO memory_fabric_agent, memory_fabric_reviewer, memory_fabric_admin;
-- reviewer: the queue and its decisions.
GRANT EXECUTE ON FUNCTION memory_fabric.approve(text, text, text), memory_fabric.reject(text, text, text),
    memory_fabric.edit(text, text, text, text, jsonb, jsonb, text)
    TO memory_fabric_reviewer, memory_fabric_admin;
GRANT SELECT ON memory_fabric.review_queue, memory_fabric.candidates, memory_fabric.reviews,
    memory_fabric.decisions, memory_fabric.promoted_memory
    TO memory_fabric_reviewer, memory_fabric_admin;
-- admin: retraction, tenant grants, and reading every table (of its tenants).
GRANT EXECUTE ON FUNCTION memory_fabric.retract(text, text, text), memory_fabric.grant_tenant(text, text),
    memory_fabric.revoke_tenant(text, text)
    TO memory_fabric_admin;
GRANT SELECT ON ALL TABLES IN SCHEMA memory_fabric TO memory_fabric_admin;
-- The policies below call it as whichever role queries a table, so every role may: it only
-- answers whether the caller itself may read the pinned tenant.
GRANT EXECUTE ON FUNCTION memory_fabric._visible_tenant() TO PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric.recall TO memory_fabric_agent, memory_fabric_reviewer, memory_fabric_admin;

-- The role that installed the extension administers its data (dump and restore, as a
-- non-superuser owner too): every privilege on the tables and a policy that lets it see and
-- restore every row. The append-only guards hold for it as for everyone.
GRANT ALL ON ALL TABLES IN SCHEMA memory_fabric TO @extowner@;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA memory_fabric TO @extowner@;

-- Row-level security, enabled and forced on every table. For everyone else only SELECT has a
-- policy: rows of the pinned tenant, to a role granted that tenant. No pin, an empty pin or no
-- grant: nothing. The tenant is memory_fabric._visible_tenant(): the pin as the statement first
-- found it, checked against the grant for that same value, so a pin changed inside the statement
-- (set_config in a subquery) shows nothing more. With no INSERT/UPDATE/DELETE policy, even a role mistakenly granted those
-- privileges cannot write.
DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['candidates', 'embedding_models', 'reviews', 'decisions', 'consents',
                             'promoted_memory', 'events', 'tenant_grants', 'policies'] LOOP
        EXECUTE format('ALTER TABLE memory_fabric.%I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE memory_fabric.%I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY tenant_read ON memory_fabric.%I FOR SELECT USING (%s)', t,
            CASE WHEN t = 'policies' THEN 'tenant_id = ''*'' OR ' ELSE '' END ||
            'tenant_id = (SELECT memory_fabric._visible_tenant())');
    END LOOP;
END
$$;
CREATE POLICY owner_all ON memory_fabric.candidates FOR ALL TO @extowner@ USING (true) WITH CHECK (true);
CREATE POLICY owner_all ON memory_fabric.embedding_models FOR ALL TO @extowner@ USING (true) WITH CHECK (true);
CREATE POLICY owner_all ON memory_fabric.reviews FOR ALL TO @extowner@ USING (true) WITH CHECK (true);
CREATE POLICY owner_all ON memory_fabric.decisions FOR ALL TO @extowner@ USING (true) WITH CHECK (true);
CREATE POLICY owner_all ON memory_fabric.consents FOR ALL TO @extowner@ USING (true) WITH CHECK (true);
CREATE POLICY owner_all ON memory_fabric.promoted_memory FOR ALL TO @extowner@ USING (true) WITH CHECK (true);
CREATE POLICY owner_all ON memory_fabric.events FOR ALL TO @extowner@ USING (true) WITH CHECK (true);
CREATE POLICY owner_all ON memory_fabric.tenant_grants FOR ALL TO @extowner@ USING (true) WITH CHECK (true);
CREATE POLICY owner_all ON memory_fabric.policies FOR ALL TO @extowner@ USING (true) WITH CHECK (true);

-- 0.3.0: governance. Consent, policies, erasure, replay and metrics.

CREATE FUNCTION memory_fabric.record_consent(
    tenant_id text, subject text, purpose text, basis text,
    predicates_allowed text[] DEFAULT '{}', classifications_allowed text[] DEFAULT '{}',
    valid_until timestamptz DEFAULT NULL, evidence_refs jsonb DEFAULT '[]', auditor_id text DEFAULT NULL,
    supersedes text DEFAULT NULL)
RETURNS memory_fabric.consents
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_id  text := memory_fabric._record_consent(record_consent.tenant_id, record_consent.subject,
        record_consent.purpose, record_consent.basis, record_consent.predicates_allowed,
        record_consent.classifications_allowed, record_consent.valid_until, record_consent.evidence_refs::text,
        record_consent.auditor_id, record_consent.supersedes);
    v_row memory_fabric.consents;
BEGIN
    SELECT * INTO STRICT v_row FROM memory_fabric.consents AS k WHERE k.id = v_id;
    RETURN v_row;
END
$$;
COMMENT ON FUNCTION memory_fabric.record_consent IS
    'Record a consent (seed 001): subject, purpose, predicates and classifications allowed, basis, validity';

CREATE FUNCTION memory_fabric.revoke_consent(consent_id text, reason text)
RETURNS memory_fabric.consents
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_id  text := memory_fabric._revoke_consent(revoke_consent.consent_id, revoke_consent.reason);
    v_row memory_fabric.consents;
BEGIN
    SELECT * INTO STRICT v_row FROM memory_fabric.consents AS k WHERE k.id = v_id;
    RETURN v_row;
END
$$;
COMMENT ON FUNCTION memory_fabric.revoke_consent IS
    'Revoke a consent and retract every memory that depended on it';

CREATE FUNCTION memory_fabric.set_policy(tenant_id text, patch jsonb, note text DEFAULT NULL)
RETURNS memory_fabric.policies
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_version integer := memory_fabric._set_policy(set_policy.tenant_id, set_policy.patch::text, set_policy.note);
    v_row     memory_fabric.policies;
BEGIN
    SELECT * INTO STRICT v_row FROM memory_fabric.policies AS p WHERE p.version = v_version;
    RETURN v_row;
END
$$;
COMMENT ON FUNCTION memory_fabric.set_policy IS
    'Write a new policy version: the policy in force with the patch merged in, validated first';

CREATE FUNCTION memory_fabric.forget_subject(tenant_id text, user_id text, reason text)
RETURNS TABLE (candidates_erased bigint, memories_erased bigint)
LANGUAGE sql VOLATILE
AS $$
    SELECT r[1], r[2] FROM memory_fabric._forget_subject(forget_subject.tenant_id, forget_subject.user_id,
                                                         forget_subject.reason) AS r
$$;
COMMENT ON FUNCTION memory_fabric.forget_subject IS
    'Erasure: replace a subject''s captured content with tombstones, keeping ids, times, hashes and audit';

CREATE FUNCTION memory_fabric.purge_expired(tenant_id text, batch_size integer DEFAULT 1000)
RETURNS bigint
LANGUAGE sql VOLATILE
AS $$ SELECT memory_fabric._purge_expired(purge_expired.tenant_id, purge_expired.batch_size) $$;
COMMENT ON FUNCTION memory_fabric.purge_expired IS
    'Tombstone the content of memories expired longer ago than their write class''s retention';

-- Replay: why one memory was visible or hidden to a recall at an instant.
CREATE FUNCTION memory_fabric.explain_recall(
    tenant_id text, memory_id text, intent_id text DEFAULT NULL, user_id text DEFAULT NULL,
    classification_allowed text[] DEFAULT ARRAY['PUBLIC', 'INTERNAL'], as_of timestamptz DEFAULT NULL)
RETURNS TABLE (visible boolean, reasons text[], memory text, at timestamptz)
LANGUAGE plpgsql VOLATILE
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
    RETURN QUERY SELECT pg_catalog.cardinality(r) = 0, r, m.text, t;
END
$$;
COMMENT ON FUNCTION memory_fabric.explain_recall IS
    'Whether a memory was visible to a recall at an instant, and every reason it was hidden';

-- Replay: the whole life of a candidate or memory, in order.
CREATE FUNCTION memory_fabric.memory_history(id text)
RETURNS TABLE (at timestamptz, stage text, ref text, detail jsonb)
LANGUAGE plpgsql VOLATILE
AS $$
#variable_conflict use_variable
DECLARE
    cand memory_fabric.candidates;
    mem  text;
BEGIN
    SELECT c.* INTO cand FROM memory_fabric.candidates c
    WHERE c.id = memory_history.id
       OR c.id = (SELECT p.candidate_id FROM memory_fabric.promoted_memory p WHERE p.id = memory_history.id);
    IF NOT FOUND THEN
        RAISE EXCEPTION 'candidate or memory "%" does not exist', memory_history.id USING ERRCODE = 'no_data_found';
    END IF;
    -- another tenant's id gives the very error an unknown one gives
    PERFORM memory_fabric._require_row_tenant(cand.tenant_id,
        pg_catalog.format('candidate or memory "%s" does not exist', memory_history.id));
    SELECT p.id INTO mem FROM memory_fabric.promoted_memory p WHERE p.candidate_id = cand.id;
    RETURN QUERY
    SELECT h.at, h.stage, h.ref, h.detail FROM (
        SELECT cand.captured_at AS at, 1 AS o, 'captured' AS stage, cand.id AS ref,
               jsonb_build_object('source', cand.source, 'actor', cand.actor, 'role', cand.captured_by,
                                  'classification', cand.classification, 'text', cand.text,
                                  'redactions', cand.redaction_count, 'supersedes', cand.supersedes) AS detail
        UNION ALL
        SELECT r.reviewed_at, 2, 'reviewed', r.id,
               jsonb_strip_nulls(jsonb_build_object('status', r.status, 'tier', r.proposed_tier, 'priority', r.priority_score,
                   'reviewer', r.reviewer, 'reason', r.reason, 'duplicate_of', r.duplicate_of_id,
                   'contradicts', r.contradicts_id, 'resolution', r.contradiction_resolution,
                   'consent_id', r.consent_id, 'rejection_of', r.rejection_of_id, 'policy_version', r.policy_version,
                   'role', r.reviewed_by))
        FROM memory_fabric.reviews r WHERE r.candidate_id = cand.id
        UNION ALL
        SELECT d.decided_at, 3, 'decided', d.id,
               jsonb_strip_nulls(jsonb_build_object('action', d.action, 'by', d.decided_by, 'role', d.decided_by_role,
                                                    'notes', d.notes, 'new_candidate', d.new_candidate_id))
        FROM memory_fabric.decisions d WHERE d.candidate_id = cand.id
        UNION ALL
        SELECT p.promoted_at, 4, 'promoted', p.id,
               jsonb_strip_nulls(jsonb_build_object('tier', p.tier, 'priority', p.priority, 'by', p.promoted_by,
                   'role', p.promoted_by_role, 'expires_at', p.expires_at, 'supersedes', p.supersedes_id,
                   'consent_id', p.consent_id))
        FROM memory_fabric.promoted_memory p WHERE p.id = mem
        UNION ALL
        SELECT p.retracted_at, 5, 'retracted', p.id,
               jsonb_build_object('by', p.retracted_by, 'reason', p.retraction_reason)
        FROM memory_fabric.promoted_memory p WHERE p.id = mem AND p.retracted_at IS NOT NULL
        UNION ALL
        SELECT x.erased_at, 6, 'erased', x.id, '{}'::jsonb
        FROM (SELECT cand.id, cand.erased_at UNION ALL
              SELECT p.id, p.erased_at FROM memory_fabric.promoted_memory p WHERE p.id = mem) x
        WHERE x.erased_at IS NOT NULL
        UNION ALL
        SELECT e.created_at, 7, 'event ' || e.kind, e.id, e.payload
        FROM memory_fabric.events e WHERE e.subject_id IN (cand.id, mem)
    ) h
    ORDER BY h.at, h.o, h.ref;
END
$$;
COMMENT ON FUNCTION memory_fabric.memory_history IS
    'A candidate''s or memory''s life: capture, reviews, decisions, promotion, retraction, erasure, events';

-- The evaluation metrics, per tenant (row-level security applies: an admin sees the
-- pinned tenant).
CREATE VIEW memory_fabric.metrics WITH (security_invoker = true) AS
WITH eff AS (
    SELECT DISTINCT ON (r.candidate_id) r.tenant_id, r.candidate_id, r.status, r.contradiction_resolution, r.reviewed_at
    FROM memory_fabric.reviews r ORDER BY r.candidate_id, r.reviewed_at DESC, r.id DESC
), resolved AS (
    -- a contradiction is resolved by the promotion, rejection or edit of the candidate that raised it
    SELECT e.tenant_id, min(coalesce(p.promoted_at, d.decided_at)) - min(cr.reviewed_at) AS took
    FROM memory_fabric.reviews cr
    JOIN eff e ON e.candidate_id = cr.candidate_id
    LEFT JOIN memory_fabric.promoted_memory p ON p.candidate_id = cr.candidate_id
    LEFT JOIN memory_fabric.decisions d ON d.candidate_id = cr.candidate_id AND d.action IN ('reject', 'edit')
    WHERE cr.status = 'contradicts' AND (p.id IS NOT NULL OR d.id IS NOT NULL)
    GROUP BY e.tenant_id, cr.candidate_id
)
SELECT t.tenant_id,
       (SELECT count(*) FROM memory_fabric.candidates c WHERE c.tenant_id = t.tenant_id) AS captures,
       (SELECT coalesce(jsonb_object_agg(v.status, v.n), '{}') FROM (
            SELECT e.status, count(*) AS n FROM eff e WHERE e.tenant_id = t.tenant_id GROUP BY e.status) v) AS verdicts,
       (SELECT count(*) FROM memory_fabric.review_queue q WHERE q.tenant_id = t.tenant_id) AS queue_depth,
       (SELECT pg_catalog.clock_timestamp() - min(q.enqueued_at) FROM memory_fabric.review_queue q
        WHERE q.tenant_id = t.tenant_id) AS oldest_queued_age,
       (SELECT count(*) FROM eff e WHERE e.tenant_id = t.tenant_id AND e.status = 'contradicts'
          AND NOT EXISTS (SELECT 1 FROM memory_fabric.promoted_memory p WHERE p.candidate_id = e.candidate_id)
          AND NOT EXISTS (SELECT 1 FROM memory_fabric.decisions d WHERE d.candidate_id = e.candidate_id
                          AND d.action IN ('reject', 'edit'))) AS contradiction_backlog,
       (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY r.took) FROM resolved r WHERE r.tenant_id = t.tenant_id)
           AS median_contradiction_resolution,
       (SELECT coalesce(jsonb_object_agg(v.tier, v.n), '{}') FROM (
            SELECT p.tier, count(*) AS n FROM memory_fabric.promoted_memory p WHERE p.tenant_id = t.tenant_id
            GROUP BY p.tier) v) AS promotions_by_tier,
       (SELECT count(*) FROM memory_fabric.promoted_memory p WHERE p.tenant_id = t.tenant_id
          AND p.promoted_by = 'auto') AS promotions_auto,
       (SELECT count(*) FROM memory_fabric.promoted_memory p WHERE p.tenant_id = t.tenant_id
          AND p.promoted_by <> 'auto') AS promotions_human,
       (SELECT count(*) FROM memory_fabric.recall_log l WHERE l.tenant_id = t.tenant_id) AS recalls,
       (SELECT avg((pg_catalog.cardinality(l.memory_ids) > 0)::int)::double precision FROM memory_fabric.recall_log l
        WHERE l.tenant_id = t.tenant_id) AS recall_hit_rate,
       (SELECT count(*) FROM memory_fabric.promoted_memory p, memory_fabric._consent_rule(t.tenant_id) rule
        WHERE p.tenant_id = t.tenant_id AND p.consent_id IS NULL
          AND p.classification = ANY (rule.classifications) AND p.write_class = ANY (rule.write_classes))
           AS pii_promoted_without_consent
FROM (SELECT DISTINCT c.tenant_id FROM memory_fabric.candidates c) t;
COMMENT ON VIEW memory_fabric.metrics IS 'The seeds'' evaluation metrics per tenant';

-- Security for what 0.3.0 adds, and again for what it replaced (CREATE OR REPLACE resets a
-- function's SECURITY DEFINER and SET clauses).
DO $$
DECLARE
    f text;
BEGIN
    FOREACH f IN ARRAY ARRAY[
        'memory_fabric.record_consent(text, text, text, text, text[], text[], timestamptz, jsonb, text, text)',
        'memory_fabric.revoke_consent(text, text)', 'memory_fabric.set_policy(text, jsonb, text)',
        'memory_fabric.forget_subject(text, text, text)', 'memory_fabric.purge_expired(text, integer)',
        'memory_fabric.explain_recall(text, text, text, text, text[], timestamptz)', 'memory_fabric.memory_history(text)',
        'memory_fabric.recall'] LOOP
        EXECUTE format('ALTER FUNCTION %s SECURITY DEFINER SET search_path = pg_catalog, pg_temp', f);
    END LOOP;
    FOR f IN SELECT p.oid::regprocedure::text FROM pg_catalog.pg_proc p
             WHERE p.pronamespace = 'memory_fabric'::regnamespace
               AND NOT EXISTS (SELECT 1 FROM unnest(p.proconfig) c WHERE c LIKE 'search_path=%') LOOP
        EXECUTE format('ALTER FUNCTION %s SET search_path = pg_catalog, pg_temp', f);
    END LOOP;
END
$$;
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA memory_fabric FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric._visible_tenant() TO PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric.explain_recall(text, text, text, text, text[], timestamptz),
    memory_fabric.memory_history(text)
    TO memory_fabric_reviewer, memory_fabric_admin;
GRANT EXECUTE ON FUNCTION
    memory_fabric.record_consent(text, text, text, text, text[], text[], timestamptz, jsonb, text, text),
    memory_fabric.revoke_consent(text, text), memory_fabric.set_policy(text, jsonb, text),
    memory_fabric.forget_subject(text, text, text), memory_fabric.purge_expired(text, integer)
    TO memory_fabric_admin;
-- the metrics view calls it as the querying role
GRANT EXECUTE ON FUNCTION memory_fabric._consent_rule(text) TO memory_fabric_admin;
GRANT SELECT ON memory_fabric.metrics, memory_fabric.recall_log TO memory_fabric_admin;
GRANT ALL ON ALL TABLES IN SCHEMA memory_fabric TO @extowner@;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA memory_fabric TO @extowner@;
ALTER TABLE memory_fabric.recall_log ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory_fabric.recall_log FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_read ON memory_fabric.recall_log FOR SELECT
    USING (tenant_id = (SELECT memory_fabric._visible_tenant()));
CREATE POLICY owner_all ON memory_fabric.recall_log FOR ALL TO @extowner@ USING (true) WITH CHECK (true);

-- 0.4.0 replaced recall; CREATE OR REPLACE resets SECURITY DEFINER and SET, so they are set again.
-- Its statements are planned once per session (generic plans): with custom plans, PostgreSQL
-- kept re-planning the final query on every call (1.6 ms instead of 2.95 ms p50 on 1M memories).
ALTER FUNCTION memory_fabric.recall
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET plan_cache_mode = force_generic_plan;

-- 0.6.0: long maintenance operations as procedures that commit after every batch. Each batch
-- is one transaction (memory_fabric._reembed_batch, memory_fabric._purge_expired_batch: SECURITY
-- DEFINER, checking the caller's tenant on every call), reported with a NOTICE, so a run that is
-- cancelled, times out or loses its connection keeps every batch before the one it was in, and
-- calling it again resumes: a batch only picks what is still to do.
-- A procedure that commits can be neither SECURITY DEFINER nor carry a SET clause, so these two
-- run as their caller (who gains nothing by planting objects on their own search_path) and
-- name everything with its schema. They must be CALLed outside a transaction block, with the
-- tenant pinned for the session (SET memory_fabric.tenant_id), since each COMMIT ends a
-- SET LOCAL.
CREATE PROCEDURE memory_fabric.reembed_memories(tenant_id text, batch_size integer DEFAULT 200)
LANGUAGE plpgsql
AS $$
#variable_conflict use_variable
DECLARE
    v_model text;
    v_total bigint;
    v_done  bigint := 0;
    v_n     integer;
BEGIN
    SELECT p.model, p.pending INTO v_model, v_total
    FROM memory_fabric._reembed_pending(reembed_memories.tenant_id, reembed_memories.batch_size) AS p;
    IF v_total = 0 THEN
        RAISE NOTICE 'every memory of tenant "%" is embedded with %', reembed_memories.tenant_id, v_model;
        RETURN;
    END IF;
    LOOP
        v_n := memory_fabric._reembed_batch(reembed_memories.tenant_id, v_model, reembed_memories.batch_size);
        EXIT WHEN v_n = 0;
        v_done := v_done + v_n;
        RAISE NOTICE '%', pg_catalog.format('re-embedded %s of %s memories of tenant "%s" with %s (%s%%)', v_done,
            greatest(v_total, v_done), reembed_memories.tenant_id, v_model, v_done * 100 / greatest(v_total, v_done));
        COMMIT;
    END LOOP;
END
$$;
COMMENT ON PROCEDURE memory_fabric.reembed_memories IS
    'Re-embed a tenant''s memories with the embedder capture uses now, committing after every batch (resumable)';

CREATE PROCEDURE memory_fabric.purge_expired_memories(tenant_id text, batch_size integer DEFAULT 1000)
LANGUAGE plpgsql
AS $$
#variable_conflict use_variable
DECLARE
    v_total bigint;
    v_done  bigint := 0;
    v_n     bigint;
BEGIN
    v_total := memory_fabric._purge_expired_pending(purge_expired_memories.tenant_id, purge_expired_memories.batch_size);
    IF v_total = 0 THEN
        RAISE NOTICE 'no memory of tenant "%" is due for purging', purge_expired_memories.tenant_id;
        RETURN;
    END IF;
    LOOP
        v_n := memory_fabric._purge_expired_batch(purge_expired_memories.tenant_id, purge_expired_memories.batch_size);
        EXIT WHEN v_n = 0;
        v_done := v_done + v_n;
        RAISE NOTICE '%', pg_catalog.format('purged %s of %s expired memories of tenant "%s" (%s%%)', v_done,
            greatest(v_total, v_done), purge_expired_memories.tenant_id, v_done * 100 / greatest(v_total, v_done));
        COMMIT;
    END LOOP;
END
$$;
COMMENT ON PROCEDURE memory_fabric.purge_expired_memories IS
    'Tombstone the content of expired memories past retention, committing after every batch (resumable)';

-- CREATE OR REPLACE (the upgrade's) resets the guard's settings; the fresh install set them above.
ALTER FUNCTION memory_fabric._guard_write_once() SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION memory_fabric._reembed_pending(text, integer) SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION memory_fabric._reembed_batch(text, text, integer) SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION memory_fabric._purge_expired_pending(text, integer) SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION memory_fabric._purge_expired_batch(text, integer) SET search_path = pg_catalog, pg_temp;
REVOKE ALL ON FUNCTION memory_fabric._reembed_pending(text, integer), memory_fabric._reembed_batch(text, text, integer),
    memory_fabric._purge_expired_pending(text, integer), memory_fabric._purge_expired_batch(text, integer) FROM PUBLIC;
REVOKE ALL ON PROCEDURE memory_fabric.reembed_memories(text, integer), memory_fabric.purge_expired_memories(text, integer)
    FROM PUBLIC;
-- admin: the procedures, and the batch functions they call as the caller
GRANT EXECUTE ON FUNCTION memory_fabric._reembed_pending(text, integer), memory_fabric._reembed_batch(text, text, integer),
    memory_fabric._purge_expired_pending(text, integer), memory_fabric._purge_expired_batch(text, integer)
    TO memory_fabric_admin;
GRANT EXECUTE ON PROCEDURE memory_fabric.reembed_memories(text, integer), memory_fabric.purge_expired_memories(text, integer)
    TO memory_fabric_admin;
GRANT EXECUTE ON FUNCTION memory_fabric._reembed_pending(text, integer), memory_fabric._reembed_batch(text, text, integer),
    memory_fabric._purge_expired_pending(text, integer), memory_fabric._purge_expired_batch(text, integer) TO @extowner@;
GRANT EXECUTE ON PROCEDURE memory_fabric.reembed_memories(text, integer), memory_fabric.purge_expired_memories(text, integer)
    TO @extowner@;

-- 0.7.0: the locks the pipeline serialises on (src/rows.rs, lock()): one row per key's hash,
-- row-locked until the transaction ends. Created after every GRANT ... ON ALL TABLES above: no
-- role but the owner of the extension's functions can read, write or lock it, so a role without
-- rights on a tenant can neither take a tenant's lock first nor learn its key.
CREATE TABLE memory_fabric.locks (key bigint PRIMARY KEY);
COMMENT ON TABLE memory_fabric.locks IS 'Keys the pipeline serialises on, as row locks; no role reads or locks them';
ALTER TABLE memory_fabric.locks ENABLE ROW LEVEL SECURITY;
ALTER TABLE memory_fabric.locks FORCE ROW LEVEL SECURITY;
REVOKE ALL ON memory_fabric.locks FROM PUBLIC;

-- 0.7.0: policy versions are numbered from a sequence across all tenants, so that one tenant's
-- set_policy() never waits for another's (it locks its own tenant only).
CREATE SEQUENCE memory_fabric.policy_versions AS integer START 2;
REVOKE ALL ON SEQUENCE memory_fabric.policy_versions FROM PUBLIC;
-- the extension's owner dumps and restores its value with the data
GRANT SELECT, UPDATE ON SEQUENCE memory_fabric.policy_versions TO @extowner@;
SELECT pg_catalog.pg_extension_config_dump('memory_fabric.policy_versions', '');
