"""The ``--oauth-*`` options of ``wrap --http`` and ``serve --http``, and ``guard.auth`` in serve's config (issue 27).

Usage errors are read in process (``cli.main``: exit status 2, the message on stderr); one ``serve
--http`` runs as a real process with ``guard.auth`` from its config file, against the test
authorization server.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest

from mcp_guard.cli import main
from tests.auth.issuer import Issuer, running_issuer
from tests.auth.test_front import ACCEPT, HANG_GUARD, INIT, RECORDING, RESOURCE, bearer, body, post

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    with running_issuer() as running:
        yield running


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    return capsys.readouterr().err


OAUTH = ["--oauth-issuer", "https://as.example", "--oauth-resource", RESOURCE]


def test_a_shared_token_with_oauth_is_refused(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUTH27_TOKEN", "tok")
    err = usage_error(["wrap", "--http", "127.0.0.1:0", "--http-token-env", "AUTH27_TOKEN", *OAUTH, "--", "x"], capsys)
    assert "one Authorization header" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["wrap", "--http", "0", "--oauth-issuer", "https://as.example", "--", "x"], "needs both --oauth-issuer"),
        (["wrap", *OAUTH, "--", "x"], "only apply with --http"),
        (
            ["wrap", "--http", "0", "--oauth-issuer", "http://as.example", "--oauth-resource", RESOURCE, "--", "x"],
            "--oauth-issuer: the issuer must be an https:// URL",
        ),
        (["wrap", "--http", "0", *OAUTH, "--oauth-client-id", "g", "--", "x"], "secret-env: give both (the"),
        (["wrap", "--http", "0", *OAUTH, "--oauth-scope", "a b", "--", "x"], "--oauth-scope: String should match"),
    ],
    ids=["half", "stdio", "plain-http-issuer", "id-without-secret", "scope-with-space"],
)
def test_an_oauth_usage_error(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert message in usage_error(argv, capsys)


def test_a_client_secret_variable_that_is_not_set(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["wrap", "--http", "0", *OAUTH, "--oauth-client-id", "g", "--oauth-client-secret-env", "AUTH27_UNSET_VAR"]
    assert "AUTH27_UNSET_VAR" in usage_error([*argv, "--", "x"], capsys)


async def test_serve_takes_guard_auth_from_its_config_and_refuses_it_twice(issuer: Issuer, tmp_path: Path) -> None:
    """``guard.auth`` in the config makes ``serve --http`` a resource server; with ``--oauth-issuer`` too it exits 2."""
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    config = tmp_path / "gateway.json"
    auth = {"issuer": issuer.url, "resource": resource, "scopes": ["mcp:tools"], "resourceName": "team tools"}
    servers = {"r": {"command": sys.executable, "args": [str(RECORDING)]}}
    config.write_text(json.dumps({"mcpServers": servers, "guard": {"auth": auth}}))
    serve = [sys.executable, "-m", "mcp_guard", "serve", "--config", str(config), "--http", f"127.0.0.1:{port}"]
    twice = subprocess.run(
        [*serve, "--oauth-issuer", issuer.url, "--oauth-resource", resource], capture_output=True, text=True, timeout=60
    )
    assert twice.returncode == 2 and "set both by --oauth-issuer and by guard.auth" in twice.stderr
    log_path = tmp_path / "serve.log"
    with log_path.open("wb") as log_file:
        process = subprocess.Popen(serve, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log_file)
    try:
        with anyio.fail_after(HANG_GUARD):
            while "serving MCP streamable HTTP at" not in log_path.read_text(errors="replace"):
                assert process.poll() is None, log_path.read_text(errors="replace")
                await anyio.sleep(0.05)
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=HANG_GUARD) as client:
            document = (await client.get("/.well-known/oauth-protected-resource/mcp")).json()
            assert document["resource"] == resource and document["resource_name"] == "team tools"
            initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT}
            refused = await post(client, initialize, ACCEPT)
            assert refused.status_code == 401 and "resource_metadata=" in refused.headers["www-authenticate"]
            answered = await post(client, initialize, bearer(issuer.token(resource)))
            assert answered.status_code == 200 and "result" in body(answered), answered.text
    finally:
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    assert "every request needs an OAuth access token from" in log_path.read_text(errors="replace")
