"""Shared pytest configuration."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator

import pytest

_STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


@pytest.fixture
def anyio_backend() -> str:
    """Run ``pytest.mark.anyio`` tests on asyncio only."""
    return "asyncio"


@pytest.fixture(autouse=True)
def _stop_signal_dispositions() -> Iterator[None]:
    """Each test starts with the stop signals' dispositions the run began with, and leaves them so.

    A test that runs the CLI in-process leaves SIGTERM, SIGHUP and SIGINT ignored, as a real guard
    does on its way out (``held_stop_signals(then_ignore=True)``); an ignored signal stays ignored
    across ``exec``, so every process a later test started would ignore SIGTERM too (the CI run of
    2026-12-02: a child that ``terminate()`` could not stop).
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = {signum: signal.getsignal(signum) for signum in _STOP_SIGNALS}
    yield
    for signum, handler in before.items():
        if signal.getsignal(signum) is not handler and handler is not None:
            signal.signal(signum, handler)
