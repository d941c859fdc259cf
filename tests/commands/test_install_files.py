"""Red-team faults of ``install`` (stop 32) about the files themselves: one file reached by two
paths, invalid TOML that tomlkit accepts, a relative ``XDG_CONFIG_HOME``, a read-only config."""

from __future__ import annotations

import json
import os

import pytest

from mcp_guard.commands.clients_paths import Places, client_files
from tests.commands.test_install import World
from tests.commands.test_install import world as world  # the fixture

ENTRY = json.dumps({"mcpServers": {"a": {"command": "x", "args": ["y"]}}}, indent=2)


def test_a_symlinked_home_that_is_the_project_is_one_file(
    world: World, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``$HOME`` is a symlink to the folder install runs in (the project): ~/.cursor/mcp.json and
    ./.cursor/mcp.json are one file, planned and written once, listed once."""
    link = world.home.parent / "home-link"
    link.symlink_to(world.home)
    monkeypatch.setenv("HOME", str(link))
    monkeypatch.chdir(world.home)
    config = world.home / ".cursor" / "mcp.json"
    config.parent.mkdir()
    config.write_text(ENTRY)
    status, out, _ = world.run(capsys, "install", "--yes", "--project", str(world.home))
    assert status == 0, out
    assert out.count("will be put behind the guard") == 1 and "changed while" not in out
    assert "cursor (user)" in out and "cursor (project)" not in out
    status, out, _ = world.run(capsys, "status", "--json", "--project", str(world.home))
    assert status == 0
    assert [(c["scope"], len(c["servers"])) for c in json.loads(out)["clients"]] == [("user", 1)]
    status, out, _ = world.run(capsys, "uninstall", "--yes", "--project", str(world.home))
    assert status == 0 and out.count("will be restored") == 1, out
    assert config.read_text() == ENTRY


@pytest.mark.parametrize("how", ["symlink", "hardlink"])
def test_a_user_config_linked_to_the_projects_file_is_one_file(
    world: World, capsys: pytest.CaptureFixture[str], how: str
) -> None:
    project_file = world.project / ".cursor" / "mcp.json"
    project_file.parent.mkdir()
    project_file.write_text(ENTRY)
    user_file = world.home / ".cursor" / "mcp.json"
    user_file.parent.mkdir()
    if how == "symlink":
        user_file.symlink_to(project_file)
    else:
        os.link(project_file, user_file)
    status, out, _ = world.run(capsys, "status")
    assert status == 0 and out.count("  a: stdio, NOT guarded") == 1, out
    status, out, _ = world.run(capsys, "install", "--yes")
    assert status == 0 and out.count("will be put behind the guard") == 1, out
    assert "wrap" in project_file.read_text() and user_file.read_text() == project_file.read_text(), (
        "both names see the change (a rename would have split a hard link)"
    )
    assert world.run(capsys, "uninstall", "--yes")[0] == 0
    assert project_file.read_text() == ENTRY == user_file.read_text()


INVALID_TOML = [
    # tomlkit accepts these; TOML 1.0 (tomllib, Codex's reader) does not
    'mcp_servers.a.command = "x"\n\n[mcp_servers.b]\ncommand = "y"\n\n[mcp_servers]\nc = { command = "z" }\n',
    '[mcp_servers]\na = { command = "x", }\n',
    '[mcp_servers.a]\ncommand = "\\x41"\n',
    # tomlkit refuses these too, but counts columns from 0
    '[mcp_servers.a]\ncommand = "x"\nargs = \n',
    '[mcp_servers.a]\ncommand = "x\n',
]


@pytest.mark.parametrize("text", INVALID_TOML)
def test_toml_that_tomllib_refuses_is_reported_with_tomllibs_line_and_nothing_is_written(
    world: World, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    import tomllib

    with pytest.raises(tomllib.TOMLDecodeError) as refused:
        tomllib.loads(text)
    path = world.home / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text(text)
    for argv in (["install", "--dry-run"], ["install", "--yes"], ["status"]):
        status, out, _ = world.run(capsys, *argv, "--client", "codex")
        assert status == 1, (argv, out)
        assert f"error: not valid TOML: {str(refused.value).splitlines()[0]}" in out, out
        assert "will be put behind the guard" not in out and "---" not in out
    assert path.read_text() == text


@pytest.mark.parametrize("relative", ["cfg", "./cfg", "~/cfg"])
def test_a_relative_xdg_variable_is_ignored(relative: str) -> None:
    """XDG Base Directory Specification: a relative path in XDG_CONFIG_HOME or XDG_DATA_HOME is invalid."""
    from pathlib import PurePosixPath

    from mcp_guard.commands.clients_paths import state_dir

    env = {"HOME": "/home/ada", "XDG_CONFIG_HOME": relative, "XDG_DATA_HOME": relative}
    places = Places.of("linux", env, "/src")
    paths = {str(f.path) for f in client_files(places)}
    assert "/home/ada/.config/Claude/claude_desktop_config.json" in paths
    assert "/home/ada/.config/Code/User/mcp.json" in paths
    assert not [p for p in paths if "cfg" in p]
    assert state_dir(places) == PurePosixPath("/home/ada/.local/share/mcp-guard")


def test_a_read_only_config_is_reported_and_left_alone(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    """A rename replaces a 0444 file as easily as any other (the folder is writable): the mode is the
    owner's word, so install and uninstall report the file, write nothing to it, and exit 1."""
    from mcp_guard.commands.clients_files import BACKUP_SUFFIX

    path = world.home / ".cursor" / "mcp.json"
    path.parent.mkdir()
    path.write_text(ENTRY)
    path.chmod(0o444)
    other = world.home / ".gemini" / "settings.json"
    other.parent.mkdir()
    other.write_text(ENTRY)
    for argv in (["install", "--dry-run"], ["install", "--yes"]):
        status, out, _ = world.run(capsys, *argv)
        assert status == 1, out
        assert f"cursor (user): {path}\n  error: is read-only for you (mode 0444)" in out and "nothing written" in out
        assert f"--- {path}" not in out
    assert path.read_text() == ENTRY and path.stat().st_mode & 0o777 == 0o444
    assert not (path.parent / (path.name + BACKUP_SUFFIX)).exists()
    assert "mcp-guard" in other.read_text() or "mcp_guard" in other.read_text(), "the other file is still handled"
    other.chmod(0o444)  # made read-only after install: uninstall leaves it alone too
    status, out, _ = world.run(capsys, "uninstall", "--yes")
    assert status == 1 and "is read-only for you (mode 0444)" in out
    other.chmod(0o644)
    assert world.run(capsys, "uninstall", "--yes")[0] == 0
    assert other.read_text() == ENTRY
