"""memory-fabric-mcp driven by the official MCP Python SDK's client, over stdio, as an agent host would.

    MF_MCP_BIN=target/debug/memory-fabric-mcp MF_TEST_CONNINFO="host=SOCKETDIR port=55432 user=postgres" \
        python -m unittest discover -s tests/mcp

The superuser only makes the database, the roles and their tenant grants, and looks at the tables
afterwards; every tool call runs in the server as an ordinary role (mf_mcp_agent, a member of
memory_fabric_agent, or mf_mcp_reviewer, of memory_fabric_reviewer), connected over the unix
socket with the PG* variables an agent host would set.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import tempfile
import time
import unittest
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator

import psycopg
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client

BIN = os.environ.get("MF_MCP_BIN", "")
ADMIN_INFO = os.environ.get("MF_TEST_CONNINFO", "")
DB = "memory_fabric_mcp"
AGENT, REVIEWER = "mf_mcp_agent", "mf_mcp_reviewer"
TENANT, OTHER = "t_mcp", "t_mcp_other"
UNKNOWN_CANDIDATE = "mc_20260101t000000_000000000000"
UNKNOWN_MEMORY = "pm_20260101t000000_000000000000"
ID = re.compile(r"\b(?:mc|pm)_[0-9]{8}t[0-9]{6}_[0-9a-z]{12}\b")
NOEXT_DB = "memory_fabric_mcp_noext"
# roles of one test each (dropped at the end whatever happened)
PLAIN, STAR, REVOKED, PINNED = "mf_mcp_plain", "mf_mcp_star", "mf_mcp_revoked", "mf_mcp_pinned"
README = Path(__file__).resolve().parents[2] / "README.md"


def admin_conn(db: str = DB) -> psycopg.Connection:
    return psycopg.connect(ADMIN_INFO, dbname=db, autocommit=True)


def setUpModule() -> None:
    if not BIN or not os.access(BIN, os.X_OK):
        raise RuntimeError(f"MF_MCP_BIN does not name the built binary: {BIN!r}")
    with admin_conn("postgres") as c:
        c.execute(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")
        c.execute(f"CREATE DATABASE {DB}")
    with admin_conn() as c:
        c.execute("SET client_min_messages = warning")
        c.execute("CREATE EXTENSION memory_fabric CASCADE")
        for role, group in ((AGENT, "memory_fabric_agent"), (REVIEWER, "memory_fabric_reviewer")):
            c.execute(f"DROP ROLE IF EXISTS {role}")
            c.execute(f"CREATE ROLE {role} LOGIN IN ROLE {group}")
            c.execute("SELECT memory_fabric.grant_tenant(%s, %s)", (role, TENANT))
        c.execute("SELECT memory_fabric.grant_tenant(%s, %s)", (REVIEWER, OTHER))


def tearDownModule() -> None:
    with admin_conn("postgres") as c:
        for db in (DB, NOEXT_DB):
            c.execute(f"DROP DATABASE IF EXISTS {db} WITH (FORCE)")
        for role in (AGENT, REVIEWER, "mf_mcp_promoted", PLAIN, STAR, REVOKED, PINNED):
            c.execute(f"DROP ROLE IF EXISTS {role}")


def child_env(role: str, tenant: str | None, **extra: str) -> dict[str, str]:
    """The environment an agent host gives the server: the socket, the role, the database."""
    info = psycopg.conninfo.conninfo_to_dict(ADMIN_INFO)
    env = {"PGHOST": str(info["host"]), "PGPORT": str(info.get("port", 5432)), "PGUSER": role, "PGDATABASE": DB}
    if tenant is not None:
        env["MEMORY_FABRIC_TENANT"] = tenant
    env.update(extra)
    return env


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    base = {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "/")}
    return subprocess.run([BIN, *args], env={**base, **(env or {})}, capture_output=True, text=True, timeout=30,
                          stdin=subprocess.DEVNULL)


class Server:
    """One server process and the client session to it."""

    def __init__(self, session: ClientSession, errlog: Any, notifications: list[Any]) -> None:
        self.session, self.errlog, self.notifications = session, errlog, notifications

    async def names(self) -> set[str]:
        return {t.name for t in (await self.session.list_tools()).tools}

    async def call(self, name: str, args: dict[str, Any] | None = None) -> Any:
        return await self.session.call_tool(name, args or {})

    async def ok(self, name: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        """A successful call's structuredContent (the SDK has already checked it against the
        tool's outputSchema), after checking the text content carries the same JSON."""
        r = await self.call(name, args)
        text = r.content[0].text if r.content else ""
        if r.is_error:
            raise AssertionError(f"{name}({args}) failed: {text}")
        sc = r.structured_content
        assert isinstance(sc, dict), sc
        summary, _, last = text.rpartition("\n")  # the summary, then the JSON on one line
        assert summary and json.loads(last) == sc, text
        return sc

    async def err(self, name: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        """A failed call's error object (isError true), after checking the text says the same."""
        r = await self.call(name, args)
        text = r.content[0].text if r.content else ""
        if not r.is_error:
            raise AssertionError(f"{name}({args}) did not fail: {text}")
        e = r.structured_content["error"]
        assert e["message"] and e["message"] in text, text
        assert json.loads(text.rpartition("\n")[2]) == r.structured_content, text
        if "sqlstate" in e:
            assert e["sqlstate"] in text, text
        return e


@asynccontextmanager
async def server(role: str, tenant: str = TENANT, *args: str, env: dict[str, str] | None = None) -> AsyncIterator[Server]:
    params = StdioServerParameters(command=BIN, args=list(args), env=child_env(role, tenant, **(env or {})))
    notifications: list[Any] = []

    async def on_message(message: Any) -> None:  # server notifications, and transport errors
        notifications.append(message)

    with tempfile.TemporaryFile("w+") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, message_handler=on_message) as session:
                await session.initialize()
                yield Server(session, errlog, notifications)
    # a line on stdout that is not a protocol message reaches the client as an exception
    assert not [n for n in notifications if isinstance(n, Exception)], notifications


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 120))


class Tools(unittest.TestCase):
    def test_the_agent_sees_only_its_own_tools(self) -> None:
        async def go() -> None:
            async with server(AGENT) as s:
                self.assertEqual(await s.names(), {"remember", "recall", "review_status"})
                tools = {t.name: t for t in (await s.session.list_tools()).tools}
                for t in tools.values():
                    self.assertGreater(len(t.description or ""), 200, t.name)
                    self.assertEqual(t.input_schema["type"], "object")
                    self.assertEqual(t.output_schema["type"], "object")
                    self.assertNotIn("tenant_id", t.input_schema.get("properties", {}))
                    self.assertNotIn("tenant", t.input_schema.get("properties", {}))
                self.assertEqual(tools["remember"].input_schema["required"], ["text"])
                self.assertEqual(tools["review_status"].input_schema["required"], ["candidate_id"])
                self.assertTrue(tools["recall"].annotations.read_only_hint)
                # a tool of a higher role is unknown to it, as is one that does not exist
                for name in ("explain_recall", "memory_history", "approve", "set_policy", "no_such_tool"):
                    with self.assertRaises(MCPError, msg=name) as e:
                        await s.call(name, {"memory_id": "pm_x", "id": "pm_x"})
                    self.assertIn("unknown tool", str(e.exception))
                self.assertIn("remember", await s.names())  # still answering

        run(go())

    def test_the_reviewer_sees_explain_and_history(self) -> None:
        async def go() -> None:
            async with server(REVIEWER) as s:
                self.assertEqual(await s.names(), {"remember", "recall", "review_status", "explain_recall", "memory_history"})

        run(go())


class Remember(unittest.TestCase):
    def test_every_outcome_then_recall_and_review_status(self) -> None:
        async def go() -> None:
            async with server(AGENT, TENANT, "--intent", "sales.accounts") as s:
                fact = {"text": "Customer c1 wants paper invoices.", "user_id": "c1", "evidence_refs": ["ticket:1"],
                        "metadata": {"channel": "chat"}}
                p = await s.ok("remember", fact)
                self.assertEqual((p["outcome"], p["promoted"], p["waiting_for_human"]), ("promoted", True, False))
                self.assertRegex(p["memory_id"], r"^pm_")
                self.assertRegex(p["candidate_id"], r"^mc_")
                self.assertEqual((p["tier"], p["review"]["status"], p["review"]["reviewer"]), ("semantic", "pending_promotion", "auto"))
                self.assertRegex(p["review"]["id"], r"^rv_")
                self.assertIsNotNone(p["expires_at"])

                d = await s.ok("remember", fact)
                self.assertEqual((d["outcome"], d["promoted"], d["duplicate_of"]), ("duplicate", False, p["memory_id"]))
                self.assertEqual(d["review"]["status"], "duplicate_of")

                x = await s.ok("remember", {"text": "Customer c1 does not want paper invoices.", "user_id": "c1"})
                self.assertEqual((x["outcome"], x["promoted"], x["contradicts"], x["resolution"]),
                                 ("contradiction", False, p["memory_id"], "block"))

                # a fact the agent only read on a web page waits for a human
                q = await s.ok("remember", {"text": "Customer c1 moved to Porto.", "user_id": "c1",
                                            "evidence_refs": ["web:https://example.com/c1"]})
                self.assertEqual((q["outcome"], q["promoted"], q["waiting_for_human"], q["reason"]),
                                 ("queued_for_human", False, True, "untrusted_evidence"))
                self.assertEqual(q["review"]["reviewer"], "human")

                # a personal preference without the subject's consent is rejected
                r = await s.ok("remember", {"text": "Customer c1 prefers calls in the evening.", "user_id": "c1",
                                            "classification": "PII", "write_class": "preference"})
                self.assertEqual((r["outcome"], r["promoted"], r["reason"]), ("rejected", False, "no_consent"))

                got = await s.ok("recall", {"query": "how does customer c1 want invoices?", "user_id": "c1"})
                self.assertEqual(got["count"], len(got["memories"]))
                by_id = {m["memory_id"]: m for m in got["memories"]}
                self.assertIn(p["memory_id"], by_id)
                m = by_id[p["memory_id"]]
                self.assertEqual(m["text"], "Customer c1 wants paper invoices.")
                self.assertEqual(m["provenance"]["candidate_id"], p["candidate_id"])
                self.assertEqual(m["provenance"]["evidence_refs"], ["ticket:1"])
                self.assertEqual(m["provenance"]["source"], "agent")
                self.assertIsNotNone(m["provenance"]["captured_at"])
                self.assertEqual((m["tier"], m["classification"], m["intent_scope"]), ("semantic", "INTERNAL", "sales.accounts"))
                for k in ("score", "relevance", "recency", "importance", "low_confidence", "in_contradiction", "promoted_at", "expires_at"):
                    self.assertIn(k, m)
                texts = [m["text"] for m in got["memories"]]
                for c in ("Customer c1 does not want paper invoices.", "Customer c1 moved to Porto.",
                          "Customer c1 prefers calls in the evening."):
                    self.assertNotIn(c, texts)
                # another user sees nothing of c1's
                other = await s.ok("recall", {"query": "invoices", "user_id": "c2"})
                self.assertNotIn(p["memory_id"], [m["memory_id"] for m in other["memories"]])
                # as of before the promotion, it was not believed yet
                before = await s.ok("recall", {"user_id": "c1", "as_of": "2020-01-01T00:00:00Z"})
                self.assertEqual(before["memories"], [])

                stages = {}
                for name, out in (("promoted", p), ("duplicate", d), ("contradiction", x), ("queued", q), ("rejected", r)):
                    st = await s.ok("review_status", {"candidate_id": out["candidate_id"]})
                    stages[name] = st["stage"]
                    self.assertEqual(st["candidate_id"], out["candidate_id"])
                    self.assertEqual(st["status"], out["review"]["status"])
                self.assertEqual(stages, {"promoted": "promoted", "duplicate": "duplicate", "contradiction": "waiting_for_human",
                                          "queued": "waiting_for_human", "rejected": "rejected"})
                st = await s.ok("review_status", {"candidate_id": p["candidate_id"]})
                self.assertEqual(st["memory_id"], p["memory_id"])

        run(go())

    def test_a_correction_supersedes_and_the_reviewer_can_trace_it(self) -> None:
        async def go() -> None:
            async with server(REVIEWER, TENANT, "--user", "c7", "--actor", "op:ana") as s:
                old = await s.ok("remember", {"text": "Customer c7 prefers email for invoices.", "entity": "customer:c7",
                                              "predicate": "invoice_channel", "value": "email"})
                self.assertEqual(old["outcome"], "promoted")
                new = await s.ok("remember", {"text": "Customer c7 now wants invoices by post.", "entity": "customer:c7",
                                              "predicate": "invoice_channel", "value": "post", "write_class": "correction",
                                              "evidence_refs": ["ticket:8812"]})
                self.assertEqual((new["outcome"], new["resolution"], new["superseded_memory_id"]),
                                 ("promoted", "supersede", old["memory_id"]))
                got = await s.ok("recall", {"query": "invoice channel of c7"})
                ids = [m["memory_id"] for m in got["memories"]]
                self.assertIn(new["memory_id"], ids)
                self.assertNotIn(old["memory_id"], ids)
                m = [m for m in got["memories"] if m["memory_id"] == new["memory_id"]][0]
                self.assertEqual((m["entity"], m["predicate"], m["value"]), ("customer:c7", "invoice_channel", "post"))

                ex = await s.ok("explain_recall", {"memory_id": old["memory_id"]})
                self.assertFalse(ex["visible"])
                self.assertTrue(ex["reasons"])
                self.assertTrue((await s.ok("explain_recall", {"memory_id": new["memory_id"]}))["visible"])
                h = await s.ok("memory_history", {"id": new["memory_id"]})
                self.assertGreaterEqual(h["count"], 3)
                stages = [x["stage"] for x in h["history"]]
                for stage in ("captured", "reviewed", "promoted"):
                    self.assertIn(stage, stages)
                e = await s.err("memory_history", {"id": "pm_20260101t000000_000000000000"})
                self.assertEqual(e["sqlstate"], "P0002")
            with admin_conn() as c:
                actor = c.execute("SELECT actor, captured_by FROM memory_fabric.candidates WHERE text = %s",
                                  ("Customer c7 now wants invoices by post.",)).fetchone()
            self.assertEqual(actor, ("op:ana", REVIEWER))

        run(go())

    def test_the_fixed_user_and_the_default_actor(self) -> None:
        async def go() -> None:
            async with server(AGENT, TENANT, "--user", "c9") as s:
                e = await s.err("remember", {"text": "Customer c8 likes tea.", "user_id": "c8"})
                self.assertEqual(e["kind"], "invalid_arguments")
                self.assertIn("c9", e["message"])
                await s.err("recall", {"user_id": "c8"})
                p = await s.ok("remember", {"text": "Customer c9 likes green tea.", "user_id": "c9"})
                q = await s.ok("remember", {"text": "Customer c9 orders on Mondays."})
                got = await s.ok("recall", {"max_recalls": 50})
                ids = [m["memory_id"] for m in got["memories"]]
                self.assertIn(p["memory_id"], ids)
                self.assertIn(q["memory_id"], ids)
                self.assertTrue(all(m["user_scope"] == "c9" or m["user_scope"] is None for m in got["memories"]))
            with admin_conn() as c:
                rows = c.execute("SELECT user_id, actor, source FROM memory_fabric.candidates WHERE text LIKE 'Customer c9%%'").fetchall()
            self.assertEqual(sorted(rows), [("c9", AGENT, "agent")] * 2)

        run(go())


class Isolation(unittest.TestCase):
    def test_another_tenants_memories_are_never_reached(self) -> None:
        async def go() -> None:
            async with server(REVIEWER, OTHER) as other:
                secret = await other.ok("remember", {"text": "The launch code name is Zebra Falls."})
                scoped = await other.ok("remember", {"text": "Customer c1 wants invoices in Esperanto.", "user_id": "c1"})
                self.assertEqual((secret["outcome"], scoped["outcome"]), ("promoted", "promoted"))
                theirs = await other.ok("review_status", {"candidate_id": secret["candidate_id"]})
                self.assertEqual(theirs["stage"], "promoted")
            async with server(AGENT, TENANT) as s:
                for args in ({"query": "launch code name Zebra Falls"}, {"query": "invoices in Esperanto", "user_id": "c1"},
                             {"max_recalls": 50, "classification_allowed": ["PUBLIC", "INTERNAL", "CONFIDENTIAL", "PII"]},
                             {"max_recalls": 50, "user_id": "c1"}):
                    got = await s.ok("recall", args)
                    ids = {m["memory_id"] for m in got["memories"]}
                    self.assertFalse(ids & {secret["memory_id"], scoped["memory_id"]}, args)
                    self.assertFalse({m["text"] for m in got["memories"]} & {"The launch code name is Zebra Falls.",
                                                                              "Customer c1 wants invoices in Esperanto."})
                # another tenant's candidate gives the very error an unknown id gives
                e_other = await s.err("review_status", {"candidate_id": secret["candidate_id"]})
                e_unknown = await s.err("review_status", {"candidate_id": UNKNOWN_CANDIDATE})
                self.assertEqual(e_other["sqlstate"], "P0002")
                norm = lambda e: {k: (ID.sub("ID", v) if isinstance(v, str) else v) for k, v in e.items()}
                self.assertEqual(norm(e_other), norm(e_unknown))
                # the tenant is not an argument
                e = await s.err("recall", {"tenant_id": OTHER})
                self.assertEqual(e["kind"], "invalid_arguments")
                self.assertIn("tenant_id", e["message"])

        run(go())


def make_role(role: str, group: str | None, *tenants: str) -> None:
    """A login role of one test, a member of `group` (none: of no memory_fabric role), granted `tenants`."""
    with admin_conn() as c:
        c.execute(f"DROP ROLE IF EXISTS {role}")
        c.execute(f"CREATE ROLE {role} LOGIN" + (f" IN ROLE {group}" if group else ""))
        for t in tenants:
            c.execute("SELECT memory_fabric.grant_tenant(%s, %s)", (role, t))


def same_error(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Two errors alike but for the ids they name."""
    norm = lambda e: {k: (ID.sub("ID", v) if isinstance(v, str) else v) for k, v in e.items()}
    return norm(a) == norm(b)


class StartUp(unittest.TestCase):
    """What the server checks before it serves anything, and again after a reconnect."""

    def test_a_tenant_the_role_may_not_act_for_refuses_to_start(self) -> None:
        r = run_cli(env=child_env(AGENT, OTHER))
        self.assertEqual((r.returncode, r.stdout), (1, ""), r.stderr)
        self.assertIn(f'role "{AGENT}" may not act for tenant "{OTHER}" in database "{DB}"', r.stderr)
        self.assertIn(f"memory_fabric.my_tenants() lists: {TENANT}", r.stderr)
        self.assertIn(f"SELECT memory_fabric.grant_tenant('{AGENT}', '{OTHER}')", r.stderr)
        self.assertNotIn("tools:", r.stderr)
        # a role of no memory_fabric role at all may not even ask which tenants it has
        make_role(PLAIN, None)
        r = run_cli(env=child_env(PLAIN, TENANT))
        self.assertEqual((r.returncode, r.stdout), (1, ""), r.stderr)
        self.assertIn(f'role "{PLAIN}" may not use memory_fabric in database "{DB}"', r.stderr)
        self.assertIn("SQLSTATE 42501", r.stderr)
        self.assertIn("memory_fabric_agent", r.stderr)
        # a grant of '*' is a grant of every tenant
        make_role(STAR, "memory_fabric_agent", "*")

        async def go() -> None:
            async with server(STAR, "t_mcp_anything") as s:
                self.assertEqual(await s.names(), {"remember", "recall", "review_status"})
                await s.ok("recall", {})

        run(go())

    def test_a_database_without_the_extension_is_named(self) -> None:
        with admin_conn("postgres") as c:
            c.execute(f"DROP DATABASE IF EXISTS {NOEXT_DB} WITH (FORCE)")
            c.execute(f"CREATE DATABASE {NOEXT_DB}")
        r = run_cli(env=child_env(AGENT, TENANT, PGDATABASE=NOEXT_DB))
        self.assertEqual((r.returncode, r.stdout), (1, ""), r.stderr)
        self.assertIn(f'memory_fabric is not installed in database "{NOEXT_DB}"', r.stderr)
        self.assertIn("CREATE EXTENSION memory_fabric", r.stderr)
        self.assertNotIn("tools:", r.stderr)

    def test_a_grant_revoked_while_running_is_found_at_the_reconnect(self) -> None:
        make_role(REVOKED, "memory_fabric_agent", TENANT)

        async def next_answer(s: Server) -> Any:
            # the first call after the backend was ended may still find the old socket (57P01)
            for _ in range(2):
                r = await s.call("recall", {})
                if not (r.is_error and r.structured_content["error"].get("sqlstate") == "57P01"):
                    return r
            return r

        async def go() -> None:
            async with server(REVOKED) as s:
                await s.ok("recall", {})
                with admin_conn() as c:
                    c.execute("SELECT memory_fabric.revoke_tenant(%s, %s)", (REVOKED, TENANT))
                    c.execute("SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE usename = %s", (REVOKED,))
                r = await next_answer(s)
                self.assertTrue(r.is_error, r.content[0].text)
                e = r.structured_content["error"]
                self.assertEqual((e["kind"], e["sqlstate"]), ("connection", "42501"), e)
                self.assertIn(f'may not act for tenant "{TENANT}"', e["message"])
                self.assertIn("checks again", e["hint"])
                with admin_conn() as c:
                    c.execute("SELECT memory_fabric.grant_tenant(%s, %s)", (REVOKED, TENANT))
                await s.ok("recall", {})  # granted again: the next call connects and serves

        run(go())


class UserScope(unittest.TestCase):
    def test_a_reviewer_fixed_to_a_user_finds_no_other_users_memory(self) -> None:
        async def go() -> None:
            async with server(REVIEWER, TENANT) as s:
                theirs = await s.ok("remember", {"text": "Customer c30 keeps a spare key under the mat.", "user_id": "c30"})
                shared = await s.ok("remember", {"text": "The Lisbon depot opens at 07:00."})
                self.assertEqual((theirs["outcome"], shared["outcome"]), ("promoted", "promoted"))
            async with server(REVIEWER, TENANT, "--user", "c31") as s:
                mine = await s.ok("remember", {"text": "Customer c31 pays by card."})
                # another user's memory and candidate: the very answer an unknown id gets
                unknown = await s.err("memory_history", {"id": UNKNOWN_MEMORY})
                self.assertEqual(unknown["sqlstate"], "P0002")
                for ref in (theirs["memory_id"], theirs["candidate_id"]):
                    e = await s.err("memory_history", {"id": ref})
                    self.assertTrue(same_error(e, unknown), (e, unknown))
                    self.assertIn(ref, e["message"])
                    self.assertNotIn("c30", json.dumps(e))
                unknown = await s.err("explain_recall", {"memory_id": UNKNOWN_MEMORY})
                e = await s.err("explain_recall", {"memory_id": theirs["memory_id"]})
                self.assertTrue(same_error(e, unknown), (e, unknown))
                self.assertNotIn("c30", json.dumps(e))
                self.assertNotIn("spare key", json.dumps(e))
                # the user's own and the user-less memories are there
                for ref in (mine["memory_id"], mine["candidate_id"], shared["memory_id"]):
                    h = await s.ok("memory_history", {"id": ref})
                    self.assertIn("captured", [x["stage"] for x in h["history"]])
                self.assertTrue((await s.ok("explain_recall", {"memory_id": shared["memory_id"]}))["visible"])
                self.assertTrue((await s.ok("explain_recall", {"memory_id": mine["memory_id"]}))["visible"])

        run(go())


class IntentPin(unittest.TestCase):
    def test_a_pinned_intent_cannot_be_escaped(self) -> None:
        fact = {"user_id": "c20", "entity": "customer:c20", "predicate": "payment_method"}
        escape = "Customer c20 pays by bank transfer."

        async def go() -> None:
            async with server(REVIEWER, TENANT, "--intent", "sales.elsewhere") as s:
                elsewhere = await s.ok("remember", {"text": "Customer c21 wants a call on Fridays.", "user_id": "c21"})
            async with server(AGENT, TENANT, "--intent", "sales.pinned") as s:
                p = await s.ok("remember", {"text": "Customer c20 pays by card.", "value": "card", **fact})
                self.assertEqual(p["outcome"], "promoted")
                # the contradiction under another intent (coexist, promoted without a human), or
                # under none: refused before anything reaches the database
                for intent in ("sales.other", None, ""):
                    e = await s.err("remember", {"text": escape, "value": "transfer", "intent_id": intent, **fact})
                    self.assertEqual(e["kind"], "invalid_arguments", e)
                    self.assertIn('pinned to intent_id "sales.pinned" (--intent)', e["message"])
                e = await s.err("recall", {"intent_id": "sales.other", "user_id": "c20"})
                self.assertEqual(e["kind"], "invalid_arguments")
                self.assertIn("sales.other", e["message"])
                # the pinned intent itself, named or not, and null for recall, read the pin
                same = await s.ok("remember", {"text": "Customer c20 wants receipts by email.", "user_id": "c20",
                                               "intent_id": "sales.pinned"})
                for args in ({}, {"intent_id": "sales.pinned"}, {"intent_id": None}):
                    got = await s.ok("recall", {"user_id": "c20", "max_recalls": 50, **args})
                    ids = {m["memory_id"]: m["intent_scope"] for m in got["memories"]}
                    self.assertEqual(ids.get(p["memory_id"]), "sales.pinned", args)
                    self.assertIn(same["memory_id"], ids)
                    self.assertTrue(all(i in ("sales.pinned", None) for i in ids.values()), ids)
                got = await s.ok("recall", {"user_id": "c21", "max_recalls": 50})
                self.assertNotIn(elsewhere["memory_id"], [m["memory_id"] for m in got["memories"]])
            with admin_conn() as c:
                n = c.execute("SELECT count(*) FROM memory_fabric.candidates WHERE text = %s", (escape,)).fetchone()[0]
            self.assertEqual(n, 0)
            # a reviewer pinned to the intent finds no other intent's memory, and explains none
            async with server(REVIEWER, TENANT, "--intent", "sales.pinned") as s:
                for tool, args in (("memory_history", {"id": elsewhere["memory_id"]}),
                                   ("explain_recall", {"memory_id": elsewhere["memory_id"]})):
                    unknown = await s.err(tool, {k: UNKNOWN_MEMORY for k in args})
                    e = await s.err(tool, args)
                    self.assertTrue(same_error(e, unknown), (tool, e, unknown))
                e = await s.err("explain_recall", {"memory_id": p["memory_id"], "intent_id": "sales.elsewhere"})
                self.assertEqual(e["kind"], "invalid_arguments")
                self.assertTrue((await s.ok("explain_recall", {"memory_id": p["memory_id"], "user_id": "c20"}))["visible"])
                await s.ok("memory_history", {"id": p["memory_id"]})

        run(go())

    def test_a_contradiction_across_intents_waits_for_a_person(self) -> None:
        # without a pin the agent names intents freely; a fact of an intent that contradicts a
        # cross-intent memory is resolved coexist, and waits for a person (extension 0.20.0)
        fact = {"user_id": "c50", "entity": "customer:c50", "predicate": "invoice_channel"}

        async def go() -> None:
            async with server(AGENT, TENANT) as s:
                p = await s.ok("remember", {"text": "Customer c50 wants invoices by email.", "value": "email", **fact})
                self.assertEqual(p["outcome"], "promoted")
                x = await s.ok("remember", {"text": "Customer c50 wants invoices by post.", "value": "post",
                                            "intent_id": "billing.c50", **fact})
                self.assertEqual((x["outcome"], x["promoted"], x["waiting_for_human"], x["contradicts"], x["resolution"]),
                                 ("contradiction", False, True, p["memory_id"], "coexist"), x)
                got = await s.ok("recall", {"user_id": "c50", "intent_id": "billing.c50"})
                self.assertEqual([m["text"] for m in got["memories"]], ["Customer c50 wants invoices by email."])

        run(go())

    def test_the_extensions_intent_pin_is_set_in_each_call(self) -> None:
        # Where the extension has memory_fabric.intent_id, each call of a server started with
        # --intent sets it beside the tenant pin. Seen through a role whose sessions start pinned
        # to another intent (ALTER ROLE ... SET): the extension refuses that role's captures under
        # any other intent, unless the call's own pin replaces the session's.
        make_role(PINNED, "memory_fabric_agent", TENANT)
        with admin_conn() as c:
            c.execute("SELECT count(*) FROM memory_fabric.my_tenants()")  # loads the library: its settings
            has = c.execute("SELECT 1 FROM pg_settings WHERE name = 'memory_fabric.intent_id'").fetchone() is not None
            if has:
                c.execute(f"ALTER ROLE {PINNED} IN DATABASE {DB} SET memory_fabric.intent_id = 'not.this.one'")

        async def go() -> None:
            async with server(PINNED, TENANT, "--intent", "sales.pinned") as s:
                p = await s.ok("remember", {"text": "Customer c40 wants invoices in March.", "user_id": "c40"})
                self.assertEqual(p["outcome"], "promoted")
                got = await s.ok("recall", {"user_id": "c40"})
                self.assertIn(p["memory_id"], [m["memory_id"] for m in got["memories"]])
                s.errlog.seek(0)
                log = s.errlog.read()
                self.assertIn("intent sales.pinned (pinned" + (", also in memory_fabric.intent_id)" if has else ")"), log)
            if has:
                # without --intent the server sets no intent pin: the session's is in force
                async with server(PINNED, TENANT) as s:
                    e = await s.err("remember", {"text": "Customer c40 wants invoices in April.", "user_id": "c40"})
                    self.assertEqual(e["sqlstate"], "42501", e)
                    self.assertIn("not.this.one", json.dumps(e))

        run(go())


def readme_example() -> dict[str, Any]:
    """The agent host configuration README.md gives under "MCP server": its first mcpServers entry."""
    text = README.read_text()
    section = text[text.index("\n## MCP server\n"):]
    section = section[:section.index("\n## ", 1)]
    for block in re.findall(r"```json\n(.*?)```", section, re.S):
        if "mcpServers" in block:
            return next(iter(json.loads(block)["mcpServers"].values()))
    raise AssertionError("README.md, MCP server: no mcpServers example")


class ReadmeExample(unittest.TestCase):
    def test_the_readme_example_starts_and_its_memories_hold_across_intents(self) -> None:
        example = readme_example()
        args, env = example["args"], dict(example["env"])
        role, tenant = env.pop("PGUSER"), env.pop("MEMORY_FABRIC_TENANT")
        # where this test's database is, instead of the example's
        for k in ("PGHOST", "PGPORT", "PGDATABASE", "PGPASSFILE"):
            env.pop(k, None)
        self.assertNotIn("--intent", args)  # a general agent's memories belong to no single intent
        with admin_conn("postgres") as c:
            c.execute(f'DROP ROLE IF EXISTS "{role}"')
        make_role(role, "memory_fabric_agent", tenant)

        def drop() -> None:
            with admin_conn() as c:
                c.execute(f'DROP OWNED BY "{role}"')
                c.execute(f'DROP ROLE IF EXISTS "{role}"')
        self.addCleanup(drop)

        async def go() -> None:
            async with server(role, tenant, *args, env=env) as s:
                self.assertEqual(await s.names(), {"remember", "recall", "review_status"})
                p = await s.ok("remember", {"text": "Customer cus_42 wants paper invoices.", "user_id": "cus_42",
                                            "evidence_refs": ["ticket:1"]})
                self.assertEqual((p["outcome"], p["tier"]), ("promoted", "semantic"))
                for intent in ("support.billing", "sales.renewals"):
                    got = await s.ok("recall", {"user_id": "cus_42", "intent_id": intent})
                    m = {m["memory_id"]: m for m in got["memories"]}[p["memory_id"]]
                    self.assertIsNone(m["intent_scope"])

        run(go())


class Hostile(unittest.TestCase):
    def test_bad_input_gives_clean_errors_and_the_server_keeps_answering(self) -> None:
        async def go() -> None:
            async with server(AGENT) as s:
                e = await s.err("remember", {"text": "x" * (2 * 1024 * 1024)})
                self.assertEqual(e["kind"], "invalid_arguments")
                self.assertIn("limit", e["message"])
                bad = [
                    ("remember", {}),                                     # text missing
                    ("remember", {"text": 123}),                          # wrong type
                    ("remember", {"text": "x", "evidence_refs": "ticket:1"}),
                    ("remember", {"text": "x", "evidence_refs": [1, 2]}),
                    ("remember", {"text": "x", "confidence": 2}),
                    ("remember", {"text": "x", "confidence": "high"}),
                    ("remember", {"text": "x", "metadata": ["not", "an", "object"]}),
                    ("remember", {"text": "x", "source": "operator"}),    # no such argument
                    ("recall", {"max_recalls": 0}),
                    ("recall", {"max_recalls": 51}),
                    ("recall", {"max_recalls": "eight"}),
                    ("recall", {"max_recalls": 10 ** 30}),
                    ("recall", {"as_of": "yesterday"}),
                    ("recall", {"as_of": "2026-13-01T00:00:00Z"}),
                    ("recall", {"as_of": "2026-11-26T09:31:00"}),
                    ("recall", {"classification_allowed": "PUBLIC"}),
                    ("review_status", {}),
                    ("review_status", {"candidate_id": None}),
                ]
                for name, args in bad:
                    e = await s.err(name, args)
                    self.assertEqual(e["kind"], "invalid_arguments", (name, args, e))
                # what only the database can judge comes back with its SQLSTATE
                for args, state in (({"text": "x", "classification": "NOT_A_CLASS"}, "22023"),
                                    ({"text": "nul \x00 byte"}, None),
                                    ({"text": "x", "entity": "customer:c1"}, "22023"),
                                    ({"text": "x" * 20000}, "54000")):
                    e = await s.err("remember", args)
                    self.assertEqual(e["kind"], "database", e)
                    self.assertRegex(e["sqlstate"], r"^[0-9A-Z]{5}$")
                    if state:
                        self.assertEqual(e["sqlstate"], state, e)
                e = await s.err("review_status", {"candidate_id": "x'); DROP TABLE memory_fabric.candidates; --"})
                self.assertEqual(e["sqlstate"], "P0002")
                # SQL in the text is text
                injection = "x'); DROP TABLE memory_fabric.candidates; --"
                p = await s.ok("remember", {"text": injection, "classification": "PUBLIC", "user_id": "c_inj",
                                            "evidence_refs": ["ticket:'; DELETE FROM x; --"]})
                self.assertEqual(p["outcome"], "promoted")
                got = await s.ok("recall", {"user_id": "c_inj", "query": injection})
                self.assertIn(injection, [m["text"] for m in got["memories"]])
                # after all of it the server still answers
                self.assertEqual(await s.names(), {"remember", "recall", "review_status"})
                await s.ok("recall", {"max_recalls": 1})
            with admin_conn() as c:
                n = c.execute("SELECT count(*) FROM memory_fabric.candidates WHERE text = %s", (injection,)).fetchone()[0]
            self.assertEqual(n, 1)

        run(go())

    def test_a_lost_connection_is_reported_then_replaced(self) -> None:
        def backends(c: psycopg.Connection, role: str) -> list[int]:
            return [r[0] for r in c.execute("SELECT pid FROM pg_stat_activity WHERE usename = %s AND datname = %s "
                                            "AND application_name = 'memory-fabric-mcp'", (role, DB))]

        def terminate(c: psycopg.Connection, pid: int) -> None:
            c.execute("SELECT pg_terminate_backend(%s, 5000)", (pid,))

        async def go() -> None:
            async with server(AGENT) as s:
                await s.ok("recall", {})
                with admin_conn() as c, admin_conn() as locker:
                    [first] = backends(c, AGENT)
                    # broken during a call: the call waits on a lock, and its backend is terminated
                    locker.execute("BEGIN")
                    locker.execute("LOCK TABLE memory_fabric.promoted_memory IN ACCESS EXCLUSIVE MODE")
                    pending = asyncio.ensure_future(s.call("recall", {}))
                    for _ in range(200):
                        if c.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s AND wait_event_type = 'Lock'",
                                     (first,)).fetchone():
                            break
                        await asyncio.sleep(0.02)
                    else:
                        self.fail("the call never waited on the lock")
                    terminate(c, first)
                    locker.execute("ROLLBACK")
                    r = await pending
                    self.assertTrue(r.is_error, r.content[0].text)
                    e = r.structured_content["error"]
                    self.assertEqual((e["kind"], e["sqlstate"]), ("connection", "57P01"), e)
                    self.assertIn("connects again", e["hint"])
                    # the next call connects again
                    await s.ok("recall", {})
                    [second] = backends(c, AGENT)
                    self.assertNotEqual(second, first)
                    # lost while idle: noticed before the call sends anything, so it connects first
                    terminate(c, second)
                    await s.ok("recall", {})
                    [third] = backends(c, AGENT)
                    self.assertNotIn(third, (first, second))
                self.assertEqual(await s.names(), {"remember", "recall", "review_status"})

        run(go())

    def test_privileges_are_asked_again_after_a_reconnect(self) -> None:
        role = "mf_mcp_promoted"
        with admin_conn() as c:
            c.execute(f"DROP ROLE IF EXISTS {role}")
            c.execute(f"CREATE ROLE {role} LOGIN IN ROLE memory_fabric_agent")
            c.execute("SELECT memory_fabric.grant_tenant(%s, %s)", (role, TENANT))
        def drop() -> None:
            with admin_conn() as c:
                c.execute(f"DROP OWNED BY {role}")
                c.execute(f"DROP ROLE IF EXISTS {role}")
        self.addCleanup(drop)

        async def go() -> None:
            async with server(role) as s:
                self.assertEqual(await s.names(), {"remember", "recall", "review_status"})
                with admin_conn() as c:
                    c.execute(f"GRANT memory_fabric_reviewer TO {role}")
                    # a new privilege counts from the next connection on
                    self.assertEqual(await s.names(), {"remember", "recall", "review_status"})
                    c.execute("SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE usename = %s", (role,))
                await s.ok("recall", {})
                changed = [n for n in s.notifications if type(n).__name__ == "ToolListChangedNotification"]
                self.assertEqual(len(changed), 1, s.notifications)
                self.assertEqual(await s.names(), {"remember", "recall", "review_status", "explain_recall", "memory_history"})
                with admin_conn() as c:
                    c.execute(f"REVOKE memory_fabric_reviewer FROM {role}")
                    c.execute("SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE usename = %s", (role,))
                await s.ok("recall", {})
                self.assertEqual(await s.names(), {"remember", "recall", "review_status"})
                with self.assertRaises(MCPError):
                    await s.call("memory_history", {"id": "pm_x"})

        run(go())


class CommandLine(unittest.TestCase):
    def test_help_and_version_print_on_stdout_and_exit_0(self) -> None:
        h = run_cli("--help")
        self.assertEqual((h.returncode, h.stderr), (0, ""))
        for word in ("--tenant", "--user", "--intent", "--actor", "MEMORY_FABRIC_DSN", "PGHOST", "PGPASSFILE",
                     "remember", "recall", "review_status", "explain_recall", "memory_history"):
            self.assertIn(word, h.stdout)
        v = run_cli("--version")
        self.assertEqual((v.returncode, v.stderr), (0, ""))
        self.assertRegex(v.stdout, r"^memory-fabric-mcp [0-9]+\.[0-9]+\.[0-9]+\n$")

    def test_a_password_on_the_command_line_is_refused(self) -> None:
        env = child_env(AGENT, TENANT)
        for dsn in ("host=/tmp user=mf_mcp_agent password=hunter2", "postgresql://mf_mcp_agent:hunter2@localhost/x",
                    "postgresql://mf_mcp_agent@localhost/x?password=hunter2"):
            for args in (("--dsn", dsn), (f"--dsn={dsn}",)):
                r = run_cli(*args, env=env)
                self.assertNotEqual(r.returncode, 0, args)
                self.assertEqual(r.stdout, "")
                self.assertIn("password", r.stderr)
                self.assertNotIn("hunter2", r.stderr)
        r = run_cli("postgresql://mf_mcp_agent:hunter2@localhost/x", env=env)
        self.assertNotEqual(r.returncode, 0)
        self.assertNotIn("hunter2", r.stderr)

    def test_no_tenant_and_no_database_are_clear_errors(self) -> None:
        r = run_cli(env=child_env(AGENT, None))
        self.assertEqual((r.returncode, r.stdout), (2, ""))
        self.assertIn("tenant", r.stderr)
        r = run_cli(env=child_env(AGENT, TENANT, PGDATABASE="memory_fabric_mcp_missing"))
        self.assertEqual((r.returncode, r.stdout), (1, ""))
        self.assertIn("cannot connect", r.stderr)
        self.assertIn("memory_fabric_mcp_missing", r.stderr)

    def test_a_connection_string_in_the_environment_works(self) -> None:
        async def go() -> None:
            info = psycopg.conninfo.conninfo_to_dict(ADMIN_INFO)
            dsn = f"host={info['host']} port={info.get('port', 5432)} user={AGENT} dbname={DB}"
            async with server(AGENT, TENANT, env={"PGHOST": "/nonexistent", "PGUSER": "nobody", "MEMORY_FABRIC_DSN": dsn}) as s:
                self.assertEqual(await s.names(), {"remember", "recall", "review_status"})
                await s.ok("recall", {})

        run(go())

    def test_stdout_carries_only_protocol_messages(self) -> None:
        msgs = [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
            {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "recall", "arguments": {"max_recalls": 2}}},
            {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "recall", "arguments": {"as_of": "now"}}},
            {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "approve", "arguments": {}}},
        ]
        env = {"PATH": os.environ.get("PATH", ""), **child_env(AGENT, TENANT)}
        p = subprocess.Popen([BIN], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        out = []
        try:
            for m in msgs:
                p.stdin.write(json.dumps(m) + "\n")
                p.stdin.flush()
                if "id" in m:  # one answer per request, in order
                    out.append(p.stdout.readline())
            rest, err = p.communicate(timeout=30)  # closes stdin: the server ends its session and exits
        finally:
            p.kill()
        out += rest.splitlines(keepends=True)
        self.assertEqual(p.returncode, 0, err)
        replies = [json.loads(line) for line in out if line.strip()]
        self.assertEqual(len(out), len(replies))  # no blank or stray lines either
        self.assertTrue(all(r.get("jsonrpc") == "2.0" for r in replies))
        self.assertEqual([r.get("id") for r in replies], [1, 2, 3, 4, 5])
        self.assertEqual(replies[0]["result"]["serverInfo"]["name"], "memory-fabric-mcp")
        self.assertFalse(replies[2]["result"]["isError"])
        self.assertTrue(replies[3]["result"]["isError"])
        self.assertEqual(replies[4]["error"]["code"], -32602)
        self.assertIn("connected to database memory_fabric_mcp as role mf_mcp_agent", err)


if __name__ == "__main__":
    unittest.main()
