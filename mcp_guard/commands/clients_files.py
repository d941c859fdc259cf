"""Client config files, read and changed in place: plans, atomic writes, backups, the install record.

A file is read once into a :class:`Snapshot` (its bytes). ``install`` plans every change on
that text and writes only if the file still holds exactly those bytes when it is about to
write (else it refuses: another program, or the user, changed it meanwhile). A write is
atomic: a temporary file in the same folder, ``fsync``, ``os.replace`` (a symlinked config is
written through to its target), with the file's mode kept and the previous bytes left beside
it as ``<name>.mcp-guard.bak``.

Edits touch only the spans that change in the entry (:mod:`.clients_edit`, on the span readers
:mod:`.clients_jsonc` and :mod:`.clients_toml`): a value replaced where it stands, the guard's
words put in front of ``args``' first item, a key cut or written in place. Every edit is checked
before it is kept (:func:`_rewrite`): the document must read back as before but for that entry,
with every comment still there, in order; else the entry is left alone with the reason (issue 25
item 2: tomlkit, which edited TOML before, dropped a comment standing before the next table).

The install record: for every entry it changes, ``install`` records the entry's text (its name
and value: JSON from the key to the end of the value, TOML from the ``[table]`` header or the
``name = {...}`` line) as it was and as it wrote it, the value it found and a hash of the
value it wrote, in ``installs.json`` in the guard's data folder
(:func:`.clients_paths.state_dir`), keyed by the config's real path. Not in the entry
(clients may reject unknown keys) and not beside the config (a project's ``.mcp.json`` is
often under version control). ``uninstall`` puts the recorded text back where the entry
still has the value and the exact text ``install`` wrote (the file's bytes are then exactly
as before); where only the layout changed (a client that rewrites its own file) it puts the
recorded value back in the current layout; an entry whose value changed since is left alone
with a warning. The record and the backup hold what the config held (possibly secrets);
both are written readable by the user only.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import os
import re
import stat
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import GuardError
from . import clients_jsonc as jsonc
from . import clients_toml as toml_spans
from .clients_edit import EditRefused, Splicer
from .clients_entries import plan_entry
from .clients_paths import ClientFile

__all__ = [
    "BACKUP_SUFFIX",
    "EntryOutcome",
    "FilePlan",
    "Snapshot",
    "distinct_files",
    "entries_of",
    "plan_install",
    "plan_uninstall",
    "read_only",
    "read_snapshot",
    "read_snapshot_or_problem",
    "read_state",
    "save_state",
    "server_entries",
    "write_plan",
]

BACKUP_SUFFIX = ".mcp-guard.bak"
_UNEDITABLE = "its text cannot be rewritten without losing a comment or changing what is around it: edit it by hand"
STATE_FILE = "installs.json"


class _Fault(GuardError):
    """A file that cannot be used; caught in this module and turned into ``FilePlan.problem``."""


@dataclass
class Snapshot:
    """A config file as read: its real path, bytes and text (``None`` text: the file does not exist)."""

    path: Path
    data: bytes
    text: str | None
    mode: int | None


@dataclass
class EntryOutcome:
    """What happened to one server entry: ``action`` is ``guard``/``guarded``/``skip`` (install),
    ``restore``/``left`` (uninstall), or ``guarded``/``unguarded``/``skip`` (status)."""

    name: str
    location: tuple[str, ...]
    action: str
    kind: str = ""
    reason: str = ""
    value: Any = None


@dataclass
class FilePlan:
    """The plan for one file: the new text (``None``: nothing to write) or the problem that stops it."""

    file: ClientFile
    snapshot: Snapshot | None
    outcomes: list[EntryOutcome] = field(default_factory=list)
    new_text: str | None = None
    records: list[dict[str, Any]] = field(default_factory=list)
    problem: str | None = None


def read_snapshot(path: Path) -> Snapshot:
    """Read ``path`` (following symlinks) as UTF-8; a missing file gives ``text=None``.

    Raises:
        _Fault: unreadable (permissions, a folder) or not UTF-8.
    """
    real = Path(os.path.realpath(path))
    try:
        data = real.read_bytes()
        mode = stat.S_IMODE(real.stat().st_mode)
    except FileNotFoundError:
        return Snapshot(real, b"", None, None)
    except OSError as exc:
        raise _Fault(f"cannot be read: {exc.strerror or type(exc).__name__}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _Fault(f"not UTF-8 (byte {exc.start})") from None
    return Snapshot(real, data, text, mode)


def distinct_files(files: list[ClientFile]) -> list[ClientFile]:
    """``files`` with each file on disk once: two paths to one file (a symlinked ``$HOME`` whose
    project folder is its real path, a client config that is a symlink to a project's file, a
    hard link) are one file, read, planned and written once. The one kept stands where the first
    stood and is the user's (``scope == "user"``) when one of them is; order is otherwise kept.

    Files are told apart by device and inode when they exist (``os.stat``, following symlinks;
    ``os.path.samefile``'s rule), else by their real path (``os.path.realpath``, case-folded where
    the platform's paths are: ``os.path.normcase``).
    """
    kept: dict[object, int] = {}
    out: list[ClientFile] = []
    for file in files:
        try:
            found = os.stat(file.path)
            identity: object = (found.st_dev, found.st_ino)
        except OSError:
            identity = os.path.normcase(os.path.realpath(file.path))
        if identity not in kept:
            kept[identity] = len(out)
            out.append(file)
        elif file.scope == "user" and out[kept[identity]].scope != "user":
            out[kept[identity]] = file
    return out


def read_only(snapshot: Snapshot) -> str | None:
    """Why the file must not be written although its folder allows it, or ``None``.

    A write replaces the file (a rename in its folder), which the file's own mode does not
    stop: a config made read-only (``chmod 0444``, the Windows read-only attribute), or one
    this user may not write (another user's), would be replaced silently. The file's mode is
    the owner's word, so such a file is reported and left alone (root included: its own
    ``access`` check ignores the mode bits).
    """
    if snapshot.mode is None:
        return None
    if not snapshot.mode & stat.S_IWUSR or not os.access(snapshot.path, os.W_OK):
        return (
            f"is read-only for you (mode {snapshot.mode:04o}); nothing written: make it writable "
            "(chmod u+w) and run again"
        )
    return None


def _digest(value: Any) -> str:
    canonical = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


# --- reading entries ---------------------------------------------------------------------------


def _server_maps(file: ClientFile, root: Any) -> list[tuple[str, ...]]:
    """Key paths of every server map of ``file`` present in ``root`` (a plain value)."""
    paths = [file.servers_key]
    if file.project_maps and isinstance(root, dict) and isinstance(root.get("projects"), dict):
        paths += [("projects", project, "mcpServers") for project in root["projects"]]
    return paths


def _lookup(root: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(root, dict) or key not in root:
            return None
        root = root[key]
    return root


def _parse(file: ClientFile, text: str) -> Any:
    """The document as a plain value (JSON: from the JSONC reader; TOML: tomlkit, unwrapped).

    TOML is first read by :mod:`tomllib`, the reference parser (TOML 1.0, as the clients' own
    readers): tomlkit, which edits it, accepts documents they refuse (a table declared twice,
    ``[t]`` after ``t.k = ...``; a trailing comma in an inline table), and its line numbers
    are off by one in places. A document tomllib refuses is reported with tomllib's reason,
    line and column, and nothing is written.
    """
    try:
        if file.format == "toml":
            import tomllib

            import tomlkit
            from tomlkit.exceptions import TOMLKitError

            try:
                tomllib.loads(_body(text))
            except tomllib.TOMLDecodeError as exc:
                raise ValueError(str(exc).splitlines()[0]) from None
            try:
                return tomlkit.parse(text).unwrap()
            except TOMLKitError as exc:
                raise ValueError(str(exc).splitlines()[0]) from None
        return jsonc.parse(_body(text)).value()
    except ValueError as exc:
        raise _Fault(f"not valid {'TOML' if file.format == 'toml' else 'JSON'}: {exc}") from None


def _body(text: str) -> str:
    return text[1:] if text.startswith("\ufeff") else text


def entries_of(file: ClientFile, text: str) -> list[tuple[tuple[str, ...], Any]]:
    """Every server entry of the document: ``(location, value)``, location the key path of the entry.

    Raises:
        _Fault: the text does not parse, or a server map is not an object.
    """
    root = _parse(file, text)
    if not isinstance(root, dict):
        raise _Fault("the document is not an object")
    found = []
    for path in _server_maps(file, root):
        servers = _lookup(root, path)
        if servers is None:
            continue
        if not isinstance(servers, dict):
            raise _Fault(f"'{'.'.join(path)}' is not an object")
        found += [((*path, name), value) for name, value in servers.items()]
    return found


def read_snapshot_or_problem(file: ClientFile) -> tuple[Snapshot | None, str | None]:
    """:func:`read_snapshot` as values: ``(snapshot, None)``, ``(None, None)`` for a missing file,
    ``(None, problem)`` for one that cannot be read."""
    try:
        snapshot = read_snapshot(Path(file.path))
    except _Fault as exc:
        return None, str(exc)
    return (None, None) if snapshot.text is None else (snapshot, None)


def server_entries(
    file: ClientFile, snapshot: Snapshot | None
) -> tuple[list[tuple[tuple[str, ...], Any]] | None, str | None]:
    """:func:`entries_of` as values: ``(entries, None)`` or ``(None, problem)``."""
    if snapshot is None or snapshot.text is None:
        return [], None
    try:
        return entries_of(file, snapshot.text), None
    except _Fault as exc:
        return None, str(exc)


# --- editing -----------------------------------------------------------------------------------


def _comments(file: ClientFile, text: str) -> list[str]:
    """The text of every comment of the document, in order."""
    body = _body(text)
    spans = toml_spans.parse(body).comments if file.format == "toml" else jsonc.comment_spans(body)
    return [body[start:end] for start, end in spans]


def _span_edit(file: ClientFile, text: str, location: tuple[str, ...], old: Any, new: Any) -> str:
    """The text with the entry at ``location`` changed from ``old`` to ``new`` by :class:`.clients_edit.Splicer`.

    Raises:
        EditRefused: the entry's layout is not one the splicer changes exactly.
    """
    offset = 1 if text.startswith("\ufeff") else 0
    body = _body(text)
    if not isinstance(old, dict) or not isinstance(new, dict):
        raise EditRefused("not an object")
    if file.format == "toml":
        try:
            document = toml_spans.parse(body)
        except ValueError as exc:
            raise EditRefused(str(exc)) from None
        entry = document.entry(location)
        if entry is None:
            raise EditRefused("neither a [table] nor an inline table")

        def subtable(path: tuple[str, ...]) -> tuple[jsonc.Node, frozenset[str]] | None:
            found = document.entry(path)
            return None if found is None or found.node.kind != "table" else (found.node, frozenset(found.others))

        splicer = Splicer(body, True, document.comments, subtable)
        splicer.edit_object(entry.node, old, new, frozenset(entry.others), location)
    else:
        node = jsonc.find(jsonc.parse(body), location)
        if node is None or node.kind != "object":
            raise EditRefused("not an object")
        splicer = Splicer(body, False, jsonc.comment_spans(body))
        splicer.edit_object(node, old, new, frozenset())
    return text[:offset] + splicer.result()


def _toml_edit(text: str, location: tuple[str, ...], new: dict[str, Any]) -> str:
    """The entry replaced through ``tomlkit`` (for TOML shapes the splicer refuses: dotted keys, sub-tables)."""
    import tomlkit

    doc = tomlkit.parse(text)
    container: Any = doc
    for key in location[:-1]:
        container = container[key]
    item = container[location[-1]]
    fresh: Any = tomlkit.inline_table() if isinstance(item, tomlkit.items.InlineTable) else tomlkit.table()
    for key, value in new.items():
        fresh[key] = item[key] if key in item and value == item[key].unwrap() else value
    container[location[-1]] = fresh
    return tomlkit.dumps(doc)


def _rewrite(file: ClientFile, text: str, location: tuple[str, ...], old: Any, new: Any) -> str | None:
    """The text with the entry at ``location`` changed from ``old`` to ``new``, or ``None`` when no way of
    editing gives exactly that: the document reads back as before but for that entry, and every
    comment is still there, in order (issue 25 item 2)."""
    expected = copy.deepcopy(_parse(file, text))
    holder = expected
    for key in location[:-1]:
        holder = holder[key]
    holder[location[-1]] = new
    comments = _comments(file, text)
    ways: list[Callable[[], str]] = [lambda: _span_edit(file, text, location, old, new)]
    if file.format == "toml":
        ways.append(lambda: _toml_edit(text, location, new))
    for way in ways:
        try:
            candidate = way()
            if _parse(file, candidate) == expected and _comments(file, candidate) == comments:
                return candidate
        except (EditRefused, _Fault, ValueError, KeyError):
            continue
    return None


def _segments(old: str, new: str) -> tuple[int, str, str]:
    """The lines that differ between ``old`` and ``new``: ``(where they start, old lines, new lines)``."""
    prefix = 0
    limit = min(len(old), len(new))
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[len(old) - 1 - suffix] == new[len(new) - 1 - suffix]:
        suffix += 1
    start = old.rfind("\n", 0, prefix) + 1
    old_end = jsonc.line_span(old, start, len(old) - suffix)[1]
    tail = len(old) - old_end
    return start, old[start:old_end], new[start : len(new) - tail]


def _json_member(text: str, location: tuple[str, ...]) -> str:
    """The entry at ``location`` with its name: from its key's quote to the end of its value."""
    parent = jsonc.find(jsonc.parse(_body(text)), location[:-1])
    assert parent is not None
    key_start, node = next((k, n) for name, k, n in parent.members if name == location[-1])
    return _body(text)[key_start : node.end]


def _toml_segments(old: str, new: str, location: tuple[str, ...]) -> tuple[str, str]:
    """The changed lines, widened back to the entry's ``[table]`` header when it is a table (so that the
    entry's name is part of what is recorded); an inline table's line holds its name already."""
    import tomlkit

    start, original, installed = _segments(old, new)
    item: Any = tomlkit.parse(old)
    for key in location:
        item = item[key]
    if isinstance(item, tomlkit.items.InlineTable):
        return original, installed
    headers = [m.start() for m in re.finditer(r"^[ \t]*\[", old[:start], re.M)]
    if not headers:
        return original, installed
    lead = old[headers[-1] : start]
    return lead + original, lead + installed


def plan_install(file: ClientFile, guard: list[str], options: list[str]) -> FilePlan:
    """Plan ``install`` for one file: every entry judged, the new text and the records.

    Never raises for the file's content: an unreadable or invalid file gives ``problem``.
    """
    try:
        snapshot = read_snapshot(Path(file.path))
    except _Fault as exc:
        return FilePlan(file, None, problem=str(exc))
    plan = FilePlan(file, snapshot)
    if snapshot.text is None:
        return plan
    text = snapshot.text
    try:
        for location, value in entries_of(file, text):
            decided = plan_entry(value, guard, options, client=file.client)
            outcome = EntryOutcome(location[-1], location, decided.action, decided.kind, decided.reason, value)
            plan.outcomes.append(outcome)
            if decided.action != "guard":
                continue
            new = _rewrite(file, text, location, value, decided.entry)
            if new is None:
                outcome.action, outcome.reason = "skip", _UNEDITABLE
                continue
            if file.format == "toml":
                original, installed = _toml_segments(text, new, location)
            else:
                original, installed = _json_member(text, location), _json_member(new, location)
            plan.records.append(
                {
                    "location": list(location),
                    "original": original,
                    "installed": installed,
                    "installed_hash": _digest(decided.entry),
                    "original_value": value,
                }
            )
            text = new
        originals: dict[str, str] = {}
        for record in plan.records:
            # Entries written alike (one server in two of Claude Code's project maps) must have been
            # alike before too: uninstall may then restore them in any order.
            if originals.setdefault(record["installed"], record["original"]) != record["original"]:
                raise _Fault("two entries were written alike but were not alike before; nothing can be recorded")
        if plan.records:
            entries_of(file, text)  # what is written must read back
            plan.new_text = text
            if (why := read_only(snapshot)) is not None:
                raise _Fault(why)
    except _Fault as exc:
        plan.problem = str(exc)
        plan.records, plan.new_text = [], None
    return plan


def plan_uninstall(file: ClientFile, records: list[dict[str, Any]]) -> FilePlan:
    """Plan ``uninstall`` for one file from its install ``records``: each entry still as installed
    gets its recorded text (or value) back; any other is left alone with the reason.
    ``FilePlan.records`` are the records to keep: those of entries changed since install."""
    try:
        snapshot = read_snapshot(Path(file.path))
    except _Fault as exc:
        return FilePlan(file, None, problem=str(exc))
    plan = FilePlan(file, snapshot)
    if snapshot.text is None:
        plan.problem = "the file no longer exists"
        return plan
    text = snapshot.text
    try:
        current = dict(entries_of(file, text))
        recorded = {tuple(r["location"]) for r in records}
        for location, value in current.items():
            if location not in recorded and plan_entry(value, ["mcp-guard"], []).action == "guarded":
                reason = "behind the guard, but not by install (no record of its original): left alone"
                plan.outcomes.append(EntryOutcome(location[-1], location, "left", reason=reason))
        for record in records:
            location = tuple(record["location"])
            outcome = EntryOutcome(location[-1], location, "left")
            plan.outcomes.append(outcome)
            if location in current and _digest(current[location]) != record["installed_hash"]:
                plan.records.append(record)  # kept: the user may undo their change and run uninstall again
            if location not in current:
                outcome.reason = "no longer in the file"
            elif _digest(current[location]) != record["installed_hash"]:
                outcome.reason = "changed since install: left alone"
            elif record["installed"] in text:
                text = text.replace(record["installed"], record["original"], 1)
                outcome.action, outcome.reason = "restore", "will be restored as it was before install"
            elif isinstance(record.get("original_value"), dict) and (
                restored := _rewrite(file, text, location, current[location], record["original_value"])
            ):
                # Same value, other layout (a client that rewrites its file, as Claude Code does
                # ~/.claude.json): the recorded value goes back, in the file's current layout.
                text = restored
                outcome.action = "restore"
                outcome.reason = "will be restored to its value before install (the file's layout changed since)"
            else:
                outcome.reason = "its text changed since install: left alone"
        if text != snapshot.text:
            entries_of(file, text)
            plan.new_text = text
            if (why := read_only(snapshot)) is not None:
                raise _Fault(why)
    except _Fault as exc:
        plan.problem = str(exc)
        plan.new_text, plan.records = None, []
    return plan


# --- writing -----------------------------------------------------------------------------------


def _atomic_write(path: Path, data: bytes, mode: int | None) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if hasattr(os, "O_DIRECTORY"):
        with contextlib.suppress(OSError):
            dir_fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)


def _write_in_place(path: Path, data: bytes) -> None:
    """Overwrite a hard-linked file's bytes in place: a rename would give this name a new file and
    leave its other names (a project's copy of the config) as they were. Not atomic; the backup
    beside it holds the previous bytes."""
    with open(path, "r+b") as out:
        out.write(data)
        out.truncate()
        out.flush()
        os.fsync(out.fileno())


def write_plan(plan: FilePlan) -> str | None:
    """Write ``plan.new_text`` if the file still holds the bytes it was planned on; the problem, or ``None``.

    The previous bytes go to ``<file>.mcp-guard.bak`` (mode 0600) first; then the file is
    replaced atomically, keeping its mode, or, when it has other hard links, overwritten in
    place (:func:`_write_in_place`). A file read-only for the user is not written
    (:func:`read_only`: checked again here, as it may have changed since the plan).
    """
    snapshot = plan.snapshot
    assert snapshot is not None and plan.new_text is not None
    try:
        now = snapshot.path.read_bytes()
    except OSError as exc:
        return f"cannot be read again before writing: {exc.strerror or type(exc).__name__}; nothing written"
    if now != snapshot.data:
        return "changed while mcp-guard was working on it (by another program or editor); nothing written: run again"
    try:
        mode = stat.S_IMODE(snapshot.path.stat().st_mode)
    except OSError as exc:
        return f"cannot be read again before writing: {exc.strerror or type(exc).__name__}; nothing written"
    if (why := read_only(Snapshot(snapshot.path, now, None, mode))) is not None:
        return why
    try:
        _atomic_write(snapshot.path.with_name(snapshot.path.name + BACKUP_SUFFIX), snapshot.data, 0o600)
        if snapshot.path.stat().st_nlink > 1:
            _write_in_place(snapshot.path, plan.new_text.encode("utf-8"))
        else:
            _atomic_write(snapshot.path, plan.new_text.encode("utf-8"), snapshot.mode)
    except OSError as exc:
        return f"cannot be written: {exc.strerror or type(exc).__name__}"
    return None


# --- the install record ------------------------------------------------------------------------


def read_state(folder: Path) -> tuple[dict[str, Any], str | None]:
    """The install record (``{"version": 1, "files": {path: {"client", "entries": [...]}}}``), empty if
    there is none, and the problem when it exists but cannot be read (then the record is empty)."""
    path = folder / STATE_FILE
    empty: dict[str, Any] = {"version": 1, "files": {}}
    try:
        state = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        return empty, None
    except (OSError, ValueError) as exc:
        return empty, f"the install record {path} cannot be read: {type(exc).__name__}"
    if not isinstance(state, dict) or not isinstance(state.get("files"), dict):
        return empty, f"the install record {path} is not an install record"
    return state, None


def save_state(folder: Path, state: dict[str, Any]) -> None:
    """Write the install record atomically, readable by the user only (it may hold secrets)."""
    folder.mkdir(parents=True, exist_ok=True)
    _atomic_write(folder / STATE_FILE, (json.dumps(state, indent=2, ensure_ascii=False) + "\n").encode(), 0o600)
