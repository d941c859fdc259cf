"""``mcp-guard demo``: the guard over the built-in Sigma fixture server, driven by a real MCP client.

Starts ``mcp-guard wrap -- python fixtures/sigma/server.py --beyond`` as a subprocess,
connects to it with the MCP SDK's client over stdio (as Claude Desktop or Cursor would),
lists the tools, makes valid, invalid and unsupported calls, and prints what was forwarded
and what was refused and why. The demo is a client, not a server: its report goes to stdout.

The upstream lists the ten Sigma tools, the fixture's extras (``add``, a malformed schema,
and three schemas that need the ``extended`` profile: ``pattern`` and ``format``,
``maximum``, a local ``$ref``) and, with ``--beyond``, four schemas no profile supports
(OpenAPI's ``nullable`` and ``discriminator``, a remote ``$ref``, ``$dynamicRef``).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from ..core import DEFAULT_PROFILE
from ..reports.tools import listed_status
from ..wire.meta import REJECTION_KEY, SCHEMA_KEY

__all__ = ["DEMO_CALLS", "MARKER", "fixture_server_path", "issue_table", "run_demo", "terminal_width"]

DEMO_CALLS: list[tuple[str, dict[str, Any] | None, str, str]] = [
    ("read", {"path": "README.md", "offset": 1, "limit": 20}, "forward", "valid"),
    ("read", {"path": "README.md", "offset": 0}, "refuse", "offset below its minimum of 1"),
    ("read", {"offset": True}, "refuse", "path missing, and a boolean where an integer belongs"),
    ("todo", {"action": "add", "content": "write tests"}, "forward", "a valid enum choice"),
    ("todo", {"action": "archive"}, "refuse", "not one of the enum choices"),
    (
        "AskUserQuestion",
        {"question": "Deploy?", "options": ["yes", {"label": "no"}]},
        "forward",
        "valid oneOf items",
    ),
    (
        "AskUserQuestion",
        {"question": "Deploy?", "options": [{"value": "y"}]},
        "refuse",
        "an item matching no branch",
    ),
    ("add", {"a": 2, "b": 3.0}, "forward", "valid: 3.0 is an integer in JSON Schema"),
    ("add", {"a": 2, "b": 3, "c": 4}, "refuse", "an extra property where additionalProperties is false"),
    ("bash", None, "refuse", "no arguments at all: validated as {}"),
    ("fetch_page", {"url": "https://example.com"}, "forward", "valid: an https URI, matching the schema's pattern"),
    ("fetch_page", {"url": "ftp://example.com/page"}, "refuse", "a URI that does not match the pattern ^https?://"),
    ("resize_image", {"path": "cat.png", "width": 8192}, "refuse", "a width above its maximum of 4096"),
    ("lookup_user", {"user": {"id": 0}}, "refuse", "a $ref'd definition is enforced too: id below its minimum"),
    (
        "create_event",
        {"title": "Standup", "starts_at": "2026-12-01T09:00:00Z"},
        "unsupported",
        "unsupported: OpenAPI's nullable is not JSON Schema",
    ),
    (
        "send_payment",
        {"amount_cents": 100, "method": {"kind": "card", "card_token": "t"}},
        "unsupported",
        "unsupported: OpenAPI's discriminator is not JSON Schema",
    ),
    (
        "ship_order",
        {"order_id": "A1", "address": {}},
        "unsupported",
        "unsupported: a $ref to a schema on the web (nothing is fetched)",
    ),
    ("broken_tool", {"count": 1}, "unsupported", "the tool's schema itself is malformed"),
    ("no_such_tool", {}, "error", "a tool the server does not have"),
]
"""(tool, arguments or None for none, expected outcome, what it shows).

Outcomes: ``forward``; ``refuse`` (the arguments fail the schema: kind ``validation``);
``unsupported`` (the tool is refused as a whole, with a kind its listed verdict gave);
``error`` (a JSON-RPC error). They are those of the default profile, ``extended``; under a
profile that lists a tool unsupported, every call to it must be ``unsupported``."""


def fixture_server_path() -> Path:
    """The Sigma fixture server: inside the installed package, or in a source checkout.

    Raises:
        FileNotFoundError: neither location holds it.
    """
    here = Path(__file__).resolve().parents[1]  # the package folder (this module is in its commands/)
    for candidate in (
        here / "_fixtures" / "sigma" / "server.py",
        here.parent / "fixtures" / "sigma" / "server.py",
    ):
        if candidate.is_file():
            return candidate
    raise FileNotFoundError("the Sigma fixture server is not installed (fixtures/sigma/server.py)")


MARKER = "…"
"""Stands for the cut start of a cell too long for its column (the end of a pointer says most)."""


def terminal_width() -> int:
    """The terminal's width in columns (``COLUMNS`` first, then the terminal), or 100 when there is none."""
    return shutil.get_terminal_size((100, 24)).columns


def _fit(cell: str, width: int) -> str:
    """``cell`` padded to ``width``, or its last ``width - 1`` characters after :data:`MARKER`."""
    return cell.ljust(width) if len(cell) <= width else MARKER + cell[len(cell) - width + 1 :]


def issue_table(rows: Sequence[tuple[str, str, str]], *, width: int, indent: int = 8) -> list[str]:
    """Lines of a three-column table (keyword, pointer, message) that fit in ``width`` columns.

    The first column starts ``indent`` spaces in; columns are two spaces apart. The keyword
    column is as wide as its longest cell, at most 21 characters; the pointer column too, at
    most half of what is left (at least 14, unless the message would get fewer than 20). A
    longer cell keeps its end after :data:`MARKER`; a message longer than the rest of the line
    wraps under its column (a word longer than the column is broken). Widths are in characters
    (``len``); below about 50 columns lines may be longer than ``width``.
    """
    if not rows:
        return []
    gap = "  "
    first = min(max(len(r[0]) for r in rows), 21)
    avail = width - indent - first - 2 * len(gap)  # for the pointer and the message
    second = min(max(len(r[1]) for r in rows), max(14, avail // 2))
    if avail - second < 20:  # a narrow terminal: the message keeps 20 columns
        second = max(avail - 20, 4)
    start = indent + first + second + 2 * len(gap)
    room = max(width - start, 10)
    lines: list[str] = []
    for keyword, where, message in rows:
        head = " " * indent + _fit(keyword, first) + gap + _fit(where, second) + gap
        wrapped = textwrap.wrap(message, room, break_on_hyphens=False) or [""]
        lines.append(head + wrapped[0])
        lines.extend(" " * start + more for more in wrapped[1:])
    return lines


def _wrapped(text: str, width: int, indent: int | None = None) -> list[str]:
    """``text`` in lines of at most ``width`` characters; continuation lines are indented by
    ``indent`` spaces (default: the text's own indentation plus four)."""
    if len(text) <= width:
        return [text]
    if indent is None:
        indent = len(text) - len(text.lstrip(" ")) + 4
    return textwrap.wrap(text, width, subsequent_indent=" " * indent, break_on_hyphens=False) or [text]


def _line(out: TextIO, text: str = "") -> None:
    """Write one line of the report; a reader that went away (``| head``) ends the output quietly."""
    if out.closed:
        return
    try:
        out.write(text + "\n")
        out.flush()
    except BrokenPipeError:
        # Point the fd at /dev/null so the interpreter's final flush does not complain either.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, out.fileno())
        os.close(devnull)


def _refused_as_expected(expected: str, kind: str, verdict: dict[str, Any] | None) -> bool:
    """Whether a refusal of ``kind`` is the one a row expecting ``expected`` wants (see :data:`DEMO_CALLS`)."""
    if expected == "refuse":
        return kind == "validation" and verdict is not None and bool(verdict.get("supported"))
    if expected == "unsupported":
        listed = {i.get("kind") for i in verdict.get("issues", [])} if verdict is not None else set()
        return verdict is not None and not verdict.get("supported") and kind in listed
    return False


async def run_demo(*, profile: str = DEFAULT_PROFILE, log_level: str = "info", out: TextIO | None = None) -> int:
    """Run the demo; write a readable report to ``out`` (default stdout); return 0 on success.

    Returns 1 when the guard did not behave as the demo expects (a refused call was
    forwarded, or a valid one refused), so the demo doubles as a smoke test.
    """
    import mcp_types as types
    from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client
    from pydantic import TypeAdapter

    out = out or sys.stdout
    width = terminal_width()

    def say(text: str = "", indent: int | None = None) -> None:
        for piece in _wrapped(text, width, indent):
            _line(out, piece)

    server = fixture_server_path()
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "mcp_guard",
            "wrap",
            "--profile",
            profile,
            "--log-level",
            log_level,
            "--",
            sys.executable,
            str(server),
            "--beyond",
        ],
    )
    failures = 0
    with tempfile.TemporaryFile("w+", encoding="utf-8") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            listed = await session.list_tools()
            verdicts: dict[str, dict[str, Any]] = {t.name: (t.meta or {}).get(SCHEMA_KEY, {}) for t in listed.tools}
            say(f"mcp-guard demo — profile {profile}; upstream: the Sigma fixture server ({server})")
            say()
            say(f"tools/list through the guard: {len(listed.tools)} tools")
            for tool in listed.tools:
                verdict = (tool.meta or {}).get(SCHEMA_KEY, {})
                status = listed_status(verdict)
                if status == "supported":
                    say(f"  ✔ {tool.name:<16} supported")
                else:
                    issues = verdict.get("issues", [])
                    shown = ", ".join(f"{i['keyword']} at {i['schema_path'] or '/'}" for i in issues[:3])
                    say(f"  ✘ {tool.name:<16} {status}: {shown}", 21)
            say()
            say("tools/call through the guard:")
            for name, arguments, expected, what in DEMO_CALLS:
                shown_args = "(no arguments)" if arguments is None else json.dumps(arguments)
                verdict = verdicts.get(name)
                if verdict is not None and not verdict.get("supported") and expected in ("forward", "refuse"):
                    what += f"; but profile {profile} does not support this tool's schema"
                    expected = "unsupported"
                say(f"• {name} {shown_args}  — {what}")
                try:
                    result = await session.send_request(  # type: ignore[type-var]
                        types.CallToolRequest(params=types.CallToolRequestParams(name=name, arguments=arguments)),
                        TypeAdapter(dict[str, Any]),
                    )
                except MCPError as exc:
                    say(f"    ✘ JSON-RPC error {exc.error.code}: {exc.error.message}")
                    failures += expected != "error"
                    continue
                rejection = (result.get("_meta") or {}).get(REJECTION_KEY)
                text = " ".join(c.get("text", "") for c in result.get("content", []) if c.get("type") == "text")
                if rejection is None:
                    say(f"    ✔ forwarded; the server answered: {text}")
                    failures += expected != "forward"
                else:
                    say(f"    ✘ refused ({rejection['kind']}), not sent to the server:")
                    rows = [
                        (
                            issue["keyword"],
                            (issue["instance_path"] if issue["instance_path"] is not None else issue["schema_path"])
                            or "(root)",
                            issue["message"],
                        )
                        for issue in rejection["issues"]
                    ]
                    for text in issue_table(rows, width=width):
                        say(text)
                    failures += not _refused_as_expected(expected, rejection["kind"], verdict)
        errlog.seek(0)
        log_text = errlog.read()
    say()
    say("the guard's log (stderr) — pointers and keywords, never argument values:")
    for entry in log_text.splitlines():
        if entry.startswith("mcp-guard"):
            say(f"  {entry}")
    if failures:
        say()
        say(f"{failures} call(s) did not turn out as expected")
        return 1
    return 0
