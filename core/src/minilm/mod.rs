//! all-MiniLM-L6-v2 sentence embeddings, in process and in pure Rust.
//!
//! A re-implementation of the sentence-transformers pipeline of
//! `sentence-transformers/all-MiniLM-L6-v2`: BERT WordPiece tokenisation (uncased, at most
//! 256 tokens), the 6-layer BERT encoder (hidden 384, 12 heads, exact GELU), mean pooling
//! and L2 normalisation. It matches the reference library to a cosine of at least 0.9999
//! (tests/minilm.rs checks it against vectors the reference produced).
//!
//! The model files are not part of this crate: `load` reads them from a directory (setup
//! installs them and verifies `FILES`' checksums; `load` does not hash 90 MB, it validates
//! the structure instead). The weights are memory-mapped read-only and used in place, so the
//! processes that load the model share one copy in the page cache. Nothing is downloaded and
//! no thread is spawned: this runs inside PostgreSQL backends.

mod judge;
mod kernel;
mod math;
mod model;
mod safetensors;
mod tokenizer;

use std::path::{Path, PathBuf};

pub use judge::{Judge, Verdict, JUDGE_FILE, JUDGE_LABELS, JUDGE_MAX_TOKENS, JUDGE_SHA256};

/// Where scripts/install_model.sh puts the files, for callers outside a server (tests,
/// examples, benchmarks): `$MF_MINILM_DIR` if set, else
/// `$(pg_config --sharedir)/extension/memory_fabric/all-MiniLM-L6-v2`, pg_config being
/// `$MF_PG_CONFIG`, `$PG_CONFIG` or the one on PATH. A backend finds its share directory
/// itself (src/embedder.rs).
pub fn installed_dir() -> Result<PathBuf, String> {
    if let Some(dir) = std::env::var_os("MF_MINILM_DIR").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    let pg_config = ["MF_PG_CONFIG", "PG_CONFIG"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|s| !s.is_empty()))
        .unwrap_or_else(|| "pg_config".to_string());
    let out = std::process::Command::new(&pg_config).arg("--sharedir").output().map_err(|e| {
        format!(
            "cannot find the {MODEL} files: MF_MINILM_DIR is not set and `{pg_config} --sharedir` failed to run \
             ({e}); install them with scripts/install_model.sh or point MF_MINILM_DIR at a directory with {FILES:?}"
        )
    })?;
    if !out.status.success() {
        return Err(format!("`{pg_config} --sharedir` failed: {out:?}"));
    }
    let share = String::from_utf8(out.stdout).map_err(|_| format!("`{pg_config} --sharedir` printed no UTF-8"))?;
    Ok(Path::new(share.trim()).join("extension/memory_fabric/all-MiniLM-L6-v2"))
}

/// The model's name, as stored alongside its vectors.
pub const MODEL: &str = "sentence-transformers/all-MiniLM-L6-v2";
/// Length of an embedding.
pub const DIMENSIONS: usize = 384;
/// Longest token sequence embedded, [CLS] and [SEP] included (the model's max_seq_length);
/// the rest of a longer text is ignored, as the reference does.
pub const MAX_TOKENS: usize = 256;
/// The files `load` reads from the model directory, with their SHA-256 (as published in
/// the model's repository), for setup to verify.
pub const FILES: &[(&str, &str)] = &[
    (
        "model.safetensors",
        "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    ),
    (
        "vocab.txt",
        "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
    ),
];

/// A loaded model: tokenizer and memory-mapped weights. Immutable, so one instance can serve
/// any number of `embed` calls (and threads).
pub struct MiniLm {
    tokenizer: tokenizer::Tokenizer,
    model: model::Model,
    /// The first judge used with this model, merged into its weights for the bfloat16 kernel
    /// (with its SHA-256), where the CPU has one.
    merged: std::sync::OnceLock<(String, model::Merged)>,
}

impl std::fmt::Debug for MiniLm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MiniLm")
            .field("model", &MODEL)
            .finish_non_exhaustive()
    }
}

impl MiniLm {
    /// Loads the model from `dir`, which holds `model.safetensors` and `vocab.txt`.
    ///
    /// Cheap (a few milliseconds): maps the weights without reading them, parses the
    /// vocabulary, and checks the safetensors header, every tensor's name, dtype and shape,
    /// and that the file is neither truncated nor padded. Errors name the file and the fault.
    pub fn load(dir: &Path) -> Result<MiniLm, String> {
        match std::fs::metadata(dir) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(format!(
                    "model directory {} is not a directory",
                    dir.display()
                ))
            }
            Err(e) => {
                return Err(format!(
                    "model directory {} cannot be read: {e} (are the {MODEL} files installed?)",
                    dir.display()
                ))
            }
        }
        for (name, _) in FILES {
            let path = dir.join(name);
            if !path.is_file() {
                return Err(format!(
                    "{} is missing: the model directory needs {}",
                    path.display(),
                    FILES
                        .iter()
                        .map(|(n, _)| *n)
                        .collect::<Vec<_>>()
                        .join(" and ")
                ));
            }
        }
        let weights = dir.join("model.safetensors");
        let model = model::Model::load(safetensors::Tensors::open(&weights)?)?;
        let vocab_path = dir.join("vocab.txt");
        let vocab = tokenizer::Vocab::parse(&vocab_path, model::VOCAB)?;
        let tokenizer = tokenizer::Tokenizer::new(vocab, &vocab_path)?;
        Ok(MiniLm { tokenizer, model, merged: std::sync::OnceLock::new() })
    }

    /// The token ids the model sees for `text`: [CLS], the word pieces, [SEP]; at most
    /// `MAX_TOKENS` in all.
    pub fn tokenize(&self, text: &str) -> Vec<u32> {
        self.tokenizer.encode(text, MAX_TOKENS)
    }

    /// The embedding of `text`: `DIMENSIONS` floats of unit length. A text without any
    /// token (empty, only whitespace or control characters) still gets one, that of
    /// "[CLS] [SEP]".
    pub fn embed(&self, text: &str) -> Vec<f32> {
        let ids = self.tokenize(text);
        self.model.embed(&ids)
    }

    /// The token ids and token types the judge reads for the pair (`a`, `b`):
    /// `[CLS] a [SEP] b [SEP]`, types 0 up to the first [SEP] and 1 after, the longer side
    /// cut first so that the whole is at most `JUDGE_MAX_TOKENS`.
    pub fn tokenize_pair(&self, a: &str, b: &str) -> (Vec<u32>, Vec<u8>) {
        let pa = self.tokenizer.encode(a, model::MAX_POSITIONS);
        let pb = self.tokenizer.encode(b, model::MAX_POSITIONS);
        let (pa, pb) = (&pa[1..pa.len() - 1], &pb[1..pb.len() - 1]);
        let (na, nb) = judge::pair_lengths(pa.len(), pb.len());
        let (cls, sep) = (self.tokenizer.cls(), self.tokenizer.sep());
        let mut ids = Vec::with_capacity(na + nb + 3);
        ids.push(cls);
        ids.extend_from_slice(&pa[..na]);
        ids.push(sep);
        let first = ids.len();
        ids.extend_from_slice(&pb[..nb]);
        ids.push(sep);
        let types = (0..ids.len()).map(|i| u8::from(i >= first)).collect();
        (ids, types)
    }

    /// The judge's logits for "`a` entails / is neutral to / contradicts `b`". Where the CPU
    /// has AVX-512's bfloat16 dot product, through the adapter merged into the weights and
    /// bfloat16 products (the first judge used with this model is merged, once: 21 MB); else,
    /// and for any other judge, as `judge_logits_exact`. The two agree within bfloat16's
    /// precision (tests/judge.rs bounds the difference).
    pub fn judge_logits(&self, judge: &Judge, a: &str, b: &str) -> [f32; 3] {
        let (ids, types) = self.tokenize_pair(a, b);
        let x = self.model.hidden(&ids, Some(&types), self.judge_weights(judge), true);
        judge.logits(&x[..model::HIDDEN])
    }

    /// The weights `judge_logits` reads: the merged bfloat16 ones where the CPU has the kernel
    /// (merging the first judge used, once), else the base weights and the adapter.
    fn judge_weights<'a>(&'a self, judge: &'a Judge) -> model::Weights<'a> {
        if !kernel::bf16_available() {
            return model::Weights::Adapted(&judge.layers);
        }
        let (sha, merged) = self.merged.get_or_init(|| (judge.sha256().to_owned(), self.model.merge(&judge.layers)));
        if sha == judge.sha256() {
            model::Weights::Merged(merged)
        } else {
            model::Weights::Adapted(&judge.layers)
        }
    }

    /// The judge's probabilities both ways: "`a`, then `b`" and "`b`, then `a`", as
    /// `judge` gives them one at a time. The two sequences have one length (the pair is cut
    /// alike either way), so they are read together: each linear layer streams its weights once
    /// for both, and each row's sums are those it gets alone.
    pub fn judge_both(&self, judge: &Judge, a: &str, b: &str) -> (Verdict, Verdict) {
        let (ab, tab) = self.tokenize_pair(a, b);
        let (ba, tba) = self.tokenize_pair(b, a);
        if ab.len() != ba.len() {
            return (self.judge(judge, a, b), self.judge(judge, b, a));
        }
        let x = self.model.hidden_batch(&[&ab, &ba], Some(&[&tab, &tba]), self.judge_weights(judge), true);
        let v = |r: usize| Verdict::from_logits(judge.logits(&x[r * model::HIDDEN..(r + 1) * model::HIDDEN]));
        (v(0), v(1))
    }

    /// The judge's logits in f32 throughout, the base weights as mapped plus the adapter's
    /// low-rank updates: what training computed (tests/judge.rs checks it against PyTorch).
    pub fn judge_logits_exact(&self, judge: &Judge, a: &str, b: &str) -> [f32; 3] {
        let (ids, types) = self.tokenize_pair(a, b);
        let x = self.model.hidden(&ids, Some(&types), model::Weights::Adapted(&judge.layers), true);
        judge.logits(&x[..model::HIDDEN])
    }

    /// Whether `judge_logits` takes the bfloat16 path on this CPU.
    pub fn judge_is_bf16() -> bool {
        kernel::bf16_available()
    }

    /// The judge's probabilities for "`a` entails / is neutral to / contradicts `b`".
    pub fn judge(&self, judge: &Judge, a: &str, b: &str) -> Verdict {
        Verdict::from_logits(self.judge_logits(judge, a, b))
    }

    /// How many weight tensors had to be copied to the heap instead of being used in place
    /// from the mapping (misaligned in the file, or a big-endian machine): 0 for the
    /// published model file on x86-64 and aarch64.
    pub fn copied_tensors(&self) -> usize {
        self.model.copied_tensors()
    }
}
