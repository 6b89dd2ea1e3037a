"""The markdown table of a run, from its JSON (harness.py --json). Given several JSON files (runs
of other sets on the same build), prints one table with every set.

    python3 bench/review_quality/report.py A.json [B.json ...]
"""
import json
import sys


def value(r):
    if r["den"] is None:
        return str(r["num"])
    if not r["den"]:
        return "– (0/0)"
    if r.get("weighted"):
        return f"{100 * r['num'] / r['den']:.1f} % (weighted)"
    return f"{100 * r['num'] / r['den']:.1f} % ({r['num']}/{r['den']})"


def header(meta):
    lib = meta.get("library") or {}
    return (f"Review quality, memory_fabric {meta['extversion']} (PostgreSQL {meta['server_version'].split()[0]}), "
            f"library {lib.get('sha256', '?')[:16]}…, embedder {', '.join(meta.get('embedding_models') or []) or '?'}, "
            f"judge {'read (' + meta['judge_models'][0][:12] + '…)' if meta.get('judge_models') else 'not read'}; "
            f"{meta['started']}, {meta['mode']}, {meta.get('options', {}).get('jobs', 1)} connection(s).")


def render(docs):
    lines = []
    for d in docs:
        lines.append(header(d["meta"]))
        if d["meta"].get("warning"):
            lines.append(f"WARNING: {d['meta']['warning']}")
    lines += ["", "| set | figure | value | target | met | time | notes |", "|---|---|---|---|---|---|---|"]
    for d in docs:
        for name, res in d["sets"].items():
            if "error" in res:
                lines.append(f"| {name} | **failed to run** | | | | {res['seconds']:.0f} s | {res['error'][:300]} |")
                continue
            first = True
            for r in res["rows"]:
                met = {True: "yes", False: "**no**", None: ""}[r["ok"]]
                note = (r.get("note") or "").replace("|", "/")
                t = f"{round(res['seconds'])} s" if first else ""
                lines.append(f"| {name if first else ''} | {r['figure']} | {value(r)} | {r.get('target') or ''} | {met} | {t} | {note} |")
                first = False
    return "\n".join(lines)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    print(render([json.load(open(p, encoding="utf-8")) for p in sys.argv[1:]]))
