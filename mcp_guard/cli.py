"""Command line: ``mcp-guard wrap``, ``mcp-guard demo``, the operator commands ``check``, ``schema``,
``verify``, the gateway's ``pin``, ``journal``, ``serve``, and ``install``, ``uninstall``, ``status``
(:mod:`mcp_guard.commands.install`).

``wrap`` is an MCP server on stdio (nothing but protocol messages may reach stdout, so
logging goes to stderr and the relay diverts fd 1 while it runs), or with ``--http`` an MCP
streamable HTTP server at ``/mcp``.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

import anyio

from . import __version__
from .calls.outputs import DEFAULT_OUTPUTS, OUTPUT_MODES
from .commands.arguments import positive_int, positive_seconds, seconds_or_never
from .commands.tracing import add_otel_option, tracing
from .core.profiles import DEFAULT_PROFILE, PROFILE_CHOICES, PROFILES, SUMMARIES
from .safe_text import escape

if TYPE_CHECKING:
    from .fronts.http import HttpConfig
    from .hosts.tables import HostProfile
    from .oauth_config import OAuthSettings

__all__ = ["main"]

LOG_LEVELS = ("debug", "info", "warning", "error")


def profile_help() -> str:
    """The ``--profile`` help: every profile of ``core.PROFILES`` in a phrase, the default marked."""
    return "; ".join(f"{name}{' (default)' if name == DEFAULT_PROFILE else ''} {SUMMARIES[name]}" for name in PROFILES)


class SafeFormatter(logging.Formatter):
    """One log record, one line: whatever breaks a line or controls a terminal is escaped.

    Tool names, methods and pointers may come from the client or the upstream; every log site
    of the package (and uvicorn's, which share the handler) goes through this one formatter,
    which applies :func:`mcp_guard.safe_text.escape` to the whole message: no name can forge a
    log line (``\\n``, NEL, U+2028, U+2029), drive the operator's terminal (C0, DEL, C1 such
    as CSI) or reorder the line (bidi overrides).
    """

    def format(self, record: logging.LogRecord) -> str:
        """The formatted record with unsafe characters escaped (tracebacks keep their newlines)."""
        message = escape(record.getMessage())
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


def _parser(*, only_wrap: bool = False) -> argparse.ArgumentParser:
    """The command line parser; ``only_wrap`` leaves out every command but ``wrap``.

    The other commands' options are defined in their modules (``commands.reports``,
    ``commands.gateway``, ``commands.install``), whose imports (pydantic, the reports, the
    gateway) cost ~0.1 s and ~15 MiB: ``wrap``, one process per wrapped server, skips them
    (:func:`_main` asks for ``only_wrap`` when the first argument is ``wrap``, the only case in
    which argparse would choose the ``wrap`` subparser anyway).
    """
    parser = argparse.ArgumentParser(
        prog="mcp-guard",
        description="An MCP proxy that enforces tool input schemas: every constraint is checked exactly, "
        "or the call is refused before it reaches the server.",
    )
    parser.add_argument("--version", action="version", version=f"mcp-guard {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    wrap = sub.add_parser(
        "wrap",
        help="run as an MCP server (stdio, or streamable HTTP) in front of an upstream server",
        description="Run as an MCP server on stdio (or, with --http, over streamable HTTP at /mcp); spawn "
        "COMMAND as the upstream MCP server (stdio), or connect to the streamable HTTP MCP endpoint given with "
        "--upstream-url, and check every tools/call against the tool's inputSchema before forwarding it.",
        usage=f"mcp-guard wrap [--profile {PROFILE_CHOICES}] [--hide-unsupported] [--outputs MODE] "
        "[--present-for HOST] [--log-level LEVEL] "
        "[--request-timeout SECONDS] [--max-message-bytes N] [--http [HOST:]PORT [HTTP OPTIONS]] "
        "-- COMMAND [ARGS...]\n"
        "       mcp-guard wrap [OPTIONS] (--upstream-url URL | --upstream-url-env ENVVAR) [--header NAME=VALUE]... "
        "[--header-env NAME=ENVVAR]...",
        epilog="When the upstream exits or crashes, requests it left unanswered get a JSON-RPC error, and the "
        "guard starts it again as soon as its backoff allows (never re-sending a call).",
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
        "--outputs",
        choices=OUTPUT_MODES,
        default=DEFAULT_OUTPUTS,
        help="what to do with the results of tools that declare an outputSchema: enforce (default: a result "
        "whose structuredContent does not match is withheld and the client gets a tool error; a call to a tool "
        "whose outputSchema cannot be enforced is refused), report (results pass, with the findings in "
        '_meta["mcp-guard/output"]), off (results are not checked)',
    )
    wrap.add_argument(
        "--present-for",
        default=None,
        metavar="NAME",
        help=f"show the model host NAME ({PRESENT_FOR_CHOICES}) every tool with a schema and a name it "
        "accepts (docs/hosts.md: what the model is not shown stays enforced); each call is mapped back and "
        "judged against the server's own schema. Tools the host cannot be shown are left out of tools/list",
    )
    _http_options(wrap)
    wrap.add_argument(
        "--shared-upstream",
        action="store_true",
        help="with --http: one upstream process for every session instead of one each (for servers that keep "
        "no per-session state: roots, log level and subscriptions are then shared; see docs/wrap.md)",
    )
    _http_upstream_options(wrap)
    wrap.add_argument(
        "--max-message-bytes",
        type=positive_int,
        default=None,
        metavar="N",
        help="the largest message accepted from the client or the upstream, on any transport, in bytes "
        "(default 32 MiB); a larger one is answered with an error and dropped as it arrives, never buffered",
    )
    wrap.add_argument(
        "--request-timeout",
        type=positive_seconds,
        default=None,
        metavar="SECONDS",
        help="answer a request the upstream has not answered within SECONDS (counted again from each progress "
        "notification) with a JSON-RPC error, and cancel it upstream; default: no limit (tools may be slow, and "
        "clients time out on their own). subscriptions/listen and tasks/result, open by design, have no limit. "
        "Also the limit for the guard's own requests (default 30)",
    )
    add_otel_option(wrap)
    wrap.add_argument("upstream", nargs=argparse.REMAINDER, metavar="COMMAND [ARGS...]", help="the upstream command")
    if only_wrap:
        return parser

    demo = sub.add_parser(
        "demo",
        help="run the guard over a built-in example server and show what it forwards and refuses",
        description="Start the guard over the built-in Sigma fixture server, act as a client, make valid, "
        "invalid and unsupported calls, and print what happened.",
    )
    _common(demo)
    demo.set_defaults(command_parser=demo)

    from .commands.reports import add_commands

    add_commands(sub, _common)

    from .commands.gateway import add_gateway_commands

    add_gateway_commands(sub, LOG_LEVELS)

    from .commands.install import add_install_commands

    add_install_commands(sub, LOG_LEVELS)
    serve = sub.choices["serve"]
    _http_options(serve)  # serve --http: the same front as wrap --http
    serve.add_argument(
        "--max-message-bytes",
        type=positive_int,
        default=None,
        metavar="N",
        help="the largest message accepted from the client or an upstream, on any transport, in bytes "
        "(default 32 MiB); a larger one is answered with an error and dropped as it arrives, never buffered",
    )
    return parser


def _http_upstream_options(wrap: argparse.ArgumentParser) -> None:
    group = wrap.add_argument_group("upstream over streamable HTTP (instead of -- COMMAND)")
    where = group.add_mutually_exclusive_group()
    where.add_argument(
        "--upstream-url",
        metavar="URL",
        help="the upstream's streamable HTTP MCP endpoint, e.g. https://example.com/mcp",
    )
    where.add_argument(
        "--upstream-url-env",
        metavar="ENVVAR",
        help="the same, read from the environment variable ENVVAR: for a URL that holds a secret (a query "
        "parameter such as ?apiKey=..., or user:password@), which must not appear on a command line",
    )
    group.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="an HTTP header for every request to the upstream (repeatable; 'NAME: VALUE' works too); for "
        "secrets use --header-env",
    )
    group.add_argument(
        "--header-env",
        action="append",
        default=[],
        metavar="NAME=ENVVAR",
        help="an HTTP header whose value is the environment variable ENVVAR, e.g. "
        "Authorization=UPSTREAM_AUTH with UPSTREAM_AUTH='Bearer ...' (repeatable; values are never logged)",
    )


PRESENT_FOR_CHOICES: Final = "openai-strict|openai|gemini|gemini-json|anthropic"
"""``--present-for``'s names, for its help (``hosts.tables.HOST_NAMES``, checked by a test): the tables
themselves are loaded only when the option is given (wrap's start, issue 14)."""


def _host(args: argparse.Namespace) -> HostProfile | None:
    """``--present-for``'s host profile (``hosts.tables``), or None; an unknown name is a usage error (2)."""
    name = getattr(args, "present_for", None)
    if name is None:
        return None
    from .hosts.tables import HOST_NAMES, host_profile

    if name not in HOST_NAMES:
        args.command_parser.error(
            f"argument --present-for: invalid choice: {name!r} (choose from {PRESENT_FOR_CHOICES})"
        )
    return host_profile(name)


def _wrap(args: argparse.Namespace, command: list[str]) -> int:
    """``wrap`` over stdio, or on ``--http``, once its options are checked (inside ``--otel``'s tracing)."""
    host = _host(args)
    try:
        if args.http is not None:
            from .fronts.http import serve_http

            config = _http_config(args, args.command_parser)
            return anyio.run(
                lambda: serve_http(
                    command,
                    config,
                    profile=args.profile,
                    hide_unsupported=args.hide_unsupported,
                    host=host,
                    outputs=args.outputs,
                    request_timeout=args.request_timeout,
                )
            )
        from .peer.spawn import start_early

        # The upstream starts up while the guard loads the relay (issue 14 item 1: the time to the
        # initialize answer); what a failed start raised is logged by the first connection.
        started = start_early(command)
        from .fronts.stdio import wrap_stdio
        from .wire.framing import DEFAULT_MAX_LINE

        return anyio.run(
            lambda: wrap_stdio(
                command,
                started=started,
                profile=args.profile,
                hide_unsupported=args.hide_unsupported,
                host=host,
                outputs=args.outputs,
                request_timeout=args.request_timeout,
                max_message_bytes=args.max_message_bytes or DEFAULT_MAX_LINE,
            )
        )
    except KeyboardInterrupt:
        return 130


def _wrap_http(args: argparse.Namespace, command: list[str]) -> int:
    """``wrap --upstream-url``: check the options, then relay stdio to the HTTP upstream."""
    import os

    from .peer.http_upstream import DEFAULT_MAX_MESSAGE_BYTES, check_url, parse_headers

    parser: argparse.ArgumentParser = args.command_parser
    if command:
        parser.error("give either --upstream-url URL or -- COMMAND, not both")
    url = args.upstream_url
    if url is None:  # --upstream-url-env: the URL may hold a secret, so no message quotes it
        url = os.environ.get(args.upstream_url_env, "").strip()
        if not url:
            parser.error(f"--upstream-url-env: the environment variable {args.upstream_url_env} is not set or empty")
    try:
        check_url(url)
        headers = parse_headers(args.header, args.header_env, os.environ)
    except ValueError as exc:
        parser.error(str(exc))
    from .fronts.stdio import wrap_stdio_http

    limit = args.max_message_bytes or DEFAULT_MAX_MESSAGE_BYTES
    host = _host(args)
    try:
        return anyio.run(
            lambda: wrap_stdio_http(
                url,
                headers,
                profile=args.profile,
                hide_unsupported=args.hide_unsupported,
                host=host,
                outputs=args.outputs,
                max_message_bytes=limit,
                request_timeout=args.request_timeout,
            )
        )
    except KeyboardInterrupt:
        return 130


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--profile",
        choices=PROFILES,
        default=DEFAULT_PROFILE,
        help=profile_help(),
    )
    parser.add_argument("--log-level", choices=LOG_LEVELS, default="info", help="stderr log level (default info)")


def _http_options(parser: argparse.ArgumentParser) -> None:
    http = parser.add_argument_group("streamable HTTP (with --http)")
    http.add_argument(
        "--http",
        metavar="[HOST:]PORT",
        help="serve MCP streamable HTTP at http://HOST:PORT/mcp instead of stdio; HOST defaults to 127.0.0.1 "
        "(8080 and :8080 mean 127.0.0.1:8080; [::1]:8080 for IPv6; PORT 0 picks a free port). Each "
        "initialize opens a session with its own upstream process; 2026-07-28 requests share one",
    )
    http.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME[:PORT]",
        help="also accept this Host header (repeatable; loopback names are always accepted)",
    )
    http.add_argument(
        "--allowed-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="also accept this Origin header, e.g. https://app.example or http://host:* (repeatable; "
        "loopback origins are always accepted)",
    )
    http.add_argument(
        "--http-token-env",
        metavar="VAR",
        help="require 'Authorization: Bearer <token>' on every request, the token being the value of the "
        "environment variable VAR",
    )
    oauth = parser.add_argument_group('OAuth 2.1 resource server (with --http; docs/http-front.md, "Who is calling")')
    oauth.add_argument(
        "--oauth-issuer",
        metavar="URL",
        help="require on every request a bearer access token from this authorization server (its RFC 8414 "
        "metadata or OpenID configuration names its JWKS); needs --oauth-resource; not with --http-token-env",
    )
    oauth.add_argument(
        "--oauth-resource",
        metavar="URL",
        help="the guard's resource URI as clients reach it (e.g. https://mcp.example.com/mcp): tokens' aud must "
        "hold it (RFC 8707), and /.well-known/oauth-protected-resource names it (RFC 9728)",
    )
    oauth.add_argument(
        "--oauth-scope",
        action="append",
        default=[],
        metavar="SCOPE",
        help="a scope every token must grant (repeatable; else 403 insufficient_scope)",
    )
    oauth.add_argument(
        "--oauth-client-id",
        metavar="ID",
        help="the guard's client id at the issuer's introspection endpoint (RFC 7662), for opaque tokens",
    )
    oauth.add_argument(
        "--oauth-client-secret-env",
        metavar="VAR",
        help="the environment variable holding that client's secret",
    )
    http.add_argument(
        "--session-idle-timeout",
        type=seconds_or_never,
        default=1800.0,
        metavar="SECONDS",
        help="end a session (and stop its upstream) after this long without a request in flight or a GET "
        "stream, and stop the shared 2026-07-28 upstream after this long without a request in flight "
        "(default 1800; 0 never)",
    )
    http.add_argument(
        "--max-sessions",
        type=positive_int,
        default=100,
        metavar="N",
        help="sessions (upstream processes) open at once; more are refused with 503 (default 100)",
    )
    http.add_argument(
        "--http-body-timeout",
        type=positive_seconds,
        default=30.0,
        metavar="SECONDS",
        help="a request body must arrive in full within this long after its headers, else 408 (default 30)",
    )


def _http_config(args: argparse.Namespace, parser: argparse.ArgumentParser) -> HttpConfig:
    """The HTTP front's settings from the command line (usage errors exit with status 2)."""
    from pydantic import SecretStr, ValidationError

    from .fronts.http import DEFAULT_MAX_MESSAGE_BYTES, HttpConfig, parse_listen_address

    try:
        host, port = parse_listen_address(args.http)
    except ValueError as exc:
        parser.error(f"--http: {exc}")
    token: SecretStr | None = None
    if args.http_token_env is not None:
        value = os.environ.get(args.http_token_env, "")
        if not value.strip():
            parser.error(f"--http-token-env: the environment variable {args.http_token_env} is not set or empty")
        token = SecretStr(value.strip())
    oauth, secret = _oauth_settings(args, parser)
    if oauth is not None and token is not None:
        parser.error(
            "--http-token-env and --oauth-issuer: a request has one Authorization header, so the guard takes "
            "either a shared token or OAuth access tokens; give one of them"
        )
    try:
        return HttpConfig(
            host=host,
            port=port,
            allowed_hosts=tuple(args.allowed_host),
            allowed_origins=tuple(args.allowed_origin),
            token=token,
            oauth=oauth,
            oauth_client_secret=SecretStr(secret) if secret is not None else None,
            max_message_bytes=DEFAULT_MAX_MESSAGE_BYTES if args.max_message_bytes is None else args.max_message_bytes,
            session_idle_timeout=args.session_idle_timeout or None,
            max_sessions=args.max_sessions,
            body_timeout=args.http_body_timeout,
            shared_upstream=getattr(args, "shared_upstream", False),
        )
    except ValidationError as exc:
        parser.error("; ".join(_option_problem(e) for e in exc.errors()))


def _oauth_settings(
    args: argparse.Namespace, parser: argparse.ArgumentParser
) -> tuple[OAuthSettings | None, str | None]:
    """The ``--oauth-*`` options as settings and the introspection secret (usage errors exit with status 2)."""
    from pydantic import ValidationError

    from .oauth_config import OAuthSettings, client_secret

    given = [flag for flag in _OAUTH_FLAGS if getattr(args, flag[2:].replace("-", "_"), None)]
    if not given:
        return None, None
    if args.oauth_issuer is None or args.oauth_resource is None:
        parser.error(f"{', '.join(given)}: OAuth needs both --oauth-issuer and --oauth-resource")
    try:
        settings = OAuthSettings(
            issuer=args.oauth_issuer,
            resource=args.oauth_resource,
            scopes=tuple(args.oauth_scope),
            client_id=args.oauth_client_id,
            client_secret_env=args.oauth_client_secret_env,
        )
        return settings, client_secret(settings, os.environ)
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            field = str(error["loc"][0]) if error["loc"] else ""
            flag = _OAUTH_FIELDS.get(field, "--oauth-client-id and --oauth-client-secret-env")
            ctx = error.get("ctx") or {}
            text = str(ctx["error"]) if "error" in ctx else str(error["msg"])
            problems.append(f"{flag}: {text.replace('both `clientId` and `clientSecretEnv`', 'both')}")
        parser.error("; ".join(problems))
    except ValueError as exc:
        parser.error(f"--oauth-client-secret-env: {exc}")


_OAUTH_FIELDS: Final = {
    "issuer": "--oauth-issuer",
    "resource": "--oauth-resource",
    "scopes": "--oauth-scope",
    "client_id": "--oauth-client-id",
    "client_secret_env": "--oauth-client-secret-env",
}

_OAUTH_FLAGS: Final = (
    "--oauth-issuer",
    "--oauth-resource",
    "--oauth-scope",
    "--oauth-client-id",
    "--oauth-client-secret-env",
)


_HTTP_OPTIONS: Final = {
    "host": "--http",
    "port": "--http",
    "allowed_hosts": "--allowed-host",
    "allowed_origins": "--allowed-origin",
    "token": "--http-token-env",
    "max_message_bytes": "--max-message-bytes",
    "session_idle_timeout": "--session-idle-timeout",
    "max_sessions": "--max-sessions",
    "body_timeout": "--http-body-timeout",
}
"""``HttpConfig`` fields → the option that sets each: a usage error names the option as typed."""


def _option_problem(error: Any) -> str:
    """One pydantic error of :class:`HttpConfig` as a usage error: ``--allowed-origin: 'x' is not an
    origin ...``, the option as the user typed it and the validator's own words (no "Value error,")."""
    field = str(error["loc"][0]) if error["loc"] else ""
    option = _HTTP_OPTIONS.get(field, field)
    ctx = error.get("ctx") or {}
    kind = error.get("type")
    if kind == "value_error" and "error" in ctx:
        message = str(ctx["error"])
    elif kind in _BOUNDS and _BOUNDS[kind][0] in ctx:
        bound = ctx[_BOUNDS[kind][0]]
        message = (
            f"must be {_BOUNDS[kind][1]} {bound:g}" if type(bound) is float else f"must be {_BOUNDS[kind][1]} {bound}"
        )
    else:
        message = str(error["msg"])
    return f"{option}: {message}"


_BOUNDS: Final = {
    "greater_than_equal": ("ge", "at least"),
    "greater_than": ("gt", "more than"),
    "less_than_equal": ("le", "at most"),
    "less_than": ("lt", "less than"),
}
"""pydantic's bound errors → (their ``ctx`` key, the words of a usage error)."""


def _only_with_http(flags: list[str]) -> str:
    """The usage error for options given without ``--http``: ``--x only applies with --http`` (one flag),
    ``--x, --y only apply with --http`` (several)."""
    verb = "applies" if len(flags) == 1 else "apply"
    return f"{', '.join(flags)} only {verb} with --http"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mcp-guard`` console script; returns the exit status.

    Exit status: 0 success (for ``wrap``: the client closed the connection, or SIGTERM/SIGHUP),
    1 failure of the run (``wrap``: the upstream could not be started at all; ``check``,
    ``schema`` and ``verify``: something hit the threshold), 2 usage errors (and, for
    ``check``, an upstream that cannot be reached). A reader of stdout that stops early
    (``mcp-guard journal FILE --json | head``) ends the command quietly, with status 1.
    ``wrap`` and ``serve`` hold the stop signals from here on (``start_signals``): one that comes
    while they start stops them as soon as their front runs (130 after SIGINT, else 0).
    """
    arguments = sys.argv[1:] if argv is None else list(argv)
    try:
        if arguments[:1] in (["wrap"], ["serve"]):  # a front: stop signals held until it runs (start_signals)
            from .start_signals import held_until_front

            with held_until_front():
                return _main(arguments)
        return _main(arguments)
    except BrokenPipeError:
        # Python's own recipe: no traceback, and no second error when stdout is flushed at exit.
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        return 1


def _main(arguments: list[str]) -> int:
    parser = _parser(only_wrap=arguments[:1] == ["wrap"])
    args = parser.parse_args(arguments)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    _setup_logging(args.log_level)
    if args.command == "wrap":
        command = list(args.upstream)
        if command and command[0] == "--":
            command = command[1:]
        if args.upstream_url is not None or args.upstream_url_env is not None:
            if args.http is not None:
                args.command_parser.error("--http with --upstream-url is not supported yet: use one of them")
            with tracing(args.otel) as traced:
                return _wrap_http(args, command) if traced else 2
        if args.header or args.header_env:
            args.command_parser.error("--header and --header-env need --upstream-url")
        if not command:
            args.command_parser.error(
                "the upstream command is missing: mcp-guard wrap [OPTIONS] -- COMMAND [ARGS...], "
                "e.g. mcp-guard wrap -- uvx mcp-server-time"
            )
        http_only = [
            flag
            for flag, given in (
                ("--allowed-host", args.allowed_host),
                ("--allowed-origin", args.allowed_origin),
                ("--http-token-env", args.http_token_env is not None),
                ("--shared-upstream", args.shared_upstream),
                *((flag, getattr(args, flag[2:].replace("-", "_"))) for flag in _OAUTH_FLAGS),
            )
            if given
        ]
        if args.http is None and http_only:
            args.command_parser.error(_only_with_http(http_only))
        from .allocator import one_arena

        one_arena()  # a big message freed in a worker thread is reused by the next (peak memory: allocator)
        with tracing(args.otel) as traced:
            return _wrap(args, command) if traced else 2
    if args.command in ("check", "schema", "verify"):
        from .commands.reports import run

        return run(args)
    from .commands.gateway import COMMANDS as GATEWAY_COMMANDS

    if args.command in GATEWAY_COMMANDS:
        from .commands.gateway import run_gateway_command

        if args.command == "serve":
            http_only = [
                f
                for f, given in (
                    ("--allowed-host", args.allowed_host),
                    ("--allowed-origin", args.allowed_origin),
                    ("--http-token-env", args.http_token_env is not None),
                    *((flag, getattr(args, flag[2:].replace("-", "_"))) for flag in _OAUTH_FLAGS),
                )
                if given
            ]
            if args.http is None and http_only:
                args.command_parser.error(_only_with_http(http_only))
            args.http_config = _http_config(args, args.command_parser) if args.http is not None else None
        return run_gateway_command(args)
    if args.command in ("install", "uninstall", "status"):
        from .commands.install import run_install_command

        return run_install_command(args)
    if args.command == "demo":
        from .commands.demo import run_demo

        return anyio.run(lambda: run_demo(profile=args.profile, log_level=args.log_level))
    parser.error(f"unknown command {args.command}")  # pragma: no cover - argparse rejects it first
    return 2  # pragma: no cover


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
