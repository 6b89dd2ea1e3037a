//! Calibration of similarity thresholds on a labelled set of fact pairs, through the real
//! review logic: each pair is reviewed as a candidate (text a) against one live memory (text b).
//! Used by `examples/calibrate.rs` and by the calibration regression test.

use crate::embed::{cosine, embed};
use crate::policy::{Policy, Thresholds};
use crate::review::{decide, Neighbor, Status, Subject};
use crate::text::content_hash;

pub const LABELS: [&str; 5] = ["duplicate", "paraphrase", "contradiction", "compatible", "unrelated"];
pub const VERDICTS: [&str; 3] = ["duplicate", "contradiction", "new"];

pub struct Pair {
    pub label: String,
    pub a: String,
    pub b: String,
    pub similarity: f64,
}

/// Parses `label<TAB>a<TAB>b` lines (first line a header).
pub fn load(tsv: &str) -> Vec<Pair> {
    tsv.lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            assert_eq!(f.len(), 3, "bad line: {l}");
            assert!(LABELS.contains(&f[0]), "bad label: {l}");
            let similarity = f64::from(cosine(&embed(f[1]), &embed(f[2])));
            Pair { label: f[0].to_owned(), a: f[1].to_owned(), b: f[2].to_owned(), similarity }
        })
        .collect()
}

/// The verdict review gives candidate `a` against memory `b`.
pub fn verdict(p: &Pair, t: Thresholds, policy: &Policy) -> &'static str {
    let hash_a = content_hash(&p.a);
    let s = Subject { source: "agent", classification: "INTERNAL", captured_at: 2.0, text: &p.a, content_hash: &hash_a, ..Default::default() };
    let n = Neighbor {
        id: "pm_b".into(),
        similarity: Some(p.similarity),
        text: p.b.clone(),
        source: "agent".into(),
        captured_at: 1.0,
        content_hash: content_hash(&p.b),
        ..Default::default()
    };
    match decide(&s, &[n], t, policy, false, None).status {
        Status::DuplicateOf => "duplicate",
        Status::Contradicts => "contradiction",
        _ => "new",
    }
}

/// counts[label][verdict]
pub fn confusion(pairs: &[Pair], t: Thresholds, policy: &Policy) -> [[usize; 3]; 5] {
    let mut m = [[0usize; 3]; 5];
    for p in pairs {
        let li = LABELS.iter().position(|l| *l == p.label).unwrap();
        let vi = VERDICTS.iter().position(|v| *v == verdict(p, t, policy)).unwrap();
        m[li][vi] += 1;
    }
    m
}

/// Which labels count as correct for each verdict. A paraphrase is the same fact, so calling it
/// a duplicate is right; calling it new is a missed merge, not an error that loses memory.
fn correct(verdict: usize, label: usize) -> bool {
    match VERDICTS[verdict] {
        "duplicate" => matches!(LABELS[label], "duplicate" | "paraphrase"),
        "contradiction" => LABELS[label] == "contradiction",
        _ => matches!(LABELS[label], "compatible" | "unrelated"),
    }
}

/// (precision, recall, predicted, relevant) of each verdict.
pub fn scores(m: &[[usize; 3]; 5]) -> [(f64, f64, usize, usize); 3] {
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

/// Grid search: the lowest duplicate threshold whose duplicate verdicts are all correct, then
/// the contradiction threshold with the best F1 (ties: the higher, more conservative one).
pub fn calibrate(pairs: &[Pair], policy: &Policy) -> Thresholds {
    let grid = |lo: i32, hi: i32| (lo..=hi).map(|x| f64::from(x) / 100.0);
    let mut dup = 0.99;
    for d in grid(50, 99).rev() {
        let m = confusion(pairs, Thresholds { duplicate: d, contradiction: d }, policy);
        if scores(&m)[0].0 < 1.0 {
            break;
        }
        dup = d;
    }
    let mut best = (f64::MIN, dup);
    for c in grid(20, (dup * 100.0) as i32) {
        let m = confusion(pairs, Thresholds { duplicate: dup, contradiction: c }, policy);
        let (p, r, _, _) = scores(&m)[1];
        let f1 = if p + r == 0.0 { 0.0 } else { 2.0 * p * r / (p + r) };
        if f1 >= best.0 {
            best = (f1, c);
        }
    }
    Thresholds { duplicate: dup, contradiction: best.1 }
}

/// A Markdown report: the confusion matrix and precision/recall per verdict.
pub fn report(pairs: &[Pair], t: Thresholds, policy: &Policy) -> String {
    let m = confusion(pairs, t, policy);
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
    let recall_of = |label: &str, verdict: usize| {
        let l = LABELS.iter().position(|x| *x == label).unwrap();
        m[l][verdict] as f64 / m[l].iter().sum::<usize>().max(1) as f64
    };
    s += &format!(
        "\nrecall of duplicate pairs as duplicate: {:.3}; of paraphrases as duplicate: {:.3}\n",
        recall_of("duplicate", 0),
        recall_of("paraphrase", 0)
    );
    s
}
