//! The built-in embedder: deterministic, in-process, no model files, no network.
//!
//! Signed feature hashing of the normalised text into `DIMENSIONS` floats, L2-normalised:
//! word stems (stop words down-weighted, negations kept as their own feature), adjacent
//! content-word bigrams (word order and "not X") and character trigrams (spelling variants).
//! It measures lexical overlap, not meaning: paraphrases with different words score lower
//! than with a neural model, which is why its thresholds are calibrated separately.
//!
//! Any change to the output of `embed` must come with a new `MODEL` name, because stored
//! vectors are only ever compared with vectors of the same model.

use crate::interrupt::Every;
use crate::text::{normalize, CHECK_EVERY_CHARS};

pub const MODEL: &str = "memory_fabric/hash-384-v1";
pub const DIMENSIONS: usize = 384;

/// The embedder's token loop checks for interrupts once per this many tokens.
pub(crate) const CHECK_EVERY_TOKENS: usize = 1024;
const CHECK_EVERY_TRIGRAMS: usize = 16 * 1024;

const W_WORD: f32 = 1.0;
const W_STOP: f32 = 0.3;
const W_BIGRAM: f32 = 0.6;
const W_TRIGRAM: f32 = 0.2;

const STOP_WORDS: &[&str] = &[
    "a", "an", "the", "and", "or", "of", "to", "in", "on", "at", "by", "for", "with", "from", "as",
    "is", "are", "was", "were", "be", "been", "being", "it", "its", "this", "that", "these",
    "those", "has", "have", "had", "do", "does", "did", "will", "would", "should", "can", "could",
    "may", "might", "must", "shall", "their", "they", "them", "he", "she", "his", "her", "we",
    "our", "you", "your", "i", "me", "my", "also", "very", "just", "so", "than", "then", "there",
    "which", "who", "whom", "what", "when", "where", "into", "about", "over", "only",
];

const NEGATIONS: &[&str] = &[
    "not", "no", "never", "none", "nobody", "nothing", "neither", "nor", "cannot", "without",
    "isnt", "arent", "wasnt", "werent", "dont", "doesnt", "didnt", "wont", "wouldnt", "cant",
    "couldnt", "shouldnt", "hasnt", "havent", "hadnt", "mustnt", "aint",
];

/// Splits normalised text into tokens: runs of letters and digits; an apostrophe inside a
/// word is dropped ("don't" → "dont"); "1,000" and "3.5" stay one token.
pub fn tokens(normalized: &str) -> Vec<String> {
    let chars: Vec<char> = normalized.chars().collect();
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut every = Every::new(CHECK_EVERY_CHARS);
    for (i, &c) in chars.iter().enumerate() {
        every.tick(1);
        let prev = i.checked_sub(1).map(|j| chars[j]);
        let next = chars.get(i + 1).copied();
        if c.is_alphanumeric() {
            cur.push(c);
        } else if (c == '\'' || c == '’') && !cur.is_empty() && next.is_some_and(char::is_alphanumeric) {
            // inside a word: skip
        } else if (c == '.' || c == ',')
            && prev.is_some_and(|p| p.is_ascii_digit())
            && next.is_some_and(|n| n.is_ascii_digit())
            && !cur.is_empty()
        {
            if c == '.' {
                cur.push('.');
            }
        } else if !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// A small, deterministic suffix stemmer for English plurals and verb forms.
pub fn stem(word: &str) -> String {
    if word.chars().any(|c| c.is_ascii_digit()) || !word.is_ascii() {
        return word.to_owned();
    }
    let w = word;
    let n = w.len();
    if n > 4 && w.ends_with("ies") {
        return format!("{}y", &w[..n - 3]);
    }
    if n > 5 && w.ends_with("ing") {
        return undouble(&w[..n - 3]);
    }
    if n > 4 && w.ends_with("ed") {
        return undouble(&w[..n - 2]);
    }
    if n > 4 && (w.ends_with("ches") || w.ends_with("shes") || w.ends_with("sses") || w.ends_with("xes")) {
        return w[..n - 2].to_owned();
    }
    if n > 3 && w.ends_with('s') && !w.ends_with("ss") && !w.ends_with("us") && !w.ends_with("is") {
        return w[..n - 1].to_owned();
    }
    w.to_owned()
}

fn undouble(s: &str) -> String {
    let b = s.as_bytes();
    let n = b.len();
    if n >= 2 && b[n - 1] == b[n - 2] && !matches!(b[n - 1], b'l' | b's' | b'z') {
        s[..n - 1].to_owned()
    } else {
        s.to_owned()
    }
}

/// FNV-1a followed by a SplitMix64 finaliser: stable across platforms and Rust versions.
fn hash(namespace: u8, s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in std::iter::once(&namespace).chain(s.as_bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

fn add(v: &mut [f32], namespace: u8, feature: &str, weight: f32) {
    let h = hash(namespace, feature);
    let idx = (h % DIMENSIONS as u64) as usize;
    let sign = if h >> 63 == 0 { 1.0 } else { -1.0 };
    v[idx] += sign * weight;
}

/// Embeds a text. The result has `DIMENSIONS` entries and unit L2 norm; a text with no
/// letters or digits still gets a non-zero vector (from its whole normalised form).
pub fn embed(text: &str) -> Vec<f32> {
    let norm = normalize(text);
    let mut v = vec![0f32; DIMENSIONS];
    let toks = tokens(&norm);
    let mut prev_content: Option<String> = None;
    let mut every = Every::new(CHECK_EVERY_TOKENS);
    // One very long token has as many trigrams as characters: count those too.
    let mut every_trigram = Every::new(CHECK_EVERY_TRIGRAMS);
    for t in &toks {
        every.tick(1);
        let negation = NEGATIONS.contains(&t.as_str());
        let s = if negation { "not".to_owned() } else { stem(t) };
        let stop = !negation && STOP_WORDS.contains(&t.as_str());
        add(&mut v, b'w', &s, if stop { W_STOP } else { W_WORD });
        if !stop {
            if let Some(p) = &prev_content {
                add(&mut v, b'b', &format!("{p} {s}"), W_BIGRAM);
            }
            prev_content = Some(s);
        }
        let padded: Vec<char> = std::iter::once('^').chain(t.chars()).chain(std::iter::once('$')).collect();
        for w in padded.windows(3) {
            every_trigram.tick(1);
            let tri: String = w.iter().collect();
            add(&mut v, b'c', &tri, W_TRIGRAM);
        }
    }
    let mut n2: f32 = v.iter().map(|x| x * x).sum();
    if n2 == 0.0 {
        add(&mut v, b't', &norm, 1.0);
        n2 = v.iter().map(|x| x * x).sum();
    }
    let inv = 1.0 / n2.sqrt();
    for x in &mut v {
        *x *= inv;
    }
    v
}

/// Cosine similarity of two vectors of equal length (unit vectors: their dot product).
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let (mut dot, mut na, mut nb) = (0f64, 0f64, 0f64);
    for (x, y) in a.iter().zip(b) {
        dot += f64::from(*x) * f64::from(*y);
        na += f64::from(*x) * f64::from(*x);
        nb += f64::from(*y) * f64::from(*y);
    }
    if na == 0.0 || nb == 0.0 {
        return 0.0;
    }
    (dot / (na.sqrt() * nb.sqrt())) as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_norm_and_dimension() {
        for t in ["hello", "Customer prefers email.", "!!!", "日本語のテキスト", "42"] {
            let v = embed(t);
            assert_eq!(v.len(), DIMENSIONS);
            let n: f32 = v.iter().map(|x| x * x).sum();
            assert!((n - 1.0).abs() < 1e-5, "{t}: {n}");
            assert!(v.iter().all(|x| x.is_finite()));
        }
    }

    #[test]
    fn deterministic_and_pinned() {
        assert_eq!(embed("Customer prefers email"), embed("Customer prefers email"));
        // Pins the output: if this changes, MODEL must get a new name.
        let v = embed("Customer prefers email");
        let checksum: f64 = v.iter().enumerate().map(|(i, x)| (i as f64 + 1.0) * f64::from(*x)).sum();
        assert!((checksum - PINNED_CHECKSUM).abs() < 1e-3, "checksum {checksum}");
    }
    const PINNED_CHECKSUM: f64 = 1.756_624_594_330_787_7;

    #[test]
    fn similarity_orders_sensibly() {
        let base = embed("The customer prefers email for order updates.");
        let same = embed("the customer prefers EMAIL for order updates");
        let near = embed("The customer prefers e-mail for all order updates.");
        let other = embed("Refunds over $500 need a manager's approval.");
        assert!(cosine(&base, &same) > 0.999);
        assert!(cosine(&base, &near) > cosine(&base, &other) + 0.3);
        assert!(cosine(&base, &other) < 0.3);
    }

    #[test]
    fn tokenizer_and_stemmer() {
        assert_eq!(tokens("don't pay $1,000 or 3.5 items."), ["dont", "pay", "1000", "or", "3.5", "items"]);
        assert_eq!(stem("policies"), "policy");
        assert_eq!(stem("refunds"), "refund");
        assert_eq!(stem("shipping"), "ship");
        assert_eq!(stem("approved"), "approv");
        assert_eq!(stem("address"), "address");
        assert_eq!(stem("status"), "status");
        assert_eq!(stem("2026s"), "2026s");
    }

    #[test]
    fn negation_changes_the_vector_but_keeps_it_close() {
        let a = embed("The customer wants paper invoices.");
        let b = embed("The customer does not want paper invoices.");
        let s = cosine(&a, &b);
        assert!(s < 0.99 && s > 0.5, "{s}");
    }
}
