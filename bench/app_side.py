#!/usr/bin/env python3
"""Baseline: the capture -> review -> promote algorithm run from an application over a TCP
loopback connection, one statement per step (the design memory_fabric replaces).

It runs the steps the extension runs, in the same order and with the same queries, against the
same tables (same rows, same indexes, the same HNSW index if --hnsw made one), as the owner, so only where the
algorithm runs differs:
  capture:  tenant grant check, model dimensions, redaction (in Python), INSERT candidate
  review:   lock candidate, read it, read policy, rejected neighbours, exact matches (hash or
            fact), scope size, nearest neighbours (a scan of the scope; HNSW above the same limit
            when the model has an index),
            decide (in Python), INSERT review
  promote:  lock candidate, promoted already?, latest decision, effective review, lock scope,
            the verdict again (policy, rejections, exact, size, nearest), INSERT promoted, INSERT
            event, COMMIT
Prints one TSV row like percentiles.py (op app_side, 1 client)."""
import argparse
import re
import time
import uuid

import psycopg

ap = argparse.ArgumentParser()
ap.add_argument("--host", default="127.0.0.1"); ap.add_argument("--port"); ap.add_argument("--db"); ap.add_argument("--size")
ap.add_argument("--user", default="postgres")
ap.add_argument("--n", type=int, default=200)
ap.add_argument("--exact-limit", type=int, default=20000)
a = ap.parse_args()
conn = psycopg.connect(host=a.host, port=a.port, dbname=a.db, user=a.user, autocommit=False)
cur = conn.cursor()
cur.execute("SELECT count(*) > 0 FROM pg_catalog.pg_indexes WHERE schemaname = 'memory_fabric' "
            "AND tablename = 'promoted_memory' AND indexdef LIKE '%%''bench-384''%%'")
has_index = cur.fetchone()[0]
conn.commit()
# Fresh facts no earlier run used (a database reused by --reuse already holds the ones it took).
cur.execute("CREATE TABLE IF NOT EXISTS bench.app_side_used (probe bigint PRIMARY KEY)")
cur.execute("""SELECT p.tenant_id, p.user_id, p.intent_id, p.text, p.embedding::text FROM bench.pipeline_pool p
               WHERE NOT EXISTS (SELECT 1 FROM bench.app_side_used u WHERE u.probe = p.id) ORDER BY p.n DESC LIMIT %s""", (a.n,))
probes = cur.fetchall()
cur.execute("""INSERT INTO bench.app_side_used SELECT p.id FROM bench.pipeline_pool p
               WHERE NOT EXISTS (SELECT 1 FROM bench.app_side_used u WHERE u.probe = p.id) ORDER BY p.n DESC LIMIT %s""", (a.n,))
conn.commit()

CARD = re.compile(r"\b(?:\d[ -]?){13,19}\b")
# review's exact search as src/pipeline/review.rs does it (EXACT_ROWS, RESCORED = 4 * K there)
EXACT_ROWS = 2000
RESCORED = 20
COLS = ("m.id, m.text, m.entity, m.predicate, m.value::text, m.intent_scope, m.source, m.confidence, "
        "jsonb_array_length(m.evidence_refs), extract(epoch FROM c.captured_at)::float8, m.content_hash")
SCOPE = ("m.tenant_id = %(t)s AND {user} AND (m.intent_scope IS NULL OR m.intent_scope = %(i)s) "
         "AND m.retracted_at IS NULL AND (m.expires_at IS NULL OR m.expires_at > clock_timestamp())")


def verdict(cand, th):
    """The review reads, one statement each, and the decision."""
    args = dict(t=cand["tenant"], u=cand["user"], i=cand["intent"], h=cand["hash"], v=cand["vec"], c=cand["id"])
    # as the extension writes it: IS NOT DISTINCT FROM cannot be an index condition
    same_user = (lambda t: f"{t}.user_id IS NULL") if cand["user"] is None else (lambda t: f"{t}.user_id = %(u)s")
    scope = SCOPE.format(user=same_user("m"))
    cur.execute("SELECT version, body FROM memory_fabric.policies WHERE tenant_id = %(t)s OR tenant_id = '*' "
                "ORDER BY tenant_id = '*', version DESC LIMIT 1", args)
    cur.fetchone()
    cur.execute("SELECT r.id, 1 - (r.embedding <=> %(v)s::vector) AS sim FROM memory_fabric.decisions d "
                "JOIN memory_fabric.candidates r ON r.id = d.candidate_id WHERE d.tenant_id = %(t)s AND d.action = 'reject' "
                f"AND {same_user('r')} AND r.id <> %(c)s AND r.erased_at IS NULL "
                "ORDER BY (r.content_hash = %(h)s) DESC, sim DESC NULLS LAST, r.id LIMIT 5", args)
    rejected = cur.fetchall()
    cur.execute(f"SELECT {COLS} FROM memory_fabric.promoted_memory m JOIN memory_fabric.candidates c ON c.id = m.candidate_id "
                f"WHERE {scope} AND m.content_hash = %(h)s ORDER BY m.id LIMIT 50", args)
    exact = cur.fetchall()
    cur.execute("SELECT count(*) FROM (SELECT 1 FROM memory_fabric.promoted_memory m WHERE m.tenant_id = %(t)s "
                f"AND {same_user('m')} AND m.embedding_model = 'bench-384' AND m.retracted_at IS NULL "
                "LIMIT %(n)s) s", dict(args, n=max(a.exact_limit, EXACT_ROWS) + 1))
    rows = cur.fetchone()[0]
    big = rows > a.exact_limit and has_index
    if big:
        cur.execute("SET LOCAL hnsw.iterative_scan = strict_order")
        cur.execute("SET LOCAL hnsw.ef_search = 40")
        search = (f"SELECT m.id, 1 - (m.embedding::vector(384) <=> %(v)s::vector(384)) AS sim FROM memory_fabric.promoted_memory m "
                  f"WHERE {scope} AND m.embedding_model = 'bench-384' ORDER BY m.embedding::vector(384) <=> %(v)s::vector(384) LIMIT 5")
    else:
        # the same four index ranges the extension reads (covering indexes, then the rows too wide
        # for them): every row compared exactly up to EXACT_ROWS rows, above that ranked by the
        # quantised embeddings and the first RESCORED compared exactly
        by_bits = rows > EXACT_ROWS
        distance = ("m.embedding_bits <~> (SELECT binary_quantize(%(v)s::vector))" if by_bits
                    else "m.embedding <=> (SELECT %(v)s::vector)")
        fits = ("memory_fabric._scope_fits(m.tenant_id, m.user_id, m.intent_scope, m.embedding_model, m.id, "
                "m.classification, m.consent_id, m.embedding)")
        parts = " UNION ALL ".join(
                 f"SELECT m.id, {distance} AS d FROM memory_fabric.promoted_memory m "
                 f"WHERE m.tenant_id = %(t)s AND {same_user('m')} AND {intent} "
                 f"AND m.embedding_model = 'bench-384' AND {fit} AND m.retracted_at IS NULL "
                 f"AND (m.expires_at IS NULL OR m.expires_at > clock_timestamp())"
                 for fit in (fits, "NOT " + fits) for intent in ("m.intent_scope IS NULL", "m.intent_scope = %(i)s"))
        if by_bits:
            search = (f"SELECT r.id, 1 - (m.embedding <=> %(v)s::vector) AS sim "
                      f"FROM (SELECT s.id FROM ({parts}) s ORDER BY s.d, s.id LIMIT {RESCORED}) r "
                      f"JOIN memory_fabric.promoted_memory m ON m.id = r.id ORDER BY sim DESC, r.id LIMIT 5")
        else:
            search = f"SELECT s.id, 1 - s.d AS sim FROM ({parts}) s ORDER BY s.d, s.id LIMIT 5"
    cur.execute(f"SELECT {COLS}, nn.sim FROM ({search}) nn JOIN memory_fabric.promoted_memory m ON m.id = nn.id "
                f"JOIN memory_fabric.candidates c ON c.id = m.candidate_id ORDER BY nn.sim DESC, m.id", args)
    near = cur.fetchall()
    if exact:
        return "duplicate_of", exact[0][0]
    if near and near[0][-1] >= th["duplicate"]:
        return "duplicate_of", near[0][0]
    if rejected and rejected[0][1] is not None and rejected[0][1] >= th["duplicate"]:
        return "rejected", None
    return "pending_promotion", None


lat, done = [], 0
for tenant, user, intent, text, vec in probes:
    t0 = time.perf_counter()
    # capture
    cur.execute("SELECT EXISTS (SELECT 1 FROM memory_fabric.tenant_grants g WHERE g.role_name = current_user "
                "AND g.tenant_id IN (%s, '*') AND g.revoked_at IS NULL)", (tenant,))
    cur.fetchone()
    cur.execute("SELECT dimensions FROM memory_fabric.embedding_models WHERE tenant_id = %s AND model = 'bench-384'", (tenant,))
    cur.fetchone()
    text = CARD.sub("[REDACTED:payment_card]", text)
    cid = "mc_" + uuid.uuid4().hex[:24]
    cur.execute("""INSERT INTO memory_fabric.candidates (id, tenant_id, user_id, intent_id, source, text, classification,
                   embedding, embedding_model, content_hash, policy_version)
                   VALUES (%s, %s, %s, %s, 'agent', %s, 'INTERNAL', %s::vector, 'bench-384', md5(%s) || md5(%s), 1)""",
                (cid, tenant, user, intent, text, vec, text, text))
    # review
    cur.execute("SELECT pg_advisory_xact_lock(hashtextextended('candidate:' || %s, 0))", (cid,))
    cur.execute("SELECT tenant_id, user_id, intent_id, content_hash FROM memory_fabric.candidates WHERE id = %s", (cid,))
    _, _, _, chash = cur.fetchone()
    cand = dict(id=cid, tenant=tenant, user=user, intent=intent, hash=chash, vec=vec)
    th = {"duplicate": 0.90, "contradiction": 0.60}
    status, dup = verdict(cand, th)
    rid = "rv_" + uuid.uuid4().hex[:24]
    cur.execute("""INSERT INTO memory_fabric.reviews (id, tenant_id, candidate_id, status, duplicate_of_id, proposed_tier,
                   priority_score, reviewer, policy_version) VALUES (%s, %s, %s, %s, %s, 'semantic', 0.5, 'auto', 1)""",
                (rid, tenant, cid, status, dup))
    # promote
    if status == "pending_promotion":
        cur.execute("SELECT pg_advisory_xact_lock(hashtextextended('candidate:' || %s, 0))", (cid,))
        cur.execute("SELECT id FROM memory_fabric.promoted_memory WHERE candidate_id = %s", (cid,))
        cur.fetchall()
        cur.execute("SELECT action, decided_by FROM memory_fabric.decisions WHERE candidate_id = %s "
                    "ORDER BY decided_at DESC, id DESC LIMIT 1", (cid,))
        cur.fetchall()
        cur.execute("SELECT id, status, proposed_tier, priority_score FROM memory_fabric.reviews WHERE candidate_id = %s "
                    "ORDER BY reviewed_at DESC, id DESC LIMIT 1", (cid,))
        cur.fetchone()
        cur.execute("SELECT pg_advisory_xact_lock(hashtextextended('scope:' || %s || ':' || coalesce(%s, ''), 0))", (tenant, user))
        again, _ = verdict(cand, th)
        if again == status:
            pid = "pm_" + uuid.uuid4().hex[:24]
            cur.execute("""INSERT INTO memory_fabric.promoted_memory (id, candidate_id, review_id, tenant_id, user_id, intent_scope,
                           text, classification, source, tier, priority, embedding, embedding_model, content_hash, promoted_by,
                           expires_at) SELECT %s, id, %s, tenant_id, user_id, intent_id, text, classification, source,
                           'semantic', 0.5, embedding, embedding_model, content_hash, 'auto', clock_timestamp() + interval '365 days'
                           FROM memory_fabric.candidates WHERE id = %s""", (pid, rid, cid))
            cur.execute("INSERT INTO memory_fabric.events (id, tenant_id, kind, subject_id, payload) "
                        "VALUES (%s, %s, 'memory.promoted', %s, jsonb_build_object('candidate_id', %s::text))",
                        ("ev_" + uuid.uuid4().hex[:24], tenant, pid, cid))
            done += 1
    conn.commit()
    lat.append((time.perf_counter() - t0) * 1000)
lat.sort()
pct = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))]
print(f"{a.size}\tapp_side\t1\t{len(lat) / (sum(lat) / 1000):.1f}\t{pct(0.5):.3f}\t{pct(0.95):.3f}\t{pct(0.99):.3f}\t{len(lat)}\t{len(lat) - done}")
