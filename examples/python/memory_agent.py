#!/usr/bin/env python3
"""An agent's memory with psycopg 3 and the pgvector package: capture facts with the
application's own embedding, let the extension review and promote them, and recall by vector.

The database side is set up once by an administrator (see ../run.sh):
    CREATE EXTENSION memory_fabric CASCADE;
    CREATE ROLE app LOGIN IN ROLE memory_fabric_agent;
    SELECT memory_fabric.grant_tenant('app', 'acme');

Run: python3 memory_agent.py "host=... dbname=... user=app"
"""
import hashlib
import re
import sys

import numpy as np
import psycopg
from pgvector.psycopg import register_vector

MODEL = "example/hash-64"  # registered for the tenant by its admin (examples/run.sh)


def embed(text: str) -> np.ndarray:
    """The application's own embedding (a stand-in for a real model): hashed bag of words."""
    v = np.zeros(64, dtype=np.float32)
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        h = int.from_bytes(hashlib.sha256(word.encode()).digest()[:4], "little")
        v[h % 64] += 1.0 if h & 1 << 31 else -1.0
    return v / (np.linalg.norm(v) or 1.0)


def remember(conn, tenant: str, user: str, text: str) -> str:
    """capture -> review -> promote; returns what happened."""
    cid = conn.execute(
        "SELECT id FROM memory_fabric.capture_memory(%s, %s, 'agent', 'INTERNAL', user_id => %s,"
        " embedding => %s, embedding_model => %s)", (tenant, text, user, embed(text), MODEL)).fetchone()[0]
    status, reviewer, dup = conn.execute(
        "SELECT status, reviewer, duplicate_of_id FROM memory_fabric.review_candidate(%s)", (cid,)).fetchone()
    if status == "pending_promotion" and reviewer == "auto":
        mid = conn.execute("SELECT id FROM memory_fabric.promote(%s)", (cid,)).fetchone()[0]
        return f"promoted as {mid}"
    return f"{status} {dup}" if dup else status


def main() -> int:
    conn = psycopg.connect(sys.argv[1] if len(sys.argv) > 1 else "", autocommit=True)
    register_vector(conn)  # numpy arrays in, pgvector Vector values out
    tenant, user = "acme", "cus_42"
    # every call acts for the tenant this session is pinned to
    conn.execute("SELECT set_config('memory_fabric.tenant_id', %s, false)", (tenant,))

    facts = ["Customer prefers email over phone calls.",
             "Customer's billing cycle starts on the 5th of each month.",
             "Customer uses the Lisbon warehouse for returns."]
    for f in facts:
        print(f"{f!r}: {remember(conn, tenant, user, f)}")
    # the same fact again is reviewed as a duplicate and never promoted twice
    again = remember(conn, tenant, user, facts[0])
    print(f"again: {again}")
    assert again.startswith("duplicate_of"), again

    rows = conn.execute(
        "SELECT memory_id, text, round(score::numeric, 3), round(relevance::numeric, 3)"
        " FROM memory_fabric.recall(%s, NULL, user_id => %s, query_embedding => %s,"
        " query_embedding_model => %s, max_recalls => 2)",
        (tenant, user, embed("when does the billing cycle start"), MODEL)).fetchall()
    for r in rows:
        print("recalled:", r)
    assert rows and rows[0][1] == facts[1], rows
    # another user of the same tenant sees none of this customer's memories
    other = conn.execute("SELECT count(*) FROM memory_fabric.recall(%s, NULL, user_id => 'cus_7')", (tenant,)).fetchone()[0]
    assert other == 0, other
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
