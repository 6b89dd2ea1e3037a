#!/usr/bin/env python3
"""Baseline: the review/promote algorithm run from an application, one statement per step, over
a local connection (the design memory_fabric replaces). For N fresh probes it captures, reads the
policy, looks for an exact duplicate, finds the nearest memories, decides in Python, writes the
review, reads it back, writes the promoted row and an event, and commits. Tables are plain copies
(no functions, no triggers); the nearest-neighbour query uses the same data and the same HNSW
index as the extension. Prints one TSV row like percentiles.py (op app_side, 1 client)."""
import argparse
import time
import uuid

import psycopg

ap = argparse.ArgumentParser()
ap.add_argument("--host"); ap.add_argument("--port"); ap.add_argument("--db"); ap.add_argument("--size")
ap.add_argument("--n", type=int, default=200)
a = ap.parse_args()
conn = psycopg.connect(host=a.host, port=a.port, dbname=a.db, user="postgres", autocommit=False)
cur = conn.cursor()
for t in ["candidates", "reviews", "promoted_memory", "events"]:
    cur.execute(f"CREATE TABLE IF NOT EXISTS bench.app_{t} (LIKE memory_fabric.{t} INCLUDING DEFAULTS INCLUDING INDEXES)")
conn.commit()
cur.execute("SELECT tenant_id, user_id, intent_id, text, embedding::text FROM bench.pipeline_pool ORDER BY n DESC LIMIT %s", (a.n,))
probes = cur.fetchall()
conn.commit()
lat = []
for tenant, user, intent, text, vec in probes:
    t0 = time.perf_counter()
    cid = "mc_" + uuid.uuid4().hex[:24]
    cur.execute("""INSERT INTO bench.app_candidates (id, tenant_id, user_id, intent_id, source, text, classification,
                   embedding, embedding_model, content_hash, policy_version)
                   VALUES (%s, %s, %s, %s, 'agent', %s, 'INTERNAL', %s::vector, 'bench-384', md5(%s) || md5(%s), 1)""",
                (cid, tenant, user, intent, text, vec, text, text))
    cur.execute("SELECT body FROM memory_fabric.policies WHERE tenant_id IN (%s, '*') ORDER BY tenant_id = '*', version DESC LIMIT 1", (tenant,))
    body = cur.fetchone()[0]
    th = body.get("thresholds", {}).get("*", {"duplicate": 0.94, "contradiction": 0.85})
    cur.execute("SELECT id FROM memory_fabric.promoted_memory WHERE tenant_id = %s AND content_hash = md5(%s) || md5(%s) LIMIT 1",
                (tenant, text, text))
    exact = cur.fetchone()
    cur.execute("""SET LOCAL hnsw.iterative_scan = strict_order""")
    cur.execute("""SELECT id, 1 - (embedding::vector(384) <=> %s::vector(384)) AS sim FROM memory_fabric.promoted_memory
                   WHERE tenant_id = %s AND user_id IS NOT DISTINCT FROM %s AND retracted_at IS NULL
                     AND (expires_at IS NULL OR expires_at > now()) AND embedding_model = 'bench-384'
                   ORDER BY embedding::vector(384) <=> %s::vector(384) LIMIT 5""", (vec, tenant, user, vec))
    near = cur.fetchall()
    status = "duplicate_of" if exact or (near and near[0][1] >= th["duplicate"]) else "pending_promotion"
    rid = "rv_" + uuid.uuid4().hex[:24]
    cur.execute("""INSERT INTO bench.app_reviews (id, tenant_id, candidate_id, status, duplicate_of_id, proposed_tier,
                   priority_score, reviewer, policy_version) VALUES (%s, %s, %s, %s, %s, 'semantic', 0.5, 'auto', 1)""",
                (rid, tenant, cid, status, near[0][0] if status == "duplicate_of" and near else (exact[0] if exact else None)))
    cur.execute("SELECT status FROM bench.app_reviews WHERE id = %s", (rid,))
    cur.fetchone()
    if status == "pending_promotion":
        pid = "pm_" + uuid.uuid4().hex[:24]
        cur.execute("""INSERT INTO bench.app_promoted_memory (id, candidate_id, review_id, tenant_id, user_id, intent_scope,
                       text, classification, source, tier, priority, embedding, embedding_model, content_hash, promoted_by,
                       expires_at) SELECT %s, id, %s, tenant_id, user_id, intent_id, text, classification, source,
                       'semantic', 0.5, embedding, embedding_model, content_hash, 'auto', now() + interval '365 days'
                       FROM bench.app_candidates WHERE id = %s""", (pid, rid, cid))
        cur.execute("INSERT INTO bench.app_events (id, tenant_id, kind, subject_id) VALUES (%s, %s, 'memory.promoted', %s)",
                    ("ev_" + uuid.uuid4().hex[:24], tenant, pid))
    conn.commit()
    lat.append((time.perf_counter() - t0) * 1000)
lat.sort()
pct = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))]
print(f"{a.size}\tapp_side\t1\t{len(lat) / (sum(lat) / 1000):.1f}\t{pct(0.5):.3f}\t{pct(0.95):.3f}\t{pct(0.99):.3f}\t{len(lat)}\t0")
