//! Stage 2, review: a deterministic verdict for one candidate against the live promoted
//! memories in its scope (same tenant and user; cross-intent or the same intent).

use crate::error::raise;
use crate::events;
use crate::gucs;
use crate::policy;
use crate::rows::{self, Candidate};
use crate::spi::{col, plan, vector_schema, FLOAT8, FLOAT4_ARRAY, INT4, TEXT};
use memory_fabric_core::policy::Thresholds;
use memory_fabric_core::review::{
    decide_with, search_among, AskJudge, Consent, Context, Found, JudgeScores, Neighbor, Spelling, Status, Subject, Verdict,
};
use memory_fabric_core::Error;
use pgrx::prelude::*;
use pgrx::spi::SpiClient;
use serde_json::json;

/// Neighbours compared by vector.
const K: i64 = 5;

/// A scope of up to this many rows is compared exactly, every row. A larger one (above
/// `exact_search_limit` too, unless the model has an HNSW index) is ranked by the quantised
/// embeddings (promoted_memory.embedding_bits, read index-only from promoted_scope_bits) and the
/// RESCORED first rows are compared exactly, from the heap: a near-duplicate ranks first by
/// either measure (bench: recall@1 1.0000), while a weak match among sparse vectors (the hashing
/// model's) may rank below RESCORED.
pub(crate) const EXACT_ROWS: i64 = 2000;
const RESCORED: i64 = 4 * K;
/// Exact matches compared, the first by id.
const EXACT_MATCHES: i64 = 50;

const COLUMNS: &str = "m.id, m.text, m.entity, m.predicate, m.value::text, m.intent_scope, m.source, m.confidence, \
     jsonb_array_length(m.evidence_refs), extract(epoch FROM c.captured_at)::float8, m.content_hash";

/// The candidate's user ($2) on table alias `t`: the same user, or user-less for a user-less
/// candidate (NULL never equals NULL, so that case is spelled out).
fn same_user(t: &str, user_is_null: bool) -> String {
    if user_is_null { format!("{t}.user_id IS NULL AND $2::text IS NULL") } else { format!("{t}.user_id = $2") }
}

/// The scope filter: $1 tenant, $2 user, $3 intent (cross-intent or the candidate's); live now.
fn scope(user_is_null: bool) -> String {
    scope_of(user_is_null, "(m.intent_scope IS NULL OR m.intent_scope = $3)")
}

/// The scope filter with the intent condition given: one part of the scope.
fn scope_of(user_is_null: bool, intent: &str) -> String {
    let user = same_user("m", user_is_null);
    format!("m.tenant_id = $1 AND {user} AND {intent} AND {LIVE}")
}

/// Live now: neither retracted nor expired (a macro, so that IN_SCOPE can be built from it).
macro_rules! live {
    () => {
        "m.retracted_at IS NULL AND (m.expires_at IS NULL OR m.expires_at > pg_catalog.clock_timestamp())"
    };
}
const LIVE: &str = live!();

/// Whether memory `m` matches the candidate exactly: the same content, the same fact key, or the
/// memory it supersedes ($p content hash, then entity, predicate, supersedes). Review's exact
/// search and promote's re-reading (search_among) select by the same test.
fn exact_match(p: usize) -> String {
    format!("(m.content_hash = ${p} OR (m.entity = ${} AND m.predicate = ${}) OR m.id = ${})", p + 1, p + 2, p + 3)
}

fn read_neighbor(r: &pgrx::spi::SpiHeapTupleData<'_>, sim_col: Option<usize>) -> Neighbor {
    Neighbor {
        id: col(r, 1).unwrap_or_default(),
        text: col(r, 2).unwrap_or_default(),
        entity: col(r, 3),
        predicate: col(r, 4),
        value: col(r, 5),
        intent_scope: col(r, 6),
        source: col(r, 7).unwrap_or_default(),
        confidence: col(r, 8),
        evidence_count: col::<i32>(r, 9).unwrap_or(0).max(0) as usize,
        captured_at: col(r, 10).unwrap_or(0.0),
        content_hash: col(r, 11).unwrap_or_default(),
        // not a number (a vector stored before its norm was checked): not compared
        similarity: sim_col.and_then(|i| col::<f64>(r, i)).filter(|x| !x.is_nan()),
        judge: None,
        learned: None,
        learned_canonical: None,
    }
}

/// Live memories in the candidate's scope with the same content hash or the same
/// (entity, predicate), and the K nearest by vector among those of its embedding model.
pub fn neighbors(client: &SpiClient<'_>, c: &Candidate) -> Vec<Neighbor> {
    let vs = vector_schema(client);
    let sc = scope(c.user_id.is_none());
    let sim = format!(
        "CASE WHEN m.embedding_model = $4 THEN 1 - (m.embedding OPERATOR({vs}.<=>) $5::real[]::{vs}.vector) END"
    );
    let mut out: Vec<Neighbor> = Vec::new();
    let base_args = || -> Vec<pgrx::datum::DatumWithOid<'_>> {
        vec![c.tenant_id.as_str().into(), c.user_id.as_deref().into(), c.intent_id.as_deref().into()]
    };
    let empty: Vec<f32> = Vec::new();
    let q: &Vec<f32> = c.embedding.as_ref().unwrap_or(&empty);

    // Exact matches: same content hash, or same structured fact key, or the memory it supersedes
    // (exact_match()). Found by id through the index of each (promoted_hash, promoted_fact, the
    // primary key), then kept if in the scope: with the scope's rows to choose from, a generic plan
    // filtered the whole scope by hash (text columns keep no statistics: sql/schema.sql).
    let exact = exact_match(6);
    let exact_sql = format!(
        "SELECT {COLUMNS}, {sim} FROM ( \
           SELECT m.id FROM memory_fabric.promoted_memory m WHERE m.tenant_id = $1 AND m.content_hash = $6 \
           UNION SELECT m.id FROM memory_fabric.promoted_memory m \
                 WHERE m.tenant_id = $1 AND m.entity = $7 AND m.predicate = $8 AND m.entity IS NOT NULL \
           UNION SELECT m.id FROM memory_fabric.promoted_memory m WHERE m.id = $9) e \
         CROSS JOIN LATERAL (SELECT m.* FROM memory_fabric.promoted_memory m WHERE m.id = e.id OFFSET 0) m \
         JOIN memory_fabric.candidates c ON c.id = m.candidate_id \
         WHERE {sc} AND {exact} ORDER BY m.id LIMIT {EXACT_MATCHES}"
    );
    let p = plan(client, &exact_sql, &[TEXT, TEXT, TEXT, TEXT, FLOAT4_ARRAY, TEXT, TEXT, TEXT, TEXT], false);
    let mut args = base_args();
    args.extend([
        c.embedding_model.as_str().into(),
        q.clone().into(),
        c.content_hash.as_str().into(),
        c.entity.as_deref().into(),
        c.predicate.as_deref().into(),
        c.supersedes.as_deref().into(),
    ]);
    for r in client.select(&*p, None, &args).unwrap_or_else(|e| error!("memory_fabric: neighbour lookup failed: {e}")) {
        out.push(read_neighbor(&r, Some(12)));
    }

    // Nearest by vector, within the scope and the candidate's model only.
    if c.embedding.is_some() {
        let limit = gucs::EXACT_SEARCH_LIMIT.get().max(0) as i64;
        // The model's HNSW index, when create_embedding_index() made one, above the limit; the
        // ranking by bits otherwise, however large the scope. Without an index the scope is
        // counted only up to EXACT_ROWS.
        let indexed = crate::embedder::has_hnsw_index(client, &c.embedding_model, q.len() as i32);
        let rows = scope_size(client, c, if indexed { limit.max(EXACT_ROWS) } else { EXACT_ROWS });
        let use_index = indexed && rows > limit;
        let by_bits = !use_index && rows > EXACT_ROWS;
        // The search reads ids and similarities only; the K winners are then joined for their
        // columns (reading every row's columns before the sort cost more than the search).
        let search = if use_index {
            // HNSW with an iterative scan, so the scope filter cannot starve the result. The
            // indexes are partial (one per model), so the model is written into the statement:
            // a parameter would stop a generic plan from ever matching the index predicate.
            let d = q.len();
            let model = pgrx::spi::quote_literal(&c.embedding_model);
            format!(
                "SELECT m.id, 1 - (m.embedding::{vs}.vector({d}) OPERATOR({vs}.<=>) $5::real[]::{vs}.vector({d})) AS sim \
                 FROM memory_fabric.promoted_memory m \
                 WHERE {sc} AND m.embedding_model = {model} AND $4::text IS NOT NULL \
                 ORDER BY m.embedding::{vs}.vector({d}) OPERATOR({vs}.<=>) $5::real[]::{vs}.vector({d}) LIMIT $6"
            )
        } else {
            // The scope, cross-intent and of the intent: by the cosine distance of the rows
            // _nearest_candidates() keeps (it bounds every row's similarity from
            // promoted_scope_sq8), or by the differing bits (read index-only from
            // promoted_scope_bits) with the RESCORED first rows then compared exactly (EXACT_ROWS
            // says when); the rows too wide for those indexes through promoted_scope_wide.
            // The query vector is converted once per part (an InitPlan), not once per row.
            let fits = "memory_fabric._scope_fits(m.tenant_id, m.user_id, m.intent_scope, m.embedding_model, m.id, \
                        m.classification, m.consent_id, m.embedding)";
            let distance = if by_bits {
                format!("m.embedding_bits OPERATOR({vs}.<~>) (SELECT {vs}.binary_quantize($5::real[]::{vs}.vector))")
            } else {
                format!("m.embedding OPERATOR({vs}.<=>) (SELECT $5::real[]::{vs}.vector)")
            };
            let part = |intent: &str, fit: &str| {
                let sc = scope_of(c.user_id.is_none(), intent);
                format!(
                    "SELECT m.id, {distance} AS d \
                     FROM memory_fabric.promoted_memory m WHERE {sc} AND m.embedding_model = $4 AND {fit}"
                )
            };
            let wide = [part("m.intent_scope IS NULL", &format!("NOT {fits}")), part("m.intent_scope = $3", &format!("NOT {fits}"))];
            let parts = if by_bits {
                [part("m.intent_scope IS NULL", fits), part("m.intent_scope = $3", fits)].into_iter().chain(wide).collect::<Vec<_>>()
            } else {
                // of the rows that fit, only those _nearest_candidates() finds could be among the
                // K nearest; read by id (OFFSET 0 keeps the scope's conditions out of the lookup,
                // so it is one primary-key lookup each, never a scan of the scope joined to
                // them), in this statement (so with its snapshot). Called through a subquery, so
                // that the planner of a custom plan does not run it to estimate how many ids it
                // returns (it did: the scan ran twice, once before the statement's snapshot).
                let sc = scope(c.user_id.is_none());
                let candidates = format!(
                    "SELECT m.id, {distance} AS d \
                     FROM pg_catalog.unnest((SELECT memory_fabric._nearest_candidates($1, $2, $3, $4, $5, $6::integer))) AS k(id) \
                     CROSS JOIN LATERAL (SELECT m.* FROM memory_fabric.promoted_memory m WHERE m.id = k.id OFFSET 0) m \
                     WHERE {sc} AND m.embedding_model = $4"
                );
                std::iter::once(candidates).chain(wide).collect()
            }
            .join(" UNION ALL ");
            if by_bits {
                format!(
                    "SELECT r.id, 1 - (m.embedding OPERATOR({vs}.<=>) (SELECT $5::real[]::{vs}.vector)) AS sim \
                     FROM (SELECT s.id FROM ({parts}) s ORDER BY s.d, s.id LIMIT {RESCORED}) r \
                     JOIN memory_fabric.promoted_memory m ON m.id = r.id ORDER BY sim DESC, r.id LIMIT $6"
                )
            } else {
                format!("SELECT s.id, 1 - s.d AS sim FROM ({parts}) s ORDER BY s.d, s.id LIMIT $6")
            }
        };
        let rows_sql = format!(
            "SELECT {COLUMNS}, nn.sim FROM ({search}) nn \
             JOIN memory_fabric.promoted_memory m ON m.id = nn.id \
             JOIN memory_fabric.candidates c ON c.id = m.candidate_id ORDER BY nn.sim DESC, m.id"
        );
        // Planned with the call's own values: a kept plan turns generic after five calls, and a
        // generic plan cannot see that this scope is large, so it scanned and sorted the scope
        // (42 ms a call on 1M memories) instead of searching the index. No JIT for one search.
        let saved = use_index.then(|| {
            [
                set_local(client, "hnsw.iterative_scan", "strict_order", "off"),
                set_local(client, "hnsw.ef_search", "40", "40"),
                set_local(client, "plan_cache_mode", "force_custom_plan", "auto"),
                set_local(client, "jit", "off", "on"),
            ]
        });
        let p = plan(client, &rows_sql, &[TEXT, TEXT, TEXT, TEXT, FLOAT4_ARRAY, crate::spi::INT8], false);
        let mut args = base_args();
        args.extend([c.embedding_model.as_str().into(), q.clone().into(), K.into()]);
        for r in client.select(&*p, None, &args).unwrap_or_else(|e| error!("memory_fabric: nearest-neighbour search failed: {e}")) {
            pgrx::check_for_interrupts!();
            let n = read_neighbor(&r, Some(12));
            if !out.iter().any(|x| x.id == n.id) {
                out.push(n);
            }
        }
        for (name, value) in saved.into_iter().flatten() {
            set_local(client, &name, &value, &value);
        }
    }
    out
}

/// The memories of a candidate's scope whose cosine similarity to `embedding` could be among the
/// `k` highest: review's exact search compares only these. It reads the scope's entries of
/// promoted_scope_sq8 (the user's, or the user-less ones for a user-less candidate; cross-intent
/// or of the intent), keeps the live ones of `model`, and bounds each similarity from the
/// quantised embedding (memory_fabric_core::sq8). The k-th best lower bound among certainly live
/// memories is a similarity the k nearest reach, so a memory whose upper bound is below it is not
/// among them, with ties as well. A memory that expires within a minute counts only as a
/// candidate (the search reads the clock again); one without a vector only while fewer than k
/// have bounds (it sorts last); one whose similarity has no bound (a zero vector, other
/// dimensions) always (the exact comparison then raises what it raises).
#[pg_extern(stable, parallel_restricted)]
#[search_path(pg_catalog, pg_temp)]
fn _nearest_candidates(
    tenant_id: &str,
    user_id: Option<&str>,
    intent_id: Option<&str>,
    model: &str,
    embedding: Vec<f32>,
    k: i32,
) -> Vec<String> {
    use crate::scope_scan::for_each_in_ranges;
    use memory_fabric_core::sq8;
    let q = sq8::Query::new(&embedding);
    let now = unsafe { pg_sys::GetCurrentTimestamp() };
    let sure = now.saturating_add(60_000_000);
    let intents: Vec<Option<&str>> = if intent_id.is_some() { vec![None, intent_id] } else { vec![None] };
    let mut found = sq8::Candidates::new(k.clamp(1, 1000) as usize);
    let scanned = for_each_in_ranges(tenant_id, &[user_id], &intents, |e| {
        if e.model() != Some(model.as_bytes()) {
            return;
        }
        // without a vector it sorts last: kept only while fewer than k have bounds
        let (lo, hi) = e.code().map_or((f64::NEG_INFINITY, f64::NEG_INFINITY), |code| sq8::bounds_or_any(code, q.as_ref()));
        // below the floor: not among the k nearest, whether or not it is visible and live
        if hi < found.floor() {
            return;
        }
        if !e.visible() {
            return;
        }
        e.read_all();
        let Some(id) = e.id() else { return };
        if e.retracted_at().is_some() || e.expires_at().is_some_and(|x| x <= now) {
            return;
        }
        let certain = e.expires_at().is_none_or(|x| x > sure);
        found.offer(lo, hi, certain, || String::from_utf8_lossy(id).into_owned());
    });
    if !scanned {
        // the index cannot be read now (being built, say): every memory of the model is one
        return crate::scope_scan::ids_in_ranges(tenant_id, &[user_id], &intents, Some(model));
    }
    found.into_items()
}

extension_sql!(
    "REVOKE ALL ON FUNCTION memory_fabric._nearest_candidates FROM PUBLIC;\n",
    name = "nearest_candidates_privileges",
    requires = [_nearest_candidates],
);

/// The cosine distance of row `t`'s embedding to the candidate's ($3 its model, $4 its vector), as
/// review's searches compute it: NULL for another model or without a vector. The candidate's
/// vector is converted once (an InitPlan), not once a row.
fn distance_to_candidate(client: &SpiClient<'_>, t: &str) -> String {
    let vs = vector_schema(client);
    format!(
        "(CASE WHEN {t}.embedding_model = $3 AND {t}.embedding IS NOT NULL AND $4::real[] IS NOT NULL \
               THEN {t}.embedding OPERATOR({vs}.<=>) (SELECT $4::real[]::{vs}.vector) END)"
    )
}

/// The K rows of `from_where` nearest the candidate: the same content first, then the most
/// similar by vector of the candidate's model. `from_where` names the rows compared `r` and
/// ranks them by id, content hash and vector alone; only the K kept are then joined by `join`
/// (to `nn.id`) for `columns`, the first eleven columns read_neighbor reads. Parameters:
/// $1 tenant, $2 user, $3 model, $4 embedding, $5 the candidate's id, $6 its content hash. An
/// exact scan: the rows are few. The query vector is converted once (an InitPlan), not once
/// per row.
fn nearest_of(client: &SpiClient<'_>, c: &Candidate, from_where: &str, join: &str, columns: &str, what: &str) -> Vec<Neighbor> {
    let distance = distance_to_candidate(client, "r");
    let sql = format!(
        "SELECT {columns}, nn.sim FROM ( \
           SELECT r.id, r.content_hash = $6 AS same, 1 - {distance} AS sim \
           {from_where} \
           ORDER BY same DESC, sim DESC NULLS LAST, r.id LIMIT {K}) nn \
         {join} \
         ORDER BY nn.same DESC, nn.sim DESC NULLS LAST, nn.id"
    );
    let p = plan(client, &sql, &[TEXT, TEXT, TEXT, FLOAT4_ARRAY, TEXT, TEXT], false);
    client
        .select(
            &*p,
            None,
            &[
                c.tenant_id.as_str().into(),
                c.user_id.as_deref().into(),
                c.embedding_model.as_str().into(),
                c.embedding.clone().into(),
                c.id.as_str().into(),
                c.content_hash.as_str().into(),
            ],
        )
        .unwrap_or_else(|e| error!("memory_fabric: cannot read {what}: {e}"))
        .map(|r| read_neighbor(&r, Some(12)))
        .collect()
}

/// Candidates an operator rejected in the candidate's scope: the same content, or the nearest by
/// vector (review step 3).
fn rejected_neighbors(client: &SpiClient<'_>, c: &Candidate) -> Vec<Neighbor> {
    let user = same_user("r", c.user_id.is_none());
    let from_where = format!(
        "FROM memory_fabric.decisions d JOIN memory_fabric.candidates r ON r.id = d.candidate_id \
         WHERE d.tenant_id = $1 AND d.action = 'reject' AND {user} AND r.id <> $5 AND r.erased_at IS NULL"
    );
    let columns = "r.id, r.text, r.entity, r.predicate, r.value::text, r.intent_id, r.source, r.confidence, \
                   jsonb_array_length(r.evidence_refs), extract(epoch FROM r.captured_at)::float8, r.content_hash";
    nearest_of(client, c, &from_where, "JOIN memory_fabric.candidates r ON r.id = nn.id", columns, "rejections")
}

/// Retracted memories in the candidate's scope (same tenant and user): the same content, or the
/// nearest by vector (review step 7 queues a repeat of one for a human). Erased ones are gone.
/// They are read index-only from promoted_retracted, which holds only these rows and what the
/// comparison needs, and through promoted_retracted_wide for the rows too wide for it.
fn retracted_neighbors(client: &SpiClient<'_>, c: &Candidate) -> Vec<Neighbor> {
    let user = same_user("m", c.user_id.is_none());
    let fits = "memory_fabric._scope_fits(m.tenant_id, m.user_id, m.content_hash, m.embedding_model, m.id, '', NULL, m.embedding)";
    let part = |fit: &str| {
        format!(
            "SELECT m.id, m.content_hash, m.embedding_model, m.embedding FROM memory_fabric.promoted_memory m \
             WHERE m.tenant_id = $1 AND {user} AND m.retracted_at IS NOT NULL AND m.erased_at IS NULL AND {fit}"
        )
    };
    let from_where = format!("FROM ({} UNION ALL {}) r", part(fits), part(&format!("NOT {fits}")));
    let join = "JOIN memory_fabric.promoted_memory m ON m.id = nn.id JOIN memory_fabric.candidates c ON c.id = m.candidate_id";
    nearest_of(client, c, &from_where, join, COLUMNS, "retracted memories")
}

/// How many unretracted memories of the candidate's model that are cross-intent or of its intent
/// the scope holds, counted up to `limit` + 1 in each part: the rows the exact search visits
/// (expiry is not looked at). Two index-only scans of promoted_scope, each stopping there.
fn scope_size(client: &SpiClient<'_>, c: &Candidate, limit: i64) -> i64 {
    let user = same_user("m", c.user_id.is_none());
    let part = |intent: &str| {
        format!(
            "(SELECT count(*) FROM (SELECT 1 FROM memory_fabric.promoted_memory m \
             WHERE m.tenant_id = $1 AND {user} AND m.embedding_model = $4 AND {intent} AND m.retracted_at IS NULL LIMIT $5) s)"
        )
    };
    let sql = format!("SELECT {} + {}", part("m.intent_scope IS NULL"), part("m.intent_scope = $3"));
    let p = plan(client, &sql, &[TEXT, TEXT, TEXT, TEXT, crate::spi::INT8], false);
    client
        .select(
            &*p,
            None,
            &[c.tenant_id.as_str().into(), c.user_id.as_deref().into(), c.intent_id.as_deref().into(), c.embedding_model.as_str().into(), (limit + 1).into()],
        )
        .and_then(|t| t.first().get_one::<i64>())
        .unwrap_or_else(|e| error!("memory_fabric: cannot size scope: {e}"))
        .unwrap_or(0)
}

/// Sets a setting for the rest of the transaction and returns (name, previous value) so the
/// caller can put it back once the search is done.
fn set_local(client: &SpiClient<'_>, name: &str, value: &str, default: &str) -> (String, String) {
    let prev: String = client
        .select(
            "SELECT coalesce(pg_catalog.current_setting($1, true), $3), pg_catalog.set_config($1, $2, true)",
            None,
            &[name.into(), value.into(), default.into()],
        )
        .and_then(|t| t.first().get_one::<String>())
        .unwrap_or_else(|e| error!("memory_fabric: cannot set {name}: {e}"))
        .unwrap_or_else(|| default.to_owned());
    (name.to_owned(), prev)
}

/// Asks the judge function, when one is configured, about every neighbour close enough to
/// contradict.
fn ask_judge(client: &SpiClient<'_>, c: &Candidate, ns: &mut [Neighbor], t: Thresholds) -> bool {
    let Some(func) = gucs::get(&gucs::CONTRADICTION_FUNCTION) else {
        return false;
    };
    let qualified: Option<String> = client
        .select(
            "SELECT quote_ident(n.nspname) || '.' || quote_ident(p.proname) FROM pg_catalog.pg_proc p \
             JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace \
             WHERE p.oid = pg_catalog.to_regprocedure($1 || '(text,text)')",
            Some(1),
            &[func.as_str().into()],
        )
        .ok()
        .and_then(|t| if t.is_empty() { None } else { t.first().get_one::<String>().ok().flatten() });
    let Some(qualified) = qualified else {
        raise(Error::invalid(format!("contradiction function \"{func}\" does not exist"))
            .detail("memory_fabric.contradiction_function must name a function (text, text) returning boolean."));
    };
    let sql = format!("SELECT ({qualified}($1, $2))::boolean");
    for n in ns.iter_mut().filter(|n| n.similarity.is_some_and(|s| s >= t.contradiction)) {
        pgrx::check_for_interrupts!();
        let verdict = client
            .select(sql.as_str(), Some(1), &[c.text.as_str().into(), n.text.as_str().into()])
            .and_then(|t| t.first().get_one::<bool>())
            .unwrap_or_else(|e| error!("memory_fabric: contradiction function failed: {e}"));
        n.judge = Some(verdict.unwrap_or(false));
    }
    true
}

/// What the learned judge said on a review: its file's SHA-256 and, for each pair it read
/// (the candidate and a memory, or a rejected candidate), its probabilities both ways.
pub struct Judged {
    pub model: String,
    pub pairs: Vec<(String, Option<f64>, JudgeScores, Spelling)>,
}

impl Judged {
    /// As reviews.judge_scores records it.
    fn scores_json(&self) -> serde_json::Value {
        let p = |v: [f32; 3]| json!({"entailment": v[0], "neutral": v[1], "contradiction": v[2]});
        self.pairs
            .iter()
            .map(|(id, sim, j, spelling)| {
                let mut o = json!({"id": id, "similarity": sim, "candidate_to_memory": p(j.ab), "memory_to_candidate": p(j.ba)});
                // read for a merge with amounts, dates and times in one spelling
                if *spelling == Spelling::Canonical {
                    o["spelling"] = json!("canonical");
                }
                o
            })
            .collect()
    }
}


thread_local! {
    /// The judge's last answers in this backend, by (its SHA-256, candidate, memory): promote() decides again
    /// on the pairs its review read, often in the same backend and transaction. The forward pass
    /// is deterministic on one machine, so an answer kept is the answer computed again.
    static JUDGED: std::cell::RefCell<std::collections::HashMap<(String, String, String), JudgeScores>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}
/// Answers kept at most (then forgotten all at once).
const JUDGED_KEPT: usize = 256;

/// The judge's probabilities for the pair both ways: "`a`, then `b`" and the reverse.
fn judged_pair(m: &memory_fabric_core::minilm::MiniLm, judge: &memory_fabric_core::minilm::Judge, a: &str, b: &str, spelling: Spelling) -> JudgeScores {
    // a label in front ("FYI, …") says nothing: the judge reads the statement, for a merge with
    // amounts, dates and times in one spelling (core/src/review.rs)
    let (a, b) = (spelling.of(a), spelling.of(b));
    let key = (judge.sha256().to_owned(), a.to_string(), b.to_string());
    if let Some(v) = JUDGED.with(|j| j.borrow().get(&key).copied()) {
        return v;
    }
    let p = |v: memory_fabric_core::minilm::Verdict| [v.entailment, v.neutral, v.contradiction];
    let (ab, ba) = m.judge_both(judge, &a, &b);
    let v = JudgeScores { ab: p(ab), ba: p(ba) };
    JUDGED.with(|j| {
        let mut j = j.borrow_mut();
        if j.len() >= JUDGED_KEPT {
            j.clear();
        }
        j.insert(key, v);
    });
    v
}

/// What a verdict was decided on: the version of the scope's promoted memories, read before
/// they were searched (None: the scope has none yet), and the memories compared, live and
/// retracted. Recorded with the review (sql/schema.sql, reviews).
pub struct Basis {
    pub scope_version: Option<String>,
    pub neighbour_ids: Vec<String>,
    pub retracted_ids: Vec<String>,
    /// What the learned judge said, when review read it.
    pub judged: Option<Judged>,
}

/// The candidate's scope's row of memory_fabric.scope_versions: its version and its last
/// changes (JSON); None while no statement has changed the scope.
fn scope_state(client: &SpiClient<'_>, c: &Candidate) -> Option<(Option<String>, Option<String>)> {
    let p = plan(client, "SELECT version::text, changes::text FROM memory_fabric.scope_versions WHERE key = $1", &[crate::spi::UUID], false);
    let key = pgrx::Uuid::from_bytes(memory_fabric_core::keys::version_key(&c.tenant_id, c.user_id.as_deref()));
    client
        .select(&*p, Some(1), &[key.into()])
        .unwrap_or_else(|e| error!("memory_fabric: cannot read the scope's version: {e}"))
        .into_iter()
        .next()
        .map(|r| (col::<String>(&r, 1), col::<String>(&r, 2)))
}

/// The current version of the candidate's scope.
fn scope_version(client: &SpiClient<'_>, c: &Candidate) -> Option<String> {
    scope_state(client, c).and_then(|(v, _)| v)
}

/// The verdict review would give `c` now, without recording it, and what it was decided on.
pub fn verdict_for(client: &SpiClient<'_>, c: &Candidate, force_human: Option<&str>) -> (Verdict, i32, Basis) {
    // First the version, then the search: a change committed in between is seen by the search
    // and still makes the recorded version old, so promote() searches again.
    let scope_version = scope_version(client, c);
    crate::inject::point("review-after-scope-version");
    let retracted = retracted_neighbors(client, c);
    let ns = neighbors(client, c);
    let mut basis = Basis {
        scope_version,
        neighbour_ids: ns.iter().map(|n| n.id.clone()).collect(),
        retracted_ids: retracted.iter().map(|n| n.id.clone()).collect(),
        judged: None,
    };
    let (v, policy_version, judged) = decide(client, c, force_human, ns, retracted);
    basis.judged = judged;
    (v, policy_version, basis)
}

/// What changed in a candidate's scope since a version of it (memory_fabric.scope_versions).
enum Since {
    Nothing,
    /// Only these memories were inserted (some maybe of another intent than the candidate's).
    Inserted(Vec<String>),
    /// Something else, or more than the scope remembers.
    Unknown,
}

/// What changed in the candidate's scope since `version` (None: since before it had one): its
/// last changes, from the one that followed `version` on (sql/schema.sql, _scope_changed()).
fn changed_since(client: &SpiClient<'_>, c: &Candidate, version: Option<&str>) -> Since {
    let row = scope_state(client, c);
    let Some((now, changes)) = row else {
        // no statement has changed the scope since it had no version
        return if version.is_none() { Since::Nothing } else { Since::Unknown };
    };
    if now.as_deref() == version {
        return Since::Nothing;
    }
    let changes: Vec<serde_json::Value> = changes.and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_default();
    let from = version.map_or(serde_json::Value::Null, |v| serde_json::Value::String(v.to_owned()));
    let Some(first) = changes.iter().position(|ch| ch.get("from") == Some(&from)) else { return Since::Unknown };
    let mut ids: Vec<String> = Vec::new();
    for ch in &changes[first..] {
        let Some(inserted) = ch.get("ids").and_then(|x| x.as_array()) else { return Since::Unknown };
        ids.extend(inserted.iter().filter_map(|x| x.as_str().map(str::to_owned)));
    }
    Since::Inserted(ids)
}

/// The verdict review would give `c` now, for promote(), which has its effective review `r`.
/// While the scope's version is the one the review recorded, no promoted memory of the scope has
/// been inserted or updated since (sql/schema.sql, _scope_changed()), so its search would find
/// the same memories: the verdict is decided again on those, read by id, with the policy,
/// consents, rejections and judge as they are now. When memories were only inserted since, and
/// the scope still remembers which (its last 16 changes), the search would find among those and
/// the memories it found then: the verdict is decided on what search_among() selects of them. A
/// memory compared that expired since, anything else changed, or a review that recorded no basis
/// makes it review again in full.
pub fn verdict_again(client: &SpiClient<'_>, c: &Candidate, r: &rows::Review) -> Verdict {
    if let (Some(nids), Some(rids)) = (&r.neighbour_ids, &r.retracted_ids) {
        let inserted = match changed_since(client, c, r.scope_version.as_deref()) {
            Since::Nothing => Some(Vec::new()),
            Since::Inserted(ids) => Some(ids),
            Since::Unknown => None,
        };
        if let Some(inserted) = inserted {
            let live = memories_by_id(client, c, nids, LIVE, true);
            let retracted = memories_by_id(client, c, rids, "m.retracted_at IS NOT NULL AND m.erased_at IS NULL", true);
            if let (Some(live), Some(retracted)) = (live, retracted) {
                let retracted: Vec<Neighbor> = retracted.into_iter().map(|f| f.item).collect();
                let ns = if inserted.is_empty() {
                    pgrx::debug1!(
                        "memory_fabric: the scope is unchanged since the review; the memories it compared ({}) read again",
                        live.len() + retracted.len()
                    );
                    live.into_iter().map(|f| f.item).collect()
                } else {
                    // the memories inserted since that are of the review's scope and live now;
                    // none of those it compared has left it (they are all live, and nothing
                    // else changed). One that committed between the review's reading of the
                    // version and its search was compared already: it is counted once.
                    let inserted: Vec<String> = inserted.into_iter().filter(|id| !nids.contains(id)).collect();
                    let new = memories_by_id(client, c, &inserted, IN_SCOPE, false).unwrap_or_default();
                    // (the count of those of its scope only: the others are of another intent)
                    pgrx::debug1!(
                        "memory_fabric: only memories were promoted into the scope since the review; the memories it compared ({}) and the {} promoted into its scope since read again",
                        live.len() + retracted.len(),
                        new.len()
                    );
                    let found: Vec<Found<Neighbor>> = live.into_iter().chain(new).collect();
                    search_among(found, EXACT_MATCHES as usize, K as usize)
                };
                return decide(client, c, None, ns, retracted).0;
            }
        }
    }
    verdict_for(client, c, None).0
}

/// Of the candidate's scope as review searches it ($9 its user, $10 its intent), and live.
const IN_SCOPE: &str =
    concat!("m.user_id IS NOT DISTINCT FROM $9 AND (m.intent_scope IS NULL OR m.intent_scope = $10) AND ", live!());

/// The memories `ids` of the candidate's tenant that meet `condition`, with their similarity to
/// the candidate as the search computes it and what the search selects them by (Found); with
/// `all`, None unless every one does. `condition` may name the candidate's user and intent, `$9`
/// and `$10`.
fn memories_by_id(client: &SpiClient<'_>, c: &Candidate, ids: &[String], condition: &str, all: bool) -> Option<Vec<Found<Neighbor>>> {
    if ids.is_empty() {
        return Some(Vec::new());
    }
    let distance = distance_to_candidate(client, "m");
    let exact = exact_match(5);
    let sql = format!(
        "SELECT {COLUMNS}, 1 - x.d, x.d, m.embedding_model = $3, {exact} IS TRUE \
         FROM memory_fabric.promoted_memory m JOIN memory_fabric.candidates c ON c.id = m.candidate_id \
         CROSS JOIN LATERAL (SELECT {distance} AS d) x \
         WHERE m.id = ANY ((SELECT $2)::text[]) AND m.tenant_id = $1 AND {condition}"
    );
    // The ids through an InitPlan: the planner then costs every call's plan alike, and the kept
    // generic plan is used after the first five calls. Given the array itself, it planned every
    // call afresh (a custom plan, costed for the array's length, always looked cheaper), and that
    // planning was a fifth of a promotion whose scope had not changed since its review.
    let p = plan(client, &sql, &[TEXT, crate::spi::TEXT_ARRAY, TEXT, FLOAT4_ARRAY, TEXT, TEXT, TEXT, TEXT, TEXT, TEXT], false);
    let found: Vec<Found<Neighbor>> = client
        .select(
            &*p,
            None,
            &[
                c.tenant_id.as_str().into(),
                ids.to_vec().into(),
                c.embedding_model.as_str().into(),
                c.embedding.clone().into(),
                c.content_hash.as_str().into(),
                c.entity.as_deref().into(),
                c.predicate.as_deref().into(),
                c.supersedes.as_deref().into(),
                c.user_id.as_deref().into(),
                c.intent_id.as_deref().into(),
            ],
        )
        .unwrap_or_else(|e| error!("memory_fabric: cannot read the reviewed memories: {e}"))
        .map(|r| {
            let n = read_neighbor(&r, Some(12));
            Found {
                id: n.id.clone(),
                distance: col(&r, 13),
                same_model: col(&r, 14).unwrap_or(false),
                exact: col(&r, 15).unwrap_or(false),
                item: n,
            }
        })
        .collect();
    (!all || found.len() == ids.len()).then_some(found)
}

/// The embedding models other than the candidate's of the memories review could not compare with
/// it by vector: live memories of its scope (its user, or user-less; cross-intent or of its
/// intent) and retracted, unerased ones of its user. Review's vector search sees a model's own
/// vectors only, so a candidate in a scope that holds such memories waits for a human
/// (reason unreviewed_models): no duplicate, contradiction or repeat of a retracted memory passes
/// under another model's name. Each part is a range of the partial index that holds its rows
/// (promoted_scope_bits and promoted_scope_wide below and above the candidate's model,
/// promoted_retracted and promoted_retracted_wide), stopping at its first row: nothing is read in
/// a scope of one model.
fn other_models(client: &SpiClient<'_>, c: &Candidate) -> Vec<String> {
    let user = same_user("m", c.user_id.is_none());
    let fits = "memory_fabric._scope_fits(m.tenant_id, m.user_id, m.intent_scope, m.embedding_model, m.id, \
                m.classification, m.consent_id, m.embedding)";
    let retracted_fits = "memory_fabric._scope_fits(m.tenant_id, m.user_id, m.content_hash, m.embedding_model, m.id, '', NULL, m.embedding)";
    let mut parts = Vec::new();
    for intent in ["m.intent_scope IS NULL", "m.intent_scope = $3"] {
        for range in ["<", ">"] {
            for fit in [fits.to_owned(), format!("NOT {fits}")] {
                parts.push(format!(
                    "(SELECT m.embedding_model FROM memory_fabric.promoted_memory m \
                      WHERE m.tenant_id = $1 AND {user} AND {intent} AND m.embedding_model {range} $4 AND {LIVE} AND {fit} LIMIT 1)"
                ));
            }
        }
    }
    for range in ["<", ">"] {
        for fit in [retracted_fits.to_owned(), format!("NOT {retracted_fits}")] {
            parts.push(format!(
                "(SELECT m.embedding_model FROM memory_fabric.promoted_memory m \
                  WHERE m.tenant_id = $1 AND {user} AND m.retracted_at IS NOT NULL AND m.erased_at IS NULL \
                    AND m.embedding_model {range} $4 AND {fit} LIMIT 1)"
            ));
        }
    }
    let sql = format!("SELECT DISTINCT x.model FROM ({}) x(model) ORDER BY 1", parts.join(" UNION ALL "));
    let p = plan(client, &sql, &[TEXT, TEXT, TEXT, TEXT], false);
    client
        .select(&*p, None, &[c.tenant_id.as_str().into(), c.user_id.as_deref().into(), c.intent_id.as_deref().into(), c.embedding_model.as_str().into()])
        .unwrap_or_else(|e| error!("memory_fabric: cannot read the scope's models: {e}"))
        .filter_map(|r| col::<String>(&r, 1))
        .collect()
}

/// The verdict on the memories found: with the tenant's policy, the consent, the rejected
/// candidates, the judges and the scope's other models as they are now; with what the learned
/// judge said, when review read it (installed, on in the policy, and no judge function set).
fn decide(
    client: &SpiClient<'_>,
    c: &Candidate,
    force_human: Option<&str>,
    mut ns: Vec<Neighbor>,
    retracted: Vec<Neighbor>,
) -> (Verdict, i32, Option<Judged>) {
    let pol = policy::for_tenant(client, &c.tenant_id);
    let thresholds = pol.policy.thresholds_for(&c.embedding_model);
    let consent = pol
        .policy
        .needs_consent(&c.classification, c.write_class.as_deref())
        .then(|| match crate::consents::matching_consent(client, c, &pol.policy.consent_default_purpose) {
            Some(id) => Consent::Matched(id),
            None => Consent::Missing,
        });
    let rejected = rejected_neighbors(client, c);
    let judged = ask_judge(client, c, &mut ns, thresholds);
    // The learned judge, when it is installed, on in the policy and no judge function is set:
    // decide_with asks it about a pair only where the claims and the rules leave the pair open
    // (core/src/review.rs), each pair once, and the review records what it was asked.
    let loaded = match pol.policy.judge {
        Some(_) if !judged => crate::embedder::judge(),
        _ => None,
    };
    let asked: std::cell::RefCell<Vec<(String, Option<f64>, JudgeScores, Spelling)>> = Default::default();
    let ask = |n: &Neighbor, spelling: Spelling| {
        pgrx::check_for_interrupts!();
        let (m, judge) = loaded.as_ref().expect("asked only when loaded");
        let j = judged_pair(m, judge, &c.text, &n.text, spelling);
        asked.borrow_mut().push((n.id.clone(), n.similarity, j, spelling));
        j
    };
    let refs: Vec<String> = serde_json::from_str::<Vec<serde_json::Value>>(&c.evidence_refs)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|r| r.as_str().map(str::to_owned))
        .collect();
    let s = Subject {
        evidence_refs: &refs,
        source: &c.source,
        classification: &c.classification,
        intent_id: c.intent_id.as_deref(),
        write_class: c.write_class.as_deref(),
        confidence: c.confidence,
        evidence_count: c.evidence_count,
        captured_at: c.captured_at,
        text: &c.text,
        entity: c.entity.as_deref(),
        predicate: c.predicate.as_deref(),
        value: c.value.as_deref(),
        content_hash: &c.content_hash,
        supersedes: c.supersedes.as_deref(),
        vector_unusable: c.embedding.as_deref().is_some_and(|v| memory_fabric_core::capture::degenerate_norm(v).is_some()),
    };
    let others = other_models(client, c);
    let cx = Context {
        judge_configured: judged,
        force_human,
        rejected: &rejected,
        retracted: &retracted,
        consent,
        other_models: &others,
        learned: loaded.as_ref().and(pol.policy.judge),
        ask: loaded.as_ref().map(|_| AskJudge(&ask)),
    };
    let v = decide_with(&s, &ns, thresholds, &pol.policy, &cx);
    let learned = loaded.as_ref().map(|(_, judge)| Judged { model: judge.sha256().to_owned(), pairs: asked.take() });
    (v, pol.version, learned)
}

const INSERT: &str = "INSERT INTO memory_fabric.reviews (id, tenant_id, candidate_id, status, duplicate_of_id, \
     contradicts_id, contradiction_resolution, proposed_tier, priority_score, reviewer, reviewer_notes, reason, \
     similarity, policy_version, consent_id, rejection_of_id, reviewed_by, scope_version, neighbour_ids, retracted_ids, \
     judge_model, judge_scores) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, pg_catalog.pg_get_userbyid($17), \
             $18::uuid, $19, $20, $21, $22::jsonb)";

/// Reviews one candidate and records the verdict; returns the review id.
pub fn review(client: &mut SpiClient<'_>, candidate_id: &str, force_human: Option<&str>) -> String {
    crate::xact::lock(client, "candidate", &[Some(candidate_id)]);
    let c = crate::security::candidate_for_caller(client, candidate_id);
    rows::require_open(client, &c);
    let (v, policy_version, basis) = verdict_for(client, &c, force_human);

    let id = crate::ids::new_id("rv");
    let p = plan(client, INSERT, &[TEXT, TEXT, TEXT, TEXT, TEXT, TEXT, TEXT, TEXT, FLOAT8, TEXT, TEXT, TEXT, FLOAT8, INT4, TEXT, TEXT, crate::spi::OID, TEXT, crate::spi::TEXT_ARRAY, crate::spi::TEXT_ARRAY, TEXT, TEXT], true);
    client
        .update(
            &*p,
            None,
            &[
                id.as_str().into(),
                c.tenant_id.as_str().into(),
                c.id.as_str().into(),
                v.status.as_str().into(),
                v.duplicate_of.as_deref().into(),
                v.contradicts.as_deref().into(),
                v.resolution.map(|r| r.as_str()).into(),
                v.tier.as_str().into(),
                v.priority.into(),
                (if v.human { "human" } else { "auto" }).into(),
                v.notes.as_deref().into(),
                v.reason.as_deref().into(),
                v.similarity.into(),
                policy_version.into(),
                v.consent_id.as_deref().into(),
                v.rejection_of.as_deref().into(),
                crate::role::caller().into(),
                basis.scope_version.as_deref().into(),
                basis.neighbour_ids.into(),
                basis.retracted_ids.into(),
                basis.judged.as_ref().map(|j| j.model.as_str()).into(),
                basis.judged.as_ref().map(|j| j.scores_json().to_string()).into(),
            ],
        )
        .unwrap_or_else(|e| error!("memory_fabric: cannot record review: {e}"));

    // a contradiction the policy rejected (contradiction.on_block reject) is still one
    if v.status == Status::Contradicts || (v.status == Status::Rejected && v.contradicts.is_some()) {
        events::emit(
            client,
            &c.tenant_id,
            "memory.contradiction",
            &c.id,
            None,
            json!({"review_id": id, "contradicts": v.contradicts, "resolution": v.resolution.map(|r| r.as_str()),
                   "reason": v.reason, "similarity": v.similarity}),
        );
    }
    if v.human {
        let payload = json!({"event": "memory.queued", "candidate_id": c.id, "review_id": id,
                             "tier": v.tier.as_str(), "reason": v.reason});
        events::emit(client, &c.tenant_id, "memory.queued", &c.id, None, payload);
        // Any role connected to the database can LISTEN (PostgreSQL has no privilege for it), so
        // the notification says only that something was queued: no tenant, no id, no tier. A
        // reviewer reads what it may see of the queue through review_queue (grant and pin).
        events::notify(client, json!({"event": "memory.queued"}));
    }
    id
}
