"""The data sets: how each is loaded, run and scored. Every figure is a Row: a count over a
denominator, with the target it is held to (SPEC.md §6) where there is one."""
import csv
import json
import os
import random
import re
import subprocess
import sys
import time
from collections import Counter, defaultdict

from pipeline import AGENT, REVIEWER, group_by_tenant, run_tenants

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
CORPUS = os.path.join(ROOT, "core", "tests", "data", "corpus")


class Row:
    """One figure: num/den as a share (or a plain count when den is None), and its target:
    ('<=', 0.02) or ('>=', 0.85)."""

    def __init__(self, figure, num, den=None, target=None, note="", weighted=False):
        self.figure, self.num, self.den, self.target, self.note = figure, num, den, target, note
        self.weighted = weighted

    @property
    def share(self):
        return None if not self.den else self.num / self.den

    @property
    def ok(self):
        if self.target is None:
            return None
        if not self.den:
            return None  # nothing measured: neither passes nor fails
        op, v = self.target
        return self.share <= v + 1e-12 if op == "<=" else self.share >= v - 1e-12

    def value(self):
        if self.den is None:
            return str(self.num)
        if not self.den:
            return "– (0/0)"
        if self.weighted:
            return f"{100 * self.num / self.den:.1f} % (weighted)"
        return f"{100 * self.num / self.den:.1f} % ({self.num}/{self.den})"

    def target_text(self):
        if self.target is None:
            return ""
        op, v = self.target
        return f"{'≤' if op == '<=' else '≥'} {100 * v:g} %"

    def as_dict(self):
        return {"figure": self.figure, "num": self.num, "den": self.den, "share": self.share,
                "target": self.target_text() or None, "ok": self.ok, "note": self.note or None,
                "weighted": self.weighted}


LE2 = ("<=", 0.02)


def load_jsonl(name):
    with open(os.path.join(DATA, name), encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def with_evidence(records, prefix):
    for r in records:
        r.setdefault("evidence", [f"{prefix}:{r['id']}"])
    return records


def subsample_by_user(records, n_users):
    """The first n_users scopes (users) of each tenant, in file order, for --smoke."""
    keep, seen = [], defaultdict(list)
    for r in records:
        users = seen[r["tenant"]]
        if r.get("user_id") not in users:
            if len(users) >= n_users:
                continue
            users.append(r.get("user_id"))
        keep.append(r)
    return keep


# ---------------------------------------------------------------------------------------------
# scoring of the generated sets (labels by construction)


def _short(t, n=110):
    return t if len(t) <= n else t[:n - 1] + "…"


def score_labelled(records, results, max_examples=8):
    """Figures of a labelled set: what was flagged, which changes were caught, what merged."""
    mem = {}  # memory id -> record promoted as it
    for r in records:
        o = results[r["id"]]
        if o.get("memory_id"):
            mem[o["memory_id"]] = r
    by_id = {r["id"]: r for r in records}
    promoted_ids = {r["id"] for r in records if results[r["id"]].get("promoted")}
    status = Counter(results[r["id"]]["status"] for r in records)
    f = {"records": len(records), "status": dict(sorted(status.items())),
         "promoted": sum(1 for r in records if results[r["id"]].get("promoted")),
         "waiting_for_human": sum(1 for r in records if results[r["id"]].get("reviewer") == "human"),
         "errors": [results[r["id"]]["error"] for r in records if results[r["id"]]["status"] == "error"][:5]}

    # replay: which memories of each chain were live when a record was reviewed
    live = defaultdict(set)
    target_live = {}
    for r in records:
        o = results[r["id"]]
        if r["cls"] == "change":
            target_live[r["id"]] = bool(live[r["chain"]])
        if o.get("promoted") and r.get("chain"):
            live[r["chain"]].add(o["memory_id"])
        if o.get("superseded") and o["superseded"] in mem and mem[o["superseded"]].get("chain"):
            live[mem[o["superseded"]]["chain"]].discard(o["superseded"])

    def contra(r):
        o = results[r["id"]]
        return o["status"] == "contradicts", mem.get(o.get("contradicts"))

    def caught(r):
        is_c, m = contra(r)
        return r["cls"] == "change" and is_c and m is not None and m.get("chain") == r["chain"]

    def merged_right(r):
        o = results[r["id"]]
        if o["status"] != "duplicate_of" or r["cls"] != "paraphrase":
            return False
        m = mem.get(o["duplicate_of"])
        return m is not None and (m["id"] == r["same_as"] or m.get("same_as") == r["same_as"])

    groups = {"events": ("event",), "multi-valued and compatible": ("multi", "fact"), "states": ("state",),
              "state changes": ("change",), "paraphrases": ("paraphrase",), "near-misses": ("near_miss",)}
    f["by_class"] = {}
    sel = {g: (lambda r, c=classes: r["cls"] in c) for g, classes in groups.items()}
    sel["events with a date in the text"] = lambda r: r["cls"] == "event" and r.get("dated")
    sel["events without a date"] = lambda r: r["cls"] == "event" and not r.get("dated")
    for g, pick in sel.items():
        rs = [r for r in records if pick(r)]
        if rs:
            f["by_class"][g] = {"n": len(rs), "contradicts": sum(1 for r in rs if results[r["id"]]["status"] == "contradicts"),
                                "duplicate_of": sum(1 for r in rs if results[r["id"]]["status"] == "duplicate_of"),
                                "promoted": sum(1 for r in rs if results[r["id"]].get("promoted"))}

    changes = [r for r in records if r["cls"] == "change"]
    caught_rs = [r for r in changes if caught(r)]
    f["changes"] = {
        "n": len(changes), "caught": len(caught_rs),
        "caught_labelled_memory": sum(1 for r in caught_rs if contra(r)[1]["id"] == r["supersedes"]),
        "target_not_live": sum(1 for r in changes if not target_live[r["id"]]),
        "resolution": dict(sorted(Counter(results[r["id"]]["resolution"] for r in caught_rs).items())),
        "caught_and_promoted": sum(1 for r in caught_rs if results[r["id"]].get("promoted")),
        "caught_queued_for_human": sum(1 for r in caught_rs if results[r["id"]].get("reviewer") == "human"),
        "contradicts_other_memory": sum(1 for r in changes if contra(r)[0] and not caught(r)),
        "missed_as": dict(sorted(Counter(results[r["id"]]["status"] for r in changes if not contra(r)[0]).items())),
        "reasons": dict(Counter(results[r["id"]]["reason"] for r in caught_rs).most_common()),
    }
    all_contra = [r for r in records if results[r["id"]]["status"] == "contradicts"]
    unpromoted = [r for r in all_contra if not results[r["id"]].get("promoted")]
    f["contradicts_not_promoted"] = {"n": len(unpromoted),
                                     "queued_for_human": sum(1 for r in unpromoted if results[r["id"]].get("reviewer") == "human")}
    wrong = [r for r in all_contra if not caught(r)]
    f["contradicts_verdicts"] = {"n": len(all_contra), "right": len(all_contra) - len(wrong),
                                 "wrong_by_class": dict(Counter(r["cls"] for r in wrong).most_common()),
                                 "wrong_by_reason": dict(Counter(results[r["id"]]["reason"] for r in wrong).most_common())}

    paras = [r for r in records if r["cls"] == "paraphrase"]
    f["paraphrases"] = {"n": len(paras), "merged": sum(1 for r in paras if merged_right(r)),
                        "original_promoted": sum(1 for r in paras if r["same_as"] in promoted_ids),
                        "outcome": dict(sorted(Counter(results[r["id"]]["status"] for r in paras if not merged_right(r)).items()))}
    # a false merge: any duplicate_of verdict but a paraphrase merged into its own claim
    dups = [r for r in records if results[r["id"]]["status"] == "duplicate_of"]
    false_m = [r for r in dups if not merged_right(r)]
    nonpara = [r for r in records if r["cls"] != "paraphrase"]
    f["merges"] = {"non_paraphrases": len(nonpara), "false_merges": len(false_m),
                   "false_by_class": dict(Counter(r["cls"] for r in false_m).most_common())}
    nears = [r for r in records if r["cls"] == "near_miss"]
    if nears:
        f["near_misses"] = {k: {"n": sum(1 for r in nears if r["kind"] == k),
                                "merged": sum(1 for r in nears if r["kind"] == k and results[r["id"]]["status"] == "duplicate_of"),
                                "contradicts": sum(1 for r in nears if r["kind"] == k and results[r["id"]]["status"] == "contradicts")}
                            for k in sorted({r["kind"] for r in nears})}

    def example(r):
        o = results[r["id"]]
        other = mem.get(o.get("contradicts") or o.get("duplicate_of"))
        return {"id": r["id"], "cls": r["cls"], "text": r["text"], "status": o["status"], "reason": o.get("reason"),
                "resolution": o.get("resolution"), "similarity": o.get("similarity"),
                "other_id": other["id"] if other else None, "other_text": other["text"] if other else None}

    f["examples"] = {
        "false_contradictions": [example(r) for r in wrong[:max_examples]],
        "missed_changes": [example(r) | {"supersedes_text": by_id[r["supersedes"]]["text"]}
                           for r in changes if not caught(r)][:max_examples],
        "false_merges": [example(r) for r in false_m[:max_examples]],
        "missed_paraphrases": [example(r) | {"same_as_text": by_id[r["same_as"]]["text"]}
                               for r in paras if not merged_right(r)][:max_examples],
    }
    return f


def labelled_rows(f, flag_targets=True):
    rows = []
    bc = f["by_class"]
    for g in ("events", "events with a date in the text", "events without a date", "multi-valued and compatible", "states"):
        if g in bc and flag_targets:
            rows.append(Row(f"{g} flagged contradicts", bc[g]["contradicts"], bc[g]["n"], LE2))
    c = f["changes"]
    if c["n"]:
        rows.append(Row("state changes caught (contradicts on the right memory)", c["caught"], c["n"], (">=", 0.85),
                        note=f"resolutions {c['resolution']}; {c['caught_and_promoted']} auto-promoted, "
                             f"{c['caught_queued_for_human']} queued for a person; {c['target_not_live']} changes had no live "
                             f"memory to supersede; missed as {c['missed_as']}"))
        rows.append(Row("contradicts verdicts right", f["contradicts_verdicts"]["right"], f["contradicts_verdicts"]["n"], (">=", 0.80),
                        note=f"wrong by class {f['contradicts_verdicts']['wrong_by_class']}"))
        rows.append(Row("state changes caught and promoted without a person", c["caught_and_promoted"], c["n"]))
    p = f["paraphrases"]
    if p["n"]:
        rows.append(Row("paraphrases merged", p["merged"], p["n"], (">=", 0.60),
                        note=f"{p['original_promoted']} of {p['n']} had their original promoted; others: {p['outcome']}"))
    cn = f["contradicts_not_promoted"]
    rows.append(Row("contradicts not promoted that wait for a person (reviewer human)", cn["queued_for_human"], cn["n"], (">=", 1.0),
                    note="the rest are blocked with reviewer auto, outside review_queue"))
    m = f["merges"]
    rows.append(Row("false merges", m["false_merges"], m["non_paraphrases"], ("<=", 0.005),
                    note=f"by class {m['false_by_class']}" if m["false_merges"] else ""))
    return rows


# ---------------------------------------------------------------------------------------------
# the sets


class Ctx:
    """What every set gets: the database, options, where to write per-record results."""

    def __init__(self, db, args, records_dir):
        self.db, self.args, self.records_dir = db, args, records_dir

    def save(self, name, records, results):
        path = os.path.join(self.records_dir, f"{name}.jsonl")
        with open(path, "w", encoding="utf-8") as fh:
            for r in records:
                fh.write(json.dumps({"record": r, "outcome": results.get(r["id"])}, ensure_ascii=False, default=str) + "\n")
        return path


def run_generated(ctx, name, file, smoke_users, flag_targets=True):
    records = with_evidence(load_jsonl(file), "rq")
    if ctx.args.smoke:
        records = subsample_by_user(records, smoke_users)
    results = run_tenants(ctx.db, group_by_tenant(records), ctx.args.jobs, name, ctx.args.quiet)
    ctx.save(name, records, results)
    f = score_labelled(records, results)
    return {"figures": f, "rows": labelled_rows(f, flag_targets)}


def set_events(ctx):
    return run_generated(ctx, "events", "events.jsonl", 2)


def set_multi(ctx):
    return run_generated(ctx, "multi", "multi.jsonl", 3)


def set_states(ctx):
    return run_generated(ctx, "states", "states.jsonl", 8)


def set_paraphrases(ctx):
    # every original is the first memory of its scope: nothing to flag it against
    out = run_generated(ctx, "paraphrases", "paraphrases.jsonl", 30, flag_targets=False)
    out["rows"] = [r for r in out["rows"] if not r.figure.startswith(("contradicts verdicts", "contradicts not promoted"))]
    nm = out["figures"].get("near_misses", {})
    n = sum(v["n"] for v in nm.values())
    merged = sum(v["merged"] for v in nm.values())
    out["rows"].append(Row("near-misses merged (must not be)", merged, n, ("<=", 0.005),
                           note="; ".join(f"{k}: {v['merged']}/{v['n']} merged, {v['contradicts']} contradicts" for k, v in nm.items())))
    sub = nm.get("subject", {"n": 0, "contradicts": 0})
    out["rows"].append(Row("near-misses about another subject flagged contradicts", sub["contradicts"], sub["n"],
                           note="two subjects never contradict"))
    return out


def set_stream(ctx):
    return run_generated(ctx, "stream", "stream.jsonl", 6)


def set_regression(ctx):
    records = with_evidence(load_jsonl("regression.jsonl"), "rq")
    results = run_tenants(ctx.db, group_by_tenant(records), ctx.args.jobs, "regression", ctx.args.quiet)
    ctx.save("regression", records, results)
    mem_of = {r["id"]: results[r["id"]].get("memory_id") for r in records}
    cases = defaultdict(list)
    for r in records:
        cases[r["kind"]].append(r)
    out_cases, rows = {}, []
    for name, rs in cases.items():
        fails = []
        for r in rs:
            o, exp = results[r["id"]], r["expect"]
            if exp == "new":
                good = o["status"] not in ("contradicts", "duplicate_of", "error")
            else:
                what, idx = exp.split(":")
                target = mem_of[rs[int(idx)]["id"]]
                key = "contradicts" if what == "contradicts" else "duplicate_of"
                good = o["status"] == key and target is not None and o.get(key) == target
            if not good:
                fails.append({"text": r["text"], "expected": exp, "got": o["status"], "reason": o.get("reason"),
                              "resolution": o.get("resolution")})
        out_cases[name] = {"records": len(rs), "failed": len(fails), "failures": fails[:5]}
        n_checked = len(rs) - 1
        rows.append(Row(f"case {name}", n_checked - len(fails), n_checked, (">=", 1.0),
                        note="; ".join(f"“{_short(x['text'], 60)}” expected {x['expected']}, got {x['got']}"
                                       f"{' (' + x['reason'] + ')' if x['reason'] else ''}" for x in fails[:2])))
    return {"figures": {"cases": out_cases}, "rows": rows}


# ---------------------------------------------------------------------------------------------
# LoCoMo (not redistributable: read from the user's path)

LOCOMO_DATE = re.compile(r"on (\d{1,2}) (\w+),? (\d{4})")


def locomo_records(path, dated, sample, user_mode):
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    out = []
    for conv in data:
        sid = conv["sample_id"]
        c = conv["conversation"]
        sessions = sorted((int(k.split("_")[1]), k) for k in c if re.fullmatch(r"session_\d+", k))
        n = 0
        for num, key in sessions:
            when = c.get(f"{key}_date_time", "")
            m = LOCOMO_DATE.search(when)
            date = f"{int(m.group(1))} {m.group(2)} {m.group(3)}" if m else when
            for t in c[key]:
                if sample and n >= sample:
                    break
                text = (t.get("text") or "").strip()
                if not text:
                    continue  # an image with no words: nothing the speaker said
                n += 1
                speaker = t["speaker"]
                out.append({"id": f"{sid}:{t['dia_id']}", "tenant": f"rq_locomo{'_dated' if dated else ''}_{sid}",
                            "user_id": speaker if user_mode == "speaker" else None,
                            "text": f"{speaker} ({date}): {text}" if dated else f"{speaker}: {text}",
                            "cls": "turn", "kind": sid, "evidence": [f"locomo:{sid}:{t['dia_id']}"]})
    return out


def set_locomo(ctx, dated):
    name = "locomo-dated" if dated else "locomo"
    records = locomo_records(ctx.args.locomo, dated, ctx.args.locomo_sample, ctx.args.locomo_user)
    results = run_tenants(ctx.db, group_by_tenant(records), ctx.args.jobs, name, ctx.args.quiet)
    ctx.save(name, records, results)
    mem = {results[r["id"]]["memory_id"]: r for r in records if results[r["id"]].get("memory_id")}
    st = lambda r: results[r["id"]]["status"]  # noqa: E731
    flagged = [r for r in records if st(r) == "contradicts"]
    per = {}
    for conv in dict.fromkeys(r["kind"] for r in records):
        rs = [r for r in records if r["kind"] == conv]
        per[conv] = {"turns": len(rs), "contradicts": sum(1 for r in rs if st(r) == "contradicts"),
                     "promoted": sum(1 for r in rs if results[r["id"]].get("promoted")),
                     "duplicate_of": sum(1 for r in rs if st(r) == "duplicate_of")}
    reasons = Counter(results[r["id"]]["reason"] for r in flagged)
    f = {"turns": len(records), "status": dict(sorted(Counter(st(r) for r in records).items())),
         "contradicts": len(flagged), "promoted": sum(1 for r in records if results[r["id"]].get("promoted")),
         "duplicate_of": sum(1 for r in records if st(r) == "duplicate_of"),
         "waiting_for_human": sum(1 for r in records if results[r["id"]].get("reviewer") == "human"),
         "by_reason": dict(reasons.most_common()),
         "resolution": dict(Counter(results[r["id"]]["resolution"] for r in flagged).most_common()),
         "per_conversation": per, "user_id": ctx.args.locomo_user, "sample": ctx.args.locomo_sample,
         "examples": [{"turn": r["id"], "text": _short(r["text"], 160), "reason": results[r["id"]]["reason"],
                       "similarity": results[r["id"]]["similarity"],
                       "memory": _short(mem[results[r["id"]]["contradicts"]]["text"], 160) if results[r["id"]]["contradicts"] in mem else None}
                      for r in flagged[:12]]}
    rows = [Row("turns flagged contradicts", len(flagged), len(records), LE2,
                note="by reason: " + ", ".join(f"{k} {v}" for k, v in reasons.most_common(6))),
            Row("turns promoted", f["promoted"], len(records)),
            Row("turns merged as duplicates", f["duplicate_of"], len(records))]
    for conv, p in per.items():
        rows.append(Row(f"{conv}: flagged contradicts", p["contradicts"], p["turns"],
                        note=f"promoted {p['promoted']}, duplicates {p['duplicate_of']}"))
    return {"figures": f, "rows": rows}


# ---------------------------------------------------------------------------------------------
# the mem0-shaped import, through the Python importer


def set_mem0(ctx):
    db, tenant = ctx.db, "rq_mem0"
    export = os.path.join(DATA, "mem0_export.json")
    labels = json.load(open(os.path.join(DATA, "mem0_labels.json"), encoding="utf-8"))
    db.grant(AGENT, [tenant])
    db.grant(REVIEWER, [tenant])
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "clients", "python"), PGAPPNAME="review_quality_mem0")
    cmd = [sys.executable, "-m", "memory_fabric.importer", "--tenant", tenant, "--dsn", db.dsn(AGENT),
           "--json", "--quiet", export]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    if p.returncode != 0:
        raise RuntimeError(f"importer exited {p.returncode}: {p.stderr.strip()[-2000:]}")
    report = json.loads(p.stdout)
    # what review made of each record: read as the tenant's reviewer (candidates, newest review, memory)
    import psycopg
    with psycopg.connect(db.dsn(REVIEWER)) as c, c.transaction():
        c.execute("SELECT set_config('memory_fabric.tenant_id', %s, true)", (tenant,))
        rows = c.execute("""
            SELECT c.metadata->'imported'->>'id', c.id, c.text, r.status, r.reviewer, r.reason, r.duplicate_of_id,
                   r.contradicts_id, r.contradiction_resolution, m.id, m.supersedes_id, m.retracted_at IS NOT NULL
            FROM memory_fabric.candidates c
            LEFT JOIN LATERAL (SELECT * FROM memory_fabric.reviews r WHERE r.candidate_id = c.id
                               ORDER BY r.reviewed_at DESC, r.id DESC LIMIT 1) r ON true
            LEFT JOIN memory_fabric.promoted_memory m ON m.candidate_id = c.id
            WHERE c.tenant_id = %s ORDER BY c.captured_at, c.id""", (tenant,)).fetchall()
    out = {}
    for (mid, cid, text, status, reviewer, reason, dup, contra, res, mem_id, sup, retracted) in rows:
        out[mid] = {"candidate_id": cid, "text": text, "status": status, "reviewer": reviewer, "reason": reason,
                    "duplicate_of": dup, "contradicts": contra, "resolution": res, "memory_id": mem_id,
                    "superseded": sup, "retracted": retracted, "promoted": mem_id is not None}
    mem_rec = {o["memory_id"]: k for k, o in out.items() if o["memory_id"]}
    recs = [{"id": m["id"], "text": m["memory"], "user_id": m["user_id"], "created_at": m["created_at"]}
            for m in json.load(open(export, encoding="utf-8"))["results"]]
    ctx.save("mem0", recs, out)
    upd, para, ooo = labels["updates"], labels["paraphrases"], set(labels["out_of_order"])

    def caught(u):
        o = out.get(u, {})
        return o.get("status") == "contradicts" and mem_rec.get(o.get("contradicts")) == upd[u]

    def reversed_(u):
        o = out.get(upd[u], {})
        return o.get("status") == "contradicts" and mem_rec.get(o.get("contradicts")) == u

    in_order = [u for u in upd if u not in ooo]
    merged = [p_ for p_ in para if out.get(p_, {}).get("status") == "duplicate_of" and mem_rec.get(out[p_]["duplicate_of"]) == para[p_]]
    others = labels["others"]
    false_c = [k for k, o in out.items() if o["status"] == "contradicts" and not (k in upd and caught(k))
               and not (k in upd.values())]
    f = {"importer_report": {k: report.get(k) for k in ("read", "captured", "skipped", "promoted", "duplicates",
                                                       "contradictions_blocked", "queued_for_human", "rejected",
                                                       "unreviewed", "other_stages", "bulk")},
         "updates": {"n": len(upd), "caught": sum(1 for u in upd if caught(u)),
                     "in_order": len(in_order), "caught_in_order": sum(1 for u in in_order if caught(u)),
                     "out_of_order": len(ooo), "caught_out_of_order": sum(1 for u in ooo if caught(u)),
                     "reversed_out_of_order": sum(1 for u in ooo if reversed_(u)),
                     "resolution": dict(Counter(out[u]["resolution"] for u in upd if caught(u)).most_common()),
                     "auto_promoted": sum(1 for u in upd if caught(u) and out[u]["promoted"]),
                     "missed_as": dict(Counter(out.get(u, {}).get("status") for u in upd if not caught(u)).most_common())},
         "paraphrases": {"n": len(para), "merged": len(merged)},
         "others": {"n": len(others), "contradicts": sum(1 for k in others if out.get(k, {}).get("status") == "contradicts"),
                    "duplicate_of": sum(1 for k in others if out.get(k, {}).get("status") == "duplicate_of")},
         "originals_flagged": sum(1 for k in set(upd.values()) if out.get(k, {}).get("status") == "contradicts"),
         "examples": {"missed_updates": [{"update": out.get(u, {}).get("text"), "of": out.get(upd[u], {}).get("text"),
                                          "got": out.get(u, {}).get("status"), "out_of_order": u in ooo}
                                         for u in upd if not caught(u)][:10],
                      "false_contradictions": [{"text": out[k]["text"], "memory": out.get(mem_rec.get(out[k]["contradicts"]), {}).get("text"),
                                                "reason": out[k]["reason"]} for k in false_c][:8]}}
    u = f["updates"]
    rows = [Row("planted updates caught", u["caught"], u["n"], (">=", 0.85),
                note=f"resolutions {u['resolution']}, {u['auto_promoted']} auto-promoted; missed as {u['missed_as']}"),
            Row("… of those in file order", u["caught_in_order"], u["in_order"]),
            Row("… of those placed before the memory they update", u["caught_out_of_order"], u["out_of_order"],
                note=f"{u['reversed_out_of_order']} caught the other way round (the older memory flagged against the update)"),
            Row("paraphrases merged", len(merged), len(para), (">=", 0.60)),
            Row("other records flagged contradicts", f["others"]["contradicts"], f["others"]["n"], LE2),
            Row("other records merged", f["others"]["duplicate_of"], f["others"]["n"], ("<=", 0.005))]
    return {"figures": f, "rows": rows}


# ---------------------------------------------------------------------------------------------
# the sentence-pair corpus


def read_tsv(path):
    with open(path, encoding="utf-8", newline="") as f:
        r = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        head = next(r)
        return [dict(zip(head, row)) for row in r]


MIX = {"unrelated": 0.70, "neutral": 0.10, "entailment": 0.08, "paraphrase": 0.07, "contradiction": 0.05}


def corpus_pairs(n_per_label, n_unrelated, seed=20261127):
    pub = read_tsv(os.path.join(CORPUS, "public.tsv"))
    own = read_tsv(os.path.join(CORPUS, "memory.tsv"))
    rng = random.Random(seed)
    pairs = []

    def add(rows, group):
        for row in rows:
            pairs.append({"group": group, "label": row["label"], "source": row["source"], "id": row["id"],
                          "a": row["a"], "b": row["b"]})

    for label in ("paraphrase", "entailment", "neutral", "contradiction"):
        mine = [r for r in own if r["label"] == label]
        src = "paws-wiki-final" if label == "paraphrase" else "snli-1.0-dev"
        theirs = [r for r in pub if r["label"] == label and r["source"] == src]
        take_own = mine[:n_per_label]
        add(take_own, label)
        add(rng.sample(theirs, max(0, min(len(theirs), n_per_label - len(take_own)))), label)
    neg = [r for r in pub if r["source"] == "paws-wiki-final-neg"]
    add(rng.sample(neg, min(len(neg), n_per_label // 2)), "paws-neg")
    # unrelated: the candidate of one pair against the memory of another, half in our domain, half SNLI's
    for rows, k in ((own, n_unrelated // 2), ([r for r in pub if r["source"] == "snli-1.0-dev"], n_unrelated - n_unrelated // 2)):
        made = 0
        while made < k:
            i, j = rng.randrange(len(rows)), rng.randrange(len(rows))
            ri, rj = rows[i], rows[j]
            if abs(i - j) < 12 or {ri["a"], ri["b"]} & {rj["a"], rj["b"]}:
                continue  # SNLI lists a premise's hypotheses together: keep clear of them
            pairs.append({"group": "unrelated", "label": "unrelated", "source": ri["source"],
                          "id": f"{ri['id']}|{rj['id']}", "a": ri["a"], "b": rj["b"]})
            made += 1
    return pairs


def set_corpus(ctx):
    n = ctx.args.pairs
    pairs = corpus_pairs(n, n)
    records = []
    for k, p in enumerate(pairs):
        t = f"rq_cp_{k:05d}"
        # b is the memory already there, a the new candidate (the corpus's convention)
        records.append({"id": f"cp{k:05d}:b", "tenant": t, "user_id": None, "text": p["b"], "cls": "corpus_memory",
                        "kind": p["group"], "evidence": [f"corpus:{p['source']}:{p['id']}"]})
        records.append({"id": f"cp{k:05d}:a", "tenant": t, "user_id": None, "text": p["a"], "cls": "corpus_candidate",
                        "kind": p["group"], "evidence": [f"corpus:{p['source']}:{p['id']}"]})
    results = run_tenants(ctx.db, group_by_tenant(records), ctx.args.jobs, "corpus", ctx.args.quiet)
    ctx.save("corpus", records, results)
    g = defaultdict(Counter)
    by_src = defaultdict(Counter)
    setup_failed = 0
    examples = defaultdict(list)
    for k, p in enumerate(pairs):
        mo, co = results[f"cp{k:05d}:b"], results[f"cp{k:05d}:a"]
        if not mo.get("promoted"):
            setup_failed += 1
            continue
        s = co["status"]
        if s == "duplicate_of" and co.get("duplicate_of") != mo["memory_id"]:
            s = "duplicate_of_other"
        g[p["group"]][s] += 1
        g[p["group"]]["n"] += 1
        by_src[(p["group"], p["source"])][s] += 1
        by_src[(p["group"], p["source"])]["n"] += 1
        wrong = (s == "contradicts" and p["group"] != "contradiction") or (s == "duplicate_of" and p["group"] != "paraphrase")
        if wrong and len(examples[p["group"]]) < 4:
            examples[p["group"]].append({"id": p["id"], "a": p["a"], "b": p["b"], "got": s, "reason": co.get("reason")})
    rate = lambda grp, s: g[grp][s] / g[grp]["n"] if g[grp]["n"] else 0.0  # noqa: E731
    bal = ("paraphrase", "entailment", "neutral", "contradiction")
    flagged_bal = sum(g[x]["contradicts"] for x in bal)
    neg_groups = ("neutral", "contradiction", "paws-neg", "unrelated")
    # natural mix: the per-group rates of contradicts verdicts, weighted by how often each kind of
    # pair meets review in real traffic (MIX)
    right = MIX["contradiction"] * rate("contradiction", "contradicts")
    allc = sum(w * rate(grp, "contradicts") for grp, w in MIX.items())
    f = {"pairs": len(pairs), "setup_failed": setup_failed,
         "groups": {k: dict(v) for k, v in sorted(g.items())},
         "by_source": {f"{a} / {b}": dict(v) for (a, b), v in sorted(by_src.items())},
         "mix": MIX, "natural_mix_precision": (right / allc) if allc else None, "examples": dict(examples)}
    rows = [Row("paraphrases merged", g["paraphrase"]["duplicate_of"], g["paraphrase"]["n"], (">=", 0.60),
                note=", ".join(f"{s}: {v.get('duplicate_of', 0)}/{v['n']}" for (a, s), v in sorted(by_src.items()) if a == "paraphrase")),
            Row("false merges (contradiction, neutral, PAWS non-paraphrase, unrelated)",
                sum(g[x]["duplicate_of"] + g[x]["duplicate_of_other"] for x in neg_groups), sum(g[x]["n"] for x in neg_groups), ("<=", 0.005)),
            Row("entailment pairs merged (one-way: should not be)", g["entailment"]["duplicate_of"], g["entailment"]["n"]),
            Row("contradictions found", g["contradiction"]["contradicts"], g["contradiction"]["n"], (">=", 0.85),
                note=", ".join(f"{s}: {v.get('contradicts', 0)}/{v['n']}" for (a, s), v in sorted(by_src.items()) if a == "contradiction")),
            Row("contradicts verdicts right, balanced sample", g["contradiction"]["contradicts"], flagged_bal,
                note="flagged: " + ", ".join(f"{x} {g[x]['contradicts']}/{g[x]['n']}" for x in bal)),
            Row("unrelated pairs flagged contradicts", g["unrelated"]["contradicts"], g["unrelated"]["n"]),
            Row("PAWS non-paraphrases flagged contradicts", g["paws-neg"]["contradicts"], g["paws-neg"]["n"])]
    prec = f["natural_mix_precision"]
    rows.append(Row("contradicts verdicts right, natural mix", right, allc, (">=", 0.70), weighted=True,
                    note="the rates above weighted " + ", ".join(f"{k} {round(v * 100)} %" for k, v in MIX.items())
                         + (f"; precision {prec:.3f}" if prec is not None else "")))
    return {"figures": f, "rows": rows}


SETS = {
    "regression": set_regression,
    "events": set_events,
    "multi": set_multi,
    "states": set_states,
    "paraphrases": set_paraphrases,
    "stream": set_stream,
    "mem0": set_mem0,
    "corpus": set_corpus,
    "locomo": lambda ctx: set_locomo(ctx, False),
    "locomo-dated": lambda ctx: set_locomo(ctx, True),
}
SMOKE = ["regression", "events", "multi", "states", "paraphrases", "stream", "mem0"]
