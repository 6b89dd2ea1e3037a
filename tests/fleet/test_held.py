"""What held before router 0.2.0 and must keep holding through its changes (the shard-side gates,
the read-only proxies, the routing helpers), on the 2-shard fleet of tests/fleet/run.sh after
test_router.py (whose roles it uses):

* SET ROLE and SET SESSION AUTHORIZATION on the router: PL/Proxy connects to the shard as the
  current role, whose grants decide there (a superuser that sets a role without the grant is
  refused like that role), and the shard's gate is taken for that role.
* search_path tricks: a role's own schema first in its search_path, with functions and an operator
  named like those the router and the shard call, changes nothing the router decides.
* An odd tenant id (quotes, a backslash, spaces, non-ASCII) is routed, refused read-only, moved and
  served on its new shard.
"""

from __future__ import annotations

import psycopg

from fleetlib import as_role, census, check, conn, describe, done, ensure_role, error_of, move, on, place, shard_of

ODD = "O'Brien \"odd\" \\ tenant 租户"


def main() -> None:
    ensure_role(["router", "shard0", "shard1"], "fl_agent", "memory_fabric_agent")
    ensure_role(["router", "shard0", "shard1"], "fl_agent_a", "memory_fabric_agent")
    place("hd_x", 0, ["fl_agent"])

    # SET ROLE / SET SESSION AUTHORIZATION on the router
    for how in ("SET ROLE", "SET SESSION AUTHORIZATION"):
        with conn("router") as c:
            c.execute(f"{how} fl_agent_a")
            c.execute("SET memory_fabric.tenant_id = 'hd_x'")
            e = error_of(lambda: c.execute("SELECT count(*) FROM memory_fabric.recall('hd_x', 'support')"))
            who = c.execute("SELECT current_user").fetchone()[0]
        check(e is not None and e.sqlstate == "42501" and "fl_agent_a" in e.diag.message_primary,
              f"{how} fl_agent_a (no grant for hd_x) from a superuser session: the shard refuses that role: {describe(e)} ({who})")
        with conn("router") as c:
            c.execute(f"{how} fl_agent")
            c.execute("BEGIN")
            c.execute("SET LOCAL memory_fabric.tenant_id = 'hd_x'")
            cid = c.execute("SELECT id FROM memory_fabric.capture_memory('hd_x', %s, 'agent', 'INTERNAL')",
                            (f"Hd_x captured after {how}.",)).fetchone()[0]
            c.execute("COMMIT")
        by = on("shard0", "SELECT captured_by FROM memory_fabric.candidates WHERE id = %s", cid)
        check(by == [("fl_agent",)], f"{how} fl_agent: the capture runs on the shard as fl_agent ({by})")

    # search_path tricks: a schema of the role's own, first, with look-alikes
    with conn("router") as c:
        c.execute("DROP SCHEMA IF EXISTS hd_evil CASCADE")
        c.execute("CREATE SCHEMA hd_evil AUTHORIZATION fl_agent_a")
    with conn("router", "fl_agent_a") as c:
        c.execute("CREATE FUNCTION hd_evil.current_setting(text, boolean) RETURNS text LANGUAGE sql AS $$ SELECT 'hd_x' $$")
        c.execute("CREATE FUNCTION hd_evil.current_setting(text) RETURNS text LANGUAGE sql AS $$ SELECT 'off' $$")
        c.execute("CREATE FUNCTION hd_evil.hashtext(text) RETURNS integer LANGUAGE sql AS $$ SELECT 0 $$")
        c.execute("CREATE FUNCTION hd_evil.eq(text, text) RETURNS boolean LANGUAGE sql AS $$ SELECT true $$")
        c.execute("CREATE OPERATOR hd_evil.= (LEFTARG = text, RIGHTARG = text, FUNCTION = hd_evil.eq)")
        c.execute("SET search_path = hd_evil, pg_catalog, public")
        # no pin: the router must still see none
        e = error_of(lambda: c.execute("SELECT count(*) FROM memory_fabric.recall('hd_x', 'support')"))
        check(e is not None and e.sqlstate == "42501" and "is not set" in e.diag.message_primary,
              f"with look-alikes of current_setting, hashtext and = first in search_path, an unpinned call: {describe(e)}")
        c.execute("BEGIN READ ONLY")
        c.execute("SET LOCAL memory_fabric.tenant_id = 'hd_x'")
        e = error_of(lambda: c.execute("SELECT id FROM memory_fabric.capture_memory('hd_x', 'Never.', 'agent', 'INTERNAL')"))
        c.execute("ROLLBACK")
        check(e is not None and e.sqlstate == "25006", f"... a write in a read-only transaction is still refused: {describe(e)}")
        e = error_of(lambda: c.execute("SELECT memory_fabric_router.shard_for('hd_x')"))
        check(e is not None and e.sqlstate == "42501", f"... shard_for still refused: {describe(e)}")
    with conn("router") as c:
        c.execute("DROP SCHEMA hd_evil CASCADE")

    # an odd tenant id, end to end
    place(ODD, 0, ["fl_agent"])
    cid = as_role("fl_agent", "SELECT id FROM memory_fabric.capture_memory(%s, 'An odd tenant keeps notes.', 'agent', 'INTERNAL', "
                  "user_id => 'cus_o', intent_id => 'support')", ODD, pin=ODD)[0][0]
    check(on("shard0", "SELECT tenant_id FROM memory_fabric.candidates WHERE id = %s", cid) == [(ODD,)],
          "an odd tenant id is routed to its shard and stored as given")
    e = error_of(lambda: as_role("fl_agent", "SELECT id FROM memory_fabric.capture_memory(%s, 'x', 'agent', 'INTERNAL')", ODD,
                                 pin=ODD, read_only=True))
    check(e is not None and e.sqlstate == "25006", f"... refused in a read-only transaction: {describe(e)}")
    try:
        rep = move(ODD, 1, erase_old=True)
        e = None
    except psycopg.Error as x:
        rep, e = None, x
    check(e is None and rep["moved"] and shard_of(ODD) == 1 and census(0, ODD) == 0,
          f"... moved to shard 1 with erase_old ({describe(e) if e else rep['rows']})")
    n = as_role("fl_agent", "SELECT count(*) FROM memory_fabric.review_status(%s)", cid, pin=ODD)[0][0]
    check(n == 1, "... and served there")
    e = error_of(lambda: on("shard0", "SELECT memory_fabric_shard._serve(%s, %s)", ODD, ODD))
    check(e is not None and e.sqlstate == "55000" and ODD in e.diag.message_primary,
          f"... the old shard refuses it, naming it as it is: {describe(e)}")
    done("test_held")


if __name__ == "__main__":
    main()
