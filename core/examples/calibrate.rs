//! Calibrates the built-in embedder's thresholds on core/tests/data/fact_pairs.tsv and prints
//! the table: cargo run -p memory_fabric_core --example calibrate
use memory_fabric_core::calibrate::{calibrate, load, report};
use memory_fabric_core::policy::Policy;

fn main() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/fact_pairs.tsv");
    let pairs = load(&std::fs::read_to_string(path).expect("read fact_pairs.tsv"));
    let policy = Policy::from_json(&Policy::default_json()).unwrap();
    let best = calibrate(&pairs, &policy);
    println!("## calibrated\n\n{}", report(&pairs, best, &policy));
    let current = policy.thresholds_for(memory_fabric_core::embed::MODEL);
    println!("## in the default policy\n\n{}", report(&pairs, current, &policy));
    println!("## contradiction threshold sweep (duplicate threshold {:.2})\n", current.duplicate);
    println!("| contradiction threshold | precision | recall | duplicate precision |\n|---|---|---|---|");
    for c in [0.50, 0.55, 0.60, 0.62, 0.64, 0.66, 0.70, 0.75, 0.80] {
        let t = memory_fabric_core::policy::Thresholds { duplicate: current.duplicate, contradiction: c };
        let sc = memory_fabric_core::calibrate::scores(&memory_fabric_core::calibrate::confusion(&pairs, t, &policy));
        println!("| {c:.2} | {:.3} | {:.3} | {:.3} |", sc[1].0, sc[1].1, sc[0].0);
    }
    println!();
    // Similarity distribution per label, to see the margins.
    let mut by: std::collections::BTreeMap<&str, Vec<f64>> = Default::default();
    for p in &pairs {
        by.entry(p.label.as_str()).or_default().push(p.similarity);
    }
    println!("## similarity per label (min / median / max)\n");
    for (l, mut v) in by {
        v.sort_by(f64::total_cmp);
        println!("- {l}: {:.3} / {:.3} / {:.3}", v[0], v[v.len() / 2], v[v.len() - 1]);
    }
}
