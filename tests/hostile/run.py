#!/usr/bin/env python3
"""Hostile input, at the SQL level: random calls of every public function with arguments drawn
from pools of hostile values (NULLs, empty and blank strings, huge incompressible text, control
characters, deep and huge JSON, NaN / infinite / zero vectors and wrong dimensions, invalid UTF-8
escapes, injection-shaped strings, other tenants' ids, extreme numbers and timestamps), each in
its own transaction as an ordinary role.

For every call: the backend must survive (the connection still answers), a failure must carry an
SQLSTATE from the documented set and a message, and a failed call must leave every table of the
extension exactly as it was. Prints TAP lines ('ok - ...' / 'not ok - ...') and a summary.

  python3 tests/hostile/run.py --calls 1500 --seed 1      # what scripts/test.sh runs
  python3 tests/hostile/run.py --calls 50000 --seed 7
"""
import argparse
import random
import time
import string
import sys
from collections import Counter

import psycopg

ap = argparse.ArgumentParser()
ap.add_argument("--host", required=True)
ap.add_argument("--port", required=True)
ap.add_argument("--user", default="postgres")
ap.add_argument("--db", default="memory_fabric_hostile")
ap.add_argument("--calls", type=int, default=1500)
ap.add_argument("--seed", type=int, default=1)
a = ap.parse_args()
rng = random.Random(a.seed)

# SQLSTATEs a refusal may carry: SPEC §5, and PostgreSQL's own input errors for values that never
# reach the extension (bad UTF-8, malformed literals, numbers and dates out of range, stack depth).
# pgvector refuses NaN and infinity in a vector literal with 22000.
ALLOWED = {"22023", "54000", "54001", "P0002", "55000", "42501", "22021", "22P02", "22003", "22008",
           "22007", "2202E", "22004", "22P05", "22030", "22032", "2201E", "22000"}

def conn(db, user):
    return psycopg.connect(host=a.host, port=a.port, user=user, dbname=db, autocommit=True)

admin = conn("postgres", a.user)
admin.execute(f"DROP DATABASE IF EXISTS {a.db} WITH (FORCE)")
admin.execute(f"CREATE DATABASE {a.db}")
su = conn(a.db, a.user)
su.execute("SET client_min_messages = warning")
su.execute("CREATE EXTENSION memory_fabric CASCADE")
su.execute("""DO $$ BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memory_fabric_hostile') THEN
        CREATE ROLE memory_fabric_hostile LOGIN IN ROLE memory_fabric_agent, memory_fabric_reviewer, memory_fabric_admin;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memory_fabric_hostile_b') THEN
        CREATE ROLE memory_fabric_hostile_b NOLOGIN IN ROLE memory_fabric_agent;
    END IF; END $$""")
su.execute("SELECT memory_fabric.grant_tenant('memory_fabric_hostile', 't_h')")
su.execute("SELECT memory_fabric.grant_tenant('memory_fabric_hostile', 't_h2')")
# a few valid objects, so that some calls get past the lookups: a memory, a queued candidate, a consent,
# and another tenant's memory the role may not touch
su.execute("""SELECT set_config('memory_fabric.tenant_id', 't_h', false)""")
ids = {}
ids["mc"] = su.execute("SELECT id FROM memory_fabric.capture_memory('t_h', 'The Evora office opens at nine.', 'agent', 'INTERNAL', user_id => 'u1')").fetchone()[0]
su.execute("SELECT memory_fabric.review_candidate(%s)", (ids["mc"],))
ids["pm"] = su.execute("SELECT id FROM memory_fabric.promote(%s)", (ids["mc"],)).fetchone()[0]
ids["queued"] = su.execute("SELECT id FROM memory_fabric.capture_memory('t_h', 'Operator: Evora closes at six.', 'operator', 'INTERNAL', actor => 'op:w')").fetchone()[0]
su.execute("SELECT memory_fabric.review_candidate(%s)", (ids["queued"],))
ids["cns"] = su.execute("SELECT id FROM memory_fabric.record_consent('t_h', 'u1', 'support', 'user_opt_in')").fetchone()[0]
su.execute("SELECT set_config('memory_fabric.tenant_id', 't_other', false)")
ids["other_mc"] = su.execute("SELECT id FROM memory_fabric.capture_memory('t_other', 'Not yours.', 'agent', 'INTERNAL')").fetchone()[0]
su.execute("SELECT memory_fabric.review_candidate(%s)", (ids["other_mc"],))
ids["other_pm"] = su.execute("SELECT id FROM memory_fabric.promote(%s)", (ids["other_mc"],)).fetchone()[0]

def lit(s):
    return "'" + s.replace("'", "''") + "'"

def incompressible(n):
    return "".join(rng.choice(string.printable[:94]) for _ in range(n))

# pools of SQL expressions, by type
TEXT = ["NULL", "''", "'   '", "'t_h'", "'t_h2'", "'t_other'", "'*'", "'u1'", "'agent'", "'operator'", "'system'",
        "'INTERNAL'", "'PII'", "'PUBLIC'", "'preference'", "'correction'", "'op:x'",
        lit(ids["mc"]), lit(ids["pm"]), lit(ids["queued"]), lit(ids["cns"]), lit(ids["other_mc"]), lit(ids["other_pm"]),
        "'mc_20260101t000000_000000000000'", "'pm_' || repeat('x', 300)",
        "E'\\xff'", "E'\\xed\\xa0\\x80'", "E'a\\x01b'", "E'tab\\there'", "'Robert''); DROP TABLE memory_fabric.candidates;--'",
        "'$$ || pg_sleep(1) || $$'", "'\u202e\u0645\u0631\u062d\u0628\u0627 \U0001F600 e\u0301'",
        "repeat('a', 5000)", "'card 4111 1111 1111 1111 exp 12/29'", "'sk-' || repeat('Z', 48)",
        "convert_from('\\xc3'::bytea, 'UTF8')", "chr(0)", "repeat(E'\\n', 1000)"]
BIG = [lambda: lit(incompressible(rng.choice([70_000, 300_000, 1_100_000]))), lambda: "repeat('x', 20000000)"]
JSONB = ["NULL", "'[]'", "'{}'", "'null'", "'1'", "'\"s\"'", "'[1,2,3]'", "'{\"a\": [1, {\"b\": null}]}'",
         "'[\"ev:1\", \"ev:2\"]'", "'{\"trust\": {\"min_confidence\": 2}}'", "'{\"redaction\": {\"rules\": [{\"name\": \"x\", \"pattern\": \"(\"}]}}'",
         "'{\"thresholds\": {\"duplicate\": \"NaN\"}}'", "'{\"limits\": {\"text_max_bytes\": -1}}'",
         "(SELECT jsonb_agg(g) FROM generate_series(1, 200000) g)",
         "(repeat('[', 5000) || repeat(']', 5000))::jsonb", "(repeat('{\"a\":', 3000) || '1' || repeat('}', 3000))::jsonb",
         "'\"\\u0000\"'", "'{\"card\": \"4111111111111111\"}'", "'1e400'"]
VEC = ["NULL", "'[1,2,3]'", "'[0,0,0]'", "'[NaN,1,2]'", "'[Infinity,1]'", "'[1e38,1e38,1e38]'",
       "array_fill(0.1::real, ARRAY[384])::vector", "array_fill(0::real, ARRAY[384])::vector",
       "array_fill(0.1::real, ARRAY[385])::vector", "array_fill(0.1::real, ARRAY[16000])::vector", "'[1]'",
       "array_fill(1e-45::real, ARRAY[384])::vector"]
TEXTARR = ["NULL", "'{}'", "ARRAY[NULL]::text[]", "ARRAY['PUBLIC','INTERNAL']", "ARRAY['PII']", "ARRAY['']",
           "ARRAY(SELECT g::text FROM generate_series(1, 100000) g)", "ARRAY[repeat('x', 100000)]"]
INT = ["NULL", "0", "-1", "1", "8", "1000", "1001", "2147483647", "-2147483648"]
FLOAT = ["NULL", "'NaN'", "'Infinity'", "'-Infinity'", "0", "1", "1.0000001", "-0.5", "1e308"]
TS = ["NULL", "'infinity'", "'-infinity'", "now()", "now() - interval '10 years'", "'294276-12-31 23:59:59+00'",
      "'4713-01-01 BC'"]

def pick(pool, big_chance=0.0):
    if pool is TEXT and rng.random() < big_chance:
        return rng.choice(BIG)()
    return rng.choice(pool)

# plausible values by parameter name: most arguments of a call are drawn from these, so that calls
# get past the first check and the hostile argument meets the code behind it
VALID = {
    "tenant_id": ["'t_h'"], "text": ["'The Evora office has ' || (random() * 1000)::int || ' desks.'"],
    "source": ["'agent'", "'operator'", "'system'"], "classification": ["'INTERNAL'", "'PUBLIC'", "'PII'"],
    "user_id": ["NULL", "'u1'"], "intent_id": ["NULL", "'support'"], "evidence_refs": ["'[]'", "'[\"ev:1\"]'"],
    "entity": ["NULL"], "predicate": ["NULL"], "value": ["NULL"], "write_class": ["NULL", "'preference'"],
    "confidence": ["NULL", "0.9"], "actor": ["'agent:a'"], "embedding": ["NULL"], "embedding_model": ["NULL"],
    "supersedes": ["NULL"], "metadata": ["'{}'"],
    "candidate_id": [lit(ids["mc"]), lit(ids["queued"]), "(SELECT max(id) FROM memory_fabric.candidates)"],
    "approver": ["'op:ana'"], "notes": ["NULL", "'ok'"], "reason": ["'because'"], "editor": ["'op:ed'"],
    "memory_id": [lit(ids["pm"]), "(SELECT max(id) FROM memory_fabric.promoted_memory)"], "retracted_by": ["'op:r'"],
    "max_recalls": ["8"], "classification_allowed": ["ARRAY['PUBLIC','INTERNAL']"], "query_text": ["NULL", "'desks'"],
    "query_embedding": ["NULL"], "as_of": ["NULL"], "query_embedding_model": ["NULL"], "id": [lit(ids["pm"])],
    "subject": ["'u1'"], "purpose": ["'support'"], "basis": ["'user_opt_in'"], "predicates_allowed": ["'{}'"],
    "classifications_allowed": ["'{}'"], "valid_until": ["NULL"], "auditor_id": ["NULL"], "consent_id": [lit(ids["cns"])],
    "patch": ["'{}'", "'{\"trust\": {\"min_confidence\": 0.5}}'"], "note": ["NULL"], "batch_size": ["100"],
    "role": ["'memory_fabric_hostile_b'"],   # not the caller: revoking its own grant would end the run
    "model": ["'hostile/m3'"], "dimensions": ["3"],
}

T, J, V, A, I, F, S = "text", "jsonb", "vector", "text[]", "integer", "double precision", "timestamptz"
POOL = {T: TEXT, J: JSONB, V: VEC, A: TEXTARR, I: INT, F: FLOAT, S: TS}
FUNCS = {
    "capture_memory": [("tenant_id", T), ("text", T), ("source", T), ("classification", T), ("user_id", T), ("intent_id", T),
                       ("evidence_refs", J), ("entity", T), ("predicate", T), ("value", J), ("write_class", T),
                       ("confidence", F), ("actor", T), ("embedding", V), ("embedding_model", T), ("supersedes", T), ("metadata", J)],
    "review_candidate": [("candidate_id", T)],
    "promote": [("candidate_id", T), ("approver", T)],
    "approve": [("candidate_id", T), ("approver", T), ("notes", T)],
    "reject": [("candidate_id", T), ("approver", T), ("reason", T)],
    "edit": [("candidate_id", T), ("editor", T), ("text", T), ("classification", T), ("evidence_refs", J), ("value", J), ("notes", T)],
    "retract": [("memory_id", T), ("reason", T), ("retracted_by", T)],
    "recall": [("tenant_id", T), ("intent_id", T), ("user_id", T), ("max_recalls", I), ("classification_allowed", A),
               ("query_text", T), ("query_embedding", V), ("as_of", S), ("query_embedding_model", T)],
    "explain_recall": [("tenant_id", T), ("memory_id", T), ("intent_id", T), ("user_id", T), ("classification_allowed", A), ("as_of", S)],
    "memory_history": [("id", T)],
    "record_consent": [("tenant_id", T), ("subject", T), ("purpose", T), ("basis", T), ("predicates_allowed", A),
                       ("classifications_allowed", A), ("valid_until", S), ("evidence_refs", J), ("auditor_id", T), ("supersedes", T)],
    "revoke_consent": [("consent_id", T), ("reason", T)],
    "set_policy": [("tenant_id", T), ("patch", J), ("note", T)],
    "forget_subject": [("tenant_id", T), ("user_id", T), ("reason", T)],
    "purge_expired": [("tenant_id", T), ("batch_size", I)],
    "grant_tenant": [("role", T), ("tenant_id", T)],
    "revoke_tenant": [("role", T), ("tenant_id", T)],
    "create_embedding_index": [("model", T), ("dimensions", I)],
    "register_embedding_model": [("tenant_id", T), ("model", T), ("dimensions", I)],
}
# procedures that commit after every batch: CALLed outside a transaction, pinned for the session
PROCS = {
    "reembed_memories": [("tenant_id", T), ("batch_size", I)],
    "purge_expired_memories": [("tenant_id", T), ("batch_size", I)],
    "promote_pending": [("tenant_id", T), ("batch_size", I)],
}
# the memory_id argument of explain_recall is its second; its real name may differ, so call positionally
TABLES = ["candidates", "reviews", "decisions", "promoted_memory", "consents", "policies", "events", "tenant_grants",
          "embedding_models", "recall_log"]
# a committed insert or update leaves a row version with a newer xmin; a delete lowers the count
FINGERPRINT = " UNION ALL ".join(
    f"SELECT '{t}', count(*), max(x.xmin::text::bigint) FROM memory_fabric.{t} x" for t in TABLES)

def fingerprint():
    return su.execute(FINGERPRINT).fetchall()

c = conn(a.db, "memory_fabric_hostile")
c.execute("SET statement_timeout = '20s'")
outcomes, bad, crashes, slow = Counter(), [], 0, []
for n in range(a.calls):
    fn = rng.choice(list(FUNCS) + list(PROCS))
    params = FUNCS.get(fn) or PROCS[fn]
    args = [f"({pick(POOL[ty], big_chance=0.05) if rng.random() < 0.25 or name not in VALID else rng.choice(VALID[name])})::{ty}"
            for name, ty in params]
    # sometimes fewer arguments (defaults), sometimes all NULL
    if rng.random() < 0.1:
        args = [f"NULL::{ty}" for _, ty in params]
    if fn in PROCS:
        sql = f"CALL memory_fabric.{fn}({', '.join(args)})"
    else:
        sql = f"SELECT count(*) FROM memory_fabric.{fn}({', '.join(args)})"
    pin = rng.choice(["t_h"] * 7 + ["t_h2", "t_other", ""])
    before = fingerprint()
    t0 = time.monotonic()
    try:
        if fn in PROCS:
            c.execute("SELECT set_config('memory_fabric.tenant_id', %s, false)", (pin,))
            try:
                c.execute(sql)
            finally:
                if not c.broken:
                    c.execute("RESET memory_fabric.tenant_id")
        else:
            with c.transaction():
                c.execute("SELECT set_config('memory_fabric.tenant_id', %s, true)", (pin,))
                c.execute(sql)
        outcomes[(fn, "ok")] += 1
    except psycopg.errors.QueryCanceled:
        outcomes[(fn, "57014 (statement_timeout)")] += 1
        if fingerprint() != before:
            bad.append((fn, "timeout", "wrote something", sql[:300]))
    except psycopg.Error as e:
        state = e.sqlstate
        msg = e.diag.message_primary if e.diag else str(e)
        outcomes[(fn, state)] += 1
        if state is None or c.closed or c.broken:
            crashes += 1
            bad.append((fn, state, f"connection lost: {e}", sql[:300]))
            c = conn(a.db, "memory_fabric_hostile")
            c.execute("SET statement_timeout = '20s'")
            continue
        if state not in ALLOWED or not msg:
            bad.append((fn, state, msg, sql[:300]))
        if fingerprint() != before:
            bad.append((fn, state, "a failed call wrote something", sql[:300]))
    slow.append((time.monotonic() - t0, fn, sql[:160]))
    try:
        c.execute("SELECT 1")
    except psycopg.Error as e:
        crashes += 1
        bad.append((fn, None, f"backend gone after the call: {e}", sql[:300]))
        c = conn(a.db, "memory_fabric_hostile")
        c.execute("SET statement_timeout = '20s'")

by_state = Counter()
for (fn, st), k in outcomes.items():
    by_state[st] += k
print(f"# {a.calls} calls over {len(FUNCS) + len(PROCS)} functions and procedures (seed {a.seed}); outcomes: "
      + ", ".join(f"{s} {k}" for s, k in sorted(by_state.items(), key=lambda x: -x[1])))
print(f"# calls per function: " + ", ".join(f"{f} {sum(k for (g, _), k in outcomes.items() if g == f)}" for f in list(FUNCS) + list(PROCS)))
for d, f, q in sorted(slow, key=lambda x: x[0], reverse=True)[:3]:
    print(f"# slowest: {d:.2f} s {f}: {q}")
for b in bad[:20]:
    print(f"# {b}")
print(("ok" if crashes == 0 else "not ok") + f" - no backend crashed ({crashes})")
unexpected = [b for b in bad if "wrote" not in b[2] and "connection" not in b[2] and "backend" not in b[2]]
print(("ok" if not unexpected else "not ok") + f" - every failure carried a documented SQLSTATE and a message ({len(unexpected)} did not)")
wrote = [b for b in bad if "wrote" in b[2]]
print(("ok" if not wrote else "not ok") + f" - no failed call wrote anything ({len(wrote)} did)")
ok_calls = sum(k for (f, s), k in outcomes.items() if s == "ok")
print(("ok" if ok_calls > 0 else "not ok") + f" - some calls got through the checks and succeeded ({ok_calls})")
c.close(); su.close()
admin.execute(f"DROP DATABASE {a.db} WITH (FORCE)")
sys.exit(1 if bad or ok_calls == 0 else 0)
