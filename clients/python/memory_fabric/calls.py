"""The SQL of each public function of memory_fabric (README.md, Reference), built once for the
sync and the async client: a call is its statement, its parameters and the shape of its result.
Arguments left as None are not passed, so the function's own defaults apply."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Iterable, Optional, Sequence

from psycopg.types.json import Jsonb

from . import types as t


@dataclass(frozen=True)
class Explanation:
    """explain_recall(): whether a memory was visible to such a recall, and why not."""

    visible: bool
    reasons: list[str]
    memory: str
    at: datetime


@dataclass(frozen=True)
class HistoryEntry:
    """One stage of memory_history(): captured, reviewed, decided, promoted, retracted, erased, events."""

    at: datetime
    stage: str
    ref: str
    detail: dict[str, Any]


@dataclass(frozen=True)
class Erasure:
    """forget_subject()'s counts."""

    candidates_erased: int
    memories_erased: int


@dataclass(frozen=True)
class Call:
    sql: str
    params: dict[str, Any]
    # "one": a row as `cls`; "many": rows as `cls`; "scalar": the first column; "none": nothing
    shape: str
    cls: Optional[type] = None
    # CALL of a procedure that commits: needs autocommit, outside any transaction
    procedure: bool = False


# Vectors travel as real[] and are cast to pgvector's type, whose schema-qualified name the
# client reads from the catalog ({vector} in a statement).
VECTORS = ("embedding", "query_embedding")


def _vector(v: Any) -> Optional[list[float]]:
    """A list of floats, a pgvector.Vector or a NumPy array, as real[]."""
    if v is None:
        return None
    return [float(x) for x in (v.to_list() if hasattr(v, "to_list") else v)]


def _json(v: Any) -> Optional[Jsonb]:
    return None if v is None else Jsonb(v)


def _arg(k: str) -> str:
    return f"{k} => %({k})s::real[]::{{vector}}" if k in VECTORS else f"{k} => %({k})s"


def call(function: str, shape: str, cls: Optional[type] = None, *, star: bool = True, keep: tuple[str, ...] = (),
         **args: Any) -> Call:
    """``SELECT * FROM memory_fabric.function(name => %(name)s, ...)`` with the arguments given;
    those named in ``keep`` (arguments without a default) are passed even when None (NULL)."""
    given = {k: v for k, v in args.items() if v is not None or k in keep}
    named = ", ".join(_arg(k) for k in given)
    sql = f"SELECT * FROM memory_fabric.{function}({named})" if star else f"SELECT memory_fabric.{function}({named})"
    return Call(sql, given, shape, cls)


def procedure(name: str, **args: Any) -> Call:
    given = {k: v for k, v in args.items() if v is not None}
    named = ", ".join(f"{k} => %({k})s" for k in given)
    return Call(f"CALL memory_fabric.{name}({named})", given, "none", procedure=True)


def capture_memory(tenant_id: str, text: str, source: str, classification: str, *, user_id: Optional[str] = None,
                   intent_id: Optional[str] = None, evidence_refs: Optional[Iterable[str]] = None,
                   entity: Optional[str] = None, predicate: Optional[str] = None, value: Any = None,
                   write_class: Optional[str] = None, confidence: Optional[float] = None, actor: Optional[str] = None,
                   embedding: Optional[Sequence[float]] = None, embedding_model: Optional[str] = None,
                   supersedes: Optional[str] = None, metadata: Optional[dict[str, Any]] = None) -> Call:
    return call("capture_memory", "one", t.Candidate, tenant_id=tenant_id, text=text, source=source,
                classification=classification, user_id=user_id, intent_id=intent_id,
                evidence_refs=_json(list(evidence_refs)) if evidence_refs is not None else None, entity=entity,
                predicate=predicate, value=_json(value), write_class=write_class, confidence=confidence,
                actor=actor, embedding=_vector(embedding), embedding_model=embedding_model, supersedes=supersedes,
                metadata=_json(metadata))


def review_candidate(candidate_id: str) -> Call:
    return call("review_candidate", "one", t.Review, candidate_id=candidate_id)


def promote(candidate_id: str, approver: Optional[str] = None) -> Call:
    return call("promote", "one", t.Memory, candidate_id=candidate_id, approver=approver)


def approve(candidate_id: str, approver: str, notes: Optional[str] = None) -> Call:
    return call("approve", "one", t.Memory, candidate_id=candidate_id, approver=approver, notes=notes)


def reject(candidate_id: str, approver: str, reason: str) -> Call:
    return call("reject", "one", t.Decision, candidate_id=candidate_id, approver=approver, reason=reason)


def edit(candidate_id: str, editor: str, text: str, *, classification: Optional[str] = None,
         evidence_refs: Optional[Iterable[str]] = None, value: Any = None, notes: Optional[str] = None) -> Call:
    return call("edit", "one", t.Review, candidate_id=candidate_id, editor=editor, text=text,
                classification=classification,
                evidence_refs=_json(list(evidence_refs)) if evidence_refs is not None else None,
                value=_json(value), notes=notes)


def retract(memory_id: str, reason: str, retracted_by: str) -> Call:
    return call("retract", "one", t.Memory, memory_id=memory_id, reason=reason, retracted_by=retracted_by)


def recall(tenant_id: str, intent_id: Optional[str] = None, *, user_id: Optional[str] = None,
           max_recalls: Optional[int] = None, classification_allowed: Optional[Sequence[str]] = None,
           query_text: Optional[str] = None, query_embedding: Optional[Sequence[float]] = None,
           as_of: Optional[datetime] = None, query_embedding_model: Optional[str] = None) -> Call:
    # intent_id has no default: always passed (NULL: cross-intent memories only)
    return call("recall", "many", t.RecalledMemory, keep=("intent_id",), tenant_id=tenant_id, intent_id=intent_id,
                user_id=user_id, max_recalls=max_recalls,
                classification_allowed=list(classification_allowed) if classification_allowed is not None else None,
                query_text=query_text, query_embedding=_vector(query_embedding), as_of=as_of,
                query_embedding_model=query_embedding_model)


def recall_fact(tenant_id: str, intent_id: Optional[str], entity: str, predicate: str, *,
                user_id: Optional[str] = None, max_recalls: Optional[int] = None,
                classification_allowed: Optional[Sequence[str]] = None, as_of: Optional[datetime] = None) -> Call:
    # intent_id has no default: always passed (NULL: cross-intent memories only)
    return call("recall_fact", "many", t.RecalledMemory, keep=("intent_id",), tenant_id=tenant_id, intent_id=intent_id,
                fact_entity=entity, fact_predicate=predicate, user_id=user_id, max_recalls=max_recalls,
                classification_allowed=list(classification_allowed) if classification_allowed is not None else None,
                as_of=as_of)


def review_status(candidate_id: str) -> Call:
    return call("review_status", "one", t.ReviewStatus, candidate_id=candidate_id)


def explain_recall(tenant_id: str, memory_id: str, *, intent_id: Optional[str] = None, user_id: Optional[str] = None,
                   classification_allowed: Optional[Sequence[str]] = None, as_of: Optional[datetime] = None) -> Call:
    return call("explain_recall", "one", Explanation, tenant_id=tenant_id, memory_id=memory_id, intent_id=intent_id,
                user_id=user_id,
                classification_allowed=list(classification_allowed) if classification_allowed is not None else None,
                as_of=as_of)


def memory_history(id: str) -> Call:
    return call("memory_history", "many", HistoryEntry, id=id)


def record_consent(tenant_id: str, subject: str, purpose: str, basis: str, *,
                   predicates_allowed: Optional[Sequence[str]] = None,
                   classifications_allowed: Optional[Sequence[str]] = None, valid_until: Optional[datetime] = None,
                   evidence_refs: Optional[Iterable[str]] = None, auditor_id: Optional[str] = None,
                   supersedes: Optional[str] = None) -> Call:
    return call("record_consent", "one", t.Consent, tenant_id=tenant_id, subject=subject, purpose=purpose, basis=basis,
                predicates_allowed=list(predicates_allowed) if predicates_allowed is not None else None,
                classifications_allowed=list(classifications_allowed) if classifications_allowed is not None else None,
                valid_until=valid_until,
                evidence_refs=_json(list(evidence_refs)) if evidence_refs is not None else None,
                auditor_id=auditor_id, supersedes=supersedes)


def revoke_consent(consent_id: str, reason: str) -> Call:
    return call("revoke_consent", "one", t.Consent, consent_id=consent_id, reason=reason)


def set_policy(tenant_id: str, patch: dict[str, Any], note: Optional[str] = None) -> Call:
    return call("set_policy", "one", t.Policy, tenant_id=tenant_id, patch=_json(patch), note=note)


def forget_subject(tenant_id: str, user_id: str, reason: str) -> Call:
    return call("forget_subject", "one", Erasure, tenant_id=tenant_id, user_id=user_id, reason=reason)


def purge_expired(tenant_id: str, batch_size: Optional[int] = None) -> Call:
    return call("purge_expired", "scalar", star=False, tenant_id=tenant_id, batch_size=batch_size)


def register_embedding_model(tenant_id: str, model: str, dimensions: int) -> Call:
    return call("register_embedding_model", "one", t.EmbeddingModel, tenant_id=tenant_id, model=model,
                dimensions=dimensions)


def create_embedding_index(model: str, dimensions: int) -> Call:
    return call("create_embedding_index", "scalar", star=False, model=model, dimensions=dimensions)


def grant_tenant(role: str, tenant_id: str) -> Call:
    return call("grant_tenant", "one", t.TenantGrant, role=role, tenant_id=tenant_id)


def revoke_tenant(role: str, tenant_id: str) -> Call:
    return call("revoke_tenant", "one", t.TenantGrant, role=role, tenant_id=tenant_id)
