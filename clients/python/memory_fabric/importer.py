"""Import memories into memory_fabric: a mem0 export, or JSON Lines of plain facts.

    python -m memory_fabric.importer --tenant acme export.json
    python -m memory_fabric.importer --tenant acme --intent support.billing facts.jsonl --json

Every record is captured (source ``agent``, as the connection's own role) with its provenance,
in batches of one committed transaction each; then the bulk path, ``CALL
memory_fabric.promote_pending(tenant, batch_size)``, reviews and promotes what needs no human.
The report counts what review made of each captured record (``review_status``). Re-running the
same file is safe: what was promoted before is a duplicate now, never promoted twice.
clients/python/README.md, "Importing memories", has the options, formats and exit codes.
"""

from __future__ import annotations

import argparse
import codecs
import json
import math
import os
import re
import secrets
import sys
from collections import Counter
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from typing import Any, Optional, TextIO

import psycopg
from psycopg.conninfo import conninfo_to_dict

from .client import MemoryFabric
from .errors import MemoryFabricError, from_psycopg

EXIT_OK = 0           # imported (records skipped or not promoted are in the report)
EXIT_DATABASE = 1     # a connection, permission or server error stopped the import
EXIT_USAGE = 2        # bad options, or a password in --dsn
EXIT_INPUT = 3        # the file cannot be read, or is neither a mem0 export nor JSON Lines
EXIT_INTERRUPTED = 130

PROG = "python -m memory_fabric.importer"
MAX_BATCH = 100000    # promote_pending's own bound
MAX_LISTED = 1000     # records listed by --json under "skipped_records" and "not_promoted"

# what the extension refuses in one record (22: a data exception such as 22023; 54: over a
# limit): the record is skipped; any other error stops the import
RECORD_CLASSES = ("22", "54")

# review_status() stages and the report's names for them
STAGES = {"promoted": "promoted", "duplicate": "duplicates", "contradiction_blocked": "contradictions_blocked",
          "waiting_for_human": "queued_for_human", "rejected": "rejected", "unreviewed": "unreviewed"}

# promote_pending's NOTICE: 'N of M open candidates of tenant "t" done (P%): R reviewed, K promoted'
BULK_NOTICE = re.compile(r'^(\d+) of (\d+) open candidates of tenant ".*" done \((\d+)%\): (\d+) reviewed, (\d+) promoted$',
                         re.S)
BULK_NOTHING = re.compile(r'^no candidate of tenant ".*" is waiting for review or promotion$', re.S)

# a mem0 memory's fields kept as columns or metadata, not repeated under metadata.imported
MEM0_OWN = ("memory", "metadata", "user_id", "score")
JSONL_FIELDS = ("text", "user_id", "intent_id", "entity", "predicate", "value", "classification", "evidence_refs",
                "metadata")

# the deepest nesting of objects and arrays a record may have (the record itself is level 1);
# deeper ones are skipped (too_deep), never sent to PostgreSQL or through Python's recursion
MAX_DEPTH = 100


class InputError(Exception):
    """The file as a whole cannot be imported (exit 3)."""


@dataclass
class Record:
    """One record to capture: where it came from and capture_memory's arguments."""

    ref: str                   # mem0:<id> or import:<file>#<line>
    text: str
    classification: str
    kw: dict[str, Any]
    # when the source last stated it (mem0's updated_at, else created_at), in UTC; None: undated
    stated_at: Optional[datetime] = None


@dataclass
class Skip:
    ref: str
    reason: str                # a local reason (missing_text, invalid_json, expired, ...) or a SQLSTATE
    message: str

    def as_dict(self) -> dict[str, str]:
        return {"ref": self.ref, "reason": self.reason, "message": self.message}


@dataclass
class Parsed:
    format: str
    read: int = 0
    records: list[Record] = field(default_factory=list)
    skips: list[Skip] = field(default_factory=list)


# ---------------------------------------------------------------------------------------------
# reading the file: hostile input (deep nesting, numbers out of range, text PostgreSQL cannot
# store, bytes that are not UTF-8) skips the record it is in, or refuses the file (exit 3) when
# the file as a whole cannot be parsed; it never ends the import with a traceback


class _BadNumber:
    """A number no column can hold: NaN or Infinity (not JSON), a float out of range, an integer
    too long for Python to convert. The record holding it is skipped (bad_number)."""

    def __init__(self, literal: str):
        self.literal = literal if len(literal) <= 24 else f"{literal[:20]}... ({len(literal)} characters)"


def _int(s: str) -> Any:
    try:
        return int(s)
    except ValueError:  # over sys.get_int_max_str_digits() digits
        return _BadNumber(s)


def _float(s: str) -> Any:
    f = float(s)
    return f if math.isfinite(f) else _BadNumber(s)


def _loads(s: str) -> Any:
    return json.loads(s, parse_int=_int, parse_float=_float, parse_constant=_BadNumber)


class _TooDeep:
    """A record nested too deeply for json to parse it at all."""


class _Unplaced(json.JSONDecodeError):
    """Not JSON, found in a document read in pieces: the position json gives is in a piece."""

    def __str__(self) -> str:
        return self.msg


TOO_DEEP = _TooDeep()
# strings and brackets: what splitting a document by nesting needs to see
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')


def load_document(content: str) -> Any:
    """One JSON document, its numbers checked (_BadNumber). A document json cannot parse for its
    nesting (RecursionError) is parsed in pieces: each object or array at the level of a record
    (an item of the top-level list, or of a list in the top-level object, such as "results") on
    its own, so that a record nested too deeply becomes TOO_DEEP and the others are read.
    Raises json.JSONDecodeError when the document is not JSON, InputError when it is nested too
    deeply outside any record."""
    try:
        return _loads(content)
    except RecursionError:
        pass
    lead = len(content) - len(content.lstrip())
    cut = 1 if content[lead:lead + 1] == "[" else 2
    marker = f"\x00memory_fabric.importer:{secrets.token_hex(8)}:"
    pieces: list[str] = []
    holes: list[str] = []
    depth = last = opened = 0
    for m in _TOKEN.finditer(content):
        t = m.group()
        if t == "[" or t == "{":
            if depth == cut:
                opened = m.start()
            depth += 1
        elif t == "]" or t == "}":
            depth -= 1
            if depth == cut:
                pieces += [content[last:opened], json.dumps(f"{marker}{len(holes)}")]
                holes.append(content[opened:m.end()])
                last = m.end()
    pieces.append(content[last:])
    try:
        skeleton = _loads("".join(pieces))
    except RecursionError:  # nested too deeply where no record is (or never closed)
        raise InputError("it is nested too deeply to be read")
    except json.JSONDecodeError as e:
        raise _Unplaced(e.msg, content, 0) from e

    def fill(v: Any) -> Any:
        if isinstance(v, str) and v.startswith(marker):
            try:
                return _loads(holes[int(v[len(marker):])])
            except RecursionError:
                return TOO_DEEP
            except json.JSONDecodeError as e:
                raise _Unplaced(e.msg, content, 0) from e
        if isinstance(v, list):
            return [fill(x) for x in v]
        if isinstance(v, dict):
            return {k: fill(x) for k, x in v.items()}
        return v

    return fill(skeleton)  # the skeleton is at most `cut` levels deep


def unfit(record: Any) -> Optional[tuple[str, str]]:
    """(reason, message) when a parsed record holds what no capture can take, else None: nesting
    deeper than MAX_DEPTH, a number no column can hold, or a string PostgreSQL cannot store (a
    NUL character, or an unpaired surrogate such as "\\ud800", which is not Unicode text). Walks
    with a stack of its own, not Python's."""
    def text_fault(s: str) -> Optional[tuple[str, str]]:
        if "\x00" in s:
            return "invalid_text", "a string holds a NUL character (\\u0000), which PostgreSQL cannot store"
        try:
            s.encode("utf-8")
        except UnicodeEncodeError:
            return "invalid_text", "a string holds an unpaired surrogate (such as \\ud800), which is not Unicode text"
        return None

    stack: list[tuple[Any, int]] = [(record, 1)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, (dict, list)):
            if depth > MAX_DEPTH:
                return "too_deep", f"nested more than {MAX_DEPTH} levels deep"
            if isinstance(v, dict):
                for k, x in v.items():
                    fault = text_fault(k)
                    if fault:
                        return fault
                    stack.append((x, depth + 1))
            else:
                stack.extend((x, depth + 1) for x in v)
        elif isinstance(v, str):
            fault = text_fault(v)
            if fault:
                return fault
        elif v is TOO_DEEP:
            return "too_deep", f"nested more than {MAX_DEPTH} levels deep"
        elif isinstance(v, _BadNumber):
            return "bad_number", f"the number {v.literal} is out of range, or not JSON"
    return None


def _drop_none(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


def _metadata(original: Optional[dict[str, Any]], imported: dict[str, Any]) -> dict[str, Any]:
    """The record's own metadata, with the provenance under "imported" (an "imported" key of the
    record's own moves inside it, as "metadata_imported")."""
    md = dict(original or {})
    if "imported" in md:
        imported["metadata_imported"] = md.pop("imported")
    md["imported"] = imported
    return md


def _expired(expiration_date: Any, today: date) -> bool:
    """mem0's own rule (memory/main.py, _payload_is_expired): expired when the date is before today (UTC)."""
    if not expiration_date:
        return False
    try:
        return date.fromisoformat(str(expiration_date)[:10]) < today
    except ValueError:
        return False


def parse_mem0(doc: Any, file_name: str, args: argparse.Namespace) -> Parsed:
    """A mem0 export (load_document's result): the list get_all() returned (mem0 before v1.1), or
    an object with "results" (get_all() of Memory and MemoryClient; the platform's envelope also
    has count, next, previous)."""
    if isinstance(doc, dict) and isinstance(doc.get("results"), list):
        items = doc["results"]
    elif isinstance(doc, list):
        items = doc
    else:
        raise InputError(f"{file_name} is not a mem0 export: expected a list of memories or an object "
                         "with a \"results\" list")
    today = datetime.now(timezone.utc).date()
    out = Parsed("mem0", read=len(items))
    for i, m in enumerate(items, 1):
        ref = f"mem0:#{i}"
        fault = unfit(m)
        if fault:
            mid = m.get("id") if isinstance(m, dict) else None
            if isinstance(mid, (str, int)) and not isinstance(mid, bool) and str(mid).strip() and not unfit(mid):
                ref = f"mem0:{mid}"
            out.skips.append(Skip(ref, fault[0], f"memory {i}: {fault[1]}"))
            continue
        if not isinstance(m, dict):
            out.skips.append(Skip(ref, "not_a_record", f"memory {i} is not a JSON object"))
            continue
        mid = m.get("id")
        if isinstance(mid, (str, int)) and not isinstance(mid, bool) and str(mid).strip():
            ref = f"mem0:{mid}"
        else:
            out.skips.append(Skip(ref, "missing_id", f"memory {i} has no \"id\""))
            continue
        text = m.get("memory")
        if not isinstance(text, str):
            out.skips.append(Skip(ref, "missing_text", "no \"memory\" text"))
            continue
        if not text.strip():
            out.skips.append(Skip(ref, "empty_text", "the \"memory\" text is empty"))
            continue
        user_id = m.get("user_id")
        if user_id is not None and not isinstance(user_id, str):
            out.skips.append(Skip(ref, "bad_user_id", "\"user_id\" is not a string"))
            continue
        metadata = m.get("metadata")
        if metadata is not None and not isinstance(metadata, dict):
            out.skips.append(Skip(ref, "bad_metadata", "\"metadata\" is not an object"))
            continue
        if not args.include_expired and _expired(m.get("expiration_date"), today):
            out.skips.append(Skip(ref, "expired", f"expired on {m.get('expiration_date')} (--include-expired imports it)"))
            continue
        imported = {"from": "mem0", "file": file_name}
        imported.update(_drop_none({k: v for k, v in m.items() if k not in MEM0_OWN}))
        out.records.append(Record(ref, text, args.classification, _drop_none({
            "user_id": user_id, "intent_id": args.intent, "evidence_refs": [ref],
            "metadata": _metadata(metadata, imported), "actor": args.actor}),
            stated_at=_instant(m.get("updated_at")) or _instant(m.get("created_at"))))
    out.records = in_time_order(out.records)
    return out


def _instant(v: Any) -> Optional[datetime]:
    """An ISO 8601 date or timestamp as an aware UTC datetime (a naive one is taken as UTC); None
    for anything else."""
    if not isinstance(v, str) or not v.strip():
        return None
    try:
        t = datetime.fromisoformat(v.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    if t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    return t.astimezone(timezone.utc)


def in_time_order(records: list[Record]) -> list[Record]:
    """The records in the order their source stated them, so that a later correction is captured
    (and reviewed) after what it corrects, whatever the file's order: undated records first, in
    file order, then the dated ones by date (ties in file order)."""
    oldest = datetime.min.replace(tzinfo=timezone.utc)
    return sorted(records, key=lambda r: (r.stated_at is not None, r.stated_at or oldest))


def parse_jsonl(data: bytes, file_name: str, args: argparse.Namespace) -> Parsed:
    """JSON Lines: each line a string (the fact) or an object with "text" and optional user_id,
    intent_id, entity, predicate, value, classification, evidence_refs, metadata. Lines end at
    "\\n" (a "\\r" before it is dropped); blank lines are not records. A line that is not UTF-8
    or not JSON is skipped, as is one nested too deeply or holding what PostgreSQL cannot store."""
    out = Parsed("jsonl")
    for n, raw in enumerate(data.split(b"\n"), 1):
        if not raw.strip():
            continue
        out.read += 1
        ref = f"import:{file_name}#{n}"
        try:
            line = raw.removesuffix(b"\r").decode("utf-8")
        except UnicodeDecodeError as e:
            out.skips.append(Skip(ref, "invalid_utf8", f"line {n} is not UTF-8 (byte {e.start + 1}: {e.reason})"))
            continue
        try:
            obj = _loads(line)
        except json.JSONDecodeError as e:
            out.skips.append(Skip(ref, "invalid_json", f"line {n} is not JSON: {e.msg}"))
            continue
        except RecursionError:
            out.skips.append(Skip(ref, "too_deep", f"line {n} is nested more than {MAX_DEPTH} levels deep"))
            continue
        fault = unfit(obj)
        if fault:
            out.skips.append(Skip(ref, fault[0], f"line {n}: {fault[1]}"))
            continue
        if isinstance(obj, str):
            obj = {"text": obj}
        if not isinstance(obj, dict):
            out.skips.append(Skip(ref, "not_a_record", f"line {n} is neither a string nor an object"))
            continue
        text = obj.get("text")
        if not isinstance(text, str):
            out.skips.append(Skip(ref, "missing_text", f"line {n} has no \"text\" string"))
            continue
        if not text.strip():
            out.skips.append(Skip(ref, "empty_text", f"line {n} has an empty \"text\""))
            continue
        bad = next((k for k in ("user_id", "intent_id", "entity", "predicate", "classification")
                    if obj.get(k) is not None and not isinstance(obj[k], str)), None)
        if bad:
            out.skips.append(Skip(ref, f"bad_{bad}", f"line {n}: \"{bad}\" is not a string"))
            continue
        refs = obj.get("evidence_refs")
        if refs is not None and not (isinstance(refs, list) and all(isinstance(r, str) for r in refs)):
            out.skips.append(Skip(ref, "bad_evidence_refs", f"line {n}: \"evidence_refs\" is not a list of strings"))
            continue
        metadata = obj.get("metadata")
        if metadata is not None and not isinstance(metadata, dict):
            out.skips.append(Skip(ref, "bad_metadata", f"line {n}: \"metadata\" is not an object"))
            continue
        imported: dict[str, Any] = {"from": "jsonl", "file": file_name, "line": n}
        others = {k: v for k, v in obj.items() if k not in JSONL_FIELDS}
        if others:
            imported["fields"] = others
        classification = obj["classification"] if obj.get("classification") is not None else args.classification
        intent_id = obj["intent_id"] if obj.get("intent_id") is not None else args.intent
        out.records.append(Record(ref, text, classification, _drop_none({
            "user_id": obj.get("user_id"), "intent_id": intent_id,
            "evidence_refs": [ref] + [r for r in (refs or []) if r != ref], "entity": obj.get("entity"),
            "predicate": obj.get("predicate"), "value": obj.get("value"),
            "metadata": _metadata(metadata, imported), "actor": args.actor})))
    return out


def format_by_name(path: str) -> Optional[str]:
    """By the extension: .json is mem0; .jsonl and .ndjson JSON Lines; else None (by content)."""
    lower = path.lower()
    if lower.endswith((".jsonl", ".ndjson")):
        return "jsonl"
    if lower.endswith(".json"):
        return "mem0"
    return None


def read_input(args: argparse.Namespace) -> Parsed:
    try:
        with open(args.file, "rb") as f:
            data = f.read()
    except OSError as e:
        raise InputError(f"cannot read {args.file}: {e}") from e
    data = data.removeprefix(codecs.BOM_UTF8)
    name = os.path.basename(args.file)
    fmt = args.format or format_by_name(args.file)
    if fmt == "jsonl":
        return parse_jsonl(data, name, args)
    # mem0, or by content: one JSON document shaped as mem0's, else JSON Lines
    try:
        content = data.decode("utf-8")
    except UnicodeDecodeError as e:
        if fmt is None:
            return parse_jsonl(data, name, args)
        raise InputError(f"cannot read {args.file}: it is not UTF-8 (byte {e.start + 1}: {e.reason})") from e
    try:
        doc = load_document(content)
    except json.JSONDecodeError as e:
        if fmt is None:
            return parse_jsonl(data, name, args)
        raise InputError(f"{name} is not JSON ({e}); for JSON Lines pass --format jsonl") from e
    except InputError as e:
        raise InputError(f"{name}: {e}") from e
    if fmt is None and not (isinstance(doc, list) or (isinstance(doc, dict) and "results" in doc)):
        return parse_jsonl(data, name, args)
    return parse_mem0(doc, name, args)


# ---------------------------------------------------------------------------------------------
# progress on stderr


class Progress:
    """A text bar redrawn in place (\\r) on a terminal; a line per update otherwise."""

    WIDTH = 30

    def __init__(self, stream: TextIO, label: str, quiet: bool = False):
        self.stream = stream
        self.label = label
        self.quiet = quiet
        self.tty = hasattr(stream, "isatty") and stream.isatty()
        self.drawn = False

    def update(self, done: int, total: int, note: str = "") -> None:
        if self.quiet:
            return
        pct = done * 100 // total if total else 100
        fill = self.WIDTH * done // total if total else self.WIDTH
        line = f"{self.label:<8} [{'#' * fill}{'.' * (self.WIDTH - fill)}] {done}/{total} {pct:3d}%"
        if note:
            line += f"  {note}"
        if self.tty:
            self.stream.write("\r\x1b[K" + line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
        self.drawn = True

    def message(self, text: str) -> None:
        if self.quiet:
            return
        self.finish()
        self.stream.write(f"{self.label:<8} {text}\n")
        self.stream.flush()

    def finish(self) -> None:
        if self.tty and self.drawn:
            self.stream.write("\n")
            self.stream.flush()
        self.drawn = False


# ---------------------------------------------------------------------------------------------
# the import


@dataclass
class Report:
    file: str
    format: str
    tenant: str
    dry_run: bool
    read: int = 0
    captured: int = 0
    skips: list[Skip] = field(default_factory=list)
    stages: Counter = field(default_factory=Counter)
    not_promoted: list[dict[str, Any]] = field(default_factory=list)
    bulk: dict[str, int] = field(default_factory=dict)
    valid: int = 0

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"file": self.file, "format": self.format, "tenant": self.tenant, "dry_run": self.dry_run,
                             "read": self.read}
        if self.dry_run:
            d["valid"] = self.valid
        d["captured"] = self.captured
        d["skipped"] = len(self.skips)
        d["skip_reasons"] = dict(sorted(Counter(s.reason for s in self.skips).items()))
        for stage, name in STAGES.items():
            d[name] = self.stages.get(stage, 0)
        d["other_stages"] = {k: v for k, v in sorted(self.stages.items()) if k not in STAGES}
        d["bulk"] = self.bulk
        d["skipped_records"] = [s.as_dict() for s in self.skips[:MAX_LISTED]]
        d["not_promoted"] = self.not_promoted[:MAX_LISTED]
        return d

    def text(self) -> str:
        d = self.as_dict()
        mode = " (dry run: nothing written)" if self.dry_run else ""
        lines = [f"import of {self.file} ({self.format}) into tenant \"{self.tenant}\"{mode}"]

        def row(label: str, n: int, extra: str = "") -> None:
            lines.append(f"  {label:<24}{n:>8}{extra}")

        row("records read", d["read"])
        if self.dry_run:
            row("valid, would capture", d["valid"])
        else:
            row("captured", d["captured"])
        reasons = ", ".join(f"{k} {v}" for k, v in d["skip_reasons"].items())
        row("skipped", d["skipped"], f"   ({reasons})" if reasons else "")
        if not self.dry_run:
            row("promoted", d["promoted"])
            row("merged as duplicates", d["duplicates"])
            row("contradictions blocked", d["contradictions_blocked"])
            row("queued for a human", d["queued_for_human"])
            row("rejected", d["rejected"])
            if d["unreviewed"]:
                row("unreviewed", d["unreviewed"], "   (CALL memory_fabric.promote_pending again)")
            for k, v in d["other_stages"].items():
                row(k.replace("_", " "), v)
            if self.bulk:
                lines.append(f"  bulk path: {self.bulk.get('reviewed', 0)} reviewed, {self.bulk.get('promoted', 0)} "
                             f"promoted of {self.bulk.get('open', 0)} open candidates of the tenant")
        for s in self.skips[:20]:
            lines.append(f"  skipped {s.ref}: {s.reason}: {s.message}")
        if len(self.skips) > 20:
            lines.append(f"  ... and {len(self.skips) - 20} more skipped (--json lists them)")
        return "\n".join(lines)


def _refused_in_record(e: MemoryFabricError) -> bool:
    return bool(e.sqlstate) and e.sqlstate.startswith(RECORD_CLASSES)  # type: ignore[union-attr]


def _one_line(e: MemoryFabricError) -> str:
    text = e.message if not e.detail else f"{e.message.rstrip('.')}. {e.detail}"
    return text.replace("\n", " ")


class Importer:
    def __init__(self, mf: MemoryFabric, args: argparse.Namespace, report: Report, err: TextIO):
        self.mf = mf
        self.args = args
        self.report = report
        self.err = err
        self.quiet = args.quiet

    def capture(self, records: list[Record]) -> list[tuple[Record, str]]:
        """Captures every record, a batch per transaction; a record the extension refuses is
        skipped (its savepoint rolled back), any other error propagates."""
        progress = Progress(self.err, "capture", self.quiet)
        captured: list[tuple[Record, str]] = []
        total = len(records)
        progress.update(0, total)
        try:
            for start in range(0, total, self.args.batch_size):
                batch = records[start:start + self.args.batch_size]
                got: list[tuple[Record, str]] = []
                skipped: list[Skip] = []
                with self.mf.transaction():
                    for r in batch:
                        try:
                            with self.mf.conn.transaction():  # a savepoint: a refusal leaves the batch intact
                                c = self.mf.capture_memory(r.text, "agent", r.classification, **r.kw)
                            got.append((r, c.id))
                        except MemoryFabricError as e:
                            if not _refused_in_record(e):
                                raise
                            skipped.append(Skip(r.ref, e.sqlstate or "error", _one_line(e)))
                # committed
                captured.extend(got)
                self.report.captured = len(captured)
                self.report.skips.extend(skipped)
                progress.update(start + len(batch), total)
        finally:
            progress.finish()
        return captured

    def promote(self) -> None:
        """CALL promote_pending(), its NOTICEs driving the bar."""
        progress = Progress(self.err, "promote", self.quiet)

        def on_notice(diag: Any) -> None:
            msg = diag.message_primary or ""
            m = BULK_NOTICE.match(msg)
            if m:
                done, total, _pct, reviewed, promoted = (int(x) for x in m.groups())
                self.report.bulk = {"open": total, "reviewed": reviewed, "promoted": promoted}
                progress.update(done, total, f"{reviewed} reviewed, {promoted} promoted")
            elif BULK_NOTHING.match(msg):
                self.report.bulk = {"open": 0, "reviewed": 0, "promoted": 0}
                progress.message("no open candidate to review")
            elif not self.quiet:
                progress.finish()
                self.err.write(f"{diag.severity or 'NOTICE'}: {msg}\n")

        self.mf.conn.add_notice_handler(on_notice)
        try:
            self.mf.promote_pending(batch_size=self.args.batch_size)
        finally:
            self.mf.conn.remove_notice_handler(on_notice)
            progress.finish()

    def outcomes(self, captured: list[tuple[Record, str]]) -> None:
        """What review made of each captured record, by review_status()."""
        for start in range(0, len(captured), self.args.batch_size):
            with self.mf.transaction():
                for r, cid in captured[start:start + self.args.batch_size]:
                    s = self.mf.review_status(cid)
                    self.report.stages[s.outcome] += 1
                    if s.stage != "promoted":
                        self.report.not_promoted.append(_drop_none({
                            "ref": r.ref, "candidate_id": cid, "stage": s.outcome, "reason": s.reason,
                            "duplicate_of": s.duplicate_of, "contradicts": s.contradicts}))

    def run(self, records: list[Record]) -> None:
        captured = self.capture(records)
        if captured:
            self.promote()
            self.outcomes(captured)


# ---------------------------------------------------------------------------------------------
# the command


def _batch_size(v: str) -> int:
    try:
        n = int(v)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {v!r}")
    if not 1 <= n <= MAX_BATCH:
        raise argparse.ArgumentTypeError(f"must be between 1 and {MAX_BATCH}")
    return n


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Import memories into memory_fabric: a mem0 export (get_all() JSON) or JSON Lines of facts. "
                    "Captures every record with its provenance, then runs the bulk path "
                    "(CALL memory_fabric.promote_pending) and reports what review made of each.",
        epilog="Exit codes: 0 imported (see the report for skipped records); 1 a connection, permission or "
               "server error stopped it (committed batches are kept: re-run the same file to resume); "
               "2 bad options or a password in --dsn; 3 the file cannot be read or parsed; 130 interrupted.")
    p.add_argument("file", help="the mem0 export (.json) or JSON Lines file (.jsonl)")
    p.add_argument("--format", choices=("mem0", "jsonl"), help="the input's format (default: by extension, else content)")
    p.add_argument("--tenant", required=True, help="the tenant to import into (the role needs its grant)")
    p.add_argument("--dsn", default="", help="libpq connection string without a password (default: the PG* "
                   "variables); the password comes from PGPASSWORD or a password file (PGPASSFILE, ~/.pgpass)")
    p.add_argument("--classification", default="INTERNAL", help="classification of records that give none "
                   "(default INTERNAL)")
    p.add_argument("--intent", help="intent_id of records that give none (default: none, cross-intent)")
    p.add_argument("--actor", help="the actor recorded on each capture (default import:<file name>)")
    p.add_argument("--batch-size", type=_batch_size, default=200,
                   help="records per committed capture transaction, and promote_pending's batch_size (default 200)")
    p.add_argument("--include-expired", action="store_true",
                   help="import mem0 memories whose expiration_date has passed (skipped by default, as mem0 hides them)")
    p.add_argument("--dry-run", action="store_true", help="parse and validate, print the counts; connect to nothing, write nothing")
    p.add_argument("--json", action="store_true", help="print the report as a JSON object")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    return p


def check_dsn(dsn: str) -> Optional[str]:
    """Why the DSN is refused, or None."""
    try:
        parts = conninfo_to_dict(dsn)
    except psycopg.Error as e:
        return f"--dsn is not a valid connection string: {e}"
    if parts.get("password"):
        return ("--dsn must not carry a password (it would show in the process list and the shell's history): "
                "set PGPASSWORD, or put it in a password file (PGPASSFILE, default ~/.pgpass)")
    return None


def _stopped(e: MemoryFabricError, report: Report, err: TextIO) -> int:
    err.write(f"{PROG}: stopped by {e.sqlstate or 'an error'}: {_one_line(e)}\n")
    if e.hint:
        err.write(f"  hint: {e.hint}\n")
    if report.captured:
        err.write(f"  {report.captured} records were captured in committed batches; re-run the same file to "
                  "resume (what was promoted is then a duplicate, never promoted twice)\n")
    return EXIT_DATABASE


def main(argv: Optional[list[str]] = None, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    args = parser().parse_args(argv)
    why = check_dsn(args.dsn)
    if why:
        err.write(f"{PROG}: {why}\n")
        return EXIT_USAGE
    if not args.actor:
        args.actor = f"import:{os.path.basename(args.file)}"
    try:
        parsed = read_input(args)
    except InputError as e:
        err.write(f"{PROG}: {e}\n")
        return EXIT_INPUT
    report = Report(os.path.basename(args.file), parsed.format, args.tenant, args.dry_run, read=parsed.read,
                    skips=list(parsed.skips), valid=len(parsed.records))

    def emit() -> None:
        out.write((json.dumps(report.as_dict(), indent=2, default=str) if args.json else report.text()) + "\n")
        out.flush()

    if args.dry_run:
        emit()
        return EXIT_OK
    mf: Optional[MemoryFabric] = None
    try:
        kwargs = {} if "application_name" in conninfo_to_dict(args.dsn) or os.environ.get("PGAPPNAME") \
            else {"application_name": "memory_fabric.importer"}
        mf = MemoryFabric.connect(args.dsn, tenant_id=args.tenant, **kwargs)
        Importer(mf, args, report, err).run(parsed.records)
    except psycopg.Error as e:
        if mf is None:
            err.write(f"{PROG}: could not connect: {str(e).strip()}\n")
            return EXIT_DATABASE
        return _stopped(from_psycopg(e), report, err)
    except MemoryFabricError as e:
        return _stopped(e, report, err)
    except KeyboardInterrupt:
        err.write(f"{PROG}: interrupted after {report.captured} captured records in committed batches; "
                  "re-run the same file to resume\n")
        return EXIT_INTERRUPTED
    finally:
        if mf is not None:
            try:
                mf.conn.close()
            except Exception:  # pragma: no cover - closing a broken connection
                pass
    emit()
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
