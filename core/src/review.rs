//! The review verdict (memory_fabric.review_candidate, steps 1 and 4–7 of review), decided from the candidate
//! and the live promoted memories the extension found near it. Pure and deterministic: the
//! same candidate, policy and neighbours give the same verdict.

use crate::assertion::{compare, parse, Assertion, Comparison, Difference};
use crate::claim::{self, Analysis, Relation};
use crate::policy::{JudgeThresholds, Policy, Thresholds, Tier, UntrustedEvidence};

/// The candidate under review.
#[derive(Debug, Clone, Default)]
pub struct Subject<'a> {
    pub source: &'a str,
    pub classification: &'a str,
    pub intent_id: Option<&'a str>,
    pub write_class: Option<&'a str>,
    pub confidence: Option<f64>,
    pub evidence_count: usize,
    /// The evidence refs, for the provenance gate.
    pub evidence_refs: &'a [String],
    /// Capture time, seconds since the epoch.
    pub captured_at: f64,
    pub text: &'a str,
    pub entity: Option<&'a str>,
    pub predicate: Option<&'a str>,
    /// Canonical JSON text of the value.
    pub value: Option<&'a str>,
    pub content_hash: &'a str,
    /// The memory or candidate this one says it supersedes (a correction names what it corrects).
    pub supersedes: Option<&'a str>,
    /// Its vector cannot be compared with any (crate::capture::degenerate_norm): one captured
    /// before capture refused such vectors.
    pub vector_unusable: bool,
}

/// Review step 2: what the extension found about consent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Consent {
    /// The policy does not require consent for this candidate.
    NotRequired,
    /// A live consent covers it.
    Matched(String),
    /// It needs one and none is live.
    Missing,
}

/// A live promoted memory in the candidate's scope.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Neighbor {
    pub id: String,
    /// Cosine similarity with the candidate (same embedding model), when compared.
    pub similarity: Option<f64>,
    pub text: String,
    pub entity: Option<String>,
    pub predicate: Option<String>,
    pub value: Option<String>,
    pub intent_scope: Option<String>,
    pub source: String,
    pub confidence: Option<f64>,
    pub evidence_count: usize,
    pub captured_at: f64,
    pub content_hash: String,
    /// The judge function's answer (true: contradicts), when one is configured and was asked.
    pub judge: Option<bool>,
    /// The learned judge's probabilities for this pair, when it was loaded and the neighbour
    /// is past the same-topic gate.
    pub learned: Option<JudgeScores>,
    /// Its probabilities for the pair in one spelling of amounts, dates and times
    /// (`Spelling::Canonical`), when that differs from the texts as written and a merge read them.
    pub learned_canonical: Option<JudgeScores>,
}

/// The learned judge's probabilities for a pair, each direction [entailment, neutral,
/// contradiction]: `ab` reads "the candidate, then the memory", `ba` the other way round.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct JudgeScores {
    pub ab: [f32; 3],
    pub ba: [f32; 3],
}

impl JudgeScores {
    /// The contradiction probability of the more confident direction.
    pub fn contradiction(&self) -> f64 {
        f64::from(self.ab[2].max(self.ba[2]))
    }

    /// The entailment probability of the less confident direction: each must follow from the
    /// other for the two to say the same.
    pub fn mutual_entailment(&self) -> f64 {
        f64::from(self.ab[0].min(self.ba[0]))
    }

    fn describe(&self) -> String {
        format!(
            "judge: contradiction {:.3}/{:.3}, entailment {:.3}/{:.3}",
            self.ab[2], self.ba[2], self.ab[0], self.ba[0]
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    PendingPromotion,
    DuplicateOf,
    Contradicts,
    Rejected,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::PendingPromotion => "pending_promotion",
            Status::DuplicateOf => "duplicate_of",
            Status::Contradicts => "contradicts",
            Status::Rejected => "rejected",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolution {
    Supersede,
    Coexist,
    Block,
}

impl Resolution {
    pub fn as_str(self) -> &'static str {
        match self {
            Resolution::Supersede => "supersede",
            Resolution::Coexist => "coexist",
            Resolution::Block => "block",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub status: Status,
    pub duplicate_of: Option<String>,
    pub contradicts: Option<String>,
    pub resolution: Option<Resolution>,
    pub tier: Tier,
    pub priority: f64,
    /// Waits in the human review queue.
    pub human: bool,
    /// Machine-readable reason: why rejected, how duplicated or contradicted, why queued.
    pub reason: Option<String>,
    pub notes: Option<String>,
    pub similarity: Option<f64>,
    pub consent_id: Option<String>,
    /// Review step 3: the operator-rejected candidate this one repeats.
    pub rejection_of: Option<String>,
}

/// Whether promote() may act on a verdict (given an approval when it is human-reviewed): a new
/// fact, or a contradiction resolved by superseding or coexisting. Takes the stored names.
pub fn promotable(status: &str, resolution: Option<&str>) -> bool {
    status == Status::PendingPromotion.as_str()
        || (status == Status::Contradicts.as_str()
            && matches!(resolution, Some(r) if r == Resolution::Supersede.as_str() || r == Resolution::Coexist.as_str()))
}

impl Verdict {
    pub fn promotable(&self) -> bool {
        promotable(self.status.as_str(), self.resolution.map(Resolution::as_str))
    }
}

/// Seed 000 `tierFor`, with the rules taken from the policy (first match wins).
pub fn tier_for(s: &Subject<'_>, policy: &Policy) -> Tier {
    for r in &policy.tier_rules {
        let ok = r.source.as_deref().is_none_or(|x| x == s.source)
            && r.intent_prefix.as_deref().is_none_or(|p| s.intent_id.is_some_and(|i| i.starts_with(p)))
            && r.classification.as_deref().is_none_or(|x| x == s.classification)
            && r.write_class.as_deref().is_none_or(|x| Some(x) == s.write_class);
        if ok {
            return r.tier;
        }
    }
    policy.default_tier
}

/// Seed 000 `priorityFor`: a base per source plus a capped boost per evidence ref, in [0, 1],
/// rounded to the two decimals the tables store.
pub fn priority_for(s: &Subject<'_>, policy: &Policy) -> f64 {
    let base = policy.priority_base.iter().find(|(k, _)| k == s.source).map(|(_, v)| *v).unwrap_or(0.5);
    let boost = (s.evidence_count as f64 * policy.priority_evidence_step).min(policy.priority_evidence_max);
    ((base + boost).min(1.0) * 100.0).round() / 100.0
}

fn conf(c: Option<f64>) -> f64 {
    c.unwrap_or(0.5)
}

/// Fresher and stronger: captured later, and from a more trusted source, or from an equally
/// trusted one with no less evidence and confidence and materially more of one of them.
pub fn outranks(s: &Subject<'_>, n: &Neighbor, policy: &Policy) -> bool {
    if s.captured_at <= n.captured_at {
        return false;
    }
    let (ts, tn) = (policy.trust_of(s.source), policy.trust_of(&n.source));
    if ts != tn {
        return ts > tn;
    }
    let (cs, cn) = (conf(s.confidence), conf(n.confidence));
    cs >= cn && s.evidence_count >= n.evidence_count && (s.evidence_count > n.evidence_count || cs >= cn + 0.1)
}

fn same_fact(s: &Subject<'_>, n: &Neighbor) -> Option<bool> {
    match (s.entity, s.predicate, &n.entity, &n.predicate) {
        (Some(e), Some(p), Some(ne), Some(np)) if e == ne && p == np => Some(s.value == n.value.as_deref()),
        _ => None,
    }
}

/// Both state structured facts, about different attributes: never each other's duplicate or
/// contradiction, however alike their words.
fn different_keys(s: &Subject<'_>, n: &Neighbor) -> bool {
    match (s.entity, s.predicate, &n.entity, &n.predicate) {
        (Some(e), Some(p), Some(ne), Some(np)) => e != ne || p != np,
        _ => false,
    }
}

fn fmt_sim(x: Option<f64>) -> String {
    x.map(|v| format!(" (similarity {v:.3})")).unwrap_or_default()
}

/// The candidate's assertion compared with each neighbour's text, once per neighbour and only
/// when a step needs it: deduplication and the contradiction step read the same comparison.
struct Comparisons<'a> {
    me: Assertion,
    /// The learned judge, asked about a neighbour the first time a step needs its answer.
    ask: Option<AskJudge<'a>>,
    judged: std::cell::RefCell<Vec<(String, JudgeScores)>>,
    judged_canonical: std::cell::RefCell<Vec<(String, JudgeScores)>>,
    /// Whether the candidate reads otherwise in one spelling.
    respelled: bool,
    done: std::cell::RefCell<Vec<(String, Comparison)>>,
    /// What the candidate claims (core/src/claim.rs), and how each neighbour's claims relate.
    claims: Analysis,
    related: std::cell::RefCell<Vec<(String, Relation)>>,
}

impl<'a> Comparisons<'a> {
    fn new(text: &str, ask: Option<AskJudge<'a>>) -> Comparisons<'a> {
        Comparisons {
            me: parse(text),
            ask,
            judged: Default::default(),
            judged_canonical: Default::default(),
            respelled: Spelling::respells(text),
            done: Default::default(),
            claims: claim::analyze(text),
            related: Default::default(),
        }
    }

    /// What the learned judge says of the candidate and `n`: the scores given with `n`, else
    /// the judge asked now (once per neighbour); None when it is not loaded.
    fn learned(&self, n: &Neighbor) -> Option<JudgeScores> {
        if let Some(j) = self.known(n) {
            return Some(j);
        }
        let j = (self.ask?.0)(n, Spelling::AsWritten);
        self.judged.borrow_mut().push((n.id.clone(), j));
        Some(j)
    }

    /// What the learned judge says of the pair for a merge: in one spelling, asked once more
    /// only where that spelling differs from the texts as written.
    fn learned_for_merge(&self, n: &Neighbor) -> Option<JudgeScores> {
        if !self.respelled && !Spelling::respells(&n.text) {
            return self.learned(n);
        }
        if let Some(j) = self.known_canonical(n) {
            return Some(j);
        }
        // given the scores as written only, and no judge to ask: those
        let Some(ask) = self.ask else { return self.learned(n) };
        let j = (ask.0)(n, Spelling::Canonical);
        self.judged_canonical.borrow_mut().push((n.id.clone(), j));
        Some(j)
    }

    /// What the learned judge said of `n` for a merge, if it was read, and whether in one
    /// spelling: for the notes, never asking.
    fn known_for_merge(&self, n: &Neighbor) -> Option<(JudgeScores, bool)> {
        self.known_canonical(n).map(|j| (j, true)).or_else(|| self.known(n).map(|j| (j, false)))
    }

    /// What the learned judge said of `n` in one spelling, if it was read, never asking.
    fn known_canonical(&self, n: &Neighbor) -> Option<JudgeScores> {
        n.learned_canonical.or_else(|| self.judged_canonical.borrow().iter().find(|(id, _)| *id == n.id).map(|(_, j)| *j))
    }

    /// What the learned judge said of `n`, if it was read: for the notes, never asking.
    fn known(&self, n: &Neighbor) -> Option<JudgeScores> {
        n.learned.or_else(|| self.judged.borrow().iter().find(|(id, _)| *id == n.id).map(|(_, j)| *j))
    }

    fn relation(&self, n: &Neighbor) -> Relation {
        if let Some((_, r)) = self.related.borrow().iter().find(|(id, _)| *id == n.id) {
            return r.clone();
        }
        let r = claim::relate(&self.claims, &claim::analyze(&n.text));
        self.related.borrow_mut().push((n.id.clone(), r.clone()));
        r
    }

    fn with(&self, n: &Neighbor) -> Comparison {
        if let Some((_, c)) = self.done.borrow().iter().find(|(id, _)| *id == n.id) {
            return *c;
        }
        let c = compare(&self.me, &parse(&n.text));
        self.done.borrow_mut().push((n.id.clone(), c));
        c
    }
}

/// A merge of a statement reworded (`repeats`): the embedder's similarity and the learned
/// judge's entailment in both directions it needs; from the lower similarity, a higher
/// entailment ("cust_4040 requested a callback" / "… asked to be called back": 0.83, 0.98).
const REWORDED_SIMILARITY: f64 = 0.85;
const REWORDED_ENTAILMENT: f64 = 0.80;
const REWORDED_SIMILARITY_LOW: f64 = 0.80;
const REWORDED_ENTAILMENT_LOW: f64 = 0.95;

/// Whether `n` says what the candidate says, in the strict sense a duplicate needs: the same
/// content, or near-identical with no differing assertion and nothing added.
fn repeats(s: &Subject<'_>, me: &Comparisons<'_>, n: &Neighbor, t: Thresholds, learned: Option<JudgeThresholds>) -> bool {
    if n.content_hash == s.content_hash {
        return true;
    }
    // what every other merge needs: no key or structured fact that tells them apart, and no
    // configured judge function against it
    if different_keys(s, n) || same_fact(s, n) == Some(false) || n.judge == Some(true) {
        return false;
    }
    let past = |floor: f64| n.similarity.is_some_and(|x| x >= floor);
    // the same words, two that "and" joins in the other order or two swapped in a relation that
    // holds both ways ("is married to"), on the same topic
    if past(t.duplicate)
        && (crate::assertion::coordinated_otherwise(s.text, &n.text) || me.with(n).symmetric_roles)
    {
        return true;
    }
    // the same one claim in other words (the same subject, attribute and value: "would like order
    // updates by email" / "prefers email for all order updates"), on the same topic: from half the
    // contradiction threshold, as a conflict of one attribute
    if past(t.contradiction / 2.0)
        && matches!(me.relation(n), Relation::Same { .. })
        // and neither denies what the other says ("Working for Philip Morris isn't like …" /
        // "Working for Philip Morris is …" claim one employer; one of them denies the rest)
        && me.with(n).difference != Some(Difference::Negation)
        // and both name the same things ("invoices by post to Leeds" / "… to Porto" do not), and
        // the candidate says no more ("… sent to the Lisbon office"); saying less, merged, it
        // loses nothing the memory does not hold
        && claim::same_names(s.text, &n.text)
        && !claim::extends(s.text, &n.text)
    {
        return true;
    }
    // the same statement with a word or two in other words ("Luis can speak Italian" / "Luis
    // speaks Italian"): nothing differs by the rules, the same numbers, identifiers and names in
    // the same order, neither says more, close by the embedder and entailed both ways by the
    // learned judge (core/examples/verdicts.rs measured the bars: 0 false merges on the corpus,
    // PAWS's word-order pairs included, and on bench/review_quality's near-misses, at 0.80 as at
    // 0.90 and 0.70; 0.80 merged 3 more of public.tsv's one-way entailments, each saying less
    // than the memory or the same: "A man and woman dance." / "… dance together.")
    let rules = me.with(n);
    let reworded_bar = if past(REWORDED_SIMILARITY) {
        Some(REWORDED_ENTAILMENT)
    } else {
        past(REWORDED_SIMILARITY_LOW).then_some(REWORDED_ENTAILMENT_LOW)
    };
    if reworded_bar.is_some()
        && rules.difference.is_none()
        && rules.same_values
        && !rules.other_subjects
        && !rules.reordered
        && claim::same_names(s.text, &n.text)
        && !claim::extends(s.text, &n.text)
        && !claim::extends(&n.text, s.text)
        // two values of one attribute, or claims that never meet, are no rewording
        && !matches!(me.relation(n), Relation::Conflict { .. } | Relation::Compatible(_))
        && learned.is_some()
        && me.learned_for_merge(n).is_some_and(|j| reworded_bar.is_some_and(|bar| j.mutual_entailment() >= bar))
    {
        return true;
    }
    past(t.duplicate)
        && me.with(n).equivalent
        // the learned judge, where it judged this pair, must find entailment both ways, unless
        // the two state numbers, dates or amounts: those the rules read ("twelve orders" / "12
        // orders", "$1,250.00" / "1250 USD") and the judge does not
        && match learned {
            Some(th) => me.with(n).quantities || me.learned_for_merge(n).is_none_or(|j| j.mutual_entailment() >= th.merge),
            None => true,
        }
}

/// Most similar first, then by id: the deterministic order review looks at neighbours in.
fn by_similarity(list: &[Neighbor]) -> Vec<&Neighbor> {
    let mut out: Vec<&Neighbor> = list.iter().collect();
    out.sort_by(|a, b| b.similarity.unwrap_or(-2.0).total_cmp(&a.similarity.unwrap_or(-2.0)).then_with(|| a.id.cmp(&b.id)));
    out
}

/// What review takes from the extension besides the candidate and the live memories near it.
#[derive(Debug, Clone, Default)]
pub struct Context<'a> {
    pub judge_configured: bool,
    /// Queues a promotable candidate for a human whatever its tier, with this reason (e.g. a
    /// duplicate whose original was retracted).
    pub force_human: Option<&'a str>,
    /// Candidates an operator rejected, near this one, in its scope (review step 3).
    pub rejected: &'a [Neighbor],
    /// Retracted memories near this one, in its scope: one it repeats is not promoted again
    /// without a human (step 7).
    pub retracted: &'a [Neighbor],
    pub consent: Option<Consent>,
    /// Embedding models other than the candidate's of memories in its scope (live, or retracted
    /// and not erased), which its vector could not be compared with: the candidate waits for a
    /// human (step 7).
    pub other_models: &'a [String],
    /// The learned judge's thresholds, when it is loaded: neighbours' `learned` scores are then
    /// read as `decide_with` documents.
    pub learned: Option<JudgeThresholds>,
    /// Asks the learned judge about the candidate and a neighbour whose `learned` is not given,
    /// when a step needs its answer (and `learned` is set).
    pub ask: Option<AskJudge<'a>>,
}

/// How the learned judge is given a pair. A contradiction reads the texts as written (as the
/// judge was trained and its bars chosen); a merge reads them with amounts, dates and times in
/// one spelling (core/src/spelling.rs), the rules having found those equal: the judge reads
/// "15%" / "fifteen percent" as two numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spelling {
    AsWritten,
    Canonical,
}

impl Spelling {
    /// The text the judge reads.
    pub fn of(self, text: &str) -> std::borrow::Cow<'_, str> {
        match self {
            Spelling::AsWritten => std::borrow::Cow::Borrowed(crate::assertion::without_label(text)),
            Spelling::Canonical => crate::spelling::canonical(text),
        }
    }

    /// Whether the two spellings of `text` differ.
    pub fn respells(text: &str) -> bool {
        Spelling::Canonical.of(text) != Spelling::AsWritten.of(text)
    }
}

/// The learned judge, asked about the candidate and one neighbour: its scores both ways.
#[derive(Clone, Copy)]
pub struct AskJudge<'a>(pub &'a dyn Fn(&Neighbor, Spelling) -> JudgeScores);

impl std::fmt::Debug for AskJudge<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AskJudge")
    }
}

/// Decides the verdict (see `decide_with` for steps 2 and 3).
pub fn decide(
    s: &Subject<'_>,
    neighbors: &[Neighbor],
    thresholds: Thresholds,
    policy: &Policy,
    judge_configured: bool,
    force_human: Option<&str>,
) -> Verdict {
    decide_with(s, neighbors, thresholds, policy, &Context { judge_configured, force_human, ..Default::default() })
}

pub fn decide_with(s: &Subject<'_>, neighbors: &[Neighbor], thresholds: Thresholds, policy: &Policy, cx: &Context<'_>) -> Verdict {
    let (judge_configured, force_human) = (cx.judge_configured, cx.force_human);
    let tier = tier_for(s, policy);
    let priority = priority_for(s, policy);
    let mut v = Verdict {
        status: Status::PendingPromotion,
        duplicate_of: None,
        contradicts: None,
        resolution: None,
        tier,
        priority,
        human: false,
        reason: None,
        notes: None,
        similarity: None,
        consent_id: None,
        rejection_of: None,
    };

    // 1. trust
    if let Some(c) = s.confidence {
        if c < policy.min_confidence {
            v.status = Status::Rejected;
            v.reason = Some("low_confidence".into());
            v.notes = Some(format!("confidence {c} is below the policy floor {}", policy.min_confidence));
            return v;
        }
    }
    let trust = policy.trust_of(s.source);
    if trust < policy.min_source_trust {
        v.status = Status::Rejected;
        v.reason = Some("untrusted_source".into());
        v.notes = Some(format!("source {} has trust {trust}, below the policy floor {}", s.source, policy.min_source_trust));
        return v;
    }
    // 1a. a vector that cannot be compared: the duplicate and contradiction steps would see
    // nothing, or everything, near it
    if s.vector_unusable {
        v.status = Status::Rejected;
        v.reason = Some("unusable_vector".into());
        v.notes = Some("its vector's sum of squares is zero, subnormal or infinite in single precision: it cannot be compared".into());
        return v;
    }
    // 1b. provenance: a fact whose evidence the agent only read (a web page, a URL, a file, a
    // document, a content-fetching tool's result) is how an injected instruction becomes a
    // memory; one such ref is enough, whatever else the candidate cites.
    let untrusted = match policy.provenance.untrusted_evidence {
        UntrustedEvidence::Allow => None,
        _ => policy.provenance.untrusted(s.evidence_refs),
    };
    let untrusted_note = untrusted.as_ref().map(|o| format!("evidence from untrusted origins: {}", o.join(", ")));
    if untrusted.is_some() && policy.provenance.untrusted_evidence == UntrustedEvidence::Reject {
        v.status = Status::Rejected;
        v.reason = Some("untrusted_evidence".into());
        v.notes = untrusted_note;
        return v;
    }
    // 2. consent: PII preferences, decisions and corrections need a live consent.
    match &cx.consent {
        Some(Consent::Missing) => {
            v.status = Status::Rejected;
            v.reason = Some("no_consent".into());
            v.notes = Some(format!(
                "{} {} needs a live consent for its subject, purpose and classification",
                s.classification,
                s.write_class.unwrap_or("")
            ));
            return v;
        }
        Some(Consent::Matched(id)) => v.consent_id = Some(id.clone()),
        _ => {}
    }

    let me = Comparisons::new(s.text, cx.ask.filter(|_| cx.learned.is_some() && !cx.judge_configured));

    // 3. remembered rejections: the same noise an operator already rejected is rejected again.
    if let Some(r) = by_similarity(cx.rejected).into_iter().find(|r| repeats(s, &me, r, thresholds, cx.learned)) {
        v.status = Status::Rejected;
        v.reason = Some("remembered_rejection".into());
        v.rejection_of = Some(r.id.clone());
        v.similarity = r.similarity;
        v.notes = Some(format!("repeats rejected candidate {}{}", r.id, fmt_sim(r.similarity)));
        return v;
    }

    // Deterministic order: most similar first, then by id.
    let ns = by_similarity(neighbors);

    // 4. duplicates: same content, same structured fact, or near-identical saying the same.
    let dup = ns
        .iter()
        .find(|n| n.content_hash == s.content_hash)
        .map(|n| (*n, "same_content"))
        .or_else(|| ns.iter().find(|n| same_fact(s, n) == Some(true)).map(|n| (*n, "same_fact")))
        .or_else(|| ns.iter().find(|n| repeats(s, &me, n, thresholds, cx.learned)).map(|n| (*n, "similar")));
    if let Some((n, how)) = dup {
        v.status = Status::DuplicateOf;
        v.duplicate_of = Some(n.id.clone());
        v.similarity = n.similarity;
        v.reason = Some(format!("duplicate:{how}"));
        v.notes = Some(format!("duplicate of {}{}", n.id, fmt_sim(n.similarity)));
        if let (Some((j, canonical)), "similar") = (me.known_for_merge(n), how) {
            let spelled = if canonical { " (amounts, dates and times in one spelling)" } else { "" };
            v.notes = Some(format!("{}; {}{spelled}", v.notes.take().unwrap(), j.describe()));
        }
        if how == "similar" && matches!(me.relation(n), Relation::Same { .. }) {
            v.notes = Some(format!("{}; claims {} and {}", v.notes.take().unwrap(), me.claims.describe(), claim::analyze(&n.text).describe()));
        }
        return v;
    }

    // 5. contradictions: same (entity, predicate) with another value, or similar enough with a
    // differing assertion (the judge's answer when a judge is configured).
    let correction = s.write_class == Some("correction");
    // The rules' finding that lowered the judge's bar, when only that bar was passed.
    let mut below_judge: Option<(&'static str, Option<(f64, f64)>)> = None;
    // A keyed state the candidate says changed ("moved to", "no longer", "now works at").
    let mut state_change = false;
    let contra = ns
        .iter()
        .find(|n| correction && s.supersedes == Some(n.id.as_str()))
        .map(|n| (*n, "correction".to_owned()))
        .or_else(|| ns.iter().find(|n| same_fact(s, n) == Some(false)).map(|n| (*n, "fact".to_owned())))
        .or_else(|| {
            ns.iter().find_map(|n| {
                // the learned judge, when it is loaded and no judge function is set, is asked only
                // where the rules and the claims leave the pair open
                let learned = if judge_configured { None } else { cx.learned };
                if different_keys(s, n) {
                    return None;
                }
                // what each claims (core/src/claim.rs): only incompatible values of one
                // single-valued attribute of one subject contradict; events, values among several,
                // other subjects, speakers and chat never do
                // (a judge function an admin set decides on its own)
                let relation = if judge_configured { Relation::Generic } else { me.relation(n) };
                // a keyed state of one subject in other words ("I go by Nico" / "I prefer to be
                // called Nick") may lie further than the contradiction threshold: half of it
                // suffices for a conflict of one attribute; anything else needs all of it
                let floor = match relation {
                    Relation::Conflict { .. } => thresholds.contradiction / 2.0,
                    _ => thresholds.contradiction,
                };
                if !n.similarity.is_some_and(|x| x >= floor) {
                    return None;
                }
                match &relation {
                    Relation::Compatible(_) | Relation::Same { .. } => return None,
                    Relation::Conflict { attribute, change } => {
                        state_change = *change;
                        return Some((*n, format!("state:{attribute}{}", if *change { ";change" } else { "" })));
                    }
                    Relation::Generic | Relation::Events { .. } | Relation::Values => {}
                }
                let cmp = me.with(n);
                let mut rules = cmp.difference;
                // (two swapped in a relation that holds both ways say the same)
                if cmp.symmetric_roles {
                    return None;
                }
                match relation {
                    // events accumulate: two events meet by any difference only when they are one
                    // event (one thing, one action: one order shipped on two dates), else only to
                    // deny each other; and one value among several meets another only to deny it.
                    // Never on the judge's word alone.
                    // outcomes of one thing that exclude each other ("approved" / "declined",
                    // "kept" / "returned"): the rules alone, a supersede left to a person
                    Relation::Events { opposed: true, .. } => {
                        below_judge = Some(("outcome", None));
                        return Some((*n, "outcome".to_owned()));
                    }
                    Relation::Events { same_instance, .. } => {
                        if !same_instance {
                            rules = rules.filter(|d| matches!(d, Difference::Negation | Difference::Antonym | Difference::Roles));
                        }
                        rules?;
                    }
                    Relation::Values => {
                        rules = rules.filter(|d| matches!(d, Difference::Negation | Difference::Antonym | Difference::Roles));
                        rules?;
                    }
                    _ => {}
                }
                // a denial or another number beside other words is about another thing ("not
                // eligible for the loyalty discount" / "eligible for the student discount", "VAT
                // for Portugal is 23 %" / "VAT for Spain is 21 %")
                if cmp.other_words && matches!(rules, Some(Difference::Negation | Difference::Number)) {
                    rules = None;
                }
                // and a denial at another time is of another time ("did not order in January
                // 2026" / "ordered twice in February 2026")
                if rules == Some(Difference::Negation) && cmp.other_times {
                    rules = None;
                }
                // a denied quantifier ("not every refund needs approval") holds beside the
                // statement of some of them
                if rules == Some(Difference::Negation)
                    && (crate::assertion::denies_a_quantifier(s.text, &n.text) || crate::assertion::denies_a_quantifier(&n.text, s.text))
                {
                    rules = None;
                }
                match learned {
                    // what the rules find the same (nothing differs, nothing left over) or about
                    // other subjects (other identifiers) the judge does not call a contradiction
                    Some(_) if cmp.equivalent || cmp.other_subjects => None,
                    _ if judge_configured => (n.judge == Some(true)).then(|| (*n, "judge".to_owned())),
                    // opposite words in a statement otherwise the same ("before" / "after",
                    // "inside" / "outside", "approved" / "declined"), or another number, date or
                    // amount, not a bound, in a statement that says nothing else ("the SLA is 2
                    // hours" / "… 2 days") the rules read better than the judge: their finding
                    // alone, the judge not asked
                    Some(_)
                        if !cmp.other_words
                            && (matches!(rules, Some(Difference::Preposition | Difference::Antonym))
                                || (rules == Some(Difference::Number) && !cmp.more_words && !cmp.bounds)
                                // two things swapped in a relation that holds one way only
                                // ("Acme acquired Globex" / "Globex acquired Acme"), which the
                                // judge reads as the same words
                                || (rules == Some(Difference::Roles) && cmp.one_way_roles)) =>
                    {
                        let d = rules.unwrap();
                        below_judge = Some((d.as_str(), None));
                        Some((*n, d.as_str().to_owned()))
                    }
                    // nothing the judge alone may decide and no finding: the judge not asked
                    Some(_) if rules.is_none() && (cmp.quantities || cmp.other_words) => None,
                    Some(th) => match me.learned(n) {
                        Some(j) => {
                            let p = j.contradiction();
                            match rules {
                                // the reason names the rules' finding too, when there is one
                                Some(d) if p >= th.contradiction => Some((*n, format!("judge+{}", d.as_str()))),
                                // on the judge's word alone only a statement of no number, date
                                // or amount (those the rules read better: "$1,250.00" / "1250
                                // USD", "midnight" / "00:00") that speaks of the same things
                                // throughout
                                None if p >= th.contradiction => Some((*n, "judge".to_owned())),
                                Some(d) if p >= th.with_rules[d.index()] => {
                                    below_judge = Some((d.as_str(), Some((p, th.contradiction))));
                                    Some((*n, format!("judge+{}", d.as_str())))
                                }
                                _ => None,
                            }
                        }
                        // the judge not loaded: the rules alone
                        None => rules.map(|d| (*n, d.as_str().to_owned())),
                    },
                    // no learned judge: the rules alone
                    None => rules.map(|d| (*n, d.as_str().to_owned())),
                }
            })
        });
    // A supersede retracts a memory: on free text it needs the judge's own word (its
    // probability past `contradiction`), not only the rules'; when only the rules lowered the
    // bar, a person decides.
    let mut disagreement: Option<String> = None;
    if let Some((n, how)) = contra {
        let resolution = if correction && s.supersedes == Some(n.id.as_str()) {
            Resolution::Supersede
        } else if s.intent_id != n.intent_scope.as_deref() {
            Resolution::Coexist
        } else if s.write_class == Some("correction")
            || outranks(s, n, policy)
            // a change of state supersedes the older state, from a source trusted no less
            || (state_change && s.captured_at > n.captured_at && policy.trust_of(s.source) >= policy.trust_of(&n.source))
        {
            Resolution::Supersede
        } else {
            Resolution::Block
        };
        if let (Resolution::Supersede, Some((rule, judged))) = (resolution, below_judge) {
            disagreement = Some(match judged {
                Some((p, bar)) => format!("the rules find {rule} but the judge's contradiction probability {p:.3} is below {bar:.3}"),
                None => format!("the rules find {rule}, the judge not asked"),
            });
        }
        v.status = Status::Contradicts;
        v.contradicts = Some(n.id.clone());
        v.resolution = Some(resolution);
        v.similarity = n.similarity;
        v.reason = Some(format!("contradiction:{how}"));
        v.notes = Some(format!("contradicts {}{}: {}", n.id, fmt_sim(n.similarity), resolution.as_str()));
        if let Some(j) = me.known(n) {
            v.notes = Some(format!("{}; {}", v.notes.take().unwrap(), j.describe()));
        }
        // what review read each text to claim (core/src/claim.rs), for memory_history and the console
        v.notes = Some(format!("{}; claims {} against {}", v.notes.take().unwrap(), me.claims.describe(), claim::analyze(&n.text).describe()));
    }

    // 7. the human queue, for promotable verdicts only.
    if v.promotable() {
        let retracted = by_similarity(cx.retracted).into_iter().find(|r| repeats(s, &me, r, thresholds, cx.learned));
        // What was retracted does not come back on its own, and what only an untrusted origin
        // says does not become a memory on its own: a person decides. Their own reason when
        // nothing else queues the candidate; the notes say it either way.
        let mut note = |seen: String| {
            v.notes = Some(match v.notes.take() {
                Some(n) => format!("{n}; {seen}"),
                None => seen,
            })
        };
        // A memory of the candidate's intent beside a cross-intent one it contradicts: recall for
        // that intent returns both, so the intent holds a contradiction that no rule resolved. Both
        // may stand (coexist), but only a person says so.
        let gated = if v.resolution == Some(Resolution::Coexist) {
            note("recall for its intent returns the cross-intent memory it contradicts too".to_owned());
            Some("contradiction_across_intents")
        } else if let Some(d) = disagreement {
            note(d);
            Some("rules_and_judge_disagree")
        } else if let Some(seen) = untrusted_note {
            note(seen);
            Some("untrusted_evidence")
        } else if let Some(r) = retracted {
            note(format!("repeats retracted memory {}{}", r.id, fmt_sim(r.similarity)));
            Some("repeats_retracted")
        } else if !cx.other_models.is_empty() {
            note(format!("not compared with the scope's memories of other embedding models: {}", cx.other_models.join(", ")));
            Some("unreviewed_models")
        } else {
            None
        };
        let queue_reason = if let Some(r) = force_human {
            Some(r.to_owned())
        } else if policy.human_tiers.contains(&tier) {
            Some(if s.write_class == Some("correction") {
                "user_correction"
            } else if s.source == "operator" {
                "operator_source"
            } else {
                "durable_tier"
            }
            .to_owned())
        } else if policy.human_write_classes.iter().any(|w| Some(w.as_str()) == s.write_class) {
            Some("user_correction".to_owned())
        } else if policy.human_classifications.iter().any(|c| c == s.classification) {
            Some("compliance_flag".to_owned())
        } else {
            gated.map(str::to_owned)
        };
        if let Some(r) = queue_reason {
            v.human = true;
            if v.reason.is_none() {
                v.reason = Some(r);
            } else {
                v.reason = Some(format!("{};{r}", v.reason.take().unwrap()));
            }
        }
    }
    // 7a. A contradiction no rule resolved (block) is never promoted on review's word, and never
    // left where nobody looks: it waits for a person, who supersedes the memory, keeps both or
    // rejects it (approve() with a resolution, reject()); or the policy rejects it. Its reason
    // stays the contradiction's.
    if v.status == Status::Contradicts && v.resolution == Some(Resolution::Block) {
        let seen = if policy.on_block == crate::policy::OnBlock::Reject {
            v.status = Status::Rejected;
            "no rule resolves it, and the policy rejects such a contradiction (contradiction.on_block reject)"
        } else {
            v.human = true;
            "no rule resolves it: a person decides (approve with resolution supersede or coexist, or reject)"
        };
        v.notes = Some(match v.notes.take() {
            Some(n) => format!("{n}; {seen}"),
            None => seen.to_owned(),
        });
    }
    v
}

/// A promoted memory read again for promote(): what review's search selects it by.
pub struct Found<T> {
    pub id: String,
    /// Cosine distance to the candidate, for a memory of its model with a vector.
    pub distance: Option<f64>,
    /// Of the candidate's embedding model (ranked by the nearest search, without a vector last).
    pub same_model: bool,
    /// Same content, same fact key, or the memory the candidate supersedes.
    pub exact: bool,
    pub item: T,
}

/// The memories review's search finds among `found`, in its order: the exact matches, the first
/// `exact_limit` by id, then the `k` nearest of the candidate's model (by distance, those
/// without one last, then by id) that are not among them. When `found` holds what a search of
/// the scope found together with every memory inserted into the scope since (and nothing left
/// it), this is what the search would find now: a memory it finds now was found then or is new.
pub fn search_among<T>(found: Vec<Found<T>>, exact_limit: usize, k: usize) -> Vec<T> {
    // a memory given twice (found by the search and inserted since, when it committed between
    // the review's reading of the scope's version and its search) is one memory
    let mut found = found;
    let mut ids: std::collections::HashSet<String> = std::collections::HashSet::new();
    found.retain(|f| ids.insert(f.id.clone()));
    let mut exact: Vec<&Found<T>> = found.iter().filter(|f| f.exact).collect();
    exact.sort_by(|a, b| a.id.cmp(&b.id));
    exact.truncate(exact_limit);
    // as PostgreSQL orders a float8 ascending: numbers, then NaN, then null
    let rank = |f: &Found<T>| match f.distance {
        Some(x) if !x.is_nan() => (0, x),
        Some(_) => (1, 0.0),
        None => (2, 0.0),
    };
    let mut near: Vec<&Found<T>> = found.iter().filter(|f| f.same_model).collect();
    near.sort_by(|a, b| {
        let (ra, rb) = (rank(a), rank(b));
        ra.0.cmp(&rb.0).then(ra.1.total_cmp(&rb.1)).then_with(|| a.id.cmp(&b.id))
    });
    near.truncate(k);
    let mut order: Vec<String> = exact.iter().map(|f| f.id.clone()).collect();
    for f in &near {
        if !order.contains(&f.id) {
            order.push(f.id.clone());
        }
    }
    let mut slots: Vec<Option<Found<T>>> = found.into_iter().map(Some).collect();
    order
        .iter()
        .filter_map(|id| slots.iter_mut().find(|s| s.as_ref().is_some_and(|f| &f.id == id)).and_then(Option::take))
        .map(|f| f.item)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{search_among, Found};

    fn found(id: &str, distance: Option<f64>, same_model: bool, exact: bool) -> Found<String> {
        Found { id: id.to_owned(), distance, same_model, exact, item: id.to_owned() }
    }

    #[test]
    fn search_among_is_the_search_on_what_was_found_and_what_is_new() {
        // the exact matches by id (two of three), then the three nearest not among them
        let got = search_among(
            vec![
                found("m5", Some(0.30), true, false),
                found("m1", Some(0.10), true, false),
                found("m9", Some(0.90), true, true),
                found("m2", None, true, false),
                found("m3", Some(0.10), true, false),
                found("m7", Some(0.05), false, false),
                found("m8", Some(0.50), true, true),
                found("m0", Some(f64::NAN), true, false),
                found("m4", Some(0.20), true, true),
            ],
            2,
            3,
        );
        // exact: m4, m8 (m9 is third by id); nearest of the model: m1, m3 (a tie: by id), m4,
        // then m5; m7 is of another model; NaN and no vector rank last
        assert_eq!(got, vec!["m4", "m8", "m1", "m3"]);
        // fewer than k with a distance: NaN, then none
        let got = search_among(vec![found("a", None, true, false), found("b", Some(f64::NAN), true, false), found("c", Some(1.0), true, false)], 50, 5);
        assert_eq!(got, vec!["c", "b", "a"]);
        assert!(search_among::<String>(Vec::new(), 50, 5).is_empty());
    }

    #[test]
    fn search_among_counts_a_memory_given_twice_once() {
        // m committed between the review's reading of the version and its search: it is among
        // those compared and among those inserted since; n, the fifth nearest, stays in
        let got = search_among(
            vec![
                found("o1", Some(0.01), true, false),
                found("o2", Some(0.02), true, false),
                found("o3", Some(0.03), true, false),
                found("m", Some(0.04), true, false),
                found("m", Some(0.04), true, false),
                found("n", Some(0.10), true, false),
            ],
            50,
            5,
        );
        assert_eq!(got, vec!["o1", "o2", "o3", "m", "n"]);
        // so too an exact match given twice
        let got = search_among(vec![found("e", Some(0.5), true, true), found("e", Some(0.5), true, true), found("f", Some(0.6), true, true)], 2, 0);
        assert_eq!(got, vec!["e", "f"]);
    }

    use super::*;
    use crate::policy::Policy;

    fn policy() -> Policy {
        Policy::from_json(&Policy::default_json()).unwrap()
    }

    fn seed<'a>() -> Subject<'a> {
        Subject {
            source: "operator",
            classification: "PII",
            intent_id: Some("support.refund.execute"),
            evidence_count: 1,
            captured_at: 100.0,
            text: "Customer cust_8861 has a verbal NDA limiting PAN exposure to last-4 only.",
            content_hash: "h_seed",
            ..Default::default()
        }
    }

    fn th() -> Thresholds {
        Thresholds { duplicate: 0.9, contradiction: 0.6 }
    }

    fn n(id: &str, text: &str, sim: f64) -> Neighbor {
        Neighbor {
            id: id.into(),
            similarity: Some(sim),
            text: text.into(),
            source: "agent".into(),
            captured_at: 50.0,
            content_hash: format!("h_{id}"),
            intent_scope: Some("support.refund.execute".into()),
            ..Default::default()
        }
    }

    #[test]
    fn seed_000_tiers_and_priorities() {
        let p = policy();
        let s = seed();
        assert_eq!(tier_for(&s, &p), Tier::Durable);
        assert_eq!(priority_for(&s, &p), 0.95);
        let agent = |intent: Option<&'static str>, class: &'static str| Subject {
            source: "agent",
            intent_id: intent,
            classification: class,
            ..Default::default()
        };
        assert_eq!(tier_for(&agent(Some("support.x"), "PII"), &p), Tier::Episodic);
        assert_eq!(tier_for(&agent(Some("sales.x"), "PII"), &p), Tier::Working);
        assert_eq!(tier_for(&agent(None, "INTERNAL"), &p), Tier::Semantic);
        assert_eq!(priority_for(&agent(None, "PUBLIC"), &p), 0.5);
        let sys = Subject { source: "system", evidence_count: 10, ..Default::default() };
        assert_eq!(priority_for(&sys, &p), 1.0);
        let sys = Subject { source: "system", evidence_count: 3, ..Default::default() };
        assert_eq!(priority_for(&sys, &p), 0.85);
    }

    #[test]
    fn seed_000_worked_example_is_queued_for_a_human() {
        let v = decide(&seed(), &[], th(), &policy(), false, None);
        assert_eq!(v.status, Status::PendingPromotion);
        assert_eq!(v.tier, Tier::Durable);
        assert!(v.human);
        assert_eq!(v.reason.as_deref(), Some("operator_source"));
        assert!(v.promotable());
    }

    #[test]
    fn auto_tiers_are_not_queued() {
        let s = Subject { source: "agent", classification: "INTERNAL", text: "x", ..Default::default() };
        let v = decide(&s, &[], th(), &policy(), false, None);
        assert_eq!((v.status, v.tier, v.human, v.reason), (Status::PendingPromotion, Tier::Semantic, false, None));
        let v = decide(&s, &[], th(), &policy(), false, Some("duplicate_of_retracted"));
        assert!(v.human);
        assert_eq!(v.reason.as_deref(), Some("duplicate_of_retracted"));
    }

    #[test]
    fn trust_floor() {
        let mut p = policy();
        p.min_confidence = 0.6;
        let s = Subject { confidence: Some(0.59), ..seed() };
        let v = decide(&s, &[], th(), &p, false, None);
        assert_eq!((v.status, v.reason.as_deref()), (Status::Rejected, Some("low_confidence")));
        assert!(!v.promotable());
        p.min_source_trust = 0.7;
        let s = Subject { source: "agent", ..seed() };
        let v = decide(&s, &[], th(), &p, false, None);
        assert_eq!((v.status, v.reason.as_deref()), (Status::Rejected, Some("untrusted_source")));
        let v = decide(&Subject { source: "system", ..seed() }, &[], th(), &p, false, None);
        assert_eq!(v.status, Status::PendingPromotion);
    }

    #[test]
    fn duplicates_by_hash_fact_and_similarity() {
        let s = seed();
        let mut same = n("pm_a", "anything", 0.2);
        same.content_hash = "h_seed".into();
        let v = decide(&s, &[same], th(), &policy(), false, None);
        assert_eq!((v.status, v.duplicate_of.as_deref(), v.reason.as_deref()), (Status::DuplicateOf, Some("pm_a"), Some("duplicate:same_content")));

        let fact = Subject { entity: Some("customer:c"), predicate: Some("prefers"), value: Some("\"email\""), ..seed() };
        let mut m = n("pm_b", "other words", 0.1);
        (m.entity, m.predicate, m.value) = (Some("customer:c".into()), Some("prefers".into()), Some("\"email\"".into()));
        let v = decide(&fact, &[m], th(), &policy(), false, None);
        assert_eq!((v.status, v.reason.as_deref()), (Status::DuplicateOf, Some("duplicate:same_fact")));

        let v = decide(&s, &[n("pm_c", "Customer cust_8861 has a verbal NDA limiting PAN exposure to last 4 only", 0.97)], th(), &policy(), false, None);
        assert_eq!((v.status, v.reason.as_deref(), v.similarity), (Status::DuplicateOf, Some("duplicate:similar"), Some(0.97)));
        assert!(!v.human && !v.promotable());
    }

    #[test]
    fn near_identical_with_another_number_is_a_contradiction_not_a_duplicate() {
        let s = Subject { text: "Returns are accepted within 45 days.", intent_id: None, source: "agent", ..seed() };
        let mut old = n("pm_r", "Returns are accepted within 30 days.", 0.95);
        old.intent_scope = None;
        old.evidence_count = 1;
        let v = decide(&s, &[old.clone()], th(), &policy(), false, None);
        assert_eq!(v.status, Status::Contradicts);
        assert_eq!(v.reason.as_deref(), Some("contradiction:number"));
        // Same trust, same evidence and confidence: the conservative default.
        assert_eq!(v.resolution, Some(Resolution::Block));
        assert!(!v.promotable());
        // A correction supersedes.
        let c = Subject { write_class: Some("correction"), ..s.clone() };
        assert_eq!(decide(&c, &[old.clone()], th(), &policy(), false, None).resolution, Some(Resolution::Supersede));
        // More evidence, fresher: supersedes.
        let e = Subject { evidence_count: 2, ..s.clone() };
        assert_eq!(decide(&e, &[old.clone()], th(), &policy(), false, None).resolution, Some(Resolution::Supersede));
        // Older than the memory: never supersedes.
        let stale = Subject { evidence_count: 2, captured_at: 10.0, ..s.clone() };
        assert_eq!(decide(&stale, &[old.clone()], th(), &policy(), false, None).resolution, Some(Resolution::Block));
        // A memory of an intent contradicting a cross-intent one: both may stand, a person decides
        // (recall for the intent returns both).
        let scoped = Subject { intent_id: Some("support.eu"), ..s.clone() };
        let v = decide(&scoped, &[old], th(), &policy(), false, None);
        assert_eq!(v.resolution, Some(Resolution::Coexist));
        assert!(v.human && v.promotable());
        assert_eq!(v.reason.as_deref(), Some("contradiction:number;contradiction_across_intents"));
    }

    #[test]
    fn a_contradiction_no_rule_resolves_waits_for_a_person_or_the_policy_rejects_it() {
        let s = Subject { text: "Returns are accepted within 45 days.", intent_id: None, source: "agent", ..seed() };
        let mut old = n("pm_r", "Returns are accepted within 30 days.", 0.95);
        (old.intent_scope, old.evidence_count) = (None, 1);
        let v = decide(&s, &[old.clone()], th(), &policy(), false, None);
        assert_eq!((v.status, v.resolution, v.human), (Status::Contradicts, Some(Resolution::Block), true));
        assert_eq!((v.contradicts.as_deref(), v.reason.as_deref()), (Some("pm_r"), Some("contradiction:number")));
        assert!(v.notes.as_deref().unwrap().ends_with("a person decides (approve with resolution supersede or coexist, or reject)"), "{:?}", v.notes);
        assert!(!v.promotable());
        // the policy may reject them instead: rejected, naming the contradiction
        let mut p = policy();
        p.on_block = crate::policy::OnBlock::Reject;
        let v = decide(&s, &[old.clone()], th(), &p, false, None);
        assert_eq!((v.status, v.resolution, v.human), (Status::Rejected, Some(Resolution::Block), false));
        assert_eq!((v.contradicts.as_deref(), v.reason.as_deref()), (Some("pm_r"), Some("contradiction:number")));
        assert!(v.notes.as_deref().unwrap().contains("contradiction.on_block reject"), "{:?}", v.notes);
        // a contradiction a rule resolves is not touched by the switch
        let e = Subject { evidence_count: 2, ..s.clone() };
        let v = decide(&e, &[old], th(), &p, false, None);
        assert_eq!((v.status, v.resolution, v.human), (Status::Contradicts, Some(Resolution::Supersede), false));
    }

    #[test]
    fn structured_contradiction_and_judge() {
        let s = Subject { entity: Some("customer:c"), predicate: Some("prefers"), value: Some("\"phone\""), write_class: Some("correction"), ..seed() };
        let mut m = n("pm_f", "unrelated words entirely", 0.05);
        (m.entity, m.predicate, m.value) = (Some("customer:c".into()), Some("prefers".into()), Some("\"email\"".into()));
        let v = decide(&s, &[m], th(), &policy(), false, None);
        assert_eq!((v.status, v.reason.as_deref(), v.resolution), (Status::Contradicts, Some("contradiction:fact;user_correction"), Some(Resolution::Supersede)));
        assert!(v.human && v.promotable());

        // With a judge configured, the judge decides instead of the heuristic.
        let s = Subject { text: "Customer prefers email.", ..seed() };
        let mut j = n("pm_j", "Customer likes email.", 0.8);
        j.judge = Some(false);
        assert_eq!(decide(&s, &[j.clone()], th(), &policy(), true, None).status, Status::PendingPromotion);
        j.judge = Some(true);
        let v = decide(&s, &[j], th(), &policy(), true, None);
        assert_eq!((v.status, v.reason.as_deref()), (Status::Contradicts, Some("contradiction:judge;operator_source")));
    }

    fn judged(mut n: Neighbor, ab: [f32; 3], ba: [f32; 3]) -> Neighbor {
        n.learned = Some(JudgeScores { ab, ba });
        n
    }

    const LEARNED: JudgeThresholds = JudgeThresholds { contradiction: 0.8, with_rules: [0.4; 6], merge: 0.9 };

    fn with_judge(s: &Subject<'_>, ns: &[Neighbor]) -> Verdict {
        decide_with(s, ns, th(), &policy(), &Context { learned: Some(LEARNED), ..Default::default() })
    }

    #[test]
    fn the_learned_judge_decides_free_text_contradictions() {
        // (a statement that says more than the other beside another time: the rules' finding
        // needs the judge; see another_number_alone_needs_no_judge)
        let s = Subject { text: "The west gate opens at 10 am for deliveries.", intent_id: None, source: "agent", evidence_count: 0, ..seed() };
        let base = || {
            let mut m = n("pm_w", "The west gate opens at 9 am.", 0.7);
            m.intent_scope = None;
            m
        };
        // the rules find a number and the judge agrees past the lower bar: a contradiction
        let v = with_judge(&s, &[judged(base(), [0.1, 0.4, 0.5], [0.1, 0.5, 0.4])]);
        assert_eq!((v.status, v.reason.as_deref()), (Status::Contradicts, Some("contradiction:judge+number")));
        assert!(v.notes.as_deref().unwrap().contains("judge: contradiction 0.500/0.400"), "{:?}", v.notes);
        // the rules find one but the judge does not: new, whatever the rules say
        let v = with_judge(&s, &[judged(base(), [0.1, 0.8, 0.1], [0.1, 0.8, 0.1])]);
        assert_eq!(v.status, Status::PendingPromotion);
        // the judge alone, in either direction, past its own bar
        let mut plain = n("pm_p", "The west gate is open.", 0.7);
        plain.intent_scope = None;
        let other = Subject { text: "The west gate is open only in theory.", ..s.clone() };
        let v = with_judge(&other, &[judged(plain.clone(), [0.05, 0.1, 0.85], [0.1, 0.8, 0.1])]);
        assert_eq!((v.status, v.reason.as_deref()), (Status::Contradicts, Some("contradiction:judge")));
        // but not where either states a number, date or amount (the rules read those), nor where
        // each side speaks of something the other does not
        let other = Subject { text: "The west gate opens at 9 am on weekdays.", ..s.clone() };
        assert_eq!(with_judge(&other, &[judged(base(), [0.05, 0.1, 0.85], [0.1, 0.8, 0.1])]).status, Status::PendingPromotion);
        let other = Subject { text: "The side door of the old barn is open.", ..s.clone() };
        assert_eq!(with_judge(&other, &[judged(plain.clone(), [0.05, 0.1, 0.85], [0.1, 0.8, 0.1])]).status, Status::PendingPromotion);
        // opposite words in a statement otherwise the same: the rules' finding alone
        let other = Subject { text: "The west gate is closed.", ..s.clone() };
        let v = with_judge(&other, &[judged(plain.clone(), [0.8, 0.1, 0.1], [0.8, 0.1, 0.1])]);
        assert_eq!((v.status, v.reason.as_deref()), (Status::Contradicts, Some("contradiction:antonym")));
        // two things swapped in a relation that holds one way only: the rules' finding alone,
        // however alike the judge reads the words; one that may hold both ways, the judge's
        for (a, b, found) in [
            ("Acme acquired Globex in 2025.", "Globex acquired Acme in 2025.", true),
            ("Priya reports to Tomás.", "Tomás reports to Priya.", true),
            ("Acme sends invoices to Globex.", "Globex sends invoices to Acme.", false),
        ] {
            let mut m = n("pm_r", b, 0.95);
            m.intent_scope = None;
            let other = Subject { text: a, ..s.clone() };
            let v = with_judge(&other, &[judged(m, [0.95, 0.03, 0.02], [0.95, 0.03, 0.02])]);
            assert_eq!(v.status == Status::Contradicts, found, "{a} / {b}: {v:?}");
            if found {
                assert_eq!(v.reason.as_deref(), Some("contradiction:roles"));
            }
        }
        // a denial at another time is of another time, whatever the judge says
        let mut feb = n("pm_f", "cust_4012 ordered twice in February 2026.", 0.8);
        feb.intent_scope = None;
        let other = Subject { text: "cust_4012 did not order in January 2026.", ..s.clone() };
        assert_eq!(with_judge(&other, &[judged(feb, [0.0, 0.0, 1.0], [0.0, 0.0, 1.0])]).status, Status::PendingPromotion);
        // a denial beside other words is about another thing, whatever the judge says
        let mut loyalty = n("pm_l", "cust_9311 is eligible for the student discount.", 0.7);
        loyalty.intent_scope = None;
        let other = Subject { text: "cust_9311 is not eligible for the loyalty discount.", ..s.clone() };
        assert_eq!(with_judge(&other, &[judged(loyalty, [0.0, 0.0, 1.0], [0.0, 0.0, 1.0])]).status, Status::PendingPromotion);
        // below the judge's gate it is not asked: nothing, even with the rules' finding
        let mut far = judged(base(), [0.0, 0.0, 1.0], [0.0, 0.0, 1.0]);
        far.similarity = Some(0.45);
        assert_eq!(with_judge(&s, &[far]).status, Status::PendingPromotion);
        // without scores for a neighbour, the rules as before
        let v = with_judge(&s, &[base()]);
        assert_eq!((v.status, v.reason.as_deref()), (Status::Contradicts, Some("contradiction:number")));
        // a judge function configured overrides the learned judge
        let mut f = judged(base(), [0.0, 0.0, 1.0], [0.0, 0.0, 1.0]);
        f.judge = Some(false);
        let cx = Context { learned: Some(LEARNED), judge_configured: true, ..Default::default() };
        assert_eq!(decide_with(&s, &[f], th(), &policy(), &cx).status, Status::PendingPromotion);
    }

    /// The judge asked when a step needs it decides exactly what the judge read beforehand on
    /// every pair decides, on every pair of the evaluation corpus at several scores; and it is
    /// not asked where the claims or the rules decide alone.
    #[test]
    fn the_judge_asked_on_need_decides_as_the_judge_read_on_every_pair() {
        let corpus = include_str!("../tests/data/corpus/memory.tsv");
        let scores = [
            ([0.0, 0.0, 1.0], [0.0, 0.0, 1.0]),
            ([0.95, 0.04, 0.01], [0.92, 0.05, 0.03]),
            ([0.5, 0.3, 0.2], [0.1, 0.2, 0.7]),
            ([0.1, 0.85, 0.05], [0.1, 0.8, 0.1]),
        ];
        let (mut asked, mut pairs) = (0usize, 0usize);
        for line in corpus.lines().skip(1) {
            let f: Vec<&str> = line.split('\t').collect();
            let (a, b) = (f[3], f[4]);
            let hash = crate::text::content_hash(a);
            let s = Subject { text: a, content_hash: &hash, intent_id: None, source: "agent", ..seed() };
            for sim in [0.6, 0.9] {
                for (ab, ba) in scores {
                    let mut m = n("pm_b", b, sim);
                    m.intent_scope = None;
                    let j = JudgeScores { ab, ba };
                    let eager = Neighbor { learned: Some(j), learned_canonical: Some(j), ..m.clone() };
                    let (calls, respelled) = (std::cell::Cell::new(0usize), std::cell::Cell::new(0usize));
                    let f = |_: &Neighbor, spelling: Spelling| {
                        let c = if spelling == Spelling::AsWritten { &calls } else { &respelled };
                        c.set(c.get() + 1);
                        j
                    };
                    let lazy_cx = Context { learned: Some(LEARNED), ask: Some(AskJudge(&f)), ..Default::default() };
                    let eager_cx = Context { learned: Some(LEARNED), ..Default::default() };
                    let x = decide_with(&s, &[eager], th(), &policy(), &eager_cx);
                    let y = decide_with(&s, &[m], th(), &policy(), &lazy_cx);
                    assert_eq!(
                        (x.status, &x.reason, x.resolution, &x.duplicate_of, &x.contradicts),
                        (y.status, &y.reason, y.resolution, &y.duplicate_of, &y.contradicts),
                        "{a} / {b} at {sim} with {j:?}"
                    );
                    assert!(calls.get() <= 1 && respelled.get() <= 1, "{a} / {b}: asked {} and {} times", calls.get(), respelled.get());
                    // in one spelling only where that differs from the texts as written
                    assert!(respelled.get() == 0 || Spelling::respells(a) || Spelling::respells(b), "{a} / {b}");
                    asked += calls.get();
                    pairs += 1;
                }
            }
        }
        // the claims and the rules decide a good part of the corpus alone
        assert!(asked < pairs * 3 / 4, "asked {asked} of {pairs}");
        // an event of another thing, opposite words: decided without the judge
        let f = |_: &Neighbor, _: Spelling| -> JudgeScores { panic!("the judge was asked") };
        let cx = Context { learned: Some(LEARNED), ask: Some(AskJudge(&f)), ..Default::default() };
        for (a, b) in [("Order 1 of customer u1 shipped on day 1.", "Order 2 of customer u1 shipped on day 2."), ("The west gate is closed.", "The west gate is open.")] {
            let hash = crate::text::content_hash(a);
            let s = Subject { text: a, content_hash: &hash, intent_id: None, source: "agent", ..seed() };
            let mut m = n("pm_b", b, 0.9);
            m.intent_scope = None;
            decide_with(&s, &[m], th(), &policy(), &cx);
        }
    }

    #[test]
    fn the_judge_does_not_contradict_what_the_rules_find_the_same_or_about_others() {
        let sure = [0.0, 0.0, 1.0];
        let mut m = n("pm_d", "Depot 3 opens at 8:00.", 0.9);
        m.intent_scope = None;
        // the same numbers written otherwise: equivalent by the rules, a duplicate whatever the
        // judge reads there
        let s = Subject { text: "Depot 3 opens at 08:00.", intent_id: None, source: "agent", ..seed() };
        assert_eq!(with_judge(&s, &[judged(m.clone(), sure, sure)]).status, Status::DuplicateOf);
        // another order: other subjects
        let mut o = n("pm_o", "Order ord_7720 ships to Lisbon on 2026-03-08.", 0.9);
        o.intent_scope = None;
        let s = Subject { text: "Order ord_9911 ships to Lisbon on 2026-03-08.", intent_id: None, source: "agent", ..seed() };
        assert_eq!(with_judge(&s, &[judged(o, sure, sure)]).status, Status::PendingPromotion);
        // a free-text difference the rules do not see: the judge's word
        let mut m = n("pm_d", "The depot is open.", 0.9);
        m.intent_scope = None;
        let s = Subject { text: "The depot is open only in theory.", intent_id: None, source: "agent", ..seed() };
        assert_eq!(with_judge(&s, &[judged(m, sure, sure)]).status, Status::Contradicts);
    }

    #[test]
    fn another_number_alone_needs_no_judge() {
        // another time, amount or count at one place of a statement that says nothing else: the
        // rules alone, whatever the judge would say; a supersede then waits for a person
        let s = Subject { text: "The west gate opens at 10 am.", intent_id: None, source: "agent", evidence_count: 0, ..seed() };
        let mut m = n("pm_w", "The west gate opens at 9 am.", 0.7);
        m.intent_scope = None;
        let v = with_judge(&s, &[judged(m.clone(), [0.64, 0.3, 0.06], [0.6, 0.3, 0.1])]);
        assert_eq!((v.status, v.reason.as_deref()), (Status::Contradicts, Some("contradiction:number")));
        // a bound is no value ("after 9 am" / "after 10 am" may both hold): the judge's word
        let s = Subject { text: "The west gate opens after 10 am.", intent_id: None, source: "agent", evidence_count: 0, ..seed() };
        let mut m = n("pm_w", "The west gate opens after 9 am.", 0.7);
        m.intent_scope = None;
        assert_eq!(with_judge(&s, &[judged(m, [0.64, 0.3, 0.06], [0.6, 0.3, 0.1])]).status, Status::PendingPromotion);
    }

    #[test]
    fn a_finding_may_lower_the_judges_bar_to_nothing() {
        let s = Subject { text: "The west gate opens at 10 am for deliveries.", intent_id: None, source: "agent", evidence_count: 0, ..seed() };
        let mut m = n("pm_w", "The west gate opens at 9 am.", 0.7);
        m.intent_scope = None;
        let m = judged(m, [0.64, 0.3, 0.06], [0.6, 0.3, 0.1]);
        assert_eq!(with_judge(&s, &[m.clone()]).status, Status::PendingPromotion);
        let mut j = LEARNED;
        j.with_rules[crate::assertion::Difference::Number.index()] = 0.0;
        let v = decide_with(&s, &[m.clone()], th(), &policy(), &Context { learned: Some(j), ..Default::default() });
        assert_eq!((v.status, v.reason.as_deref()), (Status::Contradicts, Some("contradiction:judge+number")));
        // only the finding it names
        j.with_rules = [0.0; 6];
        j.with_rules[crate::assertion::Difference::Number.index()] = 0.5;
        let v = decide_with(&s, &[m], th(), &policy(), &Context { learned: Some(j), ..Default::default() });
        assert_eq!(v.status, Status::PendingPromotion);
    }

    #[test]
    fn a_supersede_needs_the_judges_own_word() {
        let s = Subject { text: "Returns are accepted within 45 days.", intent_id: None, source: "agent", evidence_count: 2, ..seed() };
        let mut old = n("pm_r", "Returns are accepted within 30 days.", 0.95);
        old.intent_scope = None;
        // rules and judge (past its own bar): supersede, not queued for that
        let v = with_judge(&s, &[judged(old.clone(), [0.0, 0.1, 0.9], [0.0, 0.1, 0.9])]);
        assert_eq!((v.status, v.resolution), (Status::Contradicts, Some(Resolution::Supersede)));
        assert!(!v.reason.as_deref().unwrap().contains("disagree"), "{:?}", v.reason);
        // only the rules' lower bar: a person decides, and the notes name both
        let v = with_judge(&s, &[judged(old.clone(), [0.0, 0.5, 0.5], [0.0, 0.5, 0.5])]);
        assert_eq!((v.status, v.resolution, v.human), (Status::Contradicts, Some(Resolution::Supersede), true));
        assert!(v.reason.as_deref().unwrap().contains("rules_and_judge_disagree"), "{:?}", v.reason);
        assert!(v.notes.as_deref().unwrap().contains("the rules find number but the judge's contradiction probability 0.500 is below 0.800"), "{:?}", v.notes);
        // a block waits for a person for its own sake, not for the disagreement
        let weaker = Subject { evidence_count: 0, ..s.clone() };
        let v = with_judge(&weaker, &[judged(old, [0.0, 0.5, 0.5], [0.0, 0.5, 0.5])]);
        assert_eq!((v.resolution, v.human), (Some(Resolution::Block), true));
        assert!(!v.reason.as_deref().unwrap().contains("disagree"), "{:?}", v.reason);
    }

    #[test]
    fn a_merge_reads_the_judge_in_one_spelling() {
        // the judge as written reads "15%" / "fifteen percent" as two numbers; in one spelling
        // it finds the two statements the same
        let (a, b) = ("cust_5190 gets a 15% discount on renewals.", "cust_5190 receives a fifteen percent discount on renewals.");
        assert!(Spelling::respells(b) && !Spelling::respells(a));
        assert_eq!(Spelling::Canonical.of(b), "cust_5190 receives a 15% discount on renewals.");
        let hash = crate::text::content_hash(a);
        let s = Subject { text: a, content_hash: &hash, intent_id: None, source: "agent", ..seed() };
        let mut m = n("pm_b", b, 0.97);
        m.intent_scope = None;
        let as_written = JudgeScores { ab: [0.74, 0.03, 0.23], ba: [0.01, 0.01, 0.98] };
        let canonical = JudgeScores { ab: [0.96, 0.03, 0.01], ba: [0.97, 0.02, 0.01] };
        let f = |_: &Neighbor, spelling: Spelling| if spelling == Spelling::AsWritten { as_written } else { canonical };
        let cx = Context { learned: Some(LEARNED), ask: Some(AskJudge(&f)), ..Default::default() };
        let v = decide_with(&s, &[m.clone()], th(), &policy(), &cx);
        assert_eq!(v.status, Status::DuplicateOf, "{v:?}");
        assert!(v.notes.as_deref().unwrap().contains("in one spelling"), "{v:?}");
        // the same scores given with the neighbour decide the same
        let eager = Neighbor { learned: Some(as_written), learned_canonical: Some(canonical), ..m.clone() };
        let cx = Context { learned: Some(LEARNED), ..Default::default() };
        assert_eq!(decide_with(&s, &[eager], th(), &policy(), &cx).status, Status::DuplicateOf);
        // without the scores in one spelling, those as written: no merge
        let eager = Neighbor { learned: Some(as_written), ..m };
        assert_ne!(decide_with(&s, &[eager], th(), &policy(), &cx).status, Status::DuplicateOf);
    }

    #[test]
    fn words_joined_by_and_in_the_other_order_merge() {
        let (a, b) = ("cust_1001 and cust_1002 share a billing address.", "cust_1002 and cust_1001 share a billing address.");
        let hash = crate::text::content_hash(a);
        let s = Subject { text: a, content_hash: &hash, intent_id: None, source: "agent", ..seed() };
        let mut m = n("pm_b", b, 0.99);
        m.intent_scope = None;
        // the judge's doubt does not keep them apart
        let m = Neighbor { learned: Some(JudgeScores { ab: [0.53, 0.46, 0.01], ba: [0.55, 0.44, 0.01] }), ..m };
        let cx = Context { learned: Some(LEARNED), ..Default::default() };
        let v = decide_with(&s, &[m.clone()], th(), &policy(), &cx);
        assert_eq!((v.status, v.reason.as_deref()), (Status::DuplicateOf, Some("duplicate:similar")), "{v:?}");
        // another pair joined is another statement
        let other = Neighbor { text: "cust_1002 and cust_1003 share a billing address.".into(), ..m.clone() };
        assert_ne!(decide_with(&s, &[other], th(), &policy(), &cx).status, Status::DuplicateOf);
        // two swapped in a relation that holds both ways: the same; one way only: not
        let s = Subject { text: "cust_7450 is married to cust_7451.", ..s };
        let married = Neighbor { text: "cust_7451 is married to cust_7450.".into(), ..m.clone() };
        assert_eq!(decide_with(&s, &[married], th(), &policy(), &cx).status, Status::DuplicateOf);
        let s = Subject { text: "cust_7450 referred cust_7451.", ..s };
        let referred = Neighbor { text: "cust_7451 referred cust_7450.".into(), ..m };
        assert_ne!(decide_with(&s, &[referred], th(), &policy(), &cx).status, Status::DuplicateOf);
    }

    #[test]
    fn a_rewording_less_similar_needs_more_entailment() {
        let (a, b) = ("cust_4040 requested a callback.", "cust_4040 asked to be called back.");
        let hash = crate::text::content_hash(a);
        let s = Subject { text: a, content_hash: &hash, intent_id: None, source: "agent", ..seed() };
        let mut m = n("pm_b", b, 0.83);
        m.intent_scope = None;
        let cx = Context { learned: Some(LEARNED), ..Default::default() };
        let sure = Neighbor { learned: Some(JudgeScores { ab: [0.98, 0.01, 0.01], ba: [0.99, 0.005, 0.005] }), ..m.clone() };
        assert_eq!(decide_with(&s, &[sure], th(), &policy(), &cx).status, Status::DuplicateOf);
        // at 0.83 the 0.80 that suffices from 0.85 does not
        let fair = Neighbor { learned: Some(JudgeScores { ab: [0.90, 0.05, 0.05], ba: [0.90, 0.05, 0.05] }), ..m.clone() };
        assert_ne!(decide_with(&s, &[fair.clone()], th(), &policy(), &cx).status, Status::DuplicateOf);
        let closer = Neighbor { similarity: Some(0.86), ..fair };
        assert_eq!(decide_with(&s, &[closer], th(), &policy(), &cx).status, Status::DuplicateOf);
        // and below 0.80 nothing does
        let far = Neighbor { similarity: Some(0.79), learned: Some(JudgeScores { ab: [0.99, 0.005, 0.005], ba: [0.99, 0.005, 0.005] }), ..m };
        assert_ne!(decide_with(&s, &[far], th(), &policy(), &cx).status, Status::DuplicateOf);
    }

    #[test]
    fn a_merge_needs_the_rules_and_entailment_both_ways() {
        let s = Subject { text: "Alice approved the refund.", intent_id: None, source: "agent", ..seed() };
        let mut m = n("pm_a", "The refund was approved by Alice.", 0.95);
        m.intent_scope = None;
        let v = with_judge(&s, &[judged(m.clone(), [0.95, 0.04, 0.01], [0.93, 0.06, 0.01])]);
        assert_eq!((v.status, v.reason.as_deref()), (Status::DuplicateOf, Some("duplicate:similar")));
        assert!(v.notes.as_deref().unwrap().contains("entailment 0.950/0.930"), "{:?}", v.notes);
        // one-way entailment: kept as new
        let v = with_judge(&s, &[judged(m.clone(), [0.95, 0.04, 0.01], [0.6, 0.39, 0.01])]);
        assert_eq!(v.status, Status::PendingPromotion);
        // the judge alone never merges what the rules see differ
        let t = Subject { text: "Bob approved the refund.", ..s.clone() };
        let v = with_judge(&t, &[judged(m.clone(), [0.99, 0.0, 0.01], [0.99, 0.0, 0.01])]);
        assert_ne!(v.status, Status::DuplicateOf);
        // the same content is a duplicate whatever the judge says
        let same = Neighbor { content_hash: s.content_hash.to_owned(), ..judged(m, [0.0, 1.0, 0.0], [0.0, 1.0, 0.0]) };
        assert_eq!(with_judge(&s, &[same]).reason.as_deref(), Some("duplicate:same_content"));
    }

    #[test]
    fn one_claim_in_other_words_is_no_denial_of_it() {
        // both read as one employer; one denies what the other says of it
        let s = Subject { text: "Working for Philip Morris isn't like defending a murderer in an appeal.", ..seed() };
        let v = decide(&s, &[n("pm_x", "Working for Philip Morris is the same as criminal defense.", 0.59)], th(), &policy(), false, None);
        assert_ne!(v.status, Status::DuplicateOf, "{v:?}");
    }

    #[test]
    fn below_the_thresholds_is_new() {
        let s = Subject { text: "Refunds need a manager's approval.", ..seed() };
        let v = decide(&s, &[n("pm_x", "Refunds need no approval.", 0.5)], th(), &policy(), false, None);
        assert_eq!(v.status, Status::PendingPromotion);
        let v = decide(&s, &[n("pm_x", "Refunds need no approval.", 0.65)], th(), &policy(), false, None);
        assert_eq!(v.status, Status::Contradicts);
        // one keyed attribute of one subject in other words conflicts from half the threshold on
        let s = Subject { text: "Customer cus_1 prefers email.", ..seed() };
        let half = th().contradiction / 2.0;
        let v = decide(&s, &[n("pm_x", "Customer cus_1 wants to be contacted by phone.", half + 0.01)], th(), &policy(), false, None);
        assert_eq!((v.status, v.reason.as_deref()), (Status::Contradicts, Some("contradiction:state:contact_channel;operator_source")));
        let v = decide(&s, &[n("pm_x", "Customer cus_1 wants to be contacted by phone.", half - 0.01)], th(), &policy(), false, None);
        assert_eq!(v.status, Status::PendingPromotion);
    }

    #[test]
    fn a_candidate_that_adds_information_is_not_a_duplicate() {
        let s = Subject { text: "Customer cus_77 wants 5 paper invoices.", ..seed() };
        let v = decide(&s, &[n("pm_p", "Customer cus_77 wants paper invoices.", 0.95)], th(), &policy(), false, None);
        assert_eq!(v.status, Status::PendingPromotion);
        // Nor the other way round: a one-way entailment is never merged (the memory says more,
        // but the two are not the same statement).
        let s = Subject { text: "Customer cus_77 wants paper invoices.", ..seed() };
        let v = decide(&s, &[n("pm_p", "Customer cus_77 wants 5 paper invoices.", 0.95)], th(), &policy(), false, None);
        assert_eq!(v.status, Status::PendingPromotion);
    }

    #[test]
    fn consent_step() {
        let s = Subject { classification: "PII", write_class: Some("preference"), ..seed() };
        let cx = |c| Context { consent: Some(c), ..Default::default() };
        let v = decide_with(&s, &[], th(), &policy(), &cx(Consent::Missing));
        assert_eq!((v.status, v.reason.as_deref()), (Status::Rejected, Some("no_consent")));
        let v = decide_with(&s, &[], th(), &policy(), &cx(Consent::Matched("cns_1".into())));
        assert_eq!((v.status, v.consent_id.as_deref()), (Status::PendingPromotion, Some("cns_1")));
    }

    #[test]
    fn evidence_from_an_untrusted_origin_waits_for_a_human_or_is_rejected() {
        let mut p = policy();
        let web = vec!["web:https://example.org/post".to_owned()];
        let s = Subject { source: "agent", classification: "INTERNAL", evidence_refs: &web, ..seed() };
        let v = decide_with(&s, &[], th(), &p, &Context::default());
        assert_eq!((v.status, v.human, v.reason.as_deref()), (Status::PendingPromotion, true, Some("untrusted_evidence")));
        assert_eq!(v.notes.as_deref(), Some("evidence from untrusted origins: web:"));
        // a trusted ref beside it changes nothing: one untrusted ref closes the gate
        let mixed = vec!["web:https://example.org/post".to_owned(), "ticket:42".to_owned(), "kb:made-up-by-agent".to_owned()];
        let v = decide_with(&Subject { evidence_refs: &mixed, ..s.clone() }, &[], th(), &p, &Context::default());
        assert_eq!((v.human, v.reason.as_deref()), (true, Some("untrusted_evidence")));
        // a system-of-record lookup and a session are not content the agent read
        let trusted = vec!["tool:crm.lookup:cus_42".to_owned(), "session:s_1".to_owned()];
        let v = decide_with(&Subject { evidence_refs: &trusted, ..s.clone() }, &[], th(), &p, &Context::default());
        assert_eq!((v.human, v.reason), (false, None));
        p.provenance.untrusted_evidence = UntrustedEvidence::Reject;
        let v = decide_with(&s, &[], th(), &p, &Context::default());
        assert_eq!((v.status, v.reason.as_deref()), (Status::Rejected, Some("untrusted_evidence")));
        p.provenance.untrusted_evidence = UntrustedEvidence::Allow;
        let v = decide_with(&s, &[], th(), &p, &Context::default());
        assert_eq!((v.status, v.human), (Status::PendingPromotion, false));
    }

    #[test]
    fn a_vector_that_cannot_be_compared_is_rejected() {
        let s = Subject { source: "agent", classification: "INTERNAL", vector_unusable: true, ..seed() };
        let v = decide_with(&s, &[], th(), &policy(), &Context::default());
        assert_eq!((v.status, v.reason.as_deref()), (Status::Rejected, Some("unusable_vector")));
    }

    #[test]
    fn memories_of_other_models_send_a_candidate_to_a_human() {
        let p = policy();
        let s = Subject { source: "agent", classification: "INTERNAL", text: "Refunds are allowed for every customer.", ..seed() };
        let others = vec!["sentence-transformers/all-MiniLM-L6-v2".to_owned()];
        let v = decide_with(&s, &[], th(), &p, &Context { other_models: &others, ..Default::default() });
        assert_eq!((v.status, v.human, v.reason.as_deref()), (Status::PendingPromotion, true, Some("unreviewed_models")));
        assert_eq!(v.notes.as_deref(), Some("not compared with the scope's memories of other embedding models: sentence-transformers/all-MiniLM-L6-v2"));
        // a duplicate found among its own model's memories is still a duplicate
        let dup = Neighbor { content_hash: s.content_hash.to_owned(), ..n("pm_d", s.text, 1.0) };
        let v = decide_with(&s, std::slice::from_ref(&dup), th(), &p, &Context { other_models: &others, ..Default::default() });
        assert_eq!(v.status, Status::DuplicateOf);
        // without them, nothing waits
        let v = decide_with(&s, &[], th(), &p, &Context::default());
        assert_eq!((v.human, v.reason), (false, None));
    }

    #[test]
    fn a_repeat_of_a_retracted_memory_waits_for_a_human() {
        let p = policy();
        let s = Subject { source: "agent", classification: "INTERNAL", text: "Depot opens at 8.", content_hash: "h_x", ..seed() };
        let gone = Neighbor { content_hash: "h_x".into(), ..n("pm_gone", "Depot opens at 8.", 1.0) };
        let cx = Context { retracted: std::slice::from_ref(&gone), ..Default::default() };
        let v = decide_with(&s, &[], th(), &p, &cx);
        assert_eq!((v.status, v.human, v.reason.as_deref()), (Status::PendingPromotion, true, Some("repeats_retracted")));
        assert!(v.notes.as_deref().unwrap().contains("pm_gone"), "{:?}", v.notes);
        // a near repeat (duplicate-level similarity) too; an unrelated retracted memory does not matter
        let near = n("pm_near", "Depot opens at 8.", 0.97);
        let v = decide_with(&s, &[], th(), &p, &Context { retracted: std::slice::from_ref(&near), ..Default::default() });
        assert_eq!(v.reason.as_deref(), Some("repeats_retracted"));
        let far = n("pm_far", "The invoice was paid in March.", 0.2);
        let v = decide_with(&s, &[], th(), &p, &Context { retracted: std::slice::from_ref(&far), ..Default::default() });
        assert_eq!((v.human, v.reason), (false, None));
    }

    #[test]
    fn remembered_rejections() {
        let s = Subject { text: "Customer said hello.", ..seed() };
        let rejected = [n("mc_noise", "Customer said hello!", 0.97)];
        let cx = Context { rejected: &rejected, ..Default::default() };
        let v = decide_with(&s, &[], th(), &policy(), &cx);
        assert_eq!((v.status, v.reason.as_deref(), v.rejection_of.as_deref()), (Status::Rejected, Some("remembered_rejection"), Some("mc_noise")));
        // Something that merely resembles the rejected noise, adding a fact, is reviewed normally.
        let s = Subject { text: "Customer said hello and asked for a refund.", ..seed() };
        assert_eq!(decide_with(&s, &[], th(), &policy(), &cx).status, Status::PendingPromotion);
    }

    #[test]
    fn a_correction_supersedes_the_memory_it_names() {
        let s = Subject { text: "Quite different words here.", write_class: Some("correction"), supersedes: Some("pm_old"), ..seed() };
        let old = n("pm_old", "The old statement.", 0.1);
        let v = decide(&s, std::slice::from_ref(&old), th(), &policy(), false, None);
        assert_eq!((v.status, v.resolution, v.contradicts.as_deref()), (Status::Contradicts, Some(Resolution::Supersede), Some("pm_old")));
        // Naming it without being a correction does not.
        let s = Subject { write_class: None, ..s };
        assert_eq!(decide(&s, &[old], th(), &policy(), false, None).status, Status::PendingPromotion);
    }

    #[test]
    fn facts_about_different_attributes_never_collide() {
        let s = Subject { text: "Customer cus_77 prefers German.", entity: Some("customer:cus_77"), predicate: Some("preferred_language"), ..seed() };
        let mut m = n("pm_k", "Customer cus_77 prefers email.", 0.95);
        (m.entity, m.predicate) = (Some("customer:cus_77".into()), Some("prefers_communication_channel".into()));
        assert_eq!(decide(&s, &[m.clone()], th(), &policy(), false, None).status, Status::PendingPromotion);
        let s = Subject { text: "Customer cus_77 prefers email!", ..s };
        assert_eq!(decide(&s, &[m], th(), &policy(), false, None).status, Status::PendingPromotion);
    }

    #[test]
    fn deterministic_in_neighbour_order() {
        let s = Subject { text: "Customer prefers email.", ..seed() };
        let a = n("pm_1", "Customer prefers email!", 0.95);
        let b = n("pm_2", "customer prefers email", 0.95);
        let v1 = decide(&s, &[a.clone(), b.clone()], th(), &policy(), false, None);
        let v2 = decide(&s, &[b, a], th(), &policy(), false, None);
        assert_eq!(v1, v2);
        assert_eq!(v1.duplicate_of.as_deref(), Some("pm_1"));
    }
}
