//! Calibrates review's thresholds for both built-in embedders on the evaluation corpus
//! (core/tests/data/corpus) and prints the tables:
//!   cargo run --release -p memory_fabric_core --example calibrate [-- <all-MiniLM-L6-v2 dir>]
//! Without a folder, the one scripts/install_model.sh installs (or $MF_MINILM_DIR).
use memory_fabric_core::calibrate::{calibrate, load, report, sweep, Pair};
use memory_fabric_core::policy::Policy;
use memory_fabric_core::{embed, minilm};
use std::path::PathBuf;

/// The folder named on the command line, else the installed one.
fn model_dir() -> PathBuf {
    match std::env::args().nth(1) {
        Some(d) => PathBuf::from(d),
        None => minilm::installed_dir().unwrap_or_else(|e| panic!("{e}")),
    }
}

fn main() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/corpus/");
    let public = std::fs::read_to_string(format!("{dir}public.tsv")).expect("read public.tsv");
    let memory = std::fs::read_to_string(format!("{dir}memory.tsv")).expect("read memory.tsv");
    let policy = Policy::from_json(&Policy::default_json()).unwrap();
    let semantic = minilm::MiniLm::load(&model_dir()).expect("load all-MiniLM-L6-v2");
    let models: [(&str, Box<dyn Fn(&str) -> Vec<f32>>); 2] =
        [(embed::MODEL, Box::new(embed::embed)), (minilm::MODEL, Box::new(move |t: &str| semantic.embed(t)))];
    for (name, f) in &models {
        // MF_EMBED_CACHE=<dir>: keep the vectors between runs (for iterating on review's rules)
        let cache_path = std::env::var("MF_EMBED_CACHE").ok().map(|d| format!("{d}/{}.tsv", name.replace('/', "_")));
        let mut cache: std::collections::HashMap<String, Vec<f32>> = cache_path
            .as_ref()
            .and_then(|p| std::fs::read_to_string(p).ok())
            .map(|t| {
                t.lines()
                    .filter_map(|l| l.split_once('\t'))
                    .map(|(k, v)| (k.to_owned(), v.split(',').map(|x| x.parse().unwrap()).collect()))
                    .collect()
            })
            .unwrap_or_default();
        let before = cache.len();
        let mut e = |t: &str| cache.entry(t.to_owned()).or_insert_with(|| f(t)).clone();
        let p: Vec<Pair> = load(&public, &mut e);
        let m: Vec<Pair> = load(&memory, &mut e);
        if let Some(path) = cache_path.as_ref().filter(|_| cache.len() > before) {
            let body: String = cache
                .iter()
                .map(|(k, v)| format!("{k}\t{}\n", v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(",")))
                .collect();
            std::fs::write(path, body).expect("write the cache");
        }
        let both: Vec<Pair> = p.iter().chain(&m).cloned().collect();
        let best = calibrate(&both, &policy, 0.004, 0.70);
        // MF_SHOW=<duplicate threshold>: list the false merges at that threshold
        if let Some(t) = std::env::var("MF_SHOW").ok().and_then(|v| v.parse::<f64>().ok()) {
            let th = memory_fabric_core::policy::Thresholds { duplicate: t, contradiction: 2.0 };
            for x in &both {
                if x.label != "paraphrase" && memory_fabric_core::calibrate::verdict(x, th, &policy) == "duplicate" {
                    println!("FALSE MERGE {name} {:.3} {}\t{}\t{}", x.similarity, x.label, x.a, x.b);
                }
            }
        }
        let current = policy.thresholds_for(name);
        println!("# {name}\n\n## calibrated on both files: {best:?}\n");
        println!("### public.tsv\n\n{}", report(&p, best, &policy));
        println!("### memory.tsv\n\n{}", report(&m, best, &policy));
        println!("## in the default policy: {current:?}\n");
        println!("### public.tsv\n\n{}", report(&p, current, &policy));
        println!("### memory.tsv\n\n{}", report(&m, current, &policy));
        println!("## contradiction sweep on public.tsv (duplicate {:.2})\n\n| threshold | precision | recall | false merges |\n|---|---|---|---|", best.duplicate);
        for (c, q) in sweep(&p, &policy, best.duplicate) {
            println!("| {c:.2} | {:.3} | {:.3} | {:.4} |", q.contradiction_precision, q.contradiction_recall, q.false_merges);
        }
        let mut by: std::collections::BTreeMap<String, Vec<f64>> = Default::default();
        for x in p.iter().chain(m.iter()) {
            by.entry(format!("{} ({})", x.label, x.source)).or_default().push(x.similarity);
        }
        println!("\n## similarity per label (p10 / median / p90)\n");
        for (l, mut v) in by {
            v.sort_by(f64::total_cmp);
            let q = |f: f64| v[((v.len() - 1) as f64 * f) as usize];
            println!("- {l}: {:.3} / {:.3} / {:.3}", q(0.1), q(0.5), q(0.9));
        }
        println!();
    }
}
