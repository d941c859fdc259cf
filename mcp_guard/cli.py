"""Command line: ``mcp-guard wrap``, ``mcp-guard demo``.

``wrap`` is an MCP server on stdio: nothing but protocol messages may reach stdout, so
logging goes to stderr and the relay diverts fd 1 while it runs.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from typing import ClassVar

import anyio

from . import __version__

__all__ = ["main"]

LOG_LEVELS = ("debug", "info", "warning", "error")


class SafeFormatter(logging.Formatter):
    """One log record, one line: control characters (newlines, escape codes) are escaped.

    Tool names and pointers may come from the client or the upstream; escaped, they can
    neither forge a log line nor drive the operator's terminal.
    """

    _table: ClassVar[dict[int, str]] = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F)}

    def format(self, record: logging.LogRecord) -> str:
        """The formatted record with control characters escaped (tracebacks keep their newlines)."""
        message = record.getMessage().translate(self._table)
        text = f"mcp-guard {record.levelname}: {message}"
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        return text


def _setup_logging(level: str) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(SafeFormatter())
    logger = logging.getLogger("mcp_guard")
    logger.handlers[:] = [handler]
    logger.setLevel(level.upper())
    logger.propagate = False


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mcp-guard",
        description="An MCP proxy that enforces tool input schemas: every constraint is checked exactly, "
        "or the call is refused before it reaches the server.",
    )
    parser.add_argument("--version", action="version", version=f"mcp-guard {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    wrap = sub.add_parser(
        "wrap",
        help="run as an MCP server on stdio in front of an upstream server command",
        description="Run as an MCP server on stdio; spawn COMMAND as the upstream MCP server (stdio), or "
        "connect to the streamable HTTP MCP endpoint given with --upstream-url, and check every tools/call "
        "against the tool's inputSchema before forwarding it.",
        usage="mcp-guard wrap [--profile standard|strict] [--hide-unsupported] [--log-level LEVEL] "
        "-- COMMAND [ARGS...]\n"
        "       mcp-guard wrap [OPTIONS] --upstream-url URL [--header NAME=VALUE]... [--header-env NAME=ENVVAR]...",
    )
    _common(wrap)
    wrap.set_defaults(command_parser=wrap)
    wrap.add_argument(
        "--hide-unsupported",
        action="store_true",
        help="leave tools whose schemas the guard cannot enforce out of tools/list (calls to them are "
        "answered like calls to unknown tools)",
    )
    _http_upstream_options(wrap)
    wrap.add_argument("upstream", nargs=argparse.REMAINDER, metavar="COMMAND [ARGS...]", help="the upstream command")

    demo = sub.add_parser(
        "demo",
        help="run the guard over a built-in example server and show what it forwards and refuses",
        description="Start the guard over the built-in Sigma fixture server, act as a client, make valid, "
        "invalid and unsupported calls, and print what happened.",
    )
    _common(demo)
    demo.set_defaults(command_parser=demo)
    return parser


def _http_upstream_options(wrap: argparse.ArgumentParser) -> None:
    group = wrap.add_argument_group("upstream over streamable HTTP (instead of -- COMMAND)")
    group.add_argument(
        "--upstream-url",
        metavar="URL",
        help="the upstream's streamable HTTP MCP endpoint, e.g. https://example.com/mcp",
    )
    group.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="an HTTP header for every request to the upstream (repeatable); for secrets use --header-env",
    )
    group.add_argument(
        "--header-env",
        action="append",
        default=[],
        metavar="NAME=ENVVAR",
        help="an HTTP header whose value is the environment variable ENVVAR, e.g. "
        "Authorization=UPSTREAM_AUTH with UPSTREAM_AUTH='Bearer ...' (repeatable; values are never logged)",
    )
    group.add_argument(
        "--max-message-bytes",
        type=_positive_int,
        default=None,
        metavar="N",
        help="the largest message accepted from the upstream, in bytes (default 32 MiB); a larger answer is "
        "replaced by a JSON-RPC error",
    )


def _positive_int(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError("must be a positive number")
    return value


def _wrap_http(args: argparse.Namespace, command: list[str]) -> int:
    """``wrap --upstream-url``: check the options, then relay stdio to the HTTP upstream."""
    import os

    from .relay.http_upstream import DEFAULT_MAX_MESSAGE_BYTES, check_url, parse_headers

    parser: argparse.ArgumentParser = args.command_parser
    if command:
        parser.error("give either --upstream-url URL or -- COMMAND, not both")
    try:
        check_url(args.upstream_url)
        headers = parse_headers(args.header, args.header_env, os.environ)
    except ValueError as exc:
        parser.error(str(exc))
    from .relay import wrap_stdio_http

    limit = args.max_message_bytes or DEFAULT_MAX_MESSAGE_BYTES
    try:
        return anyio.run(
            lambda: wrap_stdio_http(
                args.upstream_url,
                headers,
                profile=args.profile,
                hide_unsupported=args.hide_unsupported,
                max_message_bytes=limit,
            )
        )
    except KeyboardInterrupt:
        return 130


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--profile",
        choices=("standard", "strict"),
        default="standard",
        help="standard (default) also accepts annotations such as title and default, and a root $schema "
        "of a compatible dialect; strict accepts only the reference host's keyword table",
    )
    parser.add_argument("--log-level", choices=LOG_LEVELS, default="info", help="stderr log level (default info)")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mcp-guard`` console script; returns the exit status.

    Exit status: 0 success, 1 failure of the run (upstream could not start or went away),
    2 usage errors.
    """
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    _setup_logging(args.log_level)
    if args.command == "wrap":
        command = list(args.upstream)
        if command and command[0] == "--":
            command = command[1:]
        if args.upstream_url is not None:
            return _wrap_http(args, command)
        if args.header or args.header_env or args.max_message_bytes is not None:
            args.command_parser.error("--header, --header-env and --max-message-bytes need --upstream-url")
        if not command:
            args.command_parser.error(
                "the upstream command is missing: mcp-guard wrap [OPTIONS] -- COMMAND [ARGS...], "
                "e.g. mcp-guard wrap -- uvx mcp-server-time"
            )
        from .relay import wrap_stdio

        try:
            return anyio.run(lambda: wrap_stdio(command, profile=args.profile, hide_unsupported=args.hide_unsupported))
        except KeyboardInterrupt:
            return 130
    if args.command == "demo":
        from .demo import run_demo

        return anyio.run(lambda: run_demo(profile=args.profile, log_level=args.log_level))
    parser.error(f"unknown command {args.command}")  # pragma: no cover - argparse rejects it first
    return 2  # pragma: no cover


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
