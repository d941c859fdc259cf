"""A journal that cannot commit the intent: the client's -32603 says whether a retry may help (fault 37 B).

A fake :class:`~mcp_guard.calls.stores.JournalSink` raises :class:`~mcp_guard.calls.stores.StoreUnavailable`
as ``state.pg_journal`` does: its message names the store's address (redacted, but with the host, port and
database), its ``cause`` a ``state.pg_faults`` constant for a lasting fault, None for a passing one. The
real PostgreSQL's faults are in ``tests/state/test_pg_faults.py``.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from mcp_guard.auth.principal import Principal
from mcp_guard.calls.call import Call
from mcp_guard.calls.journal import Result
from mcp_guard.calls.pipeline import Pipeline
from mcp_guard.calls.store_refusals import JOURNAL_LASTING, JOURNAL_PASSING
from mcp_guard.calls.stores import StoreUnavailable
from mcp_guard.state import pg_faults
from tests.calls.test_pipeline import catalog

pytestmark = pytest.mark.anyio

ADDRESS = "postgresql://10.1.2.3:5433/journal_db_f38"
SECRET_ARGUMENT = "/home/someone/secret-plan-f38.txt"


class FailingJournal:
    """A :class:`~mcp_guard.calls.stores.JournalSink` whose every record fails with ``error``."""

    key = b"k" * 32

    def __init__(self, error: StoreUnavailable) -> None:
        self.error = error
        self.intents = 0

    async def intent(
        self,
        call_id: str,
        server: str,
        tool: str,
        arguments_sha256: str,
        arguments_bytes: int,
        principal: Principal | None = None,
    ) -> None:
        self.intents += 1
        raise self.error

    async def outcome(
        self,
        call_id: str,
        server: str,
        tool: str,
        result: Result,
        kind: str | None = None,
        principal: Principal | None = None,
    ) -> None:
        raise self.error


def _texts(answer: dict[str, Any]) -> str:
    return str(answer)


@pytest.mark.parametrize(
    ("error", "says", "not_says"),
    [
        (
            StoreUnavailable(
                f"PostgreSQL at {ADDRESS} refuses the guard: {pg_faults.AUTHENTICATION}", pg_faults.AUTHENTICATION
            ),
            "Retrying will not help",
            "may help",
        ),
        (
            StoreUnavailable(f"PostgreSQL at {ADDRESS} refuses the guard: {pg_faults.NO_TABLES}", pg_faults.NO_TABLES),
            "Retrying will not help",
            "may help",
        ),
        (
            StoreUnavailable(f"PostgreSQL at {ADDRESS} is unavailable: {pg_faults.REFUSED}"),
            "Retrying may help",
            "not help",
        ),
        (
            StoreUnavailable(f"PostgreSQL at {ADDRESS} is unavailable: {pg_faults.TIMED_OUT}"),
            "Retrying may help",
            "not help",
        ),
        (StoreUnavailable("the journal's database pool is not open"), "Retrying may help", "not help"),
    ],
    ids=["authentication", "no-tables", "refused", "timed-out", "not-open"],
)
async def test_a_journal_failure_tells_the_client_whether_a_retry_may_help(
    error: StoreUnavailable, says: str, not_says: str, caplog: pytest.LogCaptureFixture
) -> None:
    route = catalog().route("fs__read")
    assert route is not None
    journal = FailingJournal(error)
    pipe = Pipeline(journal=journal)
    with caplog.at_level(logging.DEBUG, logger="mcp_guard"):
        rejection = await pipe.admit(Call(route, {"path": SECRET_ARGUMENT}))
    assert journal.intents == 1
    assert rejection is not None and rejection.kind == "internal_error" and rejection.result is None
    answer = rejection.response(7)
    assert answer["error"]["code"] == -32603
    message = answer["error"]["message"]
    assert says in message and not_says not in message
    if error.cause is None:
        assert message == JOURNAL_PASSING
    else:
        assert message == JOURNAL_LASTING.format(cause=error.cause) and error.cause in message
    # The client's answer holds no address, database, URL or argument value.
    for secret in (ADDRESS, "10.1.2.3", "5433", "journal_db_f38", "postgresql://", SECRET_ARGUMENT):
        assert secret not in _texts(answer), secret
    # The operator's log says the store's own (redacted) message, without a traceback or the argument.
    said = [r for r in caplog.records if "rejected tools/call" in r.getMessage()]
    assert len(said) == 1 and str(error) in said[0].getMessage() and said[0].exc_info is None
    assert all(SECRET_ARGUMENT not in r.getMessage() for r in caplog.records)


async def test_another_journal_fault_is_still_the_generic_internal_error(tmp_path: Any) -> None:
    """A fault that is no store's (a bug, a closed JSONL file) keeps the step failure's generic text."""

    class Broken(FailingJournal):
        async def intent(self, *args: Any, **kwargs: Any) -> None:
            raise RuntimeError("a bug")

    route = catalog().route("fs__read")
    assert route is not None
    rejection = await Pipeline(journal=Broken(StoreUnavailable("x"))).admit(Call(route, {"path": "a"}))
    assert rejection is not None and rejection.error == (
        -32603,
        "mcp-guard could not check this call; it was not forwarded",
    )
