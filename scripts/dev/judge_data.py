#!/usr/bin/env python3
"""Builds the judge's training and held-out data: normalises the raw NLI and paraphrase files
under DATA_DIR/raw/ into TSVs that scripts/dev/train_judge.py reads.

    python3 scripts/dev/judge_data.py DATA_DIR

Input:  DATA_DIR/raw/... (extracted from public repositories at pinned commits; the commands
        are in scripts/dev/judge_data.md)
Output: DATA_DIR/*.tsv  with header  premise<TAB>hypothesis<TAB>label<TAB>split
        DATA_DIR/build_stats.json (row and label counts, composition, checks, SHA-256 of each)

Checks: every gold label is the annotators' majority where annotator labels are given; no
MNLI train pair is an MNLI dev pair; no SNLI train pair is an SNLI dev or test pair.
Only the Python standard library is used.
"""
import collections
import csv
import gzip
import hashlib
import json
import lzma
import os
import re
import sys

if len(sys.argv) != 2:
    sys.exit("usage: judge_data.py DATA_DIR")
ROOT = os.path.abspath(sys.argv[1])
RAW = os.path.join(ROOT, "raw")
NLI_LABELS = {"entailment", "neutral", "contradiction"}
PAWS_LABELS = {"0": "not_paraphrase", "1": "paraphrase"}
WS = re.compile(r"[\t\r\n\v\f\u2028\u2029\x85]+")

csv.field_size_limit(sys.maxsize)
stats = {}


def clean(s):
    """Replace tabs/newlines inside text with a space, strip the ends."""
    return WS.sub(" ", s or "").strip()


def key(p, h):
    """Tokenisation- and case-insensitive key, used only for dedup/leak checks."""
    return re.sub(r"[^a-z0-9]", "", p.lower()) + "|" + re.sub(r"[^a-z0-9]", "", h.lower())


def read_jsonl(path):
    op = lzma.open if path.endswith(".xz") else gzip.open if path.endswith(".gz") else open
    with op(path, "rt", encoding="utf-8") as f:
        return [json.loads(l) for l in f if l.strip()]


def read_json_xz(path):
    with lzma.open(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def read_tsv(path, fieldnames=None):
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f, fieldnames=fieldnames, delimiter="\t", quoting=csv.QUOTE_NONE))


def majority_ok(rec):
    """For records with >1 annotator label, gold must be the >=3-vote majority."""
    al = rec.get("annotator_labels") or []
    if len(al) <= 1:
        return True
    lab, n = collections.Counter(al).most_common(1)[0]
    return (lab if n >= 3 else "-") == rec["gold_label"]


def write(name, rows, split, valid_labels, extra=None):
    out = os.path.join(ROOT, name)
    n_drop = 0
    kept = []
    for p, h, lab in rows:
        p, h, lab = clean(p), clean(h), clean(lab)
        if lab not in valid_labels or not p or not h:
            n_drop += 1
            continue
        kept.append((p, h, lab))
    with open(out, "w", encoding="utf-8", newline="") as f:
        f.write("premise\thypothesis\tlabel\tsplit\n")
        for p, h, lab in kept:
            f.write(f"{p}\t{h}\t{lab}\t{split}\n")
    sha = hashlib.sha256(open(out, "rb").read()).hexdigest()
    st = {
        "rows": len(kept),
        "dropped_invalid_label_or_empty": n_drop,
        "label_counts": dict(sorted(collections.Counter(l for _, _, l in kept).items())),
        "sha256": sha,
        "bytes": os.path.getsize(out),
    }
    if extra:
        st.update(extra)
    stats[name] = st
    print(name, json.dumps(st))
    return kept


def nli_rows(recs):
    return [(r["sentence1"], r["sentence2"], r["gold_label"]) for r in recs]


# ---------------------------------------------------------------- MNLI dev
dm = read_jsonl(os.path.join(RAW, "hypenymy/mnli_dev_matched.jsonl.xz"))
dmm = read_jsonl(os.path.join(RAW, "hypenymy/mnli_dev_mismatched.jsonl.xz"))
assert all(majority_ok(r) for r in dm + dmm), "MNLI dev: gold_label != annotator majority"
mnli_dev_m = write("mnli_dev_matched.tsv", nli_rows(dm), "dev_matched", NLI_LABELS,
                   {"source_rows": len(dm), "gold_equals_annotator_majority": True})
mnli_dev_mm = write("mnli_dev_mismatched.tsv", nli_rows(dmm), "dev_mismatched", NLI_LABELS,
                    {"source_rows": len(dmm), "gold_equals_annotator_majority": True})
mnli_dev_keys = {key(p, h) for p, h, _ in mnli_dev_m + mnli_dev_mm}

# ---------------------------------------------------------------- MNLI train (union of samples)
srcA = read_jsonl(os.path.join(RAW, "hypenymy/mnli_train_10000_split.jsonl.xz"))   # original jsonl
srcB = read_json_xz(os.path.join(RAW, "hypenymy/mnli_train_10k_split.json.xz"))     # s1/s2/gold
srcC = read_tsv(os.path.join(RAW, "hw2/mnli_train.tsv"))                            # PTB-tokenised
seen = {}
parts = collections.OrderedDict()
conflicts = 0
for name, rows in [
    ("hypenymy:mnli_train_10000_split.jsonl.xz", nli_rows(srcA)),
    ("hypenymy:mnli_train_10k_split.json.xz", [(r["sentence1"], r["sentence2"], r["gold_label"]) for r in srcB]),
    ("HW2-NLP:mnli_train.tsv (PTB-tokenised)", [(r["sentence1"], r["sentence2"], r["label"]) for r in srcC]),
]:
    added = []
    this_src = {}
    for p, h, lab in rows:
        k = key(p, h)
        assert k not in mnli_dev_keys, "MNLI train row found in dev"
        if k in seen:  # already taken from an earlier source: same example, skip
            if lab not in seen[k]:
                conflicts += 1
            continue
        # duplicates *within* one source are kept (MNLI itself has a few
        # identical pairs with different pairIDs and labels)
        this_src.setdefault(k, set()).add(lab)
        added.append((p, h, lab))
    seen.update(this_src)
    parts[name] = {"input_rows": len(rows), "rows_added_after_dedup": len(added)}
    parts[name]["_rows"] = added
assert conflicts == 0, f"{conflicts} label conflicts between MNLI train sources"
all_rows = [r for v in parts.values() for r in v.pop("_rows")]
start = 1
for v in parts.values():
    v["output_data_lines"] = f"{start}-{start + v['rows_added_after_dedup'] - 1} (1-based, header excluded)"
    start += v["rows_added_after_dedup"]
write("mnli_train.tsv", all_rows, "train", NLI_LABELS,
      {"composition_in_file_order": parts, "label_conflicts_between_sources": conflicts,
       "overlap_with_dev": 0})

# ---------------------------------------------------------------- SNLI
sdev = read_jsonl(os.path.join(RAW, "inferbeddings/snli_1.0_dev.jsonl.gz"))
stest = read_jsonl(os.path.join(RAW, "inferbeddings/snli_1.0_test.jsonl.gz"))
sfrac = read_jsonl(os.path.join(RAW, "inferbeddings/snli_1.0_train_0.01.jsonl.gz"))
stiny = read_jsonl(os.path.join(RAW, "inferbeddings/1024.jsonl.gz"))
assert all(majority_ok(r) for r in sdev + stest + sfrac + stiny)
snli_dev = write("snli_dev.tsv", nli_rows(sdev), "dev", NLI_LABELS, {"source_rows": len(sdev)})
snli_test = write("snli_test.tsv", nli_rows(stest), "test", NLI_LABELS, {"source_rows": len(stest)})
evalkeys = {key(p, h) for p, h, _ in snli_dev + snli_test}
seen_ids = set()
train = []
comp = collections.OrderedDict()
for name, recs in [("inferbeddings:snli_1.0_train_0.01.jsonl.gz", sfrac),
                   ("inferbeddings:tiny/1024.jsonl.gz", stiny)]:
    n = 0
    for r in recs:
        if r["pairID"] in seen_ids:
            continue
        seen_ids.add(r["pairID"])
        assert key(r["sentence1"], r["sentence2"]) not in evalkeys, "SNLI train row in dev/test"
        train.append((r["sentence1"], r["sentence2"], r["gold_label"]))
        n += 1
    comp[name] = {"input_rows": len(recs), "rows_added_after_pairID_dedup": n}
write("snli_train.tsv", train, "train", NLI_LABELS, {"composition_in_file_order": comp, "overlap_with_dev_test": 0})

# ---------------------------------------------------------------- PAWS-Wiki labeled final (dev/test)
cols = ["id", "sentence1", "sentence2", "label"]
for split in ["dev", "test"]:
    recs = read_tsv(os.path.join(RAW, f"simmat/{split}.tsv"), fieldnames=cols)
    if recs and recs[0]["id"] == "id":  # tolerate a header line
        recs = recs[1:]
    ids = [int(r["id"]) for r in recs]
    assert ids == list(range(1, len(ids) + 1)), "PAWS ids not 1..N"
    write(f"paws_{split}.tsv",
          [(r["sentence1"], r["sentence2"], PAWS_LABELS.get(r["label"], "?")) for r in recs],
          split, set(PAWS_LABELS.values()), {"source_rows": len(recs)})

# ---------------------------------------------------------------- Breaking NLI (optional, test-only)
import io
import zipfile
with zipfile.ZipFile(os.path.join(RAW, "breaking_nli/breaking_nli_dataset.zip")) as z:
    bn = [json.loads(l) for l in io.TextIOWrapper(z.open("data/dataset.jsonl"), encoding="utf-8") if l.strip()]
bn_bad = 0
for r in bn:  # 3 annotators: gold must be the >=2-vote majority
    lab, n = collections.Counter(r["annotator_labels"]).most_common(1)[0]
    bn_bad += (lab if n >= 2 else "-") != r["gold_label"]
assert bn_bad == 0
write("breaking_nli_test.tsv", nli_rows(bn), "test", NLI_LABELS,
      {"source_rows": len(bn), "gold_equals_annotator_majority": True})

with open(os.path.join(ROOT, "build_stats.json"), "w") as f:
    json.dump(stats, f, indent=2)
