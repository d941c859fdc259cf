"""What the client sees when the guard refuses a ``tools/call``: one builder for ``wrap`` and ``serve``.

- :func:`refusal_result`: the one ``CallToolResult`` shape of every refusal (design.md, "What the
  client sees"): ``isError: true``, one text item written for a model to act on, and
  ``_meta["mcp-guard/rejection"] = {"kind", "tool", "issues", ...}`` for programs.
- :func:`rejection_result`: that result for the schema check's findings (``validation``,
  ``unsupported_capability``), with the text naming each problem by JSON Pointer.
- :func:`schema_verdict`: the schema step of a call, the same for both commands: the core's
  verdict on the arguments (or on the schema), as a :class:`CallVerdict`.
- :func:`unknown_tool`: the JSON-RPC error for a tool the client may not call or that does not
  exist (-32602, MCP 2025-11-25, SEP-1303), written once.
- :func:`logged_reason`: what the log says of a refusal's findings, the same in both commands.

A validation refusal says, for each finding, what the schema expects (``Compiled.hints``, issue 24
item 5): the declared names closest to an unknown key, the allowed choices, a missing property's
type; in its text and, as ``expected``/``did_you_mean``, in each issue's JSON. Texts name tools,
keywords, JSON Pointers and schema text (declared names, types, choices), never argument values.
No I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from itertools import zip_longest
from typing import TYPE_CHECKING, Any, Final, Protocol

from ..core import UNSUPPORTED, Issue, Report
from ..core.json_values import escape_token
from ..core.report import UNCHECKED
from ..wire.jsonrpc import INVALID_PARAMS
from ..wire.meta import REJECTION_KEY

if TYPE_CHECKING:  # the compiler is loaded at the first listing, not with this module (issue 14)
    from ..core import Compiled
    from ..core.hints import Hint

__all__ = [
    "FORWARD",
    "MAX_LOGGED_ISSUES",
    "MAX_PREJUDGED",
    "MAX_REPORTED_ISSUES",
    "MAX_TEXT_ISSUES",
    "NOT_SHOWN",
    "CallVerdict",
    "ToolIssue",
    "in_json_text",
    "issue_messages",
    "logged_pointer",
    "logged_pointers",
    "logged_reason",
    "prejudge",
    "refusal_result",
    "rejection_result",
    "schema_verdict",
    "unknown_tool",
]

MAX_REPORTED_ISSUES: Final = 100
"""A rejection's ``_meta`` carries at most this many issues (and ``more_issues``, the rest's count)."""
MAX_TEXT_ISSUES: Final = 20
"""A rejection's text names at most this many problems."""
MAX_LOGGED_ISSUES: Final = 20
"""A refusal's log line names at most this many findings."""

_ARRAY_KEYWORDS: Final = frozenset({"items", "prefixItems", "additionalItems", "unevaluatedItems", "contains"})
"""Schema keywords that apply to array elements: under one, a digits segment of the instance pointer is an index."""


@dataclass(frozen=True, slots=True)
class CallVerdict:
    """The outcome of judging one ``tools/call``.

    Exactly one of these holds: ``forward`` (send the request on), ``error`` (answer with
    a JSON-RPC error ``(code, message)``), or ``result`` (answer with this
    ``CallToolResult`` object).
    """

    forward: bool = False
    error: tuple[int, str] | None = None
    result: dict[str, Any] | None = None
    kind: str | None = None
    report: Report | None = None


FORWARD: Final = CallVerdict(forward=True)
"""The verdict of every valid call (one shared value: the per-call path builds nothing)."""


class ToolIssue(Issue):
    """A finding about the tool as a whole, not about a keyword of its ``inputSchema``.

    Same fields and JSON as :class:`~mcp_guard.core.Issue` (``keyword`` names the tool's
    field at fault: ``name``, ``inputSchema``; ``schema`` for a schema the guard could not
    classify; ``schema_path`` is ``""``). Its ``message`` is the whole reason, fit for the
    rejection's text and for the log (it holds no tool name and no value).
    """

    __slots__ = ()


class ShownLike(Protocol):
    """A tool as a model's host was shown it (``hosts.listing.ShownTool``), as a refusal reads it."""

    def not_shown_at(self, schema_path: str, instance_path: str | None = None) -> bool:
        """Whether a finding at ``schema_path`` (on the value at ``instance_path``) concerns a constraint the
        model was not shown."""
        ...  # pragma: no cover

    def shown_pointer(self, instance_path: str) -> str:
        """``instance_path`` as it is in the arguments the model sent."""
        ...  # pragma: no cover

    def json_text_at(self, instance_path: str) -> tuple[str, str] | None:
        """``(the pointer of the string of JSON text the model sent that holds instance_path, the rest of
        the pointer within that JSON)``, or None."""
        ...  # pragma: no cover


NOT_SHOWN: Final = "not in the schema your model was shown"
"""Said of a finding whose constraint the model's host was not shown (``--present-for``, issue 24 item 3)."""


_UNCHECKED_ADVICE: Final = {
    "pattern": "a string that is valid Unicode text (no lone surrogate, U+D800 to U+DFFF, outside a pair) can be "
    "checked and is judged as usual",
    "format": "a smaller regular expression can be checked and is judged as usual",
    "": "smaller or simpler arguments can be checked and are judged as usual",
}
"""What a caller can do about arguments refused unchecked (``core.compiler``), by the issue's keyword: a lone
surrogate the pattern engine cannot read, a regular expression too large to check, else the work budget
(red team 35: a lone surrogate was told to send smaller arguments)."""


def _not_shown(message: str) -> str:
    """``message`` saying its constraint was not shown: ``… (maximum)`` -> ``… (maximum; not in the schema
    your model was shown)``; a message without a closing parenthesis gains one."""
    if message.endswith(")"):
        return f"{message[:-1]}; {NOT_SHOWN})"
    return f"{message} ({NOT_SHOWN})"


_POINTER: Final = re.compile(r"`(/[^`]*)`")
"""A backquoted instance pointer in an issue's message (``core`` writes them so: `` `/a/b` is required``)."""
_NAME: Final = re.compile(r"`([^`]*)`")
"""A backquoted property name in a hint's text (`` — did you mean `a`?``)."""


def in_json_text(shown: str, rest: str) -> str:
    """The words for a place inside a value the model sent as a string of JSON text: the JSON's value itself
    (``rest`` ``""``: ``the JSON written in `/meta```) or a place within it (```/a` of the JSON written in
    `/meta```); ``shown``: the string's pointer in the model's arguments. A refusal then says what the JSON
    inside must be, in the terms of what the model sent (a string), not the server's type of that place."""
    where = f"the JSON written in `{shown or '/'}`"
    return f"`{rest}` of {where}" if rest else where


def _as_shown(message: str, at: str, shown: ShownLike) -> str:
    """``message`` with each backquoted instance pointer at or below ``at`` (the issue's) as the model's
    arguments have it (``ShownTool.shown_pointer``), or, inside a value the model sent as JSON text, as a
    place in that JSON (:func:`in_json_text`)."""

    def swap(found: re.Match[str]) -> str:
        token = found.group(1)
        if token != at and not token.startswith(at + "/"):
            return found.group(0)
        inside = shown.json_text_at(token)
        return f"`{shown.shown_pointer(token)}`" if inside is None else in_json_text(*inside)

    return _POINTER.sub(swap, message)


def _hint_as_shown(text: str, at: str, shown_at: Callable[[str], str]) -> str:
    """An unknown key's hint (at ``at``) naming the properties of its object as the model was shown them."""
    parent = at.rsplit("/", 1)[0]

    def swap(found: re.Match[str]) -> str:
        name = found.group(1)
        shown = shown_at(f"{parent}/{escape_token(name)}").rsplit("/", 1)[-1]
        return "`" + shown.replace("~1", "/").replace("~0", "~") + "`"

    return _NAME.sub(swap, text)


def _issue_text(issue: Issue | ToolIssue, hint: Hint | None, shown: ShownLike | None) -> str:
    at = getattr(issue, "instance_path", None)
    message = issue.message
    text = hint.text if hint is not None else ""
    if shown is None:
        return message + text
    if shown.not_shown_at(issue.schema_path, at if type(at) is str else None):
        message = _not_shown(message)
    if type(at) is str:
        message = _as_shown(message, at, shown)
        if text and hint is not None and hint.did_you_mean is not None:
            text = _hint_as_shown(text, at, shown.shown_pointer)
    return message + text


def issue_messages(report: Report, hints: Sequence[Hint | None] = (), shown: ShownLike | None = None) -> str:
    """The first :data:`MAX_TEXT_ISSUES` issue messages of ``report`` joined by ``"; "``, and how many more
    (``"; and N more"``): a sentence of the text of a refusal or a withheld result (messages hold no
    values), so its first letter is upper case (the messages begin lower case). ``hints``: the issues'
    hints, in order (``Compiled.hints``); each one's ``text`` follows its issue's message. ``shown``: the
    tool as the model's host was shown it (``--present-for``): a finding about a constraint the model was
    not shown says so (:data:`NOT_SHOWN`), and the text names what the model sent: its pointers (a host
    that renames properties), an unknown key's declared neighbours, and a place inside a value sent as JSON
    text as a place in that JSON (:func:`in_json_text`); the JSON keeps the server's pointers."""
    issues = report.issues[:MAX_TEXT_ISSUES]
    details = "; ".join(_issue_text(i, h, shown) for i, h in zip_longest(issues, hints[: len(issues)]))
    if len(report.issues) > MAX_TEXT_ISSUES:
        details += f"; and {len(report.issues) - MAX_TEXT_ISSUES} more"
    return details[:1].upper() + details[1:]


def rejection_result(
    tool: str,
    report: Report,
    *,
    schema_broken: bool,
    modern: bool = False,
    judged_by: str | None = None,
    hints: Sequence[Hint | None] = (),
    shown: ShownLike | None = None,
) -> dict[str, Any]:
    """The ``CallToolResult`` for a refused call (design.md, "What the client sees").

    Args:
        tool: the tool's name.
        report: the findings (schema findings when ``schema_broken``, else argument ones).
        schema_broken: the tool's schema is the problem (unsupported or malformed), not the
            arguments; the text then says that changing the arguments will not help.
        modern: the request is in the 2026-07-28 era, whose results must carry
            ``resultType`` (``"complete"`` here).
        judged_by: the profile that judged (``None``: not said); under ``extended``, the widest, the
            text of an unsupported schema does not suggest another profile (trial3 T6).
        hints: what the schema expects at each issue, in order (``Compiled.hints``; issue 24, item 5):
            its ``text`` follows the issue's message in the text, and its ``expected`` (and
            ``did_you_mean``, for an unknown key) join the issue's JSON.
        shown: the tool as the model's host was shown it (``--present-for``; :func:`issue_messages`): a
            finding about a constraint the model was not shown says so, and its JSON gains ``"shown": false``.
    """
    kind = report.kind
    reported = report.issues[:MAX_REPORTED_ISSUES]
    issues = [_with_hint(i.to_json(), h) for i, h in zip_longest(reported, hints[: len(reported)])]
    if shown is not None and not schema_broken:
        for issue in issues:
            if shown.not_shown_at(issue["schema_path"], issue.get("instance_path")):
                issue["shown"] = False
    more = len(report.issues) - len(reported)
    tool_level = [i for i in report.issues if isinstance(i, ToolIssue)]
    if schema_broken and tool_level:
        # Refused for what the tool is (listed twice, no inputSchema), not for a keyword of its schema.
        reasons = "; ".join(i.message for i in tool_level)
        text = (
            f"mcp-guard refused this call to `{tool}`: {reasons}. Nothing was sent to the server; changing the "
            "arguments will not help."
        )
    elif not schema_broken and report.unchecked:
        details = issue_messages(report)
        text = (
            f"mcp-guard refused this call to `{tool}` without checking its arguments, so nothing was sent to the "
            f"server. {details}. Whether they match the tool's input schema is not known: "
            f"{_UNCHECKED_ADVICE.get(report.issues[0].keyword, _UNCHECKED_ADVICE[''])}."
        )
    elif not schema_broken:
        details = issue_messages(report, hints, shown)
        text = (
            f"mcp-guard refused this call to `{tool}`: the arguments do not match the tool's input schema, "
            f"so nothing was sent to the server. {details}{'' if details.endswith('?') else '.'} Correct the "
            "arguments and call again."
        )
    elif kind == UNSUPPORTED:
        details = "; ".join(f"`{i.keyword}` at {i.schema_path or '/'}" for i in report.issues if i.kind == UNSUPPORTED)
        widest = judged_by == "extended"
        choose = (
            ""
            if widest
            else "choose a profile that supports these features, if one does (`--profile`, or `guard.profile` for "
            "`serve`; `extended` supports the most), "
        )
        text = (
            f"mcp-guard refused this call to `{tool}`: the tool's input schema uses features the guard "
            f"cannot enforce ({details}), so none of its calls are sent to the server. Changing the "
            "arguments will not help, and no setting makes the guard enforce a feature it cannot"
            + (" (this guard already runs `extended`, its widest profile)" if widest else "")
            + f". The guard's operator can {choose}hide such tools (`wrap "
            '--hide-unsupported`, or `guard.unsupported: "hide"` for `serve`), or have the server\'s schema changed.'
        )
    else:
        details = "; ".join(f"{i.schema_path or '/'}: {i.message}" for i in report.issues)
        text = (
            f"mcp-guard refused this call to `{tool}`: the tool's input schema itself is malformed "
            f"({details}). This is a fault of the tool's definition, not of the arguments; nothing was sent "
            "to the server."
        )
    detail = {"more_issues": more} if more else {}
    return refusal_result(str(kind), tool, text, modern=modern, issues=issues, **detail)


def refusal_result(
    kind: str, tool: str, text: str, *, modern: bool, issues: list[Any] | None = None, **detail: Any
) -> dict[str, Any]:
    """The ``CallToolResult`` refusing a call: ``text`` for the model, the rejection in ``_meta``.

    Args:
        kind: the stable code (``validation``, ``unsupported_capability``, ``too_large``,
            ``pinned_schema_changed``, ``policy_denied``, ``budget_exceeded``, ``budget_unavailable``,
            ``no_canonical_form``).
        tool: the tool's name as the client calls it.
        text: the one text item (never an argument value).
        modern: the request is in the 2026-07-28 era, whose results carry ``resultType``.
        issues: the findings' JSON (``[]`` for kinds that are not about the schema).
        detail: further members of the rejection (``limit``, ``retry_after_seconds``, ...).
    """
    rejection = {"kind": kind, "tool": tool, "issues": issues if issues is not None else [], **detail}
    result: dict[str, Any] = {
        "content": [{"type": "text", "text": text}],
        "isError": True,
        "_meta": {REJECTION_KEY: rejection},
    }
    if modern:
        result["resultType"] = "complete"
    return result


MAX_PREJUDGED: Final = 64
"""Reports :func:`prejudge` keeps for calls not yet judged (past it, they are forgotten: judged again)."""

_prejudged: dict[tuple[int, int], tuple[Compiled, Any, Report]] = {}
"""``(id(compiled), id(arguments))`` -> (the two, kept alive so their ids stand for them; the report)."""


def prejudge(compiled: Compiled, arguments: Any) -> None:
    """Check ``arguments`` against ``compiled`` now, in a worker thread, for :func:`schema_verdict` to take.

    A big call's arguments (``peer.offload``: 1,000,000 keys against a schema of many branches took
    seconds) are checked off the event loop; the call then goes through its pipeline on the loop as
    any other, and its schema step takes this report instead of checking again, when it judges
    these very arguments against this very schema (a table re-listed meanwhile judges them anew).
    """
    if not compiled.supported:
        return
    report = compiled.check(arguments, parsed=True)
    if len(_prejudged) >= MAX_PREJUDGED:
        _prejudged.clear()
    _prejudged[(id(compiled), id(arguments))] = (compiled, arguments, report)


def schema_verdict(
    tool: str,
    compiled: Compiled,
    arguments: Any,
    *,
    modern: bool,
    shown: ShownLike | None = None,
) -> CallVerdict:
    """The schema step of a call to ``tool`` (``arguments``: the call's, as the JSON-RPC decoder
    returned them, so ``Compiled.check``'s ``parsed``; ``{}`` when it has none). ``shown``: the tool as
    the model's host was shown it (a call through ``--present-for``), read only for a refusal's text
    (:func:`rejection_result`).

    Returns:
        :data:`FORWARD` when the arguments satisfy a supported schema; otherwise a verdict
        whose ``result`` refuses the call (the schema's findings when it is unsupported or
        malformed, the arguments' otherwise), with ``kind`` and ``report``.
    """
    if not compiled.supported:
        report = compiled.report
        return CallVerdict(
            result=rejection_result(tool, report, schema_broken=True, modern=modern, judged_by=compiled.profile),
            kind=report.kind,
            report=report,
        )
    found = _prejudged.pop((id(compiled), id(arguments)), None) if _prejudged else None
    if found is not None and found[0] is compiled and found[1] is arguments:
        report = found[2]  # checked in a worker thread (prejudge)
    else:
        report = compiled.check(arguments, parsed=True)  # object keys as a JSON decoder returns them: exact str
    if report.ok:
        return FORWARD
    hints = () if report.unchecked else compiled.hints(report.issues[:MAX_REPORTED_ISSUES], arguments)
    return CallVerdict(
        result=rejection_result(
            tool,
            report,
            schema_broken=False,
            modern=modern,
            hints=hints,
            shown=shown,
        ),
        kind=report.kind,
        report=report,
    )


def _with_hint(issue: dict[str, Any], hint: Hint | None) -> dict[str, Any]:
    """An issue's JSON with its hint's data: ``expected``, and ``did_you_mean`` for an unknown key."""
    if hint is not None:
        issue["expected"] = hint.expected
        if hint.did_you_mean is not None:
            issue["did_you_mean"] = list(hint.did_you_mean)
    return issue


def unknown_tool(name: str) -> tuple[int, str]:
    """The JSON-RPC error ``(code, message)`` for a call to a tool that is unknown, or denied or hidden
    (answered alike, so no answer reveals a hidden tool): -32602, the name cut at 64 characters."""
    shown = name if len(name) <= 64 else name[:64] + "…"
    return INVALID_PARAMS, f"Unknown tool: {shown}"


def logged_pointer(instance_path: str, schema_path: str, names: AbstractSet[str] = frozenset()) -> str:
    """An instance pointer fit for the log: each segment that is not a name the schema declares is ``…``.

    A segment is logged when the finding's schema pointer passes through ``properties/<it>``
    (a declared name), or when it is all digits and the schema pointer passes through an array
    keyword (:data:`_ARRAY_KEYWORDS`: an index). Any other segment is a key only the client
    chose (one matched by ``additionalProperties`` or ``patternProperties``, or reached through
    a ``$ref``, which the schema pointer does not show): client data, withheld (trial F4), unless it
    is one of ``names``, the names the schema declares anywhere (``Compiled.declared_names``: schema
    text, so a property reached through a ``$ref`` is logged by name, trial3 T3).

    Args:
        instance_path: the finding's JSON Pointer into the arguments (``""``: the root).
        schema_path: its JSON Pointer into the ``inputSchema``.
        names: the schema's declared names (default none: the schema pointer's alone).

    Returns:
        ``"(root)"``, or the pointer with undeclared segments written ``…`` (``/…/v``).
    """
    if not instance_path:
        return "(root)"
    steps = schema_path.split("/")[1:]
    declared = {steps[i + 1] for i in range(len(steps) - 1) if steps[i] == "properties"} | names
    indexed = not _ARRAY_KEYWORDS.isdisjoint(steps)
    return "".join(
        "/" + (seg if seg in declared or (indexed and seg.isdigit() and seg.isascii()) else "…")
        for seg in instance_path.split("/")[1:]
    )


def logged_pointers(report: Report, names: AbstractSet[str] = frozenset()) -> tuple[str, ...]:
    """The instance pointers of the first :data:`MAX_LOGGED_ISSUES` findings of ``report`` that have one, each
    by :func:`logged_pointer` (a call's trace: ``mcp_guard.telemetry``); a tool-level finding has none."""
    return tuple(
        logged_pointer(issue.instance_path, issue.schema_path, names)
        for issue in report.issues[:MAX_LOGGED_ISSUES]
        if issue.instance_path is not None and not isinstance(issue, ToolIssue)
    )


def logged_issue(issue: Issue, names: AbstractSet[str] = frozenset()) -> str:
    """One finding for the log: keyword and pointer, never a value, never a key the client chose.

    A finding about the tool as a whole (:class:`ToolIssue`) is its reason's first clause. One
    rule for every keyword (docs/wrap.md, Options: the log): a finding about the arguments is
    logged at its instance pointer (``minimum at /offset``, ``maximum at /times``) through
    :func:`logged_pointer` (``type at /…`` for a key the schema does not declare: it is the
    client's data); a finding with no instance pointer (about the schema itself) at its schema
    pointer (``format at schema /properties/x/format``). Until trial T6 only five keywords
    used the instance pointer, a rule kept from before :func:`logged_pointer` made every
    instance pointer safe to log.
    """
    if isinstance(issue, ToolIssue):
        return issue.message.split(":")[0]
    if issue.instance_path is not None:
        return f"{issue.keyword} at {logged_pointer(issue.instance_path, issue.schema_path, names)}"
    return f"{issue.keyword} at schema {issue.schema_path or '(root)'}"


def logged_reason(report: Report, names: AbstractSet[str] = frozenset()) -> str:
    """What the log line of a refused call says of its findings (``wrap`` and ``serve`` alike): the first
    :data:`MAX_LOGGED_ISSUES` of ``report.issues`` by :func:`logged_issue`, joined with ``"; "``
    (``names``: the schema's ``Compiled.declared_names``, see :func:`logged_pointer`).

    Arguments refused unchecked (``Report.unchecked``: a lone surrogate a pattern cannot read, the work
    budget, a recursion too deep) are logged as that, ``refused unchecked: `` and the finding's fixed
    text (it holds no value), as their refusal says: not as a keyword at the root, which reads as a
    schema mismatch (found by a new user, stop 31)."""
    if report.unchecked:
        reasons = (i.message.removesuffix(f"; {UNCHECKED}") for i in report.issues[:MAX_LOGGED_ISSUES])
        return "refused unchecked: " + "; ".join(reasons)
    return "; ".join(logged_issue(i, names) for i in report.issues[:MAX_LOGGED_ISSUES])
