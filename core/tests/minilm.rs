//! The pure-Rust all-MiniLM-L6-v2 against the reference (sentence-transformers): token ids
//! equal, vectors with a cosine >= 0.9999, and clear errors for broken model files.
//!
//! The model files are found in `$MF_MINILM_DIR`, else where setup installs them:
//! `$(pg_config --sharedir)/extension/memory_fabric/all-MiniLM-L6-v2` (`$MF_PG_CONFIG` or
//! `$PG_CONFIG` name pg_config if set). Without them these tests fail, they do not skip: CI
//! installs the files first (scripts/install_model.sh).
//!
//! tests/data/minilm_reference.json is written by scripts/dev/minilm_reference.py.

use memory_fabric_core::minilm::{MiniLm, DIMENSIONS, FILES, MAX_TOKENS, MODEL};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const MIN_COSINE: f64 = 0.9999;

fn model_dir() -> PathBuf {
    memory_fabric_core::minilm::installed_dir().unwrap_or_else(|e| panic!("{e}"))
}

fn model() -> &'static MiniLm {
    static MODEL_ONCE: OnceLock<MiniLm> = OnceLock::new();
    MODEL_ONCE.get_or_init(|| {
        let dir = model_dir();
        MiniLm::load(&dir).unwrap_or_else(|e| {
            panic!(
                "the {MODEL} model files are required by these tests and could not be loaded \
                 from {}: {e}\nInstall them (scripts/install_model.sh, run by scripts/setup.sh) \
                 or set MF_MINILM_DIR to a directory holding {FILES:?}",
                dir.display()
            )
        })
    })
}

struct Reference {
    text: String,
    ids: Vec<u32>,
    vector: Vec<f32>,
}

fn reference() -> Vec<Reference> {
    let doc: Value = serde_json::from_str(include_str!("data/minilm_reference.json")).unwrap();
    assert_eq!(doc["model"], MODEL);
    assert_eq!(doc["max_length"].as_u64(), Some(MAX_TOKENS as u64));
    doc["sentences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| Reference {
            text: s["text"].as_str().unwrap().to_string(),
            ids: s["ids"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap() as u32)
                .collect(),
            vector: s["vector"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.to_string().parse::<f32>().unwrap())
                .collect(),
        })
        .collect()
}

fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a.iter().zip(b).map(|(&x, &y)| x as f64 * y as f64).sum();
    let na: f64 = a.iter().map(|&x| x as f64 * x as f64).sum::<f64>().sqrt();
    let nb: f64 = b.iter().map(|&x| x as f64 * x as f64).sum::<f64>().sqrt();
    dot / (na * nb)
}

fn short(text: &str) -> String {
    let s: String = text.chars().take(60).collect();
    if s.len() < text.len() {
        format!("{s:?}…")
    } else {
        format!("{s:?}")
    }
}

#[test]
fn the_reference_covers_what_it_claims() {
    let refs = reference();
    assert!(refs.len() >= 40, "{} sentences", refs.len());
    assert!(refs.iter().any(|r| r.text.is_empty()));
    assert!(
        refs.iter().any(|r| r.ids.len() == MAX_TOKENS),
        "a truncated text"
    );
    assert!(refs.iter().all(|r| r.vector.len() == DIMENSIONS));
}

#[test]
fn token_ids_equal_the_reference() {
    let m = model();
    let mut wrong = Vec::new();
    let refs = reference();
    for r in &refs {
        let ids = m.tokenize(&r.text);
        if ids != r.ids {
            wrong.push(format!(
                "{}:\n  got  {ids:?}\n  want {:?}",
                short(&r.text),
                r.ids
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} texts tokenised differently:\n{}",
        wrong.len(),
        refs.len(),
        wrong.join("\n")
    );
}

#[test]
fn vectors_match_the_reference() {
    let m = model();
    let mut worst = (f64::INFINITY, String::new());
    let mut max_diff = 0.0f32;
    let mut low = Vec::new();
    for r in reference() {
        let v = m.embed(&r.text);
        assert_eq!(v.len(), DIMENSIONS);
        let c = cosine(&v, &r.vector);
        if c < worst.0 {
            worst = (c, short(&r.text));
        }
        if c.is_nan() || c < MIN_COSINE {
            low.push(format!("{c:.7} {}", short(&r.text)));
        }
        let diff = v.iter().zip(&r.vector).map(|(a, b)| (a - b).abs());
        max_diff = diff.fold(max_diff, f32::max);
    }
    eprintln!(
        "minimum cosine with the reference: {:.9} (1 - cos = {:.2e}) for {}; \
         largest difference of one component: {max_diff:.2e}",
        worst.0,
        1.0 - worst.0,
        worst.1
    );
    assert!(
        low.is_empty(),
        "cosine below {MIN_COSINE} (minimum {:.7}):\n{}",
        worst.0,
        low.join("\n")
    );
}

#[test]
fn vectors_are_unit_length_and_deterministic() {
    let m = model();
    for text in [
        "",
        " \t\n",
        "Customer cust_7714's refund was approved.",
        "東京 🎉",
    ] {
        let a = m.embed(text);
        let b = m.embed(text);
        assert_eq!(a, b, "two embeddings of {text:?} differ");
        assert!(a.iter().all(|x| x.is_finite()));
        let norm: f64 = a.iter().map(|&x| x as f64 * x as f64).sum::<f64>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5, "norm of {text:?} is {norm}");
    }
}

#[test]
fn empty_texts_are_cls_sep() {
    let m = model();
    for text in ["", "   ", "\u{0}\u{7}\u{200b}\u{fffd}"] {
        assert_eq!(m.tokenize(text), vec![101, 102], "{text:?}");
    }
    assert_eq!(m.embed(""), m.embed("\u{200b}"));
}

#[test]
fn long_texts_are_truncated_cheaply() {
    let m = model();
    let huge = "refund approved ".repeat(1 << 20); // 16 MiB
    let t = std::time::Instant::now();
    let ids = m.tokenize(&huge);
    assert_eq!(ids.len(), MAX_TOKENS);
    assert_eq!((ids[0], ids[MAX_TOKENS - 1]), (101, 102));
    // Only the first few thousand characters are looked at.
    assert!(t.elapsed().as_millis() < 500, "{:?}", t.elapsed());
    assert_eq!(m.tokenize(&huge[..4000]), ids);
    // A huge single word is one [UNK] and does not grow memory.
    assert_eq!(m.tokenize(&"x".repeat(1 << 22)), vec![101, 100, 102]);
}

#[test]
fn weights_are_used_in_place() {
    if cfg!(target_endian = "little") {
        assert_eq!(model().copied_tensors(), 0);
    }
}

mod interrupts {
    use super::model;
    use std::cell::Cell;

    thread_local! {
        static CALLS: Cell<usize> = const { Cell::new(0) };
    }

    fn counting_hook() {
        CALLS.with(|c| c.set(c.get() + 1));
    }

    #[test]
    fn embedding_checks_between_layers() {
        memory_fabric_core::interrupt::set_hook(counting_hook);
        let m = model();
        let before = CALLS.with(Cell::get);
        m.embed("The refund was approved.");
        let calls = CALLS.with(Cell::get) - before;
        assert!(calls >= 6, "checked {calls} times");
    }
}

/// Temporary copies of the model directory, broken in one way each.
mod load_errors {
    use super::*;
    use std::fs;
    use std::io::{Read, Write};

    struct TempDir(PathBuf);

    impl TempDir {
        fn new(name: &str) -> TempDir {
            let p = std::env::temp_dir().join(format!("mf_minilm_{}_{name}", std::process::id()));
            let _ = fs::remove_dir_all(&p);
            fs::create_dir_all(&p).unwrap();
            TempDir(p)
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    /// The real header of model.safetensors, as JSON.
    fn real_header() -> serde_json::Map<String, Value> {
        model(); // fails with the clear message when the model files are not installed
        let mut file = fs::File::open(model_dir().join("model.safetensors")).unwrap();
        let mut len = [0u8; 8];
        file.read_exact(&mut len).unwrap();
        let mut header = vec![0u8; u64::from_le_bytes(len) as usize];
        file.read_exact(&mut header).unwrap();
        serde_json::from_slice(&header).unwrap()
    }

    /// A model directory whose safetensors has `header` and `data_len` zero bytes of data (a
    /// sparse file: nothing is read by `load`), plus the real vocab.txt.
    fn with_header(name: &str, header: &serde_json::Map<String, Value>, data_len: u64) -> TempDir {
        let dir = TempDir::new(name);
        let mut json = serde_json::to_vec(header).unwrap();
        // Pad with spaces, as safetensors writers do, so that the data starts 8-aligned.
        json.resize(json.len().next_multiple_of(8), b' ');
        let mut bytes = (json.len() as u64).to_le_bytes().to_vec();
        bytes.extend(&json);
        let path = dir.0.join("model.safetensors");
        fs::write(&path, &bytes).unwrap();
        fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(bytes.len() as u64 + data_len)
            .unwrap();
        fs::copy(model_dir().join("vocab.txt"), dir.0.join("vocab.txt")).unwrap();
        dir
    }

    fn data_len(header: &serde_json::Map<String, Value>) -> u64 {
        header
            .values()
            .filter_map(|t| t["data_offsets"][1].as_u64())
            .max()
            .unwrap()
    }

    fn load_err(dir: &Path) -> String {
        MiniLm::load(dir).expect_err("load must fail")
    }

    fn assert_mentions(err: &str, parts: &[&str]) {
        for p in parts {
            assert!(err.contains(p), "error {err:?} should mention {p:?}");
        }
    }

    #[test]
    fn the_intact_sparse_copy_loads() {
        // The harness itself is sound: an unmodified header loads (weights all zero).
        let h = real_header();
        let dir = with_header("intact", &h, data_len(&h));
        let m = MiniLm::load(&dir.0).unwrap();
        assert_eq!(m.tokenize("refund"), vec![101, 25416, 8630, 102]);
        assert_eq!(m.copied_tensors(), 0);
    }

    #[test]
    fn misaligned_data_is_copied_and_gives_the_same_vectors() {
        // The real file with one more space of header padding: every tensor then starts at an
        // odd address and cannot be used in place.
        model();
        let dir = TempDir::new("misaligned");
        let mut src = fs::File::open(model_dir().join("model.safetensors")).unwrap();
        let mut len = [0u8; 8];
        src.read_exact(&mut len).unwrap();
        let n = u64::from_le_bytes(len);
        let mut header = vec![0u8; n as usize];
        src.read_exact(&mut header).unwrap();
        header.push(b' ');
        let mut dst = fs::File::create(dir.0.join("model.safetensors")).unwrap();
        dst.write_all(&(n + 1).to_le_bytes()).unwrap();
        dst.write_all(&header).unwrap();
        std::io::copy(&mut src, &mut dst).unwrap();
        drop(dst);
        fs::copy(model_dir().join("vocab.txt"), dir.0.join("vocab.txt")).unwrap();

        let m = MiniLm::load(&dir.0).unwrap();
        assert_eq!(m.copied_tensors(), 5 + 6 * 16, "all tensors are copies");
        for text in ["Customer cust_7714's refund was approved.", ""] {
            assert_eq!(m.embed(text), model().embed(text), "{text:?}");
        }
    }

    #[test]
    fn missing_directory_or_file() {
        let dir = TempDir::new("missing");
        let gone = dir.0.join("nope");
        assert_mentions(&load_err(&gone), &["nope", "model directory"]);
        assert_mentions(&load_err(&dir.0), &["model.safetensors is missing"]);
        let h = real_header();
        let dir = with_header("no_vocab", &h, data_len(&h));
        fs::remove_file(dir.0.join("vocab.txt")).unwrap();
        assert_mentions(&load_err(&dir.0), &["vocab.txt is missing"]);
    }

    #[test]
    fn truncated_or_padded_file() {
        let h = real_header();
        let full = data_len(&h);
        let dir = with_header("truncated", &h, full - 1000);
        assert_mentions(&load_err(&dir.0), &["model.safetensors", "truncated"]);
        let dir = with_header("padded", &h, full + 3);
        assert_mentions(
            &load_err(&dir.0),
            &["model.safetensors", "3 bytes too many"],
        );
        let dir = TempDir::new("stub");
        fs::write(dir.0.join("model.safetensors"), b"1234").unwrap();
        fs::copy(model_dir().join("vocab.txt"), dir.0.join("vocab.txt")).unwrap();
        assert_mentions(
            &load_err(&dir.0),
            &["model.safetensors", "4 bytes", "truncated"],
        );
        fs::write(
            dir.0.join("model.safetensors"),
            b"\xff\xff\xff\xff\xff\xff\xff\x7f{}",
        )
        .unwrap();
        assert_mentions(&load_err(&dir.0), &["model.safetensors", "header length"]);
        fs::write(dir.0.join("model.safetensors"), b"\x04\0\0\0\0\0\0\0{no}").unwrap();
        assert_mentions(&load_err(&dir.0), &["model.safetensors", "not valid JSON"]);
    }

    #[test]
    fn wrong_dtype_shape_or_name() {
        let name = "encoder.layer.3.attention.self.key.weight";
        let mut h = real_header();
        h[name]["dtype"] = "I32".into(); // same size: only the dtype check can catch it
        let dir = with_header("dtype", &h, data_len(&h));
        assert_mentions(
            &load_err(&dir.0),
            &["model.safetensors", name, "dtype I32", "F32"],
        );

        let mut h = real_header();
        h[name]["dtype"] = "F16".into(); // half the size: the offsets no longer fit the shape
        let dir = with_header("f16", &h, data_len(&h));
        assert_mentions(
            &load_err(&dir.0),
            &["model.safetensors", name, "F16", "bytes"],
        );

        let mut h = real_header();
        h[name]["shape"] = serde_json::json!([768, 192]);
        let dir = with_header("shape", &h, data_len(&h));
        assert_mentions(&load_err(&dir.0), &[name, "[768, 192]", "[384, 384]"]);

        let mut h = real_header();
        let t = h.remove(name).unwrap();
        h.insert("encoder.layer.3.attention.self.kee.weight".into(), t);
        let dir = with_header("name", &h, data_len(&h));
        assert_mentions(&load_err(&dir.0), &[name, "missing"]);

        let mut h = real_header();
        h[name]["data_offsets"][1] = (data_len(&h) + 4).into();
        let dir = with_header("offsets", &h, data_len(&h));
        assert_mentions(&load_err(&dir.0), &[name, "data_offsets"]);
    }

    #[test]
    fn broken_vocabulary() {
        let h = real_header();
        let dir = with_header("vocab", &h, data_len(&h));
        let vocab = fs::read_to_string(dir.0.join("vocab.txt")).unwrap();
        let lines: Vec<&str> = vocab.lines().collect();
        fs::write(dir.0.join("vocab.txt"), lines[..20000].join("\n")).unwrap();
        assert_mentions(&load_err(&dir.0), &["vocab.txt", "20000 tokens", "30522"]);
        fs::write(dir.0.join("vocab.txt"), b"\xff\xfe\n").unwrap();
        assert_mentions(&load_err(&dir.0), &["vocab.txt", "UTF-8"]);
        let mut dup = lines.clone();
        dup[5000] = "the";
        fs::write(dir.0.join("vocab.txt"), dup.join("\n")).unwrap();
        assert_mentions(&load_err(&dir.0), &["vocab.txt", "\"the\"", "twice"]);
    }
}
