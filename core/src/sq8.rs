//! Embeddings quantised to one signed byte a dimension, with what it takes to bound the cosine
//! similarity computed from them: recall reads these codes for every memory of a scope instead of
//! the 4-byte floats, keeps only the memories whose score could reach the k-th best, and scores
//! those exactly (src/api/recall.rs).
//!
//! A code is, little-endian: the scale `s` (f32), a bound `r` on the norm of the rounding error
//! (f32, rounded up), the norm of the vector (f64), then one i8 `q[i]` a dimension, so that
//! `v[i] = s * q[i] + e[i]` with `|e| <= r`. For a query `x`, `x . v = s * (x . q) + x . e`, and
//! `|x . e| <= |x| * r` (Cauchy-Schwarz): the similarity lies within a bound of the one computed
//! from the code, whatever the vectors.

const HEADER: usize = 16;

/// The code of `v`, or None for a vector with a non-finite element (pgvector refuses those).
pub fn encode(v: &[f32]) -> Option<Vec<u8>> {
    if v.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
    let scale = if max > 0.0 { max / 127.0 } else { 0.0 };
    let mut out = Vec::with_capacity(HEADER + v.len());
    out.extend_from_slice(&scale.to_le_bytes());
    out.extend_from_slice(&[0; 12]);
    let (mut err2, mut norm2) = (0f64, 0f64);
    for &x in v {
        let q = if scale > 0.0 { (x / scale).round().clamp(-127.0, 127.0) } else { 0.0 };
        let e = x as f64 - scale as f64 * q as f64;
        err2 += e * e;
        norm2 += x as f64 * x as f64;
        out.push(q as i8 as u8);
    }
    // Rounded up, and widened by a part in a million for the sum's own rounding.
    let r = err2.sqrt() * (1.0 + 1e-6) + f64::MIN_POSITIVE;
    let mut r32 = r as f32;
    if (r32 as f64) < r {
        r32 = f32::from_bits(r32.to_bits() + 1);
    }
    out[4..8].copy_from_slice(&r32.to_le_bytes());
    out[8..16].copy_from_slice(&norm2.sqrt().to_le_bytes());
    Some(out)
}

/// A query vector, as the bounds need it.
pub struct Query {
    x: Vec<f32>,
    norm: f64,
}

impl Query {
    /// None for a vector whose similarity to anything is not a number (zero or not finite).
    pub fn new(x: &[f32]) -> Option<Query> {
        let norm = x.iter().map(|v| *v as f64 * *v as f64).sum::<f64>().sqrt();
        (norm > 0.0 && norm.is_finite() && x.iter().all(|v| v.is_finite())).then(|| Query { x: x.to_vec(), norm })
    }

    pub fn dims(&self) -> usize {
        self.x.len()
    }
}

/// Bounds on the cosine similarity of the query and the vector a code was made from, as
/// pgvector computes it (in single precision, clamped to [-1, 1]). None when it is not a
/// number or the dimensions differ: the caller then keeps the memory, and scores it exactly.
pub fn similarity_bounds(code: &[u8], q: &Query) -> Option<(f64, f64)> {
    if code.len() < HEADER || code.len() - HEADER != q.x.len() {
        return None;
    }
    let scale = f32::from_le_bytes(code[0..4].try_into().ok()?) as f64;
    let r = f32::from_le_bytes(code[4..8].try_into().ok()?) as f64;
    let vnorm = f64::from_le_bytes(code[8..16].try_into().ok()?);
    // Where single precision over- or underflows, pgvector's result is not a number or far off:
    // out of these bounds' reach.
    let safe = |n: f64| (1e-15..=1e15).contains(&n);
    if !safe(vnorm) || !safe(q.norm) {
        return None;
    }
    let dot = dot(&code[HEADER..], &q.x) * scale;
    let denom = q.norm * vnorm;
    let approx = dot / denom;
    let err = q.norm * r / denom
        // pgvector sums in single precision: a margin for its rounding, which grows with the
        // dimensions, and for ours
        + 1e-6 * (q.x.len() as f64 + 16.0);
    Some(((approx - err).clamp(-1.0, 1.0), (approx + err).clamp(-1.0, 1.0)))
}

/// x . q in single precision, sixteen sums at a time (so that it vectorises). Its rounding is
/// within (n / 16 + 5) units of single precision of the sum of |x[i] q[i]| (no more than
/// 127 |x|_1); in similarity, that is under 6e-5 for 580 dimensions, and always under the margin
/// of 1e-6 a dimension similarity_bounds adds, up to 70,000 dimensions.
fn dot(q: &[u8], x: &[f32]) -> f64 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: this CPU has AVX2.
        return unsafe { dot_avx2(q, x) };
    }
    dot_sums(q, x)
}

/// The same sums, in the same order, with AVX2's wider registers: the result is the same to
/// the bit (no fused multiply-add, which would round differently).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn dot_avx2(q: &[u8], x: &[f32]) -> f64 {
    dot_sums(q, x)
}

#[inline(always)]
fn dot_sums(q: &[u8], x: &[f32]) -> f64 {
    const L: usize = 16;
    let mut acc = [0f32; L];
    let mut qc = q.chunks_exact(L);
    let mut xc = x.chunks_exact(L);
    for (a, b) in (&mut qc).zip(&mut xc) {
        for i in 0..L {
            acc[i] += (a[i] as i8) as f32 * b[i];
        }
    }
    let mut s: f64 = acc.iter().map(|v| *v as f64).sum();
    for (a, b) in qc.remainder().iter().zip(xc.remainder()) {
        s += (*a as i8) as f64 * *b as f64;
    }
    s
}

/// The values that could be among the k best, from bounds on each: the k-th best lower bound of
/// the values certainly ranked is a value the k best reach, so one whose upper bound is below it
/// is not among them, ties included. A bound that is not a number means no bound; an infinite
/// lower bound does not raise the floor.
pub struct Candidates<T> {
    floor: Floor,
    kept: Vec<(f64, T)>,
}

impl<T> Candidates<T> {
    pub fn new(k: usize) -> Candidates<T> {
        Candidates { floor: Floor::new(k), kept: Vec::new() }
    }

    /// A value within [lower, upper]; `certain` when it is certainly among those ranked (else it
    /// can only be kept). `item` is called only for a value kept so far.
    pub fn offer(&mut self, lower: f64, upper: f64, certain: bool, item: impl FnOnce() -> T) {
        let (lower, upper) = if lower.is_nan() || upper.is_nan() { (f64::NEG_INFINITY, f64::INFINITY) } else { (lower, upper) };
        if certain {
            self.floor.offer(lower);
        }
        if upper >= self.floor.get() {
            self.kept.push((upper, item()));
        }
    }

    /// The k-th best lower bound offered so far (-inf until k were): a value whose upper bound
    /// is below it is not among the k best, and offering it changes nothing.
    pub fn floor(&self) -> f64 {
        self.floor.get()
    }

    /// Those still kept once every value was offered.
    pub fn into_items(self) -> Vec<T> {
        let f = self.floor.get();
        self.kept.into_iter().filter(|(u, _)| *u >= f).map(|(_, t)| t).collect()
    }
}

/// The similarity's bounds for a code and a query, or the whole range where there are none (no
/// query bounds: a zero vector; other dimensions).
pub fn bounds_or_any(code: &[u8], q: Option<&Query>) -> (f64, f64) {
    q.and_then(|q| similarity_bounds(code, q)).unwrap_or((f64::NEG_INFINITY, f64::INFINITY))
}

/// The k-th best of the lower bounds offered so far (-inf until k were offered).
struct Floor {
    k: usize,
    best: std::collections::BinaryHeap<std::cmp::Reverse<Total>>,
}

#[derive(PartialEq)]
struct Total(f64);
impl Eq for Total {}
impl PartialOrd for Total {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Total {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&o.0)
    }
}

impl Floor {
    fn new(k: usize) -> Floor {
        Floor { k: k.max(1), best: std::collections::BinaryHeap::with_capacity(k.max(1) + 1) }
    }

    /// Offers the lower bound of a value certainly among those ranked; a bound that is not a
    /// finite number is not offered.
    fn offer(&mut self, lower: f64) {
        if lower.is_finite() {
            self.best.push(std::cmp::Reverse(Total(lower)));
            if self.best.len() > self.k {
                self.best.pop();
            }
        }
    }

    fn get(&self) -> f64 {
        if self.best.len() < self.k {
            return f64::NEG_INFINITY;
        }
        self.best.peek().map_or(f64::NEG_INFINITY, |b| b.0 .0)
    }
}

/// The key of a scope's entries in promoted_scope_sq8 (sql/finalize.sql), for a tenant, a user
/// and an intent (None: null): the first 16 bytes of the SHA-256 of their length-prefixed bytes.
/// Two scopes share a key only by a collision of 128 bits of SHA-256, which no one can bring
/// about, so the index holds the key alone, not the scope's columns (src/scope_scan.rs). It keys
/// an index: it never changes.
pub fn scope_key(tenant: &str, user: Option<&str>, intent: Option<&str>) -> [u8; 16] {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    crate::keys::hash_parts(&mut h, &[Some(tenant), user, intent]);
    let d = h.finalize();
    d[..16].try_into().expect("a digest has 32 bytes")
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> f32 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            ((self.0 >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0) as f32
        }
        fn vector(&mut self, n: usize) -> Vec<f32> {
            (0..n).map(|_| self.next()).collect()
        }
    }

    /// pgvector's cosine similarity: single-precision sums, clamped.
    fn pgvector_similarity(a: &[f32], b: &[f32]) -> f64 {
        let (mut s, mut na, mut nb) = (0f32, 0f32, 0f32);
        for (x, y) in a.iter().zip(b) {
            s += x * y;
            na += x * x;
            nb += y * y;
        }
        (s as f64 / ((na as f64) * (nb as f64)).sqrt()).clamp(-1.0, 1.0)
    }

    #[test]
    fn bounds_hold_the_similarity() {
        let mut r = Rng(0x9E3779B97F4A7C15);
        for dims in [1, 3, 16, 384, 577] {
            for _ in 0..200 {
                let v = r.vector(dims);
                let mut x = r.vector(dims);
                // some near-duplicates as well
                if r.next() > 0.5 {
                    x = v.iter().map(|a| a + 0.01 * r.next()).collect();
                }
                let code = encode(&v).unwrap();
                assert_eq!(code.len(), 16 + dims);
                let (lo, hi) = similarity_bounds(&code, &Query::new(&x).unwrap()).unwrap();
                let s = pgvector_similarity(&v, &x);
                assert!(lo <= s && s <= hi, "{lo} <= {s} <= {hi} ({dims} dimensions)");
                if dims == 384 {
                    assert!(hi - lo < 0.03, "bounds too wide: {lo} .. {hi}");
                }
            }
        }
    }

    #[test]
    fn the_wide_dot_product_is_the_portable_one() {
        let mut r = Rng(0xD1B54A32D192ED03);
        for dims in [1, 15, 16, 17, 384, 577] {
            for _ in 0..50 {
                let code = encode(&r.vector(dims)).unwrap();
                let x: Vec<f32> = r.vector(dims).iter().map(|a| a * 1e3).collect();
                assert_eq!(dot(&code[HEADER..], &x).to_bits(), dot_sums(&code[HEADER..], &x).to_bits(), "{dims} dimensions");
            }
        }
    }

    #[test]
    fn scope_keys_tell_scopes_apart_and_never_change() {
        let keys = [
            scope_key("t1", None, None),
            scope_key("t1", Some(""), None),
            scope_key("t1", None, Some("")),
            scope_key("t1", Some("u"), None),
            scope_key("t1", None, Some("u")),
            scope_key("t1u", None, None),
            scope_key("t", Some("1u"), None),
        ];
        for (i, a) in keys.iter().enumerate() {
            for b in &keys[i + 1..] {
                assert_ne!(a, b);
            }
        }
        // computed independently (Python's hashlib) from the encoding described above
        let hex = |k: [u8; 16]| k.iter().map(|b| format!("{b:02x}")).collect::<String>();
        assert_eq!(hex(scope_key("t1", None, None)), "33f2c5e85fe1d6a52ac0b27a9f2ff331");
        assert_eq!(hex(scope_key("t1", Some("u1"), Some("support"))), "3a12e151817e6998decd1bf5e1f2b8b7");
    }

    #[test]
    fn floor_is_the_kth_best() {
        let mut f = Floor::new(3);
        assert_eq!(f.get(), f64::NEG_INFINITY);
        for x in [0.5, f64::NAN, 0.1, f64::INFINITY, 0.9] {
            f.offer(x);
        }
        assert_eq!(f.get(), 0.1);
        f.offer(0.7);
        assert_eq!(f.get(), 0.5);
        f.offer(0.2);
        assert_eq!(f.get(), 0.5);
    }

    #[test]
    fn candidates_are_what_could_be_among_the_k_best() {
        let mut c = Candidates::new(2);
        c.offer(0.80, 0.90, true, || "a");
        // kept while fewer than two were certain; dropped at the end, when the floor is 0.5
        c.offer(0.10, 0.20, true, || "b");
        c.offer(0.50, 0.60, true, || "c");
        // under a consent: only kept, never raises the floor
        c.offer(0.95, 0.99, false, || "d");
        // no bound: always kept
        c.offer(f64::NEG_INFINITY, f64::INFINITY, true, || "e");
        c.offer(f64::NAN, 0.3, true, || "f");
        // ranked last (review's memories without a vector): kept only while the floor is -inf
        c.offer(f64::NEG_INFINITY, f64::NEG_INFINITY, true, || "h");
        // exactly at the floor: kept (a tie)
        c.offer(0.40, 0.50, true, || "g");
        // below it: its item is never made
        c.offer(0.1, 0.2, true, || panic!("an item below the floor was made"));
        assert_eq!(c.into_items(), vec!["a", "c", "d", "e", "f", "g"]);
        let mut c = Candidates::new(3);
        c.offer(0.5, 0.6, true, || "a");
        c.offer(f64::NEG_INFINITY, f64::NEG_INFINITY, true, || "h");
        assert_eq!(c.into_items(), vec!["a", "h"], "fewer than k with bounds: the last ones are kept");
    }

    #[test]
    fn extremes() {
        // a vector of one value, and one whose elements differ by orders of magnitude
        for v in [vec![0.5f32; 8], vec![1e6, -1e-6, 1.0, 0.0]] {
            let code = encode(&v).unwrap();
            let (lo, hi) = similarity_bounds(&code, &Query::new(&v).unwrap()).unwrap();
            let s = pgvector_similarity(&v, &v);
            assert!(lo <= s && s <= hi, "{v:?}: {lo} <= {s} <= {hi}");
        }
        // where single precision overflows or underflows (pgvector: not a number): no bounds
        for v in [vec![1e30f32, -1e30, 1.0], vec![1e-30f32, 2e-30, -3e-30]] {
            let code = encode(&v).unwrap();
            assert!(similarity_bounds(&code, &Query::new(&[1.0, 1.0, 1.0]).unwrap()).is_none());
            assert!(similarity_bounds(&encode(&[1.0, 1.0, 1.0]).unwrap(), &Query::new(&v).unwrap()).is_none());
        }
        // the zero vector and dimensions that differ: no bounds (scored exactly)
        let zero = encode(&[0.0, 0.0]).unwrap();
        assert!(similarity_bounds(&zero, &Query::new(&[1.0, 0.0]).unwrap()).is_none());
        let three = encode(&[1.0, 2.0, 3.0]).unwrap();
        assert!(similarity_bounds(&three, &Query::new(&[1.0, 0.0]).unwrap()).is_none());
        assert!(similarity_bounds(&[1, 2, 3], &Query::new(&[1.0]).unwrap()).is_none());
        assert!(Query::new(&[0.0, 0.0]).is_none());
        assert!(Query::new(&[f32::NAN]).is_none());
        assert!(encode(&[f32::INFINITY]).is_none());
    }
}
