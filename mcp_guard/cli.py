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
        description="Run as an MCP server on stdio; spawn COMMAND as the upstream MCP server (stdio) and "
        "check every tools/call against the tool's inputSchema before forwarding it.",
        usage="mcp-guard wrap [--profile standard|strict] [--hide-unsupported] [--request-timeout SECONDS] "
        "[--log-level LEVEL] -- COMMAND [ARGS...]",
        epilog="When the upstream exits or crashes, requests it left unanswered get a JSON-RPC error, and the "
        "next request starts it again (never re-sending a call).",
    )
    _common(wrap)
    wrap.set_defaults(command_parser=wrap)
    wrap.add_argument(
        "--hide-unsupported",
        action="store_true",
        help="leave tools whose schemas the guard cannot enforce out of tools/list (calls to them are "
        "answered like calls to unknown tools)",
    )
    wrap.add_argument(
        "--request-timeout",
        type=_seconds,
        default=None,
        metavar="SECONDS",
        help="answer a request the upstream has not answered within SECONDS (counted again from each progress "
        "notification) with a JSON-RPC error, and cancel it upstream; default: no limit (tools may be slow, and "
        "clients time out on their own). subscriptions/listen and tasks/result, open by design, have no limit. "
        "Also the limit for the guard's own requests (default 30)",
    )
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


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--profile",
        choices=("standard", "strict"),
        default="standard",
        help="standard (default) also accepts annotations such as title and default, and a root $schema "
        "of a compatible dialect; strict accepts only the reference host's keyword table",
    )
    parser.add_argument("--log-level", choices=LOG_LEVELS, default="info", help="stderr log level (default info)")


def _seconds(text: str) -> float:
    """A positive, finite number of seconds (argparse type)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not (0 < value < float("inf")):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds: {text!r}")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mcp-guard`` console script; returns the exit status.

    Exit status: 0 success (the client closed the connection, or SIGTERM/SIGHUP), 1 the
    upstream could not be started at all, 2 usage errors.
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
        if not command:
            args.command_parser.error(
                "the upstream command is missing: mcp-guard wrap [OPTIONS] -- COMMAND [ARGS...], "
                "e.g. mcp-guard wrap -- uvx mcp-server-time"
            )
        from .relay import wrap_stdio

        try:
            return anyio.run(
                lambda: wrap_stdio(
                    command,
                    profile=args.profile,
                    hide_unsupported=args.hide_unsupported,
                    request_timeout=args.request_timeout,
                )
            )
        except KeyboardInterrupt:
            return 130
    if args.command == "demo":
        from .demo import run_demo

        return anyio.run(lambda: run_demo(profile=args.profile, log_level=args.log_level))
    parser.error(f"unknown command {args.command}")  # pragma: no cover - argparse rejects it first
    return 2  # pragma: no cover


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
