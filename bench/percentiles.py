#!/usr/bin/env python3
"""Reads a pgbench run (summary.txt and per-transaction logs tx.*) and prints one TSV row:
size, op, clients, tps, p50/p95/p99 latency in ms, transactions, errors."""
import glob
import re
import sys

size, op, clients, logdir = sys.argv[1:5]
lat = []
for f in glob.glob(f"{logdir}/tx*"):
    for line in open(f):
        parts = line.split()
        if len(parts) >= 3 and parts[2].isdigit():
            lat.append(int(parts[2]) / 1000.0)
summary = open(f"{logdir}/summary.txt").read()
m = re.search(r"tps = ([0-9.]+) \(without initial connection time\)", summary)
tps = float(m.group(1)) if m else 0.0
errors = 0
m = re.search(r"number of failed transactions: (\d+)", summary)
if m:
    errors = int(m.group(1))
if "aborted" in summary or "error" in summary.lower():
    errors = max(errors, 1)
lat.sort()
# a promote or pipeline transaction that found no pool row would be a no-op: count it as an error
if op in ("promote", "pipeline") and "processed: " in summary:
    m = re.search(r"number of transactions actually processed: (\d+)/(\d+)", summary)
    if m and m.group(1) != m.group(2):
        errors = max(errors, 1)


def pct(p):
    return lat[min(len(lat) - 1, int(p * len(lat)))] if lat else float("nan")


print(f"{size}\t{op}\t{clients}\t{tps:.1f}\t{pct(0.50):.3f}\t{pct(0.95):.3f}\t{pct(0.99):.3f}\t{len(lat)}\t{errors}")
