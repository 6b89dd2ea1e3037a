"""Adding a shard to a running fleet moves no tenant: scripts/fleet.sh lists every tenant the
shards hold on the shard that holds it before it adds the partition, so a tenant on the hash
default keeps its place though the hash now counts one more shard. Run by tests/fleet/run.sh after
test_router.py and test_move.py, on their fleet (2 shards): it records where every tenant routes,
adds a third shard, and checks that each still routes there and that its memories are still
recalled through the router; the roles of the router are on the new shard (fleet.sh copies them); then a
new tenant on the third shard works."""

from __future__ import annotations

import os
import subprocess
import sys

import psycopg

SOCK = os.environ["MF_FLEET_SOCK"]
BASE = int(os.environ["MF_FLEET_PORT"])
DB = os.environ.get("MF_FLEET_DB", "memory_fabric")
SUPER = os.environ.get("MF_PGUSER", "postgres")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
failures: list[str] = []


def check(cond: bool, what: str) -> None:
    print(("ok - " if cond else "not ok - ") + what, flush=True)
    if not cond:
        failures.append(what)


def conn(port: int, user: str = SUPER) -> psycopg.Connection:
    return psycopg.connect(host=SOCK, port=port, user=user, dbname=DB, autocommit=True)


def tenants_on(shard: int) -> set[str]:
    with conn(BASE + 1 + shard) as c:
        return {r[0] for r in c.execute(
            "SELECT tenant_id FROM memory_fabric.candidates UNION SELECT tenant_id FROM memory_fabric.tenant_grants "
            "EXCEPT SELECT tenant_id FROM memory_fabric_shard.retired WHERE state IN ('moved', 'incoming')")}


def routes() -> dict[str, int]:
    held = {t: k for k in (0, 1) for t in tenants_on(k)}
    with conn(BASE) as c:
        return {t: c.execute("SELECT memory_fabric_router.shard_for(%s)", (t,)).fetchone()[0] for t in held}


def recalled(tenant: str) -> int:
    with conn(BASE, "fl_agent") as c, c.transaction():
        c.execute("SELECT set_config('memory_fabric.tenant_id', %s, true)", (tenant,))
        return c.execute("SELECT count(*) FROM memory_fabric.recall(%s, 'support', user_id => 'cus_1', max_recalls => 100)",
                         (tenant,)).fetchone()[0]


def main() -> None:
    before = routes()
    with conn(BASE) as c:
        unlisted = [t for t in before if not c.execute("SELECT 1 FROM memory_fabric_router.tenants WHERE tenant_id = %s",
                                                         (t,)).fetchone()]
        moved_by_hash = [t for t in unlisted
                         if c.execute("SELECT abs(hashtext(%s) %% 3)", (t,)).fetchone()[0] != before[t]]
    print(f"# tenants: {sorted(before)}; on the hash default: {sorted(unlisted)}; "
          f"whose hash place 3 shards would change: {sorted(moved_by_hash)}", flush=True)
    counts = {t: recalled(t) for t in ("initech",) if t in before}
    r = subprocess.run(["bash", os.path.join(ROOT, "scripts/fleet.sh"), "start", "--shards", "3"],
                       capture_output=True, text=True)
    check(r.returncode == 0, f"a third shard added to the running fleet ({r.returncode}) {r.stderr.strip()[-300:]}")
    after = routes()
    changed = {t: (before[t], after[t]) for t in before if after[t] != before[t]}
    check(not changed, f"every tenant routes where its rows are after the shard was added ({len(before)} tenants; changed: {changed})")
    for t, n in counts.items():
        check(n > 0 and recalled(t) == n, f"{t} (hash default) recalls the same {n} memories through the router")
    # the router connects to the new shard as the calling role: fleet.sh copied the roles there
    with conn(BASE) as c:
        want = {r[0] for r in c.execute("SELECT u.rolname FROM pg_auth_members a JOIN pg_roles g ON g.oid = a.roleid "
                                        "JOIN pg_roles u ON u.oid = a.member WHERE g.rolname = 'memory_fabric_agent' "
                                        "AND NOT u.rolsuper")}
    with conn(BASE + 3) as c:
        have = {r[0] for r in c.execute("SELECT u.rolname FROM pg_auth_members a JOIN pg_roles g ON g.oid = a.roleid "
                                        "JOIN pg_roles u ON u.oid = a.member WHERE g.rolname = 'memory_fabric_agent'")}
    check("fl_agent" in want and want <= have,
          f"the new shard has every agent role of the router with its membership ({len(want)}; missing {sorted(want - have)})")
    with conn(BASE) as c:
        c.execute("INSERT INTO memory_fabric_router.tenants (tenant_id, shard) VALUES ('umbrella', 2)")
        c.execute("SELECT memory_fabric.grant_tenant('fl_agent', 'umbrella')")
    with conn(BASE, "fl_agent") as c, c.transaction():
        c.execute("SELECT set_config('memory_fabric.tenant_id', 'umbrella', true)")
        cid = c.execute("SELECT id FROM memory_fabric.capture_memory('umbrella', 'Umbrella lives on the third shard.', "
                        "'agent', 'INTERNAL', user_id => 'cus_1', intent_id => 'support')").fetchone()[0]
    with conn(BASE + 3) as c:
        on3 = c.execute("SELECT count(*) FROM memory_fabric.candidates WHERE id = %s", (cid,)).fetchone()[0]
    check(on3 == 1, "a tenant placed on the new shard captures there through the router")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
