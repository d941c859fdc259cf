"""The operator commands ``mcp-guard check``, ``schema`` and ``verify``: argument parsing and runs.

Exit statuses (all three): 0 nothing hits the threshold, 1 something does (a tool not
supported, a schema or arguments that fail, an invalid verifier document), 2 usage errors
(bad flags, an unreadable or unparseable file, an upstream that cannot be reached). Reports
go to stdout (a table, or JSON with ``--json``); errors go to stderr, and with ``--json``
also to stdout as ``{"error": "..."}`` so a CI step always has a JSON document to read.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ..core.profiles import PROFILE_CHOICES
from ..errors import GuardError
from ..hosts.tables import HOST_NAMES
from ..reports.documents import DocumentError, loads, read_text, source_name
from .arguments import positive_seconds

if TYPE_CHECKING:
    from ..reports.tools import ToolsReport

__all__ = ["REPORT_COMMANDS", "add_commands", "run"]

REPORT_COMMANDS: Final = ("check", "schema", "verify")

FAIL_ON: Final = ("unsupported", "malformed", "never")
"""The ``--fail-on`` thresholds (the same as ``tools.FAIL_ON``; kept here so that building the
parser imports no report models)."""

USAGE_ERROR: Final = 2

HOST_CHOICES: Final = "|".join(HOST_NAMES)


class UsageError(GuardError):
    """A problem with the command line or its input files; exit status 2."""


def add_commands(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
    common: Callable[[argparse.ArgumentParser], None],
) -> None:
    """Add the ``check``, ``schema`` and ``verify`` subcommands to ``sub``.

    Args:
        sub: the subparsers of the ``mcp-guard`` parser.
        common: adds the options every command takes (``--profile``, ``--log-level``).
    """
    check = sub.add_parser(
        "check",
        help="list a server's tools (or read a tools file) and report which ones the guard can enforce",
        description="Classify every tool's inputSchema: supported, unsupported (with each feature outside the "
        "subset and its JSON Pointer) or malformed. Lists every page of a live server as a client declaring "
        "sampling, elicitation and roots. Exit status: 0 nothing hits --fail-on, 1 something does, 2 usage "
        "errors or an upstream that cannot be reached.",
        usage=f"mcp-guard check [--profile {PROFILE_CHOICES}] [--json] [--fail-on unsupported|malformed|never] "
        f"[--host {HOST_CHOICES}] "
        "[--timeout SECONDS] (--tools-file FILE | (--upstream-url URL | --upstream-url-env ENVVAR) "
        "[--header NAME=VALUE]... "
        "[--header-env NAME=ENVVAR]... "
        "| --config FILE | -- COMMAND [ARGS...])",
    )
    common(check)
    check.set_defaults(command_parser=check)
    check.add_argument(
        "--tools-file",
        metavar="FILE",
        help="a saved tools/list result (an object with a `tools` array), an array of tools, or a tool "
        "definition (Arcade preview format); `//` and `/* */` comments allowed; `-` reads stdin",
    )
    check.add_argument("--upstream-url", metavar="URL", help="a streamable HTTP MCP endpoint to list")
    check.add_argument(
        "--upstream-url-env",
        metavar="ENVVAR",
        help="the same, read from the environment variable ENVVAR (for a URL holding a secret: ?apiKey=..., "
        "user:password@; it is never printed)",
    )
    check.add_argument(
        "--config",
        metavar="FILE",
        help="a gateway config (mcpServers format): report every enabled upstream, reachable or not, its tools "
        "(judged under the config's guard.profile), and how the gateway offers them; exit status as for the "
        "other sources (2 when an upstream cannot be reached or listed)",
    )
    check.add_argument(
        "--lock",
        metavar="PATH",
        help="with --config: the lock file, as serve --lock PATH (default: guard.lock, else FILE.lock, if present)",
    )
    check.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="an HTTP header for --upstream-url (repeatable; 'NAME: VALUE' works too); for secrets use --header-env",
    )
    check.add_argument(
        "--header-env",
        action="append",
        default=[],
        metavar="NAME=ENVVAR",
        help="an HTTP header for --upstream-url whose value is the environment variable ENVVAR, e.g. "
        "Authorization=UPSTREAM_AUTH with UPSTREAM_AUTH='Bearer ...' (repeatable; values are never printed)",
    )
    check.add_argument(
        "--fail-on",
        choices=FAIL_ON,
        default="unsupported",
        help="exit 1 when any tool is unsupported or malformed (unsupported, the default), only when one is "
        "malformed (malformed), or never",
    )
    check.add_argument("--json", action="store_true", help="print the report as one JSON document")
    check.add_argument(
        "--host",
        choices=HOST_NAMES,
        metavar="NAME",
        help=f"also report, per tool, whether model host NAME ({HOST_CHOICES}) accepts its schema and name as-is, "
        "after the lowering (presentable: what the model is not shown stays enforced by the guard), or not "
        "(not presentable, and why); with --fail-on unsupported a tool not presentable fails the check too",
    )
    check.add_argument(
        "--timeout",
        type=positive_seconds,
        default=30.0,
        metavar="SECONDS",
        help="time limit for listing a live server (default 30)",
    )
    check.add_argument("upstream", nargs=argparse.REMAINDER, metavar="COMMAND [ARGS...]", help="the server command")

    schema = sub.add_parser(
        "schema",
        help="classify one schema (or tool, or tool definition) and optionally check arguments against it",
        description="Classify one inputSchema against the guard's subset; FILE holds a JSON Schema, an MCP tool "
        "object, or a tool definition (Arcade preview format); `//` and `/* */` comments allowed; `-` reads stdin. "
        "With --arguments, check them as the guard would check a tools/call. Exit status: 0 supported (and the "
        "arguments pass), 1 not, 2 usage errors.",
        usage=f"mcp-guard schema [--profile {PROFILE_CHOICES}] [--json] [--output] FILE "
        "[--arguments JSON | --arguments @FILE]",
    )
    common(schema)
    schema.set_defaults(command_parser=schema)
    schema.add_argument("file", metavar="FILE", help="the schema file (`-` for stdin)")
    schema.add_argument(
        "--arguments", metavar="JSON|@FILE", help="arguments to check: a JSON object, or @FILE to read them from a file"
    )
    schema.add_argument("--json", action="store_true", help="print the report as one JSON document")
    schema.add_argument(
        "--output",
        action="store_true",
        help="judge an outputSchema instead: FILE holds one, or an MCP tool whose outputSchema is judged; "
        "--arguments then holds a result's structuredContent to check, as wrap --outputs enforce would",
    )

    verify = sub.add_parser(
        "verify",
        help="judge toolcall-verifier documents (v1, v2): valid or deterministic_invalid, with every check",
        description="Read one toolcall-verifier-input/v1 or /v2 document (JSON) or many (JSONL, one per line) and "
        "give each a deterministic verdict with every check. Exit status: 0 all valid, 1 any invalid, 2 usage errors.",
        usage=f"mcp-guard verify [--profile {PROFILE_CHOICES}] [--json] FILE|-",
    )
    common(verify)
    verify.set_defaults(command_parser=verify)
    verify.add_argument("file", metavar="FILE", help="the document file (`-` for stdin)")
    verify.add_argument("--json", action="store_true", help="one JSON object per document (JSONL)")


def _out() -> Any:
    stream = sys.stdout
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is not None:
        with contextlib.suppress(ValueError, OSError):  # a detached stream keeps its settings
            reconfigure(errors="backslashreplace")
    return stream


def _dump(value: Any) -> str:
    """One ``--json`` document: readable non-ASCII text, but nothing that drives or reorders a terminal
    (``safe_text.escape_json``: bidi overrides, C1 controls, U+2028/2029 and DEL as ``\\uNNNN``)."""
    from ..safe_text import escape_json

    return escape_json(json.dumps(value, ensure_ascii=False, allow_nan=False))


def run(args: argparse.Namespace) -> int:
    """Run the subcommand ``args.command`` (one of :data:`REPORT_COMMANDS`); return the exit status."""
    from ..reports.tools import escape

    as_json = bool(getattr(args, "json", False))
    try:
        if args.command == "check":
            return _check(args)
        if args.command == "schema":
            return _schema(args)
        if args.command == "verify":
            return _verify(args)
    except KeyboardInterrupt:
        return 130
    except UsageError as exc:
        message = str(exc)
        sys.stderr.write(f"mcp-guard {args.command}: error: {escape(message)}\n")
        if as_json:
            _out().write(_dump({"error": message}) + "\n")
        return USAGE_ERROR
    raise ValueError(f"not a report command: {args.command!r}")  # pragma: no cover


def _read_document(path: str, *, comments: bool) -> Any:
    try:
        return loads(read_text(path), comments=comments)
    except DocumentError as exc:
        where = source_name(path)
        message = str(exc)
        raise UsageError(message if message.startswith(f"{where}:") else f"{where}: {message}") from None


# --- check -------------------------------------------------------------------------------------


def _headers(values: list[str], from_env: list[str]) -> dict[str, str]:
    """``--header`` and ``--header-env``, parsed as ``wrap`` parses them (``http_upstream.parse_headers``)."""
    import os

    from ..peer.http_upstream import parse_headers

    try:
        return parse_headers(values, from_env, os.environ)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _check(args: argparse.Namespace) -> int:
    command = list(args.upstream)
    if command and command[0] == "--":
        command = command[1:]
    url_given = args.upstream_url is not None or args.upstream_url_env is not None
    sources = [bool(command), args.tools_file is not None, url_given, args.config is not None]
    if sum(sources) != 1 or (args.upstream_url is not None and args.upstream_url_env is not None):
        args.command_parser.error(
            "give exactly one of --tools-file FILE, --upstream-url URL (or --upstream-url-env ENVVAR), "
            "--config FILE, or -- COMMAND [ARGS...], e.g. mcp-guard check -- uvx mcp-server-time"
        )
    url = args.upstream_url
    if args.upstream_url_env is not None:
        import os

        url = os.environ.get(args.upstream_url_env, "").strip() or None
        if url is None:
            args.command_parser.error(
                f"--upstream-url-env: the environment variable {args.upstream_url_env} is not set or empty"
            )
    if args.lock is not None and args.config is None:
        args.command_parser.error("--lock applies only to --config")
    if args.config is not None:
        from .gateway import run_check

        return run_check(
            args.config, timeout=args.timeout, as_json=args.json, fail_on=args.fail_on, host=args.host, lock=args.lock
        )
    if (args.header or args.header_env) and not url_given:
        args.command_parser.error("--header and --header-env apply only to --upstream-url")
    from ..reports.tools import report_tools, tool_entries

    if args.tools_file is not None:
        document = _read_document(args.tools_file, comments=True)
        try:
            entries = tool_entries(document)
        except ValueError as exc:
            raise UsageError(f"{args.tools_file}: {exc}") from None
        report = report_tools(entries, profile=args.profile, source="file")
    else:
        import anyio

        from ..reports.listing import ListingError, list_tools

        headers = _headers(args.header, args.header_env)
        try:
            listing = anyio.run(
                lambda: list_tools(
                    command=command or None,
                    url=url,
                    headers=headers or None,
                    timeout=args.timeout,
                    client_name="mcp-guard-check",
                )
            )
        except ListingError as exc:
            raise UsageError(str(exc)) from None
        report = report_tools(
            listing.tools, profile=args.profile, server=listing.server, source="command" if command else "url"
        )
        report.extra["protocol_version"] = listing.protocol_version
        report.extra["pages"] = listing.pages
    return _print_check(report, args)


def _print_check(report: ToolsReport, args: argparse.Namespace) -> int:
    from ..reports.tools import escape, render_table

    out = _out()
    host = None
    if args.host is not None:
        from ..reports.hosts import report_for_host

        host = report_for_host(report, args.host)
    failed = report.fails(args.fail_on) or (host is not None and host.fails(args.fail_on))
    if args.json:
        document = report.to_json(args.fail_on)
        if host is not None:
            document["host"] = host.to_json()
            document["failed"] = failed
        out.write(_dump(document) + "\n")
    else:
        if report.server is not None:
            name, version = report.server.get("name"), report.server.get("version")
            shown = " ".join(escape(str(x)) for x in (name, version) if x not in (None, ""))
            out.write(f"server: {shown}\n\n")
        out.write(render_table(report))
        if host is not None:
            out.write("\n" + host.render())
    out.flush()
    return 1 if failed else 0


# --- schema ------------------------------------------------------------------------------------


REPEATED_KEY_NOTE = (
    "mcp-guard: note: --arguments repeats a key in an object; read as the relay reads a tools/call, "
    "the last value of each key (what the guard judges and forwards)"
)


def _arguments(text: str) -> Any:
    """The arguments of ``--arguments`` (JSON or ``@FILE``), read as the relay reads a call's
    (``documents.loads_as_relayed``: a repeated key keeps its last value, with a note on stderr)."""
    from ..reports.documents import loads_as_relayed

    if text.startswith("@"):
        path = text[1:]
        try:
            value, repeated = loads_as_relayed(read_text(path))
        except DocumentError as exc:
            where, message = source_name(path), str(exc)
            raise UsageError(
                f"--arguments: {message if message.startswith(f'{where}:') else f'{where}: {message}'}"
            ) from None
    else:
        undecodable = _not_utf8_at(text)
        if undecodable is not None:
            # Python hands argv bytes that are not UTF-8 over as lone surrogates; the relay refuses such a line.
            raise UsageError(f"--arguments: not UTF-8 text (byte {undecodable})")
        try:
            value, repeated = loads_as_relayed(text)
        except DocumentError as exc:
            raise UsageError(f"--arguments: {exc} (give a JSON object, or @FILE)") from None
    if repeated:
        print(REPEATED_KEY_NOTE, file=sys.stderr)
    return value


def _not_utf8_at(text: str) -> int | None:
    """The offset of the first byte that is not UTF-8 in a command-line argument, or None when it is UTF-8.

    ``sys.argv`` carries such bytes as lone surrogates (PEP 383, ``surrogateescape``); the
    characters before the first one came from valid UTF-8, so their encoded length is its offset.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return len(text[: exc.start].encode("utf-8"))
    return None


def _schema(args: argparse.Namespace) -> int:
    from ..core import Report, compile
    from ..core.report import RESULT
    from ..reports.tool_definitions import is_tool_definition
    from ..reports.tools import ToolsReport, judge_tool, render_issue_lines, render_table

    document = _read_document(args.file, comments=True)
    arguments = _arguments(args.arguments) if args.arguments is not None else None
    label = "stdin" if args.file == "-" else Path(args.file).name
    if type(document) is dict and ("tools" in document and "inputSchema" not in document and "type" not in document):
        raise UsageError(f"{label} holds a list of tools; use mcp-guard check --tools-file {args.file}")
    if type(document) is list:
        raise UsageError(f"{label} holds a list; use mcp-guard check --tools-file {args.file}")
    if args.output:
        if type(document) is dict and "inputSchema" in document:
            if "outputSchema" not in document:
                raise UsageError(f"{label} holds a tool without an `outputSchema`")
            name = document.get("name") if type(document.get("name")) is str else label
            document = {"name": f"{name} (outputSchema)", "inputSchema": document["outputSchema"]}
        else:
            document = {"name": label, "inputSchema": document}
        tool = judge_tool(document, profile=args.profile)
        entry_kind = "outputSchema"
    elif is_tool_definition(document) or (type(document) is dict and "inputSchema" in document):
        tool = judge_tool(document, profile=args.profile)
        entry_kind = "tool-definition" if tool.source == "tool-definition" else "tool"
    else:
        tool = judge_tool({"name": label, "inputSchema": document}, profile=args.profile)
        entry_kind = "schema"
    report = ToolsReport([tool], args.profile, source="file")
    checked: Report | None = None
    if arguments is not None and tool.supported:
        checked = compile(tool.input_schema, profile=args.profile).check(arguments)
    failed = not tool.supported or (checked is not None and not checked.ok)
    out = _out()
    if args.json:
        body = report.to_json()
        payload: dict[str, Any] = {
            "profile": args.profile,
            "document": entry_kind,
            "tool": body["tools"][0],
            "arguments": None,
        }
        if args.arguments is not None:
            payload["arguments"] = (
                {"checked": False, "ok": False, "kind": None, "issues": []}
                if checked is None
                else {"checked": True, **checked.to_json()}
            )
        payload["failed"] = failed
        out.write(_dump(payload) + "\n")
    else:
        out.write(render_table(report))
        if args.arguments is not None:
            out.write("\n")
            what, ok, bad = (
                ("structuredContent", "pass this result on", "withhold this result")
                if args.output
                else ("arguments", "forward this call", "refuse this call")
            )
            if checked is None:
                out.write(f"{what}: not checked: the schema is not supported, so the guard refuses every call\n")
            elif checked.ok:
                out.write(f"{what}: valid; the guard would {ok}\n")
            else:
                out.write(f"{what}: invalid; the guard would {bad}:\n")
                if args.output:  # (a result's structuredContent: not "the arguments")
                    lines = render_issue_lines(checked.about(RESULT), root=RESULT)
                else:
                    lines = render_issue_lines(checked)
                out.write("\n".join(lines) + "\n")
    out.flush()
    return 1 if failed else 0


# --- verify ------------------------------------------------------------------------------------


def _verify(args: argparse.Namespace) -> int:
    from ..reports.verifier import render_verdicts, verify_text

    try:
        text = read_text(args.file)
    except DocumentError as exc:
        raise UsageError(str(exc)) from None
    verdicts = verify_text(text, profile=args.profile, name=None if args.file == "-" else args.file)
    if not verdicts:
        raise UsageError(f"{source_name(args.file)}: no documents (the input is empty)")
    out = _out()
    if args.json:
        for verdict in verdicts:
            out.write(_dump(verdict.to_json()) + "\n")
    else:
        render_verdicts(verdicts, out.write)
    out.flush()
    return 1 if any(v.verdict != "valid" for v in verdicts) else 0
