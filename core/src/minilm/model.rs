//! The BERT encoder of all-MiniLM-L6-v2 and its pooling: f32 throughout, single sequence.
//!
//! Matrix products go through kernel.rs: `matrixmultiply::sgemm`, single-threaded (no threads may be
//! spawned inside a PostgreSQL backend), which picks its AVX2/FMA kernel at run time; the
//! linear layers use kernel.rs's dot-product kernel instead where the CPU has AVX2 and FMA.
//! Hugging Face stores a linear layer's weight as [out, in] row-major; `x · Wᵀ` reads W as
//! it is (swapped strides for sgemm), so the mapped weights are used without a copy.

use super::kernel::PackedBf16;
use super::safetensors::{Tensors, F32};

pub(crate) const HIDDEN: usize = 384;
pub(crate) const LAYERS: usize = 6;
pub(crate) const HEADS: usize = 12;
pub(crate) const HEAD_DIM: usize = HIDDEN / HEADS;
pub(crate) const INTERMEDIATE: usize = 1536;
pub(crate) const VOCAB: usize = 30522;
pub(crate) const MAX_POSITIONS: usize = 512;
const TYPE_VOCAB: usize = 2;
const LAYER_NORM_EPS: f32 = 1e-12;

struct Linear {
    weight: F32,
    bias: F32,
    inputs: usize,
    outputs: usize,
}

struct LayerNorm {
    weight: F32,
    bias: F32,
}

struct Layer {
    query: Linear,
    key: Linear,
    value: Linear,
    attention_out: Linear,
    attention_norm: LayerNorm,
    intermediate: Linear,
    output: Linear,
    output_norm: LayerNorm,
}

pub(crate) struct Model {
    tensors: Tensors,
    word: F32,
    position: F32,
    token_type: F32,
    embedding_norm: LayerNorm,
    layers: Vec<Layer>,
}

impl Layer {
    /// Its linear layers, in `ADAPTED`'s order.
    fn linears(&self) -> [&Linear; 6] {
        [&self.query, &self.key, &self.value, &self.attention_out, &self.intermediate, &self.output]
    }
}

impl Linear {
    fn load(t: &Tensors, name: &str, inputs: usize, outputs: usize) -> Result<Linear, String> {
        Ok(Linear {
            weight: t.f32(&format!("{name}.weight"), &[outputs, inputs])?,
            bias: t.f32(&format!("{name}.bias"), &[outputs])?,
            inputs,
            outputs,
        })
    }
}

impl LayerNorm {
    fn load(t: &Tensors, name: &str) -> Result<LayerNorm, String> {
        Ok(LayerNorm {
            weight: t.f32(&format!("{name}.weight"), &[HIDDEN])?,
            bias: t.f32(&format!("{name}.bias"), &[HIDDEN])?,
        })
    }
}

/// A low-rank update of one linear layer (LoRA): `out += (x · Aᵀ) · Bᵀ`, A [rank, inputs] and
/// B [outputs, rank] row-major, B already multiplied by the adapter's alpha / rank.
pub(crate) struct LowRank {
    pub(crate) a: Vec<f32>,
    pub(crate) b: Vec<f32>,
    pub(crate) rank: usize,
}

/// The updates of one layer's six linear layers, in the order of `ADAPTED`.
pub(crate) struct LayerAdapter {
    pub(crate) linears: Vec<LowRank>,
}

/// The linear layers of a layer an adapter may update, as its weights file names them, with
/// their inputs and outputs.
pub(crate) const ADAPTED: [(&str, usize, usize); 6] = [
    ("query", HIDDEN, HIDDEN),
    ("key", HIDDEN, HIDDEN),
    ("value", HIDDEN, HIDDEN),
    ("attention_out", HIDDEN, HIDDEN),
    ("intermediate", HIDDEN, INTERMEDIATE),
    ("output", INTERMEDIATE, HIDDEN),
];

/// Scratch buffers of one forward pass, sized for its sequence length.
/// The weights a forward pass reads.
#[derive(Clone, Copy)]
pub(crate) enum Weights<'a> {
    /// The base model's, as mapped.
    Base,
    /// The base model's, plus an adapter's low-rank update per linear layer (one per layer).
    Adapted(&'a [LayerAdapter]),
    /// Base and adapter merged and rounded to bfloat16 (`Model::merge`).
    Merged(&'a Merged),
}

/// An adapter merged into the base weights, W + B·A, for each linear layer of each layer (in
/// `ADAPTED`'s order), rounded to bfloat16 and packed for kernel.rs's bfloat16 kernel: a
/// private copy of 21 MB, made once per process that asks for it.
pub(crate) struct Merged {
    layers: Vec<Vec<PackedBf16>>,
}

struct Scratch {
    x: Vec<f32>,
    q: Vec<f32>,
    k: Vec<f32>,
    v: Vec<f32>,
    ctx: Vec<f32>,
    scores: Vec<f32>,
    inter: Vec<f32>,
    buf: Buffers,
}

/// The linear layers' own scratch.
#[derive(Default)]
struct Buffers {
    /// x · Aᵀ of an adapter's update, n × rank
    low: Vec<f32>,
    /// x in bfloat16, for merged weights
    xb: Vec<u16>,
}

/// What one linear layer reads: the base weight with an adapter's update or none, or a merged
/// weight.
#[derive(Clone, Copy)]
enum LinearWeights<'a> {
    Base(Option<&'a LowRank>),
    Merged(&'a PackedBf16),
}

impl Model {
    pub(crate) fn load(tensors: Tensors) -> Result<Model, String> {
        let t = &tensors;
        let word = t.f32("embeddings.word_embeddings.weight", &[VOCAB, HIDDEN])?;
        let position = t.f32(
            "embeddings.position_embeddings.weight",
            &[MAX_POSITIONS, HIDDEN],
        )?;
        let token_type = t.f32(
            "embeddings.token_type_embeddings.weight",
            &[TYPE_VOCAB, HIDDEN],
        )?;
        let embedding_norm = LayerNorm::load(t, "embeddings.LayerNorm")?;
        let mut layers = Vec::with_capacity(LAYERS);
        for i in 0..LAYERS {
            let p = format!("encoder.layer.{i}");
            layers.push(Layer {
                query: Linear::load(t, &format!("{p}.attention.self.query"), HIDDEN, HIDDEN)?,
                key: Linear::load(t, &format!("{p}.attention.self.key"), HIDDEN, HIDDEN)?,
                value: Linear::load(t, &format!("{p}.attention.self.value"), HIDDEN, HIDDEN)?,
                attention_out: Linear::load(
                    t,
                    &format!("{p}.attention.output.dense"),
                    HIDDEN,
                    HIDDEN,
                )?,
                attention_norm: LayerNorm::load(t, &format!("{p}.attention.output.LayerNorm"))?,
                intermediate: Linear::load(
                    t,
                    &format!("{p}.intermediate.dense"),
                    HIDDEN,
                    INTERMEDIATE,
                )?,
                output: Linear::load(t, &format!("{p}.output.dense"), INTERMEDIATE, HIDDEN)?,
                output_norm: LayerNorm::load(t, &format!("{p}.output.LayerNorm"))?,
            });
        }
        // A layer beyond the sixth would mean a different model than this code implements.
        let extra = format!("encoder.layer.{LAYERS}.");
        if let Some(x) = t.tensors().iter().find(|x| x.name.starts_with(&extra)) {
            return Err(format!(
                "model.safetensors has tensor {:?}: more than {LAYERS} layers, not all-MiniLM-L6-v2",
                x.name
            ));
        }
        Ok(Model {
            tensors,
            word,
            position,
            token_type,
            embedding_norm,
            layers,
        })
    }

    /// How many tensors could not be used in place (see safetensors.rs).
    pub(crate) fn copied_tensors(&self) -> usize {
        let mut all = vec![&self.word, &self.position, &self.token_type];
        all.extend([&self.embedding_norm.weight, &self.embedding_norm.bias]);
        for l in &self.layers {
            for lin in [
                &l.query,
                &l.key,
                &l.value,
                &l.attention_out,
                &l.intermediate,
                &l.output,
            ] {
                all.extend([&lin.weight, &lin.bias]);
            }
            for n in [&l.attention_norm, &l.output_norm] {
                all.extend([&n.weight, &n.bias]);
            }
        }
        all.iter().filter(|t| t.is_copy()).count()
    }

    fn w<'a>(&'a self, t: &'a F32) -> &'a [f32] {
        self.tensors.get(t)
    }

    /// `out[n × outputs] = x[n × inputs] · Wᵀ + bias (+ out, when `accumulate`)`, W being the
    /// base weight plus the adapter's low-rank update, or the merged weight.
    #[allow(clippy::too_many_arguments)]
    fn linear(&self, lin: &Linear, x: &[f32], n: usize, out: &mut [f32], accumulate: bool, w: LinearWeights<'_>, s: &mut Buffers) {
        let b = self.w(&lin.bias);
        let out = &mut out[..n * lin.outputs];
        if accumulate {
            for row in out.chunks_exact_mut(lin.outputs) {
                row.iter_mut().zip(b).for_each(|(o, b)| *o += b);
            }
        } else {
            for row in out.chunks_exact_mut(lin.outputs) {
                row.copy_from_slice(b);
            }
        }
        match w {
            LinearWeights::Merged(p) => super::kernel::add_x_wt_bf16(x, n, p, out, &mut s.xb),
            LinearWeights::Base(update) => {
                super::kernel::add_x_wt(x, self.w(&lin.weight), n, lin.inputs, lin.outputs, out);
                if let Some(u) = update {
                    s.low.clear();
                    s.low.resize(n * u.rank, 0.0);
                    super::kernel::add_x_wt(x, &u.a, n, lin.inputs, u.rank, &mut s.low);
                    super::kernel::add_x_wt(&s.low, &u.b, n, u.rank, lin.outputs, out);
                }
            }
        }
    }

    /// `adapter` merged into the base weights (see `Merged`).
    pub(crate) fn merge(&self, adapter: &[LayerAdapter]) -> Merged {
        assert_eq!(adapter.len(), LAYERS, "one adapter layer per layer");
        let layers = self
            .layers
            .iter()
            .zip(adapter)
            .map(|(l, ad)| {
                l.linears()
                    .iter()
                    .zip(&ad.linears)
                    .map(|(lin, u)| {
                        crate::interrupt::check();
                        let mut w = self.w(&lin.weight).to_vec();
                        // W += B·A: B [outputs, rank] (scaled), A [rank, inputs]
                        super::kernel::gemm(
                            (lin.outputs, u.rank, lin.inputs),
                            1.0,
                            (&u.b, u.rank, 1),
                            (&u.a, lin.inputs, 1),
                            1.0,
                            (&mut w, lin.inputs, 1),
                        );
                        PackedBf16::pack(&w, lin.outputs, lin.inputs)
                    })
                    .collect()
            })
            .collect();
        Merged { layers }
    }

    fn layer_norm(&self, norm: &LayerNorm, x: &mut [f32]) {
        let (g, b) = (self.w(&norm.weight), self.w(&norm.bias));
        for row in x.chunks_exact_mut(HIDDEN) {
            layer_norm_row(row, g, b);
        }
    }

    /// The sentence embedding of `ids` (already with [CLS]/[SEP], at most 512 long):
    /// mean of the last hidden states, L2-normalised.
    pub(crate) fn embed(&self, ids: &[u32]) -> Vec<f32> {
        let n = ids.len();
        let x = self.hidden(ids, None, Weights::Base, false);
        // Mean pooling over all tokens (one sequence, attention mask all ones), then L2.
        let mut out = vec![0.0f32; HIDDEN];
        for row in x.chunks_exact(HIDDEN) {
            out.iter_mut().zip(row).for_each(|(o, &x)| *o += x);
        }
        let inv_n = 1.0 / n as f32;
        out.iter_mut().for_each(|o| *o *= inv_n);
        let norm = out.iter().map(|&v| v as f64 * v as f64).sum::<f64>().sqrt() as f32;
        let inv = 1.0 / norm.max(1e-12);
        out.iter_mut().for_each(|o| *o *= inv);
        out
    }

    /// The last hidden states (n × HIDDEN) of `ids` (with their [CLS]/[SEP], at most 512),
    /// whose token types are `types` (all 0 when None), through the encoder with `adapter`'s
    /// updates when given (one per layer). With `first_only`, only the first row (the [CLS]
    /// state, all a classification head reads) is computed through the last layer, and only it
    /// is meaningful: the last layer's other rows feed nothing after it, so the first row is
    /// the same as the whole computation's.
    pub(crate) fn hidden(&self, ids: &[u32], types: Option<&[u8]>, weights: Weights<'_>, first_only: bool) -> Vec<f32> {
        let types = types.map(|t| vec![t]);
        self.hidden_batch(&[ids], types.as_deref(), weights, first_only)
    }

    /// `hidden` for sequences of one length read together: each linear layer reads all their
    /// rows in one product (each row's sums are those it gets alone, in the same order), and
    /// each attends to its own tokens only. Rows are the sequences' one after the other; with
    /// `first_only`, the first `seqs.len()` rows are their [CLS] states.
    pub(crate) fn hidden_batch(&self, seqs: &[&[u32]], types: Option<&[&[u8]]>, weights: Weights<'_>, first_only: bool) -> Vec<f32> {
        let n = seqs.first().map_or(0, |s| s.len());
        let b = seqs.len();
        assert!((1..=MAX_POSITIONS).contains(&n), "sequence length {n}");
        assert!(seqs.iter().all(|s| s.len() == n), "sequences of one length");
        let total = b * n;
        let mut s = Scratch {
            x: vec![0.0; total * HIDDEN],
            q: vec![0.0; total * HIDDEN],
            k: vec![0.0; total * HIDDEN],
            v: vec![0.0; total * HIDDEN],
            ctx: vec![0.0; total * HIDDEN],
            scores: vec![0.0; n * n],
            inter: vec![0.0; total * INTERMEDIATE],
            buf: Buffers::default(),
        };
        if let Some(t) = types {
            assert!(t.len() == b && t.iter().all(|t| t.len() == n), "one token type per token");
        }
        if let Weights::Adapted(a) = weights {
            assert_eq!(a.len(), LAYERS, "one adapter layer per layer");
        }

        // Embeddings: word + position + token type, then LayerNorm.
        let (word, pos, tt) = (
            self.w(&self.word),
            self.w(&self.position),
            self.w(&self.token_type),
        );
        for (r, row) in s.x.chunks_exact_mut(HIDDEN).enumerate() {
            let (q, i) = (r / n, r % n);
            let id = (seqs[q][i] as usize).min(VOCAB - 1);
            let w = &word[id * HIDDEN..(id + 1) * HIDDEN];
            let p = &pos[i * HIDDEN..(i + 1) * HIDDEN];
            let ty = types.map_or(0, |t| (t[q][i] as usize).min(TYPE_VOCAB - 1));
            let tt = &tt[ty * HIDDEN..(ty + 1) * HIDDEN];
            for (((o, &w), &p), &t) in row.iter_mut().zip(w).zip(p).zip(tt) {
                *o = w + p + t;
            }
        }
        self.layer_norm(&self.embedding_norm, &mut s.x);

        for (i, layer) in self.layers.iter().enumerate() {
            crate::interrupt::check();
            self.layer(layer, n, b, first_only && i + 1 == LAYERS, &mut s, weights, i);
        }
        crate::interrupt::check();
        s.x
    }

    /// One encoder layer over `seqs` sequences of n tokens. With `first_only`, its output is
    /// computed for each sequence's first row only, gathered into the first `seqs` rows (every
    /// token is still attended to; only queries, attention output and feed-forward are limited).
    #[allow(clippy::too_many_arguments)]
    fn layer(&self, l: &Layer, n: usize, seqs: usize, first_only: bool, s: &mut Scratch, weights: Weights<'_>, index: usize) {
        let u = |i: usize| match weights {
            Weights::Base => LinearWeights::Base(None),
            Weights::Adapted(a) => LinearWeights::Base(Some(&a[index].linears[i])),
            Weights::Merged(m) => LinearWeights::Merged(&m.layers[index][i]),
        };
        let total = seqs * n;
        self.linear(&l.key, &s.x, total, &mut s.k, false, u(1), &mut s.buf);
        self.linear(&l.value, &s.x, total, &mut s.v, false, u(2), &mut s.buf);
        // the rows whose output is computed: all, or each sequence's first, gathered in place
        // (row q·n moves to row q; K and V are computed already)
        let per = if first_only { 1 } else { n };
        if first_only {
            for q in 1..seqs {
                s.x.copy_within(q * n * HIDDEN..(q * n + 1) * HIDDEN, q * HIDDEN);
            }
        }
        let rows = seqs * per;
        self.linear(&l.query, &s.x, rows, &mut s.q, false, u(0), &mut s.buf);

        // Self-attention, one sequence and one head at a time, on strided views of q, k, v: no
        // copies.
        let scale = 1.0 / (HEAD_DIM as f32).sqrt();
        for q in 0..seqs {
            let (qo, ko) = (q * per * HIDDEN, q * n * HIDDEN);
            for h in 0..HEADS {
                let off = h * HEAD_DIM;
                // scores[per × n] = scale · Q_h · K_hᵀ; K_hᵀ[d][j] = k[j·HIDDEN + off + d].
                super::kernel::gemm(
                    (per, HEAD_DIM, n),
                    scale,
                    (&s.q[qo + off..], HIDDEN, 1),
                    (&s.k[ko + off..], 1, HIDDEN),
                    0.0,
                    (&mut s.scores, n, 1),
                );
                for row in s.scores[..per * n].chunks_exact_mut(n) {
                    super::math::softmax(row);
                }
                // ctx_h[per × HEAD_DIM] = P · V_h, written into its columns of ctx.
                super::kernel::gemm(
                    (per, n, HEAD_DIM),
                    1.0,
                    (&s.scores, n, 1),
                    (&s.v[ko + off..], HIDDEN, 1),
                    0.0,
                    (&mut s.ctx[qo + off..], HIDDEN, 1),
                );
            }
        }

        // Attention output: dense + bias + residual, LayerNorm. x is the residual: accumulate.
        self.linear(&l.attention_out, &s.ctx, rows, &mut s.x, true, u(3), &mut s.buf);
        self.layer_norm(&l.attention_norm, &mut s.x[..rows * HIDDEN]);

        // Feed-forward: dense + GELU, dense + bias + residual, LayerNorm.
        self.linear(&l.intermediate, &s.x, rows, &mut s.inter, false, u(4), &mut s.buf);
        super::math::gelu(&mut s.inter[..rows * INTERMEDIATE]);
        self.linear(&l.output, &s.inter, rows, &mut s.x, true, u(5), &mut s.buf);
        self.layer_norm(&l.output_norm, &mut s.x[..rows * HIDDEN]);
    }
}

fn layer_norm_row(row: &mut [f32], g: &[f32], b: &[f32]) {
    let n = row.len() as f32;
    let mean = row.iter().sum::<f32>() / n;
    let var = row.iter().map(|&v| (v - mean) * (v - mean)).sum::<f32>() / n;
    let inv = 1.0 / (var + LAYER_NORM_EPS).sqrt();
    for ((v, &g), &b) in row.iter_mut().zip(g).zip(b) {
        *v = (*v - mean) * inv * g + b;
    }
}
