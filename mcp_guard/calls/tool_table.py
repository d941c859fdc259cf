"""What the guard does to the few messages it touches; no I/O, no concurrency.

- ``tools/list`` results: every tool classified, annotated with
  ``_meta["mcp-guard/schema"] = {"supported", "issues"}`` (and ``"notes"`` when the profile has
  some: under ``extended``, a ``format`` 2020-12 does not define, E4); every other field passed as
  the upstream sent it. ``_meta`` keys starting ``mcp-guard/`` that the upstream sent are
  replaced (tools) or removed (results): an upstream cannot forge the guard's verdicts.
- ``tools/call`` requests are judged by the call pipeline (``calls.pipeline``, the steps
  ``wrap``'s options enable: visibility and schema), against the entry this table holds for the
  tool (:meth:`ToolTable.get`; :attr:`ToolTable.unsupported` is the visibility rule); the relay
  answers with what the pipeline decides.

Messages and log lines name tools, keywords and JSON Pointers, never argument values.

This module does not send anything; ``sessions.relay`` moves the messages.
"""

from __future__ import annotations

import contextlib
import logging
import marshal
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

from .. import core
from ..core import DEFAULT_PROFILE, PROFILES, UNSUPPORTED, VALIDATION, Report
from ..reports.status import Status, listed_status
from ..wire.meta import META_PREFIX, SCHEMA_KEY
from ..wire.pieces import count_nodes
from ..wire.repeated import collector_paused, repeated_key, repeated_key_text
from .outputs import DEFAULT_OUTPUTS, OUTPUT_MODES
from .refusals import ToolIssue

if TYPE_CHECKING:  # the classifier (core.compiler) is loaded at the first listing, not at start (issue 14)
    from ..core import Compiled
    from ..hosts.tables import HostProfile
    from .presenting import ShownNames

__all__ = [
    "ToolEntry",
    "ToolTable",
    "schema_key",
]

log = logging.getLogger("mcp_guard")

MAX_CACHED_SCHEMAS: Final = 20_000
"""Compiled schemas a table keeps for reuse (emptied when full)."""

BUILD_AHEAD_NODES: Final = 2_000
"""JSON values of a schema from which :meth:`ToolTable.prepare` (in the worker thread) makes its validator too
(``Compiled.build``), not only its verdict: the first call would otherwise make it on the loop (an ``anyOf`` of
1,000 branches: 0.2 s on an idle machine, 2.3 MB of generated source before it was shared). Smaller schemas,
most, keep the lazy rule: no code for a tool never called."""

MAX_KEYED_NODES: Final = 1_000_000
"""JSON values of a schema past which :meth:`ToolTable.prepare` does not key it for the cache (it is
classified each time it is listed: a schema this big is refused, its classification stopped early)."""


@dataclass(frozen=True, slots=True)
class ToolEntry:
    """A listed tool as the guard judges it: its name, its compiled ``inputSchema``, and its compiled
    ``outputSchema`` (None: the tool declares none, or ``--outputs off``; ``calls.outputs``)."""

    name: str
    compiled: Compiled
    output: Compiled | None = None

    @property
    def supported(self) -> bool:
        """Whether calls can be checked at all (spec decision 14)."""
        return self.compiled.supported


DUPLICATE_NAME: Final = (
    "the tool's name is listed more than once by the server: the guard cannot know which of those tools the "
    "server would run, so it refuses calls to all of them until the server's tool list changes"
)
"""The message of a tool refused because another tool of the server's list has the same name."""


def _refused(kind: str, keyword: str, message: str, *, schema_path: str = "") -> Compiled:
    """A tool the guard refuses as a whole, for a reason outside its schema's keywords (a :class:`ToolIssue`)."""
    # No profile judged it; the label is the default's, never read for a tool with no validator.
    issue = ToolIssue(kind, keyword, schema_path, None, message)  # type: ignore[arg-type]
    return core.Compiled(Report((issue,)), None, DEFAULT_PROFILE)


def _verdict(compiled: Compiled) -> dict[str, Any]:
    """One schema's verdict: ``{"supported", "issues"}`` (and ``"notes"``)."""
    verdict: dict[str, Any] = {"supported": compiled.supported, "issues": compiled.report.issues_json()}
    if compiled.notes:  # extended: a `format` 2020-12 does not define is an annotation, checked by nothing (E4)
        verdict["notes"] = [
            {"note": "annotation", "schema_path": n.schema_path, "message": n.message} for n in compiled.notes
        ]
    return verdict


def _with_verdict(tool: dict[str, Any], verdict: dict[str, Any]) -> dict[str, Any]:
    """The tool as the upstream sent it, plus ``_meta["mcp-guard/schema"] = verdict`` (forged guard keys replaced).

    The verdict's top-level ``supported``/``issues``/``notes`` are the ``inputSchema``'s (their pointers
    point into it); a tool with an ``outputSchema`` the guard judges also gets ``"output"``: that
    schema's own verdict, of the same shape, its pointers into ``outputSchema`` (:meth:`ToolTable._judged`).
    """
    annotated = dict(tool)
    meta = _strip_guard_keys(tool.get("_meta"))
    meta[SCHEMA_KEY] = verdict
    annotated["_meta"] = meta
    return annotated


def _strip_guard_keys(meta: Any) -> dict[str, Any]:
    if type(meta) is not dict:
        return {}
    return {k: v for k, v in meta.items() if not (type(k) is str and k.startswith(META_PREFIX))}


_KEY_FORMAT: Final = 2
"""``marshal`` format 2: no back-references and no interning flag, so the bytes depend on the value
alone (format 3 and later mark objects by their reference count and identity)."""


def schema_key(schema: Any) -> bytes | None:
    """An exact cache key for a parsed schema: ``marshal.dumps(schema, 2)``, or None when it has none.

    Exact: the bytes decode back to the value, types included (``true``, ``1`` and ``1.0`` are
    ``T``, ``i`` and a binary double), every string in full (UTF-8, surrogates passed) and every
    object's keys in order; so equal keys mean identical schemas, as the schema's JSON text would.
    About a third of the cost of writing that text (``benchmarks/core_speed.py --parts list``,
    issue 14 item 5). None for a value ``marshal`` refuses: an :class:`~mcp_guard.core.json_values.Inexact`
    literal, or nesting past its depth limit (the caller compiles such a schema uncached).
    """
    try:
        return marshal.dumps(schema, _KEY_FORMAT)
    except (ValueError, RecursionError):
        return None


def _build(compiled: Compiled) -> None:
    """``compiled.build()``; a fault is left for the first check, on the loop, to meet and report."""
    with contextlib.suppress(Exception):
        compiled.build()


def _finite_doubles_only(key: bytes) -> bool:
    """Whether the schema whose :func:`schema_key` is ``key`` surely holds no NaN or infinity.

    A non-finite double has every exponent bit set, so its last byte (little-endian, as
    ``marshal`` writes it) is ``0x7f`` or ``0xff``; neither byte in the key, none is there.
    Either byte elsewhere (a UTF-8 DEL, a length or integer) only costs the core's own scan.
    A parsed schema holds nothing but JSON values and ``Inexact`` literals (which have no key),
    so this is ``core.compile``'s ``known_json``.
    """
    return b"\x7f" not in key and b"\xff" not in key


class ToolTable:
    """The latest listed schema of every tool, compiled; emptied on ``list_changed``.

    Attributes:
        profile: one of ``core.PROFILES``; default ``core.DEFAULT_PROFILE``.
        hide_unsupported: leave unsupported tools out of lists and treat them as unknown
            (under ``outputs="enforce"``, a tool whose ``outputSchema`` is unsupported too).
        outputs: ``enforce``, ``report`` or ``off`` (``calls.outputs``): whether ``outputSchema``
            is classified (not under ``off``) and what that means for a call.
        label: put before the counts line logged when a complete listing's counts change
            (``"upstream fs: "``); ``None``: the table logs no counts.
        generation: bumped on every invalidation; a listing requested in an older
            generation is annotated but not cached (it may describe replaced tools).
        complete: the table holds a whole listing of the current generation, so a name
            not in it is unknown without asking the upstream again.
        host: the model host the listings are shown to (``wrap --present-for``), or None.
        presented: what that host was shown, page by page (``calls.presenting.ShownNames``: every
            page this table annotates is shown through it); None without a host.
    """

    def __init__(
        self,
        profile: str = DEFAULT_PROFILE,
        *,
        hide_unsupported: bool = False,
        label: str | None = "",
        outputs: str = DEFAULT_OUTPUTS,
        host: HostProfile | None = None,
    ) -> None:
        if profile not in PROFILES:
            core.compile({}, profile=profile)  # raises the core's ValueError for an unknown profile, early
        if outputs not in OUTPUT_MODES:
            raise ValueError(f"unknown outputs mode {outputs!r}; expected one of {', '.join(OUTPUT_MODES)}")
        self.outputs = outputs
        self.label = label
        self.profile = profile
        self.hide_unsupported = hide_unsupported
        self.host = host
        self.presented: ShownNames | None = None
        if host is not None:
            from .presenting import ShownNames  # (the lowering is loaded only for a table shown to a host)

            self.presented = ShownNames(host)
        self.generation = 0
        self.complete = False
        self._entries: dict[str, ToolEntry] = {}
        # Compiled schemas by their exact key (schema_key): a listing that repeats a schema reuses its
        # validator (2026-07-28 servers without listen streams are listed again before each call).
        self._schemas: dict[bytes, Compiled] = {}
        # Names of each page listed since the last first-page request, by the page's cursor
        # (None: the first page): a page fetched again replaces its own names, it does not collide with them.
        self._pass_pages: dict[str | None, set[str]] = {}
        self._conflicts: set[str] = set()  # names listed more than once in this generation
        self._counts: tuple[int, ...] | None = None
        # Schemas of the next listing classified ahead, off the loop (:meth:`prepare`): id -> (schema, key, compiled).
        self._prepared: dict[int, tuple[Any, bytes | None, Compiled]] = {}

    @property
    def unsupported(self) -> Literal["reject", "hide"]:
        """What a call to a tool whose schema is unsupported gets: ``reject`` (refused, naming why) or
        ``hide`` (unknown, as the tool is not listed): the call pipeline's visibility rule for ``wrap``."""
        return "hide" if self.hide_unsupported else "reject"

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, name: str) -> ToolEntry | None:
        """The entry for ``name``, or None when the guard has not seen it listed."""
        return self._entries.get(name)

    def listed(self, name: str) -> bool:
        """Whether a call to ``name``, as the client calls it, names a tool of the table (under a host, the
        name it was shown: :attr:`presented`)."""
        if self.presented is not None:
            tool = self.presented.shown.get(name)
            return tool is not None and tool.name in self._entries
        return name in self._entries

    def entries(self) -> list[ToolEntry]:
        """Every entry, in listing order."""
        return list(self._entries.values())

    def invalidate(self) -> None:
        """Forget every schema (``notifications/tools/list_changed``)."""
        self._entries.clear()
        self._conflicts.clear()
        self.generation += 1
        self.complete = False
        if self.presented is not None:
            self.presented.clear()

    def annotate(self, result: Any, *, cache: bool, first_page: bool = False, cursor: Any = None) -> Any:
        """Annotate one ``tools/list`` result; return the object to send to the client.

        Args:
            result: the JSON-RPC ``result`` of a ``tools/list`` response, as parsed.
            cache: record the tools' schemas (False for a listing that an invalidation
                overtook).
            first_page: the request carried no cursor, so a result without
                ``nextCursor`` is a complete listing.
            cursor: the request's cursor (ignored for the first page). A name counts as listed
                twice when it stands twice in this page or in another page of the same pass; the
                same page fetched again (same cursor) replaces what that page listed before.

        Returns:
            A new result object (the input is not modified); a result that is not an
            object, or has no ``tools`` list, comes back as it was.
        """
        if type(result) is not dict:
            return result
        with collector_paused():  # a big listing makes many objects, none of them cyclic (wire.repeated)
            try:
                return self._annotate(result, cache=cache, first_page=first_page, cursor=cursor)
            finally:
                self._prepared = {}

    def prepare(self, result: dict[str, Any]) -> None:
        """Classify the schemas of a ``tools/list`` result ahead of :meth:`annotate`, which then looks them up.

        Runs in a worker thread (``peer.offload``: a listing of one schema of 1,000,000 properties
        took seconds to classify, and the loop waited): it reads the table's cache and writes only
        the prepared schemas, which the loop reads once this has returned. Whatever is not prepared
        (a schema with a repeated key, a table invalidated meanwhile) :meth:`annotate` does itself.
        """
        tools = result.get("tools")
        if type(tools) is not list:
            return
        prepared: dict[int, tuple[Any, bytes | None, Compiled]] = {}
        fields = ("inputSchema",) if self.outputs == "off" else ("inputSchema", "outputSchema")
        with collector_paused():
            for tool in tools:
                for field in fields if type(tool) is dict else ():
                    schema = tool.get(field)
                    if schema is None or id(schema) in prepared or repeated_key(schema) is not None:
                        continue
                    # (a schema too big to be supported is not keyed: its key is one long C call, marshal)
                    nodes = count_nodes(schema, MAX_KEYED_NODES)
                    key = schema_key(schema) if nodes <= MAX_KEYED_NODES else None
                    compiled = self._schemas.get(key) if key is not None else None
                    if compiled is None:
                        known = key is not None and _finite_doubles_only(key)
                        compiled = self._compile(schema, known_json=known)
                    if nodes >= BUILD_AHEAD_NODES and compiled.supported:
                        _build(compiled)
                    prepared[id(schema)] = (schema, key, compiled)
            if self.presented is not None:  # --present-for: the page's lowering made here too (calls.presenting)
                keys = {id_: found[1] for id_, found in prepared.items()}  # (the schemas stay alive in `prepared`)
                self.presented.prepare(tools, self._prepared_callable(tools, prepared).__contains__, keys)
        self._prepared = prepared

    def _prepared_callable(self, tools: list[Any], prepared: dict[int, tuple[Any, bytes | None, Compiled]]) -> set[str]:
        """(In the worker thread.) The names of a page's tools callable by the schemas classified ahead (a tool
        whose schema was not is left out: the loop, which judges it then, presents the page anew)."""
        names = set()
        for tool in tools:
            found = prepared.get(id(tool.get("inputSchema"))) if type(tool) is dict else None
            if found is not None and type(tool.get("name")) is str:
                output = prepared.get(id(tool.get("outputSchema"))) if "outputSchema" in tool else None
                if self.callable(found[2], output[2] if output is not None else None):
                    names.add(tool["name"])
        return names

    def _annotate(self, result: dict[str, Any], *, cache: bool, first_page: bool, cursor: Any) -> Any:
        out = dict(result)
        if "_meta" in out:
            out["_meta"] = _strip_guard_keys(out["_meta"])
        tools = out.get("tools")
        if type(tools) is not list:
            return out
        if first_page:
            self._pass_pages.clear()
        page: str | None = None if first_page else (cursor if type(cursor) is str else repr(cursor))
        names: list[str] = [t["name"] for t in tools if type(t) is dict and type(t.get("name")) is str]
        seen: set[str] = set()
        duplicated: set[str] = set()
        for n in names:
            (duplicated if n in seen else seen).add(n)
        elsewhere = set().union(*(listed for key, listed in self._pass_pages.items() if key != page))
        duplicated |= elsewhere.intersection(names) | self._conflicts.intersection(names)
        # A name once listed twice stays refused until the upstream says its tools changed: a
        # later listing of one page alone must not resurrect either definition.
        self._conflicts |= duplicated
        self._pass_pages[page] = set(names)
        # One verdict object per distinct (inputSchema, outputSchema) compiled pair: most tools share a
        # few (a listing repeats schemas, and the cache gives them one Compiled). Shared, never modified.
        verdicts: dict[tuple[int, int], tuple[Any, ...]] = {}
        shown: list[Any] = []
        statuses: list[tuple[str | None, Status]] = []  # every entry of the page, duplicates included
        for tool in tools:
            if type(tool) is not dict:
                statuses.append((None, "malformed"))
                if not self.hide_unsupported:
                    shown.append(tool)  # not a tool at all; passed on as it came
                continue
            name = tool.get("name")
            if type(name) is not str:
                compiled = _refused(VALIDATION, "name", "the tool has no string `name`, so it cannot be called")
            elif not name:  # `check`'s rule (reports.tools.judge_tool): an empty name is malformed
                compiled = _refused(VALIDATION, "name", "the tool's `name` is empty, so it cannot be called")
            elif name in duplicated:
                # Which definition would the upstream run? Unknowable: refuse them all (fail closed).
                compiled = _refused(UNSUPPORTED, "name", DUPLICATE_NAME)
            elif "inputSchema" not in tool:
                compiled = _refused(VALIDATION, "inputSchema", "the tool has no `inputSchema`")
            elif (repeated := repeated_key(tool["inputSchema"])) is not None:
                compiled = _refused(UNSUPPORTED, "json", repeated_key_text(*repeated), schema_path=repeated[0])
            else:
                compiled = self._compiled(tool["inputSchema"])
            output = self._output(tool)
            judged = verdicts.get((id(compiled), id(output)))
            if judged is None or judged[0] is not compiled or judged[1] is not output:
                judged = verdicts[(id(compiled), id(output))] = (compiled, output, *self._judged(compiled, output))
            annotated = _with_verdict(tool, judged[2])
            status = judged[3]
            statuses.append((name if type(name) is str else None, status))
            if type(name) is str and cache:
                self._entries[name] = ToolEntry(name, compiled, output)
            if self.hide_unsupported and not self.callable(compiled, output):
                continue
            shown.append(annotated)
        out["tools"] = shown if self.presented is None else self.presented.show(shown, label=self.label or "")
        if cache and first_page and "nextCursor" not in result:
            self.complete = True
            self._log_counts(statuses)
        return out

    def _judged(self, compiled: Compiled, output: Compiled | None) -> tuple[dict[str, Any], Status]:
        """A tool's ``_meta["mcp-guard/schema"]`` verdict and the status ``check`` counts it by."""
        verdict = _verdict(compiled)
        if output is not None:
            verdict["output"] = _verdict(output)
        status = listed_status(verdict)
        if status == "supported" and output is not None and not self.callable(compiled, output):
            # Under outputs="enforce" its calls are refused: counted by its outputSchema's status (trial T1).
            status = "malformed" if any(i.kind == VALIDATION for i in output.report.issues) else "unsupported"
        return verdict, status

    def callable(self, compiled: Compiled, output: Compiled | None) -> bool:
        """Whether calls to a tool so judged can be forwarded at all: its ``inputSchema`` is supported and,
        under ``outputs="enforce"``, so is its ``outputSchema`` (a result that could not be checked is refused)."""
        return compiled.supported and (output is None or output.supported or self.outputs != "enforce")

    def _output(self, tool: dict[str, Any]) -> Compiled | None:
        """The tool's ``outputSchema`` compiled under the profile (None: it has none, or ``outputs="off"``)."""
        if self.outputs == "off" or "outputSchema" not in tool:
            return None
        schema = tool["outputSchema"]
        if (repeated := repeated_key(schema)) is not None:
            return _refused(UNSUPPORTED, "json", repeated_key_text(*repeated), schema_path=repeated[0])
        return self._compiled(schema)

    def _compiled(self, schema: Any) -> Compiled:
        """The compiled schema, from the cache when an identical schema was compiled before.

        The key is :func:`schema_key`: exact (``true`` and ``1``, or ``1`` and ``1.0``, or two
        key orders, are different keys), so a reused validator is one compiled from an
        identical schema. A schema that has no key (an inexact number literal, nesting
        deeper than ``marshal`` writes) is compiled every time.
        """
        ready = self._prepared.get(id(schema)) if self._prepared else None
        if ready is not None and ready[0] is schema:
            key = ready[1]
            if key is not None and key not in self._schemas:
                if len(self._schemas) >= MAX_CACHED_SCHEMAS:
                    self._schemas.clear()
                self._schemas[key] = ready[2]
            return ready[2]
        key = schema_key(schema)
        if key is None:
            return self._compile(schema)
        compiled = self._schemas.get(key)
        if compiled is None:
            compiled = self._compile(schema, known_json=_finite_doubles_only(key))
            if len(self._schemas) >= MAX_CACHED_SCHEMAS:
                self._schemas.clear()
            self._schemas[key] = compiled
        return compiled

    def _compile(self, schema: Any, *, known_json: bool = False) -> Compiled:
        """Compile one tool's schema; a fault in the guard makes the tool unsupported (fail closed).

        ``known_json``: the parsed schema holds no NaN, infinity or inexact literal (``core.compile``).
        """
        try:
            # defer: a listing costs one light walk per tool; the validator is built on the
            # tool's first call. The table never changes a schema it compiled.
            return core.compile(schema, profile=self.profile, defer=True, known_json=known_json)
        except Exception:
            log.exception("internal error while classifying a tool's inputSchema; the tool is refused")
            return _refused(UNSUPPORTED, "schema", "mcp-guard could not classify this schema (internal error)")

    def replace(self, tools: list[Any]) -> None:
        """Replace the table with a complete listing the guard fetched itself (all pages). Under a host, the
        tools are shown as that whole listing (what earlier pages showed is forgotten: two tools whose shown
        names collide anywhere in it are both left out, as ``check --host`` and ``serve`` do; red team 33)."""
        self._entries.clear()
        if self.presented is not None:
            self.presented.clear()
        self.annotate({"tools": tools}, cache=True, first_page=True)
        self.complete = True

    def _log_counts(self, statuses: list[tuple[str | None, Status]]) -> None:
        """Log a complete listing's counts when they changed: every listed entry counted by the status
        ``check`` gives it (``reports.tools.listed_status``); the refused are named, each name once
        (``dup ×2`` for a name whose two entries are refused)."""
        counts = tuple(sum(s == status for _, s in statuses) for status in ("supported", "unsupported", "malformed"))
        if counts == self._counts or self.label is None:
            return
        self._counts = counts
        times: dict[str, int] = {}  # each name once, with how many of its entries are refused (trial T10)
        for n, s in statuses:
            if s != "supported":
                key = repr(n) if n is not None and not n else n or "(no name)"
                times[key] = times.get(key, 0) + 1
        refused = [name if k == 1 else f"{name} ×{k}" for name, k in times.items()]
        shown = ", ".join(refused[:10]) + (", …" if len(refused) > 10 else "")
        log.info(
            "%stools: %d supported, %d unsupported, %d malformed%s",
            self.label,
            *counts,
            f" ({shown})" if refused else "",
        )
