"""Exceptions that carry the SQLSTATE, message, detail and hint memory_fabric raised.

Every error of the extension (README.md, SQLSTATEs) becomes a ``MemoryFabricError`` subclass
chosen by its SQLSTATE and, for the few states that cover several cases, by its message:

| class | SQLSTATE | when |
|---|---|---|
| ``InvalidArgument`` | 22023 | an argument or a policy value is refused |
| ``LimitExceeded`` | 54000 | a text, value or list is over the policy's limit |
| ``NotFound`` | P0002 | an id that does not exist, or belongs to a tenant the role is not granted |
| ``PermissionDenied`` | 42501 | the role may not do this |
| ``TenantNotGranted`` | 42501 | ... for this tenant: no grant, no pin, or another pin |
| ``FourEyes`` | 42501 | an approver who captured the candidate |
| ``NotPromotable`` | 55000 | promote() / approve() refused: see its subclasses |
| ``RequiresApproval`` | 55000 | the review queued the candidate for a human |
| ``DuplicateMemory`` | 55000 | the review says it duplicates a memory |
| ``ContradictsMemory`` | 55000 | the review says it contradicts a memory and blocks |
| ``ChangedSinceReview`` | 55000 | the memories or consents changed since the review: review again |
| ``WrongState`` | 55000 | anything else already done (promoted, decided, retracted, erased) |
| ``ReadOnly`` | 25006 | a write on a standby or in a read-only transaction |
| ``MemoryFabricError`` | other | anything else, with its SQLSTATE |
"""

from __future__ import annotations

from typing import Optional


class MemoryFabricError(Exception):
    """An error memory_fabric (or PostgreSQL) raised, with its SQLSTATE."""

    def __init__(self, sqlstate: Optional[str], message: str, detail: Optional[str] = None, hint: Optional[str] = None):
        super().__init__(f"{sqlstate}: {message}" if sqlstate else message)
        self.sqlstate = sqlstate
        self.message = message
        self.detail = detail
        self.hint = hint


class InvalidArgument(MemoryFabricError):
    pass


class LimitExceeded(MemoryFabricError):
    pass


class NotFound(MemoryFabricError):
    pass


class PermissionDenied(MemoryFabricError):
    pass


class TenantNotGranted(PermissionDenied):
    pass


class FourEyes(PermissionDenied):
    pass


class WrongState(MemoryFabricError):
    pass


class NotPromotable(WrongState):
    pass


class RequiresApproval(NotPromotable):
    pass


class DuplicateMemory(NotPromotable):
    pass


class ContradictsMemory(NotPromotable):
    pass


class ChangedSinceReview(NotPromotable):
    pass


class ReadOnly(MemoryFabricError):
    pass


def classify(sqlstate: Optional[str], message: str, detail: Optional[str] = None, hint: Optional[str] = None) -> MemoryFabricError:
    """The exception for an error with this SQLSTATE and text."""
    text = f"{message}\n{detail or ''}"
    cls: type[MemoryFabricError] = MemoryFabricError
    if sqlstate == "22023":
        cls = InvalidArgument
    elif sqlstate == "54000":
        cls = LimitExceeded
    elif sqlstate == "P0002":
        cls = NotFound
    elif sqlstate == "25006":
        cls = ReadOnly
    elif sqlstate == "42501":
        if "four eyes" in text:
            cls = FourEyes
        elif "tenant" in message:
            cls = TenantNotGranted
        else:
            cls = PermissionDenied
    elif sqlstate == "55000":
        if "requires approval" in message:
            cls = RequiresApproval
        elif "changed since" in message:
            cls = ChangedSinceReview
        elif "is not promotable" in message and "duplicates" in text:
            cls = DuplicateMemory
        elif "is not promotable" in message and "contradicts" in text:
            cls = ContradictsMemory
        elif "is not promotable" in message:
            cls = NotPromotable
        else:
            cls = WrongState
    return cls(sqlstate, message, detail, hint)


def from_psycopg(e: Exception) -> MemoryFabricError:
    """The exception for a psycopg error (its diagnostics), or the error itself wrapped."""
    diag = getattr(e, "diag", None)
    sqlstate = getattr(e, "sqlstate", None)
    if diag is None:
        return MemoryFabricError(sqlstate, str(e))
    return classify(sqlstate, diag.message_primary or str(e), diag.message_detail, diag.message_hint)
