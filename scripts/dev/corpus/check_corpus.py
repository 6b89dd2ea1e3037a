#!/usr/bin/env python3
"""Check the evaluation TSVs in core/tests/data/corpus/ and print counts per source and label.

Python 3.11, standard library only.

    python3 scripts/dev/corpus/check_corpus.py core/tests/data/corpus/public.tsv \
        core/tests/data/corpus/memory.tsv --min-per-label memory.tsv=110

Checks: the header is exactly  label<TAB>source<TAB>id<TAB>a<TAB>b; every row has five
non-empty fields; the label is one of paraphrase, entailment, neutral, contradiction;
(source, id) is unique; no pair occurs twice; a and b differ; and, with --min-per-label
FILE=N, that FILE has at least N rows of each of the four labels. Exits 1 on any problem.
"""

import argparse
import collections
import os
import sys

HEADER = ["label", "source", "id", "a", "b"]
LABELS = ("paraphrase", "entailment", "neutral", "contradiction")


def check(path, min_per_label):
    problems = []
    counts = collections.Counter()
    keys = set()
    pairs = set()
    with open(path, encoding="utf-8", newline="") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    else:
        problems.append("file does not end with a newline")
    if not lines or lines[0].split("\t") != HEADER:
        problems.append(f"header is not {'<TAB>'.join(HEADER)}")
    for n, line in enumerate(lines[1:], 2):
        if "\r" in line:
            problems.append(f"line {n}: carriage return")
        cols = line.split("\t")
        if len(cols) != 5:
            problems.append(f"line {n}: {len(cols)} fields")
            continue
        label, source, pid, a, b = cols
        if not all(c.strip() for c in cols):
            problems.append(f"line {n}: empty field")
        if label not in LABELS:
            problems.append(f"line {n}: label {label!r}")
        if (source, pid) in keys:
            problems.append(f"line {n}: duplicate id {source} {pid}")
        keys.add((source, pid))
        if (a, b) in pairs:
            problems.append(f"line {n}: duplicate pair")
        pairs.add((a, b))
        if a == b:
            problems.append(f"line {n}: a and b are identical")
        counts[(source, label)] += 1
    name = os.path.basename(path)
    print(f"{path}: {len(lines) - 1} rows, {os.path.getsize(path)} bytes")
    for (source, label), c in sorted(counts.items()):
        print(f"  {source}\t{label}\t{c}")
    if name in min_per_label:
        per_label = collections.Counter()
        for (_, label), c in counts.items():
            per_label[label] += c
        for label in LABELS:
            if per_label[label] < min_per_label[name]:
                problems.append(f"{label}: {per_label[label]} rows, want at least {min_per_label[name]}")
    for p in problems[:50]:
        print(f"  PROBLEM {p}")
    return not problems


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+")
    ap.add_argument("--min-per-label", action="append", default=[], metavar="FILE=N",
                    help="require at least N rows of every label in the file with this base name")
    args = ap.parse_args()
    mins = {}
    for spec in args.min_per_label:
        name, _, n = spec.partition("=")
        mins[name] = int(n)
    ok = all([check(p, mins) for p in args.files])
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
