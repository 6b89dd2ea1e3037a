//! Calibration of review's similarity thresholds on labelled sentence pairs, through the real
//! review logic: each pair is reviewed as a candidate (text a) against one live memory (text b),
//! with the similarity the embedder under test gives them.
//!
//! Labels (core/tests/data/corpus/README.md): paraphrase (the same statement), entailment (one
//! says more than the other), neutral, contradiction. The right verdict for a paraphrase is
//! duplicate; for a contradiction, contradiction; for the others, new. A duplicate verdict on a
//! pair that is not a paraphrase is a false merge: the candidate's own content would be lost.
//! Used by `examples/calibrate.rs` and by the calibration test (core/tests/calibration.rs).

use crate::assertion::Difference;
use crate::embed::cosine;
use crate::interrupt;
use crate::policy::{JudgeThresholds, Policy, Thresholds};
use crate::review::{decide_with, Context, JudgeScores, Neighbor, Spelling, Status, Subject, Verdict};
use crate::text::content_hash;

/// "different": a pair labelled only "not a paraphrase" (PAWS's negatives, mostly swapped roles):
/// any verdict but duplicate is right, and it counts in no contradiction figure.
pub const LABELS: [&str; 5] = ["paraphrase", "entailment", "neutral", "contradiction", "different"];
pub const VERDICTS: [&str; 3] = ["duplicate", "contradiction", "new"];

#[derive(Debug, Clone)]
pub struct Pair {
    pub label: String,
    pub source: String,
    pub a: String,
    pub b: String,
    pub similarity: f64,
    /// The learned judge's probabilities, when it was asked (both directions).
    pub learned: Option<JudgeScores>,
    /// The same, the texts in one spelling of amounts and dates, where that differs
    /// (`review::Spelling`).
    pub learned_canonical: Option<JudgeScores>,
}

/// The spellings review gives the judge a pair in: as written, and in one spelling where amounts,
/// dates or times are spelled otherwise (`review::Spelling`).
fn spellings(p: &Pair) -> &'static [Spelling] {
    if Spelling::respells(&p.a) || Spelling::respells(&p.b) {
        &[Spelling::AsWritten, Spelling::Canonical]
    } else {
        &[Spelling::AsWritten]
    }
}

/// The learned judge's probabilities for a pair, as review reads them: both directions in each
/// of its `spellings`. `judge` reads "premise, hypothesis".
pub fn score_pair(p: &mut Pair, judge: &dyn Fn(&str, &str) -> [f32; 3]) {
    let both = |spelling: Spelling| {
        let (a, b) = (spelling.of(&p.a), spelling.of(&p.b));
        JudgeScores { ab: judge(&a, &b), ba: judge(&b, &a) }
    };
    p.learned = Some(both(Spelling::AsWritten));
    p.learned_canonical = spellings(p).contains(&Spelling::Canonical).then(|| both(Spelling::Canonical));
}

/// The texts the judge reads for a pair, each ordered pair once: what `score_pair` asks.
pub fn judge_inputs(p: &Pair) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for spelling in spellings(p) {
        let (a, b) = (spelling.of(&p.a).into_owned(), spelling.of(&p.b).into_owned());
        out.push((a.clone(), b.clone()));
        out.push((b, a));
    }
    out
}

/// Parses `label<TAB>source<TAB>id<TAB>a<TAB>b` lines (the first line a header); the similarity
/// of each pair is the cosine of `embed`'s vectors.
pub fn load(tsv: &str, embed: &mut dyn FnMut(&str) -> Vec<f32>) -> Vec<Pair> {
    // a sentence in several pairs is embedded once
    let mut seen: std::collections::HashMap<String, Vec<f32>> = Default::default();
    let mut embed = |t: &str| seen.entry(t.to_owned()).or_insert_with(|| embed(t)).clone();
    tsv.lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            interrupt::check();
            let f: Vec<&str> = l.split('\t').collect();
            assert_eq!(f.len(), 5, "bad line: {l}");
            assert!(LABELS[..4].contains(&f[0]), "bad label: {l}");
            let label = if f[1].ends_with("-neg") { "different" } else { f[0] };
            let similarity = f64::from(cosine(&embed(f[3]), &embed(f[4])));
            Pair { label: label.to_owned(), source: f[1].to_owned(), a: f[3].to_owned(), b: f[4].to_owned(), similarity, learned: None, learned_canonical: None }
        })
        .collect()
}

/// The verdict review gives candidate `a` against memory `b`.
pub fn verdict(p: &Pair, t: Thresholds, policy: &Policy) -> &'static str {
    verdict_with(p, t, policy, None)
}

/// The verdict review gives candidate `a` against memory `b`, reading the learned judge's
/// probabilities (when the pair has them) at `learned`.
pub fn verdict_with(p: &Pair, t: Thresholds, policy: &Policy, learned: Option<JudgeThresholds>) -> &'static str {
    match review_pair(p, t, policy, learned).status {
        Status::DuplicateOf => "duplicate",
        Status::Contradicts => "contradiction",
        _ => "new",
    }
}

/// Review of candidate `a` (an agent's, INTERNAL) against memory `b`, the only live memory of
/// its scope, at thresholds `t`.
pub fn review_pair(p: &Pair, t: Thresholds, policy: &Policy, learned: Option<JudgeThresholds>) -> Verdict {
    let hash_a = content_hash(&p.a);
    let s = Subject { source: "agent", classification: "INTERNAL", captured_at: 2.0, text: &p.a, content_hash: &hash_a, ..Default::default() };
    let n = Neighbor {
        id: "pm_b".into(),
        similarity: Some(p.similarity),
        text: p.b.clone(),
        source: "agent".into(),
        captured_at: 1.0,
        content_hash: content_hash(&p.b),
        learned: p.learned,
        learned_canonical: p.learned_canonical,
        ..Default::default()
    };
    decide_with(&s, &[n], t, policy, &Context { learned, ..Default::default() })
}

pub type Matrix = [[usize; 3]; 5];

/// counts[label][verdict]
pub fn confusion(pairs: &[Pair], t: Thresholds, policy: &Policy) -> Matrix {
    confusion_with(pairs, t, policy, None)
}

/// counts[label][verdict], with the learned judge read at `learned`.
pub fn confusion_with(pairs: &[Pair], t: Thresholds, policy: &Policy, learned: Option<JudgeThresholds>) -> Matrix {
    let mut m = [[0usize; 3]; 5];
    for p in pairs {
        let li = LABELS.iter().position(|l| *l == p.label).unwrap();
        let vi = VERDICTS.iter().position(|v| *v == verdict_with(p, t, policy, learned)).unwrap();
        m[li][vi] += 1;
    }
    m
}

fn correct(verdict: usize, label: usize) -> bool {
    match VERDICTS[verdict] {
        "duplicate" => LABELS[label] == "paraphrase",
        "contradiction" => LABELS[label] == "contradiction",
        _ => matches!(LABELS[label], "entailment" | "neutral" | "different"),
    }
}

/// The figures review quality is judged by (README.md, Embedders: the calibration table).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Quality {
    /// Share of the pairs that are not paraphrases (contradiction, neutral, entailment) merged.
    pub false_merges: f64,
    /// Share of the paraphrases merged.
    pub paraphrases_merged: f64,
    /// Share of the contradictions found.
    pub contradiction_recall: f64,
    /// Share of the contradiction verdicts that are right.
    pub contradiction_precision: f64,
}

pub fn quality(m: &Matrix) -> Quality {
    let row = |l: usize| m[l].iter().sum::<usize>().max(1) as f64;
    let not_para: usize = (1..5).map(|l| m[l][0]).sum();
    let not_para_n: usize = (1..5).map(|l| m[l].iter().sum::<usize>()).sum();
    let said_contra: usize = (0..4).map(|l| m[l][1]).sum();
    Quality {
        false_merges: not_para as f64 / not_para_n.max(1) as f64,
        paraphrases_merged: m[0][0] as f64 / row(0),
        contradiction_recall: m[3][1] as f64 / row(3),
        contradiction_precision: if said_contra == 0 { 1.0 } else { m[3][1] as f64 / said_contra as f64 },
    }
}

/// (precision, recall, predicted, relevant) of each verdict.
pub fn scores(m: &Matrix) -> [(f64, f64, usize, usize); 3] {
    let mut out = [(0.0, 0.0, 0, 0); 3];
    for (v, o) in out.iter_mut().enumerate() {
        let predicted: usize = (0..5).map(|l| m[l][v]).sum();
        let tp: usize = (0..5).filter(|&l| correct(v, l)).map(|l| m[l][v]).sum();
        let relevant: usize = (0..5).filter(|&l| correct(v, l)).map(|l| m[l].iter().sum::<usize>()).sum();
        let p = if predicted == 0 { 1.0 } else { tp as f64 / predicted as f64 };
        let r = if relevant == 0 { 1.0 } else { tp as f64 / relevant as f64 };
        *o = (p, r, predicted, relevant);
    }
    out
}

/// What review would say of a pair at any thresholds, found once through `decide` with the
/// gates wide open.
struct Judged {
    /// Its label's index in LABELS.
    label: usize,
    similarity: f64,
    /// The rules let it be merged.
    merge: bool,
    /// What the rules find differs, when they call it a contradiction.
    finding: Option<Difference>,
    /// The rules find the two the same, or about other subjects: never a contradiction on the
    /// learned judge's word.
    sure: bool,
}

fn judged(pairs: &[Pair], policy: &Policy) -> Vec<Judged> {
    let open = Thresholds { duplicate: -1.0, contradiction: -1.0 };
    let dup_only = Thresholds { duplicate: -1.0, contradiction: 2.0 };
    pairs
        .iter()
        .map(|p| {
            let c = crate::assertion::compare(&crate::assertion::parse(&p.a), &crate::assertion::parse(&p.b));
            Judged {
                label: LABELS.iter().position(|x| *x == p.label).unwrap(),
                similarity: p.similarity,
                merge: verdict(p, dup_only, policy) == "duplicate",
                finding: finding(p, open, policy),
                sure: c.equivalent || c.other_subjects,
            }
        })
        .collect()
}

/// The assertion comparison's finding that makes the rules call the pair a contradiction at
/// `t`, when they do.
fn finding(p: &Pair, t: Thresholds, policy: &Policy) -> Option<Difference> {
    let v = review_pair(p, t, policy, None);
    let how = v.reason.as_deref()?.strip_prefix("contradiction:")?;
    Difference::ALL.into_iter().find(|d| d.as_str() == how.split(';').next().unwrap_or(""))
}

fn fast_confusion(j: &[Judged], t: Thresholds) -> Matrix {
    let mut m = [[0usize; 3]; 5];
    for x in j {
        let v = if x.merge && x.similarity >= t.duplicate {
            0
        } else if x.finding.is_some() && x.similarity >= t.contradiction {
            1
        } else {
            2
        };
        m[x.label][v] += 1;
    }
    m
}

/// Grid search over thresholds no lower than a same-topic gate: the median similarity of the
/// neutral pairs (half of what is merely related stays out). Duplicate: the lowest threshold
/// whose false merges stay within `max_false_merges` (more paraphrases found the lower it is).
/// Contradiction: the threshold with the best F1 among those whose precision reaches `min_precision`,
/// else the best F1 (ties: the higher, more conservative one).
pub fn calibrate(pairs: &[Pair], policy: &Policy, max_false_merges: f64, min_precision: f64) -> Thresholds {
    let j = judged(pairs, policy);
    let grid = |lo: i32, hi: i32| (lo..=hi).map(|x| f64::from(x) / 100.0);
    // the same-topic gate: the median similarity of the neutral pairs
    let mut neutral: Vec<f64> = j.iter().filter(|x| LABELS[x.label] == "neutral").map(|x| x.similarity).collect();
    neutral.sort_by(f64::total_cmp);
    let floor = neutral.get(neutral.len() / 2).map_or(0, |m| (m * 100.0).ceil() as i32);
    let mut dup = 0.99;
    for d in grid(floor, 99).rev() {
        let q = quality(&fast_confusion(&j, Thresholds { duplicate: d, contradiction: 2.0 }));
        if q.false_merges > max_false_merges {
            break;
        }
        dup = d;
    }
    let mut best: (bool, f64, f64) = (false, f64::MIN, 0.99);
    for c in grid(floor, 99) {
        let q = quality(&fast_confusion(&j, Thresholds { duplicate: dup, contradiction: c }));
        let (p, r) = (q.contradiction_precision, q.contradiction_recall);
        let f1 = if p + r == 0.0 { 0.0 } else { 2.0 * p * r / (p + r) };
        let key = (p >= min_precision, f1);
        if key.0 > best.0 || (key.0 == best.0 && key.1 >= best.1) {
            best = (key.0, key.1, c);
        }
    }
    Thresholds { duplicate: dup, contradiction: best.2 }
}

/// Contradiction precision and recall at each contradiction threshold (duplicate threshold fixed).
pub fn sweep(pairs: &[Pair], policy: &Policy, duplicate: f64) -> Vec<(f64, Quality)> {
    let j = judged(pairs, policy);
    (0..=99)
        .step_by(5)
        .map(|c| {
            let c = f64::from(c) / 100.0;
            (c, quality(&fast_confusion(&j, Thresholds { duplicate, contradiction: c })))
        })
        .collect()
}

/// Chooses how review reads the learned judge (`pairs` carrying its probabilities), behind the
/// embedder's same-topic gate `t.contradiction`:
/// - `merge`: the lowest mutual-entailment threshold, at least 0.5 (more likely than not both
///   ways), whose false merges stay within `max_false_merges`;
/// - `contradiction`: the judge's own bar, the best F1 of contradiction verdicts among the bars
///   whose verdicts are right at least `min_precision` of the time (else the best F1; ties go
///   to the higher bar);
/// - `with_rules`, for each finding of the assertion comparison: the lowest bar, from 0.05 (the
///   judge always has a say), at which the verdicts that finding adds below `contradiction` are
///   still right at least `min_precision` of the time, counted over at least `MIN_ADDED` of
///   them; `contradiction` (nothing added) when no bar is.
pub fn calibrate_judge(pairs: &[Pair], t: Thresholds, policy: &Policy, max_false_merges: f64, min_precision: f64) -> JudgeThresholds {
    const MIN_ADDED: usize = 20;
    let grid = |lo: i32, hi: i32, step: usize| (lo..=hi).step_by(step).map(|x| f64::from(x) / 100.0);
    // What the rules say of each pair, found once through `decide` (as `judged` does); the
    // grid then reads the judge's probabilities as `decide_with` does for one neighbour.
    let j = judged(pairs, policy);
    let same: Vec<bool> = pairs.iter().map(|p| content_hash(&p.a) == content_hash(&p.b)).collect();
    let fast = |th: JudgeThresholds| {
        let mut m = [[0usize; 3]; 5];
        for ((x, p), &same) in j.iter().zip(pairs).zip(&same) {
            let Judged { label: l, similarity: sim, merge, finding, sure } = *x;
            let v = match p.learned {
                _ if same => 0,
                Some(s) if merge && sim >= t.duplicate && s.mutual_entailment() >= th.merge => 0,
                None if merge && sim >= t.duplicate => 0,
                Some(s)
                    if sim >= t.contradiction
                        && !sure
                        && (s.contradiction() >= th.contradiction
                            || finding.is_some_and(|d| s.contradiction() >= th.with_rules[d.index()])) =>
                {
                    1
                }
                None if finding.is_some() && sim >= t.contradiction => 1,
                _ => 2,
            };
            m[l][v] += 1;
        }
        m
    };
    let mut merge = 0.99;
    for m in grid(50, 99, 1) {
        let th = JudgeThresholds { contradiction: 2.0, with_rules: [2.0; 6], merge: m };
        if quality(&fast(th)).false_merges <= max_false_merges {
            merge = m;
            break;
        }
    }
    let mut top: (bool, f64, f64) = (false, f64::MIN, 2.0);
    for c in grid(30, 98, 2) {
        let q = quality(&fast(JudgeThresholds { contradiction: c, with_rules: [c; 6], merge }));
        let (p, rc) = (q.contradiction_precision, q.contradiction_recall);
        let f1 = if p + rc == 0.0 { 0.0 } else { 2.0 * p * rc / (p + rc) };
        let key = (p >= min_precision, f1);
        if key.0 > top.0 || (key.0 == top.0 && key.1 >= top.1) {
            top = (key.0, key.1, c);
        }
    }
    let c = top.2;
    let mut with_rules = [c; 6];
    for d in Difference::ALL {
        // the pairs of this finding past the gate that the judge alone does not call
        let below: Vec<(f64, bool)> = j
            .iter()
            .zip(pairs)
            .zip(&same)
            .filter(|((x, _), &same)| !same && x.finding == Some(d) && x.similarity >= t.contradiction && !x.sure)
            .filter_map(|((x, p), _)| p.learned.map(|s| (s.contradiction(), LABELS[x.label] == "contradiction")))
            .filter(|(pc, _)| *pc < c)
            .collect();
        for r in grid(5, (c * 100.0).round() as i32, 5) {
            interrupt::check();
            let added: Vec<bool> = below.iter().filter(|(pc, _)| *pc >= r).map(|x| x.1).collect();
            let right = added.iter().filter(|x| **x).count();
            if added.len() >= MIN_ADDED && right as f64 >= min_precision * added.len() as f64 {
                with_rules[d.index()] = r;
                break;
            }
        }
    }
    JudgeThresholds { contradiction: c, with_rules, merge }
}

/// A Markdown report: the confusion matrix, precision and recall per verdict, and the figures
/// with targets.
pub fn report(pairs: &[Pair], t: Thresholds, policy: &Policy) -> String {
    report_with(pairs, t, policy, None)
}

/// `report`, with the learned judge read at `learned`.
pub fn report_with(pairs: &[Pair], t: Thresholds, policy: &Policy, learned: Option<JudgeThresholds>) -> String {
    let m = confusion_with(pairs, t, policy, learned);
    let mut s = format!(
        "thresholds: duplicate {:.2}, contradiction {:.2} ({} pairs)\n\n| label | pairs | → duplicate | → contradiction | → new |\n|---|---|---|---|---|\n",
        t.duplicate,
        t.contradiction,
        pairs.len()
    );
    for (l, row) in m.iter().enumerate() {
        s += &format!("| {} | {} | {} | {} | {} |\n", LABELS[l], row.iter().sum::<usize>(), row[0], row[1], row[2]);
    }
    s += "\n| verdict | precision | recall | predicted | relevant |\n|---|---|---|---|---|\n";
    for (v, (p, r, pr, rel)) in scores(&m).iter().enumerate() {
        s += &format!("| {} | {:.3} | {:.3} | {} | {} |\n", VERDICTS[v], p, r, pr, rel);
    }
    let q = quality(&m);
    s += &format!(
        "\nfalse merges {:.2} % (target ≤ 0.5 %); paraphrases merged {:.1} % (≥ 60 %); contradictions found {:.1} % (≥ 85 %); contradiction verdicts right {:.1} % (≥ 70 %)\n",
        100.0 * q.false_merges,
        100.0 * q.paraphrases_merged,
        100.0 * q.contradiction_recall,
        100.0 * q.contradiction_precision
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Policy;

    fn pair(label: &str, a: &str, b: &str, contradiction: f32, entailment: f32) -> Pair {
        let v = [entailment, 1.0 - entailment - contradiction, contradiction];
        Pair {
            label: label.into(),
            source: "test".into(),
            a: a.into(),
            b: b.into(),
            similarity: 0.8,
            learned: Some(JudgeScores { ab: v, ba: v }),
            learned_canonical: None,
        }
    }

    /// A finding whose verdicts are right lowers the judge's bar for it; one whose verdicts are
    /// wrong, or too few to tell, leaves the bar where the judge's own is.
    #[test]
    fn each_finding_gets_its_own_bar() {
        let policy = Policy::from_json(&Policy::default_json()).unwrap();
        let t = Thresholds { duplicate: 0.9, contradiction: 0.5 };
        let mut pairs = Vec::new();
        for i in 0..30 {
            // antonyms the judge doubts, and that are contradictions
            pairs.push(pair("contradiction", &format!("Door {i} is open."), &format!("Door {i} is closed."), 0.3, 0.1));
            // numbers the judge doubts, and that are not
            pairs.push(pair("neutral", &format!("Room {i} holds 4 chairs."), &format!("Room {i} holds 9 chairs."), 0.3, 0.1));
            // what the judge alone is sure of
            pairs.push(pair("contradiction", &format!("Gate {i} stays shut all day."), &format!("Gate {i} is busy at noon."), 0.95, 0.0));
            pairs.push(pair("neutral", &format!("Gate {i} is painted blue."), &format!("Gate {i} is busy at noon."), 0.1, 0.1));
        }
        let th = calibrate_judge(&pairs, t, &policy, 0.005, 0.75);
        let (antonym, number) = (Difference::Antonym.index(), Difference::Number.index());
        assert!(th.with_rules[antonym] <= 0.3, "{th:?}");
        assert_eq!(th.with_rules[number], th.contradiction, "{th:?}");
        assert!(th.contradiction > 0.3 && th.contradiction <= 0.95, "{th:?}");
        // fewer than 20 verdicts: no bar of its own
        let few: Vec<Pair> =
            pairs.iter().enumerate().filter(|(k, p)| !p.a.starts_with("Door") || k / 4 < 10).map(|(_, p)| p.clone()).collect();
        let th = calibrate_judge(&few, t, &policy, 0.005, 0.75);
        assert_eq!(th.with_rules[antonym], th.contradiction, "{th:?}");
    }
}
