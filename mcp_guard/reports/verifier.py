"""Deterministic verdicts on toolcall-verifier documents (``toolcall-verifier-input/v1`` and ``/v2``).

A document describes one moment of an agent's work and the tool call (or calls) the model
proposes next::

    {
      "schema_version": "toolcall-verifier-input/v2",
      "user_request": "Generate a sales report from the Q4 2024 dataset.",
      "workflow_state": {"required_steps": [...], "completed_steps": [...], "pending_steps": [...],
                         "terminal_tools": [...], "recent_errors": [...]},        recent_errors optional
      "available_tools": [{"name": "report", "description": "...", "parameters": {JSON Schema}}],
      "candidate_call": {"name": "report", "arguments": {...}},            or an array of calls
      "metadata": {"scenario_family": "...", "requires_transform": true, ...}   v2 only, optional
    }

Format rules (:class:`DocumentV1`, :class:`DocumentV2`): all keys above are required except
``recent_errors``, ``metadata`` and a call's ``arguments``; ``workflow_state`` holds string
lists; ``metadata`` holds ``scenario_family`` (string or null) and ``requires_transform``,
``requires_synthesis``, ``requires_all_tool_facts``, ``must_acknowledge_missing_data``
(boolean or null; an absent key counts as null). No other keys at the top level, in
``workflow_state`` or in ``metadata`` (``extra="forbid"``); a tool or a call object may carry
extra keys. Values are never coerced (``"true"`` is not a boolean).

**candidate_call.** The published JSON Schema says ``oneOf`` [a call object, an array of
calls, an object]. A well-formed call object matches both the call branch and the bare
object branch, so under ``oneOf`` (exactly one branch) every good call would be rejected.
That reading cannot be meant: here ``candidate_call`` is judged by its intended meaning,
a call object or a non-empty array of call objects. A call object needs a non-empty string
``name``; ``arguments``, when present, must be a JSON object (absent counts as ``{}``). A call
object without ``name`` or with ``arguments`` that are not an object (``null``, a string
holding JSON) makes the document malformed.

**Checks** (:func:`verify_document`), each with its result, in this order:

1. ``document_structure``: the document fits its version's format; if not, the verdict is
   ``deterministic_invalid`` with reason ``malformed_document`` and nothing else is checked.
   Then, for each call (an array's calls are each judged against the same state):
2. ``tool_exists``: the call names a tool of ``available_tools`` (reason ``unknown_tool``);
   a name two tools share is reason ``ambiguous_tool`` (which one would run is unknown).
3. ``arguments`` (only for a known tool): the arguments pass the tool's ``parameters`` under
   the guard's subset rules and ``--profile`` (:func:`mcp_guard.compile`). Reasons:
   ``invalid_arguments``; ``unsupported_capability`` when the schema uses a feature outside
   the subset (never a pass: the guard would refuse the call); ``malformed_schema`` when the
   schema breaks a rule of a supported keyword.
4. ``terminal_order``: a tool of ``terminal_tools`` may not be called while ``pending_steps``
   names any step but the call's own (reason ``steps_pending``). Steps are matched to calls
   by tool name, so the call that *is* the last pending step is not held back by itself.
5. ``repeated_step``: a call to a tool named in ``completed_steps`` passes with a warning
   (``repeated_step``), never a failure.

The verdict is ``valid`` when every check passed, else ``deterministic_invalid``.

:func:`verify_text` reads one JSON document or JSONL (one document per line); a line that is
not JSON is ``deterministic_invalid`` with reason ``malformed_document`` and the rest is still
judged. Float literals are parsed as the relay parses a client's message (a literal no double
holds exactly is refused, never rounded), and duplicate object keys make a document malformed.

Messages never quote argument values.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, ValidationError

from ..core import DEFAULT_PROFILE, UNSUPPORTED, Report, compile
from .documents import DocumentError, FieldError, field_errors, iter_lines, loads
from .tools import escape

__all__ = [
    "V1",
    "V2",
    "AvailableTool",
    "Call",
    "Check",
    "DocumentV1",
    "DocumentV2",
    "Metadata",
    "Verdict",
    "VerifierWarning",
    "WorkflowState",
    "parse_document",
    "render_verdicts",
    "verify_document",
    "verify_text",
]

V1: Final = "toolcall-verifier-input/v1"
V2: Final = "toolcall-verifier-input/v2"

_Name = Annotated[str, Field(min_length=1)]


class _Closed(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True, frozen=True)


class WorkflowState(_Closed):
    """Where the agent stands: step names (tool names), and the tools that end the work."""

    required_steps: list[str]
    completed_steps: list[str]
    pending_steps: list[str]
    terminal_tools: list[str]
    recent_errors: list[str] = []


class AvailableTool(_Open):
    """A tool the model may call; ``parameters`` is its JSON Schema (an object). Extra keys allowed."""

    name: _Name
    description: str
    parameters: dict[str, Any]


class Call(_Open):
    """A proposed tool call; ``arguments`` absent means ``{}``. Extra keys allowed."""

    name: _Name
    arguments: dict[str, Any] = Field(default_factory=dict)


def _call_form(value: Any) -> str:
    return "@calls" if isinstance(value, list) else "@call"


_TAGS = frozenset({"@call", "@calls"})
"""Union tags pydantic puts into error locations; they are not document keys."""

CandidateCall = Annotated[
    Annotated[Call, Tag("@call")] | Annotated[Annotated[list[Call], Field(min_length=1)], Tag("@calls")],
    Discriminator(_call_form),
]
"""A call object, or a non-empty array of them (see the module docstring on ``oneOf``)."""


class Metadata(_Closed):
    """v2 scoring metadata; every key nullable, an absent key is null."""

    scenario_family: str | None = None
    requires_transform: bool | None = None
    requires_synthesis: bool | None = None
    requires_all_tool_facts: bool | None = None
    must_acknowledge_missing_data: bool | None = None


class DocumentV1(_Closed):
    """A ``toolcall-verifier-input/v1`` document."""

    schema_version: Literal["toolcall-verifier-input/v1"]
    user_request: str
    workflow_state: WorkflowState
    available_tools: list[AvailableTool]
    candidate_call: CandidateCall

    @property
    def calls(self) -> list[Call]:
        """The candidate calls as a list (one call object: a list of one)."""
        return self.candidate_call if isinstance(self.candidate_call, list) else [self.candidate_call]


class DocumentV2(DocumentV1):
    """A ``toolcall-verifier-input/v2`` document: v1 plus an optional ``metadata`` object."""

    schema_version: Literal["toolcall-verifier-input/v2"]  # type: ignore[assignment]
    metadata: Metadata | None = None


_MODELS: dict[str, type[DocumentV1]] = {V1: DocumentV1, V2: DocumentV2}


def parse_document(value: Any) -> DocumentV1 | list[FieldError]:
    """Validate a parsed JSON value as a document of its ``schema_version``.

    Returns:
        A :class:`DocumentV1` or :class:`DocumentV2`, or every problem as :class:`FieldError`
        values (JSON Pointer and reason), in document order.
    """
    if type(value) is not dict:
        return [FieldError("", "a toolcall-verifier document must be a JSON object")]
    version = value.get("schema_version")
    model = _MODELS.get(version) if type(version) is str else None
    if model is None:
        why = "is required" if "schema_version" not in value else f"must be {V1!r} or {V2!r}"
        return [FieldError("/schema_version", why)]
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        errors = field_errors(exc, drop=_TAGS)
    return [
        FieldError(e.path, "must be a call object or an array of call objects")
        if e.path == "/candidate_call" and e.message == "must be an object"
        else e
        for e in errors
    ]


@dataclass(frozen=True, slots=True)
class Check:
    """One check and its result.

    Attributes:
        check: ``document_structure``, ``tool_exists``, ``arguments``, ``terminal_order`` or
            ``repeated_step`` (module docstring).
        ok: whether it passed.
        detail: a sentence saying what was found (never an argument value).
        call: the call's index in ``candidate_call`` (0 for a single call object); ``None``
            for ``document_structure``.
        reason: for a failure, its stable code (``malformed_document``, ``unknown_tool``,
            ``ambiguous_tool``, ``invalid_arguments``, ``unsupported_capability``,
            ``malformed_schema``, ``steps_pending``); else ``None``.
        errors: for ``document_structure``, each format problem (path and reason).
        issues: for ``arguments``, the schema core's findings (``Issue.to_json()`` shape).
    """

    check: str
    ok: bool
    detail: str
    call: int | None = None
    reason: str | None = None
    errors: tuple[FieldError, ...] = ()
    issues: tuple[dict[str, Any], ...] = ()

    def to_json(self) -> dict[str, Any]:
        """``{"check", "ok", "detail", "call", "reason"}``, plus ``errors`` / ``issues`` when there are any."""
        out: dict[str, Any] = {
            "check": self.check,
            "ok": self.ok,
            "detail": self.detail,
            "call": self.call,
            "reason": self.reason,
        }
        if self.errors:
            out["errors"] = [e.to_json() for e in self.errors]
        if self.issues:
            out["issues"] = list(self.issues)
        return out


@dataclass(frozen=True, slots=True)
class VerifierWarning:
    """A finding that does not make the call invalid (``repeated_step``)."""

    warning: str
    detail: str
    call: int | None = None

    def to_json(self) -> dict[str, Any]:
        """``{"warning", "call", "detail"}``."""
        return {"warning": self.warning, "call": self.call, "detail": self.detail}


@dataclass(slots=True)
class Verdict:
    """The verdict on one document.

    Attributes:
        index: the document's position in its file (0-based).
        line: the line it starts on (1-based), when read from text.
        schema_version: the document's version when it could be read, else ``None``.
        checks: every check run, in order.
        warnings: every warning.
    """

    index: int
    line: int | None = None
    schema_version: str | None = None
    checks: list[Check] = field(default_factory=list)
    warnings: list[VerifierWarning] = field(default_factory=list)

    @property
    def verdict(self) -> Literal["valid", "deterministic_invalid"]:
        """``valid`` when every check passed, else ``deterministic_invalid``."""
        return "valid" if all(c.ok for c in self.checks) else "deterministic_invalid"

    @property
    def reasons(self) -> list[str]:
        """The distinct reasons of the failed checks, in check order."""
        out: list[str] = []
        for c in self.checks:
            if not c.ok and c.reason is not None and c.reason not in out:
                out.append(c.reason)
        return out

    def to_json(self) -> dict[str, Any]:
        """``{"index", "line", "schema_version", "verdict", "reasons", "checks": [...], "warnings": [...]}``."""
        return {
            "index": self.index,
            "line": self.line,
            "schema_version": self.schema_version,
            "verdict": self.verdict,
            "reasons": self.reasons,
            "checks": [c.to_json() for c in self.checks],
            "warnings": [w.to_json() for w in self.warnings],
        }


def _malformed(index: int, line: int | None, errors: list[FieldError], version: Any = None) -> Verdict:
    detail = "; ".join(str(e) for e in errors)
    check = Check("document_structure", False, detail, None, "malformed_document", tuple(errors))
    return Verdict(index, line, version if version in _MODELS else None, [check])


def _issue_summary(report: Report) -> str:
    return "; ".join(f"{i.message} ({i.keyword} at {i.schema_path or 'the root'})" for i in report.issues)


def _arguments_check(position: int, call: Call, tool: AvailableTool, compiled: Any) -> Check:
    classification: Report = compiled.report
    issues = tuple(i.to_json() for i in classification.issues)
    if not classification.ok:
        if classification.kind == UNSUPPORTED:
            keywords = ", ".join(
                f"{i.keyword} at {i.schema_path or 'the root'}" for i in classification.issues if i.kind == UNSUPPORTED
            )
            detail = (
                f"the parameters of `{tool.name}` use features outside the guard's subset ({keywords}); not checked"
            )
            return Check("arguments", False, detail, position, UNSUPPORTED, issues=issues)
        detail = f"the parameters of `{tool.name}` are malformed: {_issue_summary(classification)}"
        return Check("arguments", False, detail, position, "malformed_schema", issues=issues)
    result: Report = compiled.check(call.arguments)
    if result.ok:
        return Check("arguments", True, f"the arguments match the parameters of `{tool.name}`", position)
    detail = "; ".join(i.message for i in result.issues)
    return Check(
        "arguments",
        False,
        f"the arguments do not match the parameters of `{tool.name}`: {detail}",
        position,
        "invalid_arguments",
        issues=tuple(i.to_json() for i in result.issues),
    )


def verify_document(value: Any, *, profile: str = DEFAULT_PROFILE, index: int = 0, line: int | None = None) -> Verdict:
    """The deterministic verdict on one document (a parsed JSON value), with every check.

    Args:
        value: the document.
        profile: one of ``core.PROFILES``, for the arguments check (default ``core.DEFAULT_PROFILE``).
        index: the document's position, kept in the verdict.
        line: the line the document starts on, kept in the verdict.

    Returns:
        The :class:`Verdict` (see the module docstring for the checks and reasons).

    Raises:
        ValueError: an unknown profile.
        TypeError: a Python value that is not JSON inside ``arguments`` or ``parameters``
            (a tuple, a set; never for a value parsed from text).
    """
    parsed = parse_document(value)
    if isinstance(parsed, list):
        return _malformed(index, line, parsed, value.get("schema_version") if type(value) is dict else None)
    verdict = Verdict(index, line, parsed.schema_version)
    calls = parsed.calls
    noun = "call" if len(calls) == 1 else f"array of {len(calls)} calls"
    verdict.checks.append(Check("document_structure", True, f"a well-formed {parsed.schema_version} document ({noun})"))
    state = parsed.workflow_state
    by_name: dict[str, list[AvailableTool]] = {}
    for tool in parsed.available_tools:
        by_name.setdefault(tool.name, []).append(tool)
    compiled: dict[str, Any] = {}
    completed = set(state.completed_steps)
    for position, call in enumerate(calls):
        name = call.name
        tools = by_name.get(name, [])
        if not tools:
            verdict.checks.append(
                Check("tool_exists", False, f"`{name}` is not in available_tools", position, "unknown_tool")
            )
        elif len(tools) > 1:
            verdict.checks.append(
                Check(
                    "tool_exists",
                    False,
                    f"{len(tools)} tools of available_tools are named `{name}`: which one would run is unknown",
                    position,
                    "ambiguous_tool",
                )
            )
        else:
            tool = tools[0]
            verdict.checks.append(Check("tool_exists", True, f"`{name}` is in available_tools", position))
            if name not in compiled:
                compiled[name] = compile(tool.parameters, profile=profile)
            verdict.checks.append(_arguments_check(position, call, tool, compiled[name]))
        if name in state.terminal_tools:
            others = [step for step in state.pending_steps if step != name]
            if others:
                pending = ", ".join(f"`{s}`" for s in dict.fromkeys(others))
                verdict.checks.append(
                    Check(
                        "terminal_order",
                        False,
                        f"`{name}` is a terminal tool, but steps are still pending: {pending}",
                        position,
                        "steps_pending",
                    )
                )
            else:
                verdict.checks.append(
                    Check("terminal_order", True, f"`{name}` is a terminal tool and no other step is pending", position)
                )
        else:
            verdict.checks.append(Check("terminal_order", True, f"`{name}` is not a terminal tool", position))
        if name in completed:
            detail = f"`{name}` is already in completed_steps: this call repeats a completed step"
            verdict.checks.append(Check("repeated_step", True, detail + " (a warning)", position))
            verdict.warnings.append(VerifierWarning("repeated_step", detail, position))
        else:
            verdict.checks.append(Check("repeated_step", True, f"`{name}` is not in completed_steps", position))
    return verdict


def _line_error(number: int, exc: DocumentError) -> FieldError:
    message = str(exc)
    if message.startswith("line 1 column "):
        message = f"line {number} column " + message[len("line 1 column ") :]
    return FieldError("", message)


def _is_document_line(line: str) -> bool:
    try:
        value = loads(line)
    except DocumentError:
        return False
    return type(value) is dict and "schema_version" in value


def verify_text(text: str, *, profile: str = DEFAULT_PROFILE, name: str | None = None) -> list[Verdict]:
    """The verdicts on every document of a text: one JSON document, or JSONL.

    The text is one document when it parses as one JSON value. Otherwise it is JSONL (one
    document per non-blank line) when ``name`` ends in ``.jsonl`` or ``.ndjson``, or when any
    line alone is a JSON object with a ``schema_version`` key; each line that is not JSON is
    then a ``malformed_document`` verdict of its own. Else the text is one malformed document.

    Args:
        text: the file's text.
        profile: for the arguments checks.
        name: the file's name, if any (its suffix may mark JSONL).

    Returns:
        One :class:`Verdict` per document, in order (none for a blank text).
    """
    text = text.removeprefix("\ufeff")
    lines = list(iter_lines(text))
    if not lines:
        return []
    try:
        value = loads(text)
    except DocumentError as exc:
        whole_error = exc
    else:
        return [verify_document(value, profile=profile, index=0, line=lines[0][0])]
    suffix = PurePath(name).suffix.lower() if name else ""
    if suffix in (".jsonl", ".ndjson") or any(_is_document_line(line) for _, line in lines):
        verdicts: list[Verdict] = []
        for index, (number, line) in enumerate(lines):
            try:
                value = loads(line)
            except DocumentError as exc:
                verdicts.append(_malformed(index, number, [_line_error(number, exc)]))
                continue
            verdicts.append(verify_document(value, profile=profile, index=index, line=number))
        return verdicts
    return [_malformed(0, lines[0][0], [FieldError("", str(whole_error))])]


def render_verdicts(verdicts: list[Verdict], write: Callable[[str], Any]) -> None:
    """Write the human-readable report: per document its verdict and every check, then a summary line."""
    for verdict in verdicts:
        where = f" (line {verdict.line})" if verdict.line is not None else ""
        reasons = f": {', '.join(verdict.reasons)}" if verdict.reasons else ""
        write(f"document {verdict.index}{where}: {verdict.verdict}{reasons}\n")
        for check in verdict.checks:
            mark = "ok  " if check.ok else "FAIL"
            on = f" [call {check.call}]" if check.call is not None else ""
            write(f"  {mark} {check.check}{on}: {escape(check.detail)}\n")
        for warning in verdict.warnings:
            write(f"  warning {warning.warning} [call {warning.call}]: {escape(warning.detail)}\n")
    valid = sum(1 for v in verdicts if v.verdict == "valid")
    noun = "document" if len(verdicts) == 1 else "documents"
    write(f"{len(verdicts)} {noun}: {valid} valid, {len(verdicts) - valid} deterministic_invalid\n")
