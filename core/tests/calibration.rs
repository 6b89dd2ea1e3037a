//! The built-in embedder's thresholds against the labelled fact pairs: a duplicate verdict must
//! never merge two different facts, and contradictions must not slip through.

use memory_fabric_core::calibrate::{calibrate, confusion, load, scores};
use memory_fabric_core::embed::MODEL;
use memory_fabric_core::policy::Policy;

fn setup() -> (Vec<memory_fabric_core::calibrate::Pair>, Policy) {
    let tsv = include_str!("data/fact_pairs.tsv");
    (load(tsv), Policy::from_json(&Policy::default_json()).unwrap())
}

#[test]
fn the_set_is_what_it_claims() {
    let (pairs, _) = setup();
    assert_eq!(pairs.len(), 180);
    for label in ["duplicate", "paraphrase", "contradiction", "compatible", "unrelated"] {
        assert!(pairs.iter().filter(|p| p.label == label).count() >= 30, "{label}");
    }
}

#[test]
fn default_thresholds_never_merge_different_facts() {
    let (pairs, policy) = setup();
    let t = policy.thresholds_for(MODEL);
    let s = scores(&confusion(&pairs, t, &policy));
    let (dup_precision, dup_recall, _, _) = s[0];
    assert!(dup_precision >= 0.99, "duplicate precision {dup_precision}");
    assert!(dup_recall >= 0.40, "duplicate recall {dup_recall}");
    // The default is no laxer than the lowest threshold that is still fully precise here.
    assert!(t.duplicate >= calibrate(&pairs, &policy).duplicate);
}

#[test]
fn default_thresholds_catch_contradictions() {
    let (pairs, policy) = setup();
    let s = scores(&confusion(&pairs, policy.thresholds_for(MODEL), &policy));
    let (precision, recall, _, _) = s[1];
    assert!(recall >= 0.95, "contradiction recall {recall}");
    assert!(precision >= 0.65, "contradiction precision {precision}");
}

#[test]
fn unrelated_pairs_are_always_new() {
    let (pairs, policy) = setup();
    let m = confusion(&pairs, policy.thresholds_for(MODEL), &policy);
    assert_eq!(m[4], [0, 0, 30]);
}
