"""PostgreSQL's faults told apart as Redis's are (``state.pg_faults``, fault 37 B): down, refused, timed out.

The real PostgreSQL of ``tests/state/conftest.py`` (skipped without its server programs or the postgres
extra); a role with a password gets a ``scram-sha-256`` line of its own in the cluster's ``pg_hba.conf``
(taken out after).
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator

import pytest

from mcp_guard.calls.stores import StoreUnavailable
from mcp_guard.state import pg_faults
from mcp_guard.state.opening import opened_stores
from mcp_guard.state.pg_journal import PostgresJournal
from mcp_guard.state.pg_schema import JournalDatabaseError, init_schema, schema_version
from tests.calls.test_pipeline import config
from tests.real_servers import Postgres, free_port

pytestmark = pytest.mark.anyio

ROLE, PASSWORD, WRONG = "f37_writer", "right-pass-f37", "wrong-pass-f37"


@pytest.fixture(scope="module")
def password_role(postgres_server: Postgres) -> Iterator[str]:
    """``ROLE`` (password ``PASSWORD``, scram-sha-256 from 127.0.0.1); yields ``host:port``."""
    import psycopg

    with psycopg.connect(postgres_server.url, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {ROLE} LOGIN PASSWORD '{PASSWORD}'")
        row = conn.execute("SHOW hba_file").fetchone()
        assert row is not None
        hba = row[0]
        with open(hba, encoding="utf-8") as file:
            before = file.read()
        with open(hba, "w", encoding="utf-8") as file:
            file.write(f"host all {ROLE} 127.0.0.1/32 scram-sha-256\n{before}")
        conn.execute("SELECT pg_reload_conf()")
    try:
        yield f"127.0.0.1:{postgres_server.port}"
    finally:
        with open(hba, "w", encoding="utf-8") as file:
            file.write(before)
        with psycopg.connect(postgres_server.url, autocommit=True) as conn:
            conn.execute("SELECT pg_reload_conf()")
            conn.execute(f"DROP ROLE IF EXISTS {ROLE}")


async def refused_record(url: str) -> StoreUnavailable:
    """The error of an intent written to ``url`` (a journal with a 1 s timeout)."""
    journal = PostgresJournal(url, replica="r1", timeout=1.0)
    await journal.open()
    try:
        with pytest.raises(StoreUnavailable) as caught:
            await journal.intent("c1", "fs", "read", "0" * 64, 2)
        return caught.value
    finally:
        await journal.aclose()


async def test_down_refused_and_timed_out_are_told_apart_with_no_secret(
    password_role: str, pg_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Down and no answer may pass (no ``cause``: "is unavailable"); a wrong password, a database that does
    not exist, a role that may not write the table never will ("refuses the guard", the ``cause`` set).
    No message or log line holds the password, the role or libpq's own words."""
    init_schema(pg_url)
    database = pg_url.rsplit("/", 1)[1]
    silent = socket.socket()  # listens, never answers: a connection that times out
    silent.bind(("127.0.0.1", 0))
    silent.listen()
    with silent, caplog.at_level(logging.DEBUG):
        cases = {
            "down": (f"postgresql://{ROLE}:{PASSWORD}@127.0.0.1:{free_port()}/x", None, pg_faults.REFUSED),
            "timeout": (
                f"postgresql://{ROLE}:{PASSWORD}@127.0.0.1:{silent.getsockname()[1]}/x",
                None,
                pg_faults.TIMED_OUT,
            ),
            "password": (f"postgresql://{ROLE}:{WRONG}@{password_role}/{database}", pg_faults.AUTHENTICATION, None),
            "database": (f"postgresql://{ROLE}:{PASSWORD}@{password_role}/nodb_f37", pg_faults.NO_DATABASE, None),
            "permission": (f"postgresql://{ROLE}:{PASSWORD}@{password_role}/{database}", pg_faults.PERMISSION, None),
        }
        for name, (url, lasting, passing) in cases.items():
            error = await refused_record(url)
            assert error.cause == lasting, (name, str(error))
            if lasting is not None:
                assert str(error).endswith(f"refuses the guard: {lasting}"), (name, str(error))
            else:
                assert str(error).endswith(f"is unavailable: {passing}"), (name, str(error))
            assert str(error).startswith("PostgreSQL at postgresql://127.0.0.1:"), str(error)
    for text in [*(str(r.getMessage()) for r in caplog.records), *(r.exc_text or "" for r in caplog.records)]:
        assert PASSWORD not in text and WRONG not in text


async def test_at_start_a_lasting_cause_is_an_error_and_a_passing_one_a_warning(
    password_role: str, caplog: pytest.LogCaptureFixture
) -> None:
    """``schema_version`` (run by ``serve`` at start) says which; the start-up log an error "until guard.journal
    is fixed" for a lasting cause, a warning "until the database answers" for a passing one."""
    wrong = f"postgresql://{ROLE}:{WRONG}@{password_role}/postgres"
    with pytest.raises(JournalDatabaseError) as caught:
        schema_version(wrong, timeout=1.0)
    assert caught.value.cause == pg_faults.AUTHENTICATION and WRONG not in str(caught.value)
    assert (
        str(caught.value) == f"cannot connect to postgresql://127.0.0.1:{password_role.split(':')[1]}/postgres: "
        f"{pg_faults.AUTHENTICATION}"
    )
    down = f"postgresql://{ROLE}:{PASSWORD}@127.0.0.1:{free_port()}/x"
    with caplog.at_level(logging.WARNING, logger="mcp_guard"):
        for url in (wrong, down):
            async with opened_stores(config({"journal": {"postgres": url}}), journal_path=None):
                pass
    said = [(r.levelname, r.getMessage()) for r in caplog.records if r.getMessage().startswith("journal: cannot")]
    assert [level for level, _ in said] == ["ERROR", "WARNING"], said
    assert said[0][1].endswith(f"{pg_faults.AUTHENTICATION}; calls are refused until guard.journal is fixed")
    assert said[1][1].endswith(f"{pg_faults.REFUSED}; calls are refused until the database answers")
    assert all(PASSWORD not in text and WRONG not in text for _, text in said)


def test_the_classes_of_libpq_words_and_sqlstates() -> None:
    """Without a server: libpq's connection failures (no SQLSTATE) by their words, the others by SQLSTATE."""

    class Fault(Exception):
        sqlstate: str | None = None

    def fault(text: str, sqlstate: str | None = None) -> Fault:
        made = Fault(text)
        made.sqlstate = sqlstate
        return made

    prefix = 'connection failed: connection to server at "h", port 1 failed: '
    assert pg_faults.lasting_cause(fault(prefix + 'FATAL:  password authentication failed for user "u"')) == (
        pg_faults.AUTHENTICATION
    )
    assert pg_faults.lasting_cause(fault(prefix + "fe_sendauth: no password supplied")) == pg_faults.AUTHENTICATION
    assert pg_faults.lasting_cause(fault(prefix + 'FATAL:  role "u" does not exist')) == pg_faults.AUTHENTICATION
    assert pg_faults.lasting_cause(fault(prefix + 'FATAL:  database "d" does not exist')) == pg_faults.NO_DATABASE
    assert pg_faults.lasting_cause(fault(prefix + "server does not support SSL, but SSL was required")) == pg_faults.TLS
    assert pg_faults.lasting_cause(fault("permission denied for table t", "42501")) == pg_faults.PERMISSION
    assert pg_faults.lasting_cause(fault('relation "t" does not exist', "42P01")) == pg_faults.NO_TABLES
    refused = fault(
        prefix + "Connection refused\n\tIs the server running on that host and accepting TCP/IP connections?"
    )
    assert pg_faults.lasting_cause(refused) is None and pg_faults.passing_cause(refused) == pg_faults.REFUSED
    assert pg_faults.passing_cause(fault("connection timeout expired")) == pg_faults.TIMED_OUT
    assert pg_faults.passing_cause(TimeoutError()) == pg_faults.TIMED_OUT
    assert pg_faults.passing_cause(fault("server closed the connection unexpectedly")) == pg_faults.BROKE


async def test_the_client_is_told_whether_a_retry_may_help_with_nothing_of_the_database(
    password_role: str, pg_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Through the pipeline (``Pipeline.admit``), a journal on a real PostgreSQL that cannot commit the intent:
    a wrong password (lasting) is answered -32603 "Retrying will not help" with the cause's class, the server
    down (passing) "Retrying may help"; no answer holds the role, the password, the database, the address or
    an argument value, and nothing is forwarded (the call's intent is not there)."""
    from mcp_guard.calls.call import Call
    from mcp_guard.calls.pipeline import Pipeline
    from tests.calls.test_pipeline import catalog

    init_schema(pg_url)
    database = pg_url.rsplit("/", 1)[1]
    down_port = free_port()
    argument = "/srv/private/f38-argument.txt"
    route = catalog().route("fs__read")
    assert route is not None
    cases = {
        "lasting": (f"postgresql://{ROLE}:{WRONG}@{password_role}/{database}", "Retrying will not help"),
        "passing": (f"postgresql://{ROLE}:{PASSWORD}@127.0.0.1:{down_port}/{database}", "Retrying may help"),
    }
    for name, (url, says) in cases.items():
        journal = PostgresJournal(url, replica="r1", timeout=1.0)
        await journal.open()
        try:
            with caplog.at_level(logging.DEBUG):
                rejection = await Pipeline(journal=journal).admit(Call(route, {"path": argument}))
        finally:
            await journal.aclose()
        assert rejection is not None and rejection.error is not None, name
        answer = str(rejection.response(1))
        assert rejection.error[0] == -32603 and says in rejection.error[1], (name, answer)
        if name == "lasting":
            assert pg_faults.AUTHENTICATION in answer
        held = (ROLE, PASSWORD, WRONG, database, password_role, str(down_port), "postgresql", argument)
        assert [text for text in held if text in answer] == [], (name, answer)
    for text in [*(str(r.getMessage()) for r in caplog.records), *(r.exc_text or "" for r in caplog.records)]:
        assert PASSWORD not in text and WRONG not in text and argument not in text
