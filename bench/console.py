"""The operator's console under a full queue: the queue page with 1,000 waiting candidates,
measured on the server (its Server-Timing header: the queries and the rendering) and as a client
sees it (one HTTP GET), beside a baseline measured in the same run: the page's two queries alone,
in one transaction pinned to the tenant, through psycopg as the same role.

    bash bench/console.sh [--rows 1000] [--requests 300]

Run by bench/console.sh, which builds the console (release) and starts it against the local
cluster. Prints a Markdown section for BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import http.cookiejar
import os
import random
import re
import statistics
import subprocess
import sys
import time
import urllib.parse
import urllib.request

import psycopg

DB = "memory_fabric_bench_console"
TENANT = "t_bench_console"
ROLES = {"op": "bench_console_op", "rev": "bench_console_rev", "admin": "bench_console_admin"}
QUEUE_SQL = [
    """SELECT candidate_id, proposed_tier, reason, status, contradiction_resolution, source, actor, classification,
              proposed_text, pg_catalog.jsonb_array_length(evidence_refs), priority_score::float8,
              extract(epoch FROM pg_catalog.now() - enqueued_at)::float8
       FROM memory_fabric.review_queue
       WHERE tenant_id = %(t)s AND (%(n)s::text IS NULL OR proposed_tier = %(n)s) AND (%(n)s::text IS NULL OR reason = %(n)s)
         AND (%(n)s::float8 IS NULL OR enqueued_at <= pg_catalog.now() - pg_catalog.make_interval(secs => %(n)s::float8))
       ORDER BY enqueued_at, candidate_id LIMIT 1000""",
    "SELECT reason, count(*) FROM memory_fabric.review_queue WHERE tenant_id = %(t)s GROUP BY 1 ORDER BY 1",
]


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def seed(admin: str, rows: int) -> None:
    with psycopg.connect(admin, dbname="postgres", autocommit=True) as c:
        c.execute(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")
        c.execute(f"CREATE DATABASE {DB}")
    with psycopg.connect(admin, dbname=DB, autocommit=True) as c:
        c.execute("SET client_min_messages = warning")
        c.execute("CREATE EXTENSION memory_fabric CASCADE")
        for kind, role in (("reviewer", ROLES["op"]), ("reviewer", ROLES["rev"]), ("admin", ROLES["admin"])):
            c.execute(f"DROP ROLE IF EXISTS {role}")
            c.execute(f"CREATE ROLE {role} LOGIN IN ROLE memory_fabric_{kind}")
            c.execute("SELECT memory_fabric.grant_tenant(%s, %s)", (role, TENANT))
    # caller-made vectors of a model of our own: random 64-dimension directions, so that no two
    # of the 1,000 facts are near enough to be duplicates or contradictions and all wait
    with psycopg.connect(admin, dbname=DB, user=ROLES["admin"]) as c:
        c.execute("SELECT set_config('memory_fabric.tenant_id', %s, false)", (TENANT,))
        c.execute("SELECT memory_fabric.register_embedding_model(%s, 'bench/random-64', 64)", (TENANT,))
        c.commit()
    rnd = random.Random(7)
    words = "invoice refund depot courier parcel account password address email phone contract renewal".split()
    with psycopg.connect(admin, dbname=DB, user=ROLES["op"]) as c:
        c.execute("SELECT set_config('memory_fabric.tenant_id', %s, false)", (TENANT,))
        for i in range(rows):
            v = [rnd.gauss(0, 1) for _ in range(64)]
            text = (f"Customer cus_{i:04d} asked about the {rnd.choice(words)} and the {rnd.choice(words)}; "
                    f"ticket {100000 + i} says {rnd.choice(words)} is pending.")
            cid = c.execute(
                "SELECT id FROM memory_fabric.capture_memory(%s, %s, 'operator', 'INTERNAL', user_id => %s, "
                "evidence_refs => %s::jsonb, actor => 'op:bench', embedding => %s::real[]::vector, "
                "embedding_model => 'bench/random-64')",
                (TENANT, text, f"cus_{i:04d}", f'["ticket:{100000 + i}"]', v)).fetchone()[0]
            c.execute("SELECT memory_fabric.review_candidate(%s)", (cid,))
            if i % 100 == 99:
                c.commit()
        c.commit()
        n = c.execute("SELECT count(*) FROM memory_fabric.review_queue WHERE tenant_id = %s", (TENANT,)).fetchone()[0]
    if n != rows:
        sys.exit(f"seeded {n} waiting candidates, not {rows}")


def sign_in(base: str, role: str) -> urllib.request.OpenerDirector:
    jar = http.cookiejar.CookieJar()
    op = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    page = op.open(f"{base}/signin").read().decode()
    login = re.search(r'name="login"[^>]*value="([^"]+)"', page) or re.search(r'value="([^"]+)"[^>]*name="login"', page)
    form = urllib.parse.urlencode({"role": role, "password": "unused: trust on the socket", "display_name": "op:bench-rev",
                                   "login": login.group(1)}).encode()
    req = urllib.request.Request(f"{base}/signin", data=form, headers={"Origin": base})
    page = op.open(req).read().decode()
    if "queue" not in op.open(f"{base}/queue").geturl():
        csrf = re.search(r'name="csrf"[^>]*value="([^"]+)"', page) or re.search(r'value="([^"]+)"[^>]*name="csrf"', page)
        form = urllib.parse.urlencode({"tenant": TENANT, "csrf": csrf.group(1)}).encode()
        op.open(urllib.request.Request(f"{base}/tenant", data=form, headers={"Origin": base}))
    return op


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--admin", required=True, help="the superuser's conninfo (makes the database and roles)")
    ap.add_argument("--base", required=True, help="the console's address, http://127.0.0.1:PORT")
    ap.add_argument("--rows", type=int, default=1000)
    ap.add_argument("--requests", type=int, default=300)
    ap.add_argument("--seed-only", action="store_true")
    a = ap.parse_args()
    if a.seed_only:
        t0 = time.perf_counter()
        seed(a.admin, a.rows)
        print(f"seeded {a.rows} waiting candidates in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        return
    op = sign_in(a.base, ROLES["rev"])
    server, client, base = [], [], []
    with psycopg.connect(a.admin, dbname=DB, user=ROLES["rev"]) as c:
        for i in range(a.requests + 20):
            # alternately, so that both see the same machine
            t0 = time.perf_counter()
            r = op.open(f"{a.base}/queue")
            body = r.read()
            t1 = time.perf_counter()
            timing = r.headers.get("server-timing", "")
            m = re.search(r"dur=([0-9.]+)", timing)
            if r.status != 200 or not m or body.count(b'class="queue-row') < min(a.rows, 1000):
                sys.exit(f"the queue page did not show {a.rows} rows (status {r.status}, timing {timing!r})")
            t2 = time.perf_counter()
            with c.transaction():
                c.execute("SELECT set_config('memory_fabric.tenant_id', %s, true)", (TENANT,))
                for q in QUEUE_SQL:
                    c.execute(q, {"t": TENANT, "n": None}).fetchall()
            t3 = time.perf_counter()
            if i >= 20:  # warm-up
                server.append(float(m.group(1)))
                client.append((t1 - t0) * 1000)
                base.append((t3 - t2) * 1000)
    size = len(body)
    print("## Operator's console (issue 32)\n")
    print(f"`bash bench/console.sh` (release build, the local cluster, one client, {a.requests} requests after 20 "
          f"of warm-up; {a.rows} candidates waiting for a human in one tenant, signed in as a reviewer). "
          f"The page is {size / 1024:.0f} KiB of HTML. The baseline is the page's two queries alone, in one "
          "transaction pinned to the tenant, through psycopg as the same role, measured alternately with the page.\n")
    print("| what | p50 ms | p95 ms | p50 / baseline p50 |")
    print("|---|---|---|---|")
    b50 = statistics.median(base)
    for name, xs in (("queue page, on the server (Server-Timing: queries and rendering)", server),
                     ("queue page, one HTTP GET as the client sees it", client),
                     ("baseline: its two queries through psycopg", base)):
        print(f"| {name} | {statistics.median(xs):.2f} | {pct(xs, 95):.2f} | {statistics.median(xs) / b50:.2f} |")
    verdict = "met" if statistics.median(server) <= 100 else "missed"
    print(f"\nTarget (issue 32): the queue page with 1,000 waiting candidates renders in ≤ 100 ms p50 on the "
          f"server: {verdict} ({statistics.median(server):.2f} ms).")


if __name__ == "__main__":
    main()
