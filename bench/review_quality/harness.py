"""Review quality on realistic traffic: runs the data sets through memory_fabric's public SQL
functions as an ordinary agent role and reports every figure of SPEC.md §6 "review on real
traffic" and "review quality". Started by bench/review_quality.sh, which picks the tests' cluster
and the pinned Python environment; see bench/review_quality/README.md."""
import argparse
import datetime as dt
import hashlib
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pipeline import Db  # noqa: E402
from report import render  # noqa: E402
from sets import ROOT, SETS, SMOKE, Ctx, Row  # noqa: E402


def parse(argv):
    ap = argparse.ArgumentParser(prog="bench/review_quality.sh", description="review quality on realistic traffic")
    ap.add_argument("--locomo", metavar="PATH", help="LoCoMo's data/locomo10.json (not in the repository: CC BY-NC 4.0)")
    ap.add_argument("--locomo-sample", type=int, default=0, metavar="N", help="only the first N turns of each conversation")
    ap.add_argument("--locomo-user", choices=["none", "speaker"], default="none",
                    help="user_id of each turn: none (the conversation is one scope; default) or the speaker")
    ap.add_argument("--only", metavar="NAME[,NAME]", help="sets to run: " + ", ".join(SETS))
    ap.add_argument("--json", metavar="OUT", help="write every figure, per set, as JSON")
    ap.add_argument("--pairs", type=int, default=300, metavar="N",
                    help="corpus: pairs per label in the balanced sample, and unrelated pairs (default 300)")
    ap.add_argument("--smoke", action="store_true", help="generated sets only, a few scopes of each (CI; < 2 minutes)")
    ap.add_argument("--check", action="store_true", help="exit 1 when a figure misses its target")
    ap.add_argument("--jobs", type=int, default=1, help="connections in parallel, one tenant each at a time (default 1)")
    ap.add_argument("--db", help="the database to (re)create (default mf_rq_smoke with --smoke, else mf_rq_run)")
    ap.add_argument("--keep-db", action="store_true", help="keep the database afterwards")
    ap.add_argument("--quiet", action="store_true", help="no progress lines")
    a = ap.parse_args(argv)
    if a.only:
        a.sets = [s.strip() for s in a.only.split(",") if s.strip()]
        bad = [s for s in a.sets if s not in SETS]
        if bad:
            ap.error(f"unknown set {', '.join(bad)}; sets: {', '.join(SETS)}")
    elif a.smoke:
        a.sets = list(SMOKE)
    else:
        a.sets = [s for s in SETS if not s.startswith("locomo") or a.locomo]
    if any(s.startswith("locomo") for s in a.sets):
        if not a.locomo:
            ap.error("the LoCoMo sets need --locomo PATH (bench/review_quality/DATA.md says where to get it)")
        if not os.path.isfile(a.locomo):
            ap.error(f"no file {a.locomo}")
    if a.smoke:
        a.sets = [s for s in a.sets if s in SMOKE]
    a.db = a.db or ("mf_rq_smoke" if a.smoke else "mf_rq_run")
    return a


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def library():
    """The extension's library the cluster loads, so a run can tell if it changed under it."""
    so = os.environ.get("MF_RQ_LIBRARY")
    if not so or not os.path.exists(so):
        return None
    st = os.stat(so)
    return {"path": so, "sha256": sha256(so), "mtime": dt.datetime.fromtimestamp(st.st_mtime, dt.timezone.utc).isoformat()}


def git_state():
    def git(*a):
        try:
            return subprocess.run(["git", *a], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            return None
    dirty = git("status", "--porcelain", "--", "src", "core", "sql", "Cargo.toml")
    return {"head": git("rev-parse", "HEAD"), "extension_sources_modified": bool(dirty)}


def main(argv=None):
    a = parse(sys.argv[1:] if argv is None else argv)
    host, port, su = os.environ["MF_PGHOST"], os.environ["MF_PGPORT"], os.environ.get("MF_PGUSER", "postgres")
    db = Db(host, port, su, a.db)
    records_dir = os.environ.get("MF_RQ_OUT", os.path.join(ROOT, "target", "mf", "bench-review-quality", f"{port}-{a.db}"))
    os.makedirs(records_dir, exist_ok=True)
    if a.smoke:
        # the committed data must be what gen.py writes
        g = subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen.py"), "--check"],
                           capture_output=True, text=True)
        if g.returncode != 0:
            print(g.stderr, file=sys.stderr)
            return 2
    lib0 = library()
    t0 = time.time()
    print(f"==> database {a.db} (port {port}): fresh, memory_fabric as installed in {os.environ.get('MF_TREE', '?')}",
          file=sys.stderr)
    db.create()
    meta = {"started": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "mode": "smoke" if a.smoke else ("sets " + ", ".join(a.sets)), "git": git_state(), "library": lib0,
            "tree": os.environ.get("MF_TREE"), "port": port,
            "options": {k: getattr(a, k) for k in ("locomo", "locomo_sample", "locomo_user", "pairs", "jobs", "db")}}
    meta.update(db.facts())
    ctx = Ctx(db, a, records_dir)
    out = {}
    for name in a.sets:
        print(f"==> {name}", file=sys.stderr, flush=True)
        s0 = time.time()
        try:
            res = SETS[name](ctx)
        except Exception as e:  # one set failing to run is reported, the others still run
            res = {"error": f"{type(e).__name__}: {e}"}
            print(f"   {name} failed: {res['error']}", file=sys.stderr)
        res["seconds"] = time.time() - s0
        out[name] = res
        print(f"   {name}: {res['seconds']:.0f} s", file=sys.stderr, flush=True)
    # what embedded and judged: from the per-record results written by the sets; and how many
    # reviews asked the learned judge (review asks it only where the claims and the rules leave a
    # pair open: each pair costs two forward passes)
    models, judges = set(), set()
    for name in a.sets:
        path = os.path.join(records_dir, f"{name}.jsonl")
        asked = reviewed = pairs = 0
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                for line in f:
                    o = json.loads(line).get("outcome") or {}
                    if o.get("embedding_model"):
                        models.add(o["embedding_model"])
                    if o.get("judge_model"):
                        judges.add(o["judge_model"])
                    if "judge_pairs" in o:
                        reviewed += 1
                        asked += o["judge_pairs"] > 0
                        pairs += o["judge_pairs"]
        if reviewed and "rows" in out.get(name, {}):
            out[name]["rows"].append(Row("reviews that asked the learned judge", asked, reviewed,
                                         note=f"{pairs} pairs in all, {pairs / reviewed:.3f} a review"))
    meta["embedding_models"], meta["judge_models"] = sorted(models), sorted(judges)
    meta["seconds"] = time.time() - t0
    lib1 = library()
    if lib0 and lib1 and lib0["sha256"] != lib1["sha256"]:
        meta["warning"] = (f"the extension's library changed during the run ({lib0['mtime']} -> {lib1['mtime']}): "
                           "sessions started after that loaded another build")
    if not a.keep_db:
        db.drop()
    doc = {"meta": meta, "sets": {}}
    for name, res in out.items():
        doc["sets"][name] = {k: v for k, v in res.items() if k != "rows"}
        if "rows" in res:
            doc["sets"][name]["rows"] = [r.as_dict() for r in res["rows"]]
    doc = json.loads(json.dumps(doc, default=str))
    print(render([doc]))
    lib_now = lib1 or {}
    print(f"\nper-record results: {records_dir}/<set>.jsonl; library {lib_now.get('path', '?')}; total {meta['seconds']:.0f} s")
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1, ensure_ascii=False)
            f.write("\n")
    failed_to_run = [n for n, r in out.items() if "error" in r]
    missed = [(n, r.figure) for n, res in out.items() for r in res.get("rows", []) if r.ok is False]
    if failed_to_run:
        print(f"\n{len(failed_to_run)} set(s) failed to run: {', '.join(failed_to_run)}", file=sys.stderr)
        return 2
    if a.check:
        if missed:
            print(f"\n--check: {len(missed)} figure(s) miss their target:", file=sys.stderr)
            for n, fig in missed:
                print(f"  {n}: {fig}", file=sys.stderr)
            return 1
        print("\n--check: every figure meets its target", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
