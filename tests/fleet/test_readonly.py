"""Writes and read-only router transactions (issue 39, item 1; router/DESIGN.md §2 and §7), on the
2-shard fleet of tests/fleet/run.sh, after test_router.py (whose roles it uses).

1. A function that writes, called in a read-only router transaction (BEGIN READ ONLY, or
   default_transaction_read_only for the session), is refused before it is routed with 25006 and
   the extension's message, as on one node; nothing reaches a shard. Every read works there, and
   runs read-only on the shard: recall with memory_fabric.log_recalls on refuses its log as one node
   does, and without it recalls.
2. The interleaving that lost writes, forced step by step: a write that reaches the shard from a
   read-only router transaction (the proxy called directly, which no router-side check stops) is
   held on the old shard by a table lock while a tenant is moved with erase_old; the move must wait
   for it (the shard's gate), and the write must be on the new shard afterwards. The same with a
   read-write transaction through the router function.
3. A call that read the directory before a move paused the tenant and reaches the old shard after
   the move froze it is tried again by the router once the directory moves on, instead of failing.
"""

from __future__ import annotations

import time

import psycopg

from fleetlib import (SUPER, Bg, as_role, census, check, conn, describe, done, ensure_role, error_of, gate_of, move,
                      on, place, wait_until)

AGENT = "fl_agent"
CRP = ("SELECT candidate_id, status, memory_id FROM memory_fabric_router.capture_review_promote(%s, %s, 'agent', 'INTERNAL', "
       "user_id => 'cus_ro', intent_id => 'support')")
# the proxy itself: what a role may call directly, past the router function's checks
P_CRP = ("SELECT candidate_id FROM memory_fabric_router._p_capture_review_promote(%s, %s, NULL, %s, %s, 'agent', 'INTERNAL', "
         "'cus_ro', 'support', '[]', NULL, NULL, NULL, NULL, NULL, NULL, '{}')")


def candidates_with(text: str) -> int:
    return sum(on(f"shard{k}", "SELECT count(*) FROM memory_fabric.candidates WHERE text = %s", text)[0][0] for k in (0, 1))


def refused_writes() -> None:
    place("ro_a", 0, [AGENT, "fl_rev1", "fl_admin"])
    _, _, mid = as_role(AGENT, CRP, "ro_a", "Ro_a keeps a ledger of read-only probes.", pin="ro_a")[0]
    cid = as_role(AGENT, "SELECT id FROM memory_fabric.capture_memory('ro_a', 'Ro_a waits for review.', 'agent', 'INTERNAL')",
                  pin="ro_a")[0][0]
    text = "Ro_a written in a read-only transaction."
    writes = {
        "capture_review_promote": (AGENT, CRP, ("ro_a", text)),
        "capture_memory": (AGENT, "SELECT id FROM memory_fabric.capture_memory('ro_a', %s, 'agent', 'INTERNAL')", (text,)),
        "review_candidate": (AGENT, "SELECT status FROM memory_fabric.review_candidate(%s)", (cid,)),
        "promote": (AGENT, "SELECT id FROM memory_fabric.promote(%s)", (cid,)),
        "retract": ("fl_admin", "SELECT id FROM memory_fabric.retract(%s, 'no', 'op:admin')", (mid,)),
        "set_policy": ("fl_admin", "SELECT version FROM memory_fabric.set_policy('ro_a', '{}', 'ro')", ()),
        "grant_tenant": (SUPER, "SELECT memory_fabric.grant_tenant('fl_rev2', 'ro_a')", ()),
        "grant_tenant '*'": (SUPER, "SELECT memory_fabric.grant_tenant('fl_rev2', '*')", ()),
        "create_embedding_index": (SUPER, "SELECT memory_fabric.create_embedding_index('ro/embed-4', 4)", ()),
    }
    before = candidates_with(text)
    grants = on("shard0", "SELECT count(*) FROM memory_fabric.tenant_grants")[0][0] + \
        on("shard1", "SELECT count(*) FROM memory_fabric.tenant_grants")[0][0]
    for name, (role, sql, args) in writes.items():
        e = error_of(lambda: as_role(role, sql, *args, pin="ro_a", read_only=True))
        check(e is not None and e.sqlstate == "25006" and e.diag.message_primary == "memory_fabric cannot write in a read-only transaction"
              and e.diag.message_detail == "The transaction is read-only.", f"{name} in BEGIN READ ONLY through the router: {describe(e)}")
    # an ORM's read-only session: default_transaction_read_only
    with conn("router", AGENT) as c:
        c.execute("SET default_transaction_read_only = on")
        c.execute("SET memory_fabric.tenant_id = 'ro_a'")
        e = error_of(lambda: c.execute(CRP, ("ro_a", text)))
    check(e is not None and e.sqlstate == "25006", f"capture_review_promote with default_transaction_read_only: {describe(e)}")
    after = on("shard0", "SELECT count(*) FROM memory_fabric.tenant_grants")[0][0] + \
        on("shard1", "SELECT count(*) FROM memory_fabric.tenant_grants")[0][0]
    check(candidates_with(text) == before and after == grants, "nothing of them reached a shard")
    # one node says the same
    with conn("shard0") as c:
        c.execute("BEGIN READ ONLY")
        e = error_of(lambda: c.execute("SELECT id FROM memory_fabric.capture_memory('ro_a', 'x', 'agent', 'INTERNAL')"))
    check(e is not None and e.sqlstate == "25006" and e.diag.message_primary == "memory_fabric cannot write in a read-only transaction",
          f"... as one node refuses it: {describe(e)}")

    # reads work in a read-only router transaction, and run read-only on the shard
    reads = {
        "recall": "SELECT count(*) FROM memory_fabric.recall('ro_a', 'support', user_id => 'cus_ro')",
        "recall_fact": "SELECT count(*) FROM memory_fabric.recall_fact('ro_a', 'support', 'e', 'p')",
        "explain_recall": f"SELECT count(*) FROM memory_fabric.explain_recall('ro_a', '{mid}', 'support', 'cus_ro')",
        "memory_history": f"SELECT count(*) FROM memory_fabric.memory_history('{mid}')",
        "review_status": f"SELECT count(*) FROM memory_fabric.review_status('{cid}')",
        "candidate_evidence": f"SELECT count(*) FROM memory_fabric.candidate_evidence('{cid}')",
        "my_tenants": "SELECT count(*) FROM memory_fabric.my_tenants()",
        "verify_audit": "SELECT count(*) FROM memory_fabric.verify_audit('ro_a')",
        "a view": "SELECT count(*) FROM memory_fabric.candidates",
        "metrics_rollup": "SELECT count(*) FROM memory_fabric_router.metrics_rollup()",
    }
    # each of these finds a row; the others may find none
    finds = {"recall", "explain_recall", "memory_history", "review_status", "my_tenants", "a view", "metrics_rollup"}
    for name, sql in reads.items():
        # a reviewer reads (fl_admin's recalls are logged on the shards, test_move.py); admins roll up
        role = "fl_admin" if name in ("metrics_rollup", "verify_audit") else "fl_rev1"
        try:
            rows, e = as_role(role, sql, pin="ro_a", read_only=True), None
        except psycopg.Error as x:
            rows, e = None, x
        check(e is None and (name not in finds or rows[0][0] >= 1),
              f"{name} in a read-only router transaction: {describe(e) if e else rows}")
    # the shard transaction of a read from a read-only router transaction is read-only: recall's log
    with conn("shard0") as c:
        c.execute(f"ALTER ROLE {AGENT} IN DATABASE memory_fabric SET memory_fabric.log_recalls = on")
    try:
        logged = on("shard0", "SELECT count(*) FROM memory_fabric.recall_log WHERE tenant_id = 'ro_a'")[0][0]
        e = error_of(lambda: as_role(AGENT, reads["recall"], pin="ro_a", read_only=True))
        with conn("shard0", AGENT) as c:
            e1 = error_of(lambda: (c.execute("BEGIN READ ONLY"), c.execute("SELECT set_config('memory_fabric.tenant_id', 'ro_a', true)"),
                                   c.execute(reads["recall"])))
        check(e is not None and e1 is not None and (e.sqlstate, e.diag.message_primary) == (e1.sqlstate, e1.diag.message_primary),
              f"recall with log_recalls on, read-only: the router ({describe(e)}) as one node ({describe(e1)})")
        n = as_role(AGENT, reads["recall"], pin="ro_a")[0][0]
        now = on("shard0", "SELECT count(*) FROM memory_fabric.recall_log WHERE tenant_id = 'ro_a'")[0][0]
        check(n >= 1 and now == logged + 1, f"... and in a read-write transaction it recalls and logs ({logged} -> {now})")
    finally:
        with conn("shard0") as c:
            c.execute(f"ALTER ROLE {AGENT} IN DATABASE memory_fabric RESET memory_fabric.log_recalls")


def move_waits(tenant: str) -> bool:
    """The move is waiting for a call in flight: on the old shard's gate (the shard drains), or on
    the router (a router-side drain)."""
    return bool(on("shard0", "SELECT 1 FROM pg_locks WHERE NOT granted AND relation = to_regclass(%s)", gate_of(tenant))) or \
        bool(on("router", "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'CALL memory_fabric_router.move_tenant%%'"))


def held_write(tenant: str, read_only: bool) -> None:
    """A write of the tenant in flight on shard 0, held there by a table lock, while the tenant is
    moved to shard 1 with erase_old. Nothing may be lost."""
    place(tenant, 0, [AGENT])
    as_role(AGENT, CRP, tenant, f"{tenant} was here before the move.", pin=tenant)
    text = f"{tenant} written while it moved ({'read-only' if read_only else 'read-write'} router transaction)."
    lock = conn("shard0", autocommit=False)
    lock.execute("LOCK TABLE memory_fabric.candidates IN SHARE MODE")
    writer = conn("router", AGENT)
    how = "the proxy called directly in BEGIN READ ONLY" if read_only else "capture_review_promote in BEGIN"

    def write() -> str:
        writer.execute("BEGIN READ ONLY" if read_only else "BEGIN")
        writer.execute("SELECT set_config('memory_fabric.tenant_id', %s, true)", (tenant,))
        if read_only:
            cid = writer.execute(P_CRP, (0, tenant, tenant, text)).fetchone()[0]
        else:
            cid = writer.execute(CRP, (tenant, text)).fetchone()[0]
        writer.execute("COMMIT")
        return cid
    w = Bg(write)
    blocked = wait_until(lambda: bool(on("shard0", "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                                                   "AND usename = %s", AGENT)), 10)
    check(blocked, f"{tenant}: the write ({how}) is in flight on shard 0, held by a lock")
    m = Bg(lambda: move(tenant, 1, erase_old=True, drain_ms=30000))
    waited = wait_until(lambda: m.is_alive() is False or move_waits(tenant), 5)
    check(waited and m.is_alive() and move_waits(tenant),
          f"{tenant}: the move waits for the write in flight (move finished: {not m.is_alive()}, error {describe(m.error) if m.error else None})")
    lock.execute("COMMIT")
    lock.close()
    w.join(30)
    m.join(60)
    writer.close()
    cid = w.result
    check(w.error is None and cid is not None, f"{tenant}: the write was acknowledged ({cid}; {describe(w.error)})")
    check(m.error is None and m.result and m.result["moved"], f"{tenant}: the move completed ({describe(m.error) if m.error else m.result.get('rows')})")
    on1 = on("shard1", "SELECT count(*) FROM memory_fabric.candidates WHERE id = %s", cid)[0][0] if cid else 0
    check(on1 == 1 and census(0, tenant) == 0,
          f"{tenant}: the acknowledged write is on the new shard ({on1}), nothing is left on the old one ({census(0, tenant)} rows)")


def retried() -> None:
    """A call the old shard refuses because the tenant is frozen there, while the directory still
    names that shard (it read the directory just before the pause), waits for the directory and is
    run where it names next."""
    place("ro_w", 0, [AGENT])
    on("shard1", "SELECT memory_fabric.grant_tenant(%s, 'ro_w')", AGENT)   # where it will be served
    on("shard0", "SELECT memory_fabric_shard.move_mark('ro_w', 'moving', 1)")
    try:
        c = Bg(lambda: as_role(AGENT, "SELECT id FROM memory_fabric.capture_memory('ro_w', 'Ro_w arrives during its move.', "
                                      "'agent', 'INTERNAL')", pin="ro_w"))
        time.sleep(0.4)
        on("router", "UPDATE memory_fabric_router.tenants SET shard = 1 WHERE tenant_id = 'ro_w'")
        c.join(30)
        cid = c.result[0][0] if c.result else None
        on1 = on("shard1", "SELECT count(*) FROM memory_fabric.candidates WHERE id = %s", cid)[0][0] if cid else 0
        check(c.error is None and on1 == 1 and c.took >= 0.4,
              f"a call the old shard refused (tenant frozen there) ran on the new one once the directory named it, "
              f"after {c.took:.2f} s ({describe(c.error) if c.error else cid})")
        on("router", "UPDATE memory_fabric_router.tenants SET shard = 0 WHERE tenant_id = 'ro_w'")
        with conn("router", AGENT) as rc:
            rc.execute("SET memory_fabric_router.pause_timeout = 300")
            t0 = time.monotonic()
            e = error_of(lambda: as_role(AGENT, "SELECT id FROM memory_fabric.capture_memory('ro_w', 'Never.', 'agent', 'INTERNAL')",
                                         pin="ro_w", c=rc))
            took = time.monotonic() - t0
        check(e is not None and e.sqlstate == "55000" and "being moved" in e.diag.message_primary and 0.25 < took < 5,
              f"... and gives the refusal back after pause_timeout ({took:.2f} s): {describe(e)}")
        with conn("router", AGENT) as rc:
            t0 = time.monotonic()
            e = error_of(lambda: (rc.execute("BEGIN ISOLATION LEVEL REPEATABLE READ"),
                                  rc.execute("SELECT set_config('memory_fabric.tenant_id', 'ro_w', true)"),
                                  rc.execute("SELECT id FROM memory_fabric.capture_memory('ro_w', 'Never.', 'agent', 'INTERNAL')")))
            took = time.monotonic() - t0
        check(e is not None and e.sqlstate == "55000" and took < 1,
              f"in a repeatable read router transaction (its directory would not change) at once ({took:.2f} s): {describe(e)}")
    finally:
        on("shard0", "SELECT memory_fabric_shard.move_mark('ro_w', NULL, 0)")


def main() -> None:
    ensure_role(["router", "shard0", "shard1"], AGENT, "memory_fabric_agent")
    refused_writes()
    held_write("ro_b", read_only=True)
    held_write("ro_c", read_only=False)
    retried()
    done("test_readonly")


if __name__ == "__main__":
    main()
