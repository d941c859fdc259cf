"""``guard.state`` and ``guard.journal: {"postgres": ...}`` in the config; URLs from the environment, never logged."""

from __future__ import annotations

import json
import logging
from typing import Any

import anyio
import pytest

from mcp_guard.config import ConfigError, JournalDatabase, StateSettings, parse_config
from mcp_guard.state.opening import StateError, opened_stores
from mcp_guard.state.redis_budget import REDIS_SCHEMES
from mcp_guard.state.urls import UrlError, redacted, resolve_url
from tests.real_servers import Redis, free_port


def config(guard: dict[str, Any]) -> Any:
    return parse_config(json.dumps({"mcpServers": {"fs": {"command": "x"}}, "guard": guard}), environ={})


def test_state_and_database_journal_settings_are_read() -> None:
    c = config(
        {"state": {"redisEnv": "GUARD_REDIS", "keyPrefix": "team"}, "journal": {"postgres": "postgresql://h/db"}}
    )
    assert c.guard.state == StateSettings(redis_env="GUARD_REDIS", key_prefix="team")
    assert c.guard.journal == JournalDatabase(postgres="postgresql://h/db")
    assert c.journal_path is None  # no file
    assert config({"journal": "calls.jsonl"}).journal_path is not None


@pytest.mark.parametrize(
    ("guard", "message"),
    [
        ({"state": {}}, "guard.state: give exactly one of `redis`"),
        ({"state": {"redis": "redis://a", "redisEnv": "B"}}, "guard.state: give exactly one"),
        ({"state": {"redisEnv": "not a name"}}, "guard.state.redisEnv"),
        (
            {"journal": {"postgress": "x"}},
            "guard.journal.postgress: unknown key (the guard section accepts only its own settings) "
            "(did you mean `postgres`?)",
        ),
        ({"journal": {}}, "guard.journal: give exactly one of `postgres`"),
        (
            {"journal": 5},
            "guard.journal: expected a string or an object (its keys: postgres, postgresEnv, poolSize, "
            "timeoutSeconds), found an integer",
        ),
    ],
)
def test_wrong_settings_are_refused_by_key(guard: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        config(guard)
    assert message in str(caught.value)


def test_a_url_comes_from_the_named_variable_and_is_redacted_in_messages() -> None:
    url = resolve_url(None, "R", {"R": "redis://u:pw@h:1/2"}, where="guard.state", schemes=REDIS_SCHEMES)
    assert url == "redis://u:pw@h:1/2"
    assert redacted(url) == "redis://h:1/2"
    assert redacted("postgresql://app:hunter2@[::1]:5433/j?password=x") == "postgresql://[::1]:5433/j"
    with pytest.raises(UrlError, match=r"guard.state: the environment variable R is not set"):
        resolve_url(None, "R", {}, where="guard.state", schemes=REDIS_SCHEMES)
    with pytest.raises(UrlError) as caught:
        resolve_url(None, "R", {"R": "http://u:hunter2@h"}, where="guard.state", schemes=REDIS_SCHEMES)
    assert "hunter2" not in str(caught.value) and "(R)" in str(caught.value)


def test_serve_start_fails_on_an_unset_variable_and_logs_no_credentials(caplog: pytest.LogCaptureFixture) -> None:
    c = config({"state": {"redisEnv": "MCP_GUARD_TEST_UNSET"}})

    async def main() -> None:
        async with opened_stores(c, journal_path=None, environ={}):
            pass

    with pytest.raises(StateError, match="MCP_GUARD_TEST_UNSET is not set"):
        anyio.run(main)
    secret = f"redis://user:pa55word@127.0.0.1:{free_port()}/0"
    c = config({"state": {"redisEnv": "R"}})

    async def down() -> None:
        async with opened_stores(c, journal_path=None, environ={"R": secret}) as stores:
            assert stores.budget.store == "Redis"  # type: ignore[union-attr]

    with caplog.at_level(logging.DEBUG, logger="mcp_guard"):
        anyio.run(down)
    assert "pa55word" not in caplog.text and "user" not in caplog.text
    assert "not reachable now" in caplog.text


def test_the_shipped_scale_out_files_agree() -> None:
    """config/gateway.scale-out.json loads, with its stores named by variables; config/compose.yaml sets every
    variable config/haproxy.cfg reads, runs the replicas with that config, and mounts that haproxy.cfg."""
    import re
    from pathlib import Path

    from mcp_guard.config import load_config

    folder = Path(__file__).resolve().parents[2] / "config"
    gateway = load_config(folder / "gateway.scale-out.json")
    assert gateway.guard.state is not None and gateway.guard.state.redis_env == "MCP_GUARD_REDIS_URL"
    assert isinstance(gateway.guard.journal, JournalDatabase)
    assert gateway.guard.journal.postgres_env == "MCP_GUARD_POSTGRES_URL"
    compose = (folder / "compose.yaml").read_text()
    for variable in set(re.findall(r"\$\{(MCP_GUARD_\w+)\}", (folder / "haproxy.cfg").read_text())):
        assert f"      {variable}: " in compose, variable
    for variable in ("MCP_GUARD_REDIS_URL", "MCP_GUARD_POSTGRES_URL"):
        assert f"    {variable}: " in compose, variable
    assert "./haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg" in compose
    assert "config/gateway.scale-out.json" in compose and "journal init" in compose


def test_serve_start_names_a_wrong_password_as_such_without_the_password(
    redis_with_password: Redis, caplog: pytest.LogCaptureFixture
) -> None:
    """Red team 35: a wrong password was logged as "not reachable now" / "does not answer"."""
    c = config({"state": {"redisEnv": "R"}})
    url = f"redis://:WRONG-35@127.0.0.1:{redis_with_password.port}/0"

    async def main() -> None:
        async with opened_stores(c, journal_path=None, environ={"R": url}):
            pass

    with caplog.at_level(logging.INFO, logger="mcp_guard"):
        anyio.run(main)
    assert "authentication failed" in caplog.text and "refuses the guard" in caplog.text
    assert "not reachable" not in caplog.text and "does not answer" not in caplog.text and "WRONG" not in caplog.text
