"""``MemoryFabricStore``: a LangGraph store (``langgraph.store.base.BaseStore``) on memory_fabric.

    from memory_fabric import MemoryFabric
    from memory_fabric.store import MemoryFabricStore

    mf = MemoryFabric.connect("dbname=app user=support_agent", tenant_id="acme")
    store = MemoryFabricStore(mf)
    store.put(("acme", "cus_42"), "contact_channel", {"text": "Customer cus_42 prefers email.", "channel": "email"})
    store.get(("acme", "cus_42"), "contact_channel")

Every operation is the extension's governed path, run as the client's own role: a put captures,
reviews and promotes in one transaction (or leaves the candidate to a human), a get reads
``recall_fact``, a search reads ``recall``, a delete retracts. Governance wins over the store
contract: a put may not take effect (``last_outcome`` / ``put_governed`` say what happened), reads
return promoted memories only, a delete needs an admin role. clients/python/README.md, "LangGraph
store", has the mapping and every difference.

This module needs LangGraph (``pip install './clients/python[langgraph]'``); ``import
memory_fabric`` does not.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import re
import threading
from dataclasses import dataclass
from typing import Any, Deque, Generator, Iterable, Mapping, Optional, Sequence

try:
    from langgraph.store.base import (BaseStore, GetOp, InvalidNamespaceError, Item, ListNamespacesOp,
                                      MatchCondition, Op, PutOp, Result, SearchItem, SearchOp)
except ImportError as e:  # pragma: no cover - exercised only without langgraph
    raise ImportError("memory_fabric.store needs LangGraph 1.x: install the package with its extra, "
                      "pip install './clients/python[langgraph]'") from e

from .client import AsyncMemoryFabric, MemoryFabric
from .types import RecalledMemory, ReviewStatus

__all__ = ["MemoryFabricStore", "PutOutcome", "PutNotApplied", "InvalidKeyError", "InvalidNamespaceError",
           "NO_SCOPE", "encode_label", "decode_label", "encode_key", "decode_key"]

# In a namespace, this label in the user (or intent) position means "no user" ("no intent").
NO_SCOPE = "-"
# recall()'s and recall_fact()'s max_recalls bound
RECALL_MAX = 1000
# a memory id (core/src/ids.rs): a key that is one names that memory (get, delete)
MEMORY_ID = re.compile(r"pm_[0-9]{8}t[0-9]{6}_[0-9a-z]{12}")
# the only escapes a label or a key part may hold: %, ., -, *, /
_ESCAPES = {"%25": "%", "%2E": ".", "%2D": "-", "%2A": "*", "%2F": "/"}
_ESCAPE = re.compile(r"%(..)?", re.DOTALL)
# what put() leaves in effect: the key now holds the value (or, for a delete, no memory)
_APPLIED = frozenset({"promoted", "unchanged", "retracted", "absent"})


class InvalidKeyError(ValueError):
    """A key the store cannot read as ``[entity/]predicate`` (or a memory id where a put needs a fact)."""


def _unescape(text: str, what: str, error: type[ValueError]) -> str:
    def one(m: "re.Match[str]") -> str:
        code = m.group(0).upper()
        if code not in _ESCAPES:
            raise error(f"{what} {text!r} holds {m.group(0)!r}: a '%' must start one of %25 (%), %2E (.), "
                        "%2D (-), %2A (*), %2F (/)")
        return _ESCAPES[code]

    return _ESCAPE.sub(one, text)


def encode_label(id: str) -> str:
    """A tenant, user or intent id as a namespace label: '%' and '.' (LangGraph refuses a '.' in a
    label) escaped as %25 and %2E; an id that is exactly '-' or '*' as %2D or %2A."""
    s = id.replace("%", "%25").replace(".", "%2E")
    return {"-": "%2D", "*": "%2A"}.get(s, s)


def decode_label(label: str) -> str:
    """The id a namespace label names (encode_label's inverse); raises InvalidNamespaceError for a
    '%' that starts none of the store's escapes."""
    return _unescape(label, "namespace label", InvalidNamespaceError)


def _encode_part(s: str) -> str:
    return s.replace("%", "%25").replace("/", "%2F")


def encode_key(predicate: str, entity: Optional[str] = None) -> str:
    """The key of the fact (entity, predicate): ``predicate`` alone when the entity is the
    namespace's own (its user, or its tenant when user-less) and given as None, else
    ``entity/predicate``; '%' and '/' inside either escaped as %25 and %2F."""
    return _encode_part(predicate) if entity is None else f"{_encode_part(entity)}/{_encode_part(predicate)}"


def decode_key(key: str) -> tuple[Optional[str], str]:
    """(entity or None, predicate) of a key; raises InvalidKeyError for more than one '/'."""
    parts = key.split("/")
    if len(parts) > 2:
        raise InvalidKeyError(f"key {key!r} has {len(parts) - 1} '/': a key is 'predicate' or 'entity/predicate' "
                              "(escape a '/' inside either as %2F)")
    decoded = [_unescape(p, "key", InvalidKeyError) for p in parts]
    return (None, decoded[0]) if len(decoded) == 1 else (decoded[0], decoded[1])


@dataclass(frozen=True)
class _Scope:
    tenant: str
    user: Optional[str]
    intent: Optional[str]

    @property
    def default_entity(self) -> str:
        return self.user if self.user is not None else self.tenant

    def holds(self, m: RecalledMemory) -> bool:
        return m.user_scope == self.user and m.intent_scope == self.intent


def _namespace_of(tenant: str, user: Optional[str], intent: Optional[str]) -> tuple[str, ...]:
    """The canonical namespace of a scope: (t,), (t, user), (t, '-', intent), (t, user, intent)."""
    t = encode_label(tenant)
    if intent is None:
        return (t,) if user is None else (t, encode_label(user))
    return (t, NO_SCOPE if user is None else encode_label(user), encode_label(intent))


def _check_labels(namespace: Sequence[Any]) -> None:
    # LangGraph's own rules for a label (BaseStore's methods check them; ops given to batch() may not)
    for label in namespace:
        if not isinstance(label, str):
            raise InvalidNamespaceError(f"namespace {tuple(namespace)!r}: a label must be a string, not "
                                        f"{type(label).__name__}")
        if not label:
            raise InvalidNamespaceError(f"namespace {tuple(namespace)!r}: a label must not be empty")
        if "." in label or "\x00" in label:
            raise InvalidNamespaceError(f"namespace {tuple(namespace)!r}: a label must not hold '.' or NUL "
                                        "(write a '.' of an id as %2E: MemoryFabricStore.namespace() does)")


def _compare(item_value: Any, filter_value: Any) -> bool:
    """LangGraph's filter semantics (as its InMemoryStore): equality, nested dicts, $eq $ne $gt $gte $lt $lte."""
    if isinstance(filter_value, dict):
        if any(k.startswith("$") for k in filter_value):
            return all(_operator(item_value, k, v) for k, v in filter_value.items())
        return isinstance(item_value, dict) and all(_compare(item_value.get(k), v) for k, v in filter_value.items())
    if isinstance(filter_value, (list, tuple)):
        return (isinstance(item_value, (list, tuple)) and len(item_value) == len(filter_value)
                and all(_compare(a, b) for a, b in zip(item_value, filter_value)))
    return bool(item_value == filter_value)


def _operator(value: Any, op: str, arg: Any) -> bool:
    if op == "$eq":
        return bool(value == arg)
    if op == "$ne":
        return bool(value != arg)
    if op in ("$gt", "$gte", "$lt", "$lte"):
        try:
            a, b = float(value), float(arg)
        except (TypeError, ValueError):
            return False
        return {"$gt": a > b, "$gte": a >= b, "$lt": a < b, "$lte": a <= b}[op]
    raise ValueError(f"unsupported filter operator {op!r}")


def _matches(condition: MatchCondition, ns: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(ns) < len(path):
        return False
    pairs = zip(ns, path) if condition.match_type == "prefix" else zip(reversed(ns), reversed(path))
    return all(p == "*" or n == p for n, p in pairs)


@dataclass(frozen=True)
class PutOutcome:
    """What one put (or delete) did.

    ``stage``: ``promoted`` (the value is the key's memory now), ``unchanged`` (the key's memory
    already holds this value: nothing captured), ``waiting_for_human``, ``contradiction_blocked`` (it
    contradicts a memory and waits in the review queue for a person),
    ``duplicate``, ``rejected`` (captured and reviewed, not promoted: review_status()'s stages),
    ``retracted`` (a delete retracted the key's memory) or ``absent`` (a delete found no memory).
    ``applied`` is true for the first two and the last two."""

    namespace: tuple[str, ...]
    key: str
    stage: str
    candidate_id: Optional[str] = None
    # the memory holding the value now (promoted, unchanged) or the one retracted (retracted)
    memory_id: Optional[str] = None
    # the key's memory before the put, when there was one
    previous_memory_id: Optional[str] = None
    # review_status() of the candidate (reason, duplicate_of, contradicts, resolution, ...)
    status: Optional[ReviewStatus] = None

    @property
    def applied(self) -> bool:
        return self.stage in _APPLIED

    @property
    def reason(self) -> Optional[str]:
        return self.status.reason if self.status is not None else None


class PutNotApplied(Exception):
    """Raised by put()/delete() of a store built with strict=True when governance did not let the
    write take effect; ``outcome`` says why. The capture is kept (it waits for a human, or is
    recorded as a duplicate, a blocked contradiction or a rejection)."""

    def __init__(self, outcome: PutOutcome):
        super().__init__(f"put {outcome.namespace!r} {outcome.key!r} did not take effect: {outcome.stage}"
                         + (f" ({outcome.reason})" if outcome.reason else ""))
        self.outcome = outcome


@dataclass(frozen=True)
class _Call:
    name: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]


def _call(name: str, *args: Any, **kwargs: Any) -> _Call:
    return _Call(name, args, kwargs)


# a plan yields the client calls it needs, receives each result, and returns the op's result
_Plan = Generator[_Call, Any, Any]


class MemoryFabricStore(BaseStore):
    """A LangGraph store whose items are memory_fabric memories of one tenant, read and written
    through the extension's governed functions as the client's own role.

    ``client`` is a ``MemoryFabric`` (sync: batch, get, put, ...) or an ``AsyncMemoryFabric``
    (async: abatch, aget, aput, ...); give the other kind as ``aclient`` to have both paths. With
    only a sync client the async methods run it in a worker thread; with only an async client the
    sync methods work from other threads while the event loop the store was built or last awaited
    on runs (as LangGraph's sync nodes of an ``ainvoke``), never on the loop itself.

    Writes are captured with ``source``, ``classification``, ``actor`` (the display name recorded
    with the capture and a retraction) and ``write_class``; ``approver`` is passed to promote() (a
    reviewer's or admin's display name; an agent may not name one). Reads see
    ``read_classifications`` (default: PUBLIC, INTERNAL and ``classification``). ``strict=True``
    makes put() and delete() raise PutNotApplied when governance did not let the write take
    effect; by default they return None, and ``outcomes`` (the last ``keep_outcomes``) and
    ``last_outcome`` record what happened, as ``put_governed()`` returns it."""

    supports_ttl = False

    def __init__(self, client: Any = None, *, aclient: Optional[AsyncMemoryFabric] = None, source: str = "agent",
                 classification: str = "INTERNAL", actor: Optional[str] = None, approver: Optional[str] = None,
                 write_class: Optional[str] = None, read_classifications: Optional[Sequence[str]] = None,
                 strict: bool = False, keep_outcomes: int = 100):
        sync: Optional[MemoryFabric] = None
        if isinstance(client, AsyncMemoryFabric):
            if aclient is not None:
                raise TypeError("give one AsyncMemoryFabric: as client or as aclient")
            aclient = client
        elif isinstance(client, MemoryFabric):
            sync = client
        elif client is not None:
            raise TypeError(f"client must be a MemoryFabric or an AsyncMemoryFabric, not {type(client).__name__}")
        if aclient is not None and not isinstance(aclient, AsyncMemoryFabric):
            raise TypeError(f"aclient must be an AsyncMemoryFabric, not {type(aclient).__name__}")
        if sync is None and aclient is None:
            raise TypeError("MemoryFabricStore needs a MemoryFabric or an AsyncMemoryFabric client")
        if sync is not None and aclient is not None and sync.tenant_id != aclient.tenant_id:
            raise ValueError(f"the clients act for different tenants ({sync.tenant_id!r}, {aclient.tenant_id!r})")
        self.client = sync
        self.aclient = aclient
        self.tenant_id: str = (sync or aclient).tenant_id  # type: ignore[union-attr]
        self.source = source
        self.classification = classification
        self.actor = actor
        self.approver = approver
        self.write_class = write_class
        if read_classifications is None:
            read_classifications = list(dict.fromkeys(["PUBLIC", "INTERNAL", classification]))
        self.read_classifications = list(read_classifications)
        self.strict = strict
        self.outcomes: Deque[PutOutcome] = collections.deque(maxlen=keep_outcomes)
        self._lock = threading.RLock()
        self._alock: Optional[asyncio.Lock] = None
        self._alock_loop: Optional[asyncio.AbstractEventLoop] = None
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        with contextlib.suppress(RuntimeError):
            self._loop = asyncio.get_running_loop()

    # ----- mapping helpers -------------------------------------------------------------------

    @property
    def last_outcome(self) -> Optional[PutOutcome]:
        """The outcome of the newest put or delete (of any thread or task), or None."""
        return self.outcomes[-1] if self.outcomes else None

    def namespace(self, user_id: Optional[str] = None, intent_id: Optional[str] = None) -> tuple[str, ...]:
        """The namespace of a scope of this store's tenant, its ids' '.' and '%' escaped:
        ``namespace("cus_42", "support.billing") == ("acme", "cus_42", "support%2Ebilling")``."""
        return _namespace_of(self.tenant_id, user_id, intent_id)

    key = staticmethod(encode_key)

    def _scope(self, namespace: Sequence[Any], *, empty_ok: bool = False) -> _Scope:
        ns = tuple(namespace)
        if not ns:
            if empty_ok:
                return _Scope(self.tenant_id, None, None)
            raise InvalidNamespaceError("a namespace starts with the tenant: (tenant,), (tenant, user) or "
                                        "(tenant, user, intent)")
        _check_labels(ns)
        if len(ns) > 3:
            raise InvalidNamespaceError(f"namespace {ns!r} has {len(ns)} labels: at most 3, (tenant, user, intent); "
                                        "write a dotted intent as one label, its '.' as %2E")
        if "*" in ns:
            raise InvalidNamespaceError(f"namespace {ns!r}: '*' is list_namespaces()'s wildcard; write an id '*' as %2A")
        tenant = decode_label(ns[0])
        if tenant != self.tenant_id:
            raise InvalidNamespaceError(f"namespace {ns!r} names tenant {tenant!r}: this store acts for tenant "
                                        f"{self.tenant_id!r} only")
        user = None if len(ns) < 2 or ns[1] == NO_SCOPE else decode_label(ns[1])
        intent = None if len(ns) < 3 or ns[2] == NO_SCOPE else decode_label(ns[2])
        return _Scope(tenant, user, intent)

    def _fact(self, key: str, scope: _Scope) -> tuple[str, str]:
        entity, predicate = decode_key(key)
        return (scope.default_entity if entity is None else entity), predicate

    def _key_of(self, m: RecalledMemory) -> str:
        if m.entity is None or m.predicate is None:
            return str(m.memory_id)
        own = m.user_scope if m.user_scope is not None else self.tenant_id
        return encode_key(m.predicate, None if m.entity == own else m.entity)

    @staticmethod
    def _value_of(m: RecalledMemory) -> dict[str, Any]:
        if isinstance(m.value, dict):
            return m.value
        v: dict[str, Any] = {"text": m.text}
        if m.value is not None:
            v["value"] = m.value
        return v

    def _text_of(self, entity: str, predicate: str, value: dict[str, Any]) -> str:
        t = value.get("text")
        if isinstance(t, str) and t.strip():
            return t
        return f"{entity} {predicate}: {json.dumps(value, ensure_ascii=False, sort_keys=True)}"

    @staticmethod
    def _refs_of(value: dict[str, Any]) -> Optional[list[str]]:
        refs = value.get("evidence_refs")
        if isinstance(refs, list) and all(isinstance(r, str) for r in refs):
            return list(refs)
        return None

    def _retracted_by(self, conn: Any) -> str:
        return self.actor or str(conn.info.user)

    # ----- plans: each op as the client calls it needs ----------------------------------------

    def _plan_get(self, op: GetOp) -> _Plan:
        scope = self._scope(op.namespace)
        fact = None if MEMORY_ID.fullmatch(op.key) else self._fact(op.key, scope)
        return self._get(op, scope, fact)

    def _get(self, op: GetOp, scope: _Scope, fact: Optional[tuple[str, str]]) -> _Plan:
        found = yield from self._current(scope, op.key, fact)
        if not found:
            return None
        m = found[0]
        return Item(value=self._value_of(m), key=op.key, namespace=tuple(op.namespace), created_at=m.promoted_at,
                    updated_at=m.promoted_at)

    def _current(self, scope: _Scope, key: str,
                 fact: Optional[tuple[str, str]]) -> Generator[_Call, Any, list[RecalledMemory]]:
        """The key's visible memories in exactly the scope: the fact's (recall_fact), or, for a
        memory id (fact None), that memory among what recall sees."""
        if fact is None:
            rows = yield _call("recall", scope.intent, user_id=scope.user, max_recalls=RECALL_MAX,
                               classification_allowed=self.read_classifications)
            return [m for m in rows if m.memory_id == key and scope.holds(m)]
        rows = yield _call("recall_fact", fact[0], fact[1], scope.intent, user_id=scope.user, max_recalls=100,
                           classification_allowed=self.read_classifications)
        return [m for m in rows if scope.holds(m)]

    def _plan_search(self, op: SearchOp) -> _Plan:
        return self._search(op, self._scope(op.namespace_prefix, empty_ok=True))

    def _search(self, op: SearchOp, scope: _Scope) -> _Plan:
        if op.limit <= 0:
            return []
        want = op.offset + op.limit
        n = max(1, min(RECALL_MAX, want))
        while True:
            rows = yield _call("recall", scope.intent, user_id=scope.user, query_text=op.query or None, max_recalls=n,
                               classification_allowed=self.read_classifications)
            hits = [m for m in rows if scope.holds(m) and (not op.filter or _compare(self._value_of(m), op.filter))]
            # recall ranks the user's and the user-less, the intent's and the cross-intent together:
            # when the scope or the filter dropped rows, ask for more (up to recall's bound)
            if len(hits) >= want or len(rows) < n or n >= RECALL_MAX:
                break
            n = min(RECALL_MAX, n * 4)
        ns = _namespace_of(scope.tenant, scope.user, scope.intent)
        return [SearchItem(namespace=ns, key=self._key_of(m), value=self._value_of(m), created_at=m.promoted_at,
                           updated_at=m.promoted_at, score=m.score) for m in hits[op.offset:want]]

    def _plan_list(self, op: ListNamespacesOp) -> _Plan:
        conds = list(op.match_conditions or ())
        for c in conds:
            _check_labels([p for p in c.path])
        prefixes = [tuple(c.path) for c in conds if c.match_type == "prefix"]
        user = intent = None
        for i, path in enumerate(prefixes):
            # a trailing '-' (no user, no intent) is the shorter namespace: (t, '-') is (t,)
            while len(path) > 1 and path[-1] == NO_SCOPE:
                path = path[:-1]
            prefixes[i] = path
            if path[0] != "*" and decode_label(path[0]) != self.tenant_id:
                raise InvalidNamespaceError(f"prefix {path!r} names tenant {decode_label(path[0])!r}: this store acts "
                                            f"for tenant {self.tenant_id!r} only")
            if len(path) > 1 and path[1] not in ("*", NO_SCOPE):
                user = decode_label(path[1])
            if len(path) > 2 and path[2] not in ("*", NO_SCOPE):
                intent = decode_label(path[2])
        conds = [MatchCondition("prefix", p) for p in prefixes] + [c for c in conds if c.match_type != "prefix"]
        return self._list(op, conds, user, intent)

    def _list(self, op: ListNamespacesOp, conds: list[MatchCondition], user: Optional[str],
              intent: Optional[str]) -> _Plan:
        rows = yield _call("recall", intent, user_id=user, max_recalls=RECALL_MAX,
                           classification_allowed=self.read_classifications)
        found = {_namespace_of(self.tenant_id, m.user_scope, m.intent_scope) for m in rows}
        found = {ns for ns in found if all(_matches(c, ns) for c in conds)}
        if op.max_depth is not None:
            found = {ns[:op.max_depth] for ns in found}
        return sorted(found)[op.offset:op.offset + op.limit]

    def _plan_put(self, op: PutOp, conn: Any) -> _Plan:
        if op.ttl is not None:
            raise NotImplementedError("MemoryFabricStore has no per-item TTL: a memory's lifetime comes from its "
                                      "tier (README.md, Tiers and TTLs)")
        if op.index is not None:
            raise NotImplementedError("MemoryFabricStore has no index option: every memory's text is embedded by "
                                      "the extension and searchable through recall")
        scope = self._scope(op.namespace)
        is_id = bool(MEMORY_ID.fullmatch(op.key))
        if op.value is None:
            return self._delete(op, scope, None if is_id else self._fact(op.key, scope), self._retracted_by(conn))
        if is_id:
            raise InvalidKeyError(f"key {op.key!r} is a memory id: a put writes a fact under 'predicate' or "
                                  "'entity/predicate' (a delete of a memory id retracts that memory)")
        if not isinstance(op.value, Mapping):
            raise TypeError(f"a value is a mapping (or None to delete), not {type(op.value).__name__}")
        value = json.loads(json.dumps(dict(op.value)))
        return self._put(op, scope, self._fact(op.key, scope), value)

    def _put(self, op: PutOp, scope: _Scope, fact: tuple[str, str], value: dict[str, Any]) -> _Plan:
        ns, (entity, predicate) = tuple(op.namespace), fact
        current = yield from self._current(scope, op.key, fact)
        previous = current[0].memory_id if current else None
        if current and current[0].value == value:
            return PutOutcome(ns, op.key, "unchanged", memory_id=previous, previous_memory_id=previous)
        c = yield _call("capture_memory", self._text_of(entity, predicate, value), self.source, self.classification,
                        user_id=scope.user, intent_id=scope.intent, entity=entity, predicate=predicate, value=value,
                        evidence_refs=self._refs_of(value), write_class=self.write_class, actor=self.actor,
                        supersedes=previous)
        yield _call("review_candidate", c.id)
        status = yield _call("review_status", c.id)
        if status.stage == "promotable":
            m = yield _call("promote", c.id, self.approver)
            return PutOutcome(ns, op.key, "promoted", c.id, m.id, previous, status)
        return PutOutcome(ns, op.key, str(status.outcome), c.id, None, previous, status)

    def _delete(self, op: PutOp, scope: _Scope, fact: Optional[tuple[str, str]], retracted_by: str) -> _Plan:
        ns = tuple(op.namespace)
        current = yield from self._current(scope, op.key, fact)
        if not current:
            return PutOutcome(ns, op.key, "absent")
        for m in current:
            yield _call("retract", m.memory_id, f"deleted through the LangGraph store (key {op.key!r})", retracted_by)
        return PutOutcome(ns, op.key, "retracted", memory_id=current[0].memory_id,
                          previous_memory_id=current[0].memory_id)

    def _plan(self, op: Op, conn: Any) -> tuple[bool, _Plan]:
        """(runs in one transaction, the plan) for an op."""
        if isinstance(op, GetOp):
            return False, self._plan_get(op)
        if isinstance(op, SearchOp):
            return False, self._plan_search(op)
        if isinstance(op, ListNamespacesOp):
            return False, self._plan_list(op)
        if isinstance(op, PutOp):
            return True, self._plan_put(op, conn)
        raise TypeError(f"unknown op {type(op).__name__}")

    def _done(self, result: Any) -> Any:
        if isinstance(result, PutOutcome):
            self.outcomes.append(result)
        return result

    def _finish(self, op: Op, result: Any) -> Result:
        if isinstance(op, PutOp):
            if self.strict and not result.applied:
                raise PutNotApplied(result)
            return None
        return result

    # ----- the sync path ---------------------------------------------------------------------

    def _run(self, op: Op) -> Any:
        client = self.client
        assert client is not None
        tx, plan = self._plan(op, client.conn)
        with (client.transaction() if tx else contextlib.nullcontext()):
            try:
                call = next(plan)
                while True:
                    call = plan.send(getattr(client, call.name)(*call.args, **call.kwargs))
            except StopIteration as done:
                return self._done(done.value)

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Runs the ops in order, each put (or delete) in its own transaction; an error stops the
        batch (the ops before it stay done)."""
        ops = list(ops)
        if self.client is None:
            return self._batch_on_loop(ops)
        out: list[Result] = []
        with self._lock:
            for op in ops:
                out.append(self._finish(op, self._run(op)))
        return out

    def _batch_on_loop(self, ops: list[Op]) -> list[Result]:
        return self._on_loop(self.abatch(ops))  # type: ignore[no-any-return]

    def _on_loop(self, coro: Any) -> Any:
        loop = self._loop
        running = None
        with contextlib.suppress(RuntimeError):
            running = asyncio.get_running_loop()
        if loop is None or not loop.is_running() or running is loop:
            coro.close()
            raise RuntimeError("this MemoryFabricStore has only an AsyncMemoryFabric: use abatch/aget/aput/asearch, "
                               "call the sync methods from another thread while its event loop runs, or give it a "
                               "MemoryFabric too")
        return asyncio.run_coroutine_threadsafe(coro, loop).result()

    def put_governed(self, namespace: tuple[str, ...], key: str, value: Optional[Mapping[str, Any]]) -> PutOutcome:
        """put() (or, with value None, delete()) returning its PutOutcome; never raises PutNotApplied."""
        op = PutOp(tuple(namespace), str(key), value)
        if self.client is None:
            return self._on_loop(self.aput_governed(namespace, key, value))  # type: ignore[no-any-return]
        with self._lock:
            return self._run(op)  # type: ignore[no-any-return]

    # ----- the async path --------------------------------------------------------------------

    def _async_lock(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        if self._alock is None or self._alock_loop is not loop:
            self._alock, self._alock_loop = asyncio.Lock(), loop
        return self._alock

    async def _arun(self, op: Op) -> Any:
        client = self.aclient
        assert client is not None
        tx, plan = self._plan(op, client.conn)
        async with (client.transaction() if tx else contextlib.nullcontext()):
            try:
                call = next(plan)
                while True:
                    call = plan.send(await getattr(client, call.name)(*call.args, **call.kwargs))
            except StopIteration as done:
                return self._done(done.value)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """batch() on the AsyncMemoryFabric, awaiting each call (the event loop never blocks); with
        only a sync client, batch() in a worker thread."""
        ops = list(ops)
        if self.aclient is None:
            return await asyncio.get_running_loop().run_in_executor(None, self.batch, ops)
        self._loop = asyncio.get_running_loop()
        out: list[Result] = []
        async with self._async_lock():
            for op in ops:
                out.append(self._finish(op, await self._arun(op)))
        return out

    async def aput_governed(self, namespace: tuple[str, ...], key: str,
                            value: Optional[Mapping[str, Any]]) -> PutOutcome:
        """aput() (or, with value None, adelete()) returning its PutOutcome; never raises PutNotApplied."""
        op = PutOp(tuple(namespace), str(key), value)
        if self.aclient is None:
            return await asyncio.get_running_loop().run_in_executor(None, self.put_governed, namespace, key, value)
        self._loop = asyncio.get_running_loop()
        async with self._async_lock():
            return await self._arun(op)  # type: ignore[no-any-return]
