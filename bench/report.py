#!/usr/bin/env python3
"""Writes BENCHMARKS.md (and bench/latency.png) from a bench/run.sh results directory."""
import csv
import datetime
import os
import platform
import subprocess
import sys
from collections import defaultdict

out = sys.argv[1]
smoke = "--smoke" in sys.argv
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
rows = list(csv.DictReader(open(f"{out}/results.tsv"), delimiter="\t"))
r = {(x["size"], x["op"], x["clients"]): x for x in rows}
sizes = sorted({int(x["size"]) for x in rows})
clients = sorted({int(x["clients"]) for x in rows})
ops = ["capture_vec", "plain_insert", "capture_text", "review", "review_judged", "exact_scan", "promote", "pipeline", "app_side",
       "recall_noquery", "recall_vec", "recall_text"]
label = {"capture_vec": "capture (client vector)", "plain_insert": "baseline: plain INSERT of the row",
         "capture_text": "capture (built-in embedder)", "review": "review (a near-duplicate: the rules decide)",
         "review_judged": "review (one neighbour the learned judge reads)", "exact_scan": "baseline: exact scoped scan",
         "promote": "promote", "pipeline": "capture → review → promote", "app_side": "baseline: same pipeline from a client, one statement per step",
         "recall_noquery": "recall, no query", "recall_vec": "recall, query vector", "recall_text": "recall, query text"}
recall8 = {}
if os.path.exists(f"{out}/recall_at_8.tsv"):
    for line in open(f"{out}/recall_at_8.tsv"):
        size, v = line.rstrip("\n").split("\t")
        recall8[size] = v
recall1 = {}
if os.path.exists(f"{out}/recall_at_1.tsv"):
    for line in open(f"{out}/recall_at_1.tsv"):
        size, d, i = line.rstrip("\n").split("\t")
        recall1[size] = (d, i)
dataset = {}
if os.path.exists(f"{out}/dataset.tsv"):
    for line in open(f"{out}/dataset.tsv"):
        f = line.strip().split("|")
        dataset[f[0]] = f[1:]


def cell(size, op, c, key):
    x = r.get((str(size), op, str(c)))
    return x[key] if x else ""


def fnum(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


lines = []
lines.append("# Benchmarks\n")
cpu = subprocess.run(["sh", "-c", "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"], capture_output=True, text=True).stdout.strip()
mem = subprocess.run(["sh", "-c", "free -g | awk '/Mem:/{print $2}'"], capture_output=True, text=True).stdout.strip()
pgv = subprocess.run(["/usr/lib/postgresql/15/bin/postgres", "--version"], capture_output=True, text=True).stdout.strip()
lines.append(f"Machine: {os.cpu_count()} cores ({cpu}), {mem} GiB, {platform.system()} {platform.release()}; {pgv}, pgvector 0.8.0.  ")
lines.append(f"Run: {datetime.datetime.utcnow().strftime('%Y-%m-%d %H:%M UTC')}, results in `{os.path.relpath(out, root)}`.  ")
lines.append("Command: `bash bench/run.sh` (see its header for options). Every measured operation calls the public functions "
             "as an ordinary role (`bench_agent`, pinned to the probe's tenant) with row-level security on; p50/p95/p99 are "
             "per-transaction latencies from pgbench logs, one statement per transaction.  ")
if os.path.exists(f"{out}/README"):
    lines.append("\n" + open(f"{out}/README").read().strip().replace("\n", "  \n") + "\n")
if os.path.exists(f"{out}/settings.txt"):
    lines.append("Server: " + ", ".join(open(f"{out}/settings.txt").read().split()) + ".  ")
lines.append("The app-side baseline (`bench/app_side.py`, psycopg over TCP loopback) runs the same steps as the extension, "
             "one statement each, on the same tables and indexes.\n")
if dataset:
    lines.append("| memories | promoted rows | tenants | largest tenant | median tenant |\n|---|---|---|---|---|")
    for s in sizes:
        d = dataset.get(str(s))
        if d:
            lines.append(f"| {s:,} | {int(d[0]):,} | {d[1]} | {int(d[2]):,} | {d[3]} |")
    lines.append("")
for c in clients:
    lines.append(f"\n## {c} client{'s' if c > 1 else ''}\n")
    hdr = "| operation | " + " | ".join(f"{s:,}: p50 / p95 / p99 ms, tps" for s in sizes) + " |"
    lines.append(hdr)
    lines.append("|---|" + "---|" * len(sizes))
    for op in ops:
        if not any((str(s), op, str(c)) in r for s in sizes):
            continue
        vals = []
        for s in sizes:
            x = r.get((str(s), op, str(c)))
            vals.append(f"{float(x['p50_ms']):.2f} / {float(x['p95_ms']):.2f} / {float(x['p99_ms']):.2f}, {float(x['tps']):.0f}"
                        + (f" ({x['errors']} errors)" if x and x["errors"] not in ("0", "") else "") if x else "")
        lines.append(f"| {label[op]} | " + " | ".join(vals) + " |")
lines.append("\n## Ratios against the baselines (1 client unless noted)\n")
lines.append("| | " + " | ".join(f"{s:,}" for s in sizes) + " |")
lines.append("|---|" + "---|" * len(sizes))


def ratio(a, b, key, c=1, invert=False):
    out_ = []
    for s in sizes:
        x, y = fnum(cell(s, a, c, key)), fnum(cell(s, b, c, key))
        out_.append(f"{(y / x if invert else x / y):.2f}" if x and y else "")
    return out_


lines.append("| capture throughput / plain INSERT throughput (target ≥ 0.80) | " + " | ".join(ratio("capture_vec", "plain_insert", "tps")) + " |")
lines.append("| review p50 / exact scoped scan p50 | " + " | ".join(ratio("review", "exact_scan", "p50_ms")) + " |")
lines.append("| app-side pipeline p50 / in-database pipeline p50 (target: several times) | " + " | ".join(ratio("pipeline", "app_side", "p50_ms", invert=True)) + " |")
if recall1:
    lines.append("| review recall@1 (default search / HNSW forced, with --hnsw) | " + " | ".join(
        f"{recall1[str(s)][0].split('|')[1] if '|' in recall1.get(str(s), ('',''))[0] else ''} / "
        f"{recall1[str(s)][1].split('|')[1] if '|' in recall1.get(str(s), ('',''))[1] else ''}" for s in sizes) + " |")
if recall8:
    lines.append("| recall@8 of recall() with a query vector against exact scoring (probes) | " + " | ".join(
        f"{recall8[str(s)].split('|')[1]} ({recall8[str(s)].split('|')[0]})" if '|' in recall8.get(str(s), '') else "" for s in sizes) + " |")
if len(sizes) > 1:
    lines.append("\n## How cost grows (p50 at each size / p50 at the smallest, 1 client)\n")
    lines.append("| operation | " + " | ".join(f"{s:,}" for s in sizes[1:]) + " |")
    lines.append("|---|" + "---|" * (len(sizes) - 1))
    for op in ops:
        base = fnum(cell(sizes[0], op, 1, "p50_ms"))
        if base:
            lines.append(f"| {label[op]} | " + " | ".join(
                f"{fnum(cell(s, op, 1, 'p50_ms')) / base:.2f}×" if fnum(cell(s, op, 1, "p50_ms")) else "" for s in sizes[1:]) + " |")
lines.append("\n## SPEC §6 targets at the largest size measured\n")
big = sizes[-1]
checks = [("recall p50 ≤ 1 ms without a query vector", fnum(cell(big, "recall_noquery", 1, "p50_ms")), 1.0),
          ("recall p50 ≤ 3 ms with a query vector", fnum(cell(big, "recall_vec", 1, "p50_ms")), 3.0),
          ("recall p95 ≤ 15 ms with a query vector", fnum(cell(big, "recall_vec", 1, "p95_ms")), 15.0),
          ("review p50 ≤ 3 ms", fnum(cell(big, "review", 1, "p50_ms")), 3.0),
          ("review p50 ≤ 15 ms with one neighbour the learned judge reads (issue 40)", fnum(cell(big, "review_judged", 1, "p50_ms")), 15.0),
          ("promote p50 ≤ 2 ms", fnum(cell(big, "promote", 1, "p50_ms")), 2.0),
          ("promote p95 ≤ 10 ms", fnum(cell(big, "promote", 1, "p95_ms")), 10.0)]
lines.append(f"At {big:,} memories:\n")
for name, v, target in checks:
    lines.append(f"- {name}: {'met' if v is not None and v <= target else 'missed'} ({v:.2f} ms)" if v is not None else f"- {name}: not measured")
cap = ratio("capture_vec", "plain_insert", "tps")[-1]
lines.append(f"- capture throughput ≥ 80 % of a plain INSERT: {'met' if cap and float(cap) >= 0.8 else 'missed'} ({cap})")
if not smoke:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(8, 5))
        for op in ["capture_vec", "plain_insert", "review", "exact_scan", "promote", "pipeline", "app_side", "recall_noquery", "recall_vec", "recall_text"]:
            ys = [fnum(cell(s, op, 1, "p50_ms")) for s in sizes]
            if any(y is not None for y in ys):
                ax.plot(sizes, ys, marker="o", label=label[op])
        ax.set_xscale("log"); ax.set_yscale("log")
        ax.set_xlabel("promoted memories"); ax.set_ylabel("p50 latency, ms (1 client)")
        ax.set_title("memory_fabric latency against size"); ax.grid(True, which="both", alpha=0.3); ax.legend(fontsize=7)
        fig.tight_layout(); fig.savefig(f"{root}/bench/latency.png", dpi=110)
        lines.append("\n![p50 latency against size](bench/latency.png)\n")
    except ImportError:
        lines.append("\n(matplotlib missing: no plot)\n")
text = "\n".join(lines) + "\n"
if smoke:
    print(text)
else:
    open(f"{root}/BENCHMARKS.md", "w").write(text)
    # the run's summary beside it (the per-transaction logs stay in bench/results/, not in git)
    import shutil
    shutil.copy(f"{out}/results.tsv", f"{root}/bench/last-run.tsv")
    print(text)
