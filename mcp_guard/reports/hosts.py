"""``mcp-guard check --host NAME``: whether each tool can be shown to a model host (issue 24, item 2).

Per tool, one of three statuses:

- ``as-is``: the host accepts the tool's schema and name unchanged (``hosts.checker``);
- ``presentable``: after the lowering (``hosts.lowering``) and, where needed, a valid name
  (``hosts.names``); the report lists what the model is not shown (each stays enforced by the
  guard, which judges every call against the server's own schema), the reshapings (each mapped
  back exactly) and the narrowings;
- ``not presentable``: why (a step without an exact inverse, a name that collides with another
  once made valid, or a tool the guard itself cannot enforce: its calls are refused anyway).

This module does no I/O and does not speak MCP.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from ..hosts import Lowered, Step, check_schema, host_profile, lower
from ..hosts.lowered import unshown
from ..hosts.names import host_names
from ..safe_text import column_widths, escape, pad
from .tools import ToolsReport

__all__ = ["HOST_STATUSES", "HostReport", "HostStatus", "HostToolReport", "report_for_host"]

HostStatus = Literal["as-is", "presentable", "not presentable"]
HOST_STATUSES: Final[tuple[HostStatus, ...]] = ("as-is", "presentable", "not presentable")


@dataclass(frozen=True, slots=True)
class HostToolReport:
    """One tool's standing with a host.

    Attributes:
        name: the server's name for the tool (None: the entry has none).
        shown_name: the name the host is shown (None when not presentable).
        status: ``as-is``, ``presentable`` or ``not presentable``.
        steps: the lowering's steps (``()`` for ``as-is``).
        reasons: why not presentable.
        schema: the schema the host is shown (None when not presentable).
        not_shown_at: where in the server's schema the constraints the host is not shown are, as the guard's
            refusals name them (``hosts.Lowered.unshown_at``, each once): a keyword reached through an inlined
            ``$ref`` is named at its place in ``$defs``, not at the position the lowering walked.
    """

    name: str | None
    shown_name: str | None
    status: HostStatus
    steps: tuple[Step, ...] = ()
    reasons: tuple[str, ...] = ()
    schema: Any = None
    not_shown_at: tuple[str, ...] = ()

    @property
    def not_shown(self) -> tuple[Step, ...]:
        """The steps that leave constraints out of what the model is shown (``hosts.lowered.unshown``; the
        guard enforces each)."""
        return tuple(s for s in self.steps if unshown(s))

    def to_json(self) -> dict[str, Any]:
        """``{"name", "shown_name", "status", "not_shown", "steps", "reasons", "schema"}``."""
        return {
            "name": self.name,
            "shown_name": self.shown_name,
            "status": self.status,
            "not_shown": list(self.not_shown_at),
            "steps": [s.to_json() for s in self.steps],
            "reasons": list(self.reasons),
            "schema": self.schema,
        }


@dataclass(slots=True)
class HostReport:
    """Every tool of a ``check`` report, judged for one host."""

    host: str
    tools: list[HostToolReport]
    version: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        """``{"total", "as-is", "presentable", "not presentable"}`` (``presentable`` excludes ``as-is``)."""
        c = Counter(t.status for t in self.tools)
        return {"total": len(self.tools), **{s: c[s] for s in HOST_STATUSES}}

    def fails(self, fail_on: str) -> bool:
        """Whether any tool is not presentable, unless ``fail_on`` is ``never`` or ``malformed``
        (``check``'s ``--fail-on``: the guard's own verdicts count as before)."""
        return fail_on == "unsupported" and any(t.status == "not presentable" for t in self.tools)

    def summary(self) -> str:
        """``"12 tools for openai-strict: 3 as-is, 8 presentable, 1 not presentable"``."""
        c = self.counts()
        noun = "tool" if c["total"] == 1 else "tools"
        return (
            f"{c['total']} {noun} for {self.host}: {c['as-is']} as-is, {c['presentable']} presentable, "
            f"{c['not presentable']} not presentable"
        )

    def to_json(self) -> dict[str, Any]:
        """``{"host", "host_version", "summary", "tools"}``."""
        return {
            "host": self.host,
            "host_version": self.version,
            "summary": self.counts(),
            "tools": [t.to_json() for t in self.tools],
            **self.extra,
        }

    def render(self) -> str:
        """The table: tool, status, shown name, and one line per thing the model is not shown
        (pointer and keyword), per reshaping (mapped back exactly) and narrowing step, or per
        reason; then the summary."""
        header = ("TOOL", "HOST STATUS", "SHOWN AS")
        rows: list[tuple[str, str, str]] = []
        details: list[list[str]] = []
        for tool in self.tools:
            name = escape(tool.name) if tool.name is not None else "(no name)"
            shown = escape(tool.shown_name) if tool.shown_name not in (None, tool.name) else ""
            rows.append((name, tool.status, shown))
            lines = [f"not presentable: {escape(r)}" for r in tool.reasons]
            dropped = [s for s in tool.steps if s.kind == "widening" and s.code == "dropped"]
            lines += [f"not shown (the guard enforces it): {escape(s.detail)} at {escape(s.pointer)}" for s in dropped]
            lines += [
                f"{s.kind}: {escape(s.detail)} at {escape(s.pointer or '/')}"
                + (" (not shown: the guard enforces it)" if unshown(s) else "")
                for s in tool.steps
                if s.code not in ("dropped", "annotation")
            ]
            details.append(lines)
        widths = column_widths([header, *rows], 3)
        out = ["  ".join(pad(c, widths[i]) for i, c in enumerate(header)).rstrip()]
        for row, lines in zip(rows, details, strict=True):
            out.append("  ".join(pad(c, widths[i]) for i, c in enumerate(row)).rstrip())
            out += [f"    {line}" for line in lines]
        out += ["", self.summary()]
        return "\n".join(out) + "\n"


def report_for_host(report: ToolsReport, host: str) -> HostReport:
    """Judge every tool of a ``check`` report for ``host``.

    Raises:
        ValueError: an unknown host.
    """
    profile = host_profile(host)
    named = [t.name for t in report.tools if t.name is not None]
    names = host_names(named, profile)
    out: list[HostToolReport] = []
    for tool in report.tools:
        out.append(_judge(tool.name, tool.status, tool.input_schema, names.shown, names.collisions, profile))
    return HostReport(profile.name, out, profile.version)


def _judge(
    name: str | None,
    status: str,
    schema: Any,
    shown_names: dict[str, str],
    collisions: dict[str, tuple[str, ...]],
    profile: Any,
) -> HostToolReport:
    if status != "supported":
        why = f"the guard cannot enforce this tool ({status}): its calls are refused"
        return HostToolReport(name, None, "not presentable", reasons=(why,))
    if name is None or name not in shown_names:
        clash = [k for k, v in collisions.items() if name in v]
        why = (
            f"its name becomes `{clash[0]}` for {profile.name}, as another tool's does: never merged"
            if clash
            else "it has no name"
        )
        return HostToolReport(name, None, "not presentable", reasons=(why,))
    shown = shown_names[name]
    if shown == name and not check_schema(schema, profile):
        return HostToolReport(name, name, "as-is", schema=schema)
    lowered: Lowered = lower(schema, profile)
    places = tuple(dict.fromkeys(lowered.unshown_at))
    if not lowered.presentable:
        return HostToolReport(name, None, "not presentable", lowered.steps, lowered.reasons, not_shown_at=places)
    return HostToolReport(name, shown, "presentable", lowered.steps, schema=lowered.schema, not_shown_at=places)
