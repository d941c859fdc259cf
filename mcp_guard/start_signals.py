"""Stop signals that come while ``wrap`` or ``serve`` is still starting: held until its front can stop for them.

A front holds SIGTERM, SIGHUP and SIGINT (``fronts.stop_signals``) only once its event loop runs;
before that, Python's defaults applied: ``serve``'s imports take 2-3 s on a loaded machine, and a
Ctrl-C meanwhile ended the guard with a ``KeyboardInterrupt`` traceback, a supervisor's SIGTERM
with death by the signal (exit status -15). The CLI now runs ``wrap`` and ``serve`` inside
:func:`held_until_front` from its first line: a stop signal is recorded, not acted on, and the
front raises it again once it holds the signals (:func:`release`), where it stops the guard as
one that comes later does: exit status 130 after SIGINT, 0 after SIGTERM or SIGHUP, no traceback,
every upstream stopped. ``wrap``'s early upstream start (``peer.spawn.start_early``) holds them
the same way from its start on. The console script and ``python -m mcp_guard`` (``mcp_guard.entry``)
hold them before they import ``mcp_guard.cli`` (the CLI's hold, inside, then changes nothing); a signal
that comes before (the interpreter's own start) still gets Python's default.

This module imports nothing of the package (the CLI imports it before anything else).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType
from typing import Final

__all__ = ["STOP_SIGNALS", "held_until_front", "release"]

STOP_SIGNALS: Final = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
"""The signals that stop a front: a supervisor's or MCP client's SIGTERM, a closed terminal's SIGHUP, Ctrl-C."""

_held: list[int] = []
"""The stop signals received while :func:`held_until_front` holds them, in order (to :func:`release`)."""


def _hold(signum: int, _frame: FrameType | None) -> None:
    _held.append(signum)


@contextlib.contextmanager
def held_until_front() -> Iterator[None]:
    """Record :data:`STOP_SIGNALS` instead of acting on them while the block runs (the command's start).

    A front that takes the signals over (``fronts.stop_signals.held_stop_signals``) calls
    :func:`release` once it holds them. On leaving the block, a handler still this module's gets back
    the one it replaced (a front's, installed meanwhile, is left: the CLI's fronts leave them ignored);
    signals never released (the command ended before any front ran: a usage or configuration error)
    are dropped, the command's exit status standing. Off the main thread nothing is held. Inside a
    hold (``entry`` holds them before it imports the CLI, whose ``main`` holds them again) nothing changes:
    the outer one keeps what it recorded and gives the handlers back.
    """
    if threading.current_thread() is not threading.main_thread() or all(
        signal.getsignal(signum) is _hold for signum in STOP_SIGNALS
    ):
        yield
        return
    _held.clear()
    previous = {signum: signal.signal(signum, _hold) for signum in STOP_SIGNALS}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            if signal.getsignal(signum) is _hold:
                signal.signal(signum, handler)
        _held.clear()


def release() -> list[int]:
    """Raise again, in order, the stop signals held since the start (none: nothing happens); returns them.

    Call it where the signals are caught by a front (``held_stop_signals``), never with this module's
    handler still installed for them (it would only record them again).
    """
    held = list(_held)
    _held.clear()
    for signum in held:
        signal.raise_signal(signum)
    return held
