//! `out += x · Wᵀ` for a weight W stored [outputs, inputs] row-major, read in place.
//!
//! Why not only `matrixmultiply::sgemm`: a general GEMM first packs B into panels that run
//! along the output dimension. Hugging Face weights run along the input dimension, so for
//! `x · Wᵀ` that packing is an element-by-element transposing gather of the whole weight
//! matrix, redone on every call; with the few rows (tokens) of a typical text it took more
//! time than the arithmetic (52% of a 20-token forward pass). Pre-transposing the weights
//! would need a private 42 MB copy per process instead of the shared mapping. So on x86-64
//! with AVX2 and FMA (detected at run time), each output is computed as the dot product of a
//! token row with a weight row, both contiguous: 5 token rows × 2 weight rows per block,
//! ten 8-lane accumulators, every weight row streamed from memory once and reused from L1
//! by all the token rows. For long texts (more than `DOT_MAX_ROWS` tokens) and on other
//! CPUs, `matrixmultiply` does it with strides.

/// Up to this many token rows the dot-product kernel is faster; beyond, `x` (up to 1536
/// floats a row) no longer stays in L2 across weight rows, while the packing cost of
/// `matrixmultiply` is spread over enough rows. Measured per text on a Zen 3 core, dot vs
/// sgemm: 20 rows 10.1 vs 16.4 ms, 52 rows 28.7 vs 29.5, 80 rows 32.5 vs 34.3, 96 rows
/// 45.2 vs 42.1, 124 rows 65.1 vs 57.4.
const DOT_MAX_ROWS: usize = 80;

/// `out[n × o] += x[n × k] · Wᵀ`, W being [o, k] row-major.
pub(crate) fn add_x_wt(x: &[f32], w: &[f32], n: usize, k: usize, o: usize, out: &mut [f32]) {
    assert!(x.len() >= n * k && w.len() >= o * k && out.len() >= n * o);
    #[cfg(target_arch = "x86_64")]
    if n <= DOT_MAX_ROWS && k.is_multiple_of(8) && o.is_multiple_of(2) && fma_available() {
        // SAFETY: the CPU has AVX2 and FMA (checked at run time); the sizes, k % 8 and o % 2
        // were checked above.
        unsafe { add_x_wt_fma(x, w, n, k, o, out) };
        return;
    }
    super::model::gemm((n, k, o), 1.0, (x, k, 1), (w, 1, k), 1.0, (out, o, 1));
}

#[cfg(target_arch = "x86_64")]
pub(crate) fn fma_available() -> bool {
    use std::sync::OnceLock;
    static YES: OnceLock<bool> = OnceLock::new();
    *YES.get_or_init(|| is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma"))
}

/// Token rows per block: 2·ROWS accumulators + 2 weight vectors + 1 token vector must fit in
/// the 16 vector registers.
#[cfg(target_arch = "x86_64")]
const ROWS: usize = 5;

/// How far ahead (in pairs of weight rows) the kernel prefetches: the hardware prefetcher
/// alone lets the weight stream stall while a pair is reused from L1 by the later token
/// blocks (cold weights: ~40 GFLOP/s without, ~60 with, on Zen 3).
#[cfg(target_arch = "x86_64")]
const PREFETCH_PAIRS: usize = 4;

/// For each pair of weight rows: the token rows ROWS at a time (then 2, then 1), each block
/// accumulating 8-lane partial dot products over k and adding their horizontal sums to out.
/// Meanwhile the pair PREFETCH_PAIRS ahead is prefetched, its cache lines spread over the
/// blocks so that the memory stream never pauses.
///
/// Safety: the CPU must have AVX2 and FMA; `x`, `w`, `out` must hold n·k, o·k, n·o values;
/// k must be a multiple of 8 and o even.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn add_x_wt_fma(x: &[f32], w: &[f32], n: usize, k: usize, o: usize, out: &mut [f32]) {
    debug_assert!(x.len() >= n * k && w.len() >= o * k && out.len() >= n * o);
    debug_assert!(k.is_multiple_of(8) && o.is_multiple_of(2));
    let (xp, wp, op) = (x.as_ptr(), w.as_ptr(), out.as_mut_ptr());
    let lines = 2 * k / 16; // 64-byte lines in a pair of weight rows
    let blocks = n / ROWS + (n % ROWS) / 2 + (n % ROWS) % 2;
    let per_block = lines.div_ceil(blocks.max(1));
    for j in (0..o).step_by(2) {
        let w0 = wp.add(j * k);
        // The lines of the pair PREFETCH_PAIRS ahead, if there is one; a share per block.
        let ahead = j + 2 * PREFETCH_PAIRS + 1 < o;
        let pf = w0.wrapping_add(2 * k * PREFETCH_PAIRS);
        let mut next_line = 0;
        let mut share = || {
            let count = if ahead {
                per_block.min(lines.saturating_sub(next_line))
            } else {
                0
            };
            let from = next_line;
            next_line += count;
            (pf.wrapping_add(from * 16), count)
        };
        let mut r = 0;
        while r + ROWS <= n {
            block::<ROWS>(xp.add(r * k), w0, k, op.add(r * o + j), o, share());
            r += ROWS;
        }
        while r + 2 <= n {
            block::<2>(xp.add(r * k), w0, k, op.add(r * o + j), o, share());
            r += 2;
        }
        if r < n {
            block::<1>(xp.add(r * k), w0, k, op.add(r * o + j), o, share());
        }
    }
}

/// `out[i·o + {0, 1}] += dot(x row i, w row {0, 1})` for R token rows starting at `x` and the
/// two weight rows starting at `w` (all rows k long, contiguous); prefetches `count` cache
/// lines from `pf` on the way (`pf` is only dereferenced by the prefetch hint, and only when
/// the caller found those lines inside the weights).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn block<const R: usize>(
    x: *const f32,
    w: *const f32,
    k: usize,
    out: *mut f32,
    o: usize,
    (pf, count): (*const f32, usize),
) {
    use std::arch::x86_64::*;
    let mut a0 = [_mm256_setzero_ps(); R];
    let mut a1 = [_mm256_setzero_ps(); R];
    let mut c = 0;
    while c < k {
        if c / 8 < count {
            _mm_prefetch::<_MM_HINT_T0>(pf.wrapping_add(2 * c).cast());
        }
        let v0 = _mm256_loadu_ps(w.add(c));
        let v1 = _mm256_loadu_ps(w.add(k + c));
        for i in 0..R {
            let t = _mm256_loadu_ps(x.add(i * k + c));
            a0[i] = _mm256_fmadd_ps(t, v0, a0[i]);
            a1[i] = _mm256_fmadd_ps(t, v1, a1[i]);
        }
        c += 8;
    }
    for i in 0..R {
        *out.add(i * o) += hsum(a0[i]);
        *out.add(i * o + 1) += hsum(a1[i]);
    }
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn hsum(v: std::arch::x86_64::__m256) -> f32 {
    use std::arch::x86_64::*;
    let s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v));
    let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    let s = _mm_add_ss(s, _mm_movehdup_ps(s));
    _mm_cvtss_f32(s)
}

#[cfg(test)]
mod tests {
    use super::add_x_wt;

    #[test]
    fn matches_a_naive_product() {
        for (n, k, o) in [
            (1, 8, 2),
            (5, 16, 6),
            (8, 24, 4),
            (9, 64, 10),
            (20, 384, 384),
            (100, 64, 6),
            (3, 12, 5),
        ] {
            let x: Vec<f32> = (0..n * k)
                .map(|i| ((i * 7919) % 101) as f32 / 50.0 - 1.0)
                .collect();
            let w: Vec<f32> = (0..o * k)
                .map(|i| ((i * 104729) % 97) as f32 / 48.0 - 1.0)
                .collect();
            let mut out: Vec<f32> = (0..n * o).map(|i| i as f32 * 0.5).collect();
            let init = out.clone();
            add_x_wt(&x, &w, n, k, o, &mut out);
            for r in 0..n {
                for j in 0..o {
                    let want: f64 = init[r * o + j] as f64
                        + (0..k)
                            .map(|c| x[r * k + c] as f64 * w[j * k + c] as f64)
                            .sum::<f64>();
                    let got = out[r * o + j] as f64;
                    assert!(
                        (got - want).abs() <= 1e-4 * (1.0 + want.abs()),
                        "{n}x{k}x{o} [{r},{j}]: {got} vs {want}"
                    );
                }
            }
        }
    }
}
