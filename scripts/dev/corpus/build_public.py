#!/usr/bin/env python3
"""Rebuild core/tests/data/corpus/public.tsv from fetched copies of SNLI 1.0 and PAWS-Wiki.

Python 3.11, standard library only. Nothing is downloaded: pass the paths of files
you have already fetched (see core/tests/data/corpus/SOURCES.md for the repositories
and commits they came from).

    python3 scripts/dev/corpus/build_public.py \
        --snli-dev  PATH/generative-nli/data/snli/dev.jsonl \
        --paws      PATH/simmat/data/final/dev.tsv PATH/simmat/data/final/test.tsv \
        --out       core/tests/data/corpus/public.tsv

Optional: --snli-raw PATH/snli_1.0_dev.jsonl (a copy of the official SNLI dev file, whole
or any stretches of its lines) makes the script check that every raw gold-labelled pair
occurs in the processed file, consecutive raw lines on consecutive processed rows, and
print the official pairID of the sampled rows that the raw copy covers. --snli-dev also
accepts the official snli_1.0_dev.jsonl itself (it keeps the gold-labelled pairs), which
gives the same output.

The output has the header  label<TAB>source<TAB>id<TAB>a<TAB>b  and is sorted by
source, then label, then id, so that a rebuild gives a byte-identical file.
"""

import argparse
import json
import random
import sys

SEED = 20260301

SNLI_PER_LABEL = 1500
SNLI_LABELS = ("entailment", "neutral", "contradiction")
SNLI_SOURCE = "snli-1.0-dev"

PAWS_POSITIVES = 1000
PAWS_NEGATIVES = 500
PAWS_MAX_TOKENS = 25  # both sentences at most this many whitespace tokens
PAWS_SOURCE = "paws-wiki-final"
# PAWS label 0 ("not a paraphrase"). We write them as `neutral`, but by eye most are
# incompatible (swapped roles: contradiction-like), some compatible, a few garbled; the
# separate source name lets an evaluation score them as "anything but paraphrase".
PAWS_NEG_SOURCE = "paws-wiki-final-neg"


def clean(text):
    """The only normalisation: tabs, carriage returns and newlines inside a sentence become spaces."""
    return text.replace("\t", " ").replace("\r", " ").replace("\n", " ")


def read_snli_processed(path):
    """(premise, hypothesis, label) rows; index = position among the gold-labelled dev pairs.
    Reads the processed copy (premise/hypothesis/label) or the official jsonl."""
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            obj = json.loads(line)
            if "sentence1" in obj:  # the official snli_1.0_dev.jsonl: keep the gold-labelled pairs
                if obj["gold_label"] in SNLI_LABELS:
                    rows.append((obj["sentence1"], obj["sentence2"], obj["gold_label"]))
            else:  # the processed copy: premise / hypothesis / label
                rows.append((obj["premise"], obj["hypothesis"], obj["label"]))
    return rows


def check_against_raw(rows, raw_path):
    """Check rows against a copy of the official jsonl: the whole file, or any set of its lines
    (some public copies hold a few cut-out stretches of it). Every gold-labelled raw pair must
    occur in the processed file, and raw lines that follow each other must land on processed
    rows that follow each other, apart from the jumps between stretches. Returns
    {gold_index: pairID} for the raw pairs found."""
    where = {}
    for i, r in enumerate(rows):
        where.setdefault(r, []).append(i)
    pair_ids = {}
    prev = None
    stretches = []
    with open(raw_path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError:
                print(f"snli-raw: line {n} is not whole JSON; stopping the check there", file=sys.stderr)
                break
            if obj["gold_label"] not in SNLI_LABELS:
                continue
            hits = where.get((obj["sentence1"], obj["sentence2"], obj["gold_label"]))
            if not hits:
                sys.exit(f"snli-raw: raw line {n} ({obj['pairID']}) is not in the processed file")
            i = prev + 1 if prev is not None and prev + 1 in hits else hits[0]
            if prev is None or i != prev + 1:
                stretches.append([n, i, 0])
            stretches[-1][2] += 1
            pair_ids[i] = obj["pairID"]
            prev = i
    covered = sum(s[2] for s in stretches)
    print(f"snli-raw: {covered} gold raw pairs found, in {len(stretches)} stretch(es) of consecutive rows"
          f" (raw line, processed index, length): {stretches}", file=sys.stderr)
    if covered == len(rows) and len(stretches) == 1:
        print("snli-raw: the raw copy is the whole dev file; every id maps to its pairID", file=sys.stderr)
    return pair_ids


def sample_snli(rows, rng):
    out = []
    for label in SNLI_LABELS:
        # SNLI dev holds a few exact duplicate pairs and pairs whose two sentences are
        # identical; keep the first of each duplicate and drop the identical ones.
        seen = set()
        pool = []
        for i, r in enumerate(rows):
            if r[2] != label or r[0].strip() == r[1].strip() or r in seen:
                continue
            seen.add(r)
            pool.append(i)
        chosen = rng.sample(pool, SNLI_PER_LABEL)  # random order
        half = len(chosen) // 2
        for k, i in enumerate(chosen):
            premise, hypothesis, _ = rows[i]
            if k < half:
                # hp: the hypothesis is the new candidate (a), the premise the existing memory (b)
                a, b, direction = hypothesis, premise, "hp"
            else:
                # ph: the premise is the new candidate (a), the hypothesis the existing memory (b)
                a, b, direction = premise, hypothesis, "ph"
            out.append((label, SNLI_SOURCE, f"dev-gold-{i:04d}:{direction}", clean(a), clean(b)))
    return out


def read_paws(paths):
    rows = []
    for path in paths:
        split = "test" if "test" in path.rsplit("/", 1)[-1] else "dev"
        with open(path, encoding="utf-8", newline="") as f:
            for line in f:
                line = line.rstrip("\r\n")
                if not line:
                    continue
                parts = line.split("\t")
                if len(parts) != 4:
                    sys.exit(f"{path}: expected 4 columns, got {len(parts)}: {line[:80]!r}")
                pid, s1, s2, label = parts
                if pid == "id":  # the official files have a header; some copies do not
                    continue
                rows.append((split, int(pid), s1, s2, label))
    return rows


def sample_paws(rows, rng):
    def short(s):
        return len(s.split()) <= PAWS_MAX_TOKENS

    eligible = []
    seen = set()
    for r in rows:  # PAWS dev and test share some sentence pairs: keep the first of each
        if short(r[2]) and short(r[3]) and r[2].strip() != r[3].strip() and (r[2], r[3]) not in seen:
            seen.add((r[2], r[3]))
            eligible.append(r)
    pos = [r for r in eligible if r[4] == "1"]
    neg = [r for r in eligible if r[4] == "0"]
    print(f"paws: {len(rows)} rows, {len(eligible)} eligible, {len(pos)} positive, {len(neg)} negative",
          file=sys.stderr)
    out = []
    for r in rng.sample(pos, PAWS_POSITIVES):
        out.append(("paraphrase", PAWS_SOURCE, f"{r[0]}-{r[1]}", clean(r[2]), clean(r[3])))
    for r in rng.sample(neg, PAWS_NEGATIVES):
        out.append(("neutral", PAWS_NEG_SOURCE, f"{r[0]}-{r[1]}", clean(r[2]), clean(r[3])))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--snli-dev", required=True,
                    help="SNLI 1.0 dev jsonl: the processed copy (premise/hypothesis/label) or the official file")
    ap.add_argument("--snli-raw", help="official snli_1.0_dev.jsonl or a prefix of it, for the order check")
    ap.add_argument("--paws", nargs="+", required=True, help="PAWS-Wiki Labeled (Final) dev.tsv and/or test.tsv")
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=SEED)
    args = ap.parse_args()

    snli_rows = read_snli_processed(args.snli_dev)
    pair_ids = check_against_raw(snli_rows, args.snli_raw) if args.snli_raw else {}

    rng = random.Random(args.seed)
    snli = sample_snli(snli_rows, rng)
    rng = random.Random(args.seed + 1)
    paws = sample_paws(read_paws(args.paws), rng)

    if pair_ids:
        known = [(r[2], pair_ids[int(r[2][9:13])]) for r in snli if int(r[2][9:13]) in pair_ids]
        print(f"snli-raw: {len(known)} sampled rows have a known official pairID, e.g. {known[:3]}",
              file=sys.stderr)

    rows = sorted(snli + paws, key=lambda r: (r[1], r[0], r[2]))
    ids = [(r[1], r[2]) for r in rows]
    if len(set(ids)) != len(ids):
        sys.exit("duplicate ids")
    with open(args.out, "w", encoding="utf-8", newline="\n") as f:
        f.write("label\tsource\tid\ta\tb\n")
        for r in rows:
            f.write("\t".join(r) + "\n")
    counts = {}
    for r in rows:
        counts[(r[1], r[0])] = counts.get((r[1], r[0]), 0) + 1
    for k in sorted(counts):
        print(f"{k[0]}\t{k[1]}\t{counts[k]}", file=sys.stderr)


if __name__ == "__main__":
    main()
