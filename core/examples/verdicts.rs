//! Prints review's verdict on each pair of a corpus-format file (label, source, id, a, b; a is
//! the candidate, b the only live memory) with the semantic embedder and the learned judge at
//! the default policy, and why: for looking at review's mistakes one pair at a time.
//!   cargo run --release -p memory_fabric_core --example verdicts -- FILE.tsv [LABEL]
use memory_fabric_core::claim;
use memory_fabric_core::calibrate::{load, review_pair, score_pair};
use memory_fabric_core::minilm::{self, Judge, MiniLm, JUDGE_SHA256};
use memory_fabric_core::policy::Policy;
use std::path::PathBuf;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).expect("usage: verdicts FILE.tsv [LABEL]");
    let only = args.get(2);
    let m = MiniLm::load(&minilm::installed_dir().unwrap()).expect("load all-MiniLM-L6-v2");
    let judge = Judge::load(&PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/data/judge.safetensors")), Some(JUDGE_SHA256)).expect("load the judge");
    let mut tsv = String::new();
    for (i, l) in std::fs::read_to_string(path).expect("read").lines().enumerate() {
        if i == 0 || only.is_none_or(|o| l.split('\t').next() == Some(o.as_str())) {
            tsv += l;
            tsv.push('\n');
        }
    }
    let policy = Policy::from_json(&Policy::default_json()).unwrap();
    let t = policy.thresholds_for(minilm::MODEL);
    let mut pairs = load(&tsv, &mut |x: &str| m.embed(x));
    for p in pairs.iter_mut().filter(|p| p.similarity >= t.contradiction) {
        score_pair(p, &|a, b| {
            let v = m.judge(&judge, a, b);
            [v.entailment, v.neutral, v.contradiction]
        });
    }
    let quiet = std::env::var("MF_QUIET").is_ok();
    let mut counts: std::collections::BTreeMap<(String, String), usize> = Default::default();
    for p in &pairs {
        let v = review_pair(p, t, &policy, policy.judge);
        *counts.entry((p.label.clone(), format!("{:?}", v.status))).or_default() += 1;
        if quiet {
            continue;
        }
        println!(
            "{}\t{:?}\t{}\t{:.3}\t{}\t{}\n\t\tjudge {:?}; {:?}; {}",
            p.label,
            v.status,
            v.reason.as_deref().unwrap_or("-"),
            p.similarity,
            p.a,
            p.b,
            p.learned.map(|j| (j.ab, j.ba)),
            claim::relate(&claim::analyze(&p.a), &claim::analyze(&p.b)),
            v.notes.as_deref().unwrap_or("")
        );
    }
    // the natural mix bench/review_quality/sets.py weighs the rates by
    let rate = |l: &str, v: &str| {
        let n: usize = counts.iter().filter(|((a, _), _)| a == l).map(|(_, c)| c).sum();
        counts.get(&(l.to_owned(), v.to_owned())).map_or(0.0, |c| *c as f64 / n.max(1) as f64)
    };
    let mix = [("unrelated", 0.70), ("neutral", 0.10), ("entailment", 0.08), ("paraphrase", 0.07), ("contradiction", 0.05)];
    let all: f64 = mix.iter().map(|(l, w)| w * rate(l, "Contradicts")).sum();
    for ((l, v), c) in &counts {
        println!("{l}\t{v}\t{c}");
    }
    println!(
        "contradictions found {:.3}, paraphrases merged {:.3}, false merges {:.3}/{:.3}, natural-mix precision {:.3}",
        rate("contradiction", "Contradicts"),
        rate("paraphrase", "DuplicateOf"),
        rate("neutral", "DuplicateOf"),
        rate("contradiction", "DuplicateOf"),
        0.05 * rate("contradiction", "Contradicts") / all
    );
}
