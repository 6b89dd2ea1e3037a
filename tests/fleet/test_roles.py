"""Roles made on the router, and the shards (issue 39, item 4; router/DESIGN.md §3), on the 2-shard
fleet of tests/fleet/run.sh.

1. A role created on the router only, calling through the router: 28000 naming the role and
   saying what to run, not 08006 "shard unavailable" (the shard is up).
2. scripts/fleet.sh roles (memory_fabric_router.sync_roles()) makes it exist on every shard with its
   memberships, a role with quotes and spaces in its name and a role that reaches
   memory_fabric_reviewer through a group included; then its calls work. A second run changes
   nothing.
3. A membership revoked on the router is revoked on the shards by the next run: the role loses what
   it had through it there. A role only a shard has is reported and left alone.
"""

from __future__ import annotations

import os
import subprocess

from fleetlib import as_role, check, conn, describe, done, error_of, on, place

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ODD = 'Rl "odd" agent'          # PL/Proxy appends user=<name> to the connection string: quoting matters
GROUP, NESTED = "rl_group", "rl_nested"


def q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def fleet_roles() -> tuple[int, str]:
    r = subprocess.run(["bash", os.path.join(ROOT, "scripts/fleet.sh"), "roles"], capture_output=True, text=True, timeout=120)
    return r.returncode, r.stderr + r.stdout


def member(node: str, role: str, group: str) -> bool:
    return bool(on(node, "SELECT 1 FROM pg_auth_members a JOIN pg_roles g ON g.oid = a.roleid JOIN pg_roles u ON u.oid = a.member "
                         "WHERE g.rolname = %s AND u.rolname = %s", group, role))


def exists(node: str, role: str) -> bool:
    return bool(on(node, "SELECT 1 FROM pg_roles WHERE rolname = %s", role))


def main() -> None:
    with conn("router") as c:
        c.execute(f"CREATE ROLE {q(ODD)} LOGIN IN ROLE memory_fabric_agent")
        c.execute(f"CREATE ROLE {GROUP} NOLOGIN IN ROLE memory_fabric_reviewer")
        c.execute(f"CREATE ROLE {NESTED} LOGIN IN ROLE {GROUP}")
    place("rl_t", 0, [])

    # 1. the role is only on the router
    e = error_of(lambda: as_role(ODD, "SELECT count(*) FROM memory_fabric.recall('rl_t', 'support')", pin="rl_t"))
    check(e is not None and e.sqlstate == "28000" and e.diag.message_primary == f'role "{ODD}" does not exist on shard 0'
          and "sync_roles" in (e.diag.message_hint or "") and "fleet.sh roles" in (e.diag.message_hint or ""),
          f"a role the shard lacks: {describe(e)}")
    e = error_of(lambda: as_role(ODD, "SELECT count(*) FROM memory_fabric.my_tenants()"))
    check(e is not None and e.sqlstate == "28000" and ODD in e.diag.message_primary,
          f"... on a call that runs on every shard: {describe(e)}")

    # 2. fleet.sh roles
    rc, out = fleet_roles()
    check(rc == 0 and all(exists(f"shard{k}", r) for k in (0, 1) for r in (ODD, GROUP, NESTED))
          and all(member(f"shard{k}", ODD, "memory_fabric_agent") and member(f"shard{k}", NESTED, GROUP)
                  and member(f"shard{k}", GROUP, "memory_fabric_reviewer") for k in (0, 1)),
          f"fleet.sh roles: the roles and their memberships on both shards (rc {rc})")
    print("# " + out.strip().replace("\n", "\n# "), flush=True)
    attrs = on("shard0", "SELECT rolcanlogin, rolinherit, rolsuper FROM pg_roles WHERE rolname IN (%s, %s) ORDER BY rolname", GROUP, NESTED)
    check(attrs == [(False, True, False), (True, True, False)], f"with the router's attributes (NOLOGIN group, LOGIN user): {attrs}")
    for role in (ODD, NESTED):
        on("router", "SELECT memory_fabric.grant_tenant(%s, 'rl_t')", role)
    cid = as_role(ODD, "SELECT id FROM memory_fabric.capture_memory('rl_t', 'Rl_t hears from an odd role.', 'agent', 'INTERNAL')",
                  pin="rl_t")[0][0]
    check(cid is not None, f"the role with quotes in its name captures through the router ({cid})")
    n = as_role(NESTED, "SELECT count(*) FROM memory_fabric.candidates", pin="rl_t")[0][0]
    check(n == 1, f"{NESTED}, a reviewer through {GROUP}, reads the view through the router ({n} rows)")
    rc, out = fleet_roles()
    check(rc == 0 and "every shard has the router's roles" in out, f"a second run has nothing to do: {out.strip()[-120:]}")

    # 3. a membership revoked on the router, a role only a shard has
    on("router", f"REVOKE {GROUP} FROM {NESTED}")
    on("shard1", "CREATE ROLE rl_shard_only LOGIN IN ROLE memory_fabric_agent")
    rc, out = fleet_roles()
    check(rc == 0 and not member("shard0", NESTED, GROUP) and not member("shard1", NESTED, GROUP),
          f"the revoked membership is revoked on both shards ({'revoked' in out})")
    check(member("shard1", "rl_shard_only", "memory_fabric_agent") and "rl_shard_only" in out and "left alone" in out,
          "a role only shard 1 has is reported and left alone")
    e = error_of(lambda: as_role(NESTED, "SELECT count(*) FROM memory_fabric.candidates", pin="rl_t"))
    check(e is not None and e.sqlstate == "42501", f"{NESTED} no longer reads the view: {describe(e)}")
    done("test_roles")


if __name__ == "__main__":
    main()
