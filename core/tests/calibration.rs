//! Review quality of both built-in embedders, at the thresholds of the default policy, on the
//! evaluation corpus (core/tests/data/corpus): public.tsv (SNLI and PAWS pairs labelled by
//! people) and memory.tsv (memory-domain pairs we wrote). Each pair is reviewed through the real
//! review logic, candidate a against memory b.
//!
//! The targets are: false merges ≤ 0.5 %, paraphrases merged ≥ 60 % (semantic model),
//! contradictions found ≥ 85 % with ≥ 70 % of contradiction verdicts right. The false-merge
//! target holds and is asserted for both models on both files. The others are not reached on
//! this corpus (README.md, Embedders, says by how much and why); each is asserted at the
//! level measured, so that a change that makes review worse fails here.
//!
//! The semantic model's weights must be installed (scripts/install_model.sh; or point
//! MF_MINILM_DIR at them): without them these tests fail, they do not skip.

use memory_fabric_core::calibrate::{confusion, confusion_with, load, quality, report, report_with, Pair, Quality, LABELS};
use memory_fabric_core::policy::JUDGE_THRESHOLDS;
use memory_fabric_core::policy::Policy;
use memory_fabric_core::{embed, minilm};
use std::collections::HashMap;
use std::sync::OnceLock;

const PUBLIC: &str = include_str!("data/corpus/public.tsv");
const MEMORY: &str = include_str!("data/corpus/memory.tsv");

struct Set {
    public: Vec<Pair>,
    memory: Vec<Pair>,
}

fn hash_set() -> &'static Set {
    static S: OnceLock<Set> = OnceLock::new();
    S.get_or_init(|| {
        let mut e = |t: &str| embed::embed(t);
        Set { public: load(PUBLIC, &mut e), memory: load(MEMORY, &mut e) }
    })
}

fn semantic_set() -> &'static Set {
    static S: OnceLock<Set> = OnceLock::new();
    S.get_or_init(|| {
        let dir = minilm::installed_dir().unwrap_or_else(|e| panic!("{e}"));
        let m = minilm::MiniLm::load(&dir).unwrap_or_else(|e| {
            panic!("the semantic model is not installed in {} ({e}): run scripts/install_model.sh or set MF_MINILM_DIR", dir.display())
        });
        // every distinct sentence once, on two threads (a test may; a backend never does)
        let mut texts: Vec<&str> = PUBLIC.lines().chain(MEMORY.lines()).skip(1).flat_map(|l| l.split('\t').skip(3)).collect();
        texts.sort_unstable();
        texts.dedup();
        let half = texts.len() / 2;
        let (x, y) = texts.split_at(half);
        let vectors: HashMap<&str, Vec<f32>> = std::thread::scope(|sc| {
            let a = sc.spawn(|| x.iter().map(|t| (*t, m.embed(t))).collect::<Vec<_>>());
            let b: Vec<_> = y.iter().map(|t| (*t, m.embed(t))).collect();
            a.join().unwrap().into_iter().chain(b).collect()
        });
        let mut e = |t: &str| vectors.get(t).cloned().unwrap_or_else(|| m.embed(t));
        Set { public: load(PUBLIC, &mut e), memory: load(MEMORY, &mut e) }
    })
}

fn measured(model: &str, pairs: &[Pair], what: &str) -> Quality {
    let policy = Policy::from_json(&Policy::default_json()).unwrap();
    let t = policy.thresholds_for(model);
    println!("## {model}, {what}\n\n{}", report(pairs, t, &policy));
    quality(&confusion(pairs, t, &policy))
}

#[test]
fn the_corpus_is_what_it_claims() {
    let count = |tsv: &str, label: &str, source: &str| {
        tsv.lines().skip(1).filter(|l| l.starts_with(&format!("{label}\t{source}"))).count()
    };
    for label in ["entailment", "neutral", "contradiction"] {
        assert_eq!(count(PUBLIC, label, "snli-1.0-dev\t"), 1500, "{label}");
    }
    assert_eq!(count(PUBLIC, "paraphrase", "paws-wiki-final\t"), 1000);
    assert_eq!(count(PUBLIC, "neutral", "paws-wiki-final-neg\t"), 500);
    for label in &LABELS[..4] {
        assert!(count(MEMORY, label, "memory_fabric\t") >= 110, "{label}");
    }
}

#[test]
fn hashing_model_never_merges_what_differs() {
    let s = hash_set();
    for (pairs, what) in [(&s.public, "public.tsv"), (&s.memory, "memory.tsv")] {
        let q = measured(embed::MODEL, pairs, what);
        assert!(q.false_merges <= 0.005, "{what}: false merges {}", q.false_merges);
    }
}

#[test]
fn semantic_model_never_merges_what_differs() {
    let s = semantic_set();
    for (pairs, what) in [(&s.public, "public.tsv"), (&s.memory, "memory.tsv")] {
        let q = measured(minilm::MODEL, pairs, what);
        assert!(q.false_merges <= 0.005, "{what}: false merges {}", q.false_merges);
    }
}

/// The levels measured when the thresholds were calibrated (README.md, Embedders), less a
/// small margin: review may not get worse than this.
///
/// 0.21.0 (issue 40) reads what each text claims first (core/src/claim.rs): two events meet only
/// as one event (one thing, one action that happens once) or to deny each other, values among
/// several only to deny each other. On memory.tsv that trades recall for precision: measured
/// with it (hashing, MiniLM, the judge) contradiction precision 0.567, 0.569, 0.608 (the floors
/// were 0.45, 0.46, 0.46) and recall 0.762, 0.779, 0.648 (the floors were 0.80, 0.82, 0.68). The
/// pairs lost are a customer's two actions that differ by a date or an amount ("joined on
/// 2025-07-04" / "joined in August 2025", "was refunded USD 1,250" / "USD 125"), which the
/// event streams of bench/review_quality require to stand side by side. The floors below are
/// those figures less a margin.
///
/// Then (issue 40, sentence pairs) a denial or another number beside words each side lacks is
/// about another thing ("not eligible for the loyalty discount" / "eligible for the student
/// discount"), the judge alone decides no statement of numbers and none that speaks of other
/// things, opposite words in a statement otherwise the same need no judge, and a merge the rules
/// find equivalent needs no judge where the texts state numbers; a denied quantifier ("not every
/// refund") holds beside some of them. Measured: rules-only precision on memory.tsv 0.636 and
/// 0.641 (hashing, MiniLM), recall 0.730 and 0.746; with the judge precision 0.802 (was 0.608),
/// recall 0.664, on public.tsv recall 0.041 (the SNLI contradictions of two other actions, "is
/// sleeping" / "is running", the judge alone no longer flags) at precision 0.653; paraphrases
/// merged 0.390, 0.390, 0.358 on memory.tsv.
#[test]
fn hashing_model_quality_holds() {
    let s = hash_set();
    let p = measured(embed::MODEL, &s.public, "public.tsv");
    let m = measured(embed::MODEL, &s.memory, "memory.tsv");
    assert!(p.paraphrases_merged >= 0.20, "{p:?}");
    assert!(p.contradiction_recall >= 0.14 && p.contradiction_precision >= 0.23, "{p:?}");
    assert!(m.paraphrases_merged >= 0.34, "{m:?}");
    assert!(m.contradiction_recall >= 0.71 && m.contradiction_precision >= 0.58, "{m:?}");
}

#[test]
fn semantic_model_quality_holds() {
    let s = semantic_set();
    let p = measured(minilm::MODEL, &s.public, "public.tsv");
    let m = measured(minilm::MODEL, &s.memory, "memory.tsv");
    assert!(p.paraphrases_merged >= 0.20, "{p:?}");
    assert!(m.paraphrases_merged >= 0.34, "{m:?}");
    assert!(p.contradiction_recall >= 0.09 && p.contradiction_precision >= 0.15, "{p:?}");
    assert!(m.contradiction_recall >= 0.72 && m.contradiction_precision >= 0.58, "{m:?}");
}

/// The learned judge (core/data/judge.safetensors) at the thresholds chosen on held-out public
/// data (review::JUDGE_THRESHOLDS), on the same corpus: false merges stay within the target,
/// and the other figures at least at the level measured (core/data/JUDGE.md), less a margin.
#[test]
fn learned_judge_quality_holds() {
    let s = semantic_set();
    let dir = minilm::installed_dir().unwrap_or_else(|e| panic!("{e}"));
    let m = minilm::MiniLm::load(&dir).unwrap_or_else(|e| panic!("{e}"));
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/judge.safetensors");
    let judge = minilm::Judge::load(&path, Some(minilm::JUDGE_SHA256)).unwrap_or_else(|e| panic!("{e}"));
    let policy = Policy::from_json(&Policy::default_json()).unwrap();
    let t = policy.thresholds_for(minilm::MODEL);
    let judged = |pairs: &[Pair]| -> Vec<Pair> {
        // both directions of every pair past the gate, on two threads (a test may)
        let mut out = pairs.to_vec();
        let todo: Vec<usize> = (0..out.len()).filter(|&i| out[i].similarity >= t.contradiction).collect();
        let (x, y) = todo.split_at(todo.len() / 2);
        let score = |i: &usize| {
            let mut p = pairs[*i].clone();
            memory_fabric_core::calibrate::score_pair(&mut p, &|a, b| {
                let v = m.judge(&judge, a, b);
                [v.entailment, v.neutral, v.contradiction]
            });
            (*i, p)
        };
        let scored: Vec<(usize, Pair)> = std::thread::scope(|sc| {
            let a = sc.spawn(|| x.iter().map(score).collect::<Vec<_>>());
            let b: Vec<_> = y.iter().map(score).collect();
            a.join().unwrap().into_iter().chain(b).collect()
        });
        for (i, p) in scored {
            out[i] = p;
        }
        out
    };
    let (public, memory) = (judged(&s.public), judged(&s.memory));
    for (pairs, what) in [(&public, "public.tsv"), (&memory, "memory.tsv")] {
        println!("## learned judge, {what}\n\n{}", report_with(pairs, t, &policy, Some(JUDGE_THRESHOLDS)));
    }
    let p = quality(&confusion_with(&public, t, &policy, Some(JUDGE_THRESHOLDS)));
    let q = quality(&confusion_with(&memory, t, &policy, Some(JUDGE_THRESHOLDS)));
    assert!(p.false_merges <= 0.005 && q.false_merges <= 0.005, "{p:?} {q:?}");
    assert!(p.contradiction_recall >= 0.035 && p.contradiction_precision >= 0.60, "{p:?}");
    assert!(q.contradiction_recall >= 0.64 && q.contradiction_precision >= 0.74, "{q:?}");
    assert!(p.paraphrases_merged >= 0.15 && q.paraphrases_merged >= 0.33, "{p:?} {q:?}");
    // the judge changes what the rules alone decide: it must be asked at all
    let rules = quality(&confusion(&s.public, t, &policy));
    assert!(p.contradiction_precision > rules.contradiction_precision + 0.3, "{p:?} vs {rules:?}");
}
