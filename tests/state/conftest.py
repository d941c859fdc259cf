"""Session-scoped real servers for the state tests (one of each per xdist worker); see tests/real_servers.py."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator

import pytest

from tests.real_servers import Postgres, Redis


@pytest.fixture(scope="session")
def redis_server() -> Iterator[Redis]:
    """A running ``redis-server`` (skipped when absent, or when the ``redis`` extra is not installed)."""
    if importlib.util.find_spec("redis") is None:
        pytest.skip("the redis extra is not installed (pip install -e '.[test]')")
    server = Redis()
    try:
        server.start()
        yield server
    finally:
        server.close()


@pytest.fixture(scope="session")
def redis_with_password() -> Iterator[Redis]:
    """A running ``redis-server`` with ``--requirepass`` (skipped as :func:`redis_server`)."""
    if importlib.util.find_spec("redis") is None:
        pytest.skip("the redis extra is not installed (pip install -e '.[test]')")
    server = Redis(password="right-pass-35")
    try:
        server.start()
        yield server
    finally:
        server.close()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[Postgres]:
    """A running PostgreSQL cluster (skipped when absent, or when the ``postgres`` extra is not installed)."""
    if importlib.util.find_spec("psycopg") is None:
        pytest.skip("the postgres extra is not installed (pip install -e '.[test]')")
    server = Postgres()
    try:
        server.start()
        yield server
    finally:
        server.close()


@pytest.fixture
def pg_url(postgres_server: Postgres) -> Iterator[str]:
    """The URL of a fresh database of its own on the session's PostgreSQL (dropped after the test)."""
    import uuid

    import psycopg

    name = f"t_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(postgres_server.url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    yield postgres_server.url.rsplit("/", 1)[0] + "/" + name
    with psycopg.connect(postgres_server.url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
