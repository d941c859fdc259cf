"""The gateway's subcommands: ``pin``, ``journal``, ``serve`` (run by :mod:`.serving`), ``check --config``'s body.

They print to stdout (none of them is an MCP server on stdio) and log to stderr. Exit
status: 0 success, 1 failure (``pin``: the lock file could not be written), 2 usage or
configuration errors, unreadable input (a journal that cannot be read) and a server that could
not be listed (``pin``, as ``check --config``). ``check --config`` exits as ``check -- COMMAND``
does (see :func:`run_check`).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TextIO

from .arguments import port, positive_seconds
from .tracing import add_otel_option

if TYPE_CHECKING:  # the commands import their modules when they run: `wrap` starts without them
    from ..config import GatewayConfig, HttpServer, StdioServer
    from ..reports.tools import ToolReport
    from ..sessions.catalog import Catalog

DEFAULT_TIMEOUT = 30.0
"""Seconds one upstream gets to start, say hello (``initialize`` or ``server/discover``) and list all its tools."""

__all__ = [
    "UpstreamListing",
    "add_gateway_commands",
    "list_server",
    "list_servers",
    "run_check",
    "run_gateway_command",
    "run_journal",
    "run_pin",
]

log = logging.getLogger("mcp_guard")

COMMANDS = ("pin", "journal", "serve")


def add_gateway_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser], log_levels: tuple[str, ...]) -> None:
    """Add ``pin``, ``journal`` and ``serve`` to the ``mcp-guard`` subcommands."""
    pin = sub.add_parser(
        "pin",
        help="list every upstream of a gateway config and write their tools' definitions and digests to a lock file",
        description="Start or reach every enabled server of FILE, list its tools, and write the lock file: "
        'JSON {"version": 2, "tools": {"server/tool": {"digest": "sha256:...", "definition": {...}}}}, each '
        "definition the tool minus _meta and each digest over its RFC 8785 canonical JSON. Nothing is written "
        "unless every enabled server answered. Prints what was added, changed (field by field) and removed "
        "since the lock file it replaces.",
    )
    pin.add_argument("--config", required=True, metavar="FILE", help="the gateway config (mcpServers format)")
    pin.add_argument("--lock", metavar="PATH", help="the lock file (default: guard.lock, else FILE.lock)")
    pin.add_argument(
        "--timeout", type=positive_seconds, default=DEFAULT_TIMEOUT, help="seconds per upstream (default 30)"
    )
    pin.add_argument("--log-level", choices=log_levels, default="warning", help="stderr log level (default warning)")
    pin.set_defaults(command_parser=pin)

    journal = sub.add_parser(
        "journal",
        help="summarize a gateway journal: per tool and per caller, calls, rejections by kind, errors, unfinished",
        description="Read a JSONL journal written by the gateway (FILE), or the journal in PostgreSQL (a "
        "postgresql:// URI, or --config FILE whose guard.journal names one), and print, per server and tool, the "
        "calls, outcomes, rejections by kind, errors, and calls that have an intent but no outcome; then the same "
        "per caller (subject and issuer) when the records name principals (OAuth on the HTTP front). "
        "`mcp-guard journal init --config FILE` creates the journal's tables in the database of guard.journal, or "
        "upgrades them to this guard's schema (idempotent; run it before the replicas start).",
    )
    journal.add_argument(
        "file", metavar="FILE", nargs="?", help="the journal file, a postgresql:// URI, or `init` (see above)"
    )
    journal.add_argument("--config", metavar="FILE", help="the gateway config whose guard.journal to read or init")
    journal.add_argument("--json", action="store_true", help="print the summary as JSON")
    journal.add_argument("--log-level", choices=log_levels, default="warning", help="stderr log level")
    journal.set_defaults(command_parser=journal)

    serve = sub.add_parser(
        "serve",
        help="run one guard (stdio, or streamable HTTP) in front of every server of a gateway config",
        description="Run as an MCP server on stdio (or, with --http, over streamable HTTP at /mcp, each "
        "session with its own upstreams) in front of every enabled server of FILE: tools and prompts "
        "namespaced SERVER__NAME in one list, resources routed by URI, every tools/call checked (schema, "
        "pinning, policy, budget) and journaled. Exit status: 0 the client closed the connection (or "
        "SIGTERM/SIGHUP), 1 the journal or lock file cannot be used, 2 configuration errors.",
    )
    serve.add_argument("--config", required=True, metavar="FILE", help="the gateway config (mcpServers format)")
    serve.add_argument("--lock", metavar="PATH", help="the lock file (default: guard.lock, else FILE.lock, if present)")
    serve.add_argument("--journal", metavar="FILE", help="append-only JSONL journal (overrides guard.journal)")
    serve.add_argument(
        "--request-timeout",
        type=positive_seconds,
        default=None,
        metavar="SECONDS",
        help="as for wrap: answer a request a server has not answered within SECONDS (counted again from each "
        "progress notification) with a JSON-RPC error, and cancel it at the server (a tools/call is journaled "
        "timed_out); default: no limit. subscriptions/listen and tasks/result have none. Also the limit for the "
        "guard's own requests (handshake, listings; default 30)",
    )
    serve.add_argument(
        "--metrics-port",
        type=port,
        default=None,
        metavar="N",
        help="on stdio: serve /metrics (Prometheus text format), /health and /ready over HTTP on port N "
        "(0: any free port, logged); the HTTP front (--http) serves them beside /mcp anyway",
    )
    serve.add_argument(
        "--metrics-host",
        default="127.0.0.1",
        metavar="HOST",
        help="the address --metrics-port binds (default 127.0.0.1)",
    )
    serve.add_argument(
        "--replica-id",
        metavar="NAME",
        default=None,
        help="this replica's id in the rows of a journal in PostgreSQL (default: $MCP_GUARD_REPLICA_ID, else HOST-PID)",
    )
    serve.add_argument(
        "--present-for",
        default=None,
        metavar="NAME",
        help="show the model host NAME (openai-strict|openai|gemini|gemini-json|anthropic) every tool with a "
        "schema and a name it accepts; calls are mapped back and judged against the server's own schema "
        "(overrides guard.presentFor; docs/hosts.md)",
    )
    add_otel_option(serve)
    serve.add_argument("--log-level", choices=log_levels, default="info", help="stderr log level")
    serve.set_defaults(command_parser=serve)


def run_gateway_command(args: argparse.Namespace) -> int:
    """Run a command added by :func:`add_gateway_commands`; returns the exit status."""
    if args.command == "pin":
        return run_pin(args.config, lock=args.lock, timeout=args.timeout)
    if args.command == "journal":
        if args.file is None or args.file == "init" or args.file.startswith(("postgresql:", "postgres:")):
            from .journal_db import run_journal_database

            return run_journal_database(args.file, config_path=args.config, as_json=args.json)
        return run_journal(args.file, as_json=args.json)
    if args.command == "serve":
        from .serving import run_serve

        return run_serve(
            args.config,
            lock=args.lock,
            journal=args.journal,
            request_timeout=args.request_timeout,
            http=getattr(args, "http_config", None),
            max_message_bytes=getattr(args, "max_message_bytes", None),
            metrics_port=args.metrics_port,
            metrics_host=args.metrics_host,
            replica=args.replica_id or os.environ.get("MCP_GUARD_REPLICA_ID") or None,
            otel=args.otel,
            present_for=args.present_for,
        )
    raise ValueError(f"not a gateway command: {args.command}")


def _load(path: str, out: TextIO) -> GatewayConfig | None:
    from ..config import ConfigError, load_config

    try:
        return load_config(path)
    except ConfigError as exc:
        print(f"mcp-guard: {exc}", file=out)
        return None


def run_pin(
    config_path: str, *, lock: str | None = None, timeout: float = DEFAULT_TIMEOUT, out: TextIO | None = None
) -> int:
    """``mcp-guard pin``: list every enabled upstream and write the lock file (version 2).

    Prints the count, then each tool added, changed (with one escaped line per changed field,
    when the replaced lock has its definition) and removed since the lock file it replaces.

    Returns:
        0 written; 1 an upstream failed (nothing written) or the file could not be written;
        2 the config is wrong.
    """
    import anyio

    from ..calls.pinning import LockError, LockFile
    from ..safe_text import escape

    out = out if out is not None else sys.stdout
    config = _load(config_path, sys.stderr)
    if config is None:
        return 2
    path = Path(lock).expanduser() if lock is not None else config.lock_path
    assert path is not None  # a loaded config has a path
    listings = anyio.run(lambda: list_servers(config, timeout=timeout, progress=sys.stderr))
    failed = [x for x in listings if x.status == "failed"]
    for x in failed:
        print(f"mcp-guard: {escape(x.server)}: {escape(str(x.error))}", file=sys.stderr)
    if failed:
        print(f"mcp-guard: no lock written: {len(failed)} server(s) could not be listed", file=sys.stderr)
        return 2  # as check --config for the same cause (trial T10)
    new_lock, problems = LockFile.from_listings((x.server, x.tools) for x in listings if x.ok)
    for problem in problems:
        print(f"mcp-guard: {escape(problem)}", file=sys.stderr)
    try:
        old = LockFile.read_optional(path)
    except LockError as exc:
        print(f"mcp-guard: replacing an unreadable lock file: {exc}", file=sys.stderr)
        old = None
    try:
        new_lock.write(path)
    except OSError as exc:
        print(f"mcp-guard: cannot write {path}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    servers = sum(1 for x in listings if x.ok)
    print(f"pinned {len(new_lock.tools)} tool(s) of {servers} server(s) in {path}", file=out)
    for x in listings:
        if x.status == "disabled":
            print(f"  {escape(x.server)}: disabled, not pinned", file=out)
    if old is not None:
        added = sorted(set(new_lock.tools) - set(old.tools))
        removed = sorted(set(old.tools) - set(new_lock.tools))
        changed = sorted(k for k in set(old.tools) & set(new_lock.tools) if old.tools[k] != new_lock.tools[k])
        from ..calls.pinning import diff_tool
        from ..safe_text import escape

        for label, keys in (("added", added), ("changed", changed), ("removed", removed)):
            for key in keys:
                print(f"  {label}: {escape(key)}", file=out)
                before = old.definitions.get(key) if label == "changed" else None
                for change in diff_tool(before, new_lock.definitions[key]) if before is not None else []:
                    print(f"      {escape(change.summary())}", file=out)
    return 0


@dataclass
class UpstreamListing:
    """What listing one upstream of a config found (``pin``, ``check --config``).

    Attributes:
        server: the server's name in the config.
        transport: ``stdio`` or ``http``.
        status: ``ok``, ``failed`` (``error`` says why) or ``disabled`` (not contacted).
        error: the reason of a failure (never an environment or header value).
        tools: every tool as the upstream listed it (wire JSON), all pages in order.
        server_info: the upstream's ``serverInfo`` (``name``, ``version``), when it answered.
        protocol_version: the protocol version agreed on (``initialize``), or the 2026-07-28
            version the upstream offered in ``server/discover`` when it refused the handshake.
    """

    server: str
    transport: Literal["stdio", "http"]
    status: Literal["ok", "failed", "disabled"]
    error: str | None = None
    tools: list[Any] = field(default_factory=list)
    server_info: dict[str, Any] | None = None
    protocol_version: str | None = None

    @property
    def ok(self) -> bool:
        """Whether the upstream answered with a complete listing."""
        return self.status == "ok"

    def to_json(self) -> dict[str, Any]:
        """The listing as JSON (tools by name only)."""
        return {
            "server": self.server,
            "transport": self.transport,
            "status": self.status,
            "error": self.error,
            "server_info": self.server_info,
            "protocol_version": self.protocol_version,
            "tools": [t.get("name") if type(t) is dict else None for t in self.tools],
        }


async def list_server(
    server: StdioServer | HttpServer, *, timeout: float = DEFAULT_TIMEOUT, environ: dict[str, str] | None = None
) -> UpstreamListing:
    """List every tool of one config entry with :func:`mcp_guard.reports.listing.list_tools`; never raises
    for the upstream's faults.

    Args:
        server: the server's config entry (``env``/``headers`` already expanded).
        timeout: seconds for start, handshake (or discovery) and all pages together.
        environ: the environment a stdio upstream starts with, under its ``env``
            (default ``os.environ``: the upstream gets what the user's shell has).

    Returns:
        The listing, ``status`` ``ok`` or ``failed`` (``disabled`` for a disabled entry).
    """
    import os

    from ..config import StdioServer
    from ..reports.listing import ListingError, list_tools

    listing = UpstreamListing(server.name, server.transport, "ok")
    if server.disabled:
        listing.status = "disabled"
        return listing
    try:
        if isinstance(server, StdioServer):
            env = dict(os.environ if environ is None else environ) | server.env
            command = [server.command, *server.args]
            found = await list_tools(command=command, env=env, cwd=server.cwd, timeout=timeout, label=server.name)
        else:
            found = await list_tools(url=server.url, headers=server.headers, timeout=timeout)
    except ListingError as exc:
        listing.status = "failed"
        listing.error = str(exc)  # reported once, by the caller (pin, check --config): not logged here
        return listing
    listing.tools = found.tools
    listing.server_info = found.server or None
    listing.protocol_version = found.protocol_version
    return listing


WAIT_NOTICE_SECONDS = 1.0
"""A server still being listed after this many seconds is named on stderr (then every :data:`WAIT_REPEAT_SECONDS`)."""
WAIT_REPEAT_SECONDS = 5.0


async def list_servers(
    config: GatewayConfig, *, timeout: float = DEFAULT_TIMEOUT, progress: TextIO | None = None
) -> list[UpstreamListing]:
    """List every server of ``config`` concurrently (disabled ones reported, not contacted), in config order;
    one failing upstream does not affect the others.

    ``progress`` (``pin`` and ``check --config`` pass stderr; never stdout) gets the line
    ``waiting for server `NAME` (N s)...`` for each server whose listing passes
    :data:`WAIT_NOTICE_SECONDS`, and again every :data:`WAIT_REPEAT_SECONDS` (names escaped:
    ``safe_text.escape``); nothing for a server that answers in time.
    """
    import anyio

    from ..safe_text import escape

    results: dict[str, UpstreamListing] = {}

    async def one(server: StdioServer | HttpServer) -> None:
        results[server.name] = await list_server(server, timeout=timeout)

    async def notice(name: str) -> None:
        assert progress is not None
        waited = WAIT_NOTICE_SECONDS
        await anyio.sleep(waited)
        while name not in results:
            print(f"mcp-guard: waiting for server `{escape(name)}` ({waited:g} s)...", file=progress, flush=True)
            await anyio.sleep(WAIT_REPEAT_SECONDS)
            waited += WAIT_REPEAT_SECONDS

    async with anyio.create_task_group() as tg:
        async with anyio.create_task_group() as listing:
            for server in config.servers:
                listing.start_soon(one, server)
                if progress is not None and not server.disabled:
                    tg.start_soon(notice, server.name)
        tg.cancel_scope.cancel()
    return [results[s.name] for s in config.servers]


def run_journal(path: str, *, as_json: bool = False, out: TextIO | None = None) -> int:
    """``mcp-guard journal FILE``: print the summary.

    Returns:
        0 printed; 2 the file cannot be read, or none of its lines is a journal record (as
        ``check``, ``schema`` and ``verify`` do for unreadable input: the message goes to
        stderr and, with ``as_json``, to ``out`` as ``{"error": "..."}``).
    """
    from ..calls.journal import format_summary, read_records, summarize
    from ..safe_text import escape_json

    out = out if out is not None else sys.stdout
    message = None
    try:
        records, damaged = read_records(Path(path).expanduser())
    except OSError as exc:
        message = f"{path}: cannot read the journal ({exc.strerror or type(exc).__name__})"
    else:
        if damaged and not records:
            message = f"{path}: not a journal: none of its {damaged} non-empty line(s) is a journal record"
    if message is not None:
        print(f"mcp-guard journal: error: {message}", file=sys.stderr)
        if as_json:
            print(escape_json(json.dumps({"error": message}, ensure_ascii=False)), file=out)
        return 2
    summary = summarize(records, damaged)
    if as_json:
        print(escape_json(json.dumps(summary.to_json(), indent=2, ensure_ascii=False)), file=out)
    else:
        print(format_summary(summary), file=out)
    return 0


def run_check(
    config_path: str,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    as_json: bool = False,
    out: TextIO | None = None,
    fail_on: str = "unsupported",
    host: str | None = None,
    lock: str | None = None,
) -> int:
    """``mcp-guard check --config FILE``: every upstream reachable or not, its tools, and the merged list's findings.

    ``lock``: the lock file to judge the pins against, as ``serve --lock PATH`` enforces it (it must exist);
    None: the config's (``guard.lock``, else FILE.lock, if present), as ``serve`` without ``--lock``.

    With ``host`` (``check --config FILE --host NAME``), the tools the gateway offers, under the
    names it offers them, are also judged for that model host (``reports.hosts``): a table (or a
    ``"host"`` member of the JSON document); a tool not presentable fails ``--fail-on unsupported``.
    Without ``host``, the config's ``guard.presentFor`` is that host, as for ``serve`` (``host``
    overrides it, as ``serve --present-for`` does): the count of tools offered to clients (``exposed``
    in JSON) is then what ``serve`` lists to the host, not presentable tools left out, and the line
    (``shown_to`` in JSON) says which host and where it came from.

    Each reachable upstream's tools are judged as ``check -- COMMAND`` judges them (under the
    config's ``guard.profile``): status, keyword and JSON Pointer of every finding; text or,
    with ``as_json``, one JSON document.

    A tool that changed since it was pinned is shown with how the gateway offers it (its pinned
    definition, or withheld) and what changed: per field, a unified diff (pretty JSON for
    objects), every row escaped (server text never reaches the terminal raw).

    Returns:
        As ``check -- COMMAND``: 0 nothing hits ``fail_on`` (``unsupported``, ``malformed``,
        ``never``), 1 something does or (unless ``never``) a tool changed since it was pinned,
        2 an enabled upstream could not be reached or listed
        (the others are reported all the same), or the config (or its lock) is wrong, or its
        ``guard.journal`` file could not be opened (its folder missing or not writable: a finding).
    """
    import anyio

    from ..calls.pinning import LockError, LockFile
    from ..fronts.serve import double_wrapped_servers
    from ..reports.tools import ToolsReport, escape, report_tools
    from ..safe_text import escape_json
    from ..sessions.catalog import Catalog

    out = out if out is not None else sys.stdout
    config = _load(config_path, sys.stderr)
    if config is None:
        return 2
    try:
        lock_file = LockFile.read_optional(config.lock_path if lock is None else Path(lock).expanduser())
    except LockError as exc:
        print(f"mcp-guard: {exc}", file=sys.stderr)
        return 2
    if lock is not None and lock_file is None:  # (as serve --lock: a lock named and missing is an error)
        print(f"mcp-guard: {lock}: no such lock file", file=sys.stderr)
        return 2
    host_from = "--host" if host is not None else "guard.presentFor"
    host = host if host is not None else config.guard.present_for  # as serve: --present-for overrides the config
    if host is not None and host != config.guard.present_for:
        config = config.model_copy(update={"guard": config.guard.model_copy(update={"present_for": host})})
    listings = anyio.run(lambda: list_servers(config, timeout=timeout, progress=sys.stderr))
    catalog = Catalog(config, lock_file, quiet=True)  # the report is printed, not logged
    profile = config.guard.profile
    reports: dict[str, ToolsReport] = {}
    for x in listings:
        if x.ok:
            catalog.update(x.server, x.tools)
            reports[x.server] = report_tools(x.tools, profile=profile, server=x.server_info, source="config")
    everything = ToolsReport([t for r in reports.values() for t in r.tools], profile, source="config")
    findings = catalog.report.lines() + [
        f"{name}: double-wrapped: {why}" for name, why in double_wrapped_servers(config)
    ]
    journal_problem = _journal_problem(config)
    if journal_problem is not None:
        findings.append(journal_problem)
    tool_findings = [
        f"{server}/{t.name if t.name is not None else f'(tool #{t.index}, no name)'}: {t.status}: "
        + "; ".join(f"{keyword} at {where}" for keyword, where, _detail in _finding_rows(t))
        for server, r in reports.items()
        for t in r.tools
        if not t.supported
    ]
    outputs = config.guard.outputs
    if outputs == "enforce":  # calls to a tool whose outputSchema cannot be enforced are refused (issue 15)
        tool_findings += [
            f"{server}/{t.name if t.name is not None else f'(tool #{t.index}, no name)'} (outputSchema): "
            + f"{t.output_status}: "
            + "; ".join(f"{i.keyword} at {i.schema_path or '/'}" for i in t.output_issues)
            for server, r in reports.items()
            for t in r.tools
            if t.output_status not in (None, "supported")
        ]
    unreachable = [x for x in listings if x.status == "failed"]
    failed = everything.fails(fail_on, outputs=outputs) or (fail_on != "never" and bool(catalog.report.changed))
    offered = [t["name"] for t in catalog.tools]
    host_report = None
    if host is not None:
        presentation = catalog.presentation_of(None)  # what serve lists to the host: not presentable tools left out
        assert presentation is not None
        offered = [t["name"] for t in presentation.tools]
        from ..reports.hosts import report_for_host

        host_report = report_for_host(report_tools(catalog.tools, profile=profile, source="config"), host)
        failed = failed or host_report.fails(fail_on)
    if as_json:
        servers = []
        for x in listings:
            entry = x.to_json()
            report = reports.get(x.server)
            if report is not None:
                entry["summary"] = report.counts(outputs)
                entry["tools"] = [_tool_json(catalog, x.server, t.to_json()) for t in report.tools]
            servers.append(entry)
        data = {
            "profile": profile,
            "servers": servers,
            "exposed": offered,
            "shown_to": None if host is None else {"host": host, "from": host_from},
            "findings": findings + tool_findings,
            "summary": everything.counts(outputs),
            "fail_on": fail_on,
            "failed": failed,
            "unreachable": [x.server for x in unreachable],
        }
        if host_report is not None:
            data["host"] = host_report.to_json()
        print(escape_json(json.dumps(data, indent=2, ensure_ascii=False)), file=out)
    else:
        for x in listings:
            if x.status == "ok":
                info = x.server_info or {}
                who = escape(f"{info.get('name', '?')} {info.get('version', '')}".strip())
                print(f"{escape(x.server)}: reachable ({x.transport}, {who}, protocol {x.protocol_version})", file=out)
                said: set[str] = set()  # (tools sharing a name share their note: said under the first)
                for tool in reports[x.server].tools:
                    name = escape(tool.name) if tool.name is not None else "(no name)"
                    print(f"  {name}{_standing(catalog, x.server, tool.name, tool.status)}", file=out)
                    for keyword, where, detail in _finding_rows(tool):
                        print(f"      {escape(keyword)} at {escape(where)}: {escape(detail)}", file=out)
                    for note in tool.notes:
                        if note.message not in said:
                            said.add(note.message)
                            print(f"      note: {escape(note.message)}", file=out)
                    _print_pin_change(catalog, x.server, tool.name, out)
            elif x.status == "disabled":
                print(f"{escape(x.server)}: disabled", file=out)
            else:
                print(f"{escape(x.server)}: NOT reachable ({x.transport}): {escape(str(x.error))}", file=out)
        if findings:
            print("", file=out)
            for line in findings:
                print(escape(line), file=out)
        print("", file=out)
        print(everything.summary(outputs), file=out)
        print(_offered_line(len(offered), len(catalog.tools), host, host_from), file=out)
        if unreachable:
            print(f"{len(unreachable)} server(s) could not be reached or listed", file=out)
        if host_report is not None:
            print("", file=out)
            print(host_report.render(), end="", file=out)
    if unreachable or journal_problem is not None:
        return 2
    return 1 if failed else 0


def _offered_line(offered: int, listed: int, host: str | None, host_from: str) -> str:
    """The summary's count of what ``serve`` with the config offers: ``7 tool(s) offered to clients (shown to
    gemini, from guard.presentFor; 1 left out for it)``; ``host_from``: ``--host`` or ``guard.presentFor``."""
    line = f"{offered} tool(s) offered to clients"
    if host is None:
        return line
    left_out = listed - offered
    return line + f" (shown to {host}, from {host_from}" + (f"; {left_out} left out for it)" if left_out else ")")


def _journal_problem(config: GatewayConfig) -> str | None:
    """``guard.journal: ...; serve would not start`` when the journal file cannot be opened, else ``None``."""
    from ..calls.journal import journal_path_problem

    path = config.journal_path
    problem = journal_path_problem(path) if path is not None else None
    return None if problem is None else f"guard.journal: {problem}; serve would not start"


def _print_pin_change(catalog: Catalog, server: str, name: str | None, out: TextIO) -> None:
    """Under a tool changed since pinned: what changed, per field a unified diff, each row escaped."""
    from ..safe_text import escape

    change = catalog.report.pin_changes.get(f"{server}/{name}") if name is not None else None
    if change is None:
        return
    if change.fields is None:
        print(f"      changed since pinned: {escape(change.why)}", file=out)
        return
    print(f"      changed since pinned: {', '.join(escape(c.field) for c in change.fields)}", file=out)
    for field_change in change.fields:
        print(f"        {escape(field_change.field)}:", file=out)
        for row in field_change.unified():
            print(f"          {escape(row)}", file=out)


def _finding_rows(tool: ToolReport) -> list[tuple[str, str, str]]:
    from ..reports.tools import finding_rows as rows

    return rows(tool)


def _tool_json(catalog: Catalog, server: str, data: dict[str, Any]) -> dict[str, Any]:
    """A tool's ``check`` JSON plus how the gateway offers it: ``exposed`` (``null``: withheld), ``access``, ``pin``,
    and ``pin_change`` (``null`` unless it changed since pinned: see :meth:`.catalog.PinChange.to_json`)."""
    name = data.get("name")
    route = catalog.route_of(server, name) if type(name) is str else None
    change = catalog.report.pin_changes.get(f"{server}/{name}") if type(name) is str else None
    data["pin_change"] = None if change is None else change.to_json()
    data["exposed"] = None if route is None else route.exposed
    data["access"] = None if route is None else route.policy.access
    data["pin"] = None if route is None else route.pin
    return data


def _standing(catalog: Catalog, server: str, name: object, status: str = "supported") -> str:
    """How one upstream tool is offered: `` → exposed`` plus its state (``status``: its ``check`` verdict)."""
    if type(name) is not str:
        return ": withheld (no name)"
    route = catalog.route_of(server, name)
    if route is None:
        policy = catalog.policy.for_tool(server, name)
        if policy.access != "allow":  # (its exposed name went to the one tool of that name offered)
            return f": {policy.access} ({policy.rule}); its name is another server's tool's"
        return ": withheld (name collision)"
    notes = []
    if route.policy.access != "allow":
        notes.append(f"{route.policy.access} ({route.policy.rule})")
    if status != "supported" or not route.enforceable:
        # not enforceable with a supported inputSchema: its outputSchema, under outputs "enforce" (trial T1)
        shown = status if status != "supported" else "unsupported"
        if status == "supported" and route.compiled.supported:
            shown += " outputSchema"
        notes.append(shown + (", hidden" if route.policy.unsupported == "hide" else ", calls refused"))
    change = catalog.report.pin_changes.get(f"{server}/{name}")
    if change is not None:
        shown = "listed as pinned" if change.listed == "pinned" else "withheld"
        notes.append(f"changed since pinned: {shown}, calls refused")
    elif route.pin in ("changed", "new"):
        notes.append("changed since pinned" if route.pin == "changed" else "not pinned")
    elif route.pin == "unpinned" and catalog.config.guard.new_tools == "reject":
        notes.append("refused: no lock file and newTools is reject")
    return f" → {route.exposed}" + (f" [{'; '.join(notes)}]" if notes else "")
