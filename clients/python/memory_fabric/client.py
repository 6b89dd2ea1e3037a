"""Sync and async clients: every public function of memory_fabric as a method, run as the
connection's own role, in a transaction pinned to the client's tenant.

    from memory_fabric import MemoryFabric
    with MemoryFabric.connect("dbname=app user=support_agent", tenant_id="acme") as mf:
        c = mf.capture_memory("Customer cus_42 prefers email.", "agent", "INTERNAL", user_id="cus_42")
        r = mf.review_candidate(c.id)

Each call is one transaction (``SET LOCAL memory_fabric.tenant_id``), unless it runs inside
``with mf.transaction():``, which pins the tenant once for all the calls in it. The client adds
no power: grants, row-level security, the tenant pin and four eyes apply as in psql. Errors
are ``memory_fabric.errors`` exceptions carrying the SQLSTATE.
"""

from __future__ import annotations

import contextlib
from typing import Any, AsyncIterator, Iterator, Optional

import psycopg
from pgvector.psycopg.vector import register_vector_info  # register_vector() would look the type up by its bare name
from psycopg.rows import dict_row
from psycopg.types import TypeInfo

from . import calls
from .calls import Call
from .errors import MemoryFabricError, from_psycopg
from .types import from_row

# the catalog's name for pgvector's type, as the extension's columns use it
VECTOR_TYPE = ("SELECT a.atttypid::pg_catalog.regtype::text FROM pg_catalog.pg_attribute a "
               "WHERE a.attrelid = 'memory_fabric.candidates'::pg_catalog.regclass AND a.attname = 'embedding'")
PIN = "SELECT pg_catalog.set_config('memory_fabric.tenant_id', %s, true)"
# for a procedure that commits its batches: the pin must outlive each transaction
PIN_SESSION = "SELECT pg_catalog.set_config('memory_fabric.tenant_id', %s, false)"


def _result(call: Call, rows: list[dict[str, Any]]) -> Any:
    if call.shape == "none":
        return None
    if call.shape == "scalar":
        return next(iter(rows[0].values())) if rows else None
    cls = call.cls
    built = [from_row(cls, r) if hasattr(cls, "__dataclass_fields__") and "extra" in cls.__dataclass_fields__  # type: ignore[union-attr]
             else cls(**r) for r in rows]  # type: ignore[misc]
    if call.shape == "one":
        return built[0] if built else None
    return built


class _Methods:
    """The public functions, each building its Call; `_run` executes it (sync or async)."""

    tenant_id: str

    def _run(self, call: Call) -> Any:  # pragma: no cover - overridden
        raise NotImplementedError

    def capture_memory(self, text: str, source: str, classification: str, **kw: Any) -> Any:
        """capture_memory(): appends a candidate. Keywords: user_id, intent_id, evidence_refs,
        entity, predicate, value, write_class, confidence, actor, embedding, embedding_model,
        supersedes, metadata. Returns a Candidate."""
        return self._run(calls.capture_memory(self.tenant_id, text, source, classification, **kw))

    def review_candidate(self, candidate_id: str) -> Any:
        """review_candidate(): the verdict, as a Review."""
        return self._run(calls.review_candidate(candidate_id))

    def promote(self, candidate_id: str, approver: Optional[str] = None) -> Any:
        """promote(): the promoted Memory."""
        return self._run(calls.promote(candidate_id, approver))

    def approve(self, candidate_id: str, approver: str, notes: Optional[str] = None) -> Any:
        return self._run(calls.approve(candidate_id, approver, notes))

    def reject(self, candidate_id: str, approver: str, reason: str) -> Any:
        return self._run(calls.reject(candidate_id, approver, reason))

    def edit(self, candidate_id: str, editor: str, text: str, **kw: Any) -> Any:
        return self._run(calls.edit(candidate_id, editor, text, **kw))

    def retract(self, memory_id: str, reason: str, retracted_by: str) -> Any:
        return self._run(calls.retract(memory_id, reason, retracted_by))

    def recall(self, intent_id: Optional[str] = None, **kw: Any) -> Any:
        """recall(): a list of RecalledMemory. Keywords: user_id, max_recalls,
        classification_allowed, query_text, query_embedding, as_of, query_embedding_model."""
        return self._run(calls.recall(self.tenant_id, intent_id, **kw))

    def recall_fact(self, entity: str, predicate: str, intent_id: Optional[str] = None, **kw: Any) -> Any:
        """recall_fact(): the visible memories stating (entity, predicate), a list of RecalledMemory
        (the user's first, then the user-less). Keywords: user_id, max_recalls, classification_allowed, as_of."""
        return self._run(calls.recall_fact(self.tenant_id, intent_id, entity, predicate, **kw))

    def review_status(self, candidate_id: str) -> Any:
        """review_status(): where a candidate this role captured stands, a ReviewStatus."""
        return self._run(calls.review_status(candidate_id))

    def explain_recall(self, memory_id: str, **kw: Any) -> Any:
        return self._run(calls.explain_recall(self.tenant_id, memory_id, **kw))

    def memory_history(self, id: str) -> Any:
        return self._run(calls.memory_history(id))

    def record_consent(self, subject: str, purpose: str, basis: str, **kw: Any) -> Any:
        return self._run(calls.record_consent(self.tenant_id, subject, purpose, basis, **kw))

    def revoke_consent(self, consent_id: str, reason: str) -> Any:
        return self._run(calls.revoke_consent(consent_id, reason))

    def set_policy(self, patch: dict[str, Any], note: Optional[str] = None) -> Any:
        return self._run(calls.set_policy(self.tenant_id, patch, note))

    def forget_subject(self, user_id: str, reason: str) -> Any:
        return self._run(calls.forget_subject(self.tenant_id, user_id, reason))

    def purge_expired(self, batch_size: Optional[int] = None) -> Any:
        return self._run(calls.purge_expired(self.tenant_id, batch_size))

    def purge_expired_memories(self, batch_size: Optional[int] = None) -> Any:
        """CALL purge_expired_memories(): commits each batch, so it runs outside a transaction."""
        return self._run(calls.procedure("purge_expired_memories", tenant_id=self.tenant_id, batch_size=batch_size))

    def reembed_memories(self, batch_size: Optional[int] = None) -> Any:
        return self._run(calls.procedure("reembed_memories", tenant_id=self.tenant_id, batch_size=batch_size))

    def promote_pending(self, batch_size: Optional[int] = None) -> Any:
        return self._run(calls.procedure("promote_pending", tenant_id=self.tenant_id, batch_size=batch_size))

    def register_embedding_model(self, model: str, dimensions: int) -> Any:
        return self._run(calls.register_embedding_model(self.tenant_id, model, dimensions))

    def create_embedding_index(self, model: str, dimensions: int) -> Any:
        return self._run(calls.create_embedding_index(model, dimensions))

    def grant_tenant(self, role: str) -> Any:
        return self._run(calls.grant_tenant(role, self.tenant_id))

    def revoke_tenant(self, role: str) -> Any:
        return self._run(calls.revoke_tenant(role, self.tenant_id))


class MemoryFabric(_Methods):
    """The sync client, on a psycopg connection (autocommit: each call is its own transaction
    unless inside ``transaction()``)."""

    def __init__(self, conn: psycopg.Connection[Any], tenant_id: str):
        self.conn = conn
        self.tenant_id = tenant_id
        self._vector: Optional[str] = None
        self._in_tx = False
        conn.autocommit = True

    @classmethod
    def connect(cls, conninfo: str = "", *, tenant_id: str, **kwargs: Any) -> "MemoryFabric":
        """Connects with libpq's conninfo and the usual PG* variables (no password needed here)."""
        return cls(psycopg.connect(conninfo, **kwargs), tenant_id)

    def __enter__(self) -> "MemoryFabric":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.conn.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator["MemoryFabric"]:
        """One transaction pinned to the tenant for every call inside; rolled back on an error."""
        try:
            with self.conn.transaction():
                self.conn.execute(PIN, (self.tenant_id,))
                self._in_tx = True
                try:
                    yield self
                finally:
                    self._in_tx = False
        except psycopg.Error as e:
            raise from_psycopg(e) from e

    def _vector_type(self) -> str:
        # once per client: pgvector's type as the catalog names it, and pgvector's adapters for it
        # (vectors come back as pgvector.Vector)
        if self._vector is None:
            row = self.conn.execute(VECTOR_TYPE).fetchone()
            name = row[0] if row else "vector"
            register_vector_info(self.conn, TypeInfo.fetch(self.conn, name))
            self._vector = name
        return self._vector

    def _run(self, call: Call) -> Any:
        try:
            vector = self._vector_type()
            sql = call.sql.replace("{vector}", vector) if "{vector}" in call.sql else call.sql
            if call.procedure:
                if self._in_tx:
                    raise MemoryFabricError("25001", f"{call.sql.split('(')[0]} commits its batches: call it outside transaction()")
                with self.conn.cursor(row_factory=dict_row) as cur:
                    cur.execute(PIN_SESSION, (self.tenant_id,))
                    cur.execute(sql, call.params)
                return None
            if self._in_tx:
                with self.conn.cursor(row_factory=dict_row) as cur:
                    cur.execute(sql, call.params)
                    return _result(call, cur.fetchall() if cur.description else [])
            with self.conn.transaction():
                with self.conn.cursor(row_factory=dict_row) as cur:
                    cur.execute(PIN, (self.tenant_id,))
                    cur.execute(sql, call.params)
                    return _result(call, cur.fetchall() if cur.description else [])
        except psycopg.Error as e:
            raise from_psycopg(e) from e


class AsyncMemoryFabric(_Methods):
    """The async client, on a psycopg AsyncConnection; the same methods, awaited."""

    def __init__(self, conn: psycopg.AsyncConnection[Any], tenant_id: str):
        self.conn = conn
        self.tenant_id = tenant_id
        self._vector: Optional[str] = None
        self._in_tx = False

    @classmethod
    async def connect(cls, conninfo: str = "", *, tenant_id: str, **kwargs: Any) -> "AsyncMemoryFabric":
        conn = await psycopg.AsyncConnection.connect(conninfo, autocommit=True, **kwargs)
        return cls(conn, tenant_id)

    async def __aenter__(self) -> "AsyncMemoryFabric":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.conn.close()

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator["AsyncMemoryFabric"]:
        try:
            async with self.conn.transaction():
                await self.conn.execute(PIN, (self.tenant_id,))
                self._in_tx = True
                try:
                    yield self
                finally:
                    self._in_tx = False
        except psycopg.Error as e:
            raise from_psycopg(e) from e

    async def _vector_type(self) -> str:
        if self._vector is None:
            cur = await self.conn.execute(VECTOR_TYPE)
            row = await cur.fetchone()
            name = row[0] if row else "vector"
            register_vector_info(self.conn, await TypeInfo.fetch(self.conn, name))
            self._vector = name
        return self._vector

    def _run(self, call: Call) -> Any:  # type: ignore[override]
        return self._arun(call)

    async def _arun(self, call: Call) -> Any:
        try:
            vector = await self._vector_type()
            sql = call.sql.replace("{vector}", vector) if "{vector}" in call.sql else call.sql
            if call.procedure:
                if self._in_tx:
                    raise MemoryFabricError("25001", f"{call.sql.split('(')[0]} commits its batches: call it outside transaction()")
                async with self.conn.cursor(row_factory=dict_row) as cur:
                    await cur.execute(PIN_SESSION, (self.tenant_id,))
                    await cur.execute(sql, call.params)
                return None
            if self._in_tx:
                async with self.conn.cursor(row_factory=dict_row) as cur:
                    await cur.execute(sql, call.params)
                    return _result(call, await cur.fetchall() if cur.description else [])
            async with self.conn.transaction():
                async with self.conn.cursor(row_factory=dict_row) as cur:
                    await cur.execute(PIN, (self.tenant_id,))
                    await cur.execute(sql, call.params)
                    return _result(call, await cur.fetchall() if cur.description else [])
        except psycopg.Error as e:
            raise from_psycopg(e) from e
