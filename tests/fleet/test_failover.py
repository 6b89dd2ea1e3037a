"""A shard's primary is lost while clients write through the router (tests/fleet/run_ha.sh starts
the fleet: scripts/fleet.sh start --ha; router/HA.md, router/DESIGN.md §8).

Two writers, one per tenant (fo_t0 on shard 0, fo_t1 on shard 1, by the directory), each running
capture -> review -> promote through the router as an agent role, pinned, and recording every
acknowledged id. After a few seconds shard 0's primary node is killed (kill -9 of its pg_autoctl
and postmaster, scripts/fleet_ha.sh mf_ha_kill_primary). Checks: the monitor promotes the secondary;
fo_t0's writes resume through the router within LIMIT seconds (reported); every id acknowledged
(before the kill and after) is there afterwards, read through the router; fo_t1 never saw an
error; the killed node rejoins as the secondary and a recall on shard 0's standby finds a memory
promoted through the router.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

import psycopg

SOCK = os.environ["MF_FLEET_SOCK"]
ROUTER_PORT = int(os.environ["MF_FLEET_PORT"])
DB = os.environ.get("MF_FLEET_DB", "memory_fabric")
HA_DIR = os.environ["MF_HA_DIR"]
HA_PORT = int(os.environ["MF_HA_PORT"])
HA_SOCK = os.environ["MF_HA_SOCK"]       # the nodes' sockets: the only way in for roles
ROOT = os.environ["MF_ROOT"]
SUPER = os.environ.get("MF_PGUSER", "postgres")
LIMIT = float(os.environ.get("MF_FAILOVER_LIMIT_S", "60"))
ROLES = {"fo_agent": "memory_fabric_agent", "fo_rev": "memory_fabric_reviewer"}
PLACE = {"fo_t0": 0, "fo_t1": 1}
KILLED_SHARD = 0

failures: list[str] = []


def check(cond: bool, what: str) -> None:
    print(("ok - " if cond else "not ok - ") + what.replace("\n", " "), flush=True)
    if not cond:
        failures.append(what)


def node_port(k: int, m: str) -> int:
    return HA_PORT + 1 + 2 * k + (1 if m == "b" else 0)


def group_dsn(k: int, user: str = SUPER) -> str:
    return (f"host={HA_SOCK},{HA_SOCK} port={node_port(k, 'a')},{node_port(k, 'b')} dbname={DB} "
            f"target_session_attrs=read-write connect_timeout=2 user={user}")


def router(user: str = SUPER) -> psycopg.Connection:
    return psycopg.connect(host=SOCK, port=ROUTER_PORT, user=user, dbname=DB, autocommit=True)


def monitor_sql(sql: str) -> list[tuple]:
    with psycopg.connect(f"host={HA_SOCK} port={HA_PORT} dbname=pg_auto_failover user={SUPER} connect_timeout=2",
                         autocommit=True) as c:
        return c.execute(sql).fetchall()


def primary_of(k: int) -> str | None:
    rows = monitor_sql("SELECT nodename FROM pgautofailover.node WHERE formationid = 'shard%d' AND reportedstate "
                       "IN ('primary', 'wait_primary', 'single') AND goalstate = reportedstate ORDER BY nodename LIMIT 1" % k)
    return rows[0][0] if rows else None


def ha(script: str, timeout: int = 240) -> str:
    """A snippet of bash with scripts/fleet_ha.sh sourced (MF_HA_DIR/MF_HA_PORT of this fleet)."""
    # files, not pipes: a pg_autoctl started in the background must not hold our pipe open
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        r = subprocess.run(["bash", "-c", f'. "$MF_ROOT/scripts/fleet_ha.sh"; set -e; {script}'],
                           stdout=out, stderr=err, stdin=subprocess.DEVNULL, timeout=timeout,
                           env=dict(os.environ, MF_HA_DIR=HA_DIR, MF_HA_PORT=str(HA_PORT), MF_HA_DB=DB))
        out.seek(0); err.seek(0)
        if r.returncode != 0:
            raise RuntimeError(f"{script}: rc {r.returncode}: {err.read()[-2000:]}")
        return out.read().strip()


def pinned(c: psycopg.Connection, tenant: str, sql: str, *args: Any) -> list[tuple]:
    with c.transaction():
        c.execute("SELECT set_config('memory_fabric.tenant_id', %s, true)", (tenant,))
        return c.execute(sql, args).fetchall()


def setup() -> None:
    # roles made on the router, copied to every group's primary (they replicate to its secondary)
    with router() as c:
        for role, member in ROLES.items():
            if not c.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone():
                c.execute(f"CREATE ROLE {role} LOGIN IN ROLE {member}")
        done = c.execute("SELECT shard, action, role_name FROM memory_fabric_router.sync_roles()").fetchall()
    check(sum(1 for d in done if d[1] == "created") == 2 * len(ROLES),
          f"the router's roles copied to both groups' primaries ({len(done)} actions)")
    with router() as c:
        for t, s in PLACE.items():
            c.execute("INSERT INTO memory_fabric_router.tenants (tenant_id, shard) VALUES (%s, %s) "
                      "ON CONFLICT (tenant_id) DO UPDATE SET shard = excluded.shard", (t, s))
            for role in ROLES:
                c.execute("SELECT memory_fabric.grant_tenant(%s, %s)", (role, t))


def pipeline(c: psycopg.Connection, tenant: str, text: str, user: str, acked: list, n: int = 0) -> tuple[str, str]:
    """capture -> review -> promote through the router; each id is recorded once its call returns.
    A subject of its own per write (entity), so that no write conflicts with an earlier one."""
    cid = pinned(c, tenant, "SELECT id FROM memory_fabric.capture_memory(%s, %s, 'agent', 'INTERNAL', user_id => %s, "
                 "intent_id => 'support', entity => %s, predicate => 'note', value => %s::jsonb)",
                 tenant, text, user, f"{user}_{n}", '"x"')[0][0]
    acked.append((time.time(), "candidate", str(cid)))
    pinned(c, tenant, "SELECT status FROM memory_fabric.review_candidate(%s)", cid)
    mid = pinned(c, tenant, "SELECT id FROM memory_fabric.promote(%s)", cid)[0][0]
    acked.append((time.time(), "memory", str(mid)))
    return str(cid), str(mid)


class Writer(threading.Thread):
    def __init__(self, tenant: str):
        super().__init__(daemon=True)
        self.tenant = tenant
        self.acked: list[tuple[float, str, str]] = []   # (time, kind, id) after the call returned
        self.errors: list[tuple[float, str]] = []
        self.stop = threading.Event()

    def run(self) -> None:
        c, n = None, 0
        while not self.stop.is_set():
            try:
                if c is None or c.closed:
                    c = router("fo_agent")
                n += 1
                pipeline(c, self.tenant, f"Tenant {self.tenant} write {n} at {time.time():.3f}.", "cus_fo", self.acked, n)
            except Exception as e:  # the shard is unreachable (08006 from the router), or the router connection
                self.errors.append((time.time(), f"{type(e).__name__}: {(str(e).splitlines() or [''])[0]}"))
                if c is not None and c.broken:
                    c = None
                time.sleep(0.05)
        if c is not None:
            c.close()


def gap(times: list[float]) -> float:
    return max((b - a for a, b in zip(times, times[1:])), default=0.0)


def main() -> None:
    setup()
    with router() as c:
        for t, s in PLACE.items():
            got = c.execute("SELECT memory_fabric_router.shard_for(%s)", (t,)).fetchone()[0]
            check(got == s, f"{t} is routed to shard {s}")
    k = KILLED_SHARD
    before = primary_of(k)
    check(before is not None, f"shard{k} has a primary ({before})")

    writers = {t: Writer(t) for t in PLACE}
    for w in writers.values():
        w.start()
    time.sleep(4)
    w0, w1 = writers["fo_t0"], writers["fo_t1"]
    check(len(w0.acked) > 0 and len(w1.acked) > 0 and not w0.errors,
          f"writes through the router before the kill: fo_t0 {len(w0.acked)} ids, fo_t1 {len(w1.acked)} ids")

    t_kill = time.time()
    killed = ha(f"mf_ha_kill_primary {k} node")
    print(f"# kill -9 of {killed} (pg_autoctl and postmaster) at {t_kill:.3f}", flush=True)
    acked_before_kill = list(w0.acked)

    # the monitor promotes the secondary
    newp, t_promoted = None, None
    while time.time() - t_kill < 90:
        try:
            p = primary_of(k)
        except psycopg.Error:
            p = None
        if p and p != killed:
            newp, t_promoted = p, time.time()
            break
        time.sleep(0.2)
    check(newp is not None, f"shard{k}: the monitor promoted the secondary ({newp}, "
          f"+{(t_promoted or time.time()) - t_kill:.2f} s)")

    # writes resume through the router
    t_back = None
    while time.time() - t_kill < LIMIT + 30:
        errs = [e for e in w0.errors if e[0] > t_kill]
        if errs:
            after = [a for a in w0.acked if a[0] > errs[0][0]]
            if after:
                t_back = after[0][0]
                break
        elif time.time() - t_kill > 30 and any(a[0] > t_kill + 30 for a in w0.acked):
            t_back = t_kill  # never failed (not expected after a node kill)
            break
        time.sleep(0.1)
    time.sleep(3)
    for w in writers.values():
        w.stop.set()
    for w in writers.values():
        w.join(30)

    errs0 = [e for e in w0.errors if e[0] > t_kill]
    if t_back is not None:
        secs = t_back - t_kill
        print(f"# fo_t0: first failed call +{errs0[0][0] - t_kill:.2f} s after the kill; "
              f"{len(errs0)} failed attempts; kinds: {sorted(set(e[1][:90] for e in errs0))[:4]}", flush=True)
        print(f"RESULT routed failover_seconds={secs:.2f}", flush=True)
        check(secs <= LIMIT, f"fo_t0: writes through the router resumed {secs:.2f} s after the kill (limit {LIMIT:.0f} s)")
    else:
        check(False, f"fo_t0: writes through the router did not resume within {LIMIT + 30:.0f} s")

    # every acknowledged id is present, read through the router (the reviewer's views, pinned)
    with router("fo_rev") as c:
        for t, w in writers.items():
            cands = {str(r[0]) for r in pinned(c, t, "SELECT id FROM memory_fabric.candidates")}
            mems = {str(r[0]) for r in pinned(c, t, "SELECT id FROM memory_fabric.promoted_memory")}
            want_c = [i for _, kind, i in w.acked if kind == "candidate"]
            want_m = [i for _, kind, i in w.acked if kind == "memory"]
            miss = [i for i in want_c if i not in cands] + [i for i in want_m if i not in mems]
            extra = ""
            if w is w0:
                nb = len(acked_before_kill)
                miss_before = [i for _, kind, i in acked_before_kill if i not in (cands if kind == "candidate" else mems)]
                check(not miss_before, f"{t}: all {nb} ids acknowledged before the kill are present after the failover")
                extra = f" ({nb} before the kill)"
            check(not miss, f"{t}: all {len(want_c)} acknowledged captures and {len(want_m)} promotions are "
                  f"present{extra}, read through the router" + (f"; missing {miss[:5]}" if miss else ""))

    # the other shard never stopped
    check(not w1.errors, f"fo_t1 (shard 1): {len(w1.acked)} acknowledged ids, {len(w1.errors)} errors "
          f"{w1.errors[:2] if w1.errors else ''}; longest gap between acks {gap([a[0] for a in w1.acked]):.3f} s")

    # the killed node rejoins as the secondary; a recall on shard 0's standby
    t0 = time.time()
    try:
        ha(f'mf_ha_launch "$MF_HA_DIR/{killed}" {killed} >&2; mf_ha_wait_states {k} "primary secondary" 180 >&2')
        check(True, f"shard{k}: {killed} rejoined as the secondary ({time.time() - t0:.1f} s)")
    except Exception as e:
        check(False, f"shard{k}: {killed} did not rejoin: {e}")
    p = primary_of(k)
    standby = "a" if p and p.endswith("-b") else "b"
    probe = f"probe_{int(time.time() * 1000)}"
    with router("fo_agent") as c:
        _, mid = pipeline(c, "fo_t0", f"Failover probe for {probe}.", probe, [])
    got: Any = None
    for _ in range(50):
        try:
            with psycopg.connect(host=HA_SOCK, port=node_port(k, standby), dbname=DB, user="fo_agent",
                                 connect_timeout=2, autocommit=True) as c:
                rows = pinned(c, "fo_t0", "SELECT pg_is_in_recovery(), r.memory_id FROM "
                              "memory_fabric.recall('fo_t0', 'support', user_id => %s) r", probe)
            got = rows
            if any(str(r[1]) == mid for r in rows):
                break
        except psycopg.Error as e:
            got = e
        time.sleep(0.2)
    check(isinstance(got, list) and any(r[0] is True and str(r[1]) == mid for r in got),
          f"recall on shard{k}-{standby} (hot standby) finds the memory promoted through the router after the failover ({got})")

    # the same recall through the router, asked of a standby (memory_fabric_router.read_from)
    got = None
    on_standby = 0
    for _ in range(50):
        try:
            # the router session stays open while the standby is asked who is connected: PL/Proxy
            # keeps its connection to the node for the session
            with router("fo_agent") as c:
                with c.transaction():
                    c.execute("SELECT set_config('memory_fabric_router.read_from', 'standby', true)")
                    c.execute("SELECT set_config('memory_fabric.tenant_id', 'fo_t0', true)")
                    got = [str(r[0]) for r in c.execute(
                        "SELECT memory_id FROM memory_fabric.recall('fo_t0', 'support', user_id => %s)", (probe,))]
                with psycopg.connect(host=HA_SOCK, port=node_port(k, standby), dbname=DB, user=SUPER,
                                     autocommit=True) as s:
                    on_standby = s.execute("SELECT count(*) FROM pg_stat_activity WHERE usename = 'fo_agent'").fetchone()[0]
            if mid in got and on_standby > 0:
                break
        except psycopg.Error as e:
            got = e
        time.sleep(0.2)
    check(isinstance(got, list) and mid in got and on_standby > 0,
          f"recall through the router with read_from = standby finds it, served by shard{k}-{standby} "
          f"({on_standby} fo_agent connection(s) there; {got})")
    # ... from a read-only router transaction too (an ORM's read-only session); a write there is refused
    with router("fo_agent") as c:
        c.execute("SET default_transaction_read_only = on")
        c.execute("SET memory_fabric_router.read_from = 'standby'")
        c.execute("SET memory_fabric.tenant_id = 'fo_t0'")
        ro = [str(r[0]) for r in c.execute("SELECT memory_id FROM memory_fabric.recall('fo_t0', 'support', user_id => %s)", (probe,))]
        try:
            c.execute("SELECT id FROM memory_fabric.capture_memory('fo_t0', 'Never written.', 'agent', 'INTERNAL')")
            e = None
        except psycopg.Error as x:
            e = x
    check(mid in ro and e is not None and e.sqlstate == "25006",
          f"in a read-only router transaction: recall from the standby finds it, a capture is refused ({e.sqlstate if e else None})")

    if failures:
        print(f"# {len(failures)} failed", flush=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
