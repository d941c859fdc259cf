"""Tool results judged against the tool's ``outputSchema``, by the rules arguments are judged by (issue 15).

Since MCP 2025-06-18 a tool may declare an ``outputSchema``; a server MUST then return
``structuredContent`` that conforms to it, and clients SHOULD validate it. The guard classifies
the ``outputSchema`` under the active profile when the tool is listed (``calls.tool_table``), and,
per ``--outputs`` (``wrap``) or ``guard.outputs`` (``serve``):

- ``enforce`` (the default): a call to a tool whose ``outputSchema`` the profile cannot enforce is
  refused before it is forwarded (:func:`unsupported_output_result`: ``unsupported_capability``,
  the pointers into ``outputSchema``): its result could not be checked, and the call would have its
  effects anyway. A result that is not ``isError`` must carry ``structuredContent`` that satisfies
  the schema; otherwise it is withheld and the client gets a tool error (``isError: true``,
  ``_meta["mcp-guard/rejection"]`` of kind :data:`OUTPUT_INVALID`, pointers and keywords, never
  values).
- ``report``: every result passes unchanged, plus ``_meta["mcp-guard/output"]`` (:data:`OUTPUT_KEY`)
  with the findings; an unsupported ``outputSchema`` is noted there (``"checked": false``), not refused.
- ``off``: results are relayed unjudged, and ``outputSchema`` is not classified.

``isError`` results are never judged (the specification asks ``structuredContent`` of successful
results only), nor are results that are not a tool's final answer (a 2026-07-28 ``resultType``
other than ``"complete"``, such as ``input_required``; a task's ``CreateTaskResult``). Instance
pointers in findings point into ``structuredContent``. No I/O; texts never hold result values.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Final, Literal, get_args

from ..core import UNSUPPORTED, VALIDATION, Issue, Report
from ..core.report import OK_REPORT, RESULT
from ..wire.meta import OUTPUT_KEY
from .refusals import MAX_REPORTED_ISSUES, MAX_TEXT_ISSUES, issue_messages, logged_reason, refusal_result

if TYPE_CHECKING:  # the compiler is loaded at the first listing, not with this module (issue 14)
    from ..core import Compiled

__all__ = [
    "DEFAULT_OUTPUTS",
    "OUTPUT_INVALID",
    "OUTPUT_MODES",
    "OutputMode",
    "OutputVerdict",
    "judge_result",
    "prejudge_result",
    "unsupported_output_result",
]

log = logging.getLogger("mcp_guard")

OutputMode = Literal["enforce", "report", "off"]
OUTPUT_MODES: Final[tuple[str, ...]] = get_args(OutputMode)
DEFAULT_OUTPUTS: Final = "enforce"

OUTPUT_INVALID: Final = "output_invalid"
"""The rejection kind (and journal/metrics outcome) of a result withheld for not matching its ``outputSchema``."""

NO_STRUCTURED: Final = "the result has no `structuredContent`, which the tool's `outputSchema` requires"
NOT_A_RESULT: Final = "the result is not a JSON object (a CallToolResult)"


class OutputVerdict:
    """What became of one ``tools/call`` result (treat it as immutable).

    Attributes:
        result: the result to send the client (the upstream's own object when unchanged).
        outcome: :data:`OUTPUT_INVALID` when the result broke its schema (withheld under
            ``enforce``, reported under ``report``); ``None`` otherwise.
        report: the findings (empty when the result was valid or not judged).

    A plain slotted class, not a frozen dataclass: one is built per judged result, and a frozen
    dataclass's ``__init__`` (``object.__setattr__`` per field) cost a tenth of a typical result's
    check (``benchmarks/output_check.py``).
    """

    __slots__ = ("outcome", "report", "result")

    def __init__(self, result: Any, outcome: str | None = None, report: Report = OK_REPORT) -> None:
        self.result = result
        self.outcome = outcome
        self.report = report

    def __repr__(self) -> str:
        return f"OutputVerdict(outcome={self.outcome!r}, report={self.report!r})"  # never the result's values


MAX_PREJUDGED: Final = 8
"""Results checked in a worker thread whose verdict the loop has not taken yet, at most. Each peer judges
one big line at a time and the loop takes its verdict right after (``peer.connection``); one that is never
taken (its call was cancelled meanwhile) holds its value until this many more come, then all are forgotten."""

_prejudged: dict[tuple[int, int], tuple[Compiled, Any, Report]] = {}
"""(id of the schema, id of the ``structuredContent``) -> (the schema, the value, the report) (both held, so
neither id is reused while the entry is kept)."""


def prejudge_result(compiled: Compiled, result: Any, mode: str) -> None:
    """Check a big result's ``structuredContent`` against ``compiled`` now, in a worker thread, for
    :func:`judge_result` to take on the loop (issue 25 items 1 and 4: a result of 1,000,000 objects was
    checked for 0.3 s on an idle loop, seconds under load, and every ``ping`` waited for it).

    Args:
        compiled: the tool's ``outputSchema``, compiled (an unsupported one is not checked).
        result: the JSON-RPC ``result`` as parsed (guard keys removed), which the loop will judge, unchanged.
        mode: ``enforce`` or ``report`` (``off``: nothing is checked).

    Nothing is kept for a result that :func:`judge_result` would not check, nor when the check raised: the
    loop then judges it as before (and logs the fault).
    """
    if mode == "off" or type(result) is not dict or not compiled.supported or "structuredContent" not in result:
        return
    if ("isError" in result or "resultType" in result or "task" in result) and not _final(result):
        return
    structured = result["structuredContent"]
    try:
        report = compiled.check(structured)
    except Exception:
        return
    if len(_prejudged) >= MAX_PREJUDGED:
        _prejudged.clear()
    _prejudged[(id(compiled), id(structured))] = (compiled, structured, report)


def _check(compiled: Compiled, structured: Any) -> Report:
    """``compiled.check(structured)``, or the report :func:`prejudge_result` made of this very value."""
    if _prejudged:
        found = _prejudged.pop((id(compiled), id(structured)), None)
        if found is not None and found[0] is compiled and found[1] is structured:
            return found[2]
    return compiled.check(structured)


def _final(result: dict[str, Any]) -> bool:
    """Whether ``result`` is a tool's final answer that ``outputSchema`` speaks of (see the module docstring)."""
    if result.get("isError") is True:
        return False
    kind = result.get("resultType")
    if kind is not None and kind != "complete":
        return False  # 2026-07-28: input_required and other interim results
    return not ("task" in result and "content" not in result)  # a task was created; its result comes later


def _findings(compiled: Compiled, result: Any) -> Report:
    if type(result) is not dict:
        return Report((Issue(VALIDATION, "structuredContent", "", None, NOT_A_RESULT),))
    if "structuredContent" not in result:
        return Report((Issue(VALIDATION, "structuredContent", "", None, NO_STRUCTURED),))
    return _checked(compiled, result["structuredContent"])


def _checked(compiled: Compiled, structured: Any) -> Report:
    """``compiled.check(structured)``; a fault in the guard is a finding (fail closed), logged."""
    try:
        return _check(compiled, structured)
    except Exception:
        return _fault()


def _fault() -> Report:
    """The finding for a fault in the guard while checking (called in an ``except``: the traceback is
    logged): the result is not known to be valid, so it is not passed as valid (fail closed)."""
    log.exception("internal error while checking a tool result against its outputSchema")
    text = "mcp-guard could not check the result (internal error)"
    return Report((Issue(VALIDATION, "schema", "", None, text),))


def judge_result(tool: str, compiled: Compiled, result: Any, mode: str, *, modern: bool) -> OutputVerdict:
    """Judge one ``tools/call`` result against the tool's classified ``outputSchema``.

    Args:
        tool: the tool's name as the client calls it (for the text and the log).
        compiled: the ``outputSchema``, compiled under the active profile.
        result: the JSON-RPC ``result`` of the response, as parsed (guard keys already removed).
        mode: ``enforce`` or ``report`` (``off`` never gets here).
        modern: the call was in the 2026-07-28 era (a withheld result's replacement then carries
            ``resultType``).

    Returns:
        The verdict: the result unchanged (valid under ``enforce``, or not judged), a new result
        carrying :data:`OUTPUT_KEY` (``report``), or the tool error that replaces it (``enforce``).
    """
    if type(result) is dict:
        if ("isError" in result or "resultType" in result or "task" in result) and not _final(result):
            return OutputVerdict(result)
        if mode == "enforce" and "structuredContent" in result:
            # The hot path (a valid result under enforce): no more work than the arguments' check
            # (benchmarks/output_check.py), so _checked's lines inline. An unsupported schema's check
            # returns its classification, never OK_REPORT: _judged then says so.
            try:
                report = _check(compiled, result["structuredContent"])
            except Exception:
                report = _fault()
            if report is OK_REPORT or report.ok:
                return OutputVerdict(result)
            return _judged(tool, compiled, result, mode, modern, report)
    return _judged(tool, compiled, result, mode, modern, None)


def _judged(
    tool: str, compiled: Compiled, result: Any, mode: str, modern: bool, report: Report | None
) -> OutputVerdict:
    """:func:`judge_result` past its hot path (``report``: the findings when already checked)."""
    if not compiled.supported:
        if mode == "enforce":  # enforce refuses such calls before they are forwarded: fail closed all the same
            return OutputVerdict(_unchecked_result(tool, compiled, modern=modern), OUTPUT_INVALID, compiled.report)
        note: dict[str, Any] = {"checked": False, "reason": UNSUPPORTED, "issues": compiled.report.issues_json()}
        return OutputVerdict(_with_output_meta(result, note))
    if report is None:
        report = _findings(compiled, result)
    report = report.about(RESULT)  # (its root is the structuredContent, not the arguments)
    if report.ok:
        if mode == "report":
            return OutputVerdict(_with_output_meta(result, {"checked": True, "valid": True, "issues": []}))
        return OutputVerdict(result)
    log.warning(
        "the result of tools/call `%s` does not match its outputSchema (%s): %s",
        tool[:64],
        "withheld" if mode == "enforce" else "reported",
        logged_reason(report, compiled.declared_names),
    )
    shown = report.issues[:MAX_REPORTED_ISSUES]
    issues = [i.to_json() for i in shown]
    more: dict[str, Any] = {"more_issues": len(report.issues) - len(shown)} if len(report.issues) > len(shown) else {}
    if mode == "report":
        note = {"checked": True, "valid": False, "issues": issues, **more}
        return OutputVerdict(_with_output_meta(result, note), OUTPUT_INVALID, report)
    details = issue_messages(report)
    text = (
        f"mcp-guard withheld the result of `{tool}`: the server's result did not match the tool's declared "
        f"output schema (`outputSchema`). {details}. The call did reach the server and may have had its effects; "
        "this is a fault of the server's result, not of the arguments."
    )
    withheld = refusal_result(OUTPUT_INVALID, tool, text, modern=modern, issues=issues, schema="outputSchema", **more)
    return OutputVerdict(withheld, OUTPUT_INVALID, report)


def _with_output_meta(result: Any, note: dict[str, Any]) -> Any:
    """``result`` with ``_meta["mcp-guard/output"] = note`` (a result that is not an object is left as it is)."""
    if type(result) is not dict:
        return result
    out = dict(result)
    meta = out.get("_meta")
    out["_meta"] = {**(meta if type(meta) is dict else {}), OUTPUT_KEY: note}
    return out


def _unchecked_result(tool: str, compiled: Compiled, *, modern: bool) -> dict[str, Any]:
    """The tool error withholding (``enforce``) a result whose ``outputSchema`` the profile cannot enforce
    (a call that reached the server all the same): kind :data:`OUTPUT_INVALID`, the schema's findings."""
    report = compiled.report
    details = "; ".join(f"`{i.keyword}` at {i.schema_path or '/'}" for i in report.issues[:MAX_TEXT_ISSUES])
    text = (
        f"mcp-guard withheld the result of `{tool}`: the tool's output schema (`outputSchema`) cannot be enforced "
        f"({details}), so the result could not be checked. The call did reach the server and may have had its effects."
    )
    issues = [i.to_json() for i in report.issues[:MAX_REPORTED_ISSUES]]
    return refusal_result(OUTPUT_INVALID, tool, text, modern=modern, issues=issues, schema="outputSchema")


def unsupported_output_result(tool: str, compiled: Compiled, *, modern: bool) -> dict[str, Any]:
    """The ``CallToolResult`` refusing a call (``enforce``) to a tool whose ``outputSchema`` the profile
    cannot enforce: kind ``unsupported_capability``, ``schema: "outputSchema"``, the findings' pointers
    into ``outputSchema``. Nothing was sent to the server."""
    report = compiled.report
    details = "; ".join(f"`{i.keyword}` at {i.schema_path or '/'}" for i in report.issues[:MAX_TEXT_ISSUES])
    what = "uses features the guard cannot enforce" if report.kind == UNSUPPORTED else "is malformed"
    text = (
        f"mcp-guard refused this call to `{tool}`: the tool's output schema (`outputSchema`) {what} ({details}), "
        "so its results could not be checked, and the call would have its effects anyway; nothing was sent to "
        "the server. Changing the arguments will not help. The guard's operator can choose another profile "
        "(`--profile`, `guard.profile`), only report results (`--outputs report`, `guard.outputs: report`), "
        "or have the server's schema changed."
    )
    kind = str(report.kind or UNSUPPORTED)
    issues = [i.to_json() for i in report.issues[:MAX_REPORTED_ISSUES]]
    return refusal_result(kind, tool, text, modern=modern, issues=issues, schema="outputSchema")
