"""The one restart policy of wrap and serve: failed or short-lived starts double the wait, up to a cap."""

from __future__ import annotations

import pytest

from mcp_guard.peer.backoff import Backoff

pytestmark = pytest.mark.anyio


async def test_failures_in_a_row_double_the_wait_up_to_the_cap() -> None:
    backoff = Backoff(0.5, 3.0)
    assert backoff.wait() == 0.0
    waits = []
    for _ in range(5):
        backoff.failed()
        waits.append(round(backoff.wait(), 1))
    assert waits == [0.5, 1.0, 2.0, 3.0, 3.0]
    assert backoff.failures == 5


@pytest.mark.parametrize(
    ("lived", "ready", "failures"),
    [(11.0, True, 0), (9.9, True, 2), (60.0, False, 2)],
    ids=["long-lived-resets", "short-lived-fails", "never-ready-fails"],
)
async def test_a_connection_that_ended_counts_by_how_long_it_lived(lived: float, ready: bool, failures: int) -> None:
    backoff = Backoff(0.5, 30.0, stable_after=10.0)
    backoff.failed()
    backoff.ended(lived, ready=ready)
    assert backoff.failures == failures
    assert (backoff.wait() == 0.0) is (failures == 0)
