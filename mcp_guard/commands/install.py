"""``mcp-guard install``, ``uninstall`` and ``status``: put the guard in front of a client's servers.

``install`` finds the config files of the MCP clients (:mod:`.clients_paths`; ``--client``
picks some), rewrites every server entry to run through ``mcp-guard wrap``
(:mod:`.clients_entries`), shows the change as a unified diff, and writes it: after asking
when stdin is a terminal, with ``--yes`` otherwise; ``--dry-run`` only shows it.
``uninstall`` puts back every entry exactly as install found it, from the install record.
``status`` lists each client, each server, guarded or not; with ``--check`` it also lists
each server's tools and says what ``mcp-guard check`` says of them.

Exit statuses: 0 done (or nothing to do), 1 a file could not be read, parsed or written, or
is read-only (it is named, with the reason; nothing is written to it), or, for ``status --check``, a server
whose tools could not be listed or are not all supported; 2 usage errors, and a write
refused because stdin is not a terminal and ``--yes`` was not given.

Diffs mask the values of secret-looking keys and headers (``***``): they are for reading,
not for ``patch``.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import sys
from pathlib import Path
from typing import Any, Final

from ..core.profiles import DEFAULT_PROFILE, PROFILES
from ..safe_text import escape
from .arguments import positive_seconds
from .clients_entries import EXPOSED, guarded_upstream, is_secret_header, plan_entry
from .clients_files import (
    BACKUP_SUFFIX,
    FilePlan,
    distinct_files,
    plan_install,
    plan_uninstall,
    read_snapshot_or_problem,
    read_state,
    save_state,
    server_entries,
    write_plan,
)
from .clients_paths import CLIENTS, ClientFile, Places, client_files, state_dir

__all__ = ["INSTALL_COMMANDS", "add_install_commands", "run_install_command"]

INSTALL_COMMANDS: Final = ("install", "uninstall", "status")

_FLAG_VALUE = re.compile(r'(?<![\w-])(?P<flag>--?[A-Za-z0-9_-]+)(?P<sep>=|"\s*,\s*")(?=[^"])[^"]*')
_LONE_FLAG = re.compile(r'"(?P<flag>--?[A-Za-z0-9_-]+)",?\s*$')
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s\"'<>]+")
_PAIR = re.compile(r'(?P<q>"?)(?P<name>[A-Za-z0-9_.-]+)(?P=q)(?P<sep>\s*[:=]\s*)"(?:[^"\\]|\\.)*"')


def add_install_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser], log_levels: tuple[str, ...]) -> None:
    """Add ``install``, ``uninstall`` and ``status`` to the ``mcp-guard`` subparsers ``sub``."""
    helps = {
        "install": "put mcp-guard in front of every MCP server of your clients (Claude, Cursor, VS Code, ...)",
        "uninstall": "take mcp-guard out again: every entry back exactly as install found it",
        "status": "list each client's servers and whether they are behind the guard",
    }
    for name, text in helps.items():
        parser = sub.add_parser(name, help=text, description=text[0].upper() + text[1:] + ". See docs/install.md.")
        parser.set_defaults(command_parser=parser)
        parser.add_argument(
            "--client",
            action="append",
            choices=CLIENTS,
            default=[],
            help="only this client (repeatable); default: every client whose config file exists",
        )
        parser.add_argument(
            "--project",
            metavar="DIR",
            default=".",
            help="the project folder for project config files (.mcp.json, .cursor/, .vscode/, ...); default: here",
        )
        parser.add_argument("--log-level", choices=log_levels, default="warning", help="stderr log level")
        if name == "status":
            parser.add_argument("--check", action="store_true", help="also list each server's tools and judge them")
            parser.add_argument("--json", action="store_true", help="print the status as one JSON document")
            parser.add_argument("--profile", choices=PROFILES, default=DEFAULT_PROFILE, help="profile for --check")
            parser.add_argument(
                "--timeout", type=positive_seconds, default=30.0, metavar="SECONDS", help="per server (--check)"
            )
            continue
        parser.add_argument("--dry-run", action="store_true", help="print the change as a diff and write nothing")
        parser.add_argument("--yes", "-y", action="store_true", help="write without asking")
        if name == "install":
            parser.add_argument("--profile", choices=PROFILES, default=None, help="pass --profile to every wrap")
            parser.add_argument("--hide-unsupported", action="store_true", help="pass --hide-unsupported to every wrap")
            parser.add_argument(
                "--guard-command",
                metavar="PATH",
                help="how clients start the guard (default: this mcp-guard's absolute path, else python -m mcp_guard)",
            )


def _guard_command(given: str | None) -> list[str]:
    if given:
        return [given]
    script = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if script is not None and script.name.lower() in ("mcp-guard", "mcp-guard.exe") and script.exists():
        return [str(script.resolve())]
    return [sys.executable, "-m", "mcp_guard"]


def _files(args: argparse.Namespace) -> tuple[Places, list[ClientFile]]:
    places = Places.of(sys.platform, os.environ, Path(args.project).resolve())
    return places, distinct_files(client_files(places, tuple(args.client) or CLIENTS))


def _mask(line: str) -> str:
    """``line`` with every secret-looking value replaced by ``***``: of a key (``"API_KEY": "..."``,
    ``token = "..."``), of a command-line flag (``"--api-key=..."``, ``"--token", "..."``), a URL's
    password or lone user info (``postgres://user:...@``, ``https://TOKEN@``), its query values
    (``?apiKey=...``) and fragment, and a ``Bearer``/``Basic`` credential."""

    def hide(match: re.Match[str]) -> str:
        name = match["name"]
        if is_secret_header(name) or name.startswith("MCP_GUARD_HEADER_"):
            return f'{match["q"]}{name}{match["q"]}{match["sep"]}"***"'
        return match.group()

    line = _PAIR.sub(hide, line)
    line = _FLAG_VALUE.sub(lambda m: f"{m['flag']}{m['sep']}***" if is_secret_header(m["flag"]) else m.group(), line)
    line = _URL.sub(_mask_url, line)
    return re.sub(r"(?i)\b(bearer|basic)\s+[^\s\"']+", r"\1 ***", line)


def _mask_url(match: re.Match[str]) -> str:
    """A URL with its password (or a lone user info, often a token), query values and fragment as ``***``."""
    url = match.group()
    scheme, _, rest = url.partition("://")
    end = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    authority, tail = rest[:end], rest[end:]
    if "@" in authority:
        info, _, host = authority.rpartition("@")
        user, colon, _ = info.partition(":")
        authority = f"{user}:***@{host}" if colon else f"***@{host}"
    tail, hash_, fragment = tail.partition("#")
    path, question, query = tail.partition("?")
    if query:
        query = "&".join(
            f"{name}=***" if eq else "***" for name, eq, _ in (part.partition("=") for part in query.split("&"))
        )
    return f"{scheme}://{authority}{path}{question}{query}{hash_}{'***' if fragment else ''}"


def _diff(plan: FilePlan) -> str:
    assert plan.snapshot is not None and plan.snapshot.text is not None and plan.new_text is not None
    name = str(plan.file.path)
    lines = difflib.unified_diff(
        plan.snapshot.text.splitlines(keepends=True), plan.new_text.splitlines(keepends=True), name, name
    )
    out, flag_before = [], False
    for line in lines:
        text = line.rstrip("\r\n")
        if flag_before:  # the value of a secret flag that ended the line before: ``"--token",`` / ``"..."``
            text = re.sub(r'^([-+ ]\s*)"(?:[^"\\]|\\.)*"', r'\1"***"', text)
        flag = _LONE_FLAG.search(text)
        flag_before = flag is not None and is_secret_header(flag["flag"])
        out.append(escape(_mask(text)) + "\n")
    return "".join(out)


def _say(text: str) -> None:
    sys.stdout.write(text + "\n")


def _header(file: ClientFile) -> str:
    return f"{file.client} ({file.scope}): {escape(str(file.path))}"


def run_install_command(args: argparse.Namespace) -> int:
    """Run ``install``, ``uninstall`` or ``status`` (``args.command``); return the exit status."""
    places, files = _files(args)
    if args.command == "status":
        return _status(args, files)
    folder = Path(str(state_dir(places)))
    state, problem = read_state(folder)
    if problem is not None:
        sys.stderr.write(f"mcp-guard {args.command}: error: {escape(problem)}; nothing written\n")
        return 1
    plans: list[FilePlan] = []
    for file in files:
        key = os.path.realpath(str(file.path))
        if args.command == "install":
            options = (["--profile", args.profile] if args.profile else []) + (
                ["--hide-unsupported"] if args.hide_unsupported else []
            )
            plan = plan_install(file, _guard_command(args.guard_command), options)
        else:
            records = state["files"].get(key, {}).get("entries", [])
            if not records and not Path(key).exists():
                continue
            plan = plan_uninstall(file, records)
        if plan.problem is None and not plan.outcomes:
            continue  # not there, or no servers in it: nothing to say
        plans.append(plan)
    return _report_and_write(args, plans, state, folder)


def _report_and_write(args: argparse.Namespace, plans: list[FilePlan], state: dict[str, Any], folder: Path) -> int:
    failed = False
    labels = {
        "guard": "will be put behind the guard",
        "guarded": "already behind the guard: left alone",
        "skip": "cannot be guarded: ",
        "restore": "",
        "left": "",
    }
    if not plans:
        what = "no client config file with servers" if args.command == "install" else "nothing installed"
        _say(what + (f" for {', '.join(args.client)}" if args.client else "") + " found")
    for plan in plans:
        _say(_header(plan.file))
        if plan.problem is not None:
            failed = True
            _say(f"  error: {escape(plan.problem)}; nothing written")
            continue
        for outcome in plan.outcomes:
            # a Claude Code project entry: ("projects", "/path/to/project", "mcpServers", name) (trial T3)
            project = outcome.location[1] if outcome.location[0] == "projects" and len(outcome.location) > 2 else None
            scope = f" (project {escape(project)})" if project is not None else ""
            text = labels[outcome.action] + (outcome.reason if outcome.action in ("skip", "left", "restore") else "")
            if outcome.reason == EXPOSED:
                text += f"; warning: {EXPOSED}"
            _say(f"  {escape(outcome.name)}{scope}: {escape(text)}")
    pending = [p for p in plans if p.problem is None and p.new_text is not None]
    if not pending:
        return 1 if failed else 0
    if args.dry_run or not args.yes:
        for plan in pending:
            sys.stdout.write(_diff(plan))
    if args.dry_run:
        _say("dry run: nothing written")
        return 1 if failed else 0
    if not args.yes:
        if not sys.stdin.isatty():
            sys.stderr.write(
                f"mcp-guard {args.command}: error: stdin is not a terminal, so nothing was asked and nothing "
                "written: give --yes to write (or --dry-run to see the change only)\n"
            )
            return 2
        sys.stdout.write(f"Write {len(pending)} file(s)? [y/N] ")
        sys.stdout.flush()
        if sys.stdin.readline().strip().lower() not in ("y", "yes"):
            _say("nothing written")
            return 1 if failed else 0
    for plan in pending:
        failed |= not _write(args, plan, state, folder)
    return 1 if failed else 0


def _write(args: argparse.Namespace, plan: FilePlan, state: dict[str, Any], folder: Path) -> bool:
    assert plan.snapshot is not None
    key = str(plan.snapshot.path)
    problem = write_plan(plan)
    if problem is not None:
        _say(f"{_header(plan.file)}: error: {escape(problem)}")
        return False
    files = state["files"]
    if args.command == "install":
        entry = files.setdefault(key, {"client": plan.file.client, "entries": []})
        fresh = {tuple(r["location"]) for r in plan.records}
        entry["entries"] = [r for r in entry["entries"] if tuple(r["location"]) not in fresh] + plan.records
    elif plan.records:
        files[key]["entries"] = plan.records  # the entries left alone: a later uninstall may try again
    else:
        files.pop(key, None)
    try:
        save_state(folder, state)
    except OSError as exc:
        _say(
            f"{_header(plan.file)}: error: written, but the install record cannot be written ({exc.strerror}), so "
            f"uninstall cannot restore this file; its previous version is {escape(key + BACKUP_SUFFIX)}"
        )
        return False
    _say(f"{_header(plan.file)}: written (the previous version is {escape(plan.snapshot.path.name + BACKUP_SUFFIX)})")
    return True


# --- status ------------------------------------------------------------------------------------


def _status(args: argparse.Namespace, files: list[ClientFile]) -> int:
    import json

    report: list[dict[str, Any]] = []
    failed = False
    for file in files:
        snapshot, problem = read_snapshot_or_problem(file)
        if problem is None and snapshot is None:
            continue
        item: dict[str, Any] = {"client": file.client, "scope": file.scope, "path": str(file.path), "servers": []}
        report.append(item)
        entries, problem = (None, problem) if problem else server_entries(file, snapshot)
        if problem is not None or entries is None:
            item["error"] = problem
            failed = True
            continue
        for location, value in entries:
            server = _server_status(file, location, value)
            if args.check:
                sys.stderr.write(f"mcp-guard status: listing the tools of {escape(server['name'])} ({file.client})\n")
                server["check"] = _check(server, value, args)
                failed |= not server["check"].get("ok", False)
            item["servers"].append(server)
    if args.json:
        sys.stdout.write(json.dumps({"clients": report}, ensure_ascii=False) + "\n")
    else:
        _print_status(report, args.client)
    return 1 if failed else 0


def _server_status(file: ClientFile, location: tuple[str, ...], value: Any) -> dict[str, Any]:
    plan = plan_entry(value, ["mcp-guard"], [], client=file.client)
    server: dict[str, Any] = {"name": location[-1], "kind": plan.kind, "guarded": plan.action == "guarded"}
    if location[0] == "projects":
        server["project"] = location[1]
    if plan.action == "skip":
        server["reason"] = plan.reason
    elif plan.reason == EXPOSED:
        server["warning"] = EXPOSED
    return server


def _check(server: dict[str, Any], value: Any, args: argparse.Namespace) -> dict[str, Any]:
    """List the server's tools (the upstream of a guarded entry) and judge them as ``check`` does."""
    import anyio

    from ..peer.http_upstream import parse_headers
    from ..reports.listing import ListingError, list_tools
    from ..reports.tools import report_tools

    if not isinstance(value, dict):
        return {"ok": False, "error": "the entry is not an object"}
    env = {**os.environ, **{str(k): str(v) for k, v in (value.get("env") or {}).items()}}
    command: list[str] | None = None
    url: str | None = None
    headers: dict[str, str] = {}
    upstream = guarded_upstream(value.get("command"), value.get("args"))
    if upstream is not None and upstream[0] == "serve":
        return {"ok": False, "error": "a gateway (mcp-guard serve): use mcp-guard check --config on its config"}
    if upstream is not None:
        if upstream[1][:1] in (["--upstream-url"], ["--upstream-url-env"]):
            url = upstream[1][1] if upstream[1][0] == "--upstream-url" else env.get(upstream[1][1])
            if not url:
                return {"ok": False, "error": f"the variable its --upstream-url-env names is not set: {upstream[1][1]}"}
            tokens = [str(a) for a in value.get("args") or []]
            plain = [tokens[i + 1] for i, t in enumerate(tokens[:-1]) if t == "--header"]
            from_env = [tokens[i + 1] for i, t in enumerate(tokens[:-1]) if t == "--header-env"]
            try:
                headers = parse_headers(plain, from_env, env)
            except ValueError as exc:
                return {"ok": False, "error": str(exc)}
        else:
            command = upstream[1]
    elif isinstance(value.get("command"), str):
        command = [value["command"], *[str(a) for a in value.get("args") or []]]
    elif server.get("reason"):
        return {"ok": False, "error": f"not checked: {server['reason']}"}
    else:
        url = next((value[k] for k in ("url", "serverUrl", "httpUrl") if isinstance(value.get(k), str)), None)
        raw = value.get("headers") or value.get("http_headers") or {}
        headers = {str(k): str(v) for k, v in raw.items()} if isinstance(raw, dict) else {}
    if not command and url is None:
        return {"ok": False, "error": "nothing to start or reach"}
    cwd = value.get("cwd") if isinstance(value.get("cwd"), str) else None
    try:
        listing = anyio.run(
            lambda: list_tools(
                command=command or None,
                url=url,
                headers=headers or None,
                env=env if command else None,
                cwd=cwd,
                timeout=args.timeout,
                client_name="mcp-guard-status",
            )
        )
    except ListingError as exc:
        return {"ok": False, "error": str(exc)}
    source = "command" if command else "url"
    tools = report_tools(listing.tools, profile=args.profile, server=listing.server, source=source)
    counts = tools.counts()
    del counts["total"]
    return {"ok": not tools.fails("unsupported"), "tools": len(tools.tools), **counts}


def _print_status(report: list[dict[str, Any]], clients: list[str]) -> None:
    if not report:
        _say("no client config file found" + (f" for {', '.join(clients)}" if clients else ""))
    for item in report:
        _say(f"{item['client']} ({item['scope']}): {escape(item['path'])}")
        if "error" in item:
            _say(f"  error: {escape(str(item['error']))}")
            continue
        if not item["servers"]:
            _say("  no servers")
        for server in item["servers"]:
            where = f" (project {escape(server['project'])})" if "project" in server else ""
            state = "guarded" if server["guarded"] else "NOT guarded"
            if "reason" in server:
                state += f" (cannot be guarded: {escape(server['reason'])})"
            if "warning" in server:
                state += f" (warning: {server['warning']})"
            line = f"  {escape(server['name'])}{where}: {server['kind']}, {state}"
            check = server.get("check")
            if check is not None:
                line += "; check: " + (
                    escape(str(check["error"]))
                    if "error" in check
                    else f"{check['tools']} tools, {check['supported']} supported, {check['unsupported']} unsupported, "
                    f"{check['malformed']} malformed"
                )
            _say(line)
