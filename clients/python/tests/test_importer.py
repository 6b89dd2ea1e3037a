"""python -m memory_fabric.importer, run as a subprocess as an ordinary agent role, against a
running cluster with memory_fabric (MF_TEST_CONNINFO names a superuser, as for test_client.py).

The superuser only makes the database, the roles and their grants, and counts every tenant's
candidates to show that a refused or dry run wrote nothing; each import runs as mf_imp_agent,
and the provenance it left is read back as that agent (recall) and as a reviewer of the tenant
(the candidates' metadata, which an agent cannot SELECT). Fixtures: tests/fixtures/.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from typing import Any
from unittest import mock

import psycopg
from psycopg.conninfo import conninfo_to_dict

import memory_fabric as mf
import pgtest
from memory_fabric import importer

DB = "memory_fabric_importer"
ADMIN_INFO = pgtest.ADMIN_INFO
AGENT = "mf_imp_agent"
REVIEWER = "mf_imp_reviewer"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
MEM0 = FIXTURES / "mem0_export.json"
FACTS = FIXTURES / "facts.jsonl"
# t_imp: the mem0 export; t_imp_facts: the JSON Lines; t_imp_other: never imported into;
# t_imp_dry: only dry runs; t_imp_resume: an import stopped half-way, then run again;
# t_imp_hostile: files of hostile records; t_imp_nogrant: granted to nobody
TENANTS = ("t_imp", "t_imp_facts", "t_imp_other", "t_imp_dry", "t_imp_resume", "t_imp_hostile")


def conninfo(user: str) -> str:
    return pgtest.conninfo(DB, user)


def setUpModule() -> None:
    with pgtest.fresh_database(DB, ((AGENT, "agent"), (REVIEWER, "reviewer"))) as c:
        for t in TENANTS:
            c.execute("SELECT memory_fabric.grant_tenant(%s, %s)", (AGENT, t))
        for t in ("t_imp", "t_imp_facts"):
            c.execute("SELECT memory_fabric.grant_tenant(%s, %s)", (REVIEWER, t))
        # PII without a write class needs a consent here: the facts' PII line is rejected (no_consent)
        c.execute("SELECT memory_fabric.set_policy('t_imp_facts', %s)",
                  (json.dumps({"consent": {"without_write_class": True}}),))


def tearDownModule() -> None:
    pgtest.drop_database(DB, (AGENT, REVIEWER))


def run_importer(*args: str, user: str = AGENT) -> subprocess.CompletedProcess[str]:
    """The command as a user runs it: PG* variables for the role, no password, another folder."""
    parts = conninfo_to_dict(ADMIN_INFO)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env.update(PGHOST=str(parts.get("host", "")), PGPORT=str(parts.get("port", "5432")), PGUSER=user, PGDATABASE=DB)
    with tempfile.TemporaryDirectory() as cwd:
        return subprocess.run([sys.executable, "-m", "memory_fabric.importer", *args], env=env, cwd=cwd,
                              capture_output=True, text=True, timeout=600)


def report_of(p: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    if p.returncode != 0:
        raise AssertionError(f"importer exited {p.returncode}\nstdout: {p.stdout}\nstderr: {p.stderr}")
    return json.loads(p.stdout)  # the whole of stdout is the report


def all_candidates() -> int:
    with psycopg.connect(ADMIN_INFO, dbname=DB) as c:
        return c.execute("SELECT count(*) FROM memory_fabric.candidates").fetchone()[0]  # type: ignore[index]


def candidate_as_reviewer(tenant: str, candidate_id: str) -> Any:
    """(metadata, actor, source) of a candidate, as the reviewer pinned to the tenant reads it; None unseen."""
    with psycopg.connect(conninfo(REVIEWER), autocommit=True) as c:
        c.execute("SELECT pg_catalog.set_config('memory_fabric.tenant_id', %s, false)", (tenant,))
        return c.execute("SELECT metadata, actor, source FROM memory_fabric.candidates WHERE id = %s",
                         (candidate_id,)).fetchone()


def metadata_as_reviewer(tenant: str, candidate_id: str) -> tuple[Any, str, str]:
    row = candidate_as_reviewer(tenant, candidate_id)
    assert row is not None, candidate_id
    return row[0], row[1], row[2]


def agent(tenant: str) -> mf.MemoryFabric:
    return mf.MemoryFabric.connect(conninfo(AGENT), tenant_id=tenant)


FIXTURE = {m["id"]: m for m in json.loads(MEM0.read_text())["results"]}
ID = {k[-3:]: k for k in FIXTURE}  # the last three characters of each id name it below


class Mem0Import(unittest.TestCase):
    """The mem0 export into t_imp, in batches of 4 (the refused record is in the third batch)."""

    proc: subprocess.CompletedProcess[str]
    report: dict[str, Any]

    @classmethod
    def setUpClass(cls) -> None:
        cls.proc = run_importer("--tenant", "t_imp", "--batch-size", "4", "--json", str(MEM0))
        cls.report = report_of(cls.proc)

    def test_the_counts(self) -> None:
        r = self.report
        self.assertEqual((r["format"], r["tenant"], r["dry_run"]), ("mem0", "t_imp", False))
        self.assertEqual(
            {k: r[k] for k in ("read", "captured", "skipped", "skip_reasons", "promoted", "duplicates",
                               "contradictions_blocked", "queued_for_human", "rejected", "unreviewed", "other_stages")},
            {"read": 12, "captured": 9, "skipped": 3, "skip_reasons": {"22023": 1, "empty_text": 1, "expired": 1},
             "promoted": 7, "duplicates": 1, "contradictions_blocked": 1, "queued_for_human": 0, "rejected": 0,
             "unreviewed": 0, "other_stages": {}})
        self.assertEqual(r["bulk"], {"open": 9, "reviewed": 9, "promoted": 7})

    def test_each_record_that_was_not_promoted_is_named(self) -> None:
        skipped = {s["ref"]: s["reason"] for s in self.report["skipped_records"]}
        self.assertEqual(skipped, {f"mem0:{ID['b15']}": "empty_text", f"mem0:{ID['b16']}": "expired",
                                   f"mem0:{ID['b14']}": "22023"})
        refused = next(s for s in self.report["skipped_records"] if s["reason"] == "22023")
        self.assertIn("U+200B", refused["message"])
        stages = {n["ref"]: n for n in self.report["not_promoted"]}
        self.assertEqual(set(stages), {f"mem0:{ID['a04']}", f"mem0:{ID['a05']}"})
        dup, blocked = stages[f"mem0:{ID['a04']}"], stages[f"mem0:{ID['a05']}"]
        self.assertEqual((dup["stage"], dup["reason"]), ("duplicate", "duplicate:same_content"))
        self.assertEqual(blocked["stage"], "contradiction_blocked")
        self.assertTrue(blocked["reason"].startswith("contradiction"), blocked)
        alice = {m.text: m for m in self._recall("alice")}
        self.assertEqual(dup["duplicate_of"], alice["Is allergic to peanuts"].memory_id)
        self.assertEqual(blocked["contradicts"], alice["Prefers email for order updates"].memory_id)

    def test_progress_goes_to_stderr_a_line_per_batch(self) -> None:
        err = self.proc.stderr.splitlines()
        self.assertNotIn("\r", self.proc.stderr)  # not a terminal: no redrawing
        capture = [ln for ln in err if ln.startswith("capture ")]
        promote = [ln for ln in err if ln.startswith("promote ")]
        # 10 valid records in batches of 4; the bulk path's 9 open candidates in batches of 4
        self.assertEqual([ln.split("] ")[1].split()[0] for ln in capture], ["0/10", "4/10", "8/10", "10/10"])
        self.assertEqual([ln.split("] ")[1].split()[0] for ln in promote], ["4/9", "8/9", "9/9"])
        self.assertIn("[##############################] 9/9 100%  9 reviewed, 7 promoted", promote[-1])
        self.assertNotIn("capture  [", self.proc.stdout)
        self.assertNotIn("promote  [", self.proc.stdout)

    def _recall(self, user_id: Any) -> list[Any]:
        with agent("t_imp") as a:
            return a.recall(user_id=user_id, max_recalls=50)

    def test_recall_finds_the_facts_with_their_provenance(self) -> None:
        self.maxDiff = None
        alice = {m.text: m for m in self._recall("alice")}
        bob = {m.text: m for m in self._recall("bob")}
        self.assertEqual(set(alice), {"Prefers email for order updates", "Is allergic to peanuts",
                                      "Lives in Lisbon and works remotely", "Orders placed before noon ship the same day"})
        self.assertEqual(set(bob), {"Plays tennis on Saturday mornings", "Is learning Portuguese for a move to Porto",
                                    "Favourite code editor is Vim", "Orders placed before noon ship the same day"})
        for text, m in {**alice, **bob}.items():
            self.assertEqual((m.source, m.tier, m.in_contradiction), ("agent", "semantic", False), text)
            self.assertEqual(len(m.evidence_refs), 1)
            self.assertTrue(m.evidence_refs[0].startswith("mem0:"))
            self.assertEqual(FIXTURE[m.evidence_refs[0][5:]]["memory"], text)
        self.assertEqual(alice["Is allergic to peanuts"].evidence_refs, [f"mem0:{ID['a02']}"])
        self.assertEqual(alice["Orders placed before noon ship the same day"].user_scope, None)
        # the metadata, as the tenant's reviewer reads it
        md, actor, source = metadata_as_reviewer("t_imp", alice["Prefers email for order updates"].candidate_id)
        original = FIXTURE[ID["a01"]]
        self.assertEqual((actor, source), ("import:mem0_export.json", "agent"))
        self.assertEqual(md, {"channel": "chat", "purpose": "support_personalization", "imported": {
            "from": "mem0", "file": "mem0_export.json", "id": original["id"], "hash": original["hash"],
            "created_at": original["created_at"], "updated_at": original["updated_at"], "agent_id": "shop-assistant",
            "run_id": "run-2024-11-02-a", "categories": ["preferences"]}})
        md, _, _ = metadata_as_reviewer("t_imp", bob["Plays tennis on Saturday mornings"].candidate_id)
        self.assertEqual(md["imported"]["categories"], ["hobbies", "sports"])
        self.assertNotIn("updated_at", md["imported"])  # null in the export: not kept
        self.assertEqual(set(md), {"imported"})

    def test_running_the_same_file_again_promotes_nothing_new(self) -> None:
        before = {m.memory_id for m in self._recall("alice")} | {m.memory_id for m in self._recall("bob")}
        r = report_of(run_importer("--tenant", "t_imp", "--batch-size", "4", "--json", str(MEM0)))
        self.assertEqual({k: r[k] for k in ("read", "captured", "skipped", "promoted", "duplicates",
                                            "contradictions_blocked", "queued_for_human", "rejected", "unreviewed")},
                         {"read": 12, "captured": 9, "skipped": 3, "promoted": 0, "duplicates": 8,
                          "contradictions_blocked": 1, "queued_for_human": 0, "rejected": 0, "unreviewed": 0})
        self.assertEqual(r["bulk"]["promoted"], 0)
        self.assertTrue({n["duplicate_of"] for n in r["not_promoted"] if n["stage"] == "duplicate"} <= before)
        after = {m.memory_id for m in self._recall("alice")} | {m.memory_id for m in self._recall("bob")}
        self.assertEqual(after, before)

    def test_another_tenant_sees_none_of_it(self) -> None:
        ids = [n["candidate_id"] for n in self.report["not_promoted"]]
        with agent("t_imp_other") as o:
            for user in ("alice", "bob", None):
                self.assertEqual(o.recall(user_id=user, max_recalls=50), [], user)
            self.assertEqual(o.recall(user_id="alice", query_text="peanut allergy"), [])
            # the role holds both grants: the id is of a tenant this transaction is not pinned to
            with self.assertRaises((mf.NotFound, mf.TenantNotGranted)):
                o.review_status(ids[0])
        # t_imp's reviewer pinned there reads the candidate; pinned to t_imp_other (no grant), nothing
        self.assertIsNotNone(candidate_as_reviewer("t_imp", ids[0]))
        self.assertIsNone(candidate_as_reviewer("t_imp_other", ids[0]))


class JsonlImport(unittest.TestCase):
    """The facts into t_imp_facts, in one batch."""

    report: dict[str, Any]

    @classmethod
    def setUpClass(cls) -> None:
        cls.report = report_of(run_importer("--tenant", "t_imp_facts", "--json", str(FACTS)))

    def test_the_counts(self) -> None:
        r = self.report
        self.assertEqual(r["format"], "jsonl")
        self.assertEqual(
            {k: r[k] for k in ("read", "captured", "skipped", "skip_reasons", "promoted", "duplicates",
                               "contradictions_blocked", "queued_for_human", "rejected", "unreviewed")},
            {"read": 7, "captured": 5, "skipped": 2, "skip_reasons": {"22023": 1, "invalid_json": 1}, "promoted": 3,
             "duplicates": 0, "contradictions_blocked": 0, "queued_for_human": 1, "rejected": 1, "unreviewed": 0})
        self.assertEqual({s["ref"]: s["reason"] for s in r["skipped_records"]},
                         {"import:facts.jsonl#3": "invalid_json", "import:facts.jsonl#7": "22023"})
        self.assertEqual({n["ref"]: (n["stage"], n["reason"]) for n in r["not_promoted"]},
                         {"import:facts.jsonl#5": ("waiting_for_human", "untrusted_evidence"),
                          "import:facts.jsonl#6": ("rejected", "no_consent")})

    def test_recall_finds_the_facts_with_their_provenance(self) -> None:
        with agent("t_imp_facts") as a:
            got = {m.text: m for m in a.recall("support.calls", user_id="carol", max_recalls=50)}
        self.assertEqual(set(got), {"The Porto warehouse closes at 18:00 on weekdays.",
                                    "Carol wants invoices addressed to Carol Diaz Lda.", "Carol prefers calls after 3 pm."})
        line1 = got["The Porto warehouse closes at 18:00 on weekdays."]
        self.assertEqual((line1.evidence_refs, line1.user_scope), (["import:facts.jsonl#1"], None))
        line2 = got["Carol wants invoices addressed to Carol Diaz Lda."]
        self.assertEqual(line2.evidence_refs, ["import:facts.jsonl#2", "ticket:4411"])
        self.assertEqual((line2.entity, line2.predicate, line2.value, line2.user_scope),
                         ("customer:carol", "invoice_name", "Carol Diaz Lda.", "carol"))
        line8 = got["Carol prefers calls after 3 pm."]
        self.assertEqual((line8.intent_scope, line8.tier), ("support.calls", "episodic"))
        md, actor, _ = metadata_as_reviewer("t_imp_facts", line2.candidate_id)
        self.assertEqual(actor, "import:facts.jsonl")
        self.assertEqual(md, {"channel": "crm", "imported": {"from": "jsonl", "file": "facts.jsonl", "line": 2}})
        md, _, _ = metadata_as_reviewer("t_imp_facts", line1.candidate_id)
        self.assertEqual(md, {"imported": {"from": "jsonl", "file": "facts.jsonl", "line": 1}})


class Refusals(unittest.TestCase):
    def test_a_dry_run_writes_nothing(self) -> None:
        before = all_candidates()
        p = run_importer("--tenant", "t_imp_dry", "--dry-run", "--json", str(MEM0))
        r = report_of(p)
        self.assertEqual({k: r[k] for k in ("dry_run", "read", "valid", "captured", "skipped", "skip_reasons")},
                         {"dry_run": True, "read": 12, "valid": 10, "captured": 0, "skipped": 2,
                          "skip_reasons": {"empty_text": 1, "expired": 1}})
        self.assertEqual(p.stderr, "")
        # the list form of get_all(), in a file without an extension: mem0 by its content
        with tempfile.TemporaryDirectory() as d:
            listed = Path(d) / "export"
            listed.write_text(json.dumps(list(FIXTURE.values())))
            r = report_of(run_importer("--tenant", "t_imp_dry", "--dry-run", "--json", str(listed)))
            self.assertEqual((r["format"], r["read"], r["valid"]), ("mem0", 12, 10))
        r = report_of(run_importer("--tenant", "t_imp_dry", "--dry-run", "--json", str(FACTS)))
        self.assertEqual((r["format"], r["read"], r["valid"], r["skip_reasons"]), ("jsonl", 7, 6, {"invalid_json": 1}))
        p = run_importer("--tenant", "t_imp_dry", "--dry-run", str(FACTS))
        self.assertEqual(p.returncode, 0)
        self.assertIn("dry run: nothing written", p.stdout)
        self.assertEqual(all_candidates(), before)
        with agent("t_imp_dry") as a:
            self.assertEqual(a.recall(max_recalls=50), [])

    def test_a_password_in_the_dsn_is_refused(self) -> None:
        before = all_candidates()
        host = conninfo_to_dict(ADMIN_INFO).get("host", "")
        for dsn in (f"host={host} dbname={DB} password=hunter2", f"postgresql://{AGENT}:hunter2@localhost/{DB}"):
            p = run_importer("--tenant", "t_imp_dry", "--dsn", dsn, str(FACTS))
            self.assertEqual(p.returncode, importer.EXIT_USAGE, p.stderr)
            self.assertIn("must not carry a password", p.stderr)
            self.assertIn("PGPASSWORD", p.stderr)
            self.assertNotIn("hunter2", p.stderr)
            self.assertEqual(p.stdout, "")
        self.assertEqual(all_candidates(), before)

    def test_a_dsn_without_a_password_is_used(self) -> None:
        parts = conninfo_to_dict(ADMIN_INFO)
        dsn = f"host={parts.get('host')} port={parts.get('port', 5432)} dbname={DB} user={AGENT}"
        r = report_of(run_importer("--tenant", "t_imp_dry", "--dsn", dsn, "--dry-run", "--json", str(FACTS)))
        self.assertEqual(r["read"], 7)
        p = run_importer("--tenant", "t_imp_nogrant", "--dsn", dsn, str(FACTS), user="nobody_at_all")
        self.assertEqual(p.returncode, importer.EXIT_DATABASE)  # the DSN's user, not PGUSER, connected
        self.assertIn("42501", p.stderr)

    def test_a_tenant_without_a_grant_stops_the_import(self) -> None:
        before = all_candidates()
        p = run_importer("--tenant", "t_imp_nogrant", str(FACTS))
        self.assertEqual(p.returncode, importer.EXIT_DATABASE, p.stderr)
        self.assertIn("stopped by 42501", p.stderr)
        self.assertEqual(p.stdout, "")
        self.assertEqual(all_candidates(), before)

    def test_a_connection_error_stops_the_import(self) -> None:
        with tempfile.TemporaryDirectory() as nowhere:
            p = run_importer("--tenant", "t_imp", "--dsn", f"host={nowhere} port=1", str(FACTS))
        self.assertEqual(p.returncode, importer.EXIT_DATABASE, p.stderr)
        self.assertIn("could not connect", p.stderr)
        self.assertEqual(p.stdout, "")

    def test_unreadable_input_and_bad_options(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            p = run_importer("--tenant", "t_imp", str(Path(d) / "missing.json"))
            self.assertEqual((p.returncode, p.stdout), (importer.EXIT_INPUT, ""))
            self.assertIn("cannot read", p.stderr)
            other = Path(d) / "other.json"
            other.write_text('{"memories": []}')
            p = run_importer("--tenant", "t_imp", str(other))
            self.assertEqual(p.returncode, importer.EXIT_INPUT)
            self.assertIn("not a mem0 export", p.stderr)
            p = run_importer("--tenant", "t_imp", "--format", "mem0", str(FACTS))
            self.assertEqual(p.returncode, importer.EXIT_INPUT)
            self.assertIn("is not JSON", p.stderr)
        for args in (["--tenant", "t_imp", "--batch-size", "0", str(FACTS)], [str(FACTS)],
                     ["--tenant", "t_imp", "--format", "csv", str(FACTS)]):
            p = run_importer(*args)
            self.assertEqual(p.returncode, importer.EXIT_USAGE, args)
            self.assertEqual(p.stdout, "")


DEEP = "[" * 100000 + "]" * 100000  # json.loads raises RecursionError at about 1000 levels


class Hostile(unittest.TestCase):
    """Records no capture can take are skipped with their reason, the others imported; a file that
    cannot be parsed as a whole is refused (exit 3); never a traceback."""

    def run_file(self, name: str, content: bytes, *args: str) -> subprocess.CompletedProcess[str]:
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / name
            path.write_bytes(content)
            p = run_importer("--tenant", "t_imp_hostile", "--json", *args, str(path))
        self.assertNotIn("Traceback", p.stderr)
        return p

    def recalled(self, user_id: str) -> set[str]:
        with agent("t_imp_hostile") as a:
            return {m.text for m in a.recall(user_id=user_id, max_recalls=50)}

    def test_a_mem0_record_nested_too_deeply_is_skipped(self) -> None:
        records = [json.dumps({"id": "h1", "memory": "Keeps the invoices in a [red] folder", "user_id": "hana"}),
                   '{"id": "h2", "memory": "Deep", "user_id": "hana", "metadata": {"k": ' + DEEP + '}}',
                   DEEP,
                   json.dumps({"id": "h4", "memory": "Orders tea on Mondays", "user_id": "hana",
                               "metadata": {"n": [[[[1]]]]}}),
                   json.dumps({"id": "h5", "memory": "Deep but parsable", "user_id": "hana",
                               "metadata": {"k": json.loads("[" * 200 + "]" * 200)}})]
        export = '{"count": 5, "results": [' + ", ".join(records) + '], "next": null, "extra": ' + DEEP + "}"
        r = report_of(self.run_file("deep.json", export.encode()))
        self.assertEqual({k: r[k] for k in ("format", "read", "captured", "skipped", "skip_reasons", "promoted")},
                         {"format": "mem0", "read": 5, "captured": 2, "skipped": 3, "skip_reasons": {"too_deep": 3},
                          "promoted": 2})
        self.assertEqual({s["ref"] for s in r["skipped_records"]}, {"mem0:#2", "mem0:#3", "mem0:h5"})
        self.assertEqual(self.recalled("hana"), {"Keeps the invoices in a [red] folder", "Orders tea on Mondays"})
        # the same as a bare list, in a file named by no extension (mem0 by its content)
        r = report_of(self.run_file("export", ("[" + ", ".join(records) + "]").encode(), "--dry-run"))
        self.assertEqual((r["format"], r["read"], r["valid"], r["skip_reasons"]), ("mem0", 5, 2, {"too_deep": 3}))

    def test_hostile_json_lines_are_skipped(self) -> None:
        lines = [json.dumps({"text": "Ivo pays by card.", "user_id": "ivo"}).encode(),
                 b'{"text": "deep", "user_id": "ivo", "value": ' + DEEP.encode() + b"}",
                 DEEP.encode(),
                 b'{"text": "big", "user_id": "ivo", "value": ' + b"9" * 5000 + b"}",
                 b'{"text": "not a number", "user_id": "ivo", "value": NaN}',
                 b'{"text": "overflow", "user_id": "ivo", "value": 1e999}',
                 b'{"text": "nul \u0000 in it", "user_id": "ivo"}',
                 b'{"text": "half a pair \ud800", "user_id": "ivo"}',
                 b'{"text": "key", "user_id": "ivo", "metadata": {"\udfff": 1}}',
                 b'"Latin-1 caf\xe9 is not UTF-8"',
                 # a line separator inside a string is not the end of a line
                 json.dumps({"text": "Ivo signs as I.\u2028V.", "user_id": "ivo"}, ensure_ascii=False).encode(),
                 json.dumps({"text": "Ivo works from Braga.", "user_id": "ivo"}).encode() + b"\r"]
        r = report_of(self.run_file("hostile.jsonl", b"\n".join(lines) + b"\n"))
        self.assertEqual(
            {k: r[k] for k in ("read", "captured", "skipped", "skip_reasons", "promoted")},
            {"read": 12, "captured": 3, "skipped": 9, "promoted": 3,
             "skip_reasons": {"bad_number": 3, "invalid_text": 3, "invalid_utf8": 1, "too_deep": 2}})
        self.assertEqual({s["ref"]: s["reason"] for s in r["skipped_records"]}, {
            "import:hostile.jsonl#2": "too_deep", "import:hostile.jsonl#3": "too_deep",
            "import:hostile.jsonl#4": "bad_number", "import:hostile.jsonl#5": "bad_number",
            "import:hostile.jsonl#6": "bad_number", "import:hostile.jsonl#7": "invalid_text",
            "import:hostile.jsonl#8": "invalid_text", "import:hostile.jsonl#9": "invalid_text",
            "import:hostile.jsonl#10": "invalid_utf8"})
        self.assertEqual(self.recalled("ivo"), {"Ivo pays by card.", "Ivo signs as I.\u2028V.", "Ivo works from Braga."})

    def test_a_file_that_cannot_be_parsed_is_refused(self) -> None:
        for name, content, says in (("open.json", b"[" * 100000, "nested too deeply"),
                                    ("open_results.json", b'{"results": [' + b'{"a": ' * 100000, "nested too deeply"),
                                    ("trailing.json", b"[" + DEEP.encode() + b"] and more", "is not JSON (Extra data)"),
                                    ("latin1.json", b'[{"id": "x", "memory": "caf\xe9"}]', "is not UTF-8")):
            p = self.run_file(name, content)
            self.assertEqual((p.returncode, p.stdout), (importer.EXIT_INPUT, ""), (name, p.stderr))
            self.assertIn(says, p.stderr, name)


class Resume(unittest.TestCase):
    def test_an_import_stopped_half_way_resumes_without_promoting_twice(self) -> None:
        parts = conninfo_to_dict(ADMIN_INFO)
        dsn = f"host={parts.get('host')} port={parts.get('port', 5432)} dbname={DB} user={AGENT}"
        real = importer.MemoryFabric.capture_memory
        calls = []

        def capture(client: Any, *args: Any, **kw: Any) -> Any:
            calls.append(args[0])
            # in the second batch of 4: the first batch is committed (the records in the order
            # they were stated: its fourth, b14, is refused by the extension and skipped)
            if len(calls) == 6:
                raise mf.MemoryFabricError("08006", "server closed the connection unexpectedly")
            return real(client, *args, **kw)

        out, err = io.StringIO(), io.StringIO()
        with mock.patch.object(importer.MemoryFabric, "capture_memory", capture):
            rc = importer.main(["--tenant", "t_imp_resume", "--dsn", dsn, "--batch-size", "4", str(MEM0)], out, err)
        self.assertEqual(rc, importer.EXIT_DATABASE, err.getvalue())
        self.assertEqual(out.getvalue(), "")
        self.assertIn("stopped by 08006: server closed the connection unexpectedly", err.getvalue())
        self.assertIn("3 records were captured in committed batches; re-run the same file to resume", err.getvalue())
        with agent("t_imp_resume") as a:
            self.assertEqual(a.recall(user_id="alice", max_recalls=50), [])  # captured, not promoted
        r = report_of(run_importer("--tenant", "t_imp_resume", "--batch-size", "4", "--json", str(MEM0)))
        # the bulk path reviews the first run's three candidates first: they are promoted, and this
        # run's copies of them are duplicates (as is the repeat among this run's own)
        self.assertEqual(r["bulk"], {"open": 12, "reviewed": 12, "promoted": 7})
        self.assertEqual({k: r[k] for k in ("captured", "promoted", "duplicates", "contradictions_blocked")},
                         {"captured": 9, "promoted": 4, "duplicates": 4, "contradictions_blocked": 1})
        with agent("t_imp_resume") as a:
            alice = [m.text for m in a.recall(user_id="alice", max_recalls=50)]
        self.assertEqual(sorted(alice), ["Is allergic to peanuts", "Lives in Lisbon and works remotely",
                                         "Orders placed before noon ship the same day", "Prefers email for order updates"])


class Progress(unittest.TestCase):
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    def test_a_terminal_gets_one_line_redrawn(self) -> None:
        s = self.Tty()
        p = importer.Progress(s, "capture")
        p.update(0, 8)
        p.update(4, 8)
        p.update(8, 8)
        p.finish()
        out = s.getvalue()
        self.assertEqual(out.count("\r"), 3)
        self.assertEqual(out.count("\n"), 1)
        self.assertTrue(out.endswith("[##############################] 8/8 100%\n"), repr(out))
        self.assertIn("[###############...............] 4/8  50%", out)

    def test_elsewhere_a_line_per_update(self) -> None:
        s = io.StringIO()
        p = importer.Progress(s, "promote")
        p.update(1, 3, "1 reviewed, 1 promoted")
        p.update(3, 3, "3 reviewed, 2 promoted")
        p.finish()
        self.assertEqual(s.getvalue().splitlines(), [
            "promote  [##########....................] 1/3  33%  1 reviewed, 1 promoted",
            "promote  [##############################] 3/3 100%  3 reviewed, 2 promoted"])


if __name__ == "__main__":
    unittest.main()


class TimeOrder(unittest.TestCase):
    """A mem0 export is applied in the order its memories were stated (updated_at, else
    created_at), not in the file's order: a correction listed before what it corrects is still
    captured after it, so review sees it as the newer fact."""

    def test_records_are_captured_in_the_order_they_were_stated(self) -> None:
        args = importer.parser().parse_args(["x.json", "--tenant", "t", "--actor", "import:x.json"])
        doc = [
            {"id": "m-new", "memory": "Moved to Porto", "created_at": "2024-03-01T10:00:00Z"},
            {"id": "m-old", "memory": "Lives in Lisbon", "created_at": "2023-01-05T09:00:00+01:00"},
            {"id": "m-undated", "memory": "Likes green tea"},
            {"id": "m-edited", "memory": "Works at Acme", "created_at": "2022-01-01T00:00:00Z",
             "updated_at": "2024-06-01T00:00:00"},  # naive: UTC
            {"id": "m-bad-date", "memory": "Speaks Portuguese", "created_at": "last spring"},
            {"id": "m-tie", "memory": "Has a dog", "created_at": "2024-03-01T11:00:00+01:00"},  # = m-new
        ]
        parsed = importer.parse_mem0(doc, "x.json", args)
        self.assertEqual([r.ref for r in parsed.records],
                         ["mem0:m-undated", "mem0:m-bad-date", "mem0:m-old", "mem0:m-new", "mem0:m-tie", "mem0:m-edited"])
