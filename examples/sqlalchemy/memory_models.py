"""A read-only SQLAlchemy 2.x mapping of memory_fabric's tables, and the tenant pin.

memory_fabric is append-only and governed: no application role has INSERT, UPDATE or DELETE on
any of its tables (row-level security has no write policy either), and every write goes through
its SQL functions (capture_memory, review_candidate, promote, approve, reject, ...). So this
mapping is for reading only: load, query and join these classes, never session.add() one, never
change an attribute of a loaded one and flush. The database refuses such a flush with SQLSTATE
42501 (insufficient_privilege); memory_app.py shows it.

Who may read what (memory_fabric_reviewer and memory_fabric_admin; memory_fabric_agent reads
nothing directly): candidates, reviews, decisions, promoted_memory and the view review_queue,
and of those only the rows of the tenant the transaction is pinned to (see tenant_sessionmaker).

The functions return rows of these tables (capture_memory a candidates row, review_candidate a
reviews row, promote and approve a promoted_memory row), so the same classes type their results
too: select(Candidate).from_statement(text("SELECT * FROM memory_fabric.capture_memory(...)")).
"""
from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any, Optional

from pgvector.sqlalchemy import Vector
from sqlalchemy import DateTime, Double, Engine, ForeignKey, Integer, Numeric, Text, event, text
from sqlalchemy.dialects.postgresql import ARRAY, JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, relationship, sessionmaker

SCHEMA = "memory_fabric"


class Base(DeclarativeBase):
    """Python types to the extension's column types; every table lives in schema memory_fabric.
    The extension owns its schema: never create_all() or drop_all() this metadata."""

    type_annotation_map = {
        str: Text,  # every id is text ('mc_...', 'rv_...', 'pm_...'), as are the other strings
        dt.datetime: DateTime(timezone=True),  # timestamptz
        Decimal: Numeric(3, 2),  # priority_score, priority: numeric(3,2) in [0, 1]
        float: Double,  # double precision
        Any: JSONB,  # jsonb: evidence_refs (an array), value (any JSON), metadata (an object)
        list[float]: Vector(),  # pgvector's vector, no fixed dimension: each model has its own
        list[str]: ARRAY(Text),  # text[]
    }


class Candidate(Base):
    """memory_fabric.candidates: every capture, as written (after redaction)."""

    __tablename__ = "candidates"
    __table_args__ = {"schema": SCHEMA}

    id: Mapped[str] = mapped_column(primary_key=True)
    tenant_id: Mapped[str]
    user_id: Mapped[Optional[str]]
    intent_id: Mapped[Optional[str]]
    source: Mapped[str]  # 'agent', 'operator' or 'system'
    text: Mapped[str]
    evidence_refs: Mapped[Any]
    classification: Mapped[str]
    captured_at: Mapped[dt.datetime]
    entity: Mapped[Optional[str]]
    predicate: Mapped[Optional[str]]
    value: Mapped[Optional[Any]]
    write_class: Mapped[Optional[str]]
    confidence: Mapped[Optional[float]]
    actor: Mapped[Optional[str]]
    embedding: Mapped[Optional[list[float]]]  # NULL only after governed erasure
    embedding_model: Mapped[str]
    content_hash: Mapped[str]  # sha-256, hex
    supersedes: Mapped[Optional[str]]
    # "metadata" is reserved on declarative classes (Base.metadata): map it under another name
    metadata_: Mapped[Any] = mapped_column("metadata")
    redaction_count: Mapped[int]
    redaction_rules: Mapped[list[str]]
    policy_version: Mapped[int]

    reviews: Mapped[list[Review]] = relationship(
        back_populates="candidate", viewonly=True, order_by="Review.reviewed_at")


class Review(Base):
    """memory_fabric.reviews: every verdict; the newest one of a candidate is its effective one."""

    __tablename__ = "reviews"
    __table_args__ = {"schema": SCHEMA}

    id: Mapped[str] = mapped_column(primary_key=True)
    tenant_id: Mapped[str]
    candidate_id: Mapped[str] = mapped_column(ForeignKey(Candidate.id))
    status: Mapped[str]  # 'pending_promotion', 'duplicate_of', 'contradicts' or 'rejected'
    duplicate_of_id: Mapped[Optional[str]]
    contradicts_id: Mapped[Optional[str]]
    contradiction_resolution: Mapped[Optional[str]]
    proposed_tier: Mapped[str]  # 'working', 'episodic', 'semantic' or 'durable'
    priority_score: Mapped[Decimal]
    reviewer: Mapped[str]  # 'auto' or 'human' (then the candidate waits in review_queue)
    reviewer_notes: Mapped[Optional[str]]
    reason: Mapped[Optional[str]]
    similarity: Mapped[Optional[float]]
    consent_id: Mapped[Optional[str]]
    policy_version: Mapped[int]
    reviewed_at: Mapped[dt.datetime]

    # viewonly: the ORM never writes through a relationship of this mapping
    candidate: Mapped[Candidate] = relationship(back_populates="reviews", viewonly=True)


class Decision(Base):
    """memory_fabric.decisions: the operators' approve / reject / edit decisions."""

    __tablename__ = "decisions"
    __table_args__ = {"schema": SCHEMA}

    id: Mapped[str] = mapped_column(primary_key=True)
    tenant_id: Mapped[str]
    candidate_id: Mapped[str] = mapped_column(ForeignKey(Candidate.id))
    review_id: Mapped[Optional[str]] = mapped_column(ForeignKey(Review.id))
    action: Mapped[str]  # 'approve', 'reject' or 'edit'
    decided_by: Mapped[str]
    notes: Mapped[Optional[str]]
    new_candidate_id: Mapped[Optional[str]] = mapped_column(ForeignKey(Candidate.id))
    decided_at: Mapped[dt.datetime]


class PromotedMemory(Base):
    """memory_fabric.promoted_memory: what recall reads; promote() and approve() are the only way in."""

    __tablename__ = "promoted_memory"
    __table_args__ = {"schema": SCHEMA}

    id: Mapped[str] = mapped_column(primary_key=True)
    candidate_id: Mapped[str] = mapped_column(ForeignKey(Candidate.id), unique=True)
    review_id: Mapped[str] = mapped_column(ForeignKey(Review.id))
    tenant_id: Mapped[str]
    user_id: Mapped[Optional[str]]
    intent_scope: Mapped[Optional[str]]
    text: Mapped[str]
    evidence_refs: Mapped[Any]
    classification: Mapped[str]
    source: Mapped[str]
    tier: Mapped[str]
    priority: Mapped[Decimal]
    entity: Mapped[Optional[str]]
    predicate: Mapped[Optional[str]]
    value: Mapped[Optional[Any]]
    write_class: Mapped[Optional[str]]
    confidence: Mapped[Optional[float]]
    embedding: Mapped[Optional[list[float]]]
    embedding_model: Mapped[str]
    content_hash: Mapped[str]
    consent_id: Mapped[Optional[str]]
    promoted_by: Mapped[str]
    promoted_at: Mapped[dt.datetime]
    expires_at: Mapped[Optional[dt.datetime]]
    in_contradiction: Mapped[bool]
    contradicts_id: Mapped[Optional[str]]
    supersedes_id: Mapped[Optional[str]]
    # write-once, set only by memory_fabric.retract()
    retracted_at: Mapped[Optional[dt.datetime]]
    retracted_by: Mapped[Optional[str]]
    retraction_reason: Mapped[Optional[str]]

    candidate: Mapped[Candidate] = relationship(viewonly=True)
    review: Mapped[Review] = relationship(viewonly=True)


class ReviewQueue(Base):
    """memory_fabric.review_queue (a security_invoker view): candidates waiting for a human's
    approve / reject / edit. A view has no primary key; a candidate is in it at most once."""

    __tablename__ = "review_queue"
    __table_args__ = {"schema": SCHEMA}

    candidate_id: Mapped[str] = mapped_column(ForeignKey(Candidate.id), primary_key=True)
    tenant_id: Mapped[str]
    review_id: Mapped[str] = mapped_column(ForeignKey(Review.id))
    user_id: Mapped[Optional[str]]
    intent_id: Mapped[Optional[str]]
    proposed_tier: Mapped[str]
    proposed_text: Mapped[str]
    evidence_refs: Mapped[Any]
    classification: Mapped[str]
    source: Mapped[str]
    actor: Mapped[Optional[str]]
    priority_score: Mapped[Decimal]
    reason: Mapped[Optional[str]]
    status: Mapped[str]
    contradicts_id: Mapped[Optional[str]]
    contradiction_resolution: Mapped[Optional[str]]
    enqueued_at: Mapped[dt.datetime]

    candidate: Mapped[Candidate] = relationship(viewonly=True)
    review: Mapped[Review] = relationship(viewonly=True)


def tenant_sessionmaker(engine: Engine, tenant_id: str) -> sessionmaker[Session]:
    """Sessions whose every transaction acts for tenant_id.

    Each function checks that the transaction is pinned to the tenant it is asked about, and
    row-level security shows a non-superuser nothing of a table without the pin. The pin here
    is transaction-local, SET LOCAL written as set_config(..., true), issued by an after_begin
    listener as the first statement of every transaction the session begins. It ends with
    that transaction, so a connection goes back to the pool carrying no tenant and the next
    session that checks it out, for whichever tenant, pins its own. (A session-level pin,
    set_config(..., false) in a "connect" event of the engine, would suit an engine that only
    ever serves one tenant, but outlives the session that set it.)
    """
    factory = sessionmaker(engine, info={"tenant_id": tenant_id})

    @event.listens_for(factory, "after_begin")
    def pin_tenant(session: Session, transaction: Any, connection: Any) -> None:
        connection.execute(text("SELECT set_config('memory_fabric.tenant_id', :tenant_id, true)"),
                           {"tenant_id": session.info["tenant_id"]})

    return factory
