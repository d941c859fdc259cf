"""Schema pinning (rug-pull protection): a lock file of tool digests, checked at run time.

Lock file (``mcp-guard pin`` writes it; JSON, keys sorted, one trailing newline)::

    {"version": 1, "tools": {"<server>/<tool>": "sha256:<64 hex digits>", ...}}

A tool's digest is the SHA-256 of the RFC 8785 canonical JSON (:mod:`.jcs`) of the whole tool
object as the upstream lists it, minus its top-level ``_meta``: a changed ``description``,
``inputSchema``, ``outputSchema``, ``annotations`` or ``title`` changes it; ``_meta`` (where
servers put volatile data, and where the guard puts its verdicts) does not.

At run time each listed tool is ``pinned`` (digest as locked), ``changed`` (calls refused
with ``pinned_schema_changed`` until it is pinned again), or ``new`` (not in the lock:
reported; refused with ``policy_denied`` when ``guard.newTools`` is ``reject``). A tool
whose digest cannot be computed (a number JSON cannot carry, such as ``NaN``) counts as
``changed`` when a lock is in force: it cannot be shown to be the pinned one.
"""

from __future__ import annotations

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
    "LOCK_VERSION",
    "LockError",
    "LockFile",
    "PinReport",
    "PinStatus",
    "compare",
    "tool_digest",
]

LOCK_VERSION: Final = 1
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}\Z")

PinStatus = Literal["pinned", "changed", "new", "unpinned"]
"""``unpinned``: no lock file is in force."""


class LockError(GuardError):
    """A lock file that cannot be read or is not a version-1 lock; the message names the file and the key."""


def tool_digest(tool: Mapping[str, Any]) -> str:
    """``"sha256:<hex>"`` over the RFC 8785 canonical JSON of ``tool`` without ``_meta``.

    Raises:
        ValueError: the tool holds a value without a canonical form (NaN, ±Infinity, an
            integer beyond the double range).
        TypeError: the tool is not a JSON object.
    """
    if type(tool) is not dict:
        raise TypeError("a tool is a JSON object")
    return "sha256:" + canonical_sha256({k: v for k, v in tool.items() if k != "_meta"})


@dataclass(frozen=True)
class LockFile:
    """A lock file's content: ``server/tool`` → ``sha256:<hex>``."""

    tools: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def read(cls, path: Path) -> LockFile:
        """Read and check the lock file at ``path``.

        Raises:
            FileNotFoundError: there is none (the caller decides what that means).
            LockError: it cannot be read, is not JSON, or is not a version-1 lock.
        """
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise
        except (OSError, UnicodeDecodeError) as exc:
            raise LockError(f"{path}: cannot read the lock file ({exc})") from None
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise LockError(f"{path}: not valid JSON ({exc})") from None
        if type(data) is not dict:
            raise LockError(f"{path}: the lock file must hold an object")
        if data.get("version") != LOCK_VERSION:
            raise LockError(f"{path}: version: must be {LOCK_VERSION} (this guard reads version-1 lock files)")
        tools = data.get("tools")
        if type(tools) is not dict:
            raise LockError(f"{path}: tools: must be an object mapping server/tool to sha256:<hex>")
        for key, digest in tools.items():
            if "/" not in key:
                raise LockError(f"{path}: tools[{json.dumps(key)}]: the key must be server/tool")
            if type(digest) is not str or not _DIGEST.match(digest):
                raise LockError(f"{path}: tools[{json.dumps(key)}]: must be sha256: and 64 lower-case hex digits")
        unknown = set(data) - {"version", "tools"}
        if unknown:
            raise LockError(f"{path}: {sorted(unknown)[0]}: unknown key")
        return cls(dict(tools))

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
        """The file's text: sorted keys, two-space indent, trailing newline."""
        data = {"version": LOCK_VERSION, "tools": dict(sorted(self.tools.items()))}
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"

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
        """A lock of every tool in ``listings`` (``(server, tools)`` pairs, wire dicts).

        Returns:
            ``(lock, problems)``: tools that cannot be pinned are left out and described in
            ``problems`` (no string name, listed twice with different definitions, no
            canonical form).
        """
        tools: dict[str, str] = {}
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
                except (ValueError, TypeError) as exc:
                    problems.append(f"{key}: cannot be pinned: {exc}")
                    conflicted.add(key)
                    continue
                if key in tools and tools[key] != digest:
                    problems.append(f"{key}: listed twice with different definitions; not pinned")
                    conflicted.add(key)
                tools[key] = digest
        for key in conflicted:
            tools.pop(key, None)
        return cls(tools), problems


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


def compare(lock: LockFile | None, listings: Iterable[tuple[str, Iterable[Any]]]) -> PinReport:
    """Compare each listed tool with ``lock`` (``None``: no lock in force, all ``unpinned``).

    Only the servers present in ``listings`` are compared, so a server that could not be
    listed does not make its pinned tools ``missing``.
    """
    report = PinReport()
    servers: set[str] = set()
    for server, items in listings:
        servers.add(server)
        for tool in items:
            name = tool.get("name") if type(tool) is dict else None
            if type(name) is not str:
                continue
            key = f"{server}/{name}"
            if lock is None:
                report.status[key] = "unpinned"
                continue
            pinned = lock.tools.get(key)
            if pinned is None:
                status: PinStatus = "new"
            else:
                try:
                    status = "pinned" if tool_digest(tool) == pinned else "changed"
                except (ValueError, TypeError):
                    status = "changed"
            if report.status.get(key) == "changed":
                status = "changed"  # listed twice: every definition must match the pin
            report.status[key] = status
    if lock is not None:
        listed = set(report.status)
        report.missing = sorted(k for k in lock.tools if k.split("/", 1)[0] in servers and k not in listed)
    return report
