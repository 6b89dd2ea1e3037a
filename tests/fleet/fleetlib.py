"""What the fleet tests share: connections to the nodes of the fleet tests/fleet/run.sh started,
calls through the router as a role with a pin, TAP lines, and the sessions a test drives step by
step (a statement started in a thread, waited for until it blocks on a lock, released)."""

from __future__ import annotations

import os
import threading
import time
from typing import Any, Callable

import psycopg

SOCK = os.environ["MF_FLEET_SOCK"]
BASE = int(os.environ["MF_FLEET_PORT"])
DB = os.environ.get("MF_FLEET_DB", "memory_fabric")
SUPER = os.environ.get("MF_PGUSER", "postgres")
NODES = {"router": BASE, "shard0": BASE + 1, "shard1": BASE + 2, "shard2": BASE + 3}

failures: list[str] = []


def check(cond: bool, what: str) -> None:
    print(("ok - " if cond else "not ok - ") + what.replace("\n", " "), flush=True)
    if not cond:
        failures.append(what)


def done(name: str) -> None:
    print(f"# {name}: {'FAILED: ' + str(len(failures)) if failures else 'all passed'}", flush=True)
    raise SystemExit(1 if failures else 0)


def conn(node: str = "router", user: str = SUPER, autocommit: bool = True) -> psycopg.Connection:
    return psycopg.connect(host=SOCK, port=NODES[node], user=user, dbname=DB, autocommit=autocommit)


def on(node: str, sql: str, *args: Any) -> list[tuple]:
    with conn(node) as c:
        cur = c.execute(sql, args)
        return cur.fetchall() if cur.description else []


def as_role(role: str, sql: str, *args: Any, pin: str | None = None, read_only: bool = False,
            c: psycopg.Connection | None = None) -> list[tuple]:
    """One statement through the router as a role, in a transaction pinned to `pin`."""
    own = c is None
    c = c or conn("router", role)
    try:
        c.execute("BEGIN READ ONLY" if read_only else "BEGIN")
        try:
            if pin is not None:
                c.execute("SELECT set_config('memory_fabric.tenant_id', %s, true)", (pin,))
            cur = c.execute(sql, args)
            rows = cur.fetchall() if cur.description else []
        except BaseException:
            c.execute("ROLLBACK")
            raise
        c.execute("COMMIT")
        return rows
    finally:
        if own:
            c.close()


def error_of(fn: Callable[[], Any]) -> psycopg.Error | None:
    try:
        fn()
    except psycopg.Error as e:
        return e
    return None


def describe(e: BaseException | None) -> str:
    if e is None:
        return "no error"
    if not isinstance(e, psycopg.Error):
        return repr(e)
    return f"{e.sqlstate}: {e.diag.message_primary} | {e.diag.message_detail} | {e.diag.message_hint}"


def ensure_role(nodes: list[str], role: str, member_of: str) -> None:
    for node in nodes:
        with conn(node) as c:
            if not c.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone():
                c.execute(f'CREATE ROLE "{role}" LOGIN IN ROLE {member_of}')


def place(tenant: str, shard: int, roles: list[str]) -> None:
    """The tenant listed on a shard in the directory, each role granted it (on every shard, so
    that a move or a directory change finds the grant wherever the tenant is served)."""
    on("router", "INSERT INTO memory_fabric_router.tenants (tenant_id, shard) VALUES (%s, %s) "
       "ON CONFLICT (tenant_id) DO UPDATE SET shard = excluded.shard, paused = false", tenant, shard)
    for role in roles:
        on("router", "SELECT memory_fabric.grant_tenant(%s, %s)", role, tenant)


def shard_of(tenant: str) -> int:
    return on("router", "SELECT memory_fabric_router.shard_for(%s)", tenant)[0][0]


def census(shard: int, tenant: str) -> int:
    return on(f"shard{shard}", "SELECT rows FROM memory_fabric_shard.move_census(%s)", tenant)[0][0]


def gate_of(tenant: str) -> str:
    return on("shard0", "SELECT 'memory_fabric_shard.gate_' || abs(hashtext(%s) %% 256)", tenant)[0][0]


class Bg(threading.Thread):
    """A callable run in a thread; its result or its exception kept."""

    def __init__(self, fn: Callable[[], Any]):
        super().__init__(daemon=True)
        self.fn = fn
        self.result: Any = None
        self.error: BaseException | None = None
        self.t0 = time.monotonic()
        self.took = 0.0
        self.start()

    def run(self) -> None:
        try:
            self.result = self.fn()
        except BaseException as e:  # kept for the test to look at
            self.error = e
        self.took = time.monotonic() - self.t0


def wait_until(cond: Callable[[], bool], limit: float, step: float = 0.02) -> bool:
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit:
        if cond():
            return True
        time.sleep(step)
    return cond()


def waiting_on_lock(node: str, user: str | None = None, relation: str | None = None) -> bool:
    """Whether a backend on the node waits for a heavyweight lock (of a user, or on a relation)."""
    if relation is not None:
        return bool(on(node, "SELECT 1 FROM pg_locks WHERE NOT granted AND relation = %s::regclass", relation))
    return bool(on(node, "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND usename = %s", user))


def move(tenant: str, to: int, erase_old: bool = False, drain_ms: int | None = None) -> dict:
    with conn() as c:
        if drain_ms is not None:
            c.execute(f"SET memory_fabric_router.drain_timeout = {int(drain_ms)}")
        return c.execute("CALL memory_fabric_router.move_tenant(%s, %s, erase_old => %s)", (tenant, to, erase_old)).fetchone()[0]
