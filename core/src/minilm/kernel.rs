//! `out += x · Wᵀ` for a weight W stored [outputs, inputs] row-major, read in place.
//!
//! Why not only `matrixmultiply::sgemm`: a general GEMM first packs B into panels that run
//! along the output dimension. Hugging Face weights run along the input dimension, so for
//! `x · Wᵀ` that packing is an element-by-element transposing gather of the whole weight
//! matrix, redone on every call; with the few rows (tokens) of a typical text it took more
//! time than the arithmetic (52% of a 20-token forward pass). Pre-transposing the weights
//! would need a private 42 MB copy per process instead of the shared mapping. So on x86-64
//! with AVX2 and FMA (detected at run time), each output is computed as the dot product of a
//! token row with a weight row, both contiguous: 3 token rows × 4 weight rows per block,
//! twelve 8-lane accumulators, every weight row streamed from memory once and reused from
//! L1 by all the token rows. For long texts (more than `DOT_MAX_ROWS` tokens) and on other
//! CPUs, `matrixmultiply` does it with strides.

/// Up to this many token rows the dot-product kernel is faster; beyond, `x` (up to 1536
/// floats a row) no longer stays in L2 across weight rows, while the packing cost of
/// `matrixmultiply` is spread over enough rows. Measured per text on one core of an AMD EPYC
/// (examples/embed_bench.rs's texts, p50, dot vs sgemm): 32 tokens 15.6 vs 20.1 ms, 60
/// tokens 23.4 vs 31.0, 87 tokens 34.1 vs 48.0, 106 tokens 41.8 vs 50.3; from about 150
/// tokens on the two are within the noise of each other (p10 at 147 tokens 66.8 vs 65.4, at
/// 256 tokens 100.9 vs 106.9).
const DOT_MAX_ROWS: usize = 128;

/// `out[n × o] += x[n × k] · Wᵀ`, W being [o, k] row-major.
pub(crate) fn add_x_wt(x: &[f32], w: &[f32], n: usize, k: usize, o: usize, out: &mut [f32]) {
    assert!(x.len() >= n * k && w.len() >= o * k && out.len() >= n * o);
    #[cfg(target_arch = "x86_64")]
    if n <= DOT_MAX_ROWS && k.is_multiple_of(8) && o.is_multiple_of(COLS) && fma_available() {
        // SAFETY: the CPU has AVX2 and FMA (checked at run time); the sizes, k % 8 and o % COLS
        // were checked above.
        unsafe { add_x_wt_fma(x, w, n, k, o, out) };
        return;
    }
    gemm((n, k, o), 1.0, (x, k, 1), (w, 1, k), 1.0, (out, o, 1));
}

/// Number of elements a strided `rows x cols` matrix spans.
fn span(rows: usize, cols: usize, rs: usize, cs: usize) -> usize {
    if rows == 0 || cols == 0 {
        0
    } else {
        (rows - 1) * rs + (cols - 1) * cs + 1
    }
}

/// `c = alpha · a · b + beta · c` for strided row/column layouts; a is m×k, b is k×n.
#[inline]
pub(crate) fn gemm(
    (m, k, n): (usize, usize, usize),
    alpha: f32,
    (a, rsa, csa): (&[f32], usize, usize),
    (b, rsb, csb): (&[f32], usize, usize),
    beta: f32,
    (c, rsc, csc): (&mut [f32], usize, usize),
) {
    assert!(a.len() >= span(m, k, rsa, csa));
    assert!(b.len() >= span(k, n, rsb, csb));
    assert!(c.len() >= span(m, n, rsc, csc));
    // SAFETY: the asserts keep every strided access inside the slices; `c` is an exclusive
    // borrow that overlaps neither `a` nor `b`.
    unsafe {
        matrixmultiply::sgemm(
            m,
            k,
            n,
            alpha,
            a.as_ptr(),
            rsa as isize,
            csa as isize,
            b.as_ptr(),
            rsb as isize,
            csb as isize,
            beta,
            c.as_mut_ptr(),
            rsc as isize,
            csc as isize,
        );
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) fn fma_available() -> bool {
    use std::sync::OnceLock;
    static YES: OnceLock<bool> = OnceLock::new();
    *YES.get_or_init(|| is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma"))
}

/// Token rows per block: ROWS·4 accumulators + ROWS token vectors + 1 weight vector must fit
/// in the 16 vector registers.
#[cfg(target_arch = "x86_64")]
const ROWS: usize = 3;

/// Weight rows per block: their four sums for one token row come out of three horizontal adds
/// as one 4-lane vector, added to four adjacent outputs at once.
#[cfg(target_arch = "x86_64")]
const COLS: usize = 4;

/// How far ahead (in blocks of COLS weight rows) the kernel prefetches: the hardware
/// prefetcher alone lets the weight stream stall while a block is reused from L1 by the later
/// token rows.
#[cfg(target_arch = "x86_64")]
const PREFETCH_BLOCKS: usize = 2;

/// For each block of COLS weight rows: the token rows ROWS at a time (then 2, then 1), each
/// block of rows accumulating 8-lane partial dot products over k and adding their sums to out.
/// Meanwhile the weight block PREFETCH_BLOCKS ahead is prefetched, its cache lines spread over
/// the row blocks so that the memory stream never pauses.
///
/// Safety: the CPU must have AVX2 and FMA; `x`, `w`, `out` must hold n·k, o·k, n·o values;
/// k must be a multiple of 8 and o of COLS.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn add_x_wt_fma(x: &[f32], w: &[f32], n: usize, k: usize, o: usize, out: &mut [f32]) {
    debug_assert!(x.len() >= n * k && w.len() >= o * k && out.len() >= n * o);
    debug_assert!(k.is_multiple_of(8) && o.is_multiple_of(COLS));
    let (xp, wp, op) = (x.as_ptr(), w.as_ptr(), out.as_mut_ptr());
    let lines = COLS * k / 16; // 64-byte lines in a block of weight rows
    let blocks = n / ROWS + (n % ROWS) / 2 + (n % ROWS) % 2;
    let per_block = lines.div_ceil(blocks.max(1));
    for j in (0..o).step_by(COLS) {
        let w0 = wp.add(j * k);
        // The lines of the weight block PREFETCH_BLOCKS ahead, if there is one; a share per
        // block of token rows.
        let ahead = j + COLS * (PREFETCH_BLOCKS + 1) <= o;
        let pf = w0.wrapping_add(COLS * k * PREFETCH_BLOCKS);
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

/// `out[i·o + q] += dot(x row i, w row q)` for R token rows starting at `x` and the COLS
/// weight rows starting at `w` (all rows k long, contiguous); prefetches `count` cache lines
/// from `pf` on the way (`pf` is only dereferenced by the prefetch hint, and only when the
/// caller found those lines inside the weights).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
#[allow(clippy::needless_range_loop)] // acc is indexed by token row and weight row at once
unsafe fn block<const R: usize>(
    x: *const f32,
    w: *const f32,
    k: usize,
    out: *mut f32,
    o: usize,
    (pf, count): (*const f32, usize),
) {
    use std::arch::x86_64::*;
    let mut acc = [[_mm256_setzero_ps(); COLS]; R];
    let mut line = 0;
    let mut c = 0;
    while c < k {
        let mut t = [_mm256_setzero_ps(); R];
        for (i, t) in t.iter_mut().enumerate() {
            *t = _mm256_loadu_ps(x.add(i * k + c));
        }
        for q in 0..COLS {
            let v = _mm256_loadu_ps(w.add(q * k + c));
            for i in 0..R {
                acc[i][q] = _mm256_fmadd_ps(t[i], v, acc[i][q]);
            }
        }
        if line < count {
            _mm_prefetch::<_MM_HINT_T0>(pf.wrapping_add(16 * line).cast());
            line += 1;
        }
        c += 8;
    }
    for (i, a) in acc.iter().enumerate() {
        let p = out.add(i * o);
        _mm_storeu_ps(p, _mm_add_ps(_mm_loadu_ps(p), sum4(a)));
    }
}

/// The horizontal sums of four 8-lane vectors, as one 4-lane vector.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn sum4(a: &[std::arch::x86_64::__m256; COLS]) -> std::arch::x86_64::__m128 {
    use std::arch::x86_64::*;
    let h = _mm256_hadd_ps(_mm256_hadd_ps(a[0], a[1]), _mm256_hadd_ps(a[2], a[3]));
    _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps::<1>(h))
}

/// A weight W [o, k] rounded to bfloat16 and packed for `add_x_wt_bf16`: for each block of 16
/// outputs, for each pair of inputs, the 16 outputs' two weights side by side
/// (`[o / 16][k / 2][16][2]`), so that one 512-bit load holds what one `vdpbf16ps` multiplies
/// with a broadcast pair of inputs.
pub(crate) struct PackedBf16 {
    data: Vec<u16>,
    pub(crate) inputs: usize,
    pub(crate) outputs: usize,
}

/// Outputs per block of the bfloat16 kernel (one 512-bit register of f32).
pub(crate) const BF16_LANES: usize = 16;

/// f32 to bfloat16, rounded to nearest even (as `vcvtne2ps2bf16` rounds; no NaN reaches it).
fn bf16(x: f32) -> u16 {
    let b = x.to_bits();
    ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) as u16
}

impl PackedBf16 {
    /// Packs `w` [outputs, inputs] row-major; `outputs` a multiple of 16, `inputs` of 32.
    pub(crate) fn pack(w: &[f32], outputs: usize, inputs: usize) -> PackedBf16 {
        assert!(outputs.is_multiple_of(BF16_LANES) && inputs.is_multiple_of(32) && w.len() == outputs * inputs);
        let mut data = Vec::with_capacity(outputs * inputs);
        for block in 0..outputs / BF16_LANES {
            for pair in 0..inputs / 2 {
                for lane in 0..BF16_LANES {
                    let row = &w[(block * BF16_LANES + lane) * inputs..];
                    data.push(bf16(row[2 * pair]));
                    data.push(bf16(row[2 * pair + 1]));
                }
            }
        }
        PackedBf16 { data, inputs, outputs }
    }

}

/// Whether the CPU has AVX-512 with the bfloat16 dot product.
#[cfg(target_arch = "x86_64")]
pub(crate) fn bf16_available() -> bool {
    use std::sync::OnceLock;
    static YES: OnceLock<bool> = OnceLock::new();
    *YES.get_or_init(|| is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512bf16"))
}

#[cfg(not(target_arch = "x86_64"))]
pub(crate) fn bf16_available() -> bool {
    false
}

/// `out[n × o] += x[n × k] · Wᵀ` in bfloat16 products with f32 sums, W packed by
/// `PackedBf16::pack`; `xb` is scratch for x in bfloat16. Only where `bf16_available()`.
pub(crate) fn add_x_wt_bf16(x: &[f32], n: usize, w: &PackedBf16, out: &mut [f32], xb: &mut Vec<u16>) {
    let (k, o) = (w.inputs, w.outputs);
    assert!(x.len() >= n * k && out.len() >= n * o && bf16_available());
    xb.clear();
    xb.extend(x[..n * k].iter().map(|v| bf16(*v)));
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the CPU has AVX-512F and AVX512-BF16 (asserted); the sizes were checked above and
    // by `pack` (o % 16, k % 32).
    unsafe {
        add_x_wt_bf16_avx512(xb, n, w, out)
    }
}

/// Token rows per block of the bfloat16 kernel, and 16-output blocks per block: 8 × 2
/// accumulators of 16 lanes.
#[cfg(target_arch = "x86_64")]
const BF16_ROWS: usize = 6;
#[cfg(target_arch = "x86_64")]
const BF16_BLOCKS: usize = 4;

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bf16")]
unsafe fn add_x_wt_bf16_avx512(xb: &[u16], n: usize, w: &PackedBf16, out: &mut [f32]) {
    let blocks = w.outputs / BF16_LANES;
    let mut b = 0;
    while b < blocks {
        let nb = if blocks - b >= BF16_BLOCKS { BF16_BLOCKS } else { 1 };
        let mut r = 0;
        while r < n {
            let nr = BF16_ROWS.min(n - r);
            macro_rules! rows {
                ($($r:literal)*) => {
                    match (nr, nb) {
                        $(($r, BF16_BLOCKS) => tile::<$r, BF16_BLOCKS>(xb, r, b, w, out),
                          ($r, _) => tile::<$r, 1>(xb, r, b, w, out),)*
                        _ => unreachable!(),
                    }
                };
            }
            rows!(1 2 3 4 5 6);
            r += nr;
        }
        b += nb;
    }
}

/// R token rows from `r` × B blocks of 16 outputs from block `b`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bf16")]
unsafe fn tile<const R: usize, const B: usize>(xb: &[u16], r: usize, b: usize, w: &PackedBf16, out: &mut [f32]) {
    use std::arch::x86_64::*;
    let (k, o) = (w.inputs, w.outputs);
    let pairs = k / 2;
    let mut acc = [[_mm512_setzero_ps(); B]; R];
    let xp = xb.as_ptr().add(r * k) as *const u32;
    let wp = w.data.as_ptr();
    for p in 0..pairs {
        let mut wv = [_mm512_setzero_ps(); B];
        for (q, v) in wv.iter_mut().enumerate() {
            // block b + q, pair p: 32 bf16
            *v = _mm512_loadu_ps(wp.add(((b + q) * pairs + p) * 2 * BF16_LANES) as *const f32);
        }
        for (i, row) in acc.iter_mut().enumerate() {
            let xv = _mm512_set1_epi32(xp.add(i * pairs + p).read_unaligned() as i32);
            for (q, a) in row.iter_mut().enumerate() {
                *a = _mm512_dpbf16_ps(*a, std::mem::transmute::<__m512i, __m512bh>(xv), std::mem::transmute::<__m512, __m512bh>(wv[q]));
            }
        }
    }
    for (i, row) in acc.iter().enumerate() {
        for (q, a) in row.iter().enumerate() {
            let p = out.as_mut_ptr().add((r + i) * o + (b + q) * BF16_LANES);
            _mm512_storeu_ps(p, _mm512_add_ps(_mm512_loadu_ps(p), *a));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{add_x_wt, add_x_wt_bf16, bf16_available, PackedBf16};

    #[test]
    fn matches_a_naive_product() {
        for (n, k, o) in [
            (1, 8, 2),
            (5, 16, 8),
            (5, 16, 6),
            (8, 24, 4),
            (9, 64, 10),
            (20, 384, 384),
            (100, 64, 8),
            (4, 1536, 12),
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

    #[test]
    fn bf16_kernel_matches_within_its_precision() {
        if !bf16_available() {
            return;
        }
        for (n, k, o) in [(1, 384, 384), (34, 384, 1536), (9, 1536, 384), (17, 64, 48)] {
            let x: Vec<f32> = (0..n * k).map(|i| ((i * 7919) % 101) as f32 / 50.0 - 1.0).collect();
            let w: Vec<f32> = (0..o * k).map(|i| ((i * 104729) % 97) as f32 / 48.0 - 1.0).collect();
            let packed = PackedBf16::pack(&w, o, k);
            let mut out: Vec<f32> = (0..n * o).map(|i| i as f32 * 0.5).collect();
            let init = out.clone();
            add_x_wt_bf16(&x, n, &packed, &mut out, &mut Vec::new());
            for r in 0..n {
                for j in 0..o {
                    let (exact, mag): (f64, f64) = (0..k)
                        .map(|c| (x[r * k + c] as f64 * w[j * k + c] as f64, (x[r * k + c] * w[j * k + c]).abs() as f64))
                        .fold((0.0, 0.0), |(s, m), (v, a)| (s + v, m + a));
                    let want = init[r * o + j] as f64 + exact;
                    // two roundings to 8 significant bits: at most 2^-8 of each product
                    let got = out[r * o + j] as f64;
                    assert!((got - want).abs() <= mag / 128.0 + 1e-3, "{n}x{k}x{o} [{r},{j}]: {got} vs {want}");
                }
            }
        }
    }
}
