"""Issue 25 item 2: every comment of a client config survives ``install`` and ``uninstall`` byte for byte.

The property: over generated configs (TOML for Codex, JSONC for Cursor, VS Code's two files and
Claude Code's project maps) with a comment in every position a person puts one (before the file,
before and after an entry, on an entry's header line, between members, after a member on its
line, inside a multi-line ``args`` or ``headers`` value, at the end of the file with or without
a final newline), ``install`` guards every entry it can, keeps every comment of the original, in
order, and ``uninstall`` gives back the original bytes. Each comment is unique (``[c7]``), so the
oracle is independent of how the editor finds them.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_guard.commands.clients_entries import plan_entry
from mcp_guard.commands.clients_files import entries_of, plan_install, plan_uninstall
from mcp_guard.commands.clients_paths import ClientFile

GUARD = ["/opt/bin/mcp-guard"]


def _round_trip(file: ClientFile, text: str) -> tuple[str, str]:
    """Install then uninstall ``text`` as ``file``: (installed text, text after uninstall).

    Runs in a temporary folder removed afterwards (hypothesis calls this hundreds of times).
    """
    with tempfile.TemporaryDirectory(prefix="mcpg-comments-") as folder:
        return _round_trip_in(Path(folder), file, text)


def _round_trip_in(folder: Path, file: ClientFile, text: str) -> tuple[str, str]:
    path = folder / Path(str(file.path)).name
    path.write_text(text, encoding="utf-8", newline="")
    file = ClientFile(file.client, file.scope, path, file.format, file.servers_key, file.project_maps)
    plan = plan_install(file, GUARD, ["--profile", "standard"])
    assert plan.problem is None, plan.problem
    installed = text if plan.new_text is None else plan.new_text
    path.write_text(installed, encoding="utf-8", newline="")
    undone = plan_uninstall(file, plan.records)
    assert undone.problem is None, undone.problem
    after = installed if undone.new_text is None else undone.new_text
    for outcome in plan.outcomes:
        decided = plan_entry(outcome.value, GUARD, ["--profile", "standard"], client=file.client)
        assert outcome.action == decided.action, (outcome.name, outcome.reason)
    if plan.new_text is not None:
        got = dict(entries_of(file, installed))
        for outcome in plan.outcomes:
            if outcome.action == "guard":
                assert got[outcome.location] == plan_entry(outcome.value, GUARD, ["--profile", "standard"]).entry
    return installed, after


def _assert_in_order(comments: list[str], text: str) -> None:
    at = 0
    for comment in comments:
        found = text.find(comment, at)
        assert found >= 0, f"{comment!r} lost or out of order in:\n{text}"
        at = found + len(comment)


# --- the regression of the issue ---------------------------------------------------------------


def test_a_comment_before_an_untouched_table_survives_the_rewrite_of_the_table_above() -> None:
    text = (
        "[mcp_servers.remote]\n"
        'url = "https://mcp.example.com/mcp"  # the team server\n'
        'http_headers = { "X-Org" = "shop" }  # org header\n'
        "\n"
        "# Already behind the guard\n"
        "[mcp_servers.time]\n"
        'command = "mcp-guard"\n'
        'args = ["wrap", "--", "uvx", "mcp-server-time"]\n'
    )
    file = ClientFile("codex", "user", Path("config.toml"), "toml", ("mcp_servers",))
    installed, after = _round_trip(file, text)
    _assert_in_order(["# the team server", "# org header", "# Already behind the guard"], installed)
    assert after == text


def test_comments_inside_args_stay_where_they_stand() -> None:
    text = (
        "[mcp_servers.docs]\n"
        'command = "uvx"   # uv\'s runner\n'
        "args = [\n"
        '  "mcp-server-fetch",\n'
        '  "--ignore-robots-txt",  # internal wiki only\n'
        "]\n"
    )
    file = ClientFile("codex", "user", Path("config.toml"), "toml", ("mcp_servers",))
    installed, after = _round_trip(file, text)
    assert '  "--ignore-robots-txt",  # internal wiki only\n' in installed
    assert 'command = "/opt/bin/mcp-guard"\n' in installed, "the command's comment went with the command"
    assert '  "uvx",  # uv\'s runner\n' in installed
    assert after == text


GUARDED_ARGS = '"wrap", "--profile", "standard", "--"'


@pytest.mark.parametrize(
    ("fmt", "text", "expected"),
    [
        (  # args on one line: the comment ends the args line, which now holds the command
            "toml",
            '[mcp_servers.a]\ncommand = "uvx"  # uv\'s runner\nargs = ["srv"]\n',
            f'[mcp_servers.a]\ncommand = "/opt/bin/mcp-guard"\nargs = [{GUARDED_ARGS}, "uvx", "srv"]  # uv\'s runner\n',
        ),
        (  # no args: on a line of its own above the command
            "toml",
            '[mcp_servers.a]\ncommand = "uvx"  # uv\'s runner\nenv = { A = "1" }\n',
            f'[mcp_servers.a]\n# uv\'s runner\ncommand = "/opt/bin/mcp-guard"\nenv = {{ A = "1" }}\n'
            f'args = [{GUARDED_ARGS}, "uvx"]\n',
        ),
        (  # the args line has a comment of its own: above the command
            "toml",
            '[mcp_servers.a]\ncommand = "uvx"  # runner\nargs = ["srv"]  # pinned\n',
            f'[mcp_servers.a]\n# runner\ncommand = "/opt/bin/mcp-guard"\n'
            f'args = [{GUARDED_ARGS}, "uvx", "srv"]  # pinned\n',
        ),
        (  # args before the command: above the command
            "toml",
            '[mcp_servers.a]\nargs = ["srv"]\ncommand = "uvx"  # runner\n',
            f'[mcp_servers.a]\nargs = [{GUARDED_ARGS}, "uvx", "srv"]\n# runner\ncommand = "/opt/bin/mcp-guard"\n',
        ),
        (  # JSONC, args over lines
            "json",
            '{"mcpServers": {\n  "a": {\n    "command": "uvx", // uv\'s runner\n'
            '    "args": [\n      "srv"\n    ]\n  }\n}}\n',
            '{"mcpServers": {\n  "a": {\n    "command": "/opt/bin/mcp-guard",\n    "args": [\n'
            + "".join(f"      {w},\n" for w in GUARDED_ARGS.split(", "))
            + '      "uvx",  // uv\'s runner\n      "srv"\n    ]\n  }\n}}\n',
        ),
        (  # JSONC, args on one line, a block comment
            "json",
            '{"mcpServers": {\n  "a": {\n    "command": "uvx", /* runner */\n    "args": ["srv"]\n  }\n}}\n',
            '{"mcpServers": {\n  "a": {\n    "command": "/opt/bin/mcp-guard",\n'
            f'    "args": [{GUARDED_ARGS}, "uvx", "srv"]  /* runner */\n  }}\n}}}}\n',
        ),
        (  # an inline table on one line: the comment is the line's, and stays
            "toml",
            '[mcp_servers]\na = { command = "uvx" }  # the a server\n',
            f'[mcp_servers]\na = {{ command = "/opt/bin/mcp-guard", args = [{GUARDED_ARGS}, "uvx"] }}'
            "  # the a server\n",
        ),
    ],
)
def test_a_comment_ending_the_command_line_goes_with_the_command(fmt: str, text: str, expected: str) -> None:
    """Red team, stop 32: ``command = "uvx"  # uv's runner`` left the comment on the guard's line, where it
    described mcp-guard. It annotates the command, so it moves with it (docs/install.md, "Writing")."""
    name = "config.toml" if fmt == "toml" else "mcp.json"
    key = ("mcp_servers",) if fmt == "toml" else ("mcpServers",)
    file = ClientFile("codex" if fmt == "toml" else "cursor", "user", Path(name), fmt, key)
    installed, after = _round_trip(file, text)
    assert installed == expected
    assert after == text


# --- generated configs --------------------------------------------------------------------------


@dataclass
class Writer:
    """Builds a config's text and the list of its comments, in order."""

    toml: bool
    parts: list[str] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)

    def comment(self, block: bool = False) -> str:
        mark = f"[c{len(self.comments)}]"
        text = f"# {mark} note" if self.toml else (f"/* {mark} note */" if block else f"// {mark} note")
        self.comments.append(text)
        return text

    def add(self, text: str) -> None:
        self.parts.append(text)

    def text(self) -> str:
        return "".join(self.parts)


@st.composite
def _entries(draw: st.DrawFn) -> list[dict[str, Any]]:
    count = draw(st.integers(1, 4))
    entries = []
    for n in range(count):
        kind = draw(st.sampled_from(["stdio", "stdio", "url", "guarded"]))
        entry: dict[str, Any] = {"name": f"s{n}", "kind": kind}
        if kind == "stdio":
            entry["args"] = draw(st.sampled_from([None, [], ["a"], ["-y", "pkg", "--flag=1"]]))
            entry["args_lines"] = draw(st.booleans())
            entry["env"] = draw(st.sampled_from([None, {"TZ": "UTC"}]))
            entry["cwd_first"] = draw(st.booleans())
        elif kind == "url":
            entry["headers"] = draw(
                st.sampled_from([None, {"X-Org": "shop"}, {"Authorization": "Bearer FAKE"}, {"X-A": "1", "X-Key": "k"}])
            )
            entry["headers_lines"] = draw(st.booleans())
            entry["env"] = draw(st.sampled_from([None, {"TZ": "UTC"}]))
        entry["inline"] = draw(st.booleans())
        entry["env_table"] = draw(st.booleans())  # TOML: env as a [mcp_servers.NAME.env] sub-table
        entries.append(entry)
    return entries


def _slots(draw: st.DrawFn) -> Any:
    """A function answering, slot by slot, whether a comment stands there."""
    return lambda: draw(st.booleans())


def _toml_value(value: Any) -> str:
    if isinstance(value, str):
        return '"' + value + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return "{ " + ", ".join(f'"{k}" = {_toml_value(v)}' for k, v in value.items()) + " }"


def _members(entry: dict[str, Any]) -> list[tuple[str, Any, bool]]:
    """(key, value, multi-line) of an entry, in its order."""
    if entry["kind"] == "guarded":
        return [("command", "mcp-guard", False), ("args", ["wrap", "--", "uvx", "t"], False)]
    members: list[tuple[str, Any, bool]] = []
    if entry["kind"] == "stdio":
        if entry["cwd_first"]:
            members.append(("cwd", "/src", False))
        members.append(("command", "uvx", False))
        if entry["args"] is not None:
            members.append(("args", entry["args"], entry["args_lines"] and bool(entry["args"])))
    else:
        members.append(("url", "https://mcp.example.com/mcp", False))
        if entry["headers"] is not None:
            members.append(("headers", entry["headers"], entry["headers_lines"]))
    if entry["env"] is not None:
        members.append(("env", entry["env"], False))
    return members


@st.composite
def toml_configs(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A Codex ``config.toml``: inline entries under ``[mcp_servers]``, then block tables."""
    slot = _slots(draw)
    w = Writer(toml=True)
    entries = draw(_entries())
    if slot():
        w.add(w.comment() + "\n")
    w.add('model = "gpt-5-codex"' + (f"  {w.comment()}" if slot() else "") + "\n")
    inline = [e for e in entries if e["inline"]]
    blocks = [e for e in entries if not e["inline"]]
    if inline:
        w.add("\n" + (w.comment() + "\n" if slot() else "") + "[mcp_servers]" + (f"  {w.comment()}" if slot() else ""))
        w.add("\n")
        for entry in inline:
            if slot():
                w.add(w.comment() + "\n")
            body = ", ".join(f"{k} = {_toml_value(v)}" for k, v, _ in _members(entry))
            w.add(f"{entry['name']} = {{ {body} }}" + (f"  {w.comment()}" if slot() else "") + "\n")
    for entry in blocks:
        w.add("\n" if slot() else "")
        if slot():
            w.add(w.comment() + "\n")
        w.add(f"[mcp_servers.{entry['name']}]" + (f"  {w.comment()}" if slot() else "") + "\n")
        members = _members(entry)
        sub = [m for m in members if m[0] == "env" and entry.get("env_table")]
        for key, value, lines in [m for m in members if m not in sub]:
            if slot():
                w.add(w.comment() + "\n")
            if lines and isinstance(value, list):
                w.add(f"{key} = [" + (f"  {w.comment()}" if slot() else "") + "\n")
                for item in value:
                    w.add(f"  {_toml_value(item)}," + (f"  {w.comment()}" if slot() else "") + "\n")
                w.add("]")
            else:
                w.add(f"{key} = {_toml_value(value)}")
            w.add((f"  {w.comment()}" if slot() else "") + "\n")
        for _, env, _ in sub:
            w.add((w.comment() + "\n" if slot() else "") + f"[mcp_servers.{entry['name']}.env]")
            w.add((f"  {w.comment()}" if slot() else "") + "\n")
            for name, value in env.items():
                w.add(f"{name} = {_toml_value(value)}" + (f"  {w.comment()}" if slot() else "") + "\n")
        if slot():
            w.add(w.comment() + "\n")  # after the entry: tomlkit's end of the table above the next one
    if slot():
        w.add('\n[profiles.fast]\nmodel = "gpt-5-mini"\n')
    if slot():
        w.add(w.comment() + ("\n" if slot() else ""))
    return w.text(), w.comments


def _json_value(value: Any, w: Writer, indent: str, lines: bool, slot: Any) -> str:
    if not lines:
        if isinstance(value, str):
            return '"' + value + '"'
        if isinstance(value, list):
            return "[" + ", ".join(_json_value(v, w, indent, False, slot) for v in value) + "]"
        inner = ", ".join(f'"{k}": "{v}"' for k, v in value.items())
        return "{" + inner + "}"
    open_, close = ("[", "]") if isinstance(value, list) else ("{", "}")
    items = value if isinstance(value, list) else [f'"{k}": "{v}"' for k, v in value.items()]
    out = open_ + (f" {w.comment()}" if slot() else "") + "\n"
    for n, item in enumerate(items):
        rendered = f'"{item}"' if isinstance(value, list) else item
        comma = "," if n < len(items) - 1 else ""
        if slot():
            out += f"{indent}  {w.comment()}\n"
        out += f"{indent}  {rendered}{comma}" + (f" {w.comment()}" if slot() else "") + "\n"
    return out + indent + close


@st.composite
def json_configs(draw: st.DrawFn, servers_key: tuple[str, ...]) -> tuple[str, list[str]]:
    """A JSONC config with its server map at ``servers_key`` (``("projects", "/p", "mcpServers")`` too)."""
    slot = _slots(draw)
    w = Writer(toml=False)
    entries = draw(_entries())
    if slot():
        w.add(w.comment() + "\n")
    w.add("{\n")
    depth = 1
    if slot():
        w.add(f"  {w.comment()}\n")
    w.add('  "theme": "dark",' + (f" {w.comment()}" if slot() else "") + "\n")
    for key in servers_key:
        w.add("  " * depth + f'"{key}": {{' + (f" {w.comment()}" if slot() else "") + "\n")
        depth += 1
    pad = "  " * depth
    for n, entry in enumerate(entries):
        if slot():
            w.add(f"{pad}{w.comment()}\n")
        last = n == len(entries) - 1
        members = _members(entry)
        if entry["inline"]:
            body = []
            for key, value, _ in members:
                block = f" {w.comment(block=True)}" if slot() else ""
                body.append(f'"{key}": {_json_value(value, w, pad, False, slot)}{block}')
            w.add(f'{pad}"{entry["name"]}": {{' + ", ".join(body) + "}")
        else:
            w.add(f'{pad}"{entry["name"]}": {{' + (f" {w.comment()}" if slot() else "") + "\n")
            for m, (key, value, lines) in enumerate(members):
                if slot():
                    w.add(f"{pad}  {w.comment()}\n")
                comma = "," if m < len(members) - 1 else ""
                rendered = _json_value(value, w, pad + "  ", lines, slot)
                w.add(f'{pad}  "{key}": {rendered}{comma}' + (f" {w.comment()}" if slot() else "") + "\n")
            w.add(pad + "}")
        w.add(("" if last else ",") + (f" {w.comment()}" if slot() else "") + "\n")
    if slot():
        w.add(f"{pad}{w.comment()}\n")
    for level in range(depth - 1, 0, -1):
        w.add("  " * level + "}" + ("," if level == 1 else "") + "\n")
    w.add('  "end": true\n}')
    if slot():
        w.add(f"\n{w.comment()}")
    w.add("\n" if slot() else "")
    return w.text(), w.comments


def _check(file: ClientFile, config: tuple[str, list[str]]) -> None:
    text, comments = config
    installed, after = _round_trip(file, text)
    _assert_in_order(comments, installed)
    assert installed.count("[c") == text.count("[c"), "a comment was copied"
    assert after == text


_SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(toml_configs())
def test_every_comment_of_a_codex_config_survives(config: tuple[str, list[str]]) -> None:
    _check(ClientFile("codex", "user", Path("config.toml"), "toml", ("mcp_servers",)), config)


_JSON_CLIENTS = [
    ("cursor", "mcp.json", ("mcpServers",), False),
    ("vscode", "mcp.json", ("servers",), False),
    ("vscode", "settings.json", ("mcp", "servers"), False),
    ("claude-code", ".claude.json", ("projects", "/home/ada/src", "mcpServers"), True),
]


@pytest.mark.parametrize(("client", "name", "where", "projects"), _JSON_CLIENTS)
def test_every_comment_of_a_jsonc_config_survives(
    client: str, name: str, where: tuple[str, ...], projects: bool
) -> None:
    servers_key = ("mcpServers",) if projects else where

    @_SETTINGS
    @given(json_configs(where))
    def run(config: tuple[str, list[str]]) -> None:
        _check(ClientFile(client, "user", Path(name), "json", servers_key, projects), config)

    run()
