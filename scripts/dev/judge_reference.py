#!/usr/bin/env python3
"""Writes core/tests/data/judge_reference.json: for a fixed list of pairs, in both directions,
the token ids and types the judge reads and its float32 logits and probabilities, computed in
PyTorch by the module scripts/dev/train_judge.py trains (no autocast, one thread).

core/tests/judge.rs checks the Rust forward pass against this file: the same ids and types, and
probabilities within 1e-4.

    python scripts/dev/judge_reference.py --base MODEL_DIR --judge core/data/judge.safetensors \
        [--out core/tests/data/judge_reference.json]
"""

import argparse
import hashlib
import json
import os
import sys

import torch
from safetensors.torch import load_file
from tokenizers import BertWordPieceTokenizer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train_judge as tj  # noqa: E402

LONG = ("The quarterly review covered the refund backlog, the migration of the billing service to the new "
        "cluster, the on-call rotation for the holiday period, the hiring plan for the support team, the "
        "renewal of the office lease in Lisbon and the audit of every vendor contract signed since March, "
        "and it ended with a list of open questions for the board about pricing in the second half.")
PAIRS = tj.REFERENCE_PAIRS + [
    ("The customer asked for a refund on 3 March.", LONG + " " + LONG),  # the longer side is cut
    (LONG, LONG.replace("Lisbon", "Porto")),  # both longer than half
    ("", "The shop opens at nine."),  # an empty side
    ("Ünïcödé café, naïve résumé!", "The CAFÉ is closed [SEP] today."),  # accents, a special token in text
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True)
    ap.add_argument("--judge", required=True)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "../../core/tests/data/judge_reference.json"))
    args = ap.parse_args()
    torch.set_num_threads(1)
    model = tj.Judge(load_file(os.path.join(args.base, "model.safetensors")))
    trained = load_file(args.judge)
    for i, m in enumerate(model.layers):
        for name in tj.LINEARS:
            lin = getattr(m, name)
            lin.lora_a.data.copy_(trained[f"layer.{i}.{name}.lora_a"])
            lin.lora_b.data.copy_(trained[f"layer.{i}.{name}.lora_b"])
    model.head.weight.data.copy_(trained["head.weight"])
    model.head.bias.data.copy_(trained["head.bias"])
    model.eval()
    tok = BertWordPieceTokenizer(os.path.join(args.base, "vocab.txt"), lowercase=True)
    tok.enable_truncation(tj.MAX_LEN, strategy="longest_first")
    out = []
    with torch.no_grad():
        for a, b in PAIRS:
            for x, y in ((a, b), (b, a)):
                e = tok.encode(x, y)
                logits = model(torch.tensor([e.ids]), torch.tensor([e.type_ids]), torch.ones(1, len(e.ids), dtype=torch.long))[0]
                out.append({"a": x, "b": y, "ids": e.ids, "type_ids": e.type_ids, "logits": logits.tolist(),
                            "probabilities": logits.softmax(-1).tolist()})
    with open(args.judge, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump({"judge_sha256": digest, "labels": tj.LABELS, "torch": torch.__version__, "pairs": out}, f, indent=1,
                  ensure_ascii=False)
        f.write("\n")
    print(f"wrote {len(out)} pairs to {args.out}")


if __name__ == "__main__":
    sys.exit(main())
