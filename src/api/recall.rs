//! `memory_fabric.recall()`: the only read path. The SQL function below filters and ranks; the
//! Rust helpers give it the tenant's weights and the query's embeddings, and log what it returned.

use crate::embedder::{self, embed_with_function};
use crate::error::raise;
use crate::gucs;
use crate::ids::new_id;
use crate::policy;
use crate::security::caller_name;
use crate::spi::{plan, INT4, TEXT, TEXT_ARRAY, TIMESTAMPTZ};
use memory_fabric_core::{redact::Outcome, Error};
use pgrx::pg_sys::{BuiltinOid, PgOid};
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
/// configured; each vector with the name of its model.
#[pg_extern(volatile, parallel_unsafe)]
#[search_path(pg_catalog, pg_temp)]
fn _embed_query(
    tenant_id: &str,
    query_text: &str,
) -> TableIterator<
    'static,
    (
        name!(builtin_model, String),
        name!(builtin, Vec<f32>),
        name!(semantic_model, Option<String>),
        name!(semantic, Option<Vec<f32>>),
        name!(function_model, Option<String>),
        name!(function_embedding, Option<Vec<f32>>),
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
                if let Some(sq) = memory_fabric_core::capture::degenerate_norm(&v) {
                    raise(Error::invalid("embedding function returned a vector with no usable norm for query_text")
                        .detail(format!("The sum of its squares is {sq:e} in single precision.")));
                }
                (Some(v), Some(m))
            }
            None => (None, None),
        };
        let semantic_model = semantic.is_some().then(|| embedder::SEMANTIC.to_owned());
        (embedder::HASH.to_owned(), hash, semantic_model, semantic, m, f)
    });
    TableIterator::once(row)
}

/// Recall's arguments that the tenant's register and the identifier rules decide, checked once
/// the caller is known to act for the tenant (22023): the user and intent ids hold no invisible
/// characters (memory_fabric_core::args::visible), and a query vector has a usable norm
/// (memory_fabric_core::capture::degenerate_norm), a model that is an identifier, and the
/// dimensions the tenant's first vector of that model registered (the built-in models' own).
#[pg_extern(stable, parallel_safe)]
#[search_path(pg_catalog, pg_temp)]
fn _check_recall(
    tenant_id: &str,
    user_id: Option<&str>,
    intent_id: Option<&str>,
    query_embedding_model: Option<&str>,
    query_embedding: Option<Vec<f32>>,
) {
    use memory_fabric_core::args::visible;
    use memory_fabric_core::capture::degenerate_norm;
    crate::security::require_intent(intent_id, false);
    for (field, v) in [("user_id", user_id), ("intent_id", intent_id), ("query_embedding_model", query_embedding_model)] {
        if let Some(v) = v {
            visible(field, v).unwrap_or_else(|e| raise(e));
        }
    }
    let (Some(model), Some(q)) = (query_embedding_model, query_embedding) else { return };
    if let Some(sq) = degenerate_norm(&q) {
        raise(Error::invalid("query_embedding has no usable norm")
            .detail(format!("The sum of its squares is {sq:e} in single precision; cosine similarity needs a positive normal number.")));
    }
    let want = Spi::connect(|client| embedder::known_dimensions(client, tenant_id, model));
    if let Some(d) = want {
        if d as usize != q.len() {
            raise(Error::invalid(format!("query_embedding has {} dimensions, expected {d}", q.len())));
        }
    }
}

/// The C symbol of 0.8.0 to 0.15.0, whose recall() asks it until ALTER EXTENSION UPDATE replaces
/// it (and drops its SQL function): the dimensions a query vector of `model` must have for the
/// tenant. No 0.16.0 object uses it (_check_recall() checks the query vector).
#[pg_extern(sql = false, stable, parallel_safe)]
fn _query_dimensions(tenant_id: &str, model: &str) -> Option<i32> {
    Spi::connect(|client| embedder::known_dimensions(client, tenant_id, model))
}

/// The memories of a scope whose score could be among the `max_recalls` best: recall scores only
/// these exactly, with the vectors, instead of every memory of the scope.
///
/// It reads the scope's entries of promoted_scope_sq8 (the rows that fit a btree entry;
/// recall reads the others itself) in the four ranges recall reads: the user's memories and the
/// user-less ones, cross-intent or of the intent. For each memory recall could see at `at` it
/// bounds the score from the quantised embedding (memory_fabric_core::sq8), the recency and the
/// priority, with recall's weights `s` (_recall_settings). The `max_recalls`-th best lower bound
/// among memories that are certainly visible is a score the result reaches, so a memory whose
/// upper bound is below it cannot be in the result, with ties as well. A memory under a consent
/// (which this does not read) counts only as a candidate, and so does one whose similarity has no
/// bound (a zero vector, other dimensions: recall's exact scoring then raises what it raises).
/// The query vectors are given with their models, in the order recall's CASE tries them.
#[allow(clippy::too_many_arguments)]
#[pg_extern(stable, parallel_restricted)]
#[search_path(pg_catalog, pg_temp)]
fn _recall_candidates(
    tenant_id: &str,
    user_id: Option<&str>,
    intent_id: Option<&str>,
    classifications: Vec<Option<String>>,
    at: TimestampWithTimeZone,
    s: Vec<f64>,
    max_recalls: i32,
    model_1: Option<&str>,
    vector_1: Option<Vec<f32>>,
    model_2: Option<&str>,
    vector_2: Option<Vec<f32>>,
    model_3: Option<&str>,
    vector_3: Option<Vec<f32>>,
    model_4: Option<&str>,
    vector_4: Option<Vec<f32>>,
) -> Vec<String> {
    use crate::scope_scan::for_each_in_ranges;
    use memory_fabric_core::sq8;
    let classes: Vec<Vec<u8>> = classifications.into_iter().flatten().map(String::into_bytes).collect();
    // each model with its query: None when recall's CASE gives NULL for it (no vector), Some(None)
    // for a vector with no bounds (zero), whose memories are left to exact scoring
    let queries: Vec<(&[u8], Option<Option<sq8::Query>>)> =
        [(model_1, vector_1), (model_2, vector_2), (model_3, vector_3), (model_4, vector_4)]
            .into_iter()
            .filter_map(|(m, v)| Some((m?.as_bytes(), v.as_deref().map(sq8::Query::new))))
            .collect();
    let at_us = at.into_datum().expect("a timestamp").value() as i64;
    // Bounds only for settings recall can compute with; otherwise every memory is a candidate.
    let bounded = s.len() >= 4 && s[..4].iter().all(|x| x.is_finite()) && s[3] > 0.0;
    let mut found = sq8::Candidates::new(max_recalls.clamp(1, 1000) as usize);
    let mut priorities: Vec<(Vec<u8>, f64)> = Vec::new();
    // recall's four ranges: the user's memories and the user-less ones (only these without a
    // user), cross-intent or of the intent (only cross-intent without one)
    let users: Vec<Option<&str>> = if user_id.is_some() { vec![user_id, None] } else { vec![None] };
    let intents: Vec<Option<&str>> = if intent_id.is_some() { vec![None, intent_id] } else { vec![None] };
    // the most the recency and the priority can add (each at most 1), for a bound from the code
    // alone
    let rest_max = if bounded { s[1].max(0.0) + s[2].max(0.0) } else { f64::INFINITY };
    let scanned = for_each_in_ranges(tenant_id, &users, &intents, |e| {
        // the similarity as recall's CASE computes it: NULL (scored 0) without a vector or a
        // query of the memory's model
        let query = e.code().zip(e.model()).and_then(|(code, model)| {
            queries.iter().find(|(m, _)| *m == model).and_then(|(_, q)| q.as_ref()).map(|q| (code, q.as_ref()))
        });
        let (lo, hi) = query.map_or((0.0, 0.0), |(code, q)| sq8::bounds_or_any(code, q));
        let similar = bounded && lo.is_finite() && hi.is_finite();
        // the similarity's part of the score, least and most
        let (a, b) = if s[0] >= 0.0 { (s[0] * lo, s[0] * hi) } else { (s[0] * hi, s[0] * lo) };
        // below the floor whatever its recency and priority: not a candidate, whether or not it
        // is visible (nor would it raise the floor); the margin is at least the one below, |rest|
        // being at most |s1| + |s2|
        if similar && b + rest_max + 1e-9 * (1.0 + s[1].abs() + s[2].abs() + s[0].abs()) < found.floor() {
            return;
        }
        if !e.visible() {
            return;
        }
        e.read_all();
        let (Some(promoted), Some(class), Some(id)) = (e.promoted_at(), e.classification(), e.id()) else { return };
        if promoted > at_us
            || e.retracted_at().is_some_and(|r| r <= at_us)
            || e.expires_at().is_some_and(|x| x <= at_us)
            || !classes.iter().any(|c| c.as_slice() == class)
        {
            return;
        }
        let (lower, upper) = if similar {
            let pri = e.priority().map_or(0.0, |(datum, raw)| match priorities.iter().find(|(b, _)| b.as_slice() == raw) {
                Some((_, p)) => *p,
                None => {
                    let p = unsafe { pgrx::fcinfo::direct_function_call::<f64>(pg_sys::numeric_float8, &[Some(datum)]) }
                        .unwrap_or(0.0);
                    priorities.push((raw.to_vec(), p));
                    p
                }
            });
            let age = ((at_us - promoted) as f64 / 1e6).max(0.0);
            let rest = s[1] * 0.5f64.powf(age / 86400.0 / s[3]) + s[2] * pri;
            let margin = 1e-9 * (1.0 + rest.abs() + s[0].abs());
            (rest + a - margin, rest + b + margin)
        } else {
            (f64::NEG_INFINITY, f64::INFINITY)
        };
        // not a number or infinite (huge weights): no bound
        let (lower, upper) =
            if lower.is_finite() && upper.is_finite() { (lower, upper) } else { (f64::NEG_INFINITY, f64::INFINITY) };
        // a memory under a consent (which this does not read) is only a candidate
        found.offer(lower, upper, !e.has_consent(), || String::from_utf8_lossy(id).into_owned());
    });
    if !scanned {
        // the index cannot be read now (being built, say): every memory of the scopes is one
        return crate::scope_scan::ids_in_ranges(tenant_id, &users, &intents, None);
    }
    found.into_items()
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
-- recall: the only read path. What a recall may see is memory_fabric._visible_memories()
-- (sql/schema.sql), which explain_recall() asks too; this function ranks it. It records what it
-- returned when memory_fabric.log_recalls is on. Its vectors take pgvector's type from the
-- promoted_memory column (%TYPE) and are compared with memory_fabric._cosine_similarity(), so
-- the body names nothing of pgvector's.
-- Its statements are planned once per session (generic plans): with custom plans, PostgreSQL
-- kept re-planning the final query on every call (1.6 ms instead of 2.95 ms p50 on 1M memories).
SET LOCAL client_min_messages = warning;  -- the %TYPE notices
CREATE FUNCTION memory_fabric.recall(
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
"#,
    name = "recall",
    requires = [_recall_settings, _embed_query, _check_recall, _log_recall, _recall_candidates],
);
