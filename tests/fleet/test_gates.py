"""No role without a grant for a tenant can hold that tenant's gate or ask the directory where it
is (issue 39, item 3; router/DESIGN.md §4 and §7), on the 2-shard fleet of tests/fleet/run.sh.

Step by step, deterministic:
1. memory_fabric_router.shard_for() is the owner's only: a role gets 42501, not the shard (and
   no gate).
2. A role with no grant for gt_x pins it, reads the router's view of its candidates (which row-
   level security leaves empty, without an error) and keeps the transaction open: a move of gt_x
   completes at once, and gt_x's own calls meanwhile do not wait.
3. On a shard, directly: such a role cannot lock a gate view, and memory_fabric_shard._serve() takes
   no gate for it; for a role with the grant it does (so the check above is not vacuous).
4. A role with the grant that keeps a router transaction open after a call of the tenant does not
   hold the move either (the drain is per call, on the shard); its next call in that transaction
   goes to the new shard.
"""

from __future__ import annotations

from fleetlib import (Bg, as_role, check, conn, describe, done, ensure_role, error_of, gate_of, move, on, place,
                      shard_of)

AGENT = "fl_agent"
NOGRANT = "gt_nogrant"   # a reviewer (it may read the views) with no grant for gt_x


def held_gate_count(node: str, pid: int) -> int:
    return on(node, "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
                    "WHERE l.pid = %s AND c.relnamespace = 'memory_fabric_shard'::regnamespace AND c.relname LIKE 'gate\\_%%'", pid)[0][0]


def main() -> None:
    ensure_role(["router", "shard0", "shard1"], AGENT, "memory_fabric_agent")
    ensure_role(["router", "shard0", "shard1"], NOGRANT, "memory_fabric_reviewer")
    place("gt_x", 0, [AGENT])
    place("gt_y", 0, [AGENT])
    for t in ("gt_x", "gt_y"):
        as_role(AGENT, "SELECT 1 FROM memory_fabric.capture_memory(%s, %s, 'agent', 'INTERNAL', user_id => 'cus_g', "
                       "intent_id => 'support')", t, f"Tenant {t} keeps its gate.", pin=t)

    # 1. the directory is not a role's to read
    e = error_of(lambda: as_role(NOGRANT, "SELECT memory_fabric_router.shard_for('gt_x')"))
    check(e is not None and e.sqlstate == "42501", f"a role calling shard_for(): {describe(e)}")
    e = error_of(lambda: as_role(AGENT, "SELECT memory_fabric_router.shard_for('gt_x')", pin="gt_x"))
    check(e is not None and e.sqlstate == "42501", f"... a role with the grant too (routed calls find the shard themselves): {describe(e)}")

    # 2. an open transaction of a role without a grant, after a call that succeeded for it
    holder = conn("router", NOGRANT)
    holder.execute("BEGIN")
    holder.execute("SELECT set_config('memory_fabric.tenant_id', 'gt_x', true)")
    n = holder.execute("SELECT count(*) FROM memory_fabric.candidates").fetchone()[0]
    check(n == 0, f"a role without a grant reads gt_x's candidates through the router: {n} rows, no error")
    try:
        call = Bg(lambda: as_role(AGENT, "SELECT count(*) FROM memory_fabric.recall('gt_x', 'support', user_id => 'cus_g')",
                                  pin="gt_x"))
        call.join(10)
        check(call.error is None and call.took < 1, f"gt_x's own call meanwhile: {call.took:.2f} s ({describe(call.error)})")
        m = Bg(lambda: move("gt_x", 1, drain_ms=2000))
        m.join(30)
        check(m.error is None and m.result and m.result["moved"] and m.took < 2,
              f"gt_x moves while that transaction stays open: {m.took:.2f} s ({describe(m.error) if m.error else 'moved'})")
        check(shard_of("gt_x") == 1, "the directory says shard 1")
    finally:
        holder.execute("ROLLBACK")
        holder.close()

    # 3. the gates on a shard: no role locks one itself, _serve takes one only for a role that may act
    with conn("shard1", NOGRANT) as c:
        c.execute("BEGIN")
        e = error_of(lambda: c.execute(f"LOCK TABLE {gate_of('gt_x')} IN ROW SHARE MODE"))
    check(e is not None and e.sqlstate == "42501", f"a role locks a shard's gate itself: {describe(e)}")
    for role, want in ((NOGRANT, 0), (AGENT, 1)):
        with conn("shard1", role) as c:
            c.execute("BEGIN")
            c.execute("SELECT memory_fabric_shard._serve('gt_x', 'gt_x')")
            held = held_gate_count("shard1", c.info.backend_pid)
            c.execute("ROLLBACK")
        check(held == want, f"_serve() on shard 1 for {role} ({'no grant' if want == 0 else 'granted'}) holds {held} gate(s)")

    # 4. a role with the grant, its router transaction left open after a call of the tenant
    open_tx = conn("router", AGENT)
    open_tx.execute("BEGIN")
    open_tx.execute("SELECT set_config('memory_fabric.tenant_id', 'gt_y', true)")
    open_tx.execute("SELECT count(*) FROM memory_fabric.recall('gt_y', 'support', user_id => 'cus_g')")
    try:
        m = Bg(lambda: move("gt_y", 1, drain_ms=2000))
        m.join(30)
        check(m.error is None and m.result and m.result["moved"] and m.took < 2,
              f"gt_y moves while a router transaction of it stays open after a call: {m.took:.2f} s "
              f"({describe(m.error) if m.error else 'moved'})")
        cid = open_tx.execute("SELECT id FROM memory_fabric.capture_memory('gt_y', 'Gt_y after its move.', 'agent', 'INTERNAL')").fetchone()[0]
        open_tx.execute("COMMIT")
        on1 = on("shard1", "SELECT count(*) FROM memory_fabric.candidates WHERE id = %s", cid)[0][0]
        check(on1 == 1, "... and the next call of that transaction runs on the new shard")
    finally:
        open_tx.close()
    done("test_gates")


if __name__ == "__main__":
    main()
