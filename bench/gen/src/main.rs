//! Writes the benchmark dataset as COPY text, deterministically: row n is the same whatever
//! range it is generated in, so the dataset grows 10k → 100k → 1M by appending ranges.
//!
//!   mf-bench-gen memories FROM TO > candidates.copy
//!   mf-bench-gen probes COUNT SIZE > probes.copy   (SIZE: rows loaded so far)
//!
//! Memories: 1,000 tenants with Zipf-skewed sizes (a few with tens of thousands at 1M, most with
//! tens), 5 users each (a fifth of rows user-less), 384-dim unit vectors drawn around 20 topic
//! centres per tenant (so same-topic memories are similar), a mix of sources, classifications
//! and intents. Probes: near-duplicates of known memories (for review's recall@1) and fresh
//! vectors far from everything (for promote and the pipeline).

use std::io::{BufWriter, Write};

const TENANTS: usize = 1000;
const DIMS: usize = 384;
const TOPICS: u64 = 20;
const USERS: u64 = 5;

fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

struct Rng(u64);
impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(mix(seed ^ 0x9e37_79b9_7f4a_7c15))
    }
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix(self.0)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn gauss(&mut self) -> f64 {
        let (u, v) = (self.unit().max(1e-12), self.unit());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

/// Cumulative Zipf weights over tenants (exponent 1.1).
fn tenant_cdf() -> Vec<f64> {
    let w: Vec<f64> = (0..TENANTS).map(|i| 1.0 / ((i + 1) as f64).powf(1.1)).collect();
    let total: f64 = w.iter().sum();
    let mut acc = 0.0;
    w.iter().map(|x| { acc += x / total; acc }).collect()
}

fn pick(cdf: &[f64], u: f64) -> usize {
    cdf.partition_point(|c| *c < u).min(TENANTS - 1)
}

fn centre(tenant: usize, topic: u64) -> Vec<f64> {
    let mut r = Rng::new(((tenant as u64) << 20) ^ topic ^ 0xC0FFEE);
    (0..DIMS).map(|_| r.gauss()).collect()
}

fn around(c: &[f64], sigma: f64, r: &mut Rng) -> Vec<f64> {
    let norm_c = c.iter().map(|x| x * x).sum::<f64>().sqrt();
    let v: Vec<f64> = c.iter().map(|x| x / norm_c + sigma * r.gauss()).collect();
    let n = v.iter().map(|x| x * x).sum::<f64>().sqrt();
    v.into_iter().map(|x| x / n).collect()
}

fn vector_text(v: &[f64]) -> String {
    let mut s = String::with_capacity(DIMS * 8);
    s.push('[');
    for (i, x) in v.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push_str(&format!("{x:.5}"));
    }
    s.push(']');
    s
}

const WORDS: &[&str] = &["refund", "invoice", "delivery", "account", "renewal", "outage", "password", "contract",
    "discount", "shipping", "warranty", "upgrade", "billing", "support", "deadline", "courier", "region", "plan"];

/// Everything about memory n: (tenant, user, intent, source, classification, topic, text).
fn memory(n: u64, cdf: &[f64]) -> (usize, Option<u64>, Option<&'static str>, &'static str, &'static str, u64, String) {
    let mut r = Rng::new(n);
    let tenant = pick(cdf, r.unit());
    let user = if r.unit() < 0.2 { None } else { Some(r.next() % USERS) };
    let intent = ["support.refund", "support.billing", "sales.upsell", "ops.deploy"].get((r.next() % 5) as usize).copied();
    let source = match r.next() % 10 { 0 => "operator", 1 | 2 => "system", _ => "agent" };
    let class = match r.next() % 20 { 0..=2 => "PII", 3..=11 => "INTERNAL", _ => "PUBLIC" };
    let topic = r.next() % TOPICS;
    let text = format!("Fact {n} for tenant {tenant}: {} {} {} {}.", WORDS[(r.next() % 18) as usize],
        WORDS[(r.next() % 18) as usize], WORDS[(topic % 18) as usize], r.next() % 1000);
    (tenant, user, intent, source, class, topic, text)
}

fn opt(x: Option<String>) -> String {
    x.unwrap_or_else(|| "\\N".into())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let cdf = tenant_cdf();
    let out = std::io::stdout();
    let mut w = BufWriter::with_capacity(1 << 20, out.lock());
    match args.get(1).map(String::as_str) {
        // id, tenant_id, user_id, intent_id, source, text, classification, embedding, embedding_model, content_hash, policy_version
        Some("memories") => {
            let (from, to): (u64, u64) = (args[2].parse().unwrap(), args[3].parse().unwrap());
            for n in from..to {
                let (t, u, i, src, class, topic, text) = memory(n, &cdf);
                let mut r = Rng::new(n ^ 0xABCDEF);
                let v = around(&centre(t, topic), 0.04, &mut r);
                let hash = format!("{:016x}{:016x}{:016x}{:016x}", mix(n), mix(n + 1), mix(n + 2), mix(n + 3));
                writeln!(w, "mc_bench_{n:09}\tt{t:04}\t{}\t{}\t{src}\t{text}\t{class}\t{}\tbench-384\t{hash}\t1",
                    opt(u.map(|u| format!("u{u}"))), opt(i.map(str::to_owned)), vector_text(&v)).unwrap();
            }
        }
        // id, kind, tenant_id, user_id, intent_id, text, embedding, source_memory
        Some("probes") => {
            let (count, size): (u64, u64) = (args[2].parse().unwrap(), args[3].parse().unwrap());
            // the run of the benchmark on this database (bench.runs): the fresh facts of a later
            // run are new to it too, since an earlier one promoted its own (0: a fresh database)
            let run: u64 = args.get(4).map_or(0, |a| a.parse().unwrap());
            for p in 0..count {
                let mut r = Rng::new(p ^ 0x5EED_0000);
                let n = r.next() % size;
                let (t, u, i, _, _, topic, text) = memory(n, &cdf);
                let mut m = Rng::new(n ^ 0xABCDEF);
                let v = around(&centre(t, topic), 0.04, &mut m);
                // a near-duplicate of memory n: its text with punctuation added, its vector nudged
                let dup = around(&v, 0.004, &mut r);
                writeln!(w, "{}\tdup\tt{t:04}\t{}\t{}\t{}!\t{}\tmc_bench_{n:09}", 2 * p + 1,
                    opt(u.map(|u| format!("u{u}"))), opt(i.map(str::to_owned)), text, vector_text(&dup)).unwrap();
                // a fresh fact for the same scope, far from every memory; the size is part of its
                // text and of its centre, so the facts drawn at one size are neither duplicates nor
                // contradictions of those promoted at the size before (10k -> 100k -> 1M appends to
                // one database; with the centre shared, a large tenant drew the same vector again
                // under another text, which review blocks as a contradiction)
                let fresh = around(&centre(t, 2_000_000 + size * 20_000 + p + run * 100_000_000_000), 0.04, &mut r);
                let again = if run == 0 { String::new() } else { format!(" in run {run}") };
                writeln!(w, "{}\tfresh\tt{t:04}\t{}\t{}\tNew fact {p} at {size}{again} for tenant {t}: {} {}.\t{}\t\\N", 2 * p + 2,
                    opt(u.map(|u| format!("u{u}"))), opt(i.map(str::to_owned)), WORDS[(r.next() % 18) as usize],
                    r.next() % 100_000, vector_text(&fresh)).unwrap();
            }
        }
        _ => {
            eprintln!("usage: mf-bench-gen memories FROM TO | probes COUNT SIZE [RUN]");
            std::process::exit(2);
        }
    }
}
