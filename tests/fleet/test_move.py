"""Moving a tenant between shards under load (router/DESIGN.md §7), through the 2-shard fleet that
tests/fleet/run.sh starts (after test_router.py, whose roles it reuses or creates).

Tenants: mv_a (shard 0, moved to shard 1 while written and recalled, then back with erase_old),
mv_b (shard 0, stays) and mv_c (shard 1, stays), both recalled during the moves and untouched.
mv_a's history holds every kind of row: its own policy versions (numbers also taken on shard 1,
so the move maps them), candidates, auto and human reviews, approve/reject decisions, promoted,
retracted and erased memories, consents (one revoked), grants, events, recall log, scope versions.
"""

from __future__ import annotations

import json
import os
import random
import sys
import threading
import time
from typing import Any

import psycopg

SOCK = os.environ["MF_FLEET_SOCK"]
BASE = int(os.environ["MF_FLEET_PORT"])
DB = os.environ.get("MF_FLEET_DB", "memory_fabric")
SUPER = os.environ.get("MF_PGUSER", "postgres")
NODES = {"router": BASE, "shard0": BASE + 1, "shard1": BASE + 2}
ROLES = {"fl_agent": "memory_fabric_agent", "fl_rev1": "memory_fabric_reviewer",
         "fl_rev2": "memory_fabric_reviewer", "fl_admin": "memory_fabric_admin"}
PLACE = {"mv_a": 0, "mv_b": 0, "mv_c": 1}
TABLES = {"audit_heads": "tenant_id", "audit_chain": "seq", "policies": "version", "embedding_models": "model", "consents": "id", "candidates": "id", "reviews": "id",
          "decisions": "id", "promoted_memory": "id", "tenant_grants": "id", "events": "id", "recall_log": "id",
          "scope_versions": "key"}

WORDS = ("amber", "basalt", "cobalt", "delta", "ember", "fjord", "garnet", "harbor", "indigo", "jasper", "kelp",
         "lagoon", "marble", "nickel", "onyx", "pumice", "quartz", "russet", "sierra", "tundra", "umber", "violet")

failures: list[str] = []


def check(cond: bool, what: str) -> None:
    print(("ok - " if cond else "not ok - ") + what.replace("\n", " "), flush=True)
    if not cond:
        failures.append(what)


def conn(node: str = "router", user: str = SUPER) -> psycopg.Connection:
    return psycopg.connect(host=SOCK, port=NODES[node], user=user, dbname=DB, autocommit=True)


def as_role(role: str, sql: str, *args: Any, pin: str | None = None, c: psycopg.Connection | None = None,
            read_only: bool = False) -> list[tuple]:
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


def on(node: str, sql: str, *args: Any) -> list[tuple]:
    with conn(node) as c:
        return c.execute(sql, args).fetchall()


def describe(e: BaseException | None) -> str:
    if not isinstance(e, psycopg.Error):
        return repr(e)
    return f"{e.sqlstate}: {e.diag.message_primary} | {e.diag.message_detail} | {e.diag.message_hint}"


def rows_of(shard: int, tenant: str, table: str, pmap: dict | None = None) -> dict[str, str]:
    """A table's rows of a tenant on a shard, {key: row as jsonb text}, without the generated column
    and the node's role OID, with the policy map applied (the source's rows as the target holds them)."""
    where = ("x.key IN (SELECT memory_fabric._scope_version_key(p.tenant_id, p.user_id) FROM memory_fabric.promoted_memory p "
             "WHERE p.tenant_id = %s)") if table == "scope_versions" else "x.tenant_id = %s"
    q = (f"SELECT (memory_fabric_shard._move_map(%s, to_jsonb(x) - 'embedding_bits', %s::jsonb) "
         f"- 'role_oid')::text FROM memory_fabric.{table} x WHERE {where}")
    rows = [json.loads(r[0]) for r in on(f"shard{shard}", q, table, json.dumps(pmap or {}), tenant)]
    return {str(r[TABLES[table]]): r for r in rows}


def census(shard: int, tenant: str) -> int:
    return on(f"shard{shard}", "SELECT rows FROM memory_fabric_shard.move_census(%s)", tenant)[0][0]


def digest(shard: int, tenant: str, pmap: dict | None = None) -> dict[str, list]:
    return {t: [n, h] for _, t, n, h in on(f"shard{shard}", "SELECT * FROM memory_fabric_shard.move_digest(%s, %s::jsonb)",
                                            tenant, json.dumps(pmap or {}))}


def setup() -> None:
    for node in NODES:
        with conn(node) as c:
            for role, member in ROLES.items():
                if not c.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone():
                    c.execute(f"CREATE ROLE {role} LOGIN IN ROLE {member}")
            if node != "router":
                # fl_admin's recalls are logged (new connections: PL/Proxy's, from the router sessions below)
                c.execute(f"ALTER ROLE fl_admin IN DATABASE {DB} SET memory_fabric.log_recalls = on")
    with conn() as c:
        for t, s in PLACE.items():
            c.execute("INSERT INTO memory_fabric_router.tenants (tenant_id, shard) VALUES (%s, %s) "
                      "ON CONFLICT (tenant_id) DO UPDATE SET shard = excluded.shard", (t, s))
        for role in ROLES:
            for t in PLACE:
                c.execute("SELECT memory_fabric.grant_tenant(%s, %s)", (role, t))
        # a grant revoked: write-once history that moves too
        c.execute("SELECT memory_fabric.revoke_tenant('fl_admin', 'mv_a')")
        c.execute("SELECT memory_fabric.grant_tenant('fl_admin', 'mv_a')")


def pipeline(tenant: str, text: str, user: str, c: psycopg.Connection | None = None, intent: str = "support") -> tuple[str, str]:
    cid = as_role("fl_agent", "SELECT id FROM memory_fabric.capture_memory(%s, %s, 'agent', 'INTERNAL', user_id => %s, "
                  "intent_id => %s)", tenant, text, user, intent, pin=tenant, c=c)[0][0]
    as_role("fl_agent", "SELECT 1 FROM memory_fabric.review_candidate(%s)", cid, pin=tenant, c=c)
    mid = as_role("fl_agent", "SELECT id FROM memory_fabric.promote(%s)", cid, pin=tenant, c=c)[0][0]
    return cid, mid


def now() -> Any:
    return on("shard0", "SELECT clock_timestamp()")[0][0]


def history() -> list:
    """mv_a's history, with instants between its changes; mv_b and mv_c get a little too."""
    instants = []
    # policy versions: shard 1 takes numbers first (mv_c), then mv_a's on shard 0 take the same ones
    as_role("fl_admin", "SELECT memory_fabric.set_policy('mv_c', '{\"recall\": {\"min_score\": 0.3}}', 'c one')", pin="mv_c")
    as_role("fl_admin", "SELECT memory_fabric.set_policy('mv_c', '{\"recall\": {\"min_score\": 0.31}}', 'c two')", pin="mv_c")
    as_role("fl_admin", "SELECT memory_fabric.set_policy('mv_a', '{\"recall\": {\"min_score\": 0.2}}', 'a one')", pin="mv_a")
    as_role("fl_admin", "SELECT 1 FROM memory_fabric.register_embedding_model('mv_a', 'acme/embed-8', 8)", pin="mv_a")
    for i in range(3):
        pipeline("mv_a", f"Mv_a customer {i} prefers email.", f"cus_{i}")
    instants.append(now())
    as_role("fl_admin", "SELECT memory_fabric.set_policy('mv_a', '{\"recall\": {\"min_score\": 0.1}}', 'a two')", pin="mv_a")
    _, m_retract = pipeline("mv_a", "Mv_a customer 0 ships to Lyon.", "cus_0")
    cons = as_role("fl_admin", "SELECT id FROM memory_fabric.record_consent('mv_a', 'cus_1', 'support_personalization', "
                   "'contract', ARRAY['likes'], ARRAY['PII'])", pin="mv_a")[0][0]
    cons2 = as_role("fl_admin", "SELECT id FROM memory_fabric.record_consent('mv_a', 'cus_2', 'support_personalization', "
                    "'contract')", pin="mv_a")[0][0]
    instants.append(now())
    as_role("fl_admin", "SELECT 1 FROM memory_fabric.retract(%s, 'wrong city', 'op:admin')", m_retract, pin="mv_a")
    as_role("fl_admin", "SELECT 1 FROM memory_fabric.revoke_consent(%s, 'asked to stop')", cons2, pin="mv_a")
    # a human review: one approved (four eyes), one rejected
    c1 = as_role("fl_rev1", "SELECT id FROM memory_fabric.capture_memory('mv_a', 'Mv_a refunds need two signatures.', "
                 "'operator', 'INTERNAL', user_id => 'cus_1', intent_id => 'support')", pin="mv_a")[0][0]
    as_role("fl_rev1", "SELECT 1 FROM memory_fabric.review_candidate(%s)", c1, pin="mv_a")
    as_role("fl_rev2", "SELECT id FROM memory_fabric.approve(%s, 'op:rev2')", c1, pin="mv_a")
    c2 = as_role("fl_rev1", "SELECT id FROM memory_fabric.capture_memory('mv_a', 'Mv_a closes on Sundays.', "
                 "'operator', 'INTERNAL', user_id => 'cus_1', intent_id => 'support')", pin="mv_a")[0][0]
    as_role("fl_rev1", "SELECT 1 FROM memory_fabric.review_candidate(%s)", c2, pin="mv_a")
    as_role("fl_rev2", "SELECT 1 FROM memory_fabric.reject(%s, 'op:rev2', 'not true')", c2, pin="mv_a")
    instants.append(now())
    # an erased subject: tombstones in write-once columns
    pipeline("mv_a", "Mv_a customer 9 lives at 1 Main St.", "cus_9")
    as_role("fl_admin", "SELECT 1 FROM memory_fabric.forget_subject('mv_a', 'cus_9', 'erasure request')", pin="mv_a")
    # recalls that are logged
    for u in ("cus_0", "cus_1"):
        as_role("fl_admin", "SELECT count(*) FROM memory_fabric.recall('mv_a', 'support', user_id => %s)", u, pin="mv_a")
    for t in ("mv_b", "mv_c"):
        pipeline(t, f"Tenant {t} ships on Fridays.", "cus_0")
    # a capture waiting for a human (a pending review that moves)
    c3 = as_role("fl_rev1", "SELECT id FROM memory_fabric.capture_memory('mv_a', 'Mv_a opens at nine.', "
                 "'operator', 'INTERNAL', user_id => 'cus_2', intent_id => 'support')", pin="mv_a")[0][0]
    as_role("fl_rev1", "SELECT 1 FROM memory_fabric.review_candidate(%s)", c3, pin="mv_a")
    instants.append(now())
    time.sleep(0.01)
    return instants


def recall_as_of(instants: list) -> dict:
    out = {}
    with conn("router", "fl_agent") as c:
        for i, t in enumerate(instants):
            for u in ("cus_0", "cus_1", "cus_2", "cus_9"):
                rows = as_role("fl_agent", "SELECT memory_id, text FROM memory_fabric.recall('mv_a', 'support', user_id => %s, "
                               "max_recalls => 100, as_of => %s) ORDER BY 1", u, t, pin="mv_a", c=c)
                out[(i, u)] = rows
    return out


P_CRP = ("SELECT candidate_id FROM memory_fabric_router._p_capture_review_promote(%s, %s, NULL, %s, %s, 'agent', 'INTERNAL', "
         "%s, 'load_ro', '[]', NULL, NULL, NULL, NULL, NULL, NULL, '{}')")
CRP = ("SELECT candidate_id FROM memory_fabric_router.capture_review_promote(%s, %s, 'agent', 'INTERNAL', user_id => %s, "
       "intent_id => 'load_ro')")


class Load:
    """Through the router while the tenant moves: a writer (capture -> review -> promote, each step
    retried on 55000, the answer a client of a move gets), a reader of the tenant, readers of mv_b
    and mv_c in read-only transactions; and, in read-only router transactions, a client calling
    capture_review_promote (refused with 25006 every time: nothing may be written) and `proxies`
    clients calling its proxy directly (memory_fabric_router._p_capture_review_promote, on the shard
    _pinned_shard() names: writes from a read-only transaction that reach the shard, which the move
    must drain like any other; retried on 55000)."""

    def __init__(self, tenant: str = "mv_a", proxies: int = 1, pipeline: bool = True) -> None:
        self.tenant = tenant
        self.stop = threading.Event()
        self.acked: list[tuple[str, str, str]] = []     # (text, candidate id, memory id)
        self.attempted: list[str] = []
        self.proxy_acked: list[str] = []                # candidate ids written from read-only transactions
        self.ro_refused = 0
        self.ro_written: list[str] = []                 # what capture_review_promote wrote read-only: nothing
        self.errors: dict[str, list[str]] = {"writer": [], "proxy": [], "ro": [], tenant: [], "mv_b": [], "mv_c": []}
        self.retries = 0
        self.slowest = 0.0
        self.reads = {tenant: 0, "mv_b": 0, "mv_c": 0}
        self.threads = ([threading.Thread(target=self.writer)] if pipeline else []) + \
            [threading.Thread(target=self.reader, args=(t,)) for t in (tenant, "mv_b", "mv_c")] + \
            [threading.Thread(target=self.ro_writer)] + [threading.Thread(target=self.proxy_writer, args=(k,)) for k in range(proxies)]

    def step(self, c: psycopg.Connection, sql: str, *args: Any) -> Any:
        while True:
            t0 = time.monotonic()
            try:
                r = as_role("fl_agent", sql, *args, pin=self.tenant, c=c)[0][0]
                self.slowest = max(self.slowest, time.monotonic() - t0)
                return r
            except psycopg.Error as e:
                if e.sqlstate != "55000":
                    raise
                self.retries += 1
                time.sleep(0.01)

    def writer(self) -> None:
        i = 0
        with conn("router", "fl_agent") as c:
            while not self.stop.is_set():
                text = f"{self.tenant.capitalize()} load " + " ".join(random.choice(WORDS) + str(i) for _ in range(6)) + "."
                user = f"cus_{i % 3}"
                self.attempted.append(text)
                try:
                    cid = self.step(c, f"SELECT id FROM memory_fabric.capture_memory('{self.tenant}', %s, 'agent', 'INTERNAL', "
                                    "user_id => %s, intent_id => 'load')", text, user)
                    st = self.step(c, "SELECT status FROM memory_fabric.review_candidate(%s)", cid)
                    mid = self.step(c, "SELECT id FROM memory_fabric.promote(%s)", cid) if st == "pending_promotion" else None
                    self.acked.append((text, cid, mid))
                except psycopg.Error as e:
                    self.errors["writer"].append(describe(e))
                i += 1

    def ro_writer(self) -> None:
        i = 0
        with conn("router", "fl_agent") as c:
            while not self.stop.is_set():
                text = f"{self.tenant} read-only write {i} " + random.choice(WORDS) + "."
                try:
                    r = as_role("fl_agent", CRP, self.tenant, text, f"cus_{i % 3}", pin=self.tenant, read_only=True, c=c)
                    self.ro_written.append(r[0][0])
                except psycopg.Error as e:
                    if e.sqlstate == "25006":
                        self.ro_refused += 1
                    else:
                        self.errors["ro"].append(describe(e))
                i += 1
                time.sleep(0.005)

    def proxy_writer(self, k: int) -> None:
        i = 0
        with conn("router", "fl_agent") as c:
            while not self.stop.is_set():
                text = f"{self.tenant} proxy {k} write {i} " + " ".join(random.choice(WORDS) for _ in range(4)) + "."
                while not self.stop.is_set():
                    try:
                        c.execute("BEGIN READ ONLY")
                        c.execute("SELECT set_config('memory_fabric.tenant_id', %s, true)", (self.tenant,))
                        s = c.execute("SELECT memory_fabric_router._pinned_shard()").fetchone()[0]
                        cid = c.execute(P_CRP, (s, self.tenant, self.tenant, text, f"cus_{i % 3}")).fetchone()[0]
                        c.execute("COMMIT")
                        self.proxy_acked.append(cid)
                        break
                    except psycopg.Error as e:
                        c.execute("ROLLBACK")
                        if e.sqlstate != "55000" and "55000" not in str(e):
                            self.errors["proxy"].append(describe(e))
                            break
                        self.retries += 1
                        time.sleep(0.01)
                i += 1

    def reader(self, tenant: str) -> None:
        with conn("router", "fl_agent") as c:
            while not self.stop.is_set():
                try:
                    as_role("fl_agent", "SELECT count(*) FROM memory_fabric.recall(%s, 'support', user_id => 'cus_0')",
                            tenant, pin=tenant, c=c, read_only=True)
                    self.reads[tenant] += 1
                except psycopg.Error as e:
                    if e.sqlstate != "55000":
                        self.errors[tenant].append(describe(e))
                time.sleep(0.005)

    def __enter__(self) -> "Load":
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(timeout=60)

    def summary(self) -> str:
        return (f"{len(self.acked)} pipelines, {len(self.proxy_acked)} writes from read-only transactions through the proxy, "
                f"{self.ro_refused} refused with 25006 through the router function, {self.retries} retried on 55000")


def move(tenant: str, to: int, erase_old: bool = False) -> dict:
    with conn() as c:
        r = c.execute("CALL memory_fabric_router.move_tenant(%s, %s, erase_old => %s)", (tenant, to, erase_old)).fetchone()
    return r[0]


def main() -> None:
    setup()
    instants = history()
    before = recall_as_of(instants)
    check(sum(len(v) for v in before.values()) > 0 and len(before[(2, "cus_1")]) >= 2,
          f"recall as of {len(instants)} past instants before the move: {sum(len(v) for v in before.values())} rows")
    others = {t: digest(PLACE[t], t) for t in ("mv_b", "mv_c")}
    a_src_count = census(0, "mv_a")
    pol_before = dict(on("shard0", "SELECT version, body::text FROM memory_fabric.policies"))
    taken = {v for (v,) in on("shard1", "SELECT version FROM memory_fabric.policies")}
    own = [v for (v,) in on("shard0", "SELECT version FROM memory_fabric.policies WHERE tenant_id = 'mv_a' ORDER BY 1")]
    print(f"# mv_a: {a_src_count} rows on shard 0; its policy versions {own}, shard 1 has {sorted(taken)}")

    # 1. a call of the tenant in flight on the old shard longer than the drain timeout (held there by
    #    a table lock): the move gives up, changes nothing; the call then completes where it was
    a_src_count = census(0, "mv_a")
    lock = conn("shard0")
    lock.execute("BEGIN")
    lock.execute("LOCK TABLE memory_fabric.candidates IN SHARE MODE")
    inflight: dict[str, Any] = {}

    def held_call() -> None:
        try:
            inflight["id"] = as_role("fl_agent", "SELECT id FROM memory_fabric.capture_memory('mv_a', 'Mv_a held in flight.', "
                                     "'agent', 'INTERNAL', user_id => 'cus_h', intent_id => 'support')", pin="mv_a")[0][0]
        except psycopg.Error as x:
            inflight["error"] = describe(x)
    t = threading.Thread(target=held_call)
    t.start()
    t0 = time.monotonic()
    while time.monotonic() - t0 < 10 and not on("shard0", "SELECT 1 FROM pg_stat_activity WHERE usename = 'fl_agent' "
                                                           "AND wait_event_type = 'Lock'"):
        time.sleep(0.02)
    try:
        with conn() as c:
            c.execute("SET memory_fabric_router.drain_timeout = 300")
            c.execute("CALL memory_fabric_router.move_tenant('mv_a', 1)")
        e = None
    except psycopg.Error as x:
        e = x
    lock.execute("COMMIT")
    lock.close()
    t.join(30)
    d = on("router", "SELECT shard, paused FROM memory_fabric_router.tenants WHERE tenant_id = 'mv_a'")
    marks = [on(f"shard{k}", "SELECT count(*) FROM memory_fabric_shard.retired WHERE tenant_id = 'mv_a'")[0][0] for k in (0, 1)]
    check(e is not None and e.sqlstate == "55000" and "did not drain" in e.diag.message_primary
          and d == [(0, False)] and marks == [0, 0] and census(1, "mv_a") == 0,
          f"a move that cannot drain a call in flight gives up: {describe(e)}; directory {d}, marks {marks}")
    held = on("shard0", "SELECT count(*) FROM memory_fabric.candidates WHERE id = %s", inflight.get("id"))[0][0]
    check(held == 1 and census(0, "mv_a") > a_src_count, f"... and the call completes on shard 0 ({inflight})")

    # 1b. a move that fails half-way (an active grant of a role shard 1 does not have): the partial
    #     copy is erased, the tenant is served on shard 0 again, nothing of it changed
    for node in ("router", "shard0"):
        with conn(node) as c:
            if not c.execute("SELECT 1 FROM pg_roles WHERE rolname = 'fl_only0'").fetchone():
                c.execute("CREATE ROLE fl_only0 LOGIN IN ROLE memory_fabric_agent")
    with conn() as c:
        c.execute("INSERT INTO memory_fabric_router.tenants (tenant_id, shard) VALUES ('mv_d', 0) ON CONFLICT DO NOTHING")
        for role in ("fl_agent", "fl_only0"):
            c.execute("SELECT memory_fabric.grant_tenant(%s, 'mv_d')", (role,))
    pipeline("mv_d", "Mv_d keeps its ledger in Oslo.", "cus_0")
    d_before = digest(0, "mv_d")
    try:
        move("mv_d", 1)
        e = None
    except psycopg.Error as x:
        e = x
    marks = [on(f"shard{k}", "SELECT count(*) FROM memory_fabric_shard.retired WHERE tenant_id = 'mv_d'")[0][0] for k in (0, 1)]
    d = on("router", "SELECT shard, paused FROM memory_fabric_router.tenants WHERE tenant_id = 'mv_d'")
    check(e is not None and e.sqlstate == "42704" and "fl_only0" in e.diag.message_primary
          and "REMOTE" not in e.diag.message_primary
          and "partial copy was erased" in (e.diag.message_detail or "") and census(1, "mv_d") == 0 and marks == [0, 0]
          and d == [(0, False)] and digest(0, "mv_d") == d_before,
          f"a move that fails half-way is undone: {describe(e)}; directory {d}, marks {marks}")
    n = as_role("fl_agent", "SELECT count(*) FROM memory_fabric.recall('mv_d', 'support', user_id => 'cus_0')", pin="mv_d")[0][0]
    check(n == 1, f"mv_d is served on shard 0 again ({n})")

    # 2. the move under load
    with Load() as load:
        time.sleep(1.0)
        n_before = len(load.acked)
        t0 = time.monotonic()
        rep = move("mv_a", 1)
        took = time.monotonic() - t0
        n_flip = len(load.acked)
        time.sleep(1.0)
    print(f"# moved in {took * 1000:.0f} ms, paused {rep['paused_ms']} ms; the writer: {len(load.acked)} pipelines acknowledged "
          f"({n_before} before the move, {len(load.acked) - n_flip} after), {load.retries} steps retried on 55000, "
          f"slowest step {load.slowest * 1000:.0f} ms (it waited out the pause); "
          f"reads: {load.reads}")
    print(f"# rows copied: {json.dumps(rep['rows'], sort_keys=True)}; policy versions {rep['policy_versions']}")
    check(rep["moved"] and rep["from"] == 0 and rep["to"] == 1, "move_tenant reports the move from shard 0 to 1")
    check(not any(load.errors.values()), f"no client error but the retried 55000 during the move: {load.errors}")
    check(n_before > 0 and len(load.acked) > n_flip,
          f"writes went on before and after the move ({n_before}, {n_flip}, {len(load.acked)})")
    check(all(v > 0 for v in load.reads.values()), f"every tenant was recalled during the load: {load.reads}")
    d = on("router", "SELECT shard, paused, moved_at IS NOT NULL FROM memory_fabric_router.tenants WHERE tenant_id = 'mv_a'")
    check(d == [(1, False, True)], f"the directory says shard 1, unpaused: {d}")
    check(load.ro_refused > 0 and not load.ro_written,
          f"capture_review_promote in read-only router transactions: {load.ro_refused} refused with 25006, {len(load.ro_written)} written")
    got = on("shard1", "SELECT count(*) FROM memory_fabric.candidates WHERE id = ANY(%s)", load.proxy_acked)[0][0]
    check(load.proxy_acked and got == len(load.proxy_acked),
          f"every write from a read-only transaction that reached a shard (the proxy called directly) is on shard 1 "
          f"({got}/{len(load.proxy_acked)})")

    # 3. nothing acknowledged lost, nothing duplicated
    cids = [a[1] for a in load.acked]
    mids = [a[2] for a in load.acked if a[2]]
    got_c = {r[0] for r in on("shard1", "SELECT id FROM memory_fabric.candidates WHERE id = ANY(%s)", cids)}
    got_m = {r[0] for r in on("shard1", "SELECT id FROM memory_fabric.promoted_memory WHERE id = ANY(%s)", mids)}
    check(got_c == set(cids) and got_m == set(mids),
          f"every acknowledged candidate and memory is on shard 1 ({len(got_c)}/{len(cids)}, {len(got_m)}/{len(mids)})")
    dup = on("shard1", "SELECT text, count(*) FROM memory_fabric.candidates WHERE tenant_id = 'mv_a' GROUP BY 1 HAVING count(*) > 1")
    loaded = on("shard1", "SELECT count(*) FROM memory_fabric.candidates WHERE tenant_id = 'mv_a' AND intent_id = 'load'")[0][0]
    check(not dup and len(load.acked) <= loaded <= len(load.attempted),
          f"no capture duplicated ({dup}); {loaded} load captures for {len(load.acked)} acknowledged, {len(load.attempted)} tried")

    # 4. counts and hashes: the retired copy, frozen since the move, against the verified digest; row by row
    pmap = rep["policy_versions"]
    src = digest(0, "mv_a", pmap)
    check(src == rep["digest"], "the old copy's counts and hashes (policy versions mapped) equal those verified on shard 1")
    all_same = True
    for table in TABLES:
        old = rows_of(0, "mv_a", table, pmap)
        new = rows_of(1, "mv_a", table)
        missing = [k for k in old if k not in new]
        # a scope's version changes with every promotion of it after the flip (verified before it), and
        # the audit chain's head with every event
        changed = [k for k in old if k in new and old[k] != new[k] and table not in ("scope_versions", "audit_heads")]
        if missing or changed:
            all_same = False
            print(f"# {table}: missing {missing[:3]}, changed {changed[:3]}")
    check(all_same, "every row of the old copy is on shard 1, column for column (write-once, retracted, erased as they were)")
    kinds = dict(on("shard1", "SELECT 'retracted', count(*) FROM memory_fabric.promoted_memory WHERE tenant_id = 'mv_a' "
                    "AND retracted_at IS NOT NULL UNION ALL SELECT 'erased', count(*) FROM memory_fabric.promoted_memory "
                    "WHERE tenant_id = 'mv_a' AND erased_at IS NOT NULL UNION ALL SELECT 'revoked', count(*) FROM "
                    "memory_fabric.consents WHERE tenant_id = 'mv_a' AND revoked_at IS NOT NULL UNION ALL SELECT 'decisions', "
                    "count(*) FROM memory_fabric.decisions WHERE tenant_id = 'mv_a' UNION ALL SELECT 'models', count(*) "
                    "FROM memory_fabric.embedding_models WHERE tenant_id = 'mv_a' AND registered_by IS NOT NULL "
                    "UNION ALL SELECT 'recall_log', count(*) "
                    "FROM memory_fabric.recall_log WHERE tenant_id = 'mv_a' UNION ALL SELECT 'grants_revoked', count(*) "
                    "FROM memory_fabric.tenant_grants WHERE tenant_id = 'mv_a' AND revoked_at IS NOT NULL"))
    check(all(v >= 1 for v in kinds.values()) and kinds["decisions"] >= 2, f"the history moved with its kinds of rows: {kinds}")
    # the audit chain moved with its rows: whole on shard 1, the old copy's links all there, and the writes after
    # the flip are its next links
    links_old = on("shard0", "SELECT count(*) FROM memory_fabric.audit_chain WHERE tenant_id = 'mv_a'")[0][0]
    v = as_role("fl_admin", "SELECT links, intact, problem FROM memory_fabric.verify_audit('mv_a')", pin="mv_a")
    check(v and v[0][1] and v[0][0] > links_old > 0,
          f"verify_audit through the router after the move: the chain is whole on shard 1 ({v}; {links_old} links moved)")
    bad_oid = on("shard1", "SELECT count(*) FROM memory_fabric.tenant_grants g LEFT JOIN pg_roles r ON r.oid = g.role_oid "
                 "WHERE g.tenant_id = 'mv_a' AND r.rolname IS DISTINCT FROM g.role_name")[0][0]
    check(bad_oid == 0, "grants on shard 1 are bound to shard 1's OID of each role name")
    # policy versions: each candidate's and review's version names the same body it named on shard 0
    pol_after = dict(on("shard1", "SELECT version, body::text FROM memory_fabric.policies"))
    pv0 = dict(on("shard0", "SELECT id, policy_version FROM memory_fabric.reviews WHERE tenant_id = 'mv_a'"))
    pv1 = dict(on("shard1", "SELECT id, policy_version FROM memory_fabric.reviews WHERE tenant_id = 'mv_a' AND id = ANY(%s)",
                  list(pv0)))
    same_body = all(json.loads(pol_before[pv0[i]]) == json.loads(pol_after[pv1[i]]) for i in pv0)
    remapped = any(str(v) in pmap and pmap[str(v)] != v for v in own)
    check(same_body and (remapped or not (set(own) & taken)),
          f"reviews' policy versions name the same policy bodies on shard 1 (map {pmap}, shard 1 had {sorted(taken)})")
    with conn("router", "fl_agent") as c:
        eff = as_role("fl_agent", "SELECT count(*) FROM memory_fabric.recall('mv_a', 'support', user_id => 'cus_1')",
                      pin="mv_a", c=c)[0][0]
    newest0 = on("shard0", "SELECT body::text FROM memory_fabric.policies WHERE tenant_id = 'mv_a' ORDER BY version DESC LIMIT 1")
    newest1 = on("shard1", "SELECT body::text FROM memory_fabric.policies WHERE tenant_id = 'mv_a' ORDER BY version DESC LIMIT 1")
    check(newest0 == newest1 and eff >= 1, "the tenant's newest policy on shard 1 is its newest on shard 0")

    # 5. recall as of past instants: the same rows
    after = recall_as_of(instants)
    check(after == before, f"recall(..., as_of => t) for {len(instants)} instants and 4 users: the same rows after the move "
          f"({sum(len(v) for v in after.values())} rows)")

    # 6. the old shard refuses the tenant; the router serves it from shard 1
    try:
        with conn("shard0", "fl_agent") as c:
            c.execute("SELECT * FROM memory_fabric_shard.capture_memory('mv_a', 'mv_a', 'Stale write.', 'agent', 'INTERNAL', "
                      "NULL, NULL, '[]', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, '{}')")
        e = None
    except psycopg.Error as x:
        e = x
    check(e is not None and e.sqlstate == "55000" and "moved to shard 1" in e.diag.message_primary,
          f"a routed call reaching shard 0 for mv_a (a stale router): {describe(e)}")
    _, m = pipeline("mv_a", "Mv_a quartz lagoon russet after the move.", "cus_7")
    check(on("shard1", "SELECT count(*) FROM memory_fabric.promoted_memory WHERE id = %s", m)[0][0] == 1,
          "mv_a's pipeline through the router runs on shard 1")
    ev = on("shard1", "SELECT payload->>'from', payload->>'to' FROM memory_fabric.events WHERE tenant_id = 'mv_a' "
            "AND kind = 'memory.tenant_moved'")
    check(ev == [("0", "1")], f"the move is an event of the tenant on shard 1: {ev}")

    # 7. the other tenants: untouched
    for t in ("mv_b", "mv_c"):
        check(digest(PLACE[t], t) == others[t] and census(1 - PLACE[t], t) == 0,
              f"{t} on shard {PLACE[t]}: counts and hashes unchanged, nothing of it on the other shard")

    # 8. the retired copy erased on request; the guards stay
    er = on("router", "SELECT memory_fabric_router.erase_moved_copy('mv_a', 0)")[0][0]
    left = census(0, "mv_a")
    guards = on("shard0", "SELECT count(*) FILTER (WHERE tgenabled = 'A'), count(*) FROM pg_trigger WHERE tgname LIKE 'guard\\_%%' "
                "AND tgrelid::regclass::text LIKE 'memory_fabric.%%'")[0]
    check(left == 0 and sum(er.values()) >= a_src_count and guards[0] == guards[1] >= 30,
          f"erase_moved_copy: {sum(er.values())} rows erased on shard 0, {left} left; guards enabled always: {guards}")
    try:
        on("shard0", "DELETE FROM memory_fabric.events WHERE tenant_id = 'mv_b'")
        e = None
    except psycopg.Error as x:
        e = x
    check(e is not None and e.sqlstate == "55000", f"a DELETE on shard 0 afterwards, as the superuser: {describe(e)}")
    e = None
    try:
        on("router", "SELECT memory_fabric_router.erase_moved_copy('mv_a', 1)")
    except psycopg.Error as x:
        e = x
    check(e is not None and e.sqlstate == "55000" and census(1, "mv_a") > 0, f"erasing the serving copy is refused: {describe(e)}")
    try:
        with conn("router", "fl_admin") as c:
            c.execute("CALL memory_fabric_router.move_tenant('mv_b', 1)")
        e = None
    except psycopg.Error as x:
        e = x
    check(e is not None and e.sqlstate == "42501", f"a move by a role that is not a superuser: {describe(e)}")

    # 9. and back, with erase_old, under load again
    n1 = census(1, "mv_a")
    with Load() as load:
        time.sleep(0.5)
        rep2 = move("mv_a", 0, erase_old=True)
        time.sleep(0.5)
    cids = [a[1] for a in load.acked]
    got = on("shard0", "SELECT count(*) FROM memory_fabric.candidates WHERE id = ANY(%s)", cids)[0][0]
    print(f"# back to shard 0: paused {rep2['paused_ms']} ms, policy versions {rep2['policy_versions']}, erased {rep2.get('erased')}")
    check(rep2["moved"] and "erased" in rep2 and census(1, "mv_a") == 0 and census(0, "mv_a") >= n1 + 1,
          f"moved back to shard 0 with erase_old: shard 1 holds nothing of mv_a, shard 0 {census(0, 'mv_a')} rows")
    check(got == len(cids) and not any(load.errors.values()), f"every write acknowledged during the second move is on shard 0 "
          f"({got}/{len(cids)}; errors {load.errors})")
    got = on("shard0", "SELECT count(*) FROM memory_fabric.candidates WHERE id = ANY(%s)", load.proxy_acked)[0][0]
    check(got == len(load.proxy_acked) and load.ro_refused > 0 and not load.ro_written,
          f"... and every write of a read-only transaction through the proxy ({got}/{len(load.proxy_acked)}); "
          f"{load.ro_refused} refused through the router function")
    again = recall_as_of(instants)
    check(again == before, "recall as of the past instants: still the same rows after the second move")
    for t in ("mv_b", "mv_c"):
        check(digest(PLACE[t], t) == others[t], f"{t}: still untouched")

    # 10. moved 8 times with erase_old while three clients write from read-only router transactions
    #     through the proxy (the load), a writer runs the pipeline and readers read
    with conn() as c:
        c.execute("INSERT INTO memory_fabric_router.tenants (tenant_id, shard) VALUES ('mv_e', 0) ON CONFLICT DO NOTHING")
        c.execute("SELECT memory_fabric.grant_tenant('fl_agent', 'mv_e')")
    pipeline("mv_e", "Mv_e starts on shard 0.", "cus_0")
    reps, errs = [], []
    with Load("mv_e", proxies=3) as load:
        time.sleep(0.5)
        for i in range(8):
            try:
                reps.append(move("mv_e", (i + 1) % 2, erase_old=True))
            except psycopg.Error as x:
                errs.append(describe(x))
            time.sleep(0.3)
    final = on("router", "SELECT shard FROM memory_fabric_router.tenants WHERE tenant_id = 'mv_e'")[0][0]
    print(f"# mv_e: {load.summary()}; paused {[r['paused_ms'] for r in reps]} ms", flush=True)
    check(not errs and len(reps) == 8 and all(r["moved"] and "erased" in r for r in reps),
          f"mv_e moved 8 times with erase_old under load, every move completed ({errs[:2]})")
    ids = [a[1] for a in load.acked] + load.proxy_acked
    mids = [a[2] for a in load.acked if a[2]]
    got = on(f"shard{final}", "SELECT count(*) FROM memory_fabric.candidates WHERE id = ANY(%s)", ids)[0][0]
    got_m = on(f"shard{final}", "SELECT count(*) FROM memory_fabric.promoted_memory WHERE id = ANY(%s)", mids)[0][0]
    check(got == len(ids) and got_m == len(mids) and census(1 - final, "mv_e") == 0,
          f"every acknowledged write is on shard {final} ({got}/{len(ids)} candidates, {got_m}/{len(mids)} memories), "
          f"nothing on shard {1 - final}")
    check(load.ro_refused > 0 and not load.ro_written and not any(load.errors.values()),
          f"read-only transactions wrote nothing through the router function ({load.ro_refused} refused); errors {load.errors}")

    print(f"# {'FAILED: ' + str(len(failures)) if failures else 'all passed'}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
