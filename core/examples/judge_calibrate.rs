//! Calibrates how review reads the learned judge (core/data/judge.safetensors) on held-out
//! public data, then reports the four figures with those thresholds on the evaluation corpus:
//!
//!     cargo run --release -p memory_fabric_core --example judge_calibrate -- DATA_DIR [MODEL_DIR]
//!
//! DATA_DIR holds mnli_dev_matched.tsv and snli_test.tsv (scripts/dev/judge_data.py builds
//! them): pairs the judge never trained on and the corpus does not hold (the corpus's public
//! pairs are SNLI dev and PAWS). Each NLI pair is reviewed as a candidate against one memory,
//! the hypothesis as the candidate for even rows and the premise for odd ones. The thresholds
//! are chosen there, with the semantic embedder's similarity as the same-topic gate, and then
//! only checked on core/tests/data/corpus/public.tsv and memory.tsv.
//! MF_EMBED_CACHE=<dir> keeps vectors and judge probabilities between runs. Two threads.
use memory_fabric_core::calibrate::{calibrate_judge, confusion_with, judge_inputs, load, quality, report_with, score_pair, verdict_with, Pair};
use memory_fabric_core::policy::{JudgeThresholds, Thresholds};
use memory_fabric_core::minilm::{self, Judge, MiniLm, JUDGE_SHA256};
use memory_fabric_core::policy::Policy;
use std::collections::HashMap;
use std::path::PathBuf;

/// Runs `f` over `items` on two threads, keeping the order.
fn on_two<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let half = items.len() / 2;
    let (x, y) = items.split_at(half);
    std::thread::scope(|s| {
        let a = s.spawn(|| x.iter().map(&f).collect::<Vec<_>>());
        let b: Vec<R> = y.iter().map(&f).collect();
        a.join().unwrap().into_iter().chain(b).collect()
    })
}

fn read_cache(path: &Option<String>) -> HashMap<String, Vec<f32>> {
    path.as_ref()
        .and_then(|p| std::fs::read_to_string(p).ok())
        .map(|t| {
            t.lines()
                .filter_map(|l| l.rsplit_once('\t'))
                .map(|(k, v)| (k.to_owned(), v.split(',').map(|x| x.parse().unwrap()).collect()))
                .collect()
        })
        .unwrap_or_default()
}

fn write_cache(path: &Option<String>, cache: &HashMap<String, Vec<f32>>) {
    if let Some(p) = path {
        let body: String = cache
            .iter()
            .map(|(k, v)| format!("{k}\t{}\n", v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(",")))
            .collect();
        std::fs::write(p, body).expect("write the cache");
    }
}

/// The corpus's format (label, source, id, a, b) from a normalised NLI file.
fn nli_as_corpus(path: &str, source: &str) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut out = String::from("label\tsource\tid\ta\tb\n");
    for (i, l) in text.lines().skip(1).enumerate() {
        let f: Vec<&str> = l.split('\t').collect();
        let (p, h, label) = (f[0], f[1], f[2]);
        // (the source says which the candidate is: the merges are counted by it below)
        let (a, b, first) = if i % 2 == 0 { (h, p, "hypothesis") } else { (p, h, "premise") };
        out += &format!("{label}\t{source}:{first}\t{i}\t{a}\t{b}\n");
    }
    out
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let data = args.get(1).expect("usage: judge_calibrate DATA_DIR [MODEL_DIR]");
    let dir = args.get(2).map(PathBuf::from).unwrap_or_else(|| minilm::installed_dir().unwrap());
    let m = MiniLm::load(&dir).expect("load all-MiniLM-L6-v2");
    let judge_path = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/data/judge.safetensors"));
    let judge = Judge::load(&judge_path, Some(JUDGE_SHA256)).expect("load the judge");
    let corpus = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/corpus/");
    let files = [
        ("held-out: MNLI dev matched + SNLI test", nli_as_corpus(&format!("{data}/mnli_dev_matched.tsv"), "mnli-dev-matched")
            + &nli_as_corpus(&format!("{data}/snli_test.tsv"), "snli-1.0-test").lines().skip(1).map(|l| format!("{l}\n")).collect::<String>()),
        ("public.tsv", std::fs::read_to_string(format!("{corpus}public.tsv")).unwrap()),
        ("memory.tsv", std::fs::read_to_string(format!("{corpus}memory.tsv")).unwrap()),
    ];
    let cache_dir = std::env::var("MF_EMBED_CACHE").ok();
    let vec_path = cache_dir.as_ref().map(|d| format!("{d}/judge-calibrate-vectors.tsv"));
    // the probabilities as review computes them on this CPU (bfloat16 or f32)
    let path = if MiniLm::judge_is_bf16() { "bf16" } else { "f32" };
    let judge_path_cache = cache_dir.as_ref().map(|d| format!("{d}/judge-calibrate-{}-{path}.tsv", &JUDGE_SHA256.trim()[..12]));
    let mut vectors = read_cache(&vec_path);
    let mut scores = read_cache(&judge_path_cache);

    // every distinct sentence embedded once
    let mut texts: Vec<&str> = files.iter().flat_map(|(_, t)| t.lines().skip(1).flat_map(|l| l.split('\t').skip(3))).collect();
    texts.sort_unstable();
    texts.dedup();
    let todo: Vec<&str> = texts.into_iter().filter(|t| !vectors.contains_key(*t)).collect();
    eprintln!("embedding {} sentences", todo.len());
    for (t, v) in todo.iter().zip(on_two(&todo, |t| m.embed(t))) {
        vectors.insert((*t).to_owned(), v);
    }
    write_cache(&vec_path, &vectors);

    let policy = Policy::from_json(&Policy::default_json()).unwrap();
    let t = policy.thresholds_for(minilm::MODEL);
    let mut sets: Vec<(&str, Vec<Pair>)> = files
        .iter()
        .map(|(name, tsv)| (*name, load(tsv, &mut |x: &str| vectors.get(x).cloned().unwrap_or_else(|| m.embed(x)))))
        .collect();
    // the judge, both directions, for every pair past the same-topic gate, on the texts as
    // review gives them to it (core/src/spelling.rs)
    let key = |a: &str, b: &str| format!("{a}\u{1}{b}");
    let mut todo: Vec<(String, String)> = sets
        .iter()
        .flat_map(|(_, ps)| ps.iter().filter(|p| p.similarity >= t.contradiction).flat_map(judge_inputs))
        .filter(|(a, b)| !scores.contains_key(&key(a, b)))
        .collect();
    todo.sort();
    todo.dedup();
    eprintln!("judging {} ordered pairs", todo.len());
    for ((a, b), v) in todo.iter().zip(on_two(&todo, |(a, b)| m.judge(&judge, a, b))) {
        scores.insert(key(a, b), vec![v.entailment, v.neutral, v.contradiction]);
    }
    write_cache(&judge_path_cache, &scores);
    for (_, ps) in sets.iter_mut() {
        for p in ps.iter_mut().filter(|p| p.similarity >= t.contradiction) {
            score_pair(p, &|a, b| {
                let v = &scores[&key(a, b)];
                [v[0], v[1], v[2]]
            });
        }
    }

    let th = calibrate_judge(&sets[0].1, t, &policy, 0.005, 0.75);
    println!("# The learned judge (sha256 {})\n\nembedder thresholds: {t:?}\ncalibrated on the held-out pairs: {th:?}\n", JUDGE_SHA256.trim());
    for (name, ps) in &sets {
        println!("## {name}, with the judge\n\n{}", report_with(ps, t, &policy, Some(th)));
        println!("## {name}, rules only (today's review)\n\n{}", report_with(ps, t, &policy, None));
        let q = quality(&confusion_with(ps, t, &policy, Some(th)));
        eprintln!("{name}: {q:?}");
    }
    println!("{}", merges_by_direction(&sets[0].1, t, &policy, th));
}

/// The held-out pairs merged, by label and by which sentence was the candidate. A merge of an
/// entailment pair whose candidate is the hypothesis loses nothing (the memory it joins entails
/// it); with the premise as the candidate, it may lose what the premise says more; a neutral or
/// contradiction pair merged is wrong. `quality` counts all three as false merges.
fn merges_by_direction(ps: &[Pair], t: Thresholds, policy: &Policy, th: JudgeThresholds) -> String {
    let mut s = String::from("## held-out merges, by label and candidate\n\n| label | candidate | pairs | merged | share |\n|---|---|---|---|---|\n");
    let (mut lossy, mut all) = (0usize, 0usize);
    for label in ["entailment", "neutral", "contradiction"] {
        for first in ["hypothesis", "premise"] {
            let of: Vec<&Pair> = ps.iter().filter(|p| p.label == label && p.source.ends_with(first)).collect();
            let merged = of.iter().filter(|p| verdict_with(p, t, policy, Some(th)) == "duplicate").count();
            all += of.len();
            if !(label == "entailment" && first == "hypothesis") {
                lossy += merged;
            }
            s += &format!("| {label} | {first} | {} | {merged} | {:.2} % |\n", of.len(), 100.0 * merged as f64 / of.len().max(1) as f64);
        }
    }
    s + &format!("\nmerges that may lose what the candidate says (all but an entailment's hypothesis merged into its premise): {lossy} of {all} pairs, {:.2} %\n", 100.0 * lossy as f64 / all.max(1) as f64)
}
