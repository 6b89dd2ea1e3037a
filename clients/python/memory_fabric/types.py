"""The rows memory_fabric's SQL functions return, as dataclasses.

Each class lists the columns of its table or function result, in their order (generated from
the 0.18.0 catalog and checked by tests/test_types.py against the installed extension). A
column the extension adds later, which this version does not know, lands in ``extra``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from datetime import datetime
from decimal import Decimal
from typing import Any, Mapping, Type, TypeVar
from uuid import UUID

T = TypeVar("T")


def from_row(cls: Type[T], row: Mapping[str, Any]) -> T:
    """Builds ``cls`` from a row (column name -> value); unknown columns go to ``extra``."""
    known = {f.name for f in fields(cls)}  # type: ignore[arg-type]
    kwargs = {k: v for k, v in row.items() if k in known and k != "extra"}
    extra = {k: v for k, v in row.items() if k not in known}
    for f in fields(cls):  # type: ignore[arg-type]
        if f.name not in kwargs and f.name != "extra":
            kwargs[f.name] = None
    return cls(**kwargs, extra=extra)  # type: ignore[call-arg]


@dataclass(frozen=True)
class Candidate:
    """A row of memory_fabric.candidates: what capture_memory() appended."""

    id: str | None
    tenant_id: str | None
    user_id: str | None
    intent_id: str | None
    source: str | None
    text: str | None
    evidence_refs: Any | None
    classification: str | None
    captured_at: datetime | None
    entity: str | None
    predicate: str | None
    value: Any | None
    write_class: str | None
    confidence: float | None
    actor: str | None
    embedding: Any | None
    embedding_model: str | None
    content_hash: str | None
    supersedes: str | None
    metadata: Any | None
    redaction_count: int | None
    redaction_rules: list[str] | None
    policy_version: int | None
    captured_by: str | None
    erased_at: datetime | None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Consent:
    """A row of memory_fabric.consents (record_consent(), revoke_consent())."""

    id: str | None
    tenant_id: str | None
    subject: str | None
    purpose: str | None
    predicates_allowed: list[str] | None
    classifications_allowed: list[str] | None
    basis: str | None
    captured_at: datetime | None
    valid_until: datetime | None
    evidence_refs: Any | None
    auditor_id: str | None
    supersedes: str | None
    revoked_at: datetime | None
    revoked_by: str | None
    revocation_reason: str | None
    erased_at: datetime | None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Decision:
    """A row of memory_fabric.decisions: an operator's approve, reject or edit."""

    id: str | None
    tenant_id: str | None
    candidate_id: str | None
    review_id: str | None
    action: str | None
    decided_by: str | None
    notes: str | None
    new_candidate_id: str | None
    decided_at: datetime | None
    decided_by_role: str | None
    erased_at: datetime | None
    audit_salt: UUID | None  # 0.20.0: the salt of the audit chain's commitment to the notes (NULL once erased)
    resolution: str | None = None  # 0.21.0: an approval's choice for a contradiction (supersede, coexist)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class EmbeddingModel:
    """A row of memory_fabric.embedding_models (register_embedding_model())."""

    tenant_id: str | None
    model: str | None
    dimensions: int | None
    registered_at: datetime | None
    registered_by: str | None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Policy:
    """A row of memory_fabric.policies: one version of a tenant's policy (set_policy())."""

    tenant_id: str | None
    version: int | None
    body: Any | None
    created_at: datetime | None
    created_by: str | None
    note: str | None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Memory:
    """A row of memory_fabric.promoted_memory: a memory recall can read (promote(), approve(), retract())."""

    id: str | None
    candidate_id: str | None
    review_id: str | None
    tenant_id: str | None
    user_id: str | None
    intent_scope: str | None
    text: str | None
    evidence_refs: Any | None
    classification: str | None
    source: str | None
    tier: str | None
    priority: Decimal | None
    entity: str | None
    predicate: str | None
    value: Any | None
    write_class: str | None
    confidence: float | None
    embedding: Any | None
    embedding_model: str | None
    content_hash: str | None
    consent_id: str | None
    promoted_by: str | None
    promoted_at: datetime | None
    expires_at: datetime | None
    in_contradiction: bool | None
    contradicts_id: str | None
    supersedes_id: str | None
    retracted_at: datetime | None
    retracted_by: str | None
    retraction_reason: str | None
    promoted_by_role: str | None
    erased_at: datetime | None
    embedding_bits: str | None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Review:
    """A row of memory_fabric.reviews: one verdict (review_candidate(), edit())."""

    id: str | None
    tenant_id: str | None
    candidate_id: str | None
    status: str | None
    duplicate_of_id: str | None
    contradicts_id: str | None
    contradiction_resolution: str | None
    proposed_tier: str | None
    priority_score: Decimal | None
    reviewer: str | None
    reviewer_notes: str | None
    reason: str | None
    similarity: float | None
    consent_id: str | None
    policy_version: int | None
    reviewed_at: datetime | None
    reviewed_by: str | None
    rejection_of_id: str | None
    scope_version: UUID | None
    neighbour_ids: list[str] | None
    retracted_ids: list[str] | None
    judge_model: str | None
    judge_scores: Any | None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class TenantGrant:
    """A row of memory_fabric.tenant_grants (grant_tenant(), revoke_tenant())."""

    id: str | None
    role_name: str | None
    tenant_id: str | None
    granted_at: datetime | None
    granted_by: str | None
    revoked_at: datetime | None
    revoked_by: str | None
    role_oid: Any | None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RecalledMemory:
    """One row recall() returns: a visible memory, its score and why."""

    memory_id: str | None
    text: str | None
    tier: str | None
    priority: Decimal | None
    score: float | None
    relevance: float | None
    recency: float | None
    importance: float | None
    low_confidence: bool | None
    in_contradiction: bool | None
    contradicts: list[str] | None
    candidate_id: str | None
    evidence_refs: Any | None
    source: str | None
    captured_at: datetime | None
    consent_id: str | None
    classification: str | None
    user_scope: str | None
    intent_scope: str | None
    entity: str | None
    predicate: str | None
    value: Any | None
    write_class: str | None
    confidence: float | None
    promoted_at: datetime | None
    expires_at: datetime | None
    embedding_model: str | None
    extra: dict[str, Any] = field(default_factory=dict)



@dataclass(frozen=True)
class ReviewStatus:
    """review_status(): where a candidate stands. ``stage`` is one of unreviewed, promotable,
    waiting_for_human (with status contradicts: a contradiction a person decides), duplicate,
    rejected, edited, promoted, retracted, erased; the other columns are its effective review, its
    operator's decision and its memory."""

    id: str | None
    stage: str | None
    status: str | None
    reviewer: str | None
    reason: str | None
    tier: str | None
    duplicate_of: str | None
    contradicts: str | None
    resolution: str | None
    reviewed_at: datetime | None
    decision: str | None
    decided_at: datetime | None
    new_candidate_id: str | None
    memory_id: str | None
    promoted_at: datetime | None
    retracted_at: datetime | None
    captured_at: datetime | None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def outcome(self) -> str | None:
        """The stage as the package reports it: ``contradiction_blocked`` for a contradiction that
        waits for a person (review_status() says ``waiting_for_human`` with status
        ``contradicts``), else the stage."""
        if self.stage == "waiting_for_human" and self.status == "contradicts":
            return "contradiction_blocked"
        return self.stage