//! Review's judge: a cross-encoder on the all-MiniLM-L6-v2 encoder. The pair is read as one
//! sequence, `[CLS] a [SEP] b [SEP]` (token type 0 up to the first [SEP], 1 after), through the
//! same mapped base weights plus a LoRA adapter (two small products per linear layer, so the
//! base weights stay shared; or, where the CPU has AVX-512's bfloat16 dot product, the adapter
//! merged into a private bfloat16 copy: MiniLm::judge_logits), and a 3-way head on the final
//! [CLS] state gives the probabilities that `a` entails `b`, is neutral to it, or contradicts it.
//!
//! The adapter and head are one small safetensors file trained by scripts/dev/train_judge.py;
//! its manifest (sources, hyper-parameters, seed, checksum) is core/data/judge-manifest.json.

use std::path::Path;

use super::model::{LayerAdapter, LowRank, ADAPTED, HIDDEN, LAYERS};
use super::safetensors::Tensors;

/// Longest pair read, the three special tokens included (as in training).
pub const JUDGE_MAX_TOKENS: usize = 128;
/// The labels of the head's outputs, in order.
pub const JUDGE_LABELS: [&str; 3] = ["entailment", "neutral", "contradiction"];
/// The adapter's file name, installed beside the MiniLM files.
pub const JUDGE_FILE: &str = "judge.safetensors";
/// SHA-256 of the adapter file this code was trained and tested with.
pub const JUDGE_SHA256: &str = include_str!("../../data/judge.sha256");

/// The adapter's rank and the scale of its updates (alpha / rank), as trained.
const RANK: usize = 8;
const ALPHA: f32 = 16.0;

/// A loaded judge: the adapter's updates (scaled) and the head. About 1.3 MB.
pub struct Judge {
    pub(crate) layers: Vec<LayerAdapter>,
    head_weight: Vec<f32>,
    head_bias: Vec<f32>,
    sha256: String,
}

impl std::fmt::Debug for Judge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Judge").field("sha256", &self.sha256).finish_non_exhaustive()
    }
}

/// What the judge says of a pair, one direction: probabilities summing to 1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Verdict {
    pub entailment: f32,
    pub neutral: f32,
    pub contradiction: f32,
}

impl Judge {
    /// Loads the adapter file at `path`, checking its SHA-256 against `expect` (when given),
    /// every tensor's name, dtype and shape, and that no tensor is missing or left over.
    pub fn load(path: &Path, expect: Option<&str>) -> Result<Judge, String> {
        let t = Tensors::open(path).map_err(|e| format!("{} cannot be read: {e}", path.display()))?;
        // the checksum of the mapped bytes, those the weights below are copied from
        let sha256 = hex(&<sha2::Sha256 as sha2::Digest>::digest(t.bytes()));
        if let Some(want) = expect {
            if sha256 != want.trim() {
                return Err(format!(
                    "{} has SHA-256 {sha256}, expected {}: not the judge this build was tested with",
                    path.display(),
                    want.trim()
                ));
            }
        }
        let scale = ALPHA / RANK as f32;
        let mut layers = Vec::with_capacity(LAYERS);
        for l in 0..LAYERS {
            let mut linears = Vec::with_capacity(ADAPTED.len());
            for (name, inputs, outputs) in ADAPTED {
                let a = t.get(&t.f32(&format!("layer.{l}.{name}.lora_a"), &[RANK, inputs])?).to_vec();
                let b: Vec<f32> =
                    t.get(&t.f32(&format!("layer.{l}.{name}.lora_b"), &[outputs, RANK])?).iter().map(|v| v * scale).collect();
                linears.push(LowRank { a, b, rank: RANK });
            }
            layers.push(LayerAdapter { linears });
        }
        let head_weight = t.get(&t.f32("head.weight", &[3, HIDDEN])?).to_vec();
        let head_bias = t.get(&t.f32("head.bias", &[3])?).to_vec();
        let expected = LAYERS * ADAPTED.len() * 2 + 2;
        if t.tensors().len() != expected {
            return Err(format!(
                "{} holds {} tensors, expected {expected}: not a judge adapter of this model",
                path.display(),
                t.tensors().len()
            ));
        }
        let all = layers.iter().flat_map(|l| &l.linears).flat_map(|u| u.a.iter().chain(&u.b));
        if !all.chain(&head_weight).chain(&head_bias).all(|v| v.is_finite()) {
            return Err(format!("{} holds a weight that is not finite", path.display()));
        }
        Ok(Judge { layers, head_weight, head_bias, sha256 })
    }

    /// The SHA-256 of the loaded file, for reviews to record.
    pub fn sha256(&self) -> &str {
        &self.sha256
    }

    /// The head's logits for the final hidden state of [CLS].
    pub(crate) fn logits(&self, cls: &[f32]) -> [f32; 3] {
        let mut out = [0.0f32; 3];
        for (i, o) in out.iter_mut().enumerate() {
            let w = &self.head_weight[i * HIDDEN..(i + 1) * HIDDEN];
            *o = self.head_bias[i] + w.iter().zip(cls).map(|(w, x)| w * x).sum::<f32>();
        }
        out
    }
}

impl Verdict {
    /// Softmax of the head's logits; a non-finite logit gives an all-neutral verdict.
    pub fn from_logits(l: [f32; 3]) -> Verdict {
        if !l.iter().all(|v| v.is_finite()) {
            return Verdict { entailment: 0.0, neutral: 1.0, contradiction: 0.0 };
        }
        let m = l.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
        let e = l.map(|v| (v - m).exp());
        let s: f32 = e.iter().sum();
        Verdict { entailment: e[0] / s, neutral: e[1] / s, contradiction: e[2] / s }
    }
}

/// How many word pieces of each side a pair keeps, so that both with their three special
/// tokens fit `JUDGE_MAX_TOKENS`: the shorter side is kept whole when it fits in half, the
/// longer one gets the rest; when both are longer than half, each gets half (the second the
/// odd token). This is the "longest first" truncation of the tokenizer the judge was
/// trained with.
pub(crate) fn pair_lengths(a: usize, b: usize) -> (usize, usize) {
    let max = JUDGE_MAX_TOKENS - 3;
    if a + b <= max {
        return (a, b);
    }
    let (short, swapped) = if a > b { (b, true) } else { (a, false) };
    let (mut n1, mut n2) = (short, if short > max { short } else { short.max(max - short) });
    if n1 + n2 > max {
        n1 = max / 2;
        n2 = n1 + max % 2;
    }
    let (t1, t2) = if swapped { (n2, n1) } else { (n1, n2) };
    (a.min(t1), b.min(t2))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_that_fit_are_kept_whole() {
        assert_eq!(pair_lengths(10, 20), (10, 20));
        assert_eq!(pair_lengths(0, 125), (0, 125));
    }

    #[test]
    fn the_longer_side_is_cut_first() {
        assert_eq!(pair_lengths(10, 200), (10, 115));
        assert_eq!(pair_lengths(200, 10), (115, 10));
        assert_eq!(pair_lengths(100, 100), (62, 63));
        assert_eq!(pair_lengths(70, 300), (62, 63));
        let (x, y) = pair_lengths(1000, 3);
        assert_eq!(x + y, 125);
    }

    #[test]
    fn a_verdict_is_a_distribution() {
        let v = Verdict::from_logits([1.0, 2.0, 3.0]);
        assert!((v.entailment + v.neutral + v.contradiction - 1.0).abs() < 1e-6);
        assert!(v.contradiction > v.neutral && v.neutral > v.entailment);
        let v = Verdict::from_logits([f32::NAN, 0.0, 0.0]);
        assert_eq!(v.neutral, 1.0);
    }
}
