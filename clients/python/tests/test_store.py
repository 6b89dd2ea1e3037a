"""MemoryFabricStore (memory_fabric.store), LangGraph's BaseStore on memory_fabric, against a
running cluster, as ordinary roles (an agent, a reviewer, an admin).

    MF_TEST_CONNINFO="host=... port=... user=<superuser>" python3 -m unittest discover -s clients/python/tests

The superuser only makes the database, the roles and their grants.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import unittest
from typing import Any

from langgraph.store.base import (GetOp, InvalidNamespaceError, Item, ListNamespacesOp, MatchCondition, PutOp,
                                  SearchItem, SearchOp)

import memory_fabric as mf
import pgtest
from memory_fabric.store import (InvalidKeyError, MemoryFabricStore, PutNotApplied, PutOutcome, decode_key,
                                 decode_label, encode_key, encode_label)

DB = "memory_fabric_store"
ADMIN_INFO = pgtest.ADMIN_INFO
ROLES = {"agent": "mf_store_agent", "reviewer": "mf_store_reviewer", "admin": "mf_store_admin"}
T, OTHER = "t_store", "t_store_other"


def conninfo(user: str) -> str:
    return pgtest.conninfo(DB, user)


def make_database() -> None:
    """The database, its roles and their grants (test_graph.py makes them too)."""
    with pgtest.fresh_database(DB, [(role, kind) for kind, role in ROLES.items()]) as c:
        for role in ROLES.values():
            c.execute("SELECT memory_fabric.grant_tenant(%s, %s)", (role, T))
        c.execute("SELECT memory_fabric.grant_tenant(%s, %s)", (ROLES["admin"], OTHER))


def drop_database() -> None:
    pgtest.drop_database(DB, ROLES.values())


def setUpModule() -> None:
    make_database()


def tearDownModule() -> None:
    drop_database()


class Base(unittest.TestCase):
    def client(self, kind: str = "agent", tenant: str = T) -> mf.MemoryFabric:
        c = mf.MemoryFabric.connect(conninfo(ROLES[kind]), tenant_id=tenant)
        self.addCleanup(c.conn.close)
        return c

    def store(self, kind: str = "agent", tenant: str = T, **kw: Any) -> MemoryFabricStore:
        return MemoryFabricStore(self.client(kind, tenant), **kw)

    def candidates(self, where: str, *args: Any, tenant: str = T) -> int:
        """How many candidates of the tenant match (read as its admin)."""
        ad = self.client("admin", tenant)
        with ad.transaction():
            row = ad.conn.execute(f"SELECT count(*) FROM memory_fabric.candidates WHERE {where}", args).fetchone()
        return int(row[0])


class Mapping(unittest.TestCase):
    def test_labels_and_keys_round_trip(self) -> None:
        for s in ("support.billing", "a%b", "-", "*", "x.y%2E", "plain", "e/f"):
            self.assertEqual(decode_label(encode_label(s)), s)
            self.assertNotIn(".", encode_label(s))
        self.assertEqual(encode_label("support.billing"), "support%2Ebilling")
        self.assertEqual(decode_key("cus_42/contact_channel"), ("cus_42", "contact_channel"))
        self.assertEqual(decode_key("contact_channel"), (None, "contact_channel"))
        self.assertEqual(decode_key(encode_key("c/d", "a/b%")), ("a/b%", "c/d"))
        with self.assertRaises(InvalidKeyError):
            decode_key("a/b/c")
        with self.assertRaises(InvalidKeyError):
            decode_key("a%zz")
        with self.assertRaises(InvalidNamespaceError):
            decode_label("50%")

    def test_the_package_imports_without_langgraph(self) -> None:
        code = ("import sys, memory_fabric; "
                "sys.exit(1 if any(m == 'langgraph' or m.startswith('langgraph.') for m in sys.modules) else 0)")
        self.assertEqual(subprocess.run([sys.executable, "-c", code], cwd="/").returncode, 0)
        # and the store module says what it needs when LangGraph is missing
        code = ("import sys; sys.modules['langgraph'] = None\n"
                "try:\n    import memory_fabric.store\nexcept ImportError as e:\n"
                "    sys.exit(0 if 'langgraph' in str(e) else 2)\nsys.exit(1)")
        self.assertEqual(subprocess.run([sys.executable, "-c", code], cwd="/").returncode, 0)

    def test_construction(self) -> None:
        with self.assertRaises(TypeError):
            MemoryFabricStore()
        with self.assertRaises(TypeError):
            MemoryFabricStore("dbname=x")


class Sync(Base):
    def test_put_get_search_list_through_batch(self) -> None:
        s = self.store()
        ns = s.namespace("u_batch", "support.billing")
        self.assertEqual(ns, (T, "u_batch", "support%2Ebilling"))
        value = {"text": "Customer u_batch prefers email.", "channel": "email"}
        got = s.batch([PutOp(ns, "contact_channel", value), GetOp(ns, "contact_channel"),
                       SearchOp(ns, query="how does the customer want to be contacted?"),
                       ListNamespacesOp(match_conditions=(MatchCondition("prefix", ns),)),
                       ListNamespacesOp(match_conditions=(MatchCondition("prefix", (T, "u_batch", "*")),))])
        self.assertIsNone(got[0])
        out = s.last_outcome
        self.assertIsInstance(out, PutOutcome)
        self.assertEqual((out.stage, out.applied, out.previous_memory_id), ("promoted", True, None))
        self.assertTrue(out.memory_id.startswith("pm_") and out.candidate_id.startswith("mc_"))
        item = got[1]
        self.assertIsInstance(item, Item)
        self.assertEqual((item.value, item.key, item.namespace), (value, "contact_channel", ns))
        self.assertIsNotNone(item.created_at)
        self.assertEqual(item.created_at, item.updated_at)
        self.assertEqual(len(got[2]), 1)
        hit = got[2][0]
        self.assertIsInstance(hit, SearchItem)
        self.assertEqual((hit.key, hit.value, hit.namespace), ("contact_channel", value, ns))
        self.assertGreater(hit.score, 0)
        self.assertEqual(got[3], [ns])
        # recall cannot enumerate intents: a wildcard intent lists only what recall sees without one
        self.assertEqual(got[4], [])
        # what the extension holds: one fact about u_batch, its text from value["text"]
        c = self.client()
        facts = c.recall_fact("u_batch", "contact_channel", "support.billing", user_id="u_batch")
        self.assertEqual([(m.memory_id, m.text, m.value, m.tier) for m in facts],
                         [(out.memory_id, value["text"], value, "episodic")])
        # the BaseStore methods are the same ops
        self.assertEqual(s.get(ns, "contact_channel"), item)
        self.assertEqual(s.get(ns, "u_batch/contact_channel").value, value)

    def test_the_same_value_twice_is_not_captured_again(self) -> None:
        s = self.store()
        ns = (T, "u_twice")
        s.put(ns, "language", {"lang": "pt"})
        first = s.last_outcome
        self.assertEqual(first.stage, "promoted")
        s.put(ns, "language", {"lang": "pt"})
        again = s.last_outcome
        self.assertEqual((again.stage, again.applied, again.candidate_id, again.memory_id),
                         ("unchanged", True, None, first.memory_id))
        self.assertEqual(self.candidates("entity = %s AND predicate = %s", "u_twice", "language"), 1)
        self.assertEqual([o.stage for o in list(s.outcomes)[-2:]], ["promoted", "unchanged"])

    def test_a_changed_value_is_governed(self) -> None:
        s = self.store()
        ns = s.namespace("u_change")
        s.put(ns, "invoice_channel", {"text": "u_change wants invoices by email.", "channel": "email"})
        v1 = s.last_outcome.memory_id
        # an agent's changed value with no more evidence contradicts the fact: review blocks it
        out = s.put_governed(ns, "invoice_channel", {"text": "u_change wants paper invoices.", "channel": "paper"})
        self.assertEqual((out.stage, out.applied, out.previous_memory_id), ("contradiction_blocked", False, v1))
        self.assertEqual((out.status.contradicts, out.status.resolution, out.reason), (v1, "block", "contradiction:fact"))
        self.assertIs(s.last_outcome, out)
        self.assertEqual(s.get(ns, "invoice_channel").value["channel"], "email")
        # strict: the same refusal raises, carrying its outcome
        strict = self.store(strict=True)
        with self.assertRaises(PutNotApplied) as e:
            strict.put(ns, "invoice_channel", {"text": "u_change wants invoices by fax.", "channel": "fax"})
        self.assertEqual(e.exception.outcome.stage, "contradiction_blocked")
        # with more evidence it outranks the memory: it supersedes it
        out = s.put_governed(ns, "invoice_channel", {"text": "u_change wants invoices by post.", "channel": "post",
                                                     "evidence_refs": ["ticket:4410"]})
        self.assertEqual((out.stage, out.status.resolution, out.previous_memory_id), ("promoted", "supersede", v1))
        item = s.get(ns, "invoice_channel")
        self.assertEqual(item.value["channel"], "post")
        c = self.client()
        self.assertEqual([m.memory_id for m in c.recall_fact("u_change", "invoice_channel", user_id="u_change")],
                         [out.memory_id])
        # an agent may not write a correction; a reviewer's correction supersedes
        with self.assertRaises(mf.PermissionDenied):
            self.store(write_class="correction").put(ns, "invoice_channel", {"channel": "sms"})
        rv = self.store("reviewer", write_class="correction", actor="op:rita")
        out2 = rv.put_governed(ns, "invoice_channel", {"text": "u_change wants invoices by sms.", "channel": "sms"})
        self.assertEqual((out2.stage, out2.status.resolution, out2.previous_memory_id),
                         ("promoted", "supersede", out.memory_id))
        self.assertEqual(s.get(ns, "invoice_channel").value["channel"], "sms")

    def test_a_put_may_wait_for_a_human(self) -> None:
        # an operator's fact is durable: it waits for a second person, and get sees it once approved
        rv = self.store("reviewer", source="operator", actor="op:ann")
        ns = (T, "-", "support%2Erefunds")
        out = rv.put_governed(ns, "refund_limit", {"text": "Refunds above 500 EUR need a manager.", "eur": 500})
        self.assertEqual((out.stage, out.applied, out.reason), ("waiting_for_human", False, "operator_source"))
        self.assertIsNone(rv.get(ns, "refund_limit"))
        self.assertEqual(rv.search(ns), [])
        self.client("admin").approve(out.candidate_id, "op:bob")
        item = rv.get(ns, "refund_limit")
        self.assertEqual(item.value["eur"], 500)
        # user-less: the entity is the tenant
        self.assertEqual(self.client().recall_fact(T, "refund_limit", "support.refunds")[0].value["eur"], 500)
        # an agent citing what it read on the web waits too (the provenance gate)
        out = self.store().put_governed((T, "u_web"), "favourite_color",
                                        {"color": "red", "evidence_refs": ["web:https://example.test/page"]})
        self.assertEqual((out.stage, out.reason), ("waiting_for_human", "untrusted_evidence"))

    def test_another_tenants_namespace_is_refused(self) -> None:
        s = self.store()
        before = self.candidates("true", tenant=OTHER)
        for call in (lambda: s.put((OTHER, "u1"), "k", {"a": 1}), lambda: s.get((OTHER, "u1"), "k"),
                     lambda: s.search((OTHER,)), lambda: s.list_namespaces(prefix=(OTHER,)),
                     lambda: s.delete((OTHER, "u1"), "k"), lambda: s.batch([PutOp((OTHER,), "k", {"a": 1})])):
            with self.assertRaises(InvalidNamespaceError) as e:
                call()
            self.assertIn("acts for tenant 't_store' only", str(e.exception))
        self.assertEqual(self.candidates("true", tenant=OTHER), before)
        # a store for a tenant the role has no grant for: the extension refuses
        with self.assertRaises(mf.TenantNotGranted):
            self.store(tenant=OTHER).put((OTHER, "u1"), "k", {"a": 1})
        with self.assertRaises(mf.TenantNotGranted):
            self.store(tenant=OTHER).get((OTHER, "u1"), "k")
        # the other tenant's memories, under the same ids, never show
        other = self.store("admin", OTHER)
        other.put((OTHER, "u_iso"), "secret", {"text": "The other tenant's secret plan."})
        self.assertEqual(other.last_outcome.stage, "promoted")
        self.assertIsNone(s.get((T, "u_iso"), "secret"))
        self.assertEqual(s.search((T, "u_iso"), query="secret plan"), [])

    def test_another_users_memories_are_never_returned(self) -> None:
        s = self.store()
        mine, theirs = s.namespace("u_alice"), s.namespace("u_bob")
        s.put(mine, "pet", {"text": "u_alice has a cat named Miso.", "pet": "cat"})
        s.put(s.namespace("u_alice", "support.pets"), "vet", {"text": "u_alice's vet is in Braga."})
        s.put((T,), "office_hours", {"text": "The support desk opens at nine."})
        self.assertIsNone(s.get(theirs, "pet"))
        self.assertIsNone(s.get(theirs, "u_alice/pet"))
        self.assertEqual(s.search(theirs, query="cat named Miso"), [])
        self.assertEqual(s.search(s.namespace("u_bob", "support.pets"), query="vet in Braga"), [])
        self.assertEqual(s.list_namespaces(prefix=theirs), [])
        # the tenant's user-less namespace holds only user-less memories, and lists no user
        self.assertEqual([i.key for i in s.search((T,))], ["office_hours"])
        self.assertEqual(s.list_namespaces(), [(T,)])
        self.assertEqual(s.list_namespaces(prefix=(T, "*")), [])
        # alice's scopes list as themselves
        self.assertEqual(s.list_namespaces(prefix=mine), [mine])
        self.assertEqual(s.list_namespaces(prefix=(T, "u_alice", "support%2Epets")),
                         [s.namespace("u_alice", "support.pets")])
        self.assertEqual(s.list_namespaces(prefix=(T, "u_alice", "support%2Epets"), max_depth=2), [mine])
        self.assertEqual(s.list_namespaces(prefix=(T, "u_alice"), max_depth=1), [(T,)])
        # recall cannot enumerate intents: a wildcard intent lists nothing beyond the cross-intent scope
        self.assertEqual(s.list_namespaces(prefix=(T, "u_alice", "*")), [])
        self.assertEqual(s.list_namespaces(prefix=(T, "u_alice", "support%2Epets"), suffix=("support%2Epets",)),
                         [s.namespace("u_alice", "support.pets")])
        self.assertEqual(s.list_namespaces(prefix=(T, "u_alice", "support%2Epets"), suffix=("x",)), [])
        # get and search are exactly the namespace's scope: the user-less memory is not alice's,
        # her cross-intent memory is not her intent's (recall_fact sees both: the store keeps its scope's)
        self.assertEqual(s.get((T,), "office_hours").value["text"], "The support desk opens at nine.")
        self.assertIsNone(s.get(mine, f"{T}/office_hours"))
        self.assertIsNone(s.get(s.namespace("u_alice", "support.pets"), "pet"))
        self.assertEqual(s.get(mine, "pet").value["pet"], "cat")
        self.assertEqual([i.key for i in s.search(mine)], ["pet"])

    def test_delete_retracts_and_needs_an_admin(self) -> None:
        s = self.store()
        ns = s.namespace("u_del")
        s.put(ns, "plan", {"plan": "gold"})
        mid = s.last_outcome.memory_id
        with self.assertRaises(mf.PermissionDenied) as e:
            s.delete(ns, "plan")
        self.assertEqual(e.exception.sqlstate, "42501")
        with self.assertRaises(mf.PermissionDenied):
            self.store("reviewer").delete(ns, "plan")
        self.assertEqual(s.get(ns, "plan").value, {"plan": "gold"})
        ad = self.store("admin", actor="op:dana")
        ad.delete(ns, "plan")
        self.assertEqual((ad.last_outcome.stage, ad.last_outcome.memory_id), ("retracted", mid))
        self.assertIsNone(s.get(ns, "plan"))
        self.assertEqual(s.search(ns), [])
        hist = self.client("admin").memory_history(mid)
        self.assertIn("retracted", [h.stage for h in hist])
        # nothing to delete: nothing happens, for any role
        s.delete(ns, "plan")
        self.assertEqual(s.last_outcome.stage, "absent")
        # a put after the delete writes the value again (a person decides: it repeats a retracted memory)
        out = s.put_governed(ns, "plan", {"plan": "gold"})
        self.assertEqual((out.stage, out.reason), ("waiting_for_human", "repeats_retracted"))

    def test_a_memory_without_a_fact_is_keyed_by_its_id(self) -> None:
        c = self.client()
        cand = c.capture_memory("u_free likes long walks on the beach.", "agent", "INTERNAL", user_id="u_free")
        c.review_candidate(cand.id)
        m = c.promote(cand.id)
        s = self.store()
        ns = s.namespace("u_free")
        [hit] = s.search(ns)
        self.assertEqual((hit.key, hit.value), (m.id, {"text": "u_free likes long walks on the beach."}))
        self.assertEqual(s.get(ns, m.id).value, hit.value)
        self.assertIsNone(s.get(s.namespace("u_other"), m.id))
        with self.assertRaises(InvalidKeyError):
            s.put(ns, m.id, {"text": "overwrite"})
        self.store("admin").delete(ns, m.id)
        self.assertIsNone(s.get(ns, m.id))

    def test_search_filters_and_pages(self) -> None:
        s = self.store()
        ns = s.namespace("u_page", "catalog")
        for i in range(6):
            s.put(ns, f"item_{i}", {"n": i, "kind": "even" if i % 2 == 0 else "odd"})
        self.assertEqual(sorted(i.value["n"] for i in s.search(ns, filter={"kind": "even"})), [0, 2, 4])
        self.assertEqual(sorted(i.value["n"] for i in s.search(ns, filter={"n": {"$gte": 4}})), [4, 5])
        self.assertEqual(s.search(ns, filter={"kind": "none"}), [])
        page1, page2 = s.search(ns, limit=4), s.search(ns, limit=4, offset=4)
        self.assertEqual((len(page1), len(page2)), (4, 2))
        self.assertEqual(sorted(i.key for i in page1 + page2), [f"item_{i}" for i in range(6)])
        # a filter that keeps few: recall is asked for more until it has them
        self.assertEqual([i.value["n"] for i in s.search(ns, filter={"n": 5}, limit=1)], [5])
        self.assertEqual(s.search(ns, limit=0), [])
        # another entity's fact in the user's namespace keeps its entity in the key
        s.put(ns, "order_7/status", {"status": "shipped"})
        [hit] = s.search(ns, filter={"status": "shipped"})
        self.assertEqual(hit.key, "order_7/status")
        self.assertEqual(s.get(ns, hit.key).value, {"status": "shipped"})

    def test_ttl_and_index_are_refused(self) -> None:
        s = self.store()
        ns = (T, "u_ttl")
        with self.assertRaises(NotImplementedError):
            s.put(ns, "k", {"a": 1}, ttl=5)
        with self.assertRaises(NotImplementedError):
            s.put(ns, "k", {"a": 1}, index=False)
        with self.assertRaises(NotImplementedError):
            s.batch([PutOp(ns, "k", {"a": 1}, index=["a"])])
        self.assertEqual(self.candidates("user_id = %s", "u_ttl"), 0)
        # refresh_ttl is accepted and changes nothing
        self.assertIsNone(s.get(ns, "k", refresh_ttl=False))

    def test_hostile_keys_and_namespaces(self) -> None:
        s = self.store()
        ns = s.namespace("u_hostile")
        # empty, dotted, over-long or wildcard namespaces, and bad escapes: refused before any call
        for bad in ((), (T, ""), (T, "a.b"), (T, "u", "i", "x"), (T, "*"), (T, "50%"), (T, "u\x00")):
            with self.assertRaises(InvalidNamespaceError, msg=repr(bad)):
                s.batch([PutOp(bad, "k", {"a": 1})])
        with self.assertRaises(InvalidNamespaceError):
            s.put((T, "a.b"), "k", {"a": 1})
        with self.assertRaises(InvalidNamespaceError):
            s.get((T, ""), "k")
        # keys the store cannot read
        for bad in ("a/b/c", "x%zz", "/a/"):
            with self.assertRaises(InvalidKeyError, msg=bad):
                s.put(ns, bad, {"a": 1})
        # keys and labels the extension refuses: 22023 (empty, invisible characters), 54000 (too long)
        for bad in ("", "/x", "x/", "a\u200bb", "cus\ufeff/p", "e/p\u202e", " /p"):
            with self.assertRaises(mf.InvalidArgument, msg=repr(bad)) as e:
                s.put(ns, bad, {"a": 1})
            self.assertEqual(e.exception.sqlstate, "22023")
        with self.assertRaises(mf.LimitExceeded):
            s.put(ns, "k" * 5000, {"a": 1})
        with self.assertRaises(mf.InvalidArgument):
            s.put((T, "u\u200d"), "k", {"a": 1})
        with self.assertRaises(mf.InvalidArgument):
            s.get((T, "u\u2066x"), "k")
        with self.assertRaises(mf.InvalidArgument):
            s.search((T, "u_hostile", "in\u00adtent"))
        with self.assertRaises(TypeError):
            s.put(ns, "k", ["not", "a", "mapping"])  # type: ignore[arg-type]
        self.assertEqual(self.candidates("user_id = %s", "u_hostile"), 0)
        # a get of a key nobody wrote, or with an invisible character, finds nothing
        self.assertIsNone(s.get(ns, "a\u200bb"))
        # hostile text is data, and escapes round-trip
        for key, value in (("'); DROP TABLE memory_fabric.candidates; --", {"sql": "$$ \\ '"}),
                           ("path%2Fwith%2Fslashes/label", {"ok": True}), ("ünïcødé/☃", {"snow": "☃"})):
            s.put(ns, key, value)
            self.assertEqual(s.last_outcome.stage, "promoted", key)
            self.assertEqual(s.get(ns, key).value, value)
        keys = {i.key for i in s.search(ns)}
        self.assertIn("path%2Fwith%2Fslashes/label", keys)
        self.assertIn("'); DROP TABLE memory_fabric.candidates; --", keys)
        self.assertEqual(self.client().recall_fact("path/with/slashes", "label", user_id="u_hostile")[0].value,
                         {"ok": True})


class Async(Base):
    def test_abatch_on_the_async_client(self) -> None:
        async def run() -> None:
            a = await mf.AsyncMemoryFabric.connect(conninfo(ROLES["agent"]), tenant_id=T)
            ad = await mf.AsyncMemoryFabric.connect(conninfo(ROLES["admin"]), tenant_id=T)
            try:
                s = MemoryFabricStore(a)
                self.assertIsNone(s.client)
                ns = s.namespace("u_async", "support.billing")
                value = {"text": "u_async pays by bank transfer.", "method": "transfer"}
                # the loop keeps running while the store waits on the server
                ticks = 0

                async def ticker() -> None:
                    nonlocal ticks
                    while True:
                        ticks += 1
                        await asyncio.sleep(0)

                t = asyncio.create_task(ticker())
                got = await s.abatch([PutOp(ns, "payment_method", value), GetOp(ns, "payment_method"),
                                      SearchOp(ns, query="how does the customer pay?"),
                                      ListNamespacesOp(match_conditions=(MatchCondition("prefix", ns),))])
                seen = ticks
                t.cancel()
                self.assertGreater(seen, 5)
                self.assertIsNone(got[0])
                self.assertEqual(s.last_outcome.stage, "promoted")
                self.assertEqual((got[1].value, got[1].namespace), (value, ns))
                self.assertEqual([(i.key, i.value) for i in got[2]], [("payment_method", value)])
                self.assertEqual(got[3], [ns])
                # the same value again: nothing captured
                await s.aput(ns, "payment_method", dict(value))
                self.assertEqual(s.last_outcome.stage, "unchanged")
                out = await s.aput_governed(ns, "payment_method", {"text": "u_async pays by card.", "method": "card"})
                self.assertEqual(out.stage, "contradiction_blocked")
                # another user, another tenant
                self.assertIsNone(await s.aget(s.namespace("u_async2", "support.billing"), "payment_method"))
                with self.assertRaises(InvalidNamespaceError):
                    await s.aget((OTHER, "u_async"), "payment_method")
                # delete: an agent is refused, an admin retracts
                with self.assertRaises(mf.PermissionDenied):
                    await s.adelete(ns, "payment_method")
                await MemoryFabricStore(ad).adelete(ns, "payment_method")
                self.assertIsNone(await s.aget(ns, "payment_method"))
                self.assertEqual(await s.asearch(ns), [])
                with self.assertRaises(mf.InvalidArgument):
                    await s.aput(ns, "a\u200bb", {"a": 1})
                # the sync methods of an async-only store: refused on the loop, served from a thread
                with self.assertRaises(RuntimeError):
                    s.get(ns, "payment_method")
                await s.aput(ns, "language", {"lang": "en"})
                item = await asyncio.to_thread(s.get, ns, "language")
                self.assertEqual(item.value, {"lang": "en"})
            finally:
                await a.conn.close()
                await ad.conn.close()

        asyncio.run(run())

    def test_abatch_of_a_sync_store_runs_in_a_thread(self) -> None:
        s = self.store()
        ns = s.namespace("u_thread")
        loop_thread: list[int] = []
        seen: list[int] = []
        real_run = s._run

        def spy(op: Any) -> Any:
            seen.append(threading.get_ident())
            return real_run(op)

        s._run = spy  # type: ignore[method-assign]

        async def run() -> None:
            loop_thread.append(threading.get_ident())
            await s.aput(ns, "k", {"a": 1})
            self.assertEqual((await s.aget(ns, "k")).value, {"a": 1})

        asyncio.run(run())
        self.assertTrue(seen)
        self.assertNotIn(loop_thread[0], seen)

    def test_both_clients_serve_both_paths(self) -> None:
        sync = self.client()

        async def run() -> None:
            a = await mf.AsyncMemoryFabric.connect(conninfo(ROLES["agent"]), tenant_id=T)
            try:
                s = MemoryFabricStore(sync, aclient=a)
                ns = s.namespace("u_both")
                await s.aput(ns, "k", {"a": 2})
                self.assertEqual(s.get(ns, "k").value, {"a": 2})
                with self.assertRaises(ValueError):
                    MemoryFabricStore(self.client("admin", OTHER), aclient=a)
            finally:
                await a.conn.close()

        asyncio.run(run())


if __name__ == "__main__":
    unittest.main()
