//! Timings of the pure-Rust all-MiniLM-L6-v2, one `key: value` line per figure.
//!
//!     cargo run --release -p memory_fabric_core --example embed_bench -- MODEL_DIR
//!
//! Prints the load + first embedding time and the memory it adds (file-backed pages of the
//! mapped weights, shared between processes, vs private heap), p50/p95 of `embed` for
//! texts of about 20, 64 and 200 tokens, the single-thread sgemm rate `matrixmultiply`
//! reaches here on the model's own shapes, and the floor that rate implies for 20 tokens;
//! also the rate at which one core reads the mapped weights, and the floor that implies
//! (a forward pass reads all 42 MB of encoder weights, more than a typical L3 keeps).

use memory_fabric_core::minilm::MiniLm;
use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

const HIDDEN: usize = 384;
const INTERMEDIATE: usize = 1536;
const LAYERS: usize = 6;

const PARAGRAPH: &str = "Customer cust_7714's refund of $1,250.00 was approved on 2026-03-01 \
    after the billing team confirmed that the duplicate charge came from a retry of the \
    payment gateway. The customer prefers email over phone calls and asked to be contacted \
    only on weekdays between 9:00 and 17:00 CET. The account manager is Alice Martin; she \
    escalated the case to the finance lead because the amount exceeded the usual approval \
    limit of $1,000. The refund was not processed through the regular batch: it was issued \
    manually, and the ledger entry references ticket TCK-4411. Future disputes from this \
    customer should be routed to the enterprise support queue, which guarantees a first \
    response within four hours. The quarterly review covered the refund backlog, the \
    migration of the billing service to the new cluster, and the on-call rotation for the \
    holiday period. Customers in the EU region reported intermittent 502 errors between \
    09:10 and 09:45 CET; the root cause was a misconfigured load balancer health check, \
    fixed in release 4.12.3, and no data was lost during the incident window.";

/// (VmRSS, RssAnon, RssFile) of this process, in KiB.
fn rss() -> (u64, u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("RssAnon:"), field("RssFile:"))
}

fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1e3)
}

/// The longest prefix of PARAGRAPH (in words) with at most `target` tokens.
fn text_of(m: &MiniLm, target: usize) -> (String, usize) {
    let mut text = String::new();
    let mut best = (String::new(), 2);
    for word in PARAGRAPH.split_whitespace().cycle().take(2000) {
        let candidate = if text.is_empty() {
            word.to_string()
        } else {
            format!("{text} {word}")
        };
        let n = m.tokenize(&candidate).len();
        if n > target {
            break;
        }
        text = candidate;
        best = (text.clone(), n);
    }
    best
}

fn percentiles(mut samples: Vec<Duration>) -> (Duration, Duration) {
    samples.sort();
    let at = |p: f64| samples[((samples.len() - 1) as f64 * p).round() as usize];
    (at(0.50), at(0.95))
}

/// GFLOP/s of `c[m×n] = a[m×k] · bᵀ` with b stored [n, k] row-major (the model's layout).
fn sgemm_rate(m: usize, k: usize, n: usize) -> f64 {
    let a: Vec<f32> = (0..m * k).map(|i| (i % 17) as f32 * 0.01).collect();
    let b: Vec<f32> = (0..k * n).map(|i| (i % 13) as f32 * 0.01).collect();
    let mut c = vec![0.0f32; m * n];
    let flops = 2.0 * (m * k * n) as f64;
    let reps = ((2e9 / flops) as usize).clamp(3, 20_000);
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        let t = Instant::now();
        for _ in 0..reps {
            // SAFETY: the strides describe a (m×k), b (k×n, transposed view), c (m×n) inside
            // their vectors.
            unsafe {
                matrixmultiply::sgemm(
                    m,
                    k,
                    n,
                    1.0,
                    a.as_ptr(),
                    k as isize,
                    1,
                    b.as_ptr(),
                    1,
                    k as isize,
                    0.0,
                    c.as_mut_ptr(),
                    n as isize,
                    1,
                );
            }
            black_box(&mut c);
        }
        best = best.min(t.elapsed().as_secs_f64() / reps as f64);
    }
    flops / best / 1e9
}

/// FLOPs of one forward pass over `n` tokens (matrix products only).
fn model_flops(n: usize) -> f64 {
    let n = n as f64;
    let (h, i) = (HIDDEN as f64, INTERMEDIATE as f64);
    let dense = 4.0 * 2.0 * n * h * h + 2.0 * 2.0 * n * h * i;
    let attention = 2.0 * 2.0 * n * n * h;
    LAYERS as f64 * (dense + attention)
}

/// GB/s at which this thread reads `bytes` of the mapped model file (best of 5 passes).
fn read_rate(dir: &std::path::Path, bytes: usize) -> f64 {
    let file = std::fs::File::open(dir.join("model.safetensors")).expect("model.safetensors");
    // SAFETY: read-only mapping of a file nobody modifies during the benchmark.
    let map = unsafe { memmap2::Mmap::map(&file) }.expect("mmap");
    let region = &map[map.len().saturating_sub(bytes)..];
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        let t = Instant::now();
        let mut acc = [0u64; 8];
        for chunk in region.chunks_exact(64) {
            for (a, b) in acc.iter_mut().zip(chunk.chunks_exact(8)) {
                *a = a.wrapping_add(u64::from_le_bytes(b.try_into().unwrap()));
            }
        }
        black_box(acc);
        best = best.min(t.elapsed().as_secs_f64());
    }
    region.len() as f64 / best / 1e9
}

/// Bytes of the encoder weights one forward pass reads (matrices and vectors of 6 layers).
fn encoder_bytes() -> usize {
    let (h, i) = (HIDDEN, INTERMEDIATE);
    let per_layer = 4 * (h * h + h) + (h * i + i) + (i * h + h) + 4 * h;
    LAYERS * per_layer * 4
}

fn main() {
    let dir = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            eprintln!("usage: embed_bench MODEL_DIR");
            std::process::exit(2)
        });

    let before = rss();
    let t = Instant::now();
    let m = MiniLm::load(&dir).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(1)
    });
    let load = t.elapsed();
    let v = m.embed("Customer cust_7714's refund of $1,250.00 was approved on 2026-03-01.");
    let first = t.elapsed();
    let after = rss();
    assert_eq!(v.len(), memory_fabric_core::minilm::DIMENSIONS);
    println!("load_ms: {}", ms(load));
    println!("load_and_first_embed_ms: {}", ms(first));
    println!("copied_tensors: {}", m.copied_tensors());
    println!("rss_before_kib: {}", before.0);
    println!("rss_after_first_embed_kib: {}", after.0);
    println!("rss_growth_kib: {}", after.0 as i64 - before.0 as i64);
    println!("rss_anon_growth_kib: {}", after.1 as i64 - before.1 as i64);
    println!("rss_file_growth_kib: {}", after.2 as i64 - before.2 as i64);

    let mut p50_20 = Duration::ZERO;
    for target in [20, 64, 200] {
        let (text, tokens) = text_of(&m, target);
        for _ in 0..10 {
            black_box(m.embed(black_box(&text)));
        }
        let samples: Vec<Duration> = (0..300)
            .map(|_| {
                let t = Instant::now();
                black_box(m.embed(black_box(&text)));
                t.elapsed()
            })
            .collect();
        let (p50, p95) = percentiles(samples);
        if target == 20 {
            p50_20 = p50;
        }
        println!("tokens_{target}: {tokens}");
        println!("embed_{target}_p50_ms: {}", ms(p50));
        println!("embed_{target}_p95_ms: {}", ms(p95));
    }
    // The judge: one direction of a pair of 30 tokens ([CLS] a [SEP] b [SEP]), with the
    // adapter in the repository (core/data/judge.safetensors): as review computes it (bfloat16
    // where the CPU has it) and in f32 throughout; then the private memory the merged weights take.
    let judge_path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/judge.safetensors");
    let judge = memory_fabric_core::minilm::Judge::load(&judge_path, None).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(1)
    });
    let (a, b) = ("Customer cust_7714 prefers to be contacted by email on weekdays.", "Customer cust_7714 asked never to be emailed");
    println!("judge_tokens: {}", m.tokenize_pair(a, b).0.len());
    println!("judge_bf16: {}", MiniLm::judge_is_bf16());
    let before = rss();
    black_box(m.judge(&judge, a, b));
    let after = rss();
    println!("judge_merge_anon_growth_kib: {}", after.1 as i64 - before.1 as i64);
    let time = |f: &dyn Fn()| {
        for _ in 0..10 {
            f();
        }
        percentiles((0..300).map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        }).collect())
    };
    let (p50, p95) = time(&|| {
        black_box(m.judge(&judge, black_box(a), black_box(b)));
    });
    println!("judge_pair_p50_ms: {}", ms(p50));
    println!("judge_pair_p95_ms: {}", ms(p95));
    let (p50, p95) = time(&|| {
        black_box(m.judge_both(&judge, black_box(a), black_box(b)));
    });
    println!("judge_both_directions_p50_ms: {}", ms(p50));
    println!("judge_both_directions_p95_ms: {}", ms(p95));
    let (p50, p95) = time(&|| {
        black_box(m.judge_logits_exact(&judge, black_box(a), black_box(b)));
    });
    println!("judge_pair_f32_p50_ms: {}", ms(p50));
    println!("judge_pair_f32_p95_ms: {}", ms(p95));
    let after_runs = rss();
    println!("rss_after_runs_kib: {}", after_runs.0);
    println!("rss_anon_after_runs_kib: {}", after_runs.1);
    println!("rss_file_after_runs_kib: {}", after_runs.2);

    let mut best = 0.0f64;
    for (m_, k, n) in [
        (20, HIDDEN, HIDDEN),
        (20, HIDDEN, INTERMEDIATE),
        (20, INTERMEDIATE, HIDDEN),
        (200, HIDDEN, INTERMEDIATE),
        (512, 512, 512),
    ] {
        let rate = sgemm_rate(m_, k, n);
        best = best.max(rate);
        println!("sgemm_{m_}x{k}x{n}_gflops: {rate:.1}");
    }
    let flops = model_flops(20);
    println!("model_gflop_20_tokens: {:.3}", flops / 1e9);
    println!("floor_20_tokens_ms: {:.3}", flops / (best * 1e9) * 1e3);
    println!(
        "achieved_gflops_20_tokens: {:.1}",
        flops / p50_20.as_secs_f64() / 1e9
    );
    let bytes = encoder_bytes();
    let rate = read_rate(&dir, bytes);
    println!("encoder_weights_mb: {:.1}", bytes as f64 / 1e6);
    println!("weights_read_gbps: {rate:.2}");
    println!("memory_floor_ms: {:.3}", bytes as f64 / (rate * 1e9) * 1e3);
}
