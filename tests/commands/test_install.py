"""``mcp-guard install`` / ``uninstall`` / ``status`` on real-looking config files of every client.

Every test works in ``tmp_path``: a fake home (``HOME``), a fake project folder and the
install record's folder (``MCP_GUARD_STATE_DIR``); nothing reads or writes the real home.
The fixture files (fixtures/clients/<client>/) are the shapes each client documents, with
comments where the format allows them, URL entries with secret and plain headers, SSE
endpoints and OAuth entries that cannot be guarded.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

import pytest

from mcp_guard.cli import main
from mcp_guard.commands import clients_jsonc as jsonc
from mcp_guard.commands.clients_entries import guarded_upstream, plan_entry
from mcp_guard.commands.clients_files import BACKUP_SUFFIX, entries_of, plan_install, write_plan
from mcp_guard.commands.clients_paths import CLIENTS, ClientFile, Places, client_files, state_dir

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures" / "clients"
SIGMA = ROOT / "fixtures" / "sigma" / "server.py"

# fixture -> (where it goes on Linux, relative to home or project; how many entries install guards; skips)
PLACES: dict[str, tuple[str, str, int, int]] = {
    "claude-desktop/claude_desktop_config.json": ("home", ".config/Claude/claude_desktop_config.json", 3, 0),
    "claude-code/claude.json": ("home", ".claude.json", 3, 1),
    "claude-code/mcp.json": ("project", ".mcp.json", 1, 1),
    "cursor/mcp.json": ("home", ".cursor/mcp.json", 3, 0),
    "vscode/mcp.json": ("project", ".vscode/mcp.json", 3, 0),
    "vscode/settings.json": ("home", ".config/Code/User/settings.json", 1, 0),
    "windsurf/mcp_config.json": ("home", ".codeium/windsurf/mcp_config.json", 2, 1),
    "gemini/settings.json": ("home", ".gemini/settings.json", 2, 1),
    "codex/config.toml": ("home", ".codex/config.toml", 3, 1),
}
COMMENTS = {
    "vscode/mcp.json": ["// Workspace MCP servers", "/* the docs server, from the team template */", "// no robots"],
    "vscode/settings.json": ["// MCP servers from before VS Code 1.102"],
    "codex/config.toml": ["# ~/.codex/config.toml", "# Docs lookups for the team wiki", "# uv's runner"],
}


class World:
    """A fake home, project and record folder; runs the CLI in them."""

    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.home = tmp_path / "home"
        self.project = tmp_path / "project"
        self.state = tmp_path / "state"
        for folder in (self.home, self.project):
            folder.mkdir()
        monkeypatch.setenv("HOME", str(self.home))
        monkeypatch.setenv("MCP_GUARD_STATE_DIR", str(self.state))
        for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "CODEX_HOME", "APPDATA"):
            monkeypatch.delenv(var, raising=False)
        monkeypatch.setattr(sys, "platform", "linux")
        monkeypatch.chdir(self.project)

    def place(self, fixture: str) -> Path:
        base, relative, _, _ = PLACES[fixture]
        path = (self.home if base == "home" else self.project) / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes((FIXTURES / fixture).read_bytes())
        return path

    def run(self, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
        status = main(list(argv))
        out, err = capsys.readouterr()
        return status, out, err


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    return World(tmp_path, monkeypatch)


def _file_for(fixture: str) -> ClientFile:
    client = fixture.split("/")[0]
    places = Places.of("linux", dict(os.environ), Path.cwd())
    base, relative, _, _ = PLACES[fixture]
    wanted = Path(os.environ["HOME"] if base == "home" else Path.cwd()) / relative
    return next(f for f in client_files(places, (client,)) if Path(str(f.path)) == wanted)


def _outside_servers(file: ClientFile, text: str) -> Any:
    """The document without its server maps (what install must not touch)."""
    if file.format == "toml":
        import tomlkit

        root = tomlkit.parse(text).unwrap()
    else:
        root = jsonc.parse(text).value()
    root = json.loads(json.dumps(root, default=str))
    node = root
    for key in file.servers_key[:-1]:
        node = node[key]
    node.pop(file.servers_key[-1], None)
    for project in root.get("projects", {}).values() if file.project_maps else []:
        project.pop("mcpServers", None)
    return root


@pytest.mark.parametrize("fixture", sorted(PLACES))
def test_install_guards_every_entry_it_can_and_uninstall_gives_the_original_bytes(
    world: World, capsys: pytest.CaptureFixture[str], fixture: str
) -> None:
    path = world.place(fixture)
    original = path.read_bytes()
    file = _file_for(fixture)
    _, _, guards, skips = PLACES[fixture]

    status, out, _ = world.run(capsys, "install", "--yes", "--client", file.client)
    assert status == 0, out
    assert out.count("will be put behind the guard") == guards
    assert out.count("cannot be guarded: ") == skips
    text = path.read_text()
    assert (path.parent / (path.name + BACKUP_SUFFIX)).read_bytes() == original
    assert _outside_servers(file, text) == _outside_servers(file, original.decode())
    for comment in COMMENTS.get(fixture, []):
        assert comment in text
    entries = entries_of(file, text)
    guarded = [v for _, v in entries if guarded_upstream(v.get("command"), v.get("args"))]
    assert len(guarded) == guards
    for value in guarded:
        assert not any("FAKE" in arg for arg in value["args"]), "a secret reached a command line"

    # Idempotent: a second install changes nothing and says why.
    status, out, _ = world.run(capsys, "install", "--yes", "--client", file.client)
    assert status == 0
    assert out.count("already behind the guard: left alone") == guards
    assert path.read_text() == text

    status, out, _ = world.run(capsys, "uninstall", "--yes", "--client", file.client)
    assert status == 0, out
    assert out.count("restored as it was before install") == guards
    assert path.read_bytes() == original


def test_a_secret_header_moves_to_env_and_plain_headers_stay_on_the_command_line() -> None:
    entry = {
        "url": "https://mcp.stripe.com",
        "headers": {"Authorization": "Bearer sk-1", "X-Api-Key": "k-2", "X-Client": "cursor"},
        "disabled": False,
    }
    plan = plan_entry(entry, ["/opt/bin/mcp-guard"], ["--profile", "standard"])
    assert plan.action == "guard"
    assert list(plan.entry) == ["command", "args", "disabled", "env"]
    assert plan.entry["args"] == [
        "wrap",
        "--profile",
        "standard",
        "--upstream-url",
        "https://mcp.stripe.com",
        "--header-env",
        "Authorization=MCP_GUARD_HEADER_AUTHORIZATION",
        "--header-env",
        "X-Api-Key=MCP_GUARD_HEADER_X_API_KEY",
        "--header",
        "X-Client=cursor",
    ]
    assert plan.entry["env"] == {"MCP_GUARD_HEADER_AUTHORIZATION": "Bearer sk-1", "MCP_GUARD_HEADER_X_API_KEY": "k-2"}


def test_a_stdio_entry_keeps_env_cwd_and_every_other_key_in_order() -> None:
    entry = {"type": "stdio", "command": "uvx", "args": ["mcp-server-git"], "cwd": "/src", "env": {"A": "1"}, "x": 1}
    plan = plan_entry(entry, ["python3", "-m", "mcp_guard"], [])
    assert plan.entry == {
        "type": "stdio",
        "command": "python3",
        "args": ["-m", "mcp_guard", "wrap", "--", "uvx", "mcp-server-git"],
        "cwd": "/src",
        "env": {"A": "1"},
        "x": 1,
    }


@pytest.mark.parametrize(
    ("command", "args", "upstream"),
    [
        ("mcp-guard", ["wrap", "--", "uvx", "t"], ("wrap", ["uvx", "t"])),
        ("/opt/venv/bin/mcp-guard", ["wrap", "--profile", "strict", "--", "t"], ("wrap", ["t"])),
        ("C:\\Tools\\mcp-guard.exe", ["wrap", "--", "t"], ("wrap", ["t"])),
        ("python3", ["-m", "mcp_guard", "wrap", "--", "t"], ("wrap", ["t"])),
        (
            "/usr/bin/python3.12",
            ["-m", "mcp_guard", "wrap", "--upstream-url", "https://x/mcp"],
            ("wrap", ["--upstream-url", "https://x/mcp"]),
        ),
        ("uvx", ["--from", "mcp-guard==0.1.0", "mcp-guard", "wrap", "--", "t"], ("wrap", ["t"])),
        ("uvx", ["mcp-guard@latest", "wrap", "--", "t"], ("wrap", ["t"])),
        ("pipx", ["run", "mcp-guard", "serve", "--config", "c.json"], ("serve", [])),
        ("python3", ["/opt/venv/bin/mcp-guard", "wrap", "--", "t"], ("wrap", ["t"])),
        ("python", ["C:\\src\\mcp_guard\\__main__.py", "wrap", "--", "t"], ("wrap", ["t"])),
        ("python3", ["server.py", "wrap", "--", "t"], None),
        ("uvx", ["mcp-server-time"], None),
        ("npx", ["-y", "mcp-guard-lookalike", "wrap"], None),
        ("mcp-guard", ["check", "--", "t"], None),
    ],
)
def test_every_form_of_the_guard_is_recognized(command: str, args: list[str], upstream: Any) -> None:
    assert guarded_upstream(command, args) == upstream
    assert (plan_entry({"command": command, "args": args}, ["g"], []).action == "guarded") == (upstream is not None)


@pytest.mark.parametrize(
    ("entry", "reason"),
    [
        ({"type": "sse", "url": "https://x/sse"}, "SSE"),
        ({"serverUrl": "https://actions.zapier.com/mcp/k/sse"}, "SSE"),
        ({"url": "https://x/mcp", "bearer_token_env_var": "T"}, "bearer_token_env_var"),
        ({"url": "https://x/mcp", "oauth": {"clientId": "c"}}, "oauth"),
        ({"url": "ftp://x"}, "not an http(s) URL"),
        ({"command": "x", "args": "not a list"}, "not a list of strings"),
        ({"env": {}}, "neither"),
        ({"url": "https://x/mcp", "headers": {"Mcp-Session-Id": "s"}}, "set by mcp-guard itself"),
        ({"url": "https://x/mcp", "headers": {"X-Team": "caf\u00e9"}}, "printable ASCII"),
    ],
)
def test_what_cannot_be_guarded_exactly_is_skipped_with_the_reason(entry: dict[str, Any], reason: str) -> None:
    plan = plan_entry(entry, ["g"], [])
    assert plan.action == "skip"
    assert reason in plan.reason


def test_gemini_url_means_sse(world: World) -> None:
    assert plan_entry({"url": "https://x/mcp"}, ["g"], [], client="gemini").action == "skip"
    assert plan_entry({"httpUrl": "https://x/mcp"}, ["g"], [], client="gemini").action == "guard"
    assert plan_entry({"url": "https://x/mcp"}, ["g"], [], client="cursor").action == "guard"


def test_dry_run_prints_a_masked_diff_and_writes_nothing(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    path = world.place("cursor/mcp.json")
    before = path.read_bytes()
    status, out, _ = world.run(capsys, "install", "--dry-run")
    assert status == 0
    assert f"+++ {path}" in out and '+      "command": ' in out
    assert "FAKE-" not in out, "a secret value reached the diff"
    assert "dry run: nothing written" in out
    assert path.read_bytes() == before
    assert not (path.parent / (path.name + BACKUP_SUFFIX)).exists()
    assert not world.state.exists()


def test_without_yes_and_without_a_terminal_nothing_is_written(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    path = world.place("claude-desktop/claude_desktop_config.json")
    before = path.read_bytes()
    status, _, err = world.run(capsys, "install")
    assert status == 2
    assert "stdin is not a terminal" in err and "--yes" in err
    assert path.read_bytes() == before


def test_a_file_changed_between_read_and_write_is_refused(world: World) -> None:
    path = world.place("windsurf/mcp_config.json")
    plan = plan_install(_file_for("windsurf/mcp_config.json"), ["mcp-guard"], [])
    assert plan.new_text is not None
    edited = path.read_text().replace('"disabled": true', '"disabled": false')
    path.write_text(edited)
    problem = write_plan(plan)
    assert problem is not None and "changed while mcp-guard was working on it" in problem
    assert path.read_text() == edited
    assert not (path.parent / (path.name + BACKUP_SUFFIX)).exists()


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b'{"mcpServers": {"a": {"command": "x"},}', "not valid JSON: line 1 column 40"),
        (b'{"mcpServers": {"a": {}, "a": {}}}', "a duplicate key"),
        (b'{"mcpServers": []}', "'mcpServers' is not an object"),
        (b"\xff\xfe{}", "not UTF-8"),
        (b"[1, 2]", "the document is not an object"),
    ],
)
def test_an_invalid_file_is_reported_with_its_path_and_nothing_is_written(
    world: World, capsys: pytest.CaptureFixture[str], content: bytes, reason: str
) -> None:
    path = world.home / ".cursor" / "mcp.json"
    path.parent.mkdir()
    path.write_bytes(content)
    good = world.place("windsurf/mcp_config.json")
    status, out, _ = world.run(capsys, "install", "--yes")
    assert status == 1
    assert f"cursor (user): {path}\n  error: " in out and reason in out and "nothing written" in out
    assert path.read_bytes() == content
    assert "mcp-guard wrap" not in path.read_text("latin-1")
    assert "written" in out.split(str(good))[-1], "the other client's file is still handled"


def test_an_unreadable_file_is_reported(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    (world.home / ".gemini" / "settings.json").mkdir(parents=True)  # a folder where the file should be
    status, out, _ = world.run(capsys, "install", "--yes", "--client", "gemini")
    assert status == 1
    assert f"gemini (user): {world.home / '.gemini' / 'settings.json'}\n  error: cannot be read" in out


def test_uninstall_leaves_an_entry_changed_since_install_alone(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    path = world.place("claude-desktop/claude_desktop_config.json")
    original = path.read_text()
    assert world.run(capsys, "install", "--yes")[0] == 0
    installed = path.read_text()
    # The user edits the time server's args by hand after install.
    changed = installed.replace('"--local-timezone=Europe/Paris"', '"--local-timezone=UTC"')
    assert changed != installed
    path.write_text(changed)
    status, out, _ = world.run(capsys, "uninstall", "--yes")
    assert status == 0
    assert "time: changed since install: left alone" in out
    assert out.count("restored as it was before install") == 2
    after = jsonc.parse(path.read_text()).value()["mcpServers"]
    before = jsonc.parse(original).value()["mcpServers"]
    assert after["filesystem"] == before["filesystem"] and after["github"] == before["github"]
    assert "--local-timezone=UTC" in after["time"]["args"]
    # The record of the entry left alone is kept: undo the edit, and uninstall restores it too.
    path.write_text(path.read_text().replace('"--local-timezone=UTC"', '"--local-timezone=Europe/Paris"'))
    status, out, _ = world.run(capsys, "uninstall", "--yes")
    assert status == 0 and "time: will be restored" in out
    assert path.read_text() == original


def test_uninstall_leaves_an_entry_guarded_by_hand_alone(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    path = world.home / ".cursor" / "mcp.json"
    path.parent.mkdir()
    text = '{"mcpServers": {"t": {"command": "mcp-guard", "args": ["wrap", "--", "uvx", "mcp-server-time"]}}}\n'
    path.write_text(text)
    status, out, _ = world.run(capsys, "uninstall", "--yes")
    assert status == 0
    assert "t: behind the guard, but not by install" in out
    assert path.read_text() == text


def test_crlf_and_a_byte_order_mark_survive_the_round_trip(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    path = world.home / ".cursor" / "mcp.json"
    path.parent.mkdir()
    original = '\ufeff{\r\n  "mcpServers": {\r\n    "t": {\r\n      "command": "uvx"\r\n    }\r\n  }\r\n}\r\n'.encode()
    path.write_bytes(original)
    assert world.run(capsys, "install", "--yes")[0] == 0
    text = path.read_bytes().decode()
    assert text.startswith("\ufeff") and "\n" not in text.replace("\r\n", "")
    assert world.run(capsys, "uninstall", "--yes")[0] == 0
    assert path.read_bytes() == original


def test_status_lists_each_client_and_server(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    world.place("gemini/settings.json")
    world.place("codex/config.toml")
    status, out, _ = world.run(capsys, "status", "--json")
    assert status == 0
    clients = json.loads(out)["clients"]
    assert [c["client"] for c in clients] == ["gemini", "codex"]
    gemini = {s["name"]: s for s in clients[0]["servers"]}
    assert gemini["git"] == {"name": "git", "kind": "stdio", "guarded": False}
    assert "SSE" in gemini["events"]["reason"]
    world.run(capsys, "install", "--yes", "--client", "codex")
    status, out, _ = world.run(capsys, "status", "--client", "codex")
    assert "  context7: stdio, guarded" in out
    assert "  figma: url, NOT guarded (cannot be guarded: 'bearer_token_env_var'" in out


def test_status_calls_a_guarded_url_entry_a_url_entry(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    """Trial T2: after install, a URL entry runs ``wrap --upstream-url``; status still says ``url``."""
    path = world.home / ".cursor" / "mcp.json"
    path.parent.mkdir()
    entry = {"url": "https://example.com/mcp", "headers": {"X-Client": "c"}}
    path.write_text(json.dumps({"mcpServers": {"remote": entry, "local": {"command": "srv"}}}, indent=2))
    assert world.run(capsys, "install", "--yes")[0] == 0
    status, out, _ = world.run(capsys, "status", "--json")
    assert status == 0
    servers = {s["name"]: s for s in json.loads(out)["clients"][0]["servers"]}
    assert servers["remote"]["kind"] == "url" and servers["remote"]["guarded"] is True
    assert servers["local"]["kind"] == "stdio" and servers["local"]["guarded"] is True


def test_status_check_lists_the_upstream_tools(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    config = world.home / ".cursor" / "mcp.json"
    config.parent.mkdir()
    entry = {"command": sys.executable, "args": [str(SIGMA)]}
    config.write_text(json.dumps({"mcpServers": {"sigma": entry}}))
    assert world.run(capsys, "install", "--yes")[0] == 0
    status, out, _ = world.run(capsys, "status", "--check", "--json", "--profile", "extended")
    (server,) = json.loads(out)["clients"][0]["servers"]
    assert server["guarded"] is True
    assert server["check"]["tools"] > 0
    counts = server["check"]
    assert counts["supported"] > 0
    assert counts["supported"] + counts["unsupported"] + counts["malformed"] == counts["tools"]
    assert status == (0 if server["check"]["ok"] else 1)


def test_project_maps_of_claude_code_are_guarded_and_named(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    world.place("claude-code/claude.json")
    status, out, _ = world.run(capsys, "install", "--dry-run", "--client", "claude-code")
    assert status == 0
    assert "postgres (project /home/ada/src/shop): will be put behind the guard" in out


# --- paths -------------------------------------------------------------------------------------


def _paths(places: Places) -> dict[tuple[str, str, str], str]:
    return {(f.client, f.scope, f.path.name): str(f.path) for f in client_files(places)}


def test_windows_paths_come_from_userprofile_and_appdata() -> None:
    env = {"USERPROFILE": "C:\\Users\\ada", "APPDATA": "D:\\Roaming", "LOCALAPPDATA": "C:\\Users\\ada\\AppData\\Local"}
    places = Places.of("win32", env, "C:\\src\\shop")
    paths = _paths(places)
    assert (
        paths[("claude-desktop", "user", "claude_desktop_config.json")]
        == "D:\\Roaming\\Claude\\claude_desktop_config.json"
    )
    assert paths[("claude-code", "user", ".claude.json")] == "C:\\Users\\ada\\.claude.json"
    assert paths[("claude-code", "project", ".mcp.json")] == "C:\\src\\shop\\.mcp.json"
    assert paths[("cursor", "user", "mcp.json")] == "C:\\Users\\ada\\.cursor\\mcp.json"
    assert paths[("vscode", "user", "mcp.json")] == "D:\\Roaming\\Code\\User\\mcp.json"
    assert paths[("vscode", "project", "mcp.json")] == "C:\\src\\shop\\.vscode\\mcp.json"
    assert paths[("windsurf", "user", "mcp_config.json")] == "C:\\Users\\ada\\.codeium\\windsurf\\mcp_config.json"
    assert paths[("gemini", "user", "settings.json")] == "C:\\Users\\ada\\.gemini\\settings.json"
    assert paths[("codex", "user", "config.toml")] == "C:\\Users\\ada\\.codex\\config.toml"
    assert state_dir(places) == PureWindowsPath("C:\\Users\\ada\\AppData\\Local\\mcp-guard")
    # Without APPDATA: the default roaming folder under the profile.
    fallback = Places.of("win32", {"USERPROFILE": "C:\\Users\\ada"}, "C:\\p")
    assert _paths(fallback)[("claude-desktop", "user", "claude_desktop_config.json")].startswith(
        "C:\\Users\\ada\\AppData\\Roaming\\Claude"
    )


def test_macos_paths_are_under_library_application_support() -> None:
    places = Places.of("darwin", {"HOME": "/Users/ada", "CODEX_HOME": "/Users/ada/.config/codex"}, "/src/shop")
    paths = _paths(places)
    support = "/Users/ada/Library/Application Support"
    assert (
        paths[("claude-desktop", "user", "claude_desktop_config.json")]
        == f"{support}/Claude/claude_desktop_config.json"
    )
    assert paths[("vscode", "user", "mcp.json")] == f"{support}/Code/User/mcp.json"
    assert paths[("vscode", "user", "settings.json")] == f"{support}/Code/User/settings.json"
    assert paths[("claude-code", "user", ".claude.json")] == "/Users/ada/.claude.json"
    assert paths[("codex", "user", "config.toml")] == "/Users/ada/.config/codex/config.toml"
    assert state_dir(places) == PurePosixPath(f"{support}/mcp-guard")


def test_linux_paths_follow_xdg() -> None:
    env = {"HOME": "/home/ada", "XDG_CONFIG_HOME": "/home/ada/cfg", "XDG_DATA_HOME": "/home/ada/data"}
    paths = _paths(Places.of("linux", env, "/src"))
    assert (
        paths[("claude-desktop", "user", "claude_desktop_config.json")]
        == "/home/ada/cfg/Claude/claude_desktop_config.json"
    )
    assert paths[("vscode", "user", "mcp.json")] == "/home/ada/cfg/Code/User/mcp.json"
    assert state_dir(Places.of("linux", env, "/src")) == PurePosixPath("/home/ada/data/mcp-guard")
    assert {f.client for f in client_files(Places.of("linux", env, "/src"))} == set(CLIENTS)


# --- the JSONC reader --------------------------------------------------------------------------


def test_the_jsonc_reader_gives_values_and_exact_spans() -> None:
    text = '{\n  // c\n  "a": [1, 2.5, "x",], /* d */ "b": {"c": null, "d": true},\n}'
    root = jsonc.parse(text)
    assert root.value() == {"a": [1, 2.5, "x"], "b": {"c": None, "d": True}}
    b = jsonc.find(root, ("b",))
    assert b is not None and text[b.start : b.end] == '{"c": null, "d": true}'
    assert jsonc.find(root, ("b", "c", "x")) is None


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('{"a": "s3cr3t" "b": 2}', "line 1 column 16"),
        ('{\n  "s3cr3t": /* open', "line 2 column 13"),
        ("{'s3cr3t': 1}", "line 1 column 2"),
        ('{"a": 1} s3cr3t', "line 1 column 10"),
        ('{"a": "s3cr3t\x01"}', "line 1 column 7"),
        ('{"s3cr3t": 1, "s3cr3t": 2}', "line 1 column 15"),
        ("[" * 300, "nested too deeply"),
    ],
)
def test_the_jsonc_reader_says_where_without_quoting_content(text: str, where: str) -> None:
    with pytest.raises(ValueError, match=re.escape(where)) as caught:
        jsonc.parse(text)
    assert "s3cr3t" not in str(caught.value)


# --- end to end --------------------------------------------------------------------------------


@pytest.mark.e2e
@pytest.mark.anyio
async def test_installed_claude_desktop_entry_starts_the_guard_and_lists_tools(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    """Install into a Claude Desktop config, then start the rewritten entry as Claude would and
    list the Sigma fixture server's tools through the guard."""
    from mcp_guard.reports.listing import list_tools

    config = world.home / ".config" / "Claude" / "claude_desktop_config.json"
    config.parent.mkdir(parents=True)
    config.write_text(
        json.dumps({"mcpServers": {"sigma": {"command": sys.executable, "args": [str(SIGMA)], "env": {"X": "1"}}}})
    )
    assert main(["install", "--yes", "--client", "claude-desktop"]) == 0
    entry = json.loads(config.read_text())["mcpServers"]["sigma"]
    assert entry["command"] == sys.executable
    assert entry["args"] == ["-m", "mcp_guard", "wrap", "--", sys.executable, str(SIGMA)]
    env = {**os.environ, **entry["env"], "PYTHONPATH": str(ROOT)}
    listing = await list_tools(command=[entry["command"], *entry["args"]], env=env, timeout=60)
    names = {tool["name"] for tool in listing.tools}
    assert {"bash", "read", "write"} <= names
    direct = await list_tools(command=[sys.executable, str(SIGMA)], timeout=60)
    assert names <= {tool["name"] for tool in direct.tools}


@pytest.mark.parametrize("fixture", ["claude-code/claude.json", "codex/config.toml"])
def test_uninstall_restores_the_value_when_the_client_rewrote_the_layout(
    world: World, capsys: pytest.CaptureFixture[str], fixture: str
) -> None:
    """Claude Code rewrites ~/.claude.json in its own layout (JSON.stringify, two spaces); the
    entries' values are still as install wrote them, so uninstall puts the originals back."""
    path = world.place(fixture)
    file = _file_for(fixture)
    before = dict(entries_of(file, path.read_text()))
    assert world.run(capsys, "install", "--yes", "--client", file.client)[0] == 0
    if file.format == "toml":
        import tomlkit

        path.write_text(tomlkit.dumps(tomlkit.parse(path.read_text()).unwrap()))
    else:
        path.write_text(json.dumps(jsonc.parse(path.read_text()).value(), indent=2))
    status, out, _ = world.run(capsys, "uninstall", "--yes", "--client", file.client)
    assert status == 0
    assert "the file's layout changed since" in out
    assert dict(entries_of(file, path.read_text())) == before


def test_a_yes_at_the_prompt_writes(
    world: World, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = world.place("cursor/mcp.json")
    before = path.read_bytes()

    class Terminal:
        def __init__(self, answer: str) -> None:
            self.answer = answer

        def isatty(self) -> bool:
            return True

        def readline(self) -> str:
            return self.answer

    monkeypatch.setattr(sys, "stdin", Terminal("n\n"))
    status, out, _ = world.run(capsys, "install")
    assert "Write 1 file(s)? [y/N] nothing written" in out
    assert path.read_bytes() == before
    monkeypatch.setattr(sys, "stdin", Terminal("y\n"))
    status, out, _ = world.run(capsys, "install")
    assert status == 0 and "written (the previous version is mcp.json.mcp-guard.bak)" in out
    assert path.read_bytes() != before


def test_the_diff_hides_secrets_in_arguments_urls_and_env(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    path = world.home / ".cursor" / "mcp.json"
    path.parent.mkdir()
    args = ["--api-key=FAKE-1", "--token", "FAKE-2", "postgres://ada:FAKE-3@db/shop", "--port", "5432"]
    entry = {"command": "srv", "args": args, "env": {"OPENAI_API_KEY": "FAKE-4", "TZ": "UTC"}}
    path.write_text(json.dumps({"mcpServers": {"s": entry}}, indent=2))
    status, out, _ = world.run(capsys, "install", "--dry-run")
    assert status == 0
    assert "FAKE" not in out
    assert '"--api-key=***"' in out and '"--token",' in out and '"srv",' in out, "only the secrets are hidden"


def test_the_diff_shows_header_env_names_as_they_will_be_written(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    """Trial T1: ``--header-env X-Api-Key=VAR`` names a variable, not a secret; a dash inside the header
    name (``-Api-Key``) is not a flag of its own, so the preview shows what will be written."""
    path = world.home / ".cursor" / "mcp.json"
    path.parent.mkdir()
    entry = {"url": "https://example.com/mcp", "headers": {"X-Api-Key": "FAKE-1", "Authorization": "Bearer FAKE-2"}}
    path.write_text(json.dumps({"mcpServers": {"remote": entry}}, indent=2))
    status, out, _ = world.run(capsys, "install", "--dry-run")
    assert status == 0 and "FAKE" not in out
    assert "X-Api-Key=MCP_GUARD_HEADER_X_API_KEY" in out
    assert "Authorization=MCP_GUARD_HEADER_AUTHORIZATION" in out


def test_an_edit_made_while_the_prompt_waits_is_not_overwritten(
    world: World, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The client (or the user) saves the file while install waits for the answer: nothing is written."""
    path = world.place("gemini/settings.json")
    edited = path.read_text().replace('"theme": "Dracula"', '"theme": "GitHub"')

    class Terminal:
        def isatty(self) -> bool:
            return True

        def readline(self) -> str:
            path.write_text(edited)
            return "y\n"

    monkeypatch.setattr(sys, "stdin", Terminal())
    status, out, _ = world.run(capsys, "install")
    assert status == 1
    assert "changed while mcp-guard was working on it" in out and "nothing written" in out
    assert path.read_text() == edited
    assert not world.state.exists(), "nothing recorded for a write that did not happen"


def test_a_symlinked_config_is_written_through_and_keeps_its_mode(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    """Dotfile managers symlink configs: the target changes, the link stays a link; the mode stays."""
    target = world.home / "dotfiles" / "mcp.json"
    target.parent.mkdir()
    target.write_bytes((FIXTURES / "cursor" / "mcp.json").read_bytes())
    target.chmod(0o640)
    link = world.home / ".cursor" / "mcp.json"
    link.parent.mkdir()
    link.symlink_to(target)
    original = target.read_bytes()
    assert world.run(capsys, "install", "--yes", "--client", "cursor")[0] == 0
    assert link.is_symlink() and link.resolve() == target
    assert "mcp_guard" in target.read_text() or "mcp-guard" in target.read_text()
    assert target.stat().st_mode & 0o777 == 0o640
    assert (target.parent / ("mcp.json" + BACKUP_SUFFIX)).stat().st_mode & 0o777 == 0o600
    assert (world.state / "installs.json").stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in target.parent.iterdir()) == ["mcp.json", "mcp.json" + BACKUP_SUFFIX], (
        "no temp file left"
    )
    assert world.run(capsys, "uninstall", "--yes", "--client", "cursor")[0] == 0
    assert target.read_bytes() == original and link.is_symlink()


@pytest.mark.parametrize(
    ("relative", "text"),
    [
        (".cursor/mcp.json", '{"mcpServers": {"a": {"command": "x"}, "b": {"command": "x"}}}'),
        (
            ".claude.json",
            json.dumps(
                {"projects": {p: {"mcpServers": {"pw": {"command": "npx", "args": ["pw"]}}} for p in ("/a", "/b")}},
                indent=2,
            ),
        ),
        (
            ".codex/config.toml",
            '[mcp_servers.a]\ncommand = "x"\nargs = ["y"]\n\n[mcp_servers.b]\ncommand = "x"\nargs = ["y"]\n',
        ),
        (".codex/config.toml", '[mcp_servers]\na = { command = "x" }\nb = { command = "x" }\n'),
    ],
)
def test_entries_alike_or_on_one_line_round_trip(
    world: World, capsys: pytest.CaptureFixture[str], relative: str, text: str
) -> None:
    path = world.home / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    status, out, _ = world.run(capsys, "install", "--yes")
    assert status == 0, out
    assert out.count("will be put behind the guard") == 2
    assert world.run(capsys, "uninstall", "--yes")[0] == 0
    assert path.read_text() == text
