"""The router through a running 2-shard fleet (tests/fleet/run.sh starts it; router/DESIGN.md).

Roles with the same names on every node; tenants acme (shard 0, by the directory), globex (shard 1,
by the directory) and initech (the hash default). Through the router only: capture -> review ->
promote -> recall for each tenant, on its own shard; four eyes; no tenant's recall shows another's
rows; the pin checked on the router (and an id-only call without one refused there); the views of
the pinned tenant; the admins' metrics rollup; a committing procedure; a stopped shard gives a
clear error naming no other tenant while the other shard keeps serving, and serves again once back.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from typing import Any

import psycopg

SOCK = os.environ["MF_FLEET_SOCK"]
BASE = int(os.environ["MF_FLEET_PORT"])
DB = os.environ.get("MF_FLEET_DB", "memory_fabric")
DIR = os.environ["MF_FLEET_DIR"]
BINDIR = os.environ.get("MF_PG_BINDIR", "/usr/lib/postgresql/15/bin")
SUPER = os.environ.get("MF_PGUSER", "postgres")
NODES = {"router": BASE, "shard0": BASE + 1, "shard1": BASE + 2}
ROLES = {"fl_agent": "memory_fabric_agent", "fl_agent_a": "memory_fabric_agent",
         "fl_rev1": "memory_fabric_reviewer", "fl_rev2": "memory_fabric_reviewer", "fl_admin": "memory_fabric_admin"}
PLACE = {"acme": 0, "globex": 1}

failures: list[str] = []


def check(cond: bool, what: str) -> None:
    print(("ok - " if cond else "not ok - ") + what.replace("\n", " "), flush=True)
    if not cond:
        failures.append(what)


def conn(node: str = "router", user: str = SUPER) -> psycopg.Connection:
    return psycopg.connect(host=SOCK, port=NODES[node], user=user, dbname=DB, autocommit=True)


def as_role(role: str, sql: str, *args: Any, pin: str | None = None) -> list[tuple]:
    """One statement through the router as a role, in a transaction pinned to `pin` (none: no pin)."""
    with conn("router", role) as c, c.transaction():
        if pin is not None:
            c.execute("SELECT set_config('memory_fabric.tenant_id', %s, true)", (pin,))
        cur = c.execute(sql, args)
        return cur.fetchall() if cur.description else []


def error_of(role: str, sql: str, *args: Any, pin: str | None = None) -> psycopg.Error | None:
    try:
        as_role(role, sql, *args, pin=pin)
    except psycopg.Error as e:
        return e
    return None


def describe(e: psycopg.Error | None) -> str:
    if e is None:
        return "no error"
    return f"{e.sqlstate}: {e.diag.message_primary} | {e.diag.message_detail} | {e.diag.message_hint}"


def pg_ctl(node: str, *args: str) -> None:
    cmd = [f"{BINDIR}/pg_ctl", "-D", os.path.join(DIR, node, "data"), *args]
    if os.geteuid() == 0:
        cmd = ["runuser", "-u", "postgres", "--", *cmd]
    subprocess.run(cmd, check=True, capture_output=True, cwd="/", timeout=60)


def setup() -> None:
    for node in NODES:
        with conn(node) as c:
            for role, member in ROLES.items():
                if not c.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone():
                    c.execute(f"CREATE ROLE {role} LOGIN IN ROLE {member}")
    with conn() as c:
        for t, s in PLACE.items():
            c.execute("INSERT INTO memory_fabric_router.tenants (tenant_id, shard) VALUES (%s, %s) "
                      "ON CONFLICT (tenant_id) DO UPDATE SET shard = excluded.shard", (t, s))
        # grants through the router, as the superuser (no pin needed for it, as on one node)
        for role in ROLES:
            tenants = ["acme"] if role == "fl_agent_a" else ["acme", "globex", "initech"]
            for t in tenants:
                c.execute("SELECT memory_fabric.grant_tenant(%s, %s)", (role, t))


def on_shard(shard: int, sql: str, *args: Any) -> list[tuple]:
    with conn(f"shard{shard}") as c:
        return c.execute(sql, args).fetchall()


def pipeline(tenant: str, text: str, user: str = "cus_1") -> tuple[str, str]:
    cid = as_role("fl_agent", "SELECT id FROM memory_fabric.capture_memory(%s, %s, 'agent', 'INTERNAL', "
                  "user_id => %s, intent_id => 'support', entity => %s, predicate => 'note', value => %s::jsonb)",
                  tenant, text, user, user, '"x"', pin=tenant)[0][0]
    rv = as_role("fl_agent", "SELECT status, reviewer FROM memory_fabric.review_candidate(%s)", cid, pin=tenant)[0]
    mid = as_role("fl_agent", "SELECT id FROM memory_fabric.promote(%s)", cid, pin=tenant)[0][0]
    check(rv[0] is not None, f"{tenant}: reviewed through the router ({rv})")
    return cid, mid


def main() -> None:
    setup()
    initech = as_role(SUPER, "SELECT memory_fabric_router.shard_for('initech')")[0][0]
    print(f"# initech lands on shard {initech} by the hash default")
    place = dict(PLACE, initech=initech)

    # 1. the pipeline for each tenant, on its own shard only
    mem: dict[str, str] = {}
    for t in place:
        cid, mid = pipeline(t, f"Tenant {t} ships on Fridays.")
        mem[t] = mid
        here = on_shard(place[t], "SELECT count(*) FROM memory_fabric.promoted_memory WHERE id = %s", mid)[0][0]
        there = on_shard(1 - place[t], "SELECT count(*) FROM memory_fabric.promoted_memory WHERE id = %s", mid)[0][0]
        check(here == 1 and there == 0, f"{t}: its memory is on shard {place[t]} and only there")
        st = as_role("fl_agent", "SELECT stage FROM memory_fabric.review_status(%s)", cid, pin=t)[0][0]
        check(st == "promoted", f"{t}: review_status says {st}")

    # 2. recall: one tenant's rows only
    for t in place:
        rows = as_role("fl_agent", "SELECT memory_id, text FROM memory_fabric.recall(%s, 'support', user_id => 'cus_1')",
                       t, pin=t)
        ids = {r[0] for r in rows}
        check(mem[t] in ids and not (ids & (set(mem.values()) - {mem[t]})),
              f"{t}: recall shows its memory and no other tenant's ({len(rows)} rows)")
        check(all(t in r[1] for r in rows), f"{t}: every recalled text is the tenant's own")

    # 3. the pin on the router
    e = error_of("fl_agent", "SELECT count(*) FROM memory_fabric.recall('globex', 'support')", pin="acme")
    check(e is not None and e.sqlstate == "42501" and "not the pinned tenant" in e.diag.message_primary,
          f"recall of globex pinned to acme: {describe(e)}")
    e = error_of("fl_agent", "SELECT count(*) FROM memory_fabric.recall('acme', 'support')")
    check(e is not None and e.sqlstate == "42501" and "is not set" in e.diag.message_primary,
          f"recall without a pin: {describe(e)}")
    e = error_of("fl_agent", "SELECT * FROM memory_fabric.review_status(%s)", mem["acme"])
    check(e is not None and e.sqlstate == "42501" and "is not set" in e.diag.message_primary
          and "router" in (e.diag.message_detail or ""), f"id-only call without a pin: {describe(e)}")
    # the shard's own refusal comes back as the shard raised it: no grant for globex
    e = error_of("fl_agent_a", "SELECT count(*) FROM memory_fabric.recall('globex', 'support')", pin="globex")
    check(e is not None and e.sqlstate == "42501" and "REMOTE" not in e.diag.message_primary
          and "globex" in e.diag.message_primary, f"recall of a tenant without a grant: {describe(e)}")
    # an id of acme asked for under globex's pin: the shard of globex knows no such id
    cid_a = as_role("fl_agent", "SELECT id FROM memory_fabric.capture_memory('acme', 'Acme id probe.', 'agent', 'INTERNAL')",
                    pin="acme")[0][0]
    e = error_of("fl_agent", "SELECT * FROM memory_fabric.review_candidate(%s)", cid_a, pin="globex")
    check(e is not None and e.sqlstate == "P0002" and "acme" not in describe(e),
          f"acme's id under globex's pin: {describe(e)}")

    # 4. four eyes through the router
    cid = as_role("fl_rev1", "SELECT id FROM memory_fabric.capture_memory('acme', 'Acme refunds need two signatures.', "
                  "'operator', 'INTERNAL')", pin="acme")[0][0]
    rv = as_role("fl_rev1", "SELECT reviewer FROM memory_fabric.review_candidate(%s)", cid, pin="acme")[0][0]
    check(rv == "human", f"an operator's capture waits for a human ({rv})")
    e = error_of("fl_agent", "SELECT id FROM memory_fabric.promote(%s)", cid, pin="acme")
    check(e is not None and e.sqlstate == "55000", f"promote without approval: {describe(e)}")
    e = error_of("fl_rev1", "SELECT id FROM memory_fabric.approve(%s, 'op:rev1')", cid, pin="acme")
    check(e is not None and e.sqlstate == "42501", f"the capturing reviewer approves its own: {describe(e)}")
    e = error_of("fl_rev1", "SELECT id FROM memory_fabric.approve(%s, 'op:rev2')", cid, pin="acme")
    check(e is not None and e.sqlstate == "42501", f"... under another name: {describe(e)}")
    mid = as_role("fl_rev2", "SELECT id FROM memory_fabric.approve(%s, 'op:rev2')", cid, pin="acme")[0][0]
    check(mid is not None, "another reviewer approves")

    # 5. the views: the pinned tenant's rows
    q = as_role("fl_rev1", "SELECT DISTINCT tenant_id FROM memory_fabric.promoted_memory", pin="globex")
    check(q == [("globex",)], f"promoted_memory pinned to globex shows globex only ({q})")
    cid_q = as_role("fl_rev1", "SELECT id FROM memory_fabric.capture_memory('globex', 'Globex closes in August.', "
                    "'operator', 'INTERNAL')", pin="globex")[0][0]
    as_role("fl_rev1", "SELECT 1 FROM memory_fabric.review_candidate(%s)", cid_q, pin="globex")
    q = as_role("fl_rev2", "SELECT tenant_id, candidate_id FROM memory_fabric.review_queue", pin="globex")
    check(q == [("globex", cid_q)], f"review_queue pinned to globex: {q}")
    e = error_of("fl_agent", "SELECT count(*) FROM memory_fabric.promoted_memory", pin="acme")
    check(e is not None and e.sqlstate == "42501", f"an agent reads promoted_memory: {describe(e)}")
    e = error_of("fl_rev1", "SELECT count(*) FROM memory_fabric.review_queue")
    check(e is not None and e.sqlstate == "42501", f"a view without a pin: {describe(e)}")

    # 6. every shard: my_tenants, the admins' rollup
    mine = sorted(r[0] for r in as_role("fl_agent", "SELECT tenant_id FROM memory_fabric.my_tenants()"))
    check(mine == ["acme", "globex", "initech"], f"my_tenants gathers every shard: {mine}")
    roll = as_role("fl_admin", "SELECT tenant_id, captures FROM memory_fabric_router.metrics_rollup() ORDER BY 1")
    check([r[0] for r in roll] == ["acme", "globex", "initech"] and all(r[1] >= 1 for r in roll),
          f"metrics rollup: {roll}")
    m = as_role("fl_admin", "SELECT tenant_id FROM memory_fabric.metrics", pin="acme")
    check(m == [("acme",)], f"metrics pinned to acme: {m}")

    # 7. a procedure that commits, through the router (the pin set for the session)
    with conn("router", "fl_agent") as c:
        c.execute("SET memory_fabric.tenant_id = 'globex'")
        c.execute("SELECT memory_fabric.capture_memory('globex', 'Globex bulk one.', 'agent', 'INTERNAL', "
                  "user_id => 'cus_9', intent_id => 'bulk')")
        c.execute("CALL memory_fabric.promote_pending('globex')")
        n = c.execute("SELECT count(*) FROM memory_fabric.recall('globex', 'bulk', user_id => 'cus_9')").fetchone()[0]
    check(n == 1, f"promote_pending through the router promoted the capture ({n})")

    # 8. the shard-side functions add no power: called directly on a shard, with a forged pin
    def on_shard_as(shard: int, role: str, sql: str, *args: Any) -> psycopg.Error | None:
        try:
            with conn(f"shard{shard}", role) as c:
                c.execute(sql, args)
        except psycopg.Error as e:
            return e
        return None
    e = on_shard_as(1, "fl_agent_a", "SELECT * FROM memory_fabric_shard.recall('globex', 'globex', 'support', NULL, 8, "
                    "ARRAY['PUBLIC','INTERNAL'], NULL, NULL, NULL, NULL)")
    check(e is not None and e.sqlstate == "42501" and "no access" in e.diag.message_primary,
          f"the shard wrapper with a forged pin, no grant: {describe(e)}")
    e = on_shard_as(0, "fl_agent", "SELECT * FROM memory_fabric_shard.approve('acme', %s, 'op:x', NULL, NULL)", cid)
    check(e is not None and e.sqlstate == "42501" and "permission denied" in e.diag.message_primary,
          f"the shard wrapper of a function the role may not execute: {describe(e)}")
    e = on_shard_as(0, "fl_rev1", "SELECT * FROM memory_fabric_shard.read_candidates('globex')")
    check(e is None, "reading another shard's tenant there runs (and shows nothing)")
    with conn("shard0", "fl_rev1") as c:
        n = c.execute("SELECT count(*) FROM memory_fabric_shard.read_candidates('globex')").fetchone()[0]
        pin = c.execute("SELECT current_setting('memory_fabric.tenant_id', true)").fetchone()[0]
    check(n == 0 and not pin, f"globex on shard 0: {n} rows; the pin does not outlive the call ({pin!r})")

    # 8b. the intent pin (memory_fabric.intent_id, memory_fabric 0.20.0) travels with every routed call:
    # the shard refuses what the caller's pin refuses on one node, and it does not outlive the call
    def pinned_intent(sql: str, *args: Any, intent: str = "support") -> tuple[psycopg.Error | None, list]:
        try:
            with conn("router", "fl_agent") as c, c.transaction():
                c.execute("SELECT set_config('memory_fabric.tenant_id', 'acme', true), "
                          "set_config('memory_fabric.intent_id', %s, true)", (intent,))
                cur = c.execute(sql, args)
                return None, (cur.fetchall() if cur.description else [])
        except psycopg.Error as e:
            return e, []
    e, _ = pinned_intent("SELECT id FROM memory_fabric.capture_memory('acme', 'Intent pinned elsewhere.', 'agent', "
                         "'INTERNAL', intent_id => 'sales')")
    check(e is not None and e.sqlstate == "42501" and "not the pinned intent" in e.diag.message_primary,
          f"through the router, a capture of another intent than the pin is refused on the shard: {describe(e)}")
    e, _ = pinned_intent("SELECT * FROM memory_fabric_router.capture_review_promote('acme', 'No intent at all.', "
                         "'agent', 'INTERNAL')")
    check(e is not None and e.sqlstate == "42501" and "outside the pinned intent" in e.diag.message_primary,
          f"capture_review_promote without an intent under an intent pin is refused: {describe(e)}")
    e, _ = pinned_intent("SELECT count(*) FROM memory_fabric.recall('acme', 'sales')")
    check(e is not None and e.sqlstate == "42501", f"a recall of another intent than the pin is refused: {describe(e)}")
    e, r = pinned_intent("SELECT intent_id FROM memory_fabric.capture_memory('acme', 'Intent pinned and named.', "
                         "'agent', 'INTERNAL', intent_id => 'support')")
    check(e is None and r == [("support",)], f"a capture of the pinned intent goes through: {describe(e)} {r}")
    with conn("shard0", "fl_agent") as c:
        left = c.execute("SELECT current_setting('memory_fabric.intent_id', true)").fetchone()[0]
    check(not left, f"the intent pin does not outlive a routed call on the shard ({left!r})")

    # 9. a shard that is down: a clear error naming no other tenant; the other shard keeps serving
    # a hostile role cannot stall a tenant's calls: the gates are views on the shards it may not
    # lock (tests/fleet/test_gates.py), and the advisory lock keys of an earlier design mean nothing
    try:
        with conn("shard0", "fl_agent_a") as c:
            c.execute("BEGIN")
            c.execute("LOCK TABLE memory_fabric_shard.gate_0 IN ROW SHARE MODE")
        e = None
    except psycopg.Error as x:
        e = x
    check(e is not None and e.sqlstate == "42501", f"a role may not lock a shard's gate itself: {describe(e)}")
    blocker = conn("router", "fl_agent_a")
    blocker.autocommit = True
    blocker.execute("SELECT pg_advisory_lock(1296452178, hashtext('acme'))")
    blocker.execute("SELECT pg_advisory_lock(hashtext('acme'))")
    t0 = time.monotonic()
    _, m3 = pipeline("acme", "Acme works while another role holds advisory locks on its name.", user="cus_3")
    took = time.monotonic() - t0
    check(took < 5, f"acme's calls go on while another role holds advisory locks on its name ({took:.2f}s)")
    blocker.close()

    held = conn("router", "fl_agent")   # a router session with a live PL/Proxy connection to shard 1
    with held.transaction():
        held.execute("SELECT set_config('memory_fabric.tenant_id', 'globex', true)")
        held.execute("SELECT count(*) FROM memory_fabric.recall('globex', 'support')")
    pg_ctl("shard1", "-m", "immediate", "-w", "stop")
    try:
        try:
            with held.transaction():
                held.execute("SELECT set_config('memory_fabric.tenant_id', 'globex', true)")
                held.execute("SELECT count(*) FROM memory_fabric.recall('globex', 'support')")
            e = None
        except psycopg.Error as x:
            e = x
        check(e is not None and e.sqlstate == "08006" and "shard 1" in e.diag.message_primary,
              f"a session whose connection to shard 1 died: {describe(e)}")
        t0 = time.monotonic()
        e = error_of("fl_agent", "SELECT count(*) FROM memory_fabric.recall('globex', 'support')", pin="globex")
        took = time.monotonic() - t0
        d = describe(e)
        check(e is not None and e.sqlstate == "08006" and "shard 1" in e.diag.message_primary
              and "globex" in (e.diag.message_detail or "") and "acme" not in d and "initech" not in d,
              f"globex while shard 1 is down ({took:.2f}s): {d}")
        _, m2 = pipeline("acme", "Acme keeps working while shard 1 is down.", user="cus_2")
        ids = [r[0] for r in as_role("fl_agent", "SELECT memory_id FROM memory_fabric.recall('acme', 'support', "
                                     "user_id => 'cus_2')", pin="acme")]
        check(m2 in ids, f"acme captures, reviews, promotes and recalls while shard 1 is down ({len(ids)} rows)")
        if place["initech"] == 0:
            n = as_role("fl_agent", "SELECT count(*) FROM memory_fabric.recall('initech', 'support', user_id => 'cus_1')",
                        pin="initech")[0][0]
            check(n == 1, f"initech (shard 0 by the hash) recalls while shard 1 is down ({n})")
        e = error_of("fl_agent", "SELECT tenant_id FROM memory_fabric.my_tenants()")
        check(e is not None and e.sqlstate == "08006", f"a call on every shard while one is down: {describe(e)}")
    finally:
        pg_ctl("shard1", "-l", os.path.join(DIR, "log", "shard1.log"), "-w", "start")
    n = as_role("fl_agent", "SELECT count(*) FROM memory_fabric.recall('globex', 'support', user_id => 'cus_1')",
                pin="globex")[0][0]
    check(n >= 1, f"globex recalls again once shard 1 is back ({n} rows)")
    with held.transaction():
        held.execute("SELECT set_config('memory_fabric.tenant_id', 'globex', true)")
        n = held.execute("SELECT count(*) FROM memory_fabric.recall('globex', 'support', user_id => 'cus_1')").fetchone()[0]
    check(n >= 1, f"... and in the session that saw it down ({n} rows)")
    held.close()

    print(f"# {'FAILED: ' + str(len(failures)) if failures else 'all passed'}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
