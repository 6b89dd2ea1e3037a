#!/usr/bin/env python3
"""The documentation check: runs every ```sql block of README.md, in order, against the local
cluster, and compares what each statement prints with the output the README shows for it.

  python3 tests/docs/readme.py --host SOCKETDIR --port 55432            # check (TAP lines)
  python3 tests/docs/readme.py --host SOCKETDIR --port 55432 --update   # rewrite the shown output

The README's convention: a statement's output is shown as the comment lines ("-- ...") that follow
its last line directly, as psql prints it (without the "(N rows)" footer); a blank line ends it.
Comments that explain the next statement come after a blank line. A statement without shown
output must succeed. Every block runs in a psql session of its own, as the superuser, in a
database made for the check (memory_fabric_readme); roles the README creates are dropped first.

Times printed to the second (YYYY-MM-DD HH:MM:SS) match any time. Ids are made at run time (mc_..., pm_...): where the README shows one in an output, the id this
run printed in its place stands for it, in the comparison and in every later statement that
names it. --update writes this run's output and ids into the README (read the diff before
committing it); a new output is requested with a single "-- ?" line after the statement.
"""
import argparse
import difflib
import os
import re
import select
import subprocess
import time
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ap = argparse.ArgumentParser()
ap.add_argument("--host", default=os.environ.get("MF_PGHOST"))
ap.add_argument("--port", default=os.environ.get("MF_PGPORT", "55432"))
ap.add_argument("--user", default="postgres")
ap.add_argument("--db", default="memory_fabric_readme")
ap.add_argument("--psql", default=os.environ.get("MF_PG_BINDIR", "/usr/lib/postgresql/15/bin") + "/psql")
ap.add_argument("--readme", default=str(ROOT / "README.md"))
ap.add_argument("--update", action="store_true")
a = ap.parse_args()

ID = re.compile(r"\b((?:mc|pm|rv|dc|ev|cns|tg|rl)_[0-9]{8}t[0-9]{6}_[0-9a-z]{12})\b")
# Times of the run (to the second, as to_char prints them) are compared as placeholders of the
# same width, so that the columns still line up.
TIME = re.compile(r"\b[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\b")
MARK = "@@memory_fabric_readme_statement@@"


class Stmt:
    def __init__(self, first_line):
        self.first_line = first_line
        self.sql: list[str] = []
        self.out: list[str] | None = None  # the shown output, None when there is none
        self.out_span: tuple[int, int] | None = None  # README line range of the shown output
        self.actual: list[str] = []


def parse(lines):
    """[(block number, first line, [Stmt])] for every ```sql block."""
    blocks, i = [], 0
    while i < len(lines):
        if lines[i].strip() != "```sql":
            i += 1
            continue
        start, i = i + 1, i + 1
        stmts, cur, dollars, last_done = [], None, 0, None
        while i < len(lines) and lines[i].strip() != "```":
            line = lines[i]
            s = line.strip()
            if cur is None and s.startswith("--"):
                if last_done is not None and (last_done.out_span is None or last_done.out_span[1] == i):
                    # output of the statement just ended (until a blank or a non-comment line)
                    last_done.out = (last_done.out or []) + [s[3:] if s.startswith("-- ") else s[2:]]
                    last_done.out_span = (last_done.out_span or (i, i))[0], i + 1
                i += 1
                continue
            if s == "":
                last_done = None
                if cur is not None:
                    cur.sql.append(line)
                i += 1
                continue
            if cur is None:
                cur = Stmt(i + 1)
                last_done = None
            cur.sql.append(line)
            dollars += len(re.findall(r"\$[A-Za-z_]*\$", line))
            if (dollars % 2 == 0 and s.endswith(";")) or (s.startswith("\\") and len(cur.sql) == 1):
                stmts.append(cur)
                last_done, cur, dollars = cur, None, 0
            i += 1
        if cur is not None:
            sys.exit(f"README.md:{cur.first_line}: the statement does not end with ';'")
        blocks.append((len(blocks) + 1, start, stmts))
        i += 1
    return blocks


def split_ids(line):
    parts = ID.split(line)
    return parts[0::2], parts[1::2]


def same(expected, actual, ids):
    """Whether the shown output matches this run's, with its ids standing for this run's; learns
    the ids. Returns an explanation of the first difference, or None."""
    exp = [TIME.sub("YYYY-MM-DD HH:MM:SS", l.rstrip()) for l in expected]
    act = [TIME.sub("YYYY-MM-DD HH:MM:SS", l.rstrip()) for l in actual]
    if len(exp) != len(act):
        return "a different number of lines"
    learned = {}
    for e, t in zip(exp, act):
        (et, eids), (tt, tids) = split_ids(e), split_ids(t)
        if et != tt or len(eids) != len(tids):
            return f"shown {e!r}\n#   ran   {t!r}"
        for x, y in zip(eids, tids):
            known = ids.get(x, learned.get(x))
            if known is None:
                if y in ids.values() or y in learned.values():
                    return f"{x} stands for {y}, which another shown id stands for already"
                learned[x] = y
            elif known != y:
                return f"{x} stands for {known}, but here the output has {y}"
    ids.update(learned)
    return None


def psql_cmd(db):
    return ["stdbuf", "-oL", "-eL", a.psql, "-X", "-q", "-h", a.host, "-p", str(a.port), "-U", a.user, "-d", db,
            "-P", "footer=off", "-P", "pager=off", "-v", "ON_ERROR_STOP=0"]


def psql(db, script):
    r = subprocess.run(psql_cmd(db), input=script, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return r.stdout


class Session:
    """One psql process fed a statement at a time, so that each statement can name the ids that
    the ones before it printed."""

    def __init__(self, db):
        self.p = subprocess.Popen(psql_cmd(db), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, bufsize=0)
        self.buf = b""
        self.send("\\set SHOW_CONTEXT never")

    def send(self, sql, timeout=120):
        """Runs sql; returns what psql printed for it, or None if psql went away or hung."""
        self.p.stdin.write((sql + f"\n\\echo {MARK}\n").encode())
        self.p.stdin.flush()
        deadline = time.monotonic() + timeout
        while (MARK + "\n").encode() not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.p.stdout], [], [], left)[0]:
                return None
            chunk = os.read(self.p.stdout.fileno(), 65536)
            if not chunk:
                return None
            self.buf += chunk
        out, self.buf = self.buf.split((MARK + "\n").encode(), 1)
        lines = [re.sub(r"^psql:<stdin>:\d+: ", "", l) for l in out.decode().split("\n")]
        while lines and lines[-1].strip() == "":
            lines.pop()
        return lines

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=60)


def check(st, ids):
    """Compares a statement's output with the shown one; returns a failure or None."""
    if st.out is None:
        if any(l.startswith(("ERROR:", "FATAL:", "WARNING:")) for l in st.actual):
            return f"README.md:{st.first_line}: the statement failed:\n" + "\n".join(st.actual)
        return None
    if st.out == ["?"]:
        return f"README.md:{st.first_line}: output requested (-- ?); run with --update"
    why = same(st.out, st.actual, ids)
    if why and a.update:
        # learn the ids by their order, so that the statements after this one run
        shown = [x for l in st.out for x in ID.findall(l)]
        ran = [x for l in st.actual for x in ID.findall(l)]
        if len(shown) == len(ran):
            for x, y in zip(shown, ran):
                ids.setdefault(x, y)
    if why:
        diff = "\n".join(difflib.unified_diff(st.out, st.actual, "shown", "ran", lineterm="", n=1))
        return f"README.md:{st.first_line}: the output differs ({why})\n{diff}"
    return None


def run_block(stmts, ids):
    """Runs a block's statements in one session; returns the failures."""
    session, bad = Session(a.db), []
    for st in stmts:
        sql = "\n".join(st.sql)
        for readme_id, run_id in ids.items():
            sql = sql.replace(readme_id, run_id)
        out = session.send(sql)
        if out is None:
            bad.append(f"README.md:{st.first_line}: psql did not finish the statement")
            break
        st.actual = out
        why = check(st, ids)
        if why:
            bad.append(why)
    session.close()
    return bad


def main():
    text = Path(a.readme).read_text()
    lines = text.split("\n")
    blocks = parse(lines)
    roles = sorted(set(re.findall(r"CREATE ROLE (\w+)", "\n".join(
        "\n".join(st.sql) for _, _, stmts in blocks for st in stmts))))
    setup = [f"DROP DATABASE IF EXISTS {a.db} WITH (FORCE);"]
    setup += [f"DROP ROLE IF EXISTS {r};" for r in roles]
    setup += [f"CREATE DATABASE {a.db};"]
    out = psql("postgres", "\\set ON_ERROR_STOP 1\nSET client_min_messages = warning;\n" + "\n".join(setup) + "\n")
    if out.strip():
        print(f"not ok - the check's database could not be set up\n{out}")
        return 1
    ids, failures, n = {}, 0, 0
    for num, start, stmts in blocks:
        bad = run_block(stmts, ids)
        n += len(stmts)
        if bad:
            failures += 1
            print(f"not ok - README.md block {num} (line {start}), {len(stmts)} statements")
            for b in bad:
                print("#   " + b.replace("\n", "\n#   "))
        else:
            print(f"ok - README.md block {num} (line {start}), {len(stmts)} statements")
    if a.update:
        new = list(lines)
        for _, _, stmts in reversed(blocks):
            for st in reversed(stmts):
                if st.out_span is not None:
                    s, e = st.out_span
                    indent = re.match(r"\s*", lines[s]).group(0)
                    new[s:e] = [(indent + "-- " + l).rstrip() if l else indent + "--" for l in st.actual]
        updated = "\n".join(new)
        for readme_id, run_id in ids.items():
            updated = updated.replace(readme_id, run_id)
        Path(a.readme).write_text(updated)
        print(f"# wrote this run's output into {a.readme}")
    psql("postgres", f"DROP DATABASE IF EXISTS {a.db} WITH (FORCE);\n")
    print(f"# {n} statements in {len(blocks)} sql blocks; {failures} blocks failed")
    return 1 if failures else 0


sys.exit(main())
