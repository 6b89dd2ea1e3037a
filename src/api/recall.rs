//! `memory_fabric.recall()`: the only read path. The SQL function below filters and ranks; the
//! Rust helpers give it the tenant's weights and the query's embeddings, and log what it returned.

use crate::security::caller_name;
use pgrx::pg_sys::{BuiltinOid, PgOid};
use crate::embedder::embed_with_function;
use crate::error::raise;
use crate::gucs;
use crate::policy;
use crate::embedder;
use memory_fabric_core::{redact::Outcome, Error};
use crate::ids::new_id;
use crate::spi::{plan, TEXT, TEXT_ARRAY, INT4, TIMESTAMPTZ};
use pgrx::prelude::*;

/// [relevance weight, recency weight, importance weight, half-life in days, minimum score,
/// low-confidence threshold] from the policy in force for the tenant, once the caller is known to
/// act for it (42501 otherwise): recall's entry check and its settings in one call.
#[pg_extern(stable, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn _recall_settings(tenant_id: &str) -> Vec<f64> {
    let tenant_id = crate::args::require_tenant_id(Some(tenant_id));
    let tenant_id = tenant_id.as_str();
    Spi::connect(|client| {
        crate::security::require_tenant(client, tenant_id);
        let r = policy::for_tenant(client, tenant_id).policy.recall;
        vec![r.w_relevance, r.w_recency, r.w_importance, r.half_life_days, r.min_score, r.low_confidence]
    })
}

/// The query text embedded the way memories are: redacted with the tenant's rules, then by the
/// hashing built-in embedder (cheap, so memories embedded with it still score), by the semantic
/// one when it is the built-in model in force, and by the embedding function when one is
/// configured (with its model name).
#[pg_extern(volatile, parallel_unsafe)]
#[search_path(pg_catalog, pg_temp)]
fn _embed_query(
    tenant_id: &str,
    query_text: &str,
) -> TableIterator<
    'static,
    (
        name!(builtin, Vec<f32>),
        name!(semantic, Option<Vec<f32>>),
        name!(function_embedding, Option<Vec<f32>>),
        name!(function_model, Option<String>),
    ),
> {
    if query_text.len() > 1 << 20 {
        raise(Error::limit("query_text is too long").detail("At most 1 MB of query text is embedded."));
    }
    let row = Spi::connect(|client| {
        let pol = policy::for_tenant(client, tenant_id);
        let text = pol.redactor.redact_str(query_text, &mut Outcome::default());
        let hash = embedder::embed_with(embedder::HASH, &text);
        let semantic = (embedder::builtin_model() == embedder::SEMANTIC).then(|| embedder::embed_with(embedder::SEMANTIC, &text));
        let (f, m) = match gucs::get(&gucs::EMBEDDING_FUNCTION) {
            Some(func) => {
                let (v, m) = embed_with_function(client, &func, &text);
                (Some(v), Some(m))
            }
            None => (None, None),
        };
        (hash, semantic, f, m)
    });
    TableIterator::once(row)
}

const LOG: &str = "INSERT INTO memory_fabric.recall_log (id, tenant_id, role_name, intent_id, user_id, \
     classification_allowed, query_text, as_of, max_recalls, memory_ids, scores) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)";

/// Internal, called by recall: records what it returned when memory_fabric.log_recalls is on.
/// Skipped on a hot standby (nothing can be written there). The query text is redacted first.
#[allow(clippy::too_many_arguments)]
#[pg_extern(volatile, parallel_unsafe)]
#[search_path(pg_catalog, pg_temp)]
fn _log_recall(
    tenant_id: &str,
    intent_id: Option<&str>,
    user_id: Option<&str>,
    classification_allowed: Option<Vec<Option<String>>>,
    query_text: Option<&str>,
    as_of: Option<TimestampWithTimeZone>,
    max_recalls: i32,
    memory_ids: Option<Vec<Option<String>>>,
    scores: Option<Vec<Option<f64>>>,
) -> bool {
    if !gucs::LOG_RECALLS.get() || unsafe { pg_sys::RecoveryInProgress() } {
        return false;
    }
    Spi::connect_mut(|client| {
        let pol = policy::for_tenant(client, tenant_id);
        let query = query_text.map(|q| pol.redactor.redact_str(q, &mut Outcome::default()));
        let classes: Vec<String> = classification_allowed.unwrap_or_default().into_iter().flatten().collect();
        let ids: Vec<String> = memory_ids.unwrap_or_default().into_iter().flatten().collect();
        let scores: Option<Vec<f64>> = scores.map(|v| v.into_iter().map(|x| x.unwrap_or(f64::NAN)).collect());
        let p = plan(
            client,
            LOG,
            &[TEXT, TEXT, TEXT, TEXT, TEXT, TEXT_ARRAY, TEXT, TIMESTAMPTZ, INT4, TEXT_ARRAY, PgOid::BuiltIn(BuiltinOid::FLOAT8ARRAYOID)],
            true,
        );
        client
            .update(
                &*p,
                None,
                &[
                    new_id("rl").as_str().into(),
                    tenant_id.into(),
                    caller_name(client).as_str().into(),
                    intent_id.into(),
                    user_id.into(),
                    classes.into(),
                    query.as_deref().into(),
                    as_of.into(),
                    max_recalls.into(),
                    ids.into(),
                    scores.into(),
                ],
            )
            .unwrap_or_else(|e| error!("memory_fabric: cannot log recall: {e}"));
        true
    })
}

extension_sql!(
    r#"
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
REVOKE ALL ON FUNCTION memory_fabric.recall, memory_fabric._recall_settings(text), memory_fabric._embed_query(text, text),
    memory_fabric._log_recall FROM PUBLIC;
GRANT EXECUTE ON FUNCTION memory_fabric.recall TO memory_fabric_agent, memory_fabric_reviewer, memory_fabric_admin;
"#,
    name = "recall",
    requires = [_recall_settings, _embed_query, _log_recall],
);
