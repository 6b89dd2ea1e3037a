"""The database side of the harness: a fresh database, the roles, and the agent's pipeline
(capture, review, promote when no human is needed), as memory-fabric-mcp's `remember` runs it
(mcp/src/tools/remember.rs): one transaction per record, pinned to its tenant, as an ordinary
agent role. Nothing here reads a table: every verdict comes from what the functions return."""
import concurrent.futures
import sys
import threading
import time

import psycopg
from psycopg.types.json import Jsonb

AGENT = "mf_rq_agent"
REVIEWER = "mf_rq_reviewer"
ACTOR = "agent:review_quality"


class Db:
    def __init__(self, host, port, superuser, name):
        self.host, self.port, self.superuser, self.name = host, port, superuser, name

    def dsn(self, user, db=None):
        return f"host={self.host} port={self.port} user={user} dbname={db or self.name}"

    def admin(self, db=None):
        return psycopg.connect(self.dsn(self.superuser, db), autocommit=True)

    def create(self):
        with self.admin("postgres") as c:
            c.execute("SET client_min_messages = warning")
            c.execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')
            c.execute(f'CREATE DATABASE "{self.name}"')
        with self.admin() as c:
            c.execute("SET client_min_messages = warning")
            c.execute("CREATE EXTENSION memory_fabric CASCADE")
            # cluster-wide roles, made once; their grants on tenants live in this database
            for role, group in ((AGENT, "memory_fabric_agent"), (REVIEWER, "memory_fabric_reviewer")):
                if not c.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone():
                    c.execute(f"CREATE ROLE {role} LOGIN")
                c.execute(f"GRANT {group} TO {role}")

    def drop(self):
        with self.admin("postgres") as c:
            c.execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')

    def grant(self, role, tenants):
        tenants = sorted(set(tenants))
        with self.admin() as c:
            for i in range(0, len(tenants), 500):
                c.execute("SELECT count(*) FROM unnest(%s::text[]) t, LATERAL memory_fabric.grant_tenant(%s, t)",
                          (tenants[i:i + 500], role))

    def facts(self):
        """What was measured: the extension's version and the default policy's review settings."""
        with self.admin() as c:
            ext = c.execute("SELECT extversion FROM pg_extension WHERE extname = 'memory_fabric'").fetchone()[0]
            pol = c.execute("SELECT body FROM memory_fabric.policies WHERE tenant_id = '*' ORDER BY version DESC LIMIT 1").fetchone()
            srv = c.execute("SHOW server_version").fetchone()[0]
        p = pol[0] if pol else {}
        return {"extversion": ext, "server_version": srv,
                "policy": {k: p.get(k) for k in ("thresholds", "judge") if k in p}}


REVIEW_COLS = ("id, status, reviewer, reason, duplicate_of_id, contradicts_id, contradiction_resolution, "
               "similarity, reviewer_notes, judge_model, coalesce(jsonb_array_length(judge_scores), 0)")


class Agent:
    """One connection as the agent role; remember() is the MCP server's remember."""

    def __init__(self, db):
        self.conn = psycopg.connect(db.dsn(AGENT))

    def close(self):
        self.conn.close()

    def remember(self, tenant, text, user_id=None, evidence=None):
        out = {}
        t0 = time.perf_counter()
        cur = self.conn.cursor()
        try:
            with self.conn.transaction():
                cur.execute("SELECT set_config('memory_fabric.tenant_id', %s, true)", (tenant,))
                cur.execute("SELECT id, embedding_model FROM memory_fabric.capture_memory(tenant_id => %s, text => %s, "
                            "source => 'agent', classification => 'INTERNAL', user_id => %s, "
                            "evidence_refs => %s::jsonb, actor => %s)",
                            (tenant, text, user_id, Jsonb(evidence or []), ACTOR))
                out["candidate_id"], out["embedding_model"] = cur.fetchone()
                cur.execute(f"SELECT {REVIEW_COLS} FROM memory_fabric.review_candidate(candidate_id => %s)",
                            (out["candidate_id"],))
                (out["review_id"], out["status"], out["reviewer"], out["reason"], out["duplicate_of"], out["contradicts"],
                 out["resolution"], out["similarity"], out["notes"], out["judge_model"], out["judge_pairs"]) = cur.fetchone()
                automatic = out["reviewer"] == "auto" and (
                    out["status"] == "pending_promotion"
                    or (out["status"] == "contradicts" and out["resolution"] in ("supersede", "coexist")))
                out["promoted"] = False
                if automatic:
                    cur.execute("SELECT id, supersedes_id FROM memory_fabric.promote(candidate_id => %s)",
                                (out["candidate_id"],))
                    out["memory_id"], out["superseded"] = cur.fetchone()
                    out["promoted"] = True
        except psycopg.Error as e:
            # the whole remember is rolled back, as the MCP server's transaction would be
            out = {"status": "error", "error": f"{e.sqlstate}: {str(e).splitlines()[0]}", "promoted": False}
        out["ms"] = round((time.perf_counter() - t0) * 1000, 1)
        return out


class Progress:
    def __init__(self, label, total, quiet=False):
        self.label, self.total, self.done, self.quiet = label, total, 0, quiet
        self.t0 = self.last = time.time()
        self.lock = threading.Lock()

    def add(self, n=1):
        with self.lock:
            self.done += n
            now = time.time()
            if not self.quiet and (now - self.last > 15 or self.done == self.total):
                self.last = now
                rate = self.done / max(now - self.t0, 1e-9)
                print(f"   {self.label}: {self.done}/{self.total} records, {rate:.1f}/s, {now - self.t0:.0f} s",
                      file=sys.stderr, flush=True)


def run_tenants(db, groups, jobs, label, quiet=False):
    """groups: [(tenant, [record, ...])]; each tenant's records in order on one connection, the
    tenants spread over `jobs` connections (tenants never see one another, so the verdicts do not
    depend on the interleaving). Returns {record id: outcome}."""
    db.grant(AGENT, [t for t, _ in groups])
    total = sum(len(rs) for _, rs in groups)
    progress = Progress(label, total, quiet)
    results = {}
    local = threading.local()
    agents = []
    lock = threading.Lock()

    def agent():
        if not hasattr(local, "agent"):
            local.agent = Agent(db)
            with lock:
                agents.append(local.agent)
        return local.agent

    def one(group):
        tenant, records = group
        a = agent()
        got = {}
        for r in records:
            got[r["id"]] = a.remember(tenant, r["text"], r.get("user_id"), r.get("evidence"))
            progress.add()
        return got

    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
            for got in ex.map(one, groups):
                results.update(got)
    finally:
        for a in agents:
            a.close()
    return results


def group_by_tenant(records):
    groups, index = [], {}
    for r in records:
        if r["tenant"] not in index:
            index[r["tenant"]] = len(groups)
            groups.append((r["tenant"], []))
        groups[index[r["tenant"]]][1].append(r)
    return groups
