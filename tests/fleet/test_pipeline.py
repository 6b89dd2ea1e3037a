"""memory_fabric_router.capture_review_promote(): capture, review and, when review needs no human,
promote in one transaction on the tenant's shard (router/DESIGN.md §6), as a client does on one
node in one transaction. Run by tests/fleet/run.sh on its 2-shard fleet after test_router.py, as
an ordinary agent role through the router."""

from __future__ import annotations

import os
import sys

import psycopg

SOCK = os.environ["MF_FLEET_SOCK"]
BASE = int(os.environ["MF_FLEET_PORT"])
DB = os.environ.get("MF_FLEET_DB", "memory_fabric")
SUPER = os.environ.get("MF_PGUSER", "postgres")
failures: list[str] = []


def check(cond: bool, what: str) -> None:
    print(("ok - " if cond else "not ok - ") + what, flush=True)
    if not cond:
        failures.append(what)


def conn(port: int, user: str = SUPER) -> psycopg.Connection:
    return psycopg.connect(host=SOCK, port=port, user=user, dbname=DB, autocommit=True)


def crp(role: str, pin: str, tenant: str, text: str, source: str = "agent", **kw: object) -> tuple:
    extra = "".join(f", {k} => %({k})s" for k in kw)
    with conn(BASE, role) as c, c.transaction():
        c.execute("SELECT set_config('memory_fabric.tenant_id', %s, true)", (pin,))
        return c.execute("SELECT candidate_id, status, reviewer, memory_id FROM memory_fabric_router.capture_review_promote("
                         "%(t)s, %(x)s, %(s)s, 'INTERNAL', user_id => 'cus_p'" + extra + ")",
                         {"t": tenant, "x": text, "s": source, **kw}).fetchone()


def candidates() -> int:
    n = 0
    for port in (BASE + 1, BASE + 2):
        with conn(port) as c:
            n += c.execute("SELECT count(*) FROM memory_fabric.candidates").fetchone()[0]
    return n


def main() -> None:
    cid, status, reviewer, mid = crp("fl_agent", "acme", "acme", "Customer cus_p prefers morning calls.")
    check(status == "pending_promotion" and reviewer == "auto" and mid is not None,
          f"one call captures, reviews and promotes ({status}, {reviewer}, {mid})")
    with conn(BASE + 1) as c:
        on0 = c.execute("SELECT count(*) FROM memory_fabric.promoted_memory WHERE id = %s AND candidate_id = %s",
                        (mid, cid)).fetchone()[0]
    check(on0 == 1, "the memory is on acme's shard")
    with conn(BASE, "fl_agent") as c, c.transaction():
        c.execute("SELECT set_config('memory_fabric.tenant_id', 'acme', true)")
        got = [r[0] for r in c.execute("SELECT memory_id FROM memory_fabric.recall('acme', NULL, user_id => 'cus_p')")]
    check(mid in got, "and recalled through the router")
    _, status, _, mid2 = crp("fl_agent", "acme", "acme", "Customer cus_p prefers morning calls.")
    check(status == "duplicate_of" and mid2 is None, f"the same again is a duplicate, not promoted ({status}, {mid2})")
    _, status, reviewer, mid3 = crp("fl_rev1", "acme", "acme", "Refunds for cus_p need a manager.", source="operator",
                                    actor="op:rev1")
    check(reviewer == "human" and mid3 is None, f"an operator's fact waits for a human, not promoted ({status}, {reviewer})")
    before = candidates()
    try:
        crp("fl_agent", "acme", "globex", "Written under another tenant's pin.")
        e = None
    except psycopg.Error as x:
        e = x
    check(e is not None and e.sqlstate == "42501" and candidates() == before,
          f"another tenant than the pin: 42501 and nothing written ({e.sqlstate if e else None})")
    try:
        crp("fl_agent", "acme", "acme", "A fact with a confidence out of range.", confidence=7.0)
        e = None
    except psycopg.Error as x:
        e = x
    check(e is not None and candidates() == before, f"a refused capture writes nothing ({e.sqlstate if e else None})")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
