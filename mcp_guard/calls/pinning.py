"""Schema pinning (rug-pull protection): a lock file of tool definitions and digests, checked at run time.

Lock file (``mcp-guard pin`` writes version 2; JSON, keys sorted, one trailing newline)::

    {"version": 2, "tools": {"<server>/<tool>": {"digest": "sha256:<64 hex digits>",
                                                 "definition": {<the tool minus _meta>}}, ...}}

Version 1 (still read) holds only the digests: ``{"version": 1, "tools": {"<server>/<tool>":
"sha256:..."}}``; a changed tool then cannot be shown as pinned (its pinned definition is not
known), so the gateway withholds it.

A tool's digest is the SHA-256 of the RFC 8785 canonical JSON (:mod:`.jcs`) of the whole tool
object as the upstream lists it, minus its top-level ``_meta``: a changed ``description``,
``inputSchema``, ``outputSchema``, ``annotations`` or ``title`` changes it; ``_meta`` (where
servers put volatile data, and where the guard puts its verdicts) does not. A version-2
definition must have the digest beside it and the name its key ends with, or the lock file
is refused (:class:`LockError`): an edited definition cannot pose as the reviewed one.

At run time each listed tool is ``pinned`` (digest as locked), ``changed`` (calls refused
with ``pinned_schema_changed`` until it is pinned again), or ``new`` (not in the lock:
reported; refused with ``policy_denied`` when ``guard.newTools`` is ``reject``). A tool
whose digest cannot be computed (a number JSON cannot carry, such as ``NaN``) counts as
``changed`` when a lock is in force: it cannot be shown to be the pinned one.
:func:`diff_tool` says field by field what changed (:class:`FieldChange`).
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import os
import re
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

from ..errors import GuardError
from .jcs import canonical_sha256

__all__ = [
    "DIFF_FIELDS",
    "LOCK_VERSION",
    "FieldChange",
    "LockError",
    "LockFile",
    "PinReport",
    "PinStatus",
    "PreparedPins",
    "compare",
    "diff_tool",
    "report_of",
    "server_status",
    "tool_definition",
    "tool_digest",
]

LOCK_VERSION: Final = 2
"""The version ``pin`` writes; versions 1 and 2 are read."""
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}\Z")

PinStatus = Literal["pinned", "changed", "new", "unpinned"]
"""``unpinned``: no lock file is in force."""


class LockError(GuardError):
    """A lock file that cannot be read or is not a version-1 or version-2 lock (or one whose
    definition does not match its digest); the message names the file and the key."""


def tool_definition(tool: Mapping[str, Any]) -> dict[str, Any]:
    """The part of ``tool`` that is pinned: every top-level member but ``_meta`` (a shallow copy)."""
    return {k: v for k, v in tool.items() if k != "_meta"}


def tool_digest(tool: Mapping[str, Any]) -> str:
    """``"sha256:<hex>"`` over the RFC 8785 canonical JSON of ``tool`` without ``_meta``.

    Raises:
        ValueError: the tool holds a value without a canonical form (NaN, ±Infinity, an
            integer beyond the double range).
        TypeError: the tool is not a JSON object.
    """
    if type(tool) is not dict:
        raise TypeError("a tool is a JSON object")
    return "sha256:" + canonical_sha256(tool_definition(tool))


def _recorded(definition: dict[str, Any]) -> dict[str, Any]:
    """``definition`` as the lock file will hold it: a deep copy through JSON text.

    Raises:
        ValueError: it cannot be written as JSON (NaN, nesting past the recursion limit).
    """
    try:
        copied: dict[str, Any] = json.loads(json.dumps(definition, allow_nan=False))
    except RecursionError:
        raise ValueError("nested too deeply to be written to the lock file") from None
    return copied


def _entry_problem(key: str, value: Any, version: int) -> tuple[str, dict[str, Any] | None, str | None]:
    """Check one ``tools`` entry: ``(digest, definition or None, problem or None)``."""
    if "/" not in key:
        return "", None, "the key must be server/tool"
    if version == 1:
        if type(value) is not str or not _DIGEST.match(value):
            return "", None, "must be sha256: and 64 lower-case hex digits"
        return value, None, None
    if type(value) is not dict:
        return "", None, 'must be an object {"digest": "sha256:...", "definition": {...}}'
    unknown = sorted(set(value) - {"digest", "definition"})
    if unknown:
        return "", None, f"{unknown[0]}: unknown key"
    digest, definition = value.get("digest"), value.get("definition")
    if type(digest) is not str or not _DIGEST.match(digest):
        return "", None, "digest: must be sha256: and 64 lower-case hex digits"
    if type(definition) is not dict:
        return "", None, "definition: must be the tool's definition (a JSON object)"
    if "_meta" in definition:
        return "", None, "definition: holds _meta, which is never pinned"
    if definition.get("name") != key.split("/", 1)[1]:
        return "", None, "definition: its name is not the tool name of the key"
    try:
        actual = tool_digest(definition)
    except (ValueError, TypeError):
        actual = None
    if actual != digest:
        return (
            "",
            None,
            (
                "definition: does not match its digest (the lock file was edited or damaged: review the tools and run "
                "mcp-guard pin again)"
            ),
        )
    return digest, definition, None


@dataclass(frozen=True)
class LockFile:
    """A lock file's content.

    Attributes:
        tools: ``server/tool`` → ``sha256:<hex>``.
        definitions: ``server/tool`` → the pinned definition (the tool minus ``_meta``), for
            every key of ``tools`` in a version-2 lock; empty for a version-1 lock.
        path: the file it was read from (:meth:`read`), for the operator's log; None when made in memory.
    """

    tools: Mapping[str, str] = field(default_factory=dict)
    definitions: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    path: Path | None = field(default=None, compare=False)

    @property
    def version(self) -> int:
        """2 when every pinned tool has its definition (what :meth:`to_json` writes), else 1."""
        return LOCK_VERSION if all(k in self.definitions for k in self.tools) else 1

    @classmethod
    def read(cls, path: Path) -> LockFile:
        """Read and check the lock file at ``path`` (version 1 or 2).

        Raises:
            FileNotFoundError: there is none (the caller decides what that means).
            LockError: it cannot be read, is not JSON, is not a version-1 or version-2 lock,
                or a version-2 definition does not match its digest or its key (the message
                names the file and the key).
        """
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise
        except (OSError, UnicodeDecodeError) as exc:
            raise LockError(f"{path}: cannot read the lock file ({exc})") from None
        try:
            data = json.loads(text)
        except RecursionError:
            raise LockError(f"{path}: nested too deeply to read") from None
        except ValueError as exc:
            raise LockError(f"{path}: not valid JSON ({exc})") from None
        if type(data) is not dict:
            raise LockError(f"{path}: the lock file must hold an object")
        version = data.get("version")
        if type(version) is not int or version not in (1, LOCK_VERSION):
            raise LockError(f"{path}: version: must be 1 or 2 (this guard reads version-1 and version-2 lock files)")
        tools = data.get("tools")
        if type(tools) is not dict:
            what = "sha256:<hex>" if version == 1 else '{"digest", "definition"}'
            raise LockError(f"{path}: tools: must be an object mapping server/tool to {what}")
        digests: dict[str, str] = {}
        definitions: dict[str, dict[str, Any]] = {}
        for key, value in tools.items():
            digest, definition, problem = _entry_problem(key, value, version)
            if problem is not None:
                raise LockError(f"{path}: tools[{json.dumps(key)}]: {problem}")
            digests[key] = digest
            if definition is not None:
                definitions[key] = definition
        unknown = set(data) - {"version", "tools"}
        if unknown:
            raise LockError(f"{path}: {sorted(unknown)[0]}: unknown key")
        return cls(digests, definitions, path)

    @classmethod
    def read_optional(cls, path: Path | None) -> LockFile | None:
        """:meth:`read`, or ``None`` when ``path`` is ``None`` or there is no such file."""
        if path is None:
            return None
        try:
            return cls.read(path)
        except FileNotFoundError:
            return None

    def to_json(self) -> str:
        """The file's text: ``version`` then ``tools`` by sorted key (each definition in the server's
        member order), two-space indent, trailing newline; version 2 when every
        tool has its definition, else version 1 (digests only). Non-ASCII text is written as it
        is, unless the lock holds a lone surrogate (then everything non-ASCII is ``\\u`` escaped)."""
        version = self.version
        tools: dict[str, Any] = {
            k: (d if version == 1 else {"digest": d, "definition": self.definitions[k]})
            for k, d in sorted(self.tools.items())
        }
        data = {"version": version, "tools": tools}
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            text = json.dumps(data, indent=2) + "\n"
        return text

    def write(self, path: Path) -> None:
        """Write atomically: a temporary file in the same folder, fsync, rename over ``path``."""
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(self.to_json())
                f.flush()
                os.fsync(f.fileno())
            os.replace(temp, path)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise

    @classmethod
    def from_listings(cls, listings: Iterable[tuple[str, Iterable[Any]]]) -> tuple[LockFile, list[str]]:
        """A version-2 lock of every tool in ``listings`` (``(server, tools)`` pairs, wire dicts).

        Returns:
            ``(lock, problems)``: tools that cannot be pinned are left out and described in
            ``problems`` (no string name, listed twice with different definitions, no
            canonical form, nested too deeply to be written as JSON).
        """
        tools: dict[str, str] = {}
        definitions: dict[str, dict[str, Any]] = {}
        problems: list[str] = []
        conflicted: set[str] = set()
        for server, items in listings:
            for tool in items:
                name = tool.get("name") if type(tool) is dict else None
                if type(name) is not str or not name:
                    problems.append(
                        f"{server}: a tool without a name (missing, empty or not a string) cannot be pinned"
                    )
                    continue
                key = f"{server}/{name}"
                try:
                    digest = tool_digest(tool)
                    definition = _recorded(tool_definition(tool))
                except (ValueError, TypeError) as exc:
                    problems.append(f"{key}: cannot be pinned: {exc}")
                    conflicted.add(key)
                    continue
                if key in tools and tools[key] != digest:
                    problems.append(f"{key}: listed twice with different definitions; not pinned")
                    conflicted.add(key)
                tools[key] = digest
                definitions[key] = definition
        for key in conflicted:
            tools.pop(key, None)
            definitions.pop(key, None)
        return cls(tools, definitions), problems


# --- what changed -------------------------------------------------------------------------------

DIFF_FIELDS: Final = ("name", "title", "description", "inputSchema", "outputSchema", "annotations")
"""The fields :func:`diff_tool` compares first, in this order; any other member follows, sorted."""

_ABSENT: Final = object()


def _short(value: Any, limit: int = 80) -> str:
    """Compact JSON of ``value``, cut to ``limit`` characters (``…`` marks a cut); ``absent`` for none."""
    if value is _ABSENT:
        return "absent"
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (ValueError, TypeError, RecursionError):
        text = "(no JSON form)"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _pointer_token(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _leaf_changes(before: Any, after: Any, limit: int) -> tuple[list[tuple[str, Any, Any]], int]:
    """The JSON Pointers (relative to the field) where ``before`` and ``after`` differ, at most
    ``limit`` of them, and how many there are in all. Iterative: a deep schema cannot overflow."""
    out: list[tuple[str, Any, Any]] = []
    total = 0
    stack: list[tuple[str, Any, Any]] = [("", before, after)]
    while stack:
        pointer, a, b = stack.pop()
        if type(a) is dict and type(b) is dict:
            keys = sorted(set(a) | set(b), reverse=True)
            stack += [(f"{pointer}/{_pointer_token(k)}", a.get(k, _ABSENT), b.get(k, _ABSENT)) for k in keys]
            continue
        if type(a) is list and type(b) is list and len(a) == len(b):
            stack += [(f"{pointer}/{i}", a[i], b[i]) for i in reversed(range(len(a)))]
            continue
        if type(a) is type(b) and a == b:
            continue
        total += 1
        if len(out) < limit:
            out.append((pointer, a, b))
    return out, total


def _lines(value: Any) -> list[str]:
    """The lines a unified diff compares: a string's own lines, else pretty JSON (sorted keys)."""
    if value is _ABSENT:
        return []
    if type(value) is str:
        return value.splitlines() or [""]
    try:
        return json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True).splitlines()
    except (ValueError, TypeError, RecursionError):
        return ["(too deeply nested, or not JSON: cannot be shown)"]


@dataclass(frozen=True)
class FieldChange:
    """One top-level member of a tool that differs from its pinned definition.

    Attributes:
        field: the member (``description``, ``inputSchema``, ...).
        before, after: the pinned and the listed value (a private sentinel when there is none:
            see :attr:`added` and :attr:`removed`).

    Both values are server text: every rendering here is for :func:`mcp_guard.safe_text.escape`
    (the log formatter applies it; ``check --config`` escapes each row).
    """

    field: str
    before: Any
    after: Any
    leaves: tuple[list[tuple[str, Any, Any]], int] | None = dataclasses.field(default=None, compare=False, repr=False)
    """The first :data:`SHOWN_LEAVES` places where two objects or arrays differ, and how many there are
    (:func:`diff_tool` walks them once; :meth:`summary` shows them without walking again)."""

    @property
    def added(self) -> bool:
        """The member is new (absent from the pinned definition)."""
        return self.before is _ABSENT

    @property
    def removed(self) -> bool:
        """The member is gone (absent from the listed tool)."""
        return self.after is _ABSENT

    def summary(self, limit: int = 4) -> str:
        """One line: ``description: "old" → "new"``, or, for objects, the first ``limit`` JSON
        Pointers that differ (``inputSchema: /properties/path/type "string" → "integer"``)."""
        if self.added or self.removed:
            return f"{self.field}: {'added' if self.added else 'removed'}"
        if type(self.before) is dict and type(self.after) is dict:
            if self.leaves is not None and limit <= SHOWN_LEAVES:
                leaves, total = self.leaves[0][:limit], self.leaves[1]
            else:
                leaves, total = _leaf_changes(self.before, self.after, limit)
            parts = [
                f"{pointer or '/'} "
                + (
                    "added " + _short(b)
                    if a is _ABSENT
                    else "removed"
                    if b is _ABSENT
                    else f"{_short(a)} → {_short(b)}"
                )
                for pointer, a, b in leaves
            ]
            more = f", and {total - len(leaves)} more" if total > len(leaves) else ""
            return f"{self.field}: " + ", ".join(parts) + more
        return f"{self.field}: {_short(self.before, 200)} → {_short(self.after, 200)}"

    def unified(self) -> list[str]:
        """A unified diff (no file header) of the pinned and the listed value: a string's lines, or
        pretty JSON with sorted keys; ``-`` lines are the pinned definition's."""
        diff = difflib.unified_diff(_lines(self.before), _lines(self.after), "pinned", "listed", lineterm="", n=2)
        return [line for line in diff if not line.startswith(("--- ", "+++ "))]

    def to_json(self) -> dict[str, Any]:
        """``{"field", "change": "added"|"removed"|"changed", "diff": [unified diff lines]}``."""
        change = "added" if self.added else "removed" if self.removed else "changed"
        return {"field": self.field, "change": change, "diff": self.unified()}


def diff_tool(
    pinned: Mapping[str, Any], listed: Mapping[str, Any], prepared: PreparedPins | None = None
) -> list[FieldChange]:
    """Field by field, how ``listed`` (a tool as the upstream lists it) differs from ``pinned``
    (its definition in a version-2 lock): :data:`DIFF_FIELDS` first, then any other member
    sorted; ``_meta`` is never compared (it is not pinned). Empty when they are equal.
    ``prepared``: comparisons made ahead in a worker thread (:class:`PreparedPins`), taken when they
    are of these very values."""
    keys = [k for k in DIFF_FIELDS if k in pinned or k in listed]
    keys += sorted((set(pinned) | set(listed)) - set(DIFF_FIELDS) - {"_meta"})
    changes = []
    for key in keys:
        before, after = pinned.get(key, _ABSENT), listed.get(key, _ABSENT)
        if before is _ABSENT or after is _ABSENT:
            changes.append(FieldChange(key, before, after))
            continue
        leaves = prepared.leaves(before, after) if prepared is not None else None
        if leaves is None:
            leaves = _leaf_changes(before, after, SHOWN_LEAVES)
        if leaves[1]:
            changes.append(FieldChange(key, before, after, leaves))
    return changes


SHOWN_LEAVES: Final = 4
"""Places where a field differs that :meth:`FieldChange.summary` shows by default (the log line)."""


class PreparedPins:
    """A big listing's digests and comparisons with the lock, made ahead in a worker thread (issue 25).

    The digest of a tool is the SHA-256 of its canonical JSON (:mod:`.jcs`, pure Python): 5.5 s on an idle
    machine for a tool of 1,000,000 properties, and as long again to say what changed in it
    (:func:`diff_tool`), on the event loop, where every ``ping`` waited. The gateway's catalog calls
    :meth:`prepare` where it classifies a big listing (``Catalog.prepare``, in the worker thread), and
    gives this object to :func:`server_status` and :func:`diff_tool`, which take what was made for these
    very objects (by identity, the objects held) and compute anything else themselves: the verdicts are
    the same either way. Per server, what one ``prepare`` made is kept until the next (or, for the digests,
    until :func:`server_status` takes them): at most one listing per server is held, which the catalog
    holds anyway while it is current.
    """

    def __init__(self) -> None:
        self._digests: dict[str, dict[int, tuple[Any, str | None]]] = {}  # server -> id(tool) -> (tool, digest)
        # server -> (id(pinned value), id(listed value)) -> (the two values, their leaf changes)
        self._leaves: dict[str, dict[tuple[int, int], tuple[Any, Any, tuple[list[tuple[str, Any, Any]], int]]]] = {}

    def prepare(self, lock: LockFile | None, server: str, tools: Iterable[Any]) -> list[Mapping[str, Any]]:
        """(In a worker thread.) Each of ``server``'s listed ``tools`` that ``lock`` pins: its digest and,
        when it changed and the lock holds its definition, where each field differs. Replaces what an
        earlier call made for ``server``; reads ``lock`` only. Returns the pinned definitions of the tools
        that changed (the gateway shows those instead: its caller classifies them ahead too)."""
        digests: dict[int, tuple[Any, str | None]] = {}
        leaves: dict[tuple[int, int], tuple[Any, Any, tuple[list[tuple[str, Any, Any]], int]]] = {}
        self._digests[server], self._leaves[server] = digests, leaves  # (filled below: the loop reads only ids made)
        changed: list[Mapping[str, Any]] = []
        if lock is None:
            return changed
        for tool in tools:
            name = tool.get("name") if type(tool) is dict else None
            key = f"{server}/{name}"
            if type(name) is not str or key not in lock.tools:
                continue
            try:
                digest: str | None = tool_digest(tool)
            except (ValueError, TypeError):
                digest = None
            digests[id(tool)] = (tool, digest)
            definition = lock.definitions.get(key)
            if digest == lock.tools[key] or definition is None:
                continue
            changed.append(definition)
            for field_name, before in definition.items():
                after = tool.get(field_name, _ABSENT)
                if type(before) in (dict, list) and type(after) in (dict, list):
                    leaves[(id(before), id(after))] = (before, after, _leaf_changes(before, after, SHOWN_LEAVES))
        return changed

    def take_digests(self, server: str) -> dict[int, tuple[Any, str | None]]:
        """The digests :meth:`prepare` made for ``server`` (each ``(tool, digest or None)`` by ``id(tool)``),
        forgotten here: :func:`server_status` takes them once per listing."""
        return self._digests.pop(server, None) or {}

    def leaves(self, before: Any, after: Any) -> tuple[list[tuple[str, Any, Any]], int] | None:
        """Where ``before`` (a pinned field's value) and ``after`` (the listed one's) differ, when :meth:`prepare`
        compared these very values; else None."""
        pair = (id(before), id(after))
        for leaves in list(self._leaves.values()):
            found = leaves.get(pair)
            if found is not None and found[0] is before and found[1] is after:
                return found[2]
        return None


@dataclass
class PinReport:
    """The run-time comparison of listed tools with a lock.

    Attributes:
        status: ``server/tool`` → :data:`PinStatus` for every listed tool.
        missing: lock keys of the compared servers that no listing holds any more.
    """

    status: dict[str, PinStatus] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)

    def of(self, server: str, tool: str) -> PinStatus:
        """The status of one tool (``unpinned`` when it was not compared)."""
        return self.status.get(f"{server}/{tool}", "unpinned")

    def keys(self, status: PinStatus) -> list[str]:
        """The ``server/tool`` keys with ``status``, sorted."""
        return sorted(k for k, s in self.status.items() if s == status)


def server_status(
    lock: LockFile | None, server: str, tools: Iterable[Any], prepared: PreparedPins | None = None
) -> dict[str, PinStatus]:
    """``server/tool`` → :data:`PinStatus` for each of one server's listed tools (wire dicts) against
    ``lock`` (``None``: all ``unpinned``). A name listed twice is ``pinned`` only if every
    definition matches; tools without a string name are skipped. Computes each tool's digest, or takes
    the one ``prepared`` made of that very tool (:class:`PreparedPins`)."""
    made = prepared.take_digests(server) if prepared is not None else {}
    status: dict[str, PinStatus] = {}
    for tool in tools:
        name = tool.get("name") if type(tool) is dict else None
        if type(name) is not str:
            continue
        key = f"{server}/{name}"
        if lock is None:
            status[key] = "unpinned"
            continue
        pinned = lock.tools.get(key)
        if pinned is None:
            found: PinStatus = "new"
        else:
            ready = made.get(id(tool))
            try:
                digest = ready[1] if ready is not None and ready[0] is tool else tool_digest(tool)
            except (ValueError, TypeError):
                digest = None
            found = "pinned" if digest is not None and digest == pinned else "changed"
        if status.get(key) == "changed":
            found = "changed"  # listed twice: every definition must match the pin
        status[key] = found
    return status


def report_of(lock: LockFile | None, statuses: Iterable[tuple[str, Mapping[str, PinStatus]]]) -> PinReport:
    """The :class:`PinReport` of per-server statuses (``(server, server_status(...))`` pairs), with
    ``missing``: the lock keys of those servers that none of them lists."""
    report = PinReport()
    servers: set[str] = set()
    for server, status in statuses:
        servers.add(server)
        report.status.update(status)
    if lock is not None:
        listed = set(report.status)
        report.missing = sorted(k for k in lock.tools if k.split("/", 1)[0] in servers and k not in listed)
    return report


def compare(lock: LockFile | None, listings: Iterable[tuple[str, Iterable[Any]]]) -> PinReport:
    """Compare each listed tool with ``lock`` (``None``: no lock in force, all ``unpinned``).

    Only the servers present in ``listings`` are compared, so a server that could not be
    listed does not make its pinned tools ``missing``.
    """
    return report_of(lock, ((server, server_status(lock, server, items)) for server, items in listings))
