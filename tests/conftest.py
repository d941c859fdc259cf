"""Shared pytest configuration."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

_STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)

# Hypothesis profiles (docs/testing.md). Everywhere: no deadline and no too-slow health check, as a
# loaded machine (2 cores shared by many runs) makes any time limit fail at random. Under CI (the
# ``CI`` environment variable, which .ci/run sets): derandomized as well, so a CI run meets the same
# examples each time and cannot go red on a random new one; local runs stay random and find new
# ones. A test's own settings (``profile_settings``' fixed seed, its example count) still apply;
# ``--hypothesis-profile NAME`` picks another profile.
settings.register_profile("mcp-guard", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile(
    "mcp-guard-ci", parent=settings.get_profile("mcp-guard"), derandomize=True, database=None, print_blob=True
)
settings.load_profile("mcp-guard-ci" if os.environ.get("CI") else "mcp-guard")


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
