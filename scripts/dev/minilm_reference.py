#!/usr/bin/env python3
"""Writes core/tests/data/minilm_reference.json: the reference embeddings and token ids of
all-MiniLM-L6-v2 for a fixed list of texts, computed with sentence-transformers on CPU.

The Rust implementation in core/src/minilm is tested against this file (core/tests/minilm.rs):
its token ids must be equal and its vectors must have a cosine >= 0.9999 with these.

Run once, by hand, in a Python environment with sentence-transformers installed, with the
model directory unpacked locally (no network is used):

    HF_HUB_OFFLINE=1 python scripts/dev/minilm_reference.py MODEL_DIR [OUT_JSON]

MODEL_DIR is the sentence-transformers directory of all-MiniLM-L6-v2 (modules.json,
config.json, model.safetensors, vocab.txt, tokenizer.json, 1_Pooling/, ...).
"""

import json
import os
import platform
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

MODEL = "sentence-transformers/all-MiniLM-L6-v2"
MAX_LENGTH = 256

LONG_PARAGRAPH = (
    "The quarterly review covered the refund backlog, the migration of the billing service "
    "to the new cluster, and the on-call rotation for the holiday period. Customers in the "
    "EU region reported intermittent 502 errors between 09:10 and 09:45 CET; the root cause "
    "was a misconfigured load balancer health check, fixed in release 4.12.3. "
)

SENTENCES = [
    # Short facts of the agent-memory domain.
    "Customer cust_7714's refund of $1,250.00 was approved on 2026-03-01.",
    "The customer did not approve the refund.",
    "The refund was NOT approved; it was rejected on 2026-03-02.",
    "User prefers dark mode and weekly email summaries.",
    "Alice's manager is Bob; Bob reports to the CFO.",
    "The API rate limit is 1000 requests per minute, not 100.",
    "Never store the customer's password in plain text.",
    "The deployment to production is scheduled for Friday at 17:00 UTC.",
    "Order #A-99812 shipped: 3 items, total €249.99 (VAT 19%).",
    "refund",
    "a",
    # Accents, scripts, case.
    "We met at the café in Zürich — a naïve plan, but it worked.",
    "Ångström, Æsir, Øresund, Straße, façade, jalapeño, São Paulo, Kraków.",
    "e\u0301cole and école are the same word after normalisation.",
    "ThIs Is MiXeD CaSe TeXt WiTh ACRONYMS like NASA and iPhone.",
    "ΟΔΥΣΣΕΥΣ and Σίσυφος went to Αθήνα.",
    "İstanbul and ıstanbul, DİYARBAKIR.",
    "Привет, мир! Ёлка и йогурт.",
    "مرحبا بالعالم — שלום עולם",
    "नमस्ते दुनिया",
    # CJK: ideographs are split one by one; kana and hangul are not.
    "東京の天気は晴れです。",
    "我喜欢在北京喝咖啡。",
    "서울에서 회의가 있습니다.",
    "CJK edges: \U00020000 \U0002B820 \U0002B920 \U0002CEAF \uF900 \u3400 \U0002F800 x\u4E00y",
    "ＡＢＣ\u3000ｆｕｌｌｗｉｄｔｈ\u3000１２３",
    # Emoji and symbols.
    "Great job 🎉🚀 — the launch went well 👍🏽",
    "Emoji only: 😀😃😄🥰🫠 👨‍👩‍👧",
    "∑ x² ≤ ∞, √2 ≈ 1.414, α+β=γ, ½ ¼ ™ ©",
    # Punctuation and digits.
    "!!!???...;;;:::---((()))[[[]]]{{{}}}<<<>>>@@@###$$$%%%^^^&&&***",
    "e.g., i.e., U.S.A., Ph.D., a/b/c, foo_bar-baz, x+y=z, 3.14159, 1e-9",
    "hello,world.how;are:you?fine!“quoted” ‘single’ «guillemets» ¿qué? ¡sí!",
    "Don't won't can't shouldn't — isn't it?",
    "0123456789 9876543210 3.1415926535 2,718,281 +1 (555) 010-9999",
    "Contact ops@example.com or visit https://example.com/path?q=1&r=2#frag",
    'fn main() { println!("hello"); } // SELECT * FROM t WHERE id = 42;',
    # Special tokens written in the text are matched literally (case-sensitive).
    "Ignore [SEP] and [CLS] tokens; also [MASK], [UNK], [PAD] and [sep] [CLS[SEP]].",
    # Empty, whitespace, control characters.
    "",
    "   \t\n  \u00a0\u3000 ",
    "tab\there\x00null\x07bell\x1b[0mansi\u200bzero\u200dwidth\ufeffbom\ufffdrepl\r\nend\x7f",
    "a\u00a0b\u2028c\u2009d\u3000e\u0085f\x0bg\x0ch\x1ci\u00adj\u0600k\U000E0041l\uE000m",
    "New Unicode: \u0890 \U0001FAE0 \U00011F00 \U0001F9CC \u08E2 \U00013430x",
    # Word length limits: 100 characters is split into pieces, 101 is [UNK].
    "exactly " + "b" * 100 + " and " + "c" * 101 + " then " + "pneumonoultramicroscopicsilicovolcanoconiosis" * 3,
    "The token " + "x" * 150 + " is far too long, " + "é" * 101 + " too.",
    # Longer than 256 word pieces: truncated.
    LONG_PARAGRAPH * 6,
    "漢字" * 200,
    "word " * 253 + "pneumonoultramicroscopicsilicovolcanoconiosis end",
]


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    model_dir = sys.argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
        here, "..", "..", "core", "tests", "data", "minilm_reference.json"
    )

    import numpy
    import sentence_transformers
    import tokenizers
    import torch
    import transformers
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(1)
    model = SentenceTransformer(model_dir, device="cpu")
    assert model.max_seq_length == MAX_LENGTH, model.max_seq_length
    tokenizer = model.tokenizer

    records = []
    for text in SENTENCES:
        ids = tokenizer(text, truncation=True, max_length=MAX_LENGTH)["input_ids"]
        # The ids sentence-transformers itself feeds the model are the same.
        preprocess = getattr(model, "preprocess", None) or model.tokenize
        features = preprocess([text])
        assert features["input_ids"][0].tolist() == ids, text
        vector = model.encode([text], batch_size=1, convert_to_numpy=True)[0]
        norm = float(numpy.linalg.norm(vector))
        assert abs(norm - 1.0) < 1e-5, (text, norm)
        records.append(
            {
                "text": text,
                "ids": ids,
                "vector": [float(f"{float(v):.7g}") for v in vector],
            }
        )

    doc = {
        "model": MODEL,
        "max_length": MAX_LENGTH,
        "library_versions": {
            "python": platform.python_version(),
            "sentence_transformers": sentence_transformers.__version__,
            "transformers": transformers.__version__,
            "tokenizers": tokenizers.__version__,
            "torch": torch.__version__,
            "numpy": numpy.__version__,
        },
        "sentences": records,
    }
    # One sentence per line keeps the file reviewable in a diff.
    with open(out, "w", encoding="utf-8") as f:
        f.write("{\n")
        for key in ("model", "max_length", "library_versions"):
            f.write(f"  {json.dumps(key)}: {json.dumps(doc[key], ensure_ascii=False)},\n")
        f.write('  "sentences": [\n')
        for i, r in enumerate(records):
            sep = "," if i + 1 < len(records) else ""
            f.write(f"    {json.dumps(r, ensure_ascii=False)}{sep}\n")
        f.write("  ]\n}\n")
    print(f"wrote {len(records)} sentences to {out}")


if __name__ == "__main__":
    main()
