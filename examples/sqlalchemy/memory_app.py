#!/usr/bin/env python3
"""memory_fabric from SQLAlchemy 2.x (ORM, psycopg 3, pgvector).

1. As the agent (PGUSER, a member of memory_fabric_agent): capture facts with the
   application's own embedding, let the extension review them, promote the ones it clears,
   and recall by vector.
2. As the reviewer (MF_EXAMPLE_REVIEWER, a member of memory_fabric_reviewer): an operator's
   capture (written by MF_EXAMPLE_WRITER, another reviewer role) waits in the human queue; find it through the ORM, approve it, and read the
   promoted memory, its review and its candidate through the ORM.
3. The mapping is read-only: the database refuses an ORM insert or update (42501).

Every write goes through the extension's functions. A call with positional arguments is a
table-valued func.memory_fabric.*(...); one with named arguments (name => value), which
func cannot render, is a text() with bound parameters, vectors bound as pgvector's Vector.

The database side is set up once by an administrator (see ../run.sh):
    CREATE EXTENSION memory_fabric CASCADE;
    CREATE ROLE app LOGIN IN ROLE memory_fabric_agent;
    CREATE ROLE reviewer LOGIN IN ROLE memory_fabric_reviewer;
    CREATE ROLE writer LOGIN IN ROLE memory_fabric_reviewer;
    SELECT memory_fabric.grant_tenant('app', 'acme');
    SELECT memory_fabric.grant_tenant('reviewer', 'acme');
    SELECT memory_fabric.grant_tenant('writer', 'acme');

Run: PGHOST=... PGPORT=... PGDATABASE=... PGUSER=app MF_EXAMPLE_REVIEWER=reviewer MF_EXAMPLE_WRITER=writer \
     python3 memory_app.py
"""
from __future__ import annotations

import hashlib
import os
import re
import sys
from decimal import Decimal
from typing import Callable

import numpy as np
import psycopg
from pgvector.sqlalchemy import Vector
from sqlalchemy import URL, Double, Engine, Text, bindparam, column, create_engine, func, inspect, select, text
from sqlalchemy.exc import ProgrammingError
from sqlalchemy.orm import Session, sessionmaker

from memory_models import Base, Candidate, PromotedMemory, Review, ReviewQueue, tenant_sessionmaker

TENANT = "acme"
MODEL = "example/hash-64"  # registered for the tenant by its admin (examples/run.sh)


def embed(text: str) -> np.ndarray:
    """The application's own embedding (a stand-in for a real model): hashed bag of words,
    64 dimensions, L2-normalised."""
    v = np.zeros(64, dtype=np.float32)
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        h = int.from_bytes(hashlib.sha256(word.encode()).digest()[:4], "little")
        v[h % 64] += 1.0 if h & 1 << 31 else -1.0
    return v / (np.linalg.norm(v) or 1.0)


def engine_for(role: str) -> Engine:
    """postgresql+psycopg://ROLE@/DATABASE?host=SOCKET_DIR&port=PORT, from the libpq environment."""
    query = {k: os.environ[e] for k, e in (("host", "PGHOST"), ("port", "PGPORT")) if os.environ.get(e)}
    url = URL.create("postgresql+psycopg", username=role, database=os.environ.get("PGDATABASE"), query=query)
    return create_engine(url)


# capture_memory takes most of its arguments by name, so it is called through text(). It returns
# a row of memory_fabric.candidates: from_statement() loads it as a Candidate (for reading only).
CAPTURE = text("""
    SELECT * FROM memory_fabric.capture_memory(
        :tenant_id, :text, :source, 'INTERNAL', user_id => :user_id, actor => :actor,
        embedding => :embedding, embedding_model => :embedding_model)
""").bindparams(bindparam("embedding", type_=Vector()), bindparam("user_id", None), bindparam("actor", None))

# recall, also by name; .columns() types the result columns an application reads.
RECALL = text("""
    SELECT memory_id, text, tier, score, relevance
    FROM memory_fabric.recall(:tenant_id, NULL, user_id => :user_id, max_recalls => :max_recalls,
                              query_embedding => :query_embedding, query_embedding_model => :model)
""").bindparams(bindparam("query_embedding", type_=Vector())).columns(
    memory_id=Text, text=Text, tier=Text, score=Double, relevance=Double)


def capture(session: Session, text: str, source: str, *, user_id: str | None = None,
            actor: str | None = None) -> Candidate:
    cand: Candidate = session.scalars(select(Candidate).from_statement(CAPTURE), {
        "tenant_id": TENANT, "text": text, "source": source, "user_id": user_id, "actor": actor,
        "embedding": embed(text), "embedding_model": MODEL}).one()
    return cand


def review(session: Session, candidate_id: str) -> tuple[str, str, str | None]:
    """review_candidate(candidate_id) takes its argument by position, so it is a table-valued
    func (it returns a row of memory_fabric.reviews): status, reviewer, duplicate_of_id."""
    rv = func.memory_fabric.review_candidate(candidate_id).table_valued(
        column("status", Text), column("reviewer", Text), column("duplicate_of_id", Text))
    row = session.execute(select(rv.c.status, rv.c.reviewer, rv.c.duplicate_of_id)).one()
    return row.status, row.reviewer, row.duplicate_of_id


def promote(session: Session, candidate_id: str) -> str:
    """promote(candidate_id), the same way; returns the promoted memory's id."""
    pm = func.memory_fabric.promote(candidate_id).table_valued(column("id", Text))
    mid: str = session.execute(select(pm.c.id)).scalar_one()
    return mid


def agent(engine: Engine) -> None:
    Sessions = tenant_sessionmaker(engine, TENANT)
    user = "cus_42"
    facts = ["Customer prefers email over phone calls.",
             "Customer's billing cycle starts on the 5th of each month.",
             "Customer uses the Lisbon warehouse for returns."]
    # One transaction per fact: capture -> review -> promote commit together or not at all.
    for fact in facts:
        with Sessions.begin() as session:
            cand = capture(session, fact, "agent", user_id=user)
            assert cand.id.startswith("mc_") and cand.embedding_model == MODEL, cand
            assert cand.embedding is not None and len(cand.embedding) == 64, cand.embedding
            status, reviewer, dup = review(session, cand.id)
            # an agent's plain fact is cleared by the automatic review; a durable one would wait
            # for a human (reviewer 'human'), a repeated one is 'duplicate_of'
            assert (status, reviewer) == ("pending_promotion", "auto"), (status, reviewer, dup)
            mid = promote(session, cand.id)
            print(f"{fact!r}: {cand.id} reviewed {status}/{reviewer}, promoted as {mid}")

    with Sessions.begin() as session:
        rows = session.execute(RECALL, {"tenant_id": TENANT, "user_id": user, "max_recalls": 2,
                                        "query_embedding": embed("when does the billing cycle start"),
                                        "model": MODEL}).all()
        for r in rows:
            print(f"recalled: {r.memory_id} {r.tier} score {r.score:.3f} relevance {r.relevance:.3f} {r.text!r}")
        assert rows and rows[0].text == facts[1], rows
        # another user of the same tenant sees none of this customer's memories
        other = session.execute(RECALL, {"tenant_id": TENANT, "user_id": "cus_7", "max_recalls": 8,
                                         "query_embedding": embed("billing"), "model": MODEL}).all()
        assert other == [], other
    print("agent: recall by vector returns the billing fact first; user cus_7 recalls nothing")


def check_mapping(engine: Engine) -> None:
    """Every mapped column exists in the installed extension with the mapped type."""
    insp, dialect = inspect(engine), engine.dialect
    for table in Base.metadata.sorted_tables:
        db = {c["name"]: c["type"] for c in insp.get_columns(table.name, schema=table.schema)}
        for col in table.columns:
            assert col.name in db, f"{table.fullname}.{col.name} is not in the database"
            mapped, actual = col.type.compile(dialect), db[col.name].compile(dialect)
            assert mapped == actual, f"{table.fullname}.{col.name}: mapped {mapped}, database {actual}"
    print(f"reviewer: the mapping of {len(Base.metadata.tables)} tables and views matches the database")


def reviewer(engine: Engine, writer: Engine) -> None:
    check_mapping(engine)
    Sessions = tenant_sessionmaker(engine, TENANT)

    # 2. An operator's capture is durable: the review sends it to the human queue. An operator's
    # fact is written by a reviewer role (an agent cannot claim source operator), and another role
    # approves it (four eyes compares database roles).
    with tenant_sessionmaker(writer, TENANT).begin() as session:
        cand = capture(session, "Refunds above 500 euros need a manager sign-off.", "operator", actor="op:writer")
        status, by, _ = review(session, cand.id)
        assert (status, by) == ("pending_promotion", "human"), (status, by)
        cid, content_hash = cand.id, cand.content_hash
    print(f"operator fact {cid}: reviewed {status}/{by}")

    with Sessions.begin() as session:
        queued = session.scalars(select(ReviewQueue).where(ReviewQueue.tenant_id == TENANT)
                                 .order_by(ReviewQueue.enqueued_at)).all()
        for q in queued:
            print(f"queue: {q.candidate_id} {q.proposed_tier} {q.status} by {q.actor}: {q.proposed_text!r}")
        mine = [q for q in queued if q.candidate_id == cid]
        assert len(mine) == 1 and mine[0].proposed_tier == "durable" and mine[0].actor == "op:writer", queued
        assert mine[0].candidate.source == "operator", mine[0].candidate.source
        # approve (four eyes: the approving role and name are not the capture's) promotes it
        pm = func.memory_fabric.approve(cid, "op:ana").table_valued(column("id", Text))
        mid: str = session.execute(select(pm.c.id)).scalar_one()
        print(f"approved {cid} as op:ana: promoted as {mid}")

    with Sessions.begin() as session:
        assert session.get(ReviewQueue, cid) is None, "still queued after approval"
        memory = session.scalars(select(PromotedMemory).where(PromotedMemory.candidate_id == cid)).one()
        assert (memory.id, memory.promoted_by, memory.tier) == (mid, "op:ana", "durable"), memory
        review_id = memory.review_id
        assert memory.candidate.content_hash == memory.content_hash == content_hash
        assert memory.review.reviewer == "human" and memory.review.candidate_id == cid, memory.review
        verdicts = session.scalars(select(Review).where(Review.candidate_id == cid).order_by(Review.reviewed_at)).all()
        assert [r.id for r in memory.candidate.reviews] == [r.id for r in verdicts] and memory.review in verdicts
        print(f"promoted_memory {memory.id}: tier {memory.tier}, priority {memory.priority}, "
              f"promoted_by {memory.promoted_by}, review {memory.review.id} by {memory.review.reviewer}, "
              f"content_hash {memory.content_hash[:12]}... = its candidate's")

    # Row-level security: without the pin a reviewer sees no row at all.
    with sessionmaker(engine).begin() as unpinned:
        assert unpinned.scalars(select(PromotedMemory)).all() == []
    print("reviewer: unpinned, promoted_memory shows no row")

    # 3. The mapping is read-only: the database refuses an ORM insert and an ORM update alike.
    def refused(write: Callable[[Session], None]) -> str:
        with Sessions() as session:
            try:
                with session.begin():
                    write(session)
                    session.flush()
            except ProgrammingError as e:  # wraps psycopg.errors.InsufficientPrivilege
                assert isinstance(e.orig, psycopg.Error)
                assert e.orig.sqlstate == "42501", (e.orig.sqlstate, e.orig)
                return f"{e.orig.sqlstate} {e.orig.diag.message_primary}"
        raise AssertionError("the write was accepted")

    def forge(s: Session) -> None:
        s.add(PromotedMemory(
            id="pm_forged", candidate_id=cid, review_id=review_id, tenant_id=TENANT, text="forged",
            classification="INTERNAL", source="operator", tier="durable", priority=Decimal("1.00"),
            embedding_model=MODEL, content_hash=content_hash, promoted_by="op:mallory"))

    def demote(s: Session) -> None:
        loaded = s.get(PromotedMemory, mid)
        assert loaded is not None
        loaded.tier = "working"

    print("ORM insert refused:", refused(forge))
    print("ORM update refused:", refused(demote))

    with Sessions.begin() as session:
        assert session.scalars(select(PromotedMemory.tier).where(PromotedMemory.id == mid)).one() == "durable"
        assert session.get(PromotedMemory, "pm_forged") is None


def main() -> int:
    agent(engine_for(os.environ["PGUSER"]))
    reviewer(engine_for(os.environ["MF_EXAMPLE_REVIEWER"]), engine_for(os.environ["MF_EXAMPLE_WRITER"]))
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
