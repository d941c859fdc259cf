"""The gateway config: client formats as they are found, the guard section, errors that say where."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from mcp_guard.config import (
    ConfigError,
    GatewayConfig,
    HttpServer,
    StdioServer,
    expand_variables,
    json_path,
    load_config,
    parse_config,
    strip_jsonc,
)

ENV = {"TOKEN": "s3cret-value", "HOME": "/home/me", "EMPTY": ""}


def parse(data: Any, environ: dict[str, str] | None = None) -> GatewayConfig:
    return parse_config(json.dumps(data), path=Path("/etc/gw.json"), environ=ENV if environ is None else environ)


# --- client configs as they are ---------------------------------------------------------------


def test_claude_desktop_config_with_its_other_keys() -> None:
    config = parse(
        {
            "globalShortcut": "Ctrl+Space",
            "mcpServers": {
                "time": {"command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "UTC"}, "autoApprove": ["x"]},
                "remote": {
                    "type": "http",
                    "url": "https://example.test/mcp",
                    "headers": {"Authorization": "Bearer ${TOKEN}"},
                },
                "old": {"command": "node", "args": ["x.js"], "disabled": True},
            },
        }
    )
    time, remote, old = config.servers
    assert time == StdioServer(name="time", command="uvx", args=["mcp-server-time"], env={"TZ": "UTC"})
    assert remote == HttpServer(
        name="remote", url="https://example.test/mcp", headers={"Authorization": "Bearer s3cret-value"}
    )
    assert old.disabled and [s.name for s in config.enabled] == ["time", "remote"]
    assert config.warnings == ("mcpServers.time.autoApprove: not a key the guard uses; ignored",)


def test_vs_code_servers_key_comments_and_trailing_commas() -> None:
    text = """
    // VS Code .vscode/mcp.json
    {
      "inputs": [],
      "servers": {
        /* a stdio server */
        "fs": {"type": "stdio", "command": "npx", "args": ["-y", "server-filesystem", "."],},
        "api": {"type": "streamable-http", "url": "http://127.0.0.1:8000/mcp"}, // trailing
      },
    }
    """
    config = parse_config(text, environ=ENV)
    assert [(s.name, s.transport) for s in config.servers] == [("fs", "stdio"), ("api", "http")]
    assert config.server("fs").args == ["-y", "server-filesystem", "."]  # type: ignore[union-attr]


def test_unknown_server_keys_are_logged(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="mcp_guard"):
        parse({"mcpServers": {"a": {"command": "x", "alwaysAllow": [], "timeout": 5}}})
    assert [r.getMessage() for r in caplog.records] == [
        "/etc/gw.json: mcpServers.a.alwaysAllow: not a key the guard uses; ignored",
        "/etc/gw.json: mcpServers.a.timeout: not a key the guard uses; ignored",
    ]


def test_disabled_servers_do_not_need_their_variables() -> None:
    config = parse({"mcpServers": {"a": {"command": "x", "env": {"K": "${MISSING}"}, "disabled": True}}})
    assert config.servers[0].disabled


# --- variables ---------------------------------------------------------------------------------

EXPANSIONS = [
    ("plain", "abc", "abc"),
    ("braced", "${TOKEN}", "s3cret-value"),
    ("in text", "Bearer ${TOKEN}!", "Bearer s3cret-value!"),
    ("vs code env form", "${env:HOME}/x", "/home/me/x"),
    ("default used", "${NOPE:-fallback}", "fallback"),
    ("default unused", "${TOKEN:-fallback}", "s3cret-value"),
    ("set but empty", "<${EMPTY}>", "<>"),
    ("escaped", "$${TOKEN}", "${TOKEN}"),
    ("dollar alone", "$TOKEN and $", "$TOKEN and $"),
]


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in EXPANSIONS], ids=[c[0] for c in EXPANSIONS])
def test_variable_expansion(text: str, expected: str) -> None:
    assert expand_variables(text, ENV, "k") == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("${NOPE}", "k: the environment variable NOPE is not set"),
        ("${input:apiKey}", "k: `${input:apiKey}` is not a variable the guard can expand"),
        ("${}", "k: `${}` is not a variable"),
        # A typo in a token reference must not send the literal text as the credential (trial F14).
        ("Bearer ${MY_TOKEN", "k: a `${` has no closing `}`"),
        ("${X:-${Y}}", "k: the default of ${X:-...} holds another `${`"),
        ("${A}/${B}/${input:x}", "k: the environment variables A and B are not set; `${input:x}` is not a variable"),
        ("${userHome}/x", "k: ${userHome} is an editor variable"),
    ],
    ids=["unset", "vs code input", "empty", "unterminated", "nested default", "all at once", "editor variable"],
)
def test_variable_errors(text: str, message: str) -> None:
    with pytest.raises(ValueError) as info:
        expand_variables(text, ENV, "k")
    assert str(info.value).startswith(message)


def test_every_string_field_is_expanded() -> None:
    """Red team 36, 6d: `command`, `args`, `cwd` and `url` were taken as written, so a `${TOKEN}` in `args`
    reached the server as text and Claude Code's own `url` example was refused; they are expanded as Claude
    Code expands them."""
    config = parse(
        {
            "mcpServers": {
                "a": {"command": "${HOME}/bin/x", "args": ["--t", "${TOKEN}", "$${lit}"], "cwd": "${HOME}"},
                "b": {"url": "${API_BASE_URL:-https://api.example.com}/mcp", "headers": {"K": "${TOKEN}"}},
            }
        }
    )
    stdio, http = config.servers
    assert isinstance(stdio, StdioServer) and isinstance(http, HttpServer)
    assert (stdio.command, stdio.args, stdio.cwd) == ("/home/me/bin/x", ["--t", "s3cret-value", "${lit}"], "/home/me")
    assert (http.url, http.headers) == ("https://api.example.com/mcp", {"K": "s3cret-value"})


def test_every_unset_variable_is_named_with_its_field() -> None:
    """Each field where expansion happens says its unset variables, all of them, in one wording; a field whose
    expansion failed is not also called empty or not a URL."""
    entries = {
        "s": {"command": "${BIN}", "args": ["${A}${B}${A}", "ok"], "cwd": "${D}", "env": {"E": "${E1}"}},
        "h": {"url": "${HOST}", "headers": {"H": "Bearer ${TOK}"}},
        "v": {"command": "x", "args": ["${workspaceFolder}/src"]},
    }
    with pytest.raises(ConfigError) as info:
        parse({"mcpServers": entries})
    lines = [line.strip() for line in str(info.value).splitlines()[1:]]
    assert lines == [
        "mcpServers.s.command: the environment variable BIN is not set",
        "mcpServers.s.args[0]: the environment variables A and B are not set",
        "mcpServers.s.cwd: the environment variable D is not set",
        "mcpServers.s.env.E: the environment variable E1 is not set",
        "mcpServers.h.url: the environment variable HOST is not set",
        "mcpServers.h.headers.H: the environment variable TOK is not set",
        "mcpServers.v.args[0]: ${workspaceFolder} is an editor variable (VS Code fills it in when it starts a "
        "server itself, never from the environment): write the path itself",
    ]


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"command": "x", "url": "http://h/"}, "remove `url` for a stdio server, or `command` for an HTTP one"),
        ({"type": "stdio", "command": "x", "url": "http://h/"}, "`type` says stdio, so remove `url`"),
        ({"type": "http", "command": "x", "url": "http://h/"}, "`type` says http, so remove `command`"),
        (
            {"command": "x", "httpUrl": "http://h/"},
            "has both `command` (a stdio server) and `httpUrl` (Gemini CLI's key for a streamable HTTP server's URL): "
            "remove `httpUrl` for a stdio server",
        ),
        ({"command": "x", "serverUrl": "http://h/", "disabled": True}, "`serverUrl` (Windsurf's key"),
        ({"httpUrl": "http://h/"}, "`httpUrl` is Gemini CLI's key for it: name it `url` here"),
    ],
    ids=["plain", "type stdio", "type http", "gemini httpUrl", "windsurf serverUrl disabled", "httpUrl alone"],
)
def test_an_entry_with_command_and_a_url_says_which_to_remove(entry: dict[str, Any], message: str) -> None:
    """Red team 36, 6d: `command` beside Gemini's `httpUrl` was accepted (the URL ignored with a warning)."""
    with pytest.raises(ConfigError) as info:
        parse({"mcpServers": {"a": entry}})
    assert message in str(info.value) and str(info.value).count("\n") == 0


# --- errors: file, key, what -----------------------------------------------------------------------

ERRORS: list[tuple[str, Any, str]] = [
    ("no servers", {"other": 1}, "no `mcpServers` (or VS Code's `servers`) object"),
    ("both keys", {"mcpServers": {}, "servers": {}}, "has both `mcpServers` and `servers`"),
    ("servers not an object", {"mcpServers": []}, "mcpServers: must be an object"),
    ("entry not an object", {"mcpServers": {"a": "x"}}, "mcpServers.a: a server entry must be an object"),
    ("neither command nor url", {"mcpServers": {"a": {"args": []}}}, "mcpServers.a: needs `command`"),
    (
        "both command and url",
        {"mcpServers": {"a": {"command": "x", "url": "http://h/"}}},
        "has both `command` (a stdio server) and `url`",
    ),
    (
        "command not a string",
        {"mcpServers": {"a": {"command": 3}}},
        "mcpServers.a.command: expected a non-empty string, found an integer",
    ),
    (
        "args not strings",
        {"mcpServers": {"a": {"command": "x", "args": ["1", 2]}}},
        "mcpServers.a.args[1]: expected a string, found an integer",
    ),
    (
        "env not strings",
        {"mcpServers": {"a": {"command": "x", "env": {"N": 1}}}},
        "mcpServers.a.env.N: expected a string, found an integer",
    ),
    (
        "missing variable",
        {"mcpServers": {"a": {"command": "x", "env": {"T": "${NOPE}"}}}},
        "mcpServers.a.env.T: the environment variable NOPE is not set",
    ),
    (
        "missing header variable",
        {"mcpServers": {"a": {"url": "http://h/", "headers": {"X-Key": "${NOPE}"}}}},
        "mcpServers.a.headers.X-Key: the environment variable NOPE",
    ),
    ("sse", {"mcpServers": {"a": {"type": "sse", "url": "http://h/sse"}}}, "mcpServers.a.type: the HTTP+SSE transport"),
    (
        "type mismatch",
        {"mcpServers": {"a": {"type": "http", "command": "x"}}},
        "mcpServers.a.type: type http needs `url`",
    ),
    ("unknown type", {"mcpServers": {"a": {"type": "ws", "command": "x"}}}, "mcpServers.a.type: must be one of"),
    (
        "env on http",
        {"mcpServers": {"a": {"url": "http://h/", "env": {}}}},
        "mcpServers.a.env: `env` belongs to stdio servers",
    ),
    (
        "cwd on http",
        {"mcpServers": {"a": {"url": "http://h/", "cwd": "/"}}},
        "mcpServers.a.cwd: `cwd` belongs to stdio servers",
    ),
    ("bad url", {"mcpServers": {"a": {"url": "ftp://h/"}}}, "mcpServers.a.url: must be an http:// or https:// URL"),
    ("slash in name", {"mcpServers": {"a/b": {"command": "x"}}}, 'mcpServers["a/b"]: a server name must not contain'),
    ("empty name", {"mcpServers": {"": {"command": "x"}}}, 'mcpServers[""]: a server name must not be empty'),
    (
        "disabled not bool",
        {"mcpServers": {"a": {"command": "x", "disabled": "yes"}}},
        "mcpServers.a.disabled: expected true or false, found a string",
    ),
    ("guard unknown key", {"mcpServers": {}, "guard": {"maxArgBytes": 1}}, "guard.maxArgBytes: unknown key"),
    ("guard not object", {"mcpServers": {}, "guard": []}, "guard: must be an object"),
    (
        "guard bad profile",
        {"mcpServers": {}, "guard": {"profile": "loose"}},
        "guard.profile: expected one of extended, standard, strict, found a string that is none of them",
    ),
    (
        "guard zero limit",
        {"mcpServers": {}, "guard": {"maxArgumentBytes": 0}},
        "guard.maxArgumentBytes: expected an integer greater than 0, found an integer that is not greater than 0",
    ),
    (
        "guard string limit",
        {"mcpServers": {}, "guard": {"callsPerMinute": "5"}},
        "guard.callsPerMinute: expected an integer greater than 0, found a string",
    ),
    (
        "format without tool",
        {"mcpServers": {}, "guard": {"nameFormat": "{server}"}},
        "guard.nameFormat: must contain {tool}",
    ),
    (
        "format other field",
        {"mcpServers": {}, "guard": {"nameFormat": "{tool}{x}"}},
        "guard.nameFormat: may contain only",
    ),
    ("format broken", {"mcpServers": {}, "guard": {"nameFormat": "{tool"}}, "guard.nameFormat: not a valid format"),
    (
        "format conversion",
        {"mcpServers": {}, "guard": {"nameFormat": "{tool!r}"}},
        "guard.nameFormat: may contain only {server} and {tool}, as they are: no conversion (!r)",
    ),
    ("format spec", {"mcpServers": {}, "guard": {"nameFormat": "{server:>9}_{tool}"}}, "guard.nameFormat: may contain"),
    (
        "policy for unknown server",
        {"mcpServers": {"a": {"command": "x"}}, "guard": {"servers": {"b": {}}}},
        "guard.servers.b: no server of that name",
    ),
    (
        "nested unknown key",
        {"mcpServers": {"a": {"command": "x"}}, "guard": {"servers": {"a": {"tools": {"w*": {"limit": 1}}}}}},
        'guard.servers.a.tools["w*"].limit: unknown key',
    ),
    (
        "empty pattern",
        {"mcpServers": {}, "guard": {"deny": [""]}},
        "guard.deny[0]: expected a non-empty string, found an empty string",
    ),
    (
        "bad unsupported",
        {"mcpServers": {}, "guard": {"unsupported": "drop"}},
        "guard.unsupported: expected one of reject, hide, found a string that is none of them",
    ),
]


@pytest.mark.parametrize(("data", "message"), [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_errors_name_the_file_and_the_key(data: Any, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse(data)
    text = str(info.value)
    assert text.startswith("/etc/gw.json: ")
    assert message in text
    assert "s3cret" not in text


def test_all_errors_at_once() -> None:
    with pytest.raises(ConfigError) as info:
        parse({"mcpServers": {"a": {"command": 1}, "b": {"url": "x"}}, "guard": {"pageSize": 0}})
    lines = str(info.value).splitlines()
    assert [line.strip().split(":")[0] for line in lines[1:]] == [
        "mcpServers.a.command",
        "mcpServers.b.url",
        "guard.pageSize",
    ]


def test_every_error_of_an_entry_at_once_one_per_line() -> None:
    """The trial's typo2.json: three rounds of fixes before; now every problem in one report."""
    data = {
        "mcpServers": {
            "t": {
                "command": "python3",
                "comand": "x",
                "args": "notalist",
                "env": {"A": 1, "B": "${NOPE_VAR}", "C": "${NOPE2:-dflt}"},
                "disabled": "yes",
                "headers": {"X": "${NOPE3}"},
            },
            "u": {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer ${NOPE_TOKEN}"}, "env": {}},
        },
        "guard": {"callsPerMinut": 5},
    }
    with pytest.raises(ConfigError) as info:
        parse(data)
    lines = [line.strip() for line in str(info.value).splitlines()[1:]]
    assert lines == [
        "mcpServers.t.headers: `headers` belongs to HTTP servers, this one is stdio",
        "mcpServers.t.env.B: the environment variable NOPE_VAR is not set",
        'mcpServers.t.args: expected a list of strings, found a string (one item is written as a list of one: ["..."])',
        "mcpServers.t.env.A: expected a string, found an integer",
        "mcpServers.t.disabled: expected true or false, found a string",
        "mcpServers.u.env: `env` belongs to stdio servers, this one is HTTP",
        "mcpServers.u.headers.Authorization: the environment variable NOPE_TOKEN is not set",
        "guard.callsPerMinut: unknown key (the guard section accepts only its own settings) (did you mean "
        "`callsPerMinute`?)",
    ]


def test_a_mistyped_command_key_is_named() -> None:
    with pytest.raises(ConfigError) as info:
        parse({"mcpServers": {"t": {"comand": "python3"}}})
    assert (
        "mcpServers.t: needs `command` (a stdio server) or `url` (a streamable HTTP server); `comand` is not a "
        "key the guard knows: did you mean `command`?"
    ) in str(info.value)
    with pytest.raises(ConfigError) as info:
        parse({"mcpServers": {"a": {"command": "x", "url": "http://h/"}}})
    assert str(info.value).count("\n") == 0  # the one problem, said once


@pytest.mark.parametrize(
    "entry",
    [
        {"comand": "x", "env": {"K": "${NOPE_VAR}"}, "type": "http"},
        {"comand": "x", "env": {"K": "${NOPE_VAR}"}, "headers": {}, "cwd": "/", "args": ["a"]},
        {"comand": "x", "headers": {"K": "${NOPE_VAR}"}, "type": "stdio"},
        {"comand": "x", "args": ["${NOPE_VAR}"], "type": "http"},
    ],
    ids=["type http", "headers", "headers under type stdio", "args under type http"],
)
def test_an_entry_with_neither_command_nor_url_is_of_no_kind(entry: dict[str, Any]) -> None:
    """Red team, stop 33: such an entry was judged HTTP by its `type` or `headers`, its `env` called out of
    place, and the unset variable in it never named; it is of no kind: its one fault is said, with the hint,
    and every ``${VAR}`` in its `env` and `headers` is checked."""
    with pytest.raises(ConfigError) as info:
        parse({"mcpServers": {"t": entry}})
    mapping = "env" if "env" in entry else "headers" if "headers" in entry else "args"
    lines = [line.strip() for line in str(info.value).splitlines()[1:]]
    assert lines == [
        "mcpServers.t: needs `command` (a stdio server) or `url` (a streamable HTTP server); `comand` is not a "
        "key the guard knows: did you mean `command`?",
        f"mcpServers.t.{mapping}{'[0]' if mapping == 'args' else '.K'}: the environment variable NOPE_VAR is not set",
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "not valid JSON at line 1 column 2"),
        ('{"mcpServers": {"a": {}, "a": {}}}', 'the key "a" appears twice in one object'),
        ('{"mcpServers": {}, "guard": {"maxArgumentBytes": NaN}}', "NaN is not JSON"),
        ("[]", "the top level must be an object"),
        ('\n\n  {"mcpServers": {} // fine\n  ,, }', "not valid JSON at line 4 column 6"),
    ],
    ids=["truncated", "duplicate key", "NaN", "array", "error position after comments"],
)
def test_json_errors(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(text, path=Path("c.json"))
    assert str(info.value).startswith("c.json: ")
    assert message in str(info.value)


# --- JSON with comments ------------------------------------------------------------------------------

JSONC = [
    ("line comment", '{"a": 1} // x', '{"a": 1}     '),
    ("block comment", '{/* x */"a": 1}', '{       "a": 1}'),
    ("slashes in strings", '{"u": "http://x/*y*/"}', '{"u": "http://x/*y*/"}'),
    ("escaped quote in string", r'{"a": "\"//"}', r'{"a": "\"//"}'),
    ("trailing comma in object", '{"a": 1,}', '{"a": 1 }'),
    ("trailing comma in array", "[1, 2, ]", "[1, 2  ]"),
    ("comma before comment and brace", "[1, // c\n]", "[1      \n]"),
    ("newlines kept in block comments", "/*a\nb*/1", "   \n   1"),
]


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in JSONC], ids=[c[0] for c in JSONC])
def test_strip_jsonc(text: str, expected: str) -> None:
    assert strip_jsonc(text) == expected


# --- the guard section -------------------------------------------------------------------------------


def test_guard_section_defaults_and_values() -> None:
    config = parse({"mcpServers": {"fs": {"command": "x"}}})
    g = config.guard
    assert (g.profile, g.name_format, g.unsupported, g.new_tools, g.page_size) == (
        "extended",
        "{server}__{tool}",
        "reject",
        "allow",
        100,
    )
    assert (g.allow, g.deny, g.hide, g.max_argument_bytes, g.calls_per_minute, g.journal) == (
        None,
        [],
        [],
        None,
        None,
        None,
    )
    config = parse(
        {
            "mcpServers": {"fs": {"command": "x"}},
            "guard": {
                "profile": "strict",
                "nameFormat": "{server}.{tool}",
                "unsupported": "hide",
                "allow": ["fs/*"],
                "maxArgumentBytes": 1000,
                "callsPerMinute": 60,
                "journal": "logs/j.jsonl",
                "lock": "/var/gw.lock",
                "newTools": "reject",
                "pageSize": 2,
                "servers": {"fs": {"deny": ["write*"], "tools": {"read*": {"callsPerMinute": 5}}}},
            },
        }
    )
    g = config.guard
    assert g.servers["fs"].tools["read*"].calls_per_minute == 5
    assert config.journal_path == Path("/etc/logs/j.jsonl")
    assert config.lock_path == Path("/var/gw.lock")


def test_default_lock_path_is_beside_the_config(tmp_path: Path) -> None:
    path = tmp_path / "gateway.json"
    path.write_text('{"mcpServers": {}}', encoding="utf-8")
    config = load_config(path)
    assert config.lock_path == tmp_path / "gateway.json.lock"
    assert config.journal_path is None


def test_load_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read the file"):
        load_config(tmp_path / "absent.json")
    (tmp_path / "latin1.json").write_bytes(b'{"a": "\xe9"}')
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_config(tmp_path / "latin1.json")
    (tmp_path / "bom.json").write_bytes(b'\xef\xbb\xbf{"mcpServers": {}}')
    assert load_config(tmp_path / "bom.json").servers == ()


@pytest.mark.parametrize(
    ("loc", "expected"),
    [
        (("mcpServers", "a", "args", 0), "mcpServers.a.args[0]"),
        (("mcpServers", "my server"), 'mcpServers["my server"]'),
        (("guard", "servers", "fs", "tools", "w*"), 'guard.servers.fs.tools["w*"]'),
        ((), "(top level)"),
    ],
    ids=["index", "space", "glob", "empty"],
)
def test_json_path(loc: tuple[str | int, ...], expected: str) -> None:
    assert json_path(loc) == expected
