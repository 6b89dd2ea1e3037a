"""memory_fabric for Python: the extension's public functions as typed sync and async methods,
run as the connection's own role (clients/python/README.md).

A LangGraph store on them is memory_fabric.store.MemoryFabricStore: import it from there (it needs
the ``langgraph`` extra; this package does not import LangGraph)."""

from .calls import Erasure, Explanation, HistoryEntry
from .client import AsyncMemoryFabric, MemoryFabric
from .errors import (ChangedSinceReview, ContradictsMemory, DuplicateMemory, FourEyes, InvalidArgument,
                     LimitExceeded, MemoryFabricError, NotFound, NotPromotable, PermissionDenied, ReadOnly,
                     RequiresApproval, TenantNotGranted, WrongState)
from .types import (Candidate, Consent, Decision, EmbeddingModel, Memory, Policy, RecalledMemory, Review, ReviewStatus,
                    TenantGrant)

__version__ = "0.1.0"

__all__ = [
    "AsyncMemoryFabric", "MemoryFabric", "Candidate", "Consent", "Decision", "EmbeddingModel", "Memory", "Policy",
    "RecalledMemory", "Review", "ReviewStatus", "TenantGrant", "Erasure", "Explanation", "HistoryEntry", "MemoryFabricError",
    "InvalidArgument", "LimitExceeded", "NotFound", "PermissionDenied", "TenantNotGranted", "FourEyes", "WrongState",
    "NotPromotable", "RequiresApproval", "DuplicateMemory", "ContradictsMemory", "ChangedSinceReview", "ReadOnly",
]
