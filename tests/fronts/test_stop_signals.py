"""``fronts.stop_signals.held_stop_signals`` in this process: the first stop signal stops, further ones are only logged.

The signals are sent to the test process itself (pytest runs tests on the main thread); were
one not held, its default action would end the test run. The end-to-end proof, with real
servers and process groups, is ``tests/e2e/test_shutdown_signals.py``.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from collections.abc import Callable

import anyio
import pytest

from mcp_guard.fronts.stop_signals import STOP_SIGNALS, held_stop_signals
from mcp_guard.streams.ends import note_stop, stop_signal

pytestmark = pytest.mark.anyio

DEADLINE = 10.0
"""Hang guard: a held signal is handed to the event loop at its next pass."""


async def _until(condition: Callable[[], object]) -> None:
    with anyio.fail_after(DEADLINE):
        while not condition():
            await anyio.sleep(0.01)


@pytest.mark.parametrize(
    ("signums", "status"),
    [
        ((signal.SIGTERM, signal.SIGTERM, signal.SIGINT), 0),
        ((signal.SIGINT, signal.SIGINT), 130),
        ((signal.SIGHUP, signal.SIGHUP), 0),
    ],
    ids=["sigterm-first", "sigint-first", "sighup-first"],
)
async def test_the_first_signal_stops_and_later_ones_are_logged(
    signums: tuple[signal.Signals, ...], status: int, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="mcp_guard")
    stops: list[None] = []
    first, *others = signums
    async with held_stop_signals(lambda: stops.append(None)) as received:
        os.kill(os.getpid(), first)
        await _until(lambda: stops)
        for signum in others:
            os.kill(os.getpid(), signum)
        await _until(lambda: caplog.text.count("while stopping") == len(others))
        assert stops == [None]  # stop() once, for the first
    assert received.first == first and received.exit_status == status
    assert f"received signal {first.value}; stopping" in caplog.text
    for signum in others:
        assert f"received signal {signum.value} while stopping" in caplog.text


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
async def test_the_first_signal_is_noted_as_the_stop_cause_before_stop_runs(signum: signal.Signals) -> None:
    """Red team 37 F1: what the stop cuts off can tell a stop signal from a server that went away or a client
    that closed (``streams.ends.stop_signal``): noted before ``stop()`` runs, cleared as the block is left
    (and as a block starts: not a former front's)."""
    note_stop(signal.SIGTERM)  # a former front's, left noted
    seen: list[str | None] = []
    async with held_stop_signals(lambda: seen.append(stop_signal())):
        assert stop_signal() is None
        os.kill(os.getpid(), signum)
        await _until(lambda: seen)
        assert seen == [signum.name] and stop_signal() == signum.name
    assert stop_signal() is None


def test_a_stop_cause_unknown_to_the_signal_module_is_named_by_its_number() -> None:
    note_stop(200)
    try:
        assert stop_signal() == "signal 200"
    finally:
        note_stop(None)
    assert stop_signal() is None


async def test_the_signals_have_their_default_actions_again_after_the_block() -> None:
    async with held_stop_signals(lambda: None):
        assert all(signal.getsignal(signum) is not signal.SIG_DFL for signum in STOP_SIGNALS)
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    assert signal.getsignal(signal.SIGHUP) is signal.SIG_DFL
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


async def test_then_ignore_leaves_the_signals_ignored_after_the_block() -> None:
    """The CLI's fronts: a signal while the process exits after its upstreams stopped changes nothing (F3b)."""
    try:
        async with held_stop_signals(lambda: None, then_ignore=True):
            pass
        assert [signal.getsignal(signum) for signum in STOP_SIGNALS] == [signal.SIG_IGN] * len(STOP_SIGNALS)
    finally:
        for signum in STOP_SIGNALS:
            signal.signal(signum, signal.default_int_handler if signum == signal.SIGINT else signal.SIG_DFL)


async def test_an_exception_of_the_block_comes_out_as_raised() -> None:
    with pytest.raises(LookupError, match="no such upstream"):
        async with held_stop_signals(lambda: None):
            raise LookupError("no such upstream")


def test_off_the_main_thread_nothing_is_held() -> None:
    """Signals cannot be caught off the main thread: the block runs all the same, holding none."""
    outcome: list[object] = []

    async def block() -> None:
        async with held_stop_signals(lambda: None) as received:
            outcome.append(signal.getsignal(signal.SIGTERM))
        outcome.append(received.exit_status)

    thread = threading.Thread(target=lambda: anyio.run(block))
    thread.start()
    thread.join(DEADLINE)
    assert outcome == [signal.SIG_DFL, 0]
