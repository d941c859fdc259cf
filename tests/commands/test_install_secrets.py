"""Red-team faults of ``install`` (stop 32): a URL's credentials never reach a command line.

A URL entry whose URL holds user info or a query string (``?exaApiKey=...``,
``https://user:pass@host``) is guarded with ``wrap --upstream-url-env VAR``, the URL in the
entry's ``env`` (command lines are readable by every user of the machine); the dry-run diff
masks it; ``uninstall`` gives the original bytes back.
"""

from __future__ import annotations

import json
import os
import sys

import anyio
import pytest

from mcp_guard.cli import main
from mcp_guard.commands.clients_entries import guarded_upstream, plan_entry, url_holds_credentials
from mcp_guard.commands.install import _mask
from tests.commands.test_install import ROOT, World
from tests.commands.test_install import world as world  # the fixture

SECRET_URLS = [
    "https://mcp.exa.ai/mcp?exaApiKey=SEKRET-abc123",
    "https://user:SEKRET3@h.example/mcp",
    "https://SEKRET5@h.example/mcp",
    "https://h.example/mcp?a=1&token=SEKRET6#SEKRET7",
]


@pytest.mark.parametrize("url", SECRET_URLS)
@pytest.mark.parametrize("client", ["cursor", "gemini", "codex"])
def test_a_url_with_credentials_goes_through_env_never_args(url: str, client: str) -> None:
    key = "httpUrl" if client == "gemini" else "url"
    plan = plan_entry({key: url, "headers": {"X-Org": "shop"}}, ["mcp-guard"], [], client=client)
    assert plan.action == "guard", plan.reason
    assert "SEKRET" not in json.dumps(plan.entry["args"])
    assert plan.entry["args"][:3] == ["wrap", "--upstream-url-env", "MCP_GUARD_UPSTREAM_URL"]
    assert plan.entry["env"] == {"MCP_GUARD_UPSTREAM_URL": url}
    assert "MCP_GUARD_UPSTREAM_URL" in plan.secret_vars
    assert guarded_upstream(plan.entry["command"], plan.entry["args"]) == (
        "wrap",
        ["--upstream-url-env", "MCP_GUARD_UPSTREAM_URL"],
    )
    assert plan_entry(plan.entry, ["mcp-guard"], [], client=client).action == "guarded", "idempotent"


def test_a_plain_url_stays_on_the_command_line_and_a_taken_name_is_not_reused() -> None:
    assert not url_holds_credentials("https://mcp.example.com/mcp")
    assert url_holds_credentials("https://mcp.example.com/mcp?")
    plain = plan_entry({"url": "https://mcp.example.com/mcp"}, ["g"], [])
    assert plain.entry["args"] == ["wrap", "--upstream-url", "https://mcp.example.com/mcp"]
    taken = plan_entry({"url": SECRET_URLS[0], "env": {"MCP_GUARD_UPSTREAM_URL": "mine"}}, ["g"], [])
    assert taken.entry["env"] == {"MCP_GUARD_UPSTREAM_URL": "mine", "MCP_GUARD_UPSTREAM_URL_2": SECRET_URLS[0]}
    assert taken.entry["args"][-2:] == ["--upstream-url-env", "MCP_GUARD_UPSTREAM_URL_2"]


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        ('"url": "https://mcp.exa.ai/mcp?exaApiKey=SEKRET-abc123"', '"url": "https://mcp.exa.ai/mcp?exaApiKey=***"'),
        ('"X": "https://user:SEKRET3@h.example/mcp"', '"X": "https://user:***@h.example/mcp"'),
        ("url = 'https://SEKRET5@h.example/mcp'", "url = 'https://***@h.example/mcp'"),
        ('"https://h/mcp?a=1&SEKRET6#SEKRET7",', '"https://h/mcp?a=***&***#***",'),
        ('"https://h.example/mcp"', '"https://h.example/mcp"'),
    ],
)
def test_the_diff_masks_a_urls_credentials(line: str, shown: str) -> None:
    assert _mask(line) == shown


@pytest.mark.parametrize(
    ("relative", "text"),
    [
        (
            ".cursor/mcp.json",
            json.dumps(
                {
                    "mcpServers": {
                        "exa": {"url": SECRET_URLS[0]},
                        "basic": {"url": SECRET_URLS[1], "headers": {"X-Api-Key": "SEKRET4"}},
                        "tok": {"url": SECRET_URLS[2], "env": {"A": "b"}},
                    }
                },
                indent=2,
            ),
        ),
        (
            ".codex/config.toml",
            f'[mcp_servers.exa]\nurl = "{SECRET_URLS[0]}"\n\n[mcp_servers.b]\nurl = "{SECRET_URLS[1]}"\n'
            'env = { A = "b" }\n\n[mcp_servers.c]\nurl = "' + SECRET_URLS[3] + '"\n\n[mcp_servers.c.env]\nB = "c"\n',
        ),
    ],
)
def test_install_writes_no_credential_on_a_command_line_and_uninstall_restores_the_bytes(
    world: World, capsys: pytest.CaptureFixture[str], relative: str, text: str
) -> None:
    path = world.home / relative
    path.parent.mkdir(parents=True)
    path.write_text(text)
    status, out, _ = world.run(capsys, "install", "--dry-run")
    assert status == 0 and "will be put behind the guard" in out
    assert "SEKRET" not in out, "the dry-run diff shows a credential"
    status, out, _ = world.run(capsys, "install", "--yes")
    assert status == 0, out
    assert "SEKRET" not in out
    from mcp_guard.commands.clients_files import entries_of
    from mcp_guard.commands.clients_paths import Places, client_files

    (file,) = [f for f in client_files(Places.of("linux", os.environ, world.project)) if f.path == path]
    for _, entry in entries_of(file, path.read_text()):
        assert "SEKRET" not in json.dumps(entry["args"]), entry
        assert "--upstream-url-env" in entry["args"]
        assert any("SEKRET" in value for value in entry["env"].values())
    assert world.run(capsys, "uninstall", "--yes")[0] == 0
    assert path.read_text() == text


def test_wrap_upstream_url_env_needs_the_variable(capsys: pytest.CaptureFixture[str]) -> None:
    assert "NO_SUCH_VAR_4712" not in os.environ
    with pytest.raises(SystemExit) as exited:
        main(["wrap", "--upstream-url-env", "NO_SUCH_VAR_4712"])
    assert exited.value.code == 2
    assert "NO_SUCH_VAR_4712 is not set" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["wrap", "--upstream-url", "https://h/mcp", "--upstream-url-env", "X"])
    assert "not allowed with" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exited:
        main(["check", "--upstream-url-env", "NO_SUCH_VAR_4712"])
    assert exited.value.code == 2 and "NO_SUCH_VAR_4712 is not set" in capsys.readouterr().err


@pytest.mark.e2e
@pytest.mark.anyio
async def test_an_installed_entry_with_a_query_secret_reaches_its_server(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    """The entry install wrote, started as the client would: the guard reads the URL (its query
    included) from the environment and lists the server's tools."""
    from mcp_guard.reports.listing import list_tools
    from tests.e2e.test_check_cli import http_server

    config = world.home / ".cursor" / "mcp.json"
    config.parent.mkdir()
    async with http_server() as url:
        config.write_text(json.dumps({"mcpServers": {"sigma": {"url": url + "?apiKey=SEKRET-q"}}}))
        assert main(["install", "--yes", "--client", "cursor", "--guard-command", sys.executable]) == 0
        entry = json.loads(config.read_text())["mcpServers"]["sigma"]
        assert "SEKRET" not in json.dumps([entry["command"], *entry["args"]])
        argv = [sys.executable, "-m", "mcp_guard", *entry["args"]]
        env = {**os.environ, **entry["env"], "PYTHONPATH": str(ROOT)}
        listing = await list_tools(command=argv, env=env, timeout=60)
        checked = await anyio.run_process(
            [sys.executable, "-m", "mcp_guard", "check", "--json", "--upstream-url-env", "MCP_GUARD_UPSTREAM_URL"],
            env=env,
            check=False,
        )
    assert {"bash", "read", "write"} <= {tool["name"] for tool in listing.tools}
    report = json.loads(checked.stdout)
    assert report["source"] == "url" and len(report["tools"]) == len(listing.tools), "check takes the flag too"


def test_status_check_reaches_an_entry_guarded_through_the_url_variable(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    """``status --check`` lists the tools of an entry written with ``--upstream-url-env``: the URL
    comes from the entry's ``env``."""
    import subprocess

    server = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "e2e" / "sigma_http_server.py")],
        stdout=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        cwd=ROOT,
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        config = world.home / ".cursor" / "mcp.json"
        config.parent.mkdir()
        config.write_text(json.dumps({"mcpServers": {"sigma": {"url": url + "?apiKey=SEKRET-q"}}}))
        assert world.run(capsys, "install", "--yes", "--client", "cursor")[0] == 0
        _, out, _ = world.run(capsys, "status", "--check", "--json", "--client", "cursor")
    finally:
        server.terminate()
        server.wait(timeout=30)
    (entry,) = json.loads(out)["clients"][0]["servers"]
    assert entry["kind"] == "url" and entry["guarded"] is True
    assert entry["check"]["tools"] > 0, entry["check"]
    assert "SEKRET" not in out


def test_an_entry_guarded_with_a_credential_on_its_command_line_is_warned_about(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    """Written by hand or by an install from before the URL moved to env: left alone, with a warning
    that says how to move it, by install and status; the warning quotes nothing of the URL."""
    config = world.home / ".cursor" / "mcp.json"
    config.parent.mkdir()
    entry = {"command": "mcp-guard", "args": ["wrap", "--upstream-url", SECRET_URLS[0]]}
    config.write_text(json.dumps({"mcpServers": {"exa": entry, "ok": {**entry, "args": ["wrap", "--", "srv"]}}}))
    status, out, _ = world.run(capsys, "install", "--dry-run")
    assert status == 0 and "SEKRET" not in out
    assert "exa: already behind the guard: left alone; warning: its --upstream-url holds a credential" in out
    assert out.count("warning") == 1 and "run uninstall, then install" in out
    status, out, _ = world.run(capsys, "status")
    assert "exa: url, guarded (warning: its --upstream-url holds a credential" in out and "SEKRET" not in out
    assert "ok: stdio, guarded\n" in out
