//! The judge's Rust forward pass against PyTorch's (scripts/dev/judge_reference.py): the same
//! token ids and types for every pair (truncation of long pairs included), probabilities within
//! 1e-4 and logits within 1e-3, and clear errors for a wrong or damaged adapter file.
//!
//! The base model files are found as tests/minilm.rs finds them; the adapter is the
//! repository's core/data/judge.safetensors.

use memory_fabric_core::minilm::{Judge, MiniLm, Verdict, JUDGE_MAX_TOKENS, JUDGE_SHA256};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::OnceLock;

fn model() -> &'static MiniLm {
    static ONCE: OnceLock<MiniLm> = OnceLock::new();
    ONCE.get_or_init(|| {
        let dir = memory_fabric_core::minilm::installed_dir().unwrap_or_else(|e| panic!("{e}"));
        MiniLm::load(&dir).unwrap_or_else(|e| panic!("the base model is required ({}): {e}", dir.display()))
    })
}

fn judge_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/judge.safetensors")
}

fn judge() -> &'static Judge {
    static ONCE: OnceLock<Judge> = OnceLock::new();
    ONCE.get_or_init(|| Judge::load(&judge_path(), Some(JUDGE_SHA256)).unwrap_or_else(|e| panic!("{e}")))
}

fn floats(v: &Value) -> Vec<f32> {
    v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap() as f32).collect()
}

#[test]
fn matches_pytorch() {
    let doc: Value = serde_json::from_str(include_str!("data/judge_reference.json")).unwrap();
    assert_eq!(doc["judge_sha256"].as_str().unwrap(), JUDGE_SHA256.trim(), "the reference is of another adapter");
    assert_eq!(judge().sha256(), JUDGE_SHA256.trim());
    let pairs = doc["pairs"].as_array().unwrap();
    assert!(pairs.len() >= 20);
    let (mut worst_p, mut worst_l, mut truncated) = (0.0f32, 0.0f32, 0);
    for p in pairs {
        let (a, b) = (p["a"].as_str().unwrap(), p["b"].as_str().unwrap());
        let (ids, types) = model().tokenize_pair(a, b);
        let want_ids: Vec<u32> = p["ids"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as u32).collect();
        let want_types: Vec<u8> = p["type_ids"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as u8).collect();
        assert_eq!(ids, want_ids, "token ids of ({a:?}, {b:?})");
        assert_eq!(types, want_types, "token types of ({a:?}, {b:?})");
        truncated += usize::from(ids.len() == JUDGE_MAX_TOKENS);
        let logits = model().judge_logits_exact(judge(), a, b);
        for (got, want) in logits.iter().zip(floats(&p["logits"])) {
            worst_l = worst_l.max((got - want).abs());
        }
        let v = Verdict::from_logits(logits);
        for (got, want) in [v.entailment, v.neutral, v.contradiction].iter().zip(floats(&p["probabilities"])) {
            worst_p = worst_p.max((got - want).abs());
        }
    }
    eprintln!("{} pairs: largest difference from PyTorch, probability {worst_p:e}, logit {worst_l:e}", pairs.len());
    assert!(truncated >= 4, "the reference must hold pairs longer than {JUDGE_MAX_TOKENS} tokens");
    assert!(worst_p <= 1e-4, "largest probability difference from PyTorch: {worst_p}");
    assert!(worst_l <= 1e-3, "largest logit difference from PyTorch: {worst_l}");
}

/// The bfloat16 path review takes (where the CPU has it) against the f32 one, on the reference
/// pairs: probabilities within 0.03, and the same most likely label wherever the f32 one is
/// clear (its top two more than 0.05 apart).
#[test]
fn the_bfloat16_path_agrees_with_f32() {
    if !MiniLm::judge_is_bf16() {
        eprintln!("no AVX-512 bfloat16 on this CPU: judge_logits is judge_logits_exact");
        return;
    }
    let doc: Value = serde_json::from_str(include_str!("data/judge_reference.json")).unwrap();
    let mut worst = 0.0f32;
    for p in doc["pairs"].as_array().unwrap() {
        let (a, b) = (p["a"].as_str().unwrap(), p["b"].as_str().unwrap());
        let (fast, exact) = (model().judge(judge(), a, b), Verdict::from_logits(model().judge_logits_exact(judge(), a, b)));
        let (f, e) = ([fast.entailment, fast.neutral, fast.contradiction], [exact.entailment, exact.neutral, exact.contradiction]);
        for (x, y) in f.iter().zip(&e) {
            worst = worst.max((x - y).abs());
        }
        let top = |v: &[f32; 3]| (0..3).max_by(|&i, &j| v[i].total_cmp(&v[j])).unwrap();
        let mut sorted = e;
        sorted.sort_by(|x, y| y.total_cmp(x));
        if sorted[0] - sorted[1] > 0.05 {
            assert_eq!(top(&f), top(&e), "({a:?}, {b:?}): {f:?} vs {e:?}");
        }
    }
    eprintln!("largest probability difference, bfloat16 vs f32: {worst:e}");
    assert!(worst <= 0.03, "{worst}");
}

/// Both directions read together give exactly what each gives alone.
#[test]
fn both_directions_at_once_are_each_alone() {
    let doc: Value = serde_json::from_str(include_str!("data/judge_reference.json")).unwrap();
    for p in doc["pairs"].as_array().unwrap() {
        let (a, b) = (p["a"].as_str().unwrap(), p["b"].as_str().unwrap());
        let (ab, ba) = model().judge_both(judge(), a, b);
        assert_eq!((ab, ba), (model().judge(judge(), a, b), model().judge(judge(), b, a)), "({a:?}, {b:?})");
    }
}

#[test]
fn a_wrong_or_damaged_file_is_refused() {
    let dir = std::env::temp_dir().join(format!("mf-judge-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bytes = std::fs::read(judge_path()).unwrap();

    let e = Judge::load(&judge_path(), Some(&"0".repeat(64))).unwrap_err();
    assert!(e.contains("expected"), "{e}");

    let cut = dir.join("cut.safetensors");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    assert!(Judge::load(&cut, None).is_err());

    let missing = dir.join("missing.safetensors");
    let e = Judge::load(&missing, None).unwrap_err();
    assert!(e.contains("cannot be read"), "{e}");

    let base = memory_fabric_core::minilm::installed_dir().unwrap().join("model.safetensors");
    let e = Judge::load(&base, None).unwrap_err();
    assert!(e.contains("lora") || e.contains("tensor"), "the base model is not an adapter: {e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn hostile_text_gives_a_verdict() {
    let long = "contradiction ".repeat(5000);
    for (a, b) in [("", ""), ("[SEP] [CLS] [SEP]", "[PAD]"), (long.as_str(), "x"), ("\u{0}\u{202e}abc", "abc")] {
        let v = model().judge(judge(), a, b);
        let s = v.entailment + v.neutral + v.contradiction;
        assert!((s - 1.0).abs() < 1e-5 && v.entailment >= 0.0, "({a:.20?}, {b:.20?}): {v:?}");
        assert!(model().tokenize_pair(a, b).0.len() <= JUDGE_MAX_TOKENS);
    }
}
