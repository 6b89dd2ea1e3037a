#!/usr/bin/env python3
"""Trains review's judge: a cross-encoder on the frozen all-MiniLM-L6-v2 encoder, with LoRA
adapters (rank 8) on the six linear layers of each of its six layers and a 3-way head
(entailment, neutral, contradiction) on the final [CLS] state. Writes one small weights file
and its manifest; the base weights are not copied.

Run by hand, off the CI path (about an hour on one core, float32), in a Python environment with torch,
tokenizers and safetensors installed:

    python scripts/dev/train_judge.py --data DATA_DIR --base MODEL_DIR --out OUT_DIR \
        [--epochs 2] [--threads 1] [--seed 29] [--init JUDGE] [--extra TSV ...] [--replay-rows N|extra]

DATA_DIR holds the normalised TSVs that scripts/dev/judge_data.md says how to build (header
`premise  hypothesis  label  split`): mnli_train.tsv, mnli_dev_mismatched.tsv, snli_train.tsv,
paws_dev.tsv, paws_test.tsv for training; mnli_dev_matched.tsv is held out (reported, and
used to choose thresholds by scripts/dev/calibrate_judge.py). The PAWS pairs that appear in
core/tests/data/corpus/public.tsv (the held-out evaluation corpus) are removed before training,
as are all SNLI dev pairs (none are read). core/tests/data/corpus/memory.tsv is never read.

MODEL_DIR is the installed all-MiniLM-L6-v2 directory (model.safetensors, vocab.txt).

Optional, for continued training (none of them changes a default run):
  --init JUDGE      start the LoRA matrices and the head from an existing judge.safetensors
                    (same tensor names and shapes as written here) instead of a fresh init;
  --extra TSV       more training rows in the same TSV format (labels entailment, neutral,
                    contradiction, paraphrase, not_paraphrase), mixed into the training set;
                    may be given more than once (e.g. scripts/dev/judge_augment.py's output);
  --replay-rows N   keep only N rows, drawn with the seed, of the standard training set above
                    before adding the --extra rows; `extra` means as many as there are extra rows.

Writes OUT_DIR/judge.safetensors (float32 tensors: `layer.L.NAME.lora_a` [8, in],
`layer.L.NAME.lora_b` [out, 8] for NAME in query, key, value, attention_out, intermediate, output;
`head.weight` [3, 384], `head.bias` [3]) and OUT_DIR/judge-manifest.json (sources, counts,
hyper-parameters, seed, held-out accuracy, SHA-256 of the weights file), and
OUT_DIR/judge_reference.json: the float32 logits of a fixed list of pairs in both directions,
for core/tests/judge.rs to compare the Rust forward pass with.
"""

import argparse
import csv
import hashlib
import json
import math
import os
import random
import sys
import time

import torch
import torch.nn.functional as F
from safetensors.torch import load_file, save_file
from tokenizers import BertWordPieceTokenizer

HIDDEN, LAYERS, HEADS, INTER = 384, 6, 12, 1536
RANK, ALPHA = 8, 16.0
MAX_LEN = 128
LABELS = ["entailment", "neutral", "contradiction"]
LINEARS = {  # our name -> (Hugging Face prefix inside the layer, inputs, outputs)
    "query": ("attention.self.query", HIDDEN, HIDDEN),
    "key": ("attention.self.key", HIDDEN, HIDDEN),
    "value": ("attention.self.value", HIDDEN, HIDDEN),
    "attention_out": ("attention.output.dense", HIDDEN, HIDDEN),
    "intermediate": ("intermediate.dense", HIDDEN, INTER),
    "output": ("output.dense", INTER, HIDDEN),
}

REFERENCE_PAIRS = [
    ("The west gate opens at 10 am.", "The west gate opens at 9 am."),
    ("Alice approved the refund.", "The refund was approved by Alice."),
    ("The customer prefers email.", "The customer lives in Lisbon."),
    ("The customer lives in Lisbon, Portugal.", "The customer lives in Portugal."),
    ("The order was not shipped.", "The order was shipped on Monday."),
    ("Bob manages the Berlin office.", "The Berlin office is managed by Carol."),
    ("A man is playing a guitar on stage.", "A man is performing music."),
    ("Invoices are sent on Mondays.", "Invoices are never sent on Mondays."),
    ("The parcel was left with a neighbour.", "The printer needs toner."),
    ("cust_7714 pays by card, not by invoice.", "cust_7714 pays by invoice."),
]


def read_tsv(path):
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))


class Lora(torch.nn.Module):
    """y = x Wᵀ + b + (alpha / rank) · (x Aᵀ) Bᵀ, W and b frozen."""

    def __init__(self, weight, bias):
        super().__init__()
        out_f, in_f = weight.shape
        self.weight = torch.nn.Parameter(weight, requires_grad=False)
        self.bias = torch.nn.Parameter(bias, requires_grad=False)
        self.lora_a = torch.nn.Parameter(torch.empty(RANK, in_f))
        self.lora_b = torch.nn.Parameter(torch.zeros(out_f, RANK))
        torch.nn.init.kaiming_uniform_(self.lora_a, a=math.sqrt(5))

    def forward(self, x):
        return F.linear(x, self.weight, self.bias) + F.linear(F.linear(x, self.lora_a), self.lora_b) * (ALPHA / RANK)


class Judge(torch.nn.Module):
    def __init__(self, base):
        super().__init__()
        g = lambda n: base[n].float()
        self.word = torch.nn.Parameter(g("embeddings.word_embeddings.weight"), requires_grad=False)
        self.pos = torch.nn.Parameter(g("embeddings.position_embeddings.weight"), requires_grad=False)
        self.typ = torch.nn.Parameter(g("embeddings.token_type_embeddings.weight"), requires_grad=False)
        self.emb_ln = self._ln(base, "embeddings.LayerNorm")
        self.layers = torch.nn.ModuleList()
        for i in range(LAYERS):
            p = f"encoder.layer.{i}."
            m = torch.nn.Module()
            for name, (hf, _, _) in LINEARS.items():
                setattr(m, name, Lora(g(p + hf + ".weight"), g(p + hf + ".bias")))
            m.ln1 = self._ln(base, p + "attention.output.LayerNorm")
            m.ln2 = self._ln(base, p + "output.LayerNorm")
            self.layers.append(m)
        self.head = torch.nn.Linear(HIDDEN, 3)
        torch.nn.init.normal_(self.head.weight, std=0.02)
        torch.nn.init.zeros_(self.head.bias)

    @staticmethod
    def _ln(base, name):
        ln = torch.nn.LayerNorm(HIDDEN, eps=1e-12)
        ln.weight = torch.nn.Parameter(base[name + ".weight"].float(), requires_grad=False)
        ln.bias = torch.nn.Parameter(base[name + ".bias"].float(), requires_grad=False)
        return ln

    def forward(self, ids, types, mask):
        b, t = ids.shape
        x = self.word[ids] + self.pos[:t].unsqueeze(0) + self.typ[types]
        x = self.emb_ln(x)
        neg = (1.0 - mask[:, None, None, :].to(x.dtype)) * -1e9
        for m in self.layers:
            q = m.query(x).view(b, t, HEADS, -1).transpose(1, 2)
            k = m.key(x).view(b, t, HEADS, -1).transpose(1, 2)
            v = m.value(x).view(b, t, HEADS, -1).transpose(1, 2)
            s = q @ k.transpose(-1, -2) / math.sqrt(HIDDEN // HEADS) + neg
            a = (s.softmax(-1) @ v).transpose(1, 2).reshape(b, t, HIDDEN)
            x = m.ln1(x + m.attention_out(a))
            h = F.gelu(m.intermediate(x))
            x = m.ln2(x + m.output(h))
        return self.head(x[:, 0])

    def trained(self):
        out = {}
        for i, m in enumerate(self.layers):
            for name in LINEARS:
                lin = getattr(m, name)
                out[f"layer.{i}.{name}.lora_a"] = lin.lora_a.detach().float().contiguous()
                out[f"layer.{i}.{name}.lora_b"] = lin.lora_b.detach().float().contiguous()
        out["head.weight"] = self.head.weight.detach().float().contiguous()
        out["head.bias"] = self.head.bias.detach().float().contiguous()
        return out


def encode(tok, pairs):
    encs = tok.encode_batch([(a, b) for a, b in pairs])
    t = max(len(e.ids) for e in encs)
    ids = torch.zeros(len(encs), t, dtype=torch.long)
    types = torch.zeros_like(ids)
    mask = torch.zeros_like(ids)
    for i, e in enumerate(encs):
        n = len(e.ids)
        ids[i, :n] = torch.tensor(e.ids)
        types[i, :n] = torch.tensor(e.type_ids)
        mask[i, :n] = 1
    return ids, types, mask


def evaluate(model, tok, rows, batch=64):
    model.eval()
    right = 0
    with torch.no_grad():
        for i in range(0, len(rows), batch):
            chunk = rows[i:i + batch]
            logits = model(*encode(tok, [(r[0], r[1]) for r in chunk]))
            right += sum(int(p == r[2]) for p, r in zip(logits.argmax(-1).tolist(), chunk))
    model.train()
    return right / max(1, len(rows))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--base", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--corpus", default=os.path.join(os.path.dirname(__file__), "../../core/tests/data/corpus/public.tsv"))
    ap.add_argument("--epochs", type=float, default=2.0)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=5e-4)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=29)
    ap.add_argument("--dev-rows", type=int, default=2000)
    ap.add_argument("--init", default=None, help="judge.safetensors to start the adapter and head from")
    ap.add_argument("--extra", action="append", default=[], help="TSV of more training rows (repeatable)")
    ap.add_argument("--replay-rows", default=None, help="keep N rows of the standard training set, or 'extra'")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    random.seed(args.seed)
    torch.manual_seed(args.seed)
    os.makedirs(args.out, exist_ok=True)

    held_out = set()
    for r in read_tsv(args.corpus):
        held_out.add((r["a"], r["b"]))
        held_out.add((r["b"], r["a"]))
    lab = {l: i for i, l in enumerate(LABELS)}
    sources, train = {}, []
    for name in ["mnli_train", "mnli_dev_mismatched", "snli_train", "paws_dev", "paws_test"]:
        path = os.path.join(args.data, name + ".tsv")
        kept = dropped = 0
        for r in read_tsv(path):
            a, b, l = r["premise"], r["hypothesis"], r["label"]
            if (a, b) in held_out:
                dropped += 1
                continue
            if l == "paraphrase":  # a paraphrase entails both ways
                train.append((a, b, lab["entailment"]))
                train.append((b, a, lab["entailment"]))
                kept += 2
            elif l == "not_paraphrase":  # word-scrambled, mostly role swaps: follows neither way
                train.append((a, b, lab["neutral"]))
                kept += 1
            else:
                train.append((a, b, lab[l]))
                kept += 1
        sources[name] = {"file": name + ".tsv", "sha256": sha256(path), "pairs_used": kept, "dropped_held_out": dropped}
    extra_rows, extra_sources = [], {}
    for path in args.extra:
        rows = []
        for r in read_tsv(path):
            a, b, l = r["premise"], r["hypothesis"], r["label"]
            if (a, b) in held_out:
                continue
            if l == "paraphrase":
                rows += [(a, b, lab["entailment"]), (b, a, lab["entailment"])]
            elif l == "not_paraphrase":
                rows.append((a, b, lab["neutral"]))
            else:
                rows.append((a, b, lab[l]))
        extra_rows += rows
        extra_sources[os.path.basename(path)] = {"path": os.path.abspath(path), "sha256": sha256(path), "pairs_used": len(rows)}
    replay = None
    if args.replay_rows is not None:
        replay = len(extra_rows) if args.replay_rows == "extra" else int(args.replay_rows)
        train = random.Random(args.seed).sample(train, min(replay, len(train)))
    train += extra_rows
    dev = [(r["premise"], r["hypothesis"], lab[r["label"]]) for r in read_tsv(os.path.join(args.data, "mnli_dev_matched.tsv"))]
    random.Random(args.seed).shuffle(dev)
    dev = dev[: args.dev_rows]
    counts = {l: sum(1 for r in train if r[2] == i) for i, l in enumerate(LABELS)}
    print(f"training pairs: {len(train)} {counts}; held-out dev: {len(dev)}", flush=True)

    tok = BertWordPieceTokenizer(os.path.join(args.base, "vocab.txt"), lowercase=True)
    tok.enable_truncation(MAX_LEN, strategy="longest_first")
    model = Judge(load_file(os.path.join(args.base, "model.safetensors")))
    if args.init:
        load_trained(model, args.init)
        print(f"initialised from {args.init}; held-out dev accuracy before: {evaluate(model, tok, dev):.4f}", flush=True)
    params = [p for p in model.parameters() if p.requires_grad]
    n_params = sum(p.numel() for p in params)
    print(f"trainable parameters: {n_params}", flush=True)
    steps = int(len(train) * args.epochs / args.batch)
    opt = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.01)
    warm = max(1, steps // 20)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warm) * max(0.0, (steps - s) / max(1, steps - warm)))
    # batches of pairs of about the same length (less padding), in random order
    lengths = [len(e.ids) for e in tok.encode_batch([(a, b) for a, b, _ in train])]
    order, pos, t0, loss_avg = [], 0, time.time(), None
    rng = random.Random(args.seed)
    log = []
    for step in range(steps):
        if pos >= len(order):
            order, pos = batches(train, lengths, args.batch, rng), 0
        chunk = [train[i] for i in order[pos]]
        pos += 1
        ids, types, mask = encode(tok, [(a, b) for a, b, _ in chunk])
        logits = model(ids, types, mask)
        loss = F.cross_entropy(logits, torch.tensor([l for _, _, l in chunk]))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        sched.step()
        loss_avg = loss.item() if loss_avg is None else 0.98 * loss_avg + 0.02 * loss.item()
        if (step + 1) % 200 == 0 or step + 1 == steps:
            rate = (step + 1) * args.batch / (time.time() - t0)
            msg = {"step": step + 1, "of": steps, "loss": round(loss_avg, 4), "pairs_per_s": round(rate, 1)}
            if (step + 1) % 1000 == 0 or step + 1 == steps:
                msg["dev_accuracy"] = round(evaluate(model, tok, dev), 4)
            log.append(msg)
            print(json.dumps(msg), flush=True)

    weights = model.trained()
    wpath = os.path.join(args.out, "judge.safetensors")
    save_file(weights, wpath, metadata={"base": "sentence-transformers/all-MiniLM-L6-v2", "rank": str(RANK),
                                        "alpha": str(ALPHA), "labels": ",".join(LABELS), "max_tokens": str(MAX_LEN)})
    # reference logits in float32, no autocast, for the Rust forward pass to match
    model.eval()
    ref = []
    with torch.no_grad():
        for a, b in REFERENCE_PAIRS:
            for x, y in ((a, b), (b, a)):
                e = tok.encode(x, y)
                logits = model(torch.tensor([e.ids]), torch.tensor([e.type_ids]), torch.ones(1, len(e.ids), dtype=torch.long))
                ref.append({"a": x, "b": y, "ids": e.ids, "type_ids": e.type_ids, "logits": logits[0].tolist()})
    with open(os.path.join(args.out, "judge_reference.json"), "w") as f:
        json.dump({"weights_sha256": sha256(wpath), "labels": LABELS, "pairs": ref}, f, indent=1)
    manifest = {
        "weights": "judge.safetensors", "sha256": sha256(wpath), "bytes": os.path.getsize(wpath),
        "base": {"model": "sentence-transformers/all-MiniLM-L6-v2", "files": "model.safetensors, vocab.txt (installed by scripts/install_model.sh)"},
        "architecture": {"lora_rank": RANK, "lora_alpha": ALPHA, "lora_on": list(LINEARS), "head": "linear 384 -> 3 on the final [CLS] state",
                         "labels": LABELS, "max_tokens": MAX_LEN, "trainable_parameters": n_params},
        "training": {"epochs": args.epochs, "batch": args.batch, "lr": args.lr, "optimizer": "AdamW, weight decay 0.01, 5 % warm-up, linear decay",
                     "precision": "float32 on CPU", "threads": args.threads, "seed": args.seed, "steps": steps,
                     "torch": torch.__version__, "seconds": round(time.time() - t0)},
        "data": sources, "training_label_counts": counts,
        "held_out": {"mnli_dev_matched_rows": len(dev), "accuracy": log[-1].get("dev_accuracy") if log else None},
        "log": log,
    }
    if args.init:
        manifest["training"]["init"] = {"file": os.path.abspath(args.init), "sha256": sha256(args.init)}
    if args.extra:
        manifest["extra_data"] = extra_sources
    if replay is not None:
        manifest["training"]["replay_rows"] = len(train) - len(extra_rows)
    with open(os.path.join(args.out, "judge-manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    print(json.dumps({"weights": wpath, "sha256": manifest["sha256"], "dev_accuracy": manifest["held_out"]["accuracy"]}))


def load_trained(model, path):
    """Copies the LoRA matrices and the head of a judge.safetensors written by this script."""
    saved = load_file(path)
    want = model.trained()
    if set(saved) != set(want):
        raise SystemExit(f"{path}: tensor names differ from this script's")
    with torch.no_grad():
        for i, m in enumerate(model.layers):
            for name in LINEARS:
                lin = getattr(m, name)
                for part in ("lora_a", "lora_b"):
                    t = saved[f"layer.{i}.{name}.{part}"]
                    assert t.shape == getattr(lin, part).shape, (name, part, t.shape)
                    getattr(lin, part).copy_(t.float())
        assert saved["head.weight"].shape == model.head.weight.shape
        model.head.weight.copy_(saved["head.weight"].float())
        model.head.bias.copy_(saved["head.bias"].float())


def batches(train, lengths, size, rng):
    """One epoch: shuffled, cut into windows of 50 batches, sorted by length inside each
    window, cut into batches, and the batches shuffled."""
    idx = list(range(len(train)))
    rng.shuffle(idx)
    out = []
    for w in range(0, len(idx), size * 50):
        window = sorted(idx[w:w + size * 50], key=lambda i: lengths[i])
        out += [window[i:i + size] for i in range(0, len(window), size)]
    rng.shuffle(out)
    return out


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


if __name__ == "__main__":
    sys.exit(main())
