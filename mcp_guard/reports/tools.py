"""Judging tools for ``mcp-guard check`` and ``mcp-guard schema``: reports, tables, JSON.

A *tool entry* is one item of a ``tools/list`` result (an MCP tool object) or a tool
definition in the Arcade preview format (:mod:`.tool_definitions`). :func:`judge_tool`
classifies one entry's ``inputSchema`` with the schema core and gives a :class:`ToolReport`
with one of three statuses:

- ``supported``: the schema classifies with no finding; the guard checks every call.
- ``unsupported``: the schema uses a feature outside the subset (each finding names the
  keyword and its JSON Pointer), or the list holds another tool of the same name (the guard
  refuses calls to both, as it cannot know which one the server would run).
- ``malformed``: the tool's definition is broken: a supported keyword with a wrong value
  (``"type": "strng"``), no ``name``, no ``inputSchema``, or a tool definition document that
  does not fit its format. A tool with malformed *and* unsupported findings counts as
  malformed. Malformed tools are not supported either.

:func:`tool_entries` reads the documents ``--tools-file`` accepts; :func:`render_table`
and :meth:`ToolsReport.to_json` print a report.

This module does no I/O and does not speak MCP.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from ..core import DEFAULT_PROFILE, VALIDATION, Issue, Report, compile
from ..safe_text import (
    column_widths,
    escape,
    pad,
)  # names and keys come from servers and files: no forged lines, no terminal control
from .documents import FieldError
from .status import Status, listed_status, status_of
from .tool_definitions import (
    DefinitionNote,
    definition_notes,
    is_tool_definition,
    parse_tool_definition,
    to_mcp_tool,
)

__all__ = [
    "DUPLICATE_NAME",
    "FAIL_ON",
    "Status",
    "ToolReport",
    "ToolsReport",
    "escape",
    "finding_rows",
    "judge_tool",
    "judge_tools",
    "listed_status",
    "render_issue_lines",
    "render_table",
    "report_tools",
    "tool_entries",
]

FAIL_ON: Final = ("unsupported", "malformed", "never")
"""The ``--fail-on`` thresholds: ``unsupported`` (any tool not supported, malformed included),
``malformed`` (any malformed tool), ``never``; a tool's ``outputSchema`` counts as its ``inputSchema``."""


@dataclass(frozen=True, slots=True)
class ToolReport:
    """The verdict on one tool entry.

    Attributes:
        name: the tool's name (``None`` when the entry has no string name).
        status: ``"supported"``, ``"unsupported"`` or ``"malformed"`` (module docstring).
        issues: the schema core's findings on the ``inputSchema`` (pointers into it).
        definition_errors: problems with the entry itself (no name, no ``inputSchema``, a
            tool definition that does not fit its format), pointers into the entry.
        notes: operator notes (tool definitions: ``json_parameter``, ``not_inferrable``;
            any tool: ``duplicate_name``).
        source: ``"mcp"`` (an MCP tool object) or ``"tool-definition"``.
        input_schema: the ``inputSchema`` judged (for a tool definition, the converted one);
            ``None`` when there is none.
        index: the entry's position in its list.
        output_status: the ``outputSchema``'s status, by the same rules (``None``: the tool declares
            none); under ``wrap``'s and ``serve``'s default ``--outputs enforce`` a tool whose
            ``outputSchema`` is not supported is refused (``calls.outputs``).
        output_issues: the schema core's findings on the ``outputSchema`` (pointers into it).
    """

    name: str | None
    status: Status
    issues: tuple[Issue, ...] = ()
    definition_errors: tuple[FieldError, ...] = ()
    notes: tuple[DefinitionNote, ...] = ()
    source: Literal["mcp", "tool-definition"] = "mcp"
    input_schema: Any = None
    index: int = 0
    output_status: Status | None = None
    output_issues: tuple[Issue, ...] = ()

    @property
    def supported(self) -> bool:
        """True when the guard can enforce every call's arguments."""
        return self.status == "supported"

    def counted_status(self, outputs: str = "enforce") -> Status:
        """The status the counts and ``--fail-on`` give the tool: under ``outputs="enforce"`` (the
        default ``--outputs`` of ``wrap`` and ``serve``, issue 15) the worse of its ``inputSchema``'s
        and its ``outputSchema``'s (malformed, then unsupported, then supported), as ``wrap``'s
        ``tools:`` line counts it; otherwise its ``inputSchema``'s alone."""
        out = self.output_status
        if outputs != "enforce" or out is None or self.status == "malformed" or out == "supported":
            return self.status
        return out

    def to_json(self) -> dict[str, Any]:
        """``{"name", "status", "supported", "source", "issues", "definition_errors", "notes"}``,
        plus ``"input_schema"`` for a converted tool definition, and ``"output": {"status", "supported",
        "issues"}`` (pointers into ``outputSchema``) for a tool that declares an ``outputSchema``."""
        out: dict[str, Any] = {
            "name": self.name,
            "status": self.status,
            "supported": self.supported,
            "source": self.source,
            "issues": [i.to_json() for i in self.issues],
            "definition_errors": [e.to_json() for e in self.definition_errors],
            "notes": [n.to_json() for n in self.notes],
        }
        if self.source == "tool-definition" and self.input_schema is not None:
            out["input_schema"] = self.input_schema
        if self.output_status is not None:
            out["output"] = {
                "status": self.output_status,
                "supported": self.output_status == "supported",
                "issues": [i.to_json() for i in self.output_issues],
            }
        return out


def _status(issues: Iterable[Issue], definition_errors: Sequence[FieldError]) -> Status:
    return status_of([i.kind for i in issues], broken=bool(definition_errors))


DUPLICATE_NAME: Final = "duplicate_name"
"""The note of a tool listed under a name another tool has too (shown as a finding row, :func:`finding_rows`)."""


def _duplicate_note(name: str, count: int) -> DefinitionNote:
    return DefinitionNote(
        DUPLICATE_NAME,
        "",
        "/name",
        "",
        f"{count} tools are listed under the name `{name}`: the guard refuses calls to all of them, "
        "since it cannot know which one the server would run",
    )


def _judged(schema: Any, profile: str) -> tuple[Report, tuple[DefinitionNote, ...]]:
    """The schema's classification and its notes (``extended``: formats that are annotations, E4)."""
    compiled = compile(schema, profile=profile)
    notes = tuple(
        DefinitionNote(
            "annotation", "", "/inputSchema" + n.schema_path, n.schema_path, f"`{n.schema_path}`: {n.message}"
        )
        for n in compiled.notes
    )
    return compiled.report, notes


def judge_tool(entry: Any, *, profile: str = DEFAULT_PROFILE, index: int = 0) -> ToolReport:
    """Judge one tool entry: an MCP tool object, or a tool definition (Arcade preview format).

    Args:
        entry: the parsed JSON value of the entry.
        profile: one of ``core.PROFILES``; default ``core.DEFAULT_PROFILE``.
        index: the entry's position in its list (kept in the report).

    Raises:
        ValueError: an unknown profile.
    """
    if is_tool_definition(entry):
        name = entry.get("name") if type(entry.get("name")) is str else None
        parsed = parse_tool_definition(entry)
        if isinstance(parsed, list):
            return ToolReport(name, "malformed", definition_errors=tuple(parsed), source="tool-definition", index=index)
        tool = to_mcp_tool(parsed)
        report, notes = _judged(tool["inputSchema"], profile)
        return ToolReport(
            parsed.name,
            _status(report.issues, ()),
            issues=report.issues,
            notes=(*definition_notes(parsed, profile=profile), *notes),
            source="tool-definition",
            input_schema=tool["inputSchema"],
            index=index,
        )
    if type(entry) is not dict:
        return ToolReport(
            None, "malformed", definition_errors=(FieldError("", "a tool must be a JSON object"),), index=index
        )
    errors: list[FieldError] = []
    name = entry.get("name")
    if type(name) is not str:
        errors.append(FieldError("/name", "is required" if "name" not in entry else "must be a string"))
        name = None
    elif not name:
        errors.append(FieldError("/name", "must not be empty"))
    if "inputSchema" not in entry:
        errors.append(FieldError("/inputSchema", "is required"))
        return ToolReport(name, "malformed", definition_errors=tuple(errors), index=index)
    schema = entry["inputSchema"]
    report, notes = _judged(schema, profile)
    output_status: Status | None = None
    output_issues: tuple[Issue, ...] = ()
    if "outputSchema" in entry:  # MCP 2025-06-18: judged by the same rules (calls.outputs)
        output_issues = compile(entry["outputSchema"], profile=profile).report.issues
        output_status = _status(output_issues, ())
    return ToolReport(
        name,
        _status(report.issues, errors),
        issues=report.issues,
        definition_errors=tuple(errors),
        notes=notes,
        input_schema=schema,
        index=index,
        output_status=output_status,
        output_issues=output_issues,
    )


def judge_tools(entries: Sequence[Any], *, profile: str = DEFAULT_PROFILE) -> list[ToolReport]:
    """Judge every entry (:func:`judge_tool`); tools sharing a name are marked unsupported
    (``duplicate_name`` note) unless they are malformed already."""
    reports = [judge_tool(entry, profile=profile, index=i) for i, entry in enumerate(entries)]
    counts = Counter(r.name for r in reports if r.name is not None)
    out: list[ToolReport] = []
    for report in reports:
        count = counts[report.name] if report.name is not None else 0
        if count > 1 and report.name is not None:
            status: Status = "malformed" if report.status == "malformed" else "unsupported"
            report = ToolReport(
                report.name,
                status,
                issues=report.issues,
                definition_errors=report.definition_errors,
                notes=(*report.notes, _duplicate_note(report.name, count)),
                source=report.source,
                input_schema=report.input_schema,
                index=report.index,
                output_status=report.output_status,
                output_issues=report.output_issues,
            )
        out.append(report)
    return out


def tool_entries(document: Any) -> list[Any]:
    """The tool entries of a ``--tools-file`` document.

    Accepted: a JSON object with a ``tools`` list (a saved ``tools/list`` result; other keys
    ignored), a bare list of tools, a single tool definition (Arcade preview format), or a
    single MCP tool object (with ``inputSchema``). The entries of a list may be MCP tools or
    tool definitions.

    Raises:
        ValueError: the document is none of these (the message says what was expected).
    """
    if type(document) is list:
        return document
    if type(document) is dict:
        if "tools" in document:
            tools = document["tools"]
            if type(tools) is not list:
                raise ValueError("`tools` must be an array of tools")
            return tools
        if is_tool_definition(document) or "inputSchema" in document:
            return [document]
    raise ValueError(
        "expected a JSON object with a `tools` array (a saved tools/list result), an array of tools, "
        "a tool definition, or one tool object with an `inputSchema`"
    )


@dataclass(slots=True)
class ToolsReport:
    """The report of ``check``: every tool's verdict, the profile and the counts.

    Attributes:
        tools: one :class:`ToolReport` per entry, in list order.
        profile: the profile used.
        server: ``{"name", "version"}`` of a live server (from its ``initialize`` result), else ``None``.
        source: ``"command"``, ``"url"`` or ``"file"``.
    """

    tools: list[ToolReport]
    profile: str
    server: dict[str, Any] | None = None
    source: str = "file"
    extra: dict[str, Any] = field(default_factory=dict)

    def counts(self, outputs: str = "enforce") -> dict[str, int]:
        """``{"total", "supported", "unsupported", "malformed"}``, each tool by
        :meth:`ToolReport.counted_status` (``outputs``: the ``--outputs`` mode the counts are for)."""
        c = Counter(t.counted_status(outputs) for t in self.tools)
        return {
            "total": len(self.tools),
            "supported": c["supported"],
            "unsupported": c["unsupported"],
            "malformed": c["malformed"],
        }

    def fails(self, fail_on: str, *, outputs: str = "enforce") -> bool:
        """Whether the report hits the ``--fail-on`` threshold (:data:`FAIL_ON`).

        Under ``outputs="enforce"`` (``wrap``'s and ``serve``'s default ``--outputs``, issue 15) a
        tool's ``outputSchema`` counts as its ``inputSchema`` does: a tool whose ``outputSchema`` is
        unsupported or malformed is refused, so it fails ``unsupported`` (a malformed one ``malformed``
        too). Under ``report`` or ``off`` (``serve``'s ``guard.outputs``) it is not refused, and does not."""
        if fail_on == "never":
            return False
        if fail_on == "malformed":
            return any(t.counted_status(outputs) == "malformed" for t in self.tools)
        if fail_on == "unsupported":
            return any(t.counted_status(outputs) != "supported" for t in self.tools)
        raise ValueError(f"unknown --fail-on threshold {fail_on!r}; expected one of {', '.join(FAIL_ON)}")

    def summary(self, outputs: str = "enforce") -> str:
        """One line: ``"12 tools: 7 supported, 4 unsupported, 1 malformed (profile standard)"``, counted
        as :meth:`counts` counts for ``outputs``."""
        c = self.counts(outputs)
        noun = "tool" if c["total"] == 1 else "tools"
        return (
            f"{c['total']} {noun}: {c['supported']} supported, {c['unsupported']} unsupported, "
            f"{c['malformed']} malformed (profile {self.profile})"
        )

    def to_json(self, fail_on: str | None = None) -> dict[str, Any]:
        """``{"profile", "source", "server", "summary": counts, "tools": [...]}``, plus
        ``"fail_on"`` and ``"failed"`` when a threshold is given."""
        out: dict[str, Any] = {
            "profile": self.profile,
            "source": self.source,
            "server": self.server,
            "summary": self.counts(),
            "tools": [t.to_json() for t in self.tools],
        }
        out.update(self.extra)
        if fail_on is not None:
            out["fail_on"] = fail_on
            out["failed"] = self.fails(fail_on)
        return out


def report_tools(
    entries: Sequence[Any],
    *,
    profile: str = DEFAULT_PROFILE,
    server: dict[str, Any] | None = None,
    source: str = "file",
) -> ToolsReport:
    """The :class:`ToolsReport` of a list of tool entries (:func:`judge_tools` under ``profile``)."""
    return ToolsReport(judge_tools(entries, profile=profile), profile, server=server, source=source)


def finding_rows(tool: ToolReport) -> list[tuple[str, str, str]]:
    """(keyword, pointer, detail) rows for a tool, in report order."""
    rows: list[tuple[str, str, str]] = []
    what = "malformed definition" if tool.source == "tool-definition" else "malformed tool"
    for error in tool.definition_errors:
        key = error.path.rsplit("/", 1)[-1] if error.path else "(tool)"
        rows.append((key, error.path or "(tool)", f"{what}: {error.message}"))
    for issue in tool.issues:
        kind = "malformed" if issue.kind == VALIDATION else "unsupported"
        rows.append((issue.keyword, issue.schema_path or "(root)", f"{kind}: {issue.message}"))
    if any(note.note == DUPLICATE_NAME for note in tool.notes):  # what makes the tool unsupported: a row too
        rows.append(("name", "/name", "unsupported: another tool is listed under this name (see the note)"))
    return rows


def render_table(report: ToolsReport) -> str:
    """The human-readable report: a table (tool, status, keyword, pointer, detail), notes, summary.

    A finding on the schema points into the ``inputSchema`` (detail ``unsupported: ...`` or
    ``malformed: ...``); a problem with the entry itself points into the tool object or the
    tool definition document (``malformed tool: ...``, ``malformed definition: ...``). A tool that
    declares an ``outputSchema`` has a second row, ``NAME (outputSchema)``, with that schema's
    status and findings (pointers into the ``outputSchema``).
    Every name, keyword and message is passed through :func:`escape`.
    """
    header = ("TOOL", "STATUS", "KEYWORD", "POINTER", "DETAIL")
    lines: list[tuple[str, str, str, str, str]] = []
    notes: list[str] = []
    for tool in report.tools:
        name = escape(tool.name) if tool.name is not None else f"(tool #{tool.index}, no name)"
        rows = finding_rows(tool)
        if not rows:
            lines.append((name, tool.status, "", "", ""))
        for i, (keyword, where, detail) in enumerate(rows):
            lines.append(
                (name if i == 0 else "", tool.status if i == 0 else "", escape(keyword), escape(where), escape(detail))
            )
        if tool.output_status is not None:
            out_rows = [
                (
                    i.keyword,
                    i.schema_path or "(root)",
                    f"{'malformed' if i.kind == VALIDATION else 'unsupported'}: {i.message}",
                )
                for i in tool.output_issues
            ]
            label = f"{name} (outputSchema)"
            if not out_rows:
                lines.append((label, tool.output_status, "", "", ""))
            for i, (keyword, where, detail) in enumerate(out_rows):
                lines.append(
                    (
                        label if i == 0 else "",
                        tool.output_status if i == 0 else "",
                        escape(keyword),
                        escape(where),
                        escape(detail),
                    )
                )
        for note in tool.notes:
            line = f"note: {name}: {escape(note.message)}"
            if line not in notes:  # (tools sharing a name share their note: said once)
                notes.append(line)
    widths = column_widths([header, *lines], 4)

    def fmt(row: tuple[str, str, str, str, str]) -> str:
        return "  ".join(pad(cell, widths[i]) for i, cell in enumerate(row[:4])) + ("  " + row[4] if row[4] else "")

    out = [fmt(header).rstrip()]
    out += [fmt(row).rstrip() for row in lines]
    if notes:
        out.append("")
        out += notes
    out.append("")
    out.append(report.summary())
    return "\n".join(out) + "\n"


def render_issue_lines(report: Report, *, indent: str = "  ", root: str = "the arguments object") -> list[str]:
    """One line per issue of an arguments check: ``keyword at /instance (schema /path): message``; ``root``
    names the instance's root (``the structured content`` for a result's check)."""
    lines: list[str] = []
    for issue in report.issues:
        at = issue.instance_path
        where = "" if at is None else f"at {at or root} "
        lines.append(
            f"{indent}{escape(issue.keyword)} {escape(where)}(schema {escape(issue.schema_path or 'root')}): "
            f"{escape(issue.message)}"
        )
    return lines
