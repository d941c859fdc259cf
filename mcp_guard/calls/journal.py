"""The durable journal: one JSON line per call event, append-only, intents on disk before forwarding.

Records (JSONL, UTF-8, one object per line, fields in this order)::

    {"event": "intent", "call_id": "...", "time": "2026-11-20T10:00:00.123Z", "server": "fs",
     "tool": "read", "arguments_sha256": "<64 hex>", "arguments_bytes": 42}
    {"event": "outcome", "call_id": "...", "time": "...", "server": "fs", "tool": "read",
     "result": "ok"}
    {"event": "outcome", "call_id": "...", "time": "...", "server": "fs", "tool": "write",
     "result": "rejected", "kind": "policy_denied"}

- ``server`` is the server's name in the config, ``tool`` the upstream's own tool name.
- ``arguments_sha256``: HMAC-SHA256 (lower-case hex) of the arguments' RFC 8785 canonical JSON
  (an absent ``arguments`` is ``{}``) under the journal's key (:mod:`.journal_key`: the file
  ``<journal>.key``, mode 0600, or ``MCP_GUARD_JOURNAL_KEY``), so equal arguments have equal
  digests within a journal but short values cannot be recovered by trying candidates;
  ``arguments_bytes``: the size the guard's limit measures (bytes of the arguments' compact
  UTF-8 JSON, :func:`.policy.argument_bytes`).
  Argument values never appear.
- ``result``: ``ok``, ``is_error`` (a result with ``isError: true``), ``protocol_error`` (a
  JSON-RPC error from the upstream), ``upstream_died`` (no answer: the upstream exited),
  ``timed_out`` (no answer within ``--request-timeout``: the guard answered an error and
  cancelled it upstream), ``cancelled`` (the client cancelled the request, or closed the
  connection, before it was answered), ``stopped`` (the guard itself was stopped by a signal
  before it was answered, and stopped the upstream with it), or ``rejected`` (the guard refused
  the call; ``kind`` says why, and there is no intent). After ``upstream_died``, ``timed_out``,
  ``cancelled`` and ``stopped`` whether the server carried the call out is unknown.
- ``time``: RFC 3339, UTC, milliseconds, ``Z``.
- ``principal`` (issue 27): who sent the call, as the HTTP front's verified access token says:
  ``{"subject": sub, "issuer": iss, "client_id": client_id or azp, or null}``, in the intent and
  the outcome alike; absent when the call had no principal (stdio, a shared bearer token).

Durability: an intent is written with one ``write(2)`` on a file opened ``O_APPEND`` and
``fsync``'ed before the call may be forwarded; an outcome is written the same way and
``fsync``'ed too, so after a crash every call in flight shows as an intent without an
outcome, and no finished call does. A crash in the middle of a write can leave a torn last
line: the journal, reopened, first ends it with a newline, and :func:`read_records` counts
such lines as damaged and skips them.
"""

from __future__ import annotations

import json
import os
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal, get_args

if TYPE_CHECKING:  # (datetime and pathlib: imported where used, off wrap's start, issue 14)
    from datetime import datetime
    from pathlib import Path

    from ..auth.principal import Principal

__all__ = [
    "RESULTS",
    "Journal",
    "JournalSummary",
    "PrincipalSummary",
    "Result",
    "ToolSummary",
    "format_summary",
    "journal_path_problem",
    "principal_record",
    "read_records",
    "rfc3339",
    "summarize",
]

Result = Literal[
    "ok",
    "is_error",
    "output_invalid",
    "protocol_error",
    "upstream_died",
    "timed_out",
    "cancelled",
    "stopped",
    "rejected",
]
RESULTS: Final[tuple[Result, ...]] = get_args(Result)
ERROR_RESULTS: Final = frozenset(
    {"is_error", "output_invalid", "protocol_error", "upstream_died", "timed_out", "stopped"}
)


def rfc3339(moment: datetime) -> str:
    """``moment`` as RFC 3339 in UTC with milliseconds: ``2026-11-20T10:00:00.123Z``."""
    from datetime import UTC

    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _now() -> datetime:
    from datetime import UTC, datetime

    return datetime.now(UTC)


def principal_record(principal: Principal) -> dict[str, str | None]:
    """The ``principal`` field of a record: ``{"subject", "issuer", "client_id"}`` (``client_id`` null when the
    token has none). Scopes and groups are not journaled: the rules they matched are the config's."""
    return {"subject": principal.subject, "issuer": principal.issuer, "client_id": principal.client_id}


def journal_path_problem(path: Path) -> str | None:
    """Why :class:`Journal` could not open ``path``, or ``None`` when it looks as if it could (``check --config``).

    Looked at without creating anything: the folder must exist, be a folder, and be writable
    and searchable; a file already there must be a regular file, readable and writable (its
    torn tail is mended on opening). The answer names the path and the cause, e.g.
    ``the folder /x does not exist``; a race with another process is not excluded.
    """
    folder = path.parent
    if not folder.exists():
        return f"the folder {folder} does not exist (the journal's folder is not created)"
    if not folder.is_dir():
        return f"{folder} is not a folder"
    if path.exists() or path.is_symlink():
        if not path.is_file():
            return f"{path} is not a regular file"
        if not os.access(path, os.R_OK | os.W_OK):
            return f"{path} cannot be read and written by this user"
        return None
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"the folder {folder} is not writable by this user"
    return None


class Journal:
    """An open journal file.

    Args:
        path: the JSONL file (created if absent, mode 0600; its folder must exist).
        clock: the time source (tests inject a fixed one).
        fsync: ``False`` skips ``fsync`` (tests on slow disks only; never in use).
        key: the argument digest key (None: :func:`.journal_key.load_key`, the env or ``<path>.key``).

    Raises:
        OSError: the file (or its key file) cannot be opened; ValueError: the key file is damaged.

    Thread-safe: records are written under a lock (the relay writes from worker threads).
    """

    def __init__(
        self, path: Path, *, clock: Callable[[], datetime] = _now, fsync: bool = True, key: bytes | None = None
    ) -> None:
        from .journal_key import load_key

        self.path = path
        self.key: bytes = key if key is not None else load_key(path)[0]
        self._clock = clock
        self._fsync = fsync
        self._lock = threading.Lock()
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
        try:
            self._repair_tail()
        except BaseException:
            os.close(self._fd)
            raise

    def _repair_tail(self) -> None:
        """End a torn last line (a crash mid-write) so the next record starts on its own line."""
        size = os.fstat(self._fd).st_size
        if size == 0:
            return
        with open(self.path, "rb") as f:
            f.seek(size - 1)
            if f.read(1) != b"\n":
                os.write(self._fd, b"\n")
                self._sync()

    def _sync(self) -> None:
        if self._fsync:
            os.fsync(self._fd)

    def _write(self, record: dict[str, Any]) -> None:
        line = (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8", "surrogatepass")
        with self._lock:
            if self._fd < 0:
                raise OSError("the journal is closed")
            view = memoryview(line)
            while view:
                written = os.write(self._fd, view)
                view = view[written:]
            self._sync()

    def intent(
        self,
        call_id: str,
        server: str,
        tool: str,
        arguments_sha256: str,
        arguments_bytes: int,
        principal: Principal | None = None,
    ) -> None:
        """Record that a call is about to be forwarded; returns once it is on disk.

        ``principal``: who sent it (:func:`principal_record`); None writes no ``principal`` field.

        Raises:
            OSError: the record could not be written (the call must then not be forwarded).
        """
        record: dict[str, Any] = {
            "event": "intent",
            "call_id": call_id,
            "time": rfc3339(self._clock()),
            "server": server,
            "tool": tool,
            "arguments_sha256": arguments_sha256,
            "arguments_bytes": arguments_bytes,
        }
        if principal is not None:
            record["principal"] = principal_record(principal)
        self._write(record)

    def outcome(
        self,
        call_id: str,
        server: str,
        tool: str,
        result: Result,
        kind: str | None = None,
        principal: Principal | None = None,
    ) -> None:
        """Record how a call ended (``kind`` only, and always, for ``rejected``; ``principal`` as for :meth:`intent`).

        Raises:
            ValueError: ``result`` is not one of :data:`RESULTS`, or ``kind`` is given for
                another result or missing for ``rejected``.
            OSError: the record could not be written.
        """
        if result not in RESULTS:
            raise ValueError(f"unknown journal result {result!r}")
        if (result == "rejected") != (kind is not None):
            raise ValueError("a rejected outcome has a kind, other outcomes none")
        record: dict[str, Any] = {
            "event": "outcome",
            "call_id": call_id,
            "time": rfc3339(self._clock()),
            "server": server,
            "tool": tool,
            "result": result,
        }
        if kind is not None:
            record["kind"] = kind
        if principal is not None:
            record["principal"] = principal_record(principal)
        self._write(record)

    def close(self) -> None:
        """Close the file (idempotent)."""
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# --- reading --------------------------------------------------------------------------------


def read_records(path: Path) -> tuple[list[dict[str, Any]], int]:
    """Every record of a journal file, and the number of damaged lines skipped.

    A damaged line is one that is not a JSON object with ``event``, ``call_id``, ``server``
    and ``tool`` strings (a torn line after a crash, or foreign text). Blank lines are
    ignored.

    Raises:
        OSError: the file cannot be read.
    """
    records: list[dict[str, Any]] = []
    damaged = 0
    with open(path, "rb") as f:
        for raw in f:
            if not raw.strip():
                continue
            try:
                record = json.loads(raw)
            except (ValueError, RecursionError):
                damaged += 1
                continue
            if type(record) is not dict or not all(
                type(record.get(k)) is str for k in ("event", "call_id", "server", "tool")
            ):
                damaged += 1
                continue
            records.append(record)
    return records, damaged


@dataclass
class ToolSummary:
    """What one tool's calls came to.

    Attributes:
        calls: distinct ``call_id`` values (forwarded and rejected calls).
        ok: outcomes ``ok``.
        errors: outcomes ``is_error``, ``output_invalid``, ``protocol_error``, ``upstream_died``, ``timed_out``
            and ``stopped``, by result.
        cancelled: outcomes ``cancelled`` (the client gave up on the call).
        rejections: rejected calls by ``kind``.
        unfinished: ``call_id`` values with an intent and no outcome (in flight, or cut
            off by a crash).
    """

    calls: int = 0
    ok: int = 0
    cancelled: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    rejections: Counter[str] = field(default_factory=Counter)
    unfinished: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The summary as a JSON object."""
        return {
            "calls": self.calls,
            "ok": self.ok,
            "errors": dict(sorted(self.errors.items())),
            "cancelled": self.cancelled,
            "rejections": dict(sorted(self.rejections.items())),
            "unfinished": list(self.unfinished),
        }


PrincipalId = tuple[str, str]
"""``(issuer, subject)``: one caller in the summary (a subject is unique per issuer)."""


@dataclass
class PrincipalSummary:
    """What one caller's calls came to (``tools`` counts each call once, as :class:`ToolSummary` does).

    Attributes:
        calls, ok, cancelled, rejections: as in :class:`ToolSummary`.
        errors: outcomes counted in :class:`ToolSummary`'s ``errors``, all kinds together.
        unfinished: calls with an intent and no outcome.
        client_ids: the client ids its records name.
    """

    calls: int = 0
    ok: int = 0
    errors: int = 0
    cancelled: int = 0
    rejections: Counter[str] = field(default_factory=Counter)
    unfinished: int = 0
    client_ids: set[str] = field(default_factory=set)

    def to_json(self) -> dict[str, Any]:
        """The summary as a JSON object."""
        return {
            "calls": self.calls,
            "ok": self.ok,
            "errors": self.errors,
            "cancelled": self.cancelled,
            "rejections": dict(sorted(self.rejections.items())),
            "unfinished": self.unfinished,
            "client_ids": sorted(self.client_ids),
        }


@dataclass
class JournalSummary:
    """A journal summarized per ``(server, tool)`` and per caller, plus the damaged lines count.

    Attributes:
        tools: per ``(server, tool)``.
        principals: per caller ``(issuer, subject)``; the key ``None`` holds the calls without a
            principal. Empty when no record names a principal.
        damaged: damaged lines skipped.
    """

    tools: dict[tuple[str, str], ToolSummary] = field(default_factory=dict)
    damaged: int = 0
    principals: dict[PrincipalId | None, PrincipalSummary] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """``{"tools": [{"server", "tool", ...ToolSummary}], "principals": [{"issuer", "subject",
        ...PrincipalSummary}], "damaged_lines": n}`` (``issuer`` and ``subject`` null for the calls
        without a principal; ``principals`` empty when no record names one)."""
        return {
            "tools": [{"server": s, "tool": t, **v.to_json()} for (s, t), v in sorted(self.tools.items())],
            "principals": [
                {"issuer": k[0] if k else None, "subject": k[1] if k else None, **v.to_json()}
                for k, v in sorted(self.principals.items(), key=lambda kv: kv[0] or ("", ""))
            ],
            "damaged_lines": self.damaged,
        }


def _principal_of(record: dict[str, Any]) -> tuple[PrincipalId | None, str | None]:
    """``((issuer, subject), client_id)`` of a record's ``principal``, ``(None, None)`` without a readable one."""
    found = record.get("principal")
    if type(found) is not dict:
        return None, None
    issuer, subject, client = found.get("issuer"), found.get("subject"), found.get("client_id")
    if type(issuer) is not str or type(subject) is not str:
        return None, None
    return (issuer, subject), client if type(client) is str else None


def _summarize_principals(records: list[dict[str, Any]]) -> dict[PrincipalId | None, PrincipalSummary]:
    out: dict[PrincipalId | None, PrincipalSummary] = {}
    seen: set[str] = set()
    pending: dict[str, PrincipalId | None] = {}
    named = False
    for record in records:
        who, client = _principal_of(record)
        named = named or who is not None
        summary = out.setdefault(who, PrincipalSummary())
        if client is not None:
            summary.client_ids.add(client)
        call_id = record["call_id"]
        if call_id not in seen:
            seen.add(call_id)
            summary.calls += 1
        if record["event"] == "intent":
            pending[call_id] = who
            continue
        if record["event"] != "outcome":
            continue
        pending.pop(call_id, None)
        result = record.get("result")
        if result == "ok":
            summary.ok += 1
        elif result == "rejected":
            summary.rejections[str(record.get("kind"))] += 1
        elif result == "cancelled":
            summary.cancelled += 1
        elif result in ERROR_RESULTS:
            summary.errors += 1
    for who in pending.values():
        out[who].unfinished += 1
    return out if named else {}


def summarize(records: Iterable[dict[str, Any]], damaged: int = 0) -> JournalSummary:
    """Summarize records (as :func:`read_records` returns them) per tool and per caller."""
    records = list(records)
    out = JournalSummary(damaged=damaged, principals=_summarize_principals(records))
    seen: dict[tuple[str, str], set[str]] = {}
    open_intents: dict[tuple[str, str], dict[str, None]] = {}
    for record in records:
        key = (record["server"], record["tool"])
        summary = out.tools.setdefault(key, ToolSummary())
        ids = seen.setdefault(key, set())
        pending = open_intents.setdefault(key, {})
        call_id = record["call_id"]
        if call_id not in ids:
            ids.add(call_id)
            summary.calls += 1
        if record["event"] == "intent":
            pending[call_id] = None
        elif record["event"] == "outcome":
            pending.pop(call_id, None)
            result = record.get("result")
            if result == "ok":
                summary.ok += 1
            elif result == "rejected":
                summary.rejections[str(record.get("kind"))] += 1
            elif result == "cancelled":
                summary.cancelled += 1
            elif result in ERROR_RESULTS:
                summary.errors[str(result)] += 1
    for key, pending in open_intents.items():
        out.tools[key].unfinished = list(pending)
    return out


def format_summary(summary: JournalSummary, *, show_unfinished: int = 10) -> str:
    """A text table of the summary (one row per tool), then the unfinished calls by id."""
    from ..safe_text import display_width, escape, pad

    header = ("server", "tool", "calls", "ok", "errors", "rejected", "cancelled", "unfinished")
    rows: list[tuple[str, ...]] = []
    for (raw_server, raw_tool), s in sorted(summary.tools.items()):
        server, tool = escape(raw_server), escape(raw_tool)  # (a client's or server's text: no terminal control)
        errors = escape(", ".join(f"{k} {v}" for k, v in sorted(s.errors.items())) or "0")
        rejected = escape(", ".join(f"{k} {v}" for k, v in sorted(s.rejections.items())) or "0")
        rows.append((server, tool, str(s.calls), str(s.ok), errors, rejected, str(s.cancelled), str(len(s.unfinished))))
    widths = [max(display_width(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(pad(cell, w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in [header, *rows]]
    if not rows:
        lines.append("(no calls recorded)")
    unfinished = [(s, t, c) for (s, t), v in sorted(summary.tools.items()) for c in v.unfinished]
    if unfinished:
        lines.append("")
        lines.append(f"{len(unfinished)} call(s) without an outcome (in flight, or cut off by a crash):")
        for server, tool, call_id in unfinished[:show_unfinished]:
            lines.append(f"  {escape(call_id)}  {escape(server)}/{escape(tool)}")
        if len(unfinished) > show_unfinished:
            lines.append(f"  … and {len(unfinished) - show_unfinished} more")
    if summary.principals:
        lines.append("")
        lines += _principal_table(summary)
    if summary.damaged:
        lines.append("")
        lines.append(f"{summary.damaged} damaged line(s) skipped (a torn write after a crash, or foreign text)")
    return "\n".join(lines)


def _principal_table(summary: JournalSummary) -> list[str]:
    """The per-caller table: subject and issuer (escaped: they are the token's), then the counts."""
    from ..safe_text import escape

    header = ("subject", "issuer", "clients", "calls", "ok", "errors", "rejected", "cancelled", "unfinished")
    rows: list[tuple[str, ...]] = []
    for who, s in sorted(summary.principals.items(), key=lambda kv: kv[0] or ("", "")):
        subject, issuer = (escape(who[1]), escape(who[0])) if who else ("(no principal)", "")
        clients = ", ".join(escape(c) for c in sorted(s.client_ids)) or "-"
        rejected = ", ".join(f"{k} {v}" for k, v in sorted(s.rejections.items())) or "0"
        counts = (str(s.calls), str(s.ok), str(s.errors), rejected, str(s.cancelled), str(s.unfinished))
        rows.append((subject, issuer, clients, *counts))
    from ..safe_text import display_width, pad

    widths = [max(display_width(r[i]) for r in [header, *rows]) for i in range(len(header))]
    return ["  ".join(pad(cell, w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in [header, *rows]]
