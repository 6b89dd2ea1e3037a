"""The package against a running cluster with memory_fabric, as ordinary roles.

    MF_TEST_CONNINFO="host=... port=... user=<superuser>" python3 -m unittest discover -s clients/python/tests

The superuser only makes the database, the roles (agent, reviewer, admin) and their grants; every
call under test runs as one of those roles.
"""

from __future__ import annotations

import asyncio
import unittest
from dataclasses import fields

import psycopg
from pgvector import Vector

import memory_fabric as mf
import pgtest
from memory_fabric import types

DB = "memory_fabric_python"
ADMIN_INFO = pgtest.ADMIN_INFO
ROLES = {"agent": "mf_py_agent", "reviewer": "mf_py_reviewer", "admin": "mf_py_admin",
         "other_agent": "mf_py_agent2"}


def conninfo(user: str) -> str:
    return pgtest.conninfo(DB, user)


def setUpModule() -> None:
    with pgtest.fresh_database(DB, [(role, kind.replace("other_", "")) for kind, role in ROLES.items()]) as c:
        for role in ROLES.values():
            c.execute("SELECT memory_fabric.grant_tenant(%s, 't_py')", (role,))
        c.execute("SELECT memory_fabric.grant_tenant(%s, 't_py_other')", (ROLES["admin"],))


def tearDownModule() -> None:
    pgtest.drop_database(DB, ROLES.values())


class Sync(unittest.TestCase):
    def client(self, kind: str = "agent", tenant: str = "t_py") -> mf.MemoryFabric:
        c = mf.MemoryFabric.connect(conninfo(ROLES[kind]), tenant_id=tenant)
        self.addCleanup(c.conn.close)
        return c

    def test_capture_review_promote_recall(self) -> None:
        a = self.client()
        c = a.capture_memory("Customer cus_1 wants paper invoices.", "agent", "INTERNAL", user_id="cus_1",
                             evidence_refs=["ticket:1"], metadata={"channel": "chat"})
        self.assertIsInstance(c, mf.Candidate)
        self.assertEqual((c.tenant_id, c.user_id, c.text), ("t_py", "cus_1", "Customer cus_1 wants paper invoices."))
        r = a.review_candidate(c.id)
        self.assertIsInstance(r, mf.Review)
        self.assertEqual((r.status, r.reviewer), ("pending_promotion", "auto"))
        m = a.promote(c.id)
        self.assertIsInstance(m, mf.Memory)
        got = a.recall(user_id="cus_1", query_text="how does cus_1 want invoices?")
        self.assertTrue(got and all(isinstance(x, mf.RecalledMemory) for x in got))
        self.assertIn(m.id, [x.memory_id for x in got])
        self.assertEqual([x for x in got if x.memory_id == m.id][0].evidence_refs, ["ticket:1"])

        # the same again: a duplicate, which promote refuses with its own exception
        d = a.capture_memory("Customer cus_1 wants paper invoices.", "agent", "INTERNAL", user_id="cus_1")
        self.assertEqual(a.review_candidate(d.id).status, "duplicate_of")
        with self.assertRaises(mf.DuplicateMemory) as e:
            a.promote(d.id)
        self.assertEqual(e.exception.sqlstate, "55000")
        # a contradiction that blocks
        x = a.capture_memory("Customer cus_1 does not want paper invoices.", "agent", "INTERNAL", user_id="cus_1")
        rx = a.review_candidate(x.id)
        self.assertEqual((rx.status, rx.contradiction_resolution, rx.contradicts_id), ("contradicts", "block", m.id))
        with self.assertRaises(mf.ContradictsMemory):
            a.promote(x.id)

    def test_review_status_and_recall_fact(self) -> None:
        a = self.client()
        c = a.capture_memory("Customer cus_9 ships to Porto.", "agent", "INTERNAL", user_id="cus_9",
                             entity="cus_9", predicate="ships_to", value="Porto")
        self.assertEqual(a.review_status(c.id).stage, "unreviewed")
        a.review_candidate(c.id)
        self.assertEqual(a.review_status(c.id).stage, "promotable")
        m = a.promote(c.id)
        st = a.review_status(c.id)
        self.assertIsInstance(st, mf.ReviewStatus)
        self.assertEqual((st.stage, st.memory_id), ("promoted", m.id))
        got = a.recall_fact("cus_9", "ships_to", user_id="cus_9")
        self.assertEqual([(x.memory_id, x.value) for x in got], [(m.id, "Porto")])
        self.assertEqual(a.recall_fact("cus_9", "ships_to", user_id="cus_8"), [])
        # another agent role of the tenant cannot ask about this one's capture
        with self.assertRaises(mf.NotFound):
            self.client("other_agent").review_status(c.id)

    def test_four_eyes_and_approval(self) -> None:
        a, rv, ad = self.client(), self.client("reviewer"), self.client("admin")
        # an operator's fact (a reviewer's capture) is durable: it waits for a human
        c = rv.capture_memory("Refunds over 500 EUR need a manager.", "operator", "INTERNAL", actor="op:ann")
        self.assertEqual(rv.review_candidate(c.id).reviewer, "human")
        with self.assertRaises(mf.RequiresApproval) as e:
            a.promote(c.id)
        self.assertIn("approve()", e.exception.hint or "")
        # an agent may not approve at all; the capturing role, or its actor, may not either
        with self.assertRaises(mf.PermissionDenied):
            a.approve(c.id, "op:bob")
        with self.assertRaises(mf.FourEyes):
            rv.approve(c.id, "op:bob")
        with self.assertRaises(mf.FourEyes):
            ad.approve(c.id, "op:ann")
        m = ad.approve(c.id, "op:bob", notes="checked")
        self.assertEqual(m.candidate_id, c.id)
        stages = [h.stage for h in rv.memory_history(m.id) if not h.stage.startswith("event")]
        self.assertEqual(stages, ["captured", "reviewed", "decided", "promoted"])
        ex = rv.explain_recall(m.id)
        self.assertIsInstance(ex, mf.Explanation)
        self.assertTrue(ex.visible)

    def test_errors_carry_their_sqlstate(self) -> None:
        a = self.client()
        with self.assertRaises(mf.InvalidArgument) as e:
            a.capture_memory("x", "agent", "NOT_A_CLASS")
        self.assertEqual(e.exception.sqlstate, "22023")
        with self.assertRaises(mf.NotFound):
            a.review_candidate("mc_20260101t000000_000000000000")
        with self.assertRaises(mf.TenantNotGranted) as e:
            self.client(tenant="t_py_other").capture_memory("Not mine.", "agent", "INTERNAL")
        self.assertEqual(e.exception.sqlstate, "42501")
        with self.assertRaises(mf.PermissionDenied):
            a.set_policy({"trust": {"min_confidence": 0.5}})
        # hostile text is data
        c = a.capture_memory("'); DROP TABLE memory_fabric.candidates; --", "agent", "PUBLIC")
        self.assertEqual(c.text, "'); DROP TABLE memory_fabric.candidates; --")

    def test_another_tenants_memories_are_not_reachable(self) -> None:
        other = self.client("admin", "t_py_other")
        c = other.capture_memory("The other tenant's secret plan.", "system", "INTERNAL")
        other.review_candidate(c.id)
        other.promote(c.id)
        a = self.client()
        self.assertNotIn("The other tenant's secret plan.", [x.text for x in a.recall(query_text="secret plan")])
        with self.assertRaises(mf.NotFound):
            a.review_candidate(c.id)

    def test_a_transaction_is_one_pin_and_all_or_nothing(self) -> None:
        a = self.client()
        with a.transaction():
            c = a.capture_memory("The Faro depot opens at seven.", "agent", "INTERNAL")
            a.review_candidate(c.id)
            m = a.promote(c.id)
        self.assertTrue(any(x.memory_id == m.id for x in a.recall(query_text="Faro depot")))
        with self.assertRaises(mf.InvalidArgument):
            with a.transaction():
                lost = a.capture_memory("Written, then rolled back.", "agent", "INTERNAL")
                a.capture_memory("x", "agent", "NOT_A_CLASS")
        with self.assertRaises(mf.NotFound):
            a.review_candidate(lost.id)

    def test_admin_functions(self) -> None:
        ad = self.client("admin")
        p = ad.set_policy({"judge": {"merge": 0.7}}, note="python")
        self.assertIsInstance(p, mf.Policy)
        self.assertEqual(p.body["judge"]["merge"], 0.7)
        k = ad.record_consent("cus_9", "support_personalization", "consent", evidence_refs=["form:9"])
        self.assertIsInstance(k, mf.Consent)
        self.assertIsNotNone(ad.revoke_consent(k.id, "withdrawn").revoked_at)
        m = ad.register_embedding_model("py/tiny-3", 3)
        self.assertEqual((m.model, m.dimensions), ("py/tiny-3", 3))
        c = ad.capture_memory("A vector of our own.", "system", "INTERNAL", embedding=[0.1, 0.2, 0.3],
                              embedding_model="py/tiny-3")
        self.assertEqual(c.embedding_model, "py/tiny-3")
        # vectors come back as pgvector's Vector, and go in as one too
        self.assertIsInstance(c.embedding, Vector)
        self.assertEqual([round(x, 6) for x in c.embedding.to_list()], [0.1, 0.2, 0.3])
        c2 = ad.capture_memory("Another vector of our own.", "system", "INTERNAL", embedding=Vector([0.3, 0.2, 0.1]),
                               embedding_model="py/tiny-3")
        self.assertEqual([round(x, 6) for x in c2.embedding.to_list()], [0.3, 0.2, 0.1])
        got = ad.recall(query_embedding=[0.1, 0.2, 0.3], query_embedding_model="py/tiny-3")
        self.assertIsInstance(got, list)
        e = ad.forget_subject("cus_9", "request 9")
        self.assertIsInstance(e, mf.Erasure)
        self.assertIsInstance(ad.purge_expired(), int)
        ad.promote_pending(batch_size=10)


class Async(unittest.TestCase):
    def test_the_same_methods_awaited(self) -> None:
        async def run() -> None:
            async with await mf.AsyncMemoryFabric.connect(conninfo(ROLES["agent"]), tenant_id="t_py") as a:
                c = await a.capture_memory("The Braga office closes at five.", "agent", "INTERNAL")
                self.assertIsInstance(c, mf.Candidate)
                r = await a.review_candidate(c.id)
                self.assertEqual(r.status, "pending_promotion")
                async with a.transaction():
                    m = await a.promote(c.id)
                got = await a.recall(query_text="Braga office")
                self.assertIn(m.id, [x.memory_id for x in got])
                with self.assertRaises(mf.NotFound):
                    await a.review_candidate("mc_20260101t000000_000000000000")

        asyncio.run(run())


class Types(unittest.TestCase):
    def test_the_dataclasses_have_the_catalogs_columns(self) -> None:
        tables = {"candidates": types.Candidate, "reviews": types.Review, "promoted_memory": types.Memory,
                  "decisions": types.Decision, "consents": types.Consent, "policies": types.Policy,
                  "tenant_grants": types.TenantGrant, "embedding_models": types.EmbeddingModel}
        with psycopg.connect(ADMIN_INFO, dbname=DB) as c:
            for table, cls in tables.items():
                cols = [r[0] for r in c.execute(
                    "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped "
                    "ORDER BY attnum", (f"memory_fabric.{table}",))]
                self.assertEqual([f.name for f in fields(cls) if f.name != "extra"], cols, table)
            res = c.execute("SELECT pg_get_function_result('memory_fabric.recall'::regproc)").fetchone()[0]
            names = [p.strip().split(" ")[0] for p in res[len("TABLE("):-1].split(",")]
            self.assertEqual([f.name for f in fields(types.RecalledMemory) if f.name != "extra"], names)
            for fn, cls in (("recall_fact", types.RecalledMemory), ("review_status", types.ReviewStatus)):
                res = c.execute("SELECT pg_get_function_result(%s::regproc)", (f"memory_fabric.{fn}",)).fetchone()[0]
                names = [p.strip().split(" ")[0] for p in res[len("TABLE("):-1].split(",")]
                self.assertEqual([f.name for f in fields(cls) if f.name != "extra"], names, fn)


if __name__ == "__main__":
    unittest.main()
