"""Why an upstream connection ended: the cause a transport can tell, for the log and the -32603 texts.

A connector (``peer.upstream``'s stdio one) registers, for each link it yields, a function that
says how the connection ended (:func:`tell_end`); the peer (``peer.connection``) asks it
(:func:`end_of`) when the link's ``receive()`` has ended, before anything waiting on it is
answered. The stdio upstream says its exit status, or its signal, or that it closed its output
but is still running, and whether its stderr (relayed to the guard's stderr) has lines that may
say why. A link nobody registered (an HTTP session, a test's stream) has no cause to tell
(None). Nothing here reads argument values: the causes are the process's status and counts.

One cause is the guard's own: a stop signal (SIGTERM, SIGHUP, SIGINT) it received. The front
that holds the signals (``fronts.stop_signals``) notes it here (:func:`note_stop`) before it
cancels anything, so what is cut off then can say so (:func:`stop_signal`): the -32603 answers
(``wire.messages.stopped_text``), the journal's ``stopped`` outcome, and the log line of the
upstream's stop (``peer.upstream``), instead of blaming the server or a client that closed
nothing (red team 37 F1). It is the process's: one signal stops every session.
"""

from __future__ import annotations

import signal
import weakref
from collections.abc import Awaitable, Callable
from typing import Final

from ..errors import GuardError

__all__ = [
    "END_WAIT_SECONDS",
    "EndTeller",
    "UpstreamStartError",
    "end_of",
    "exit_text",
    "note_stop",
    "stop_signal",
    "tell_end",
]

END_WAIT_SECONDS: Final = 0.5
"""How long the peer waits, after a link's output ended, for the process behind it to exit (its status)."""

EndTeller = Callable[[float], Awaitable[str]]
"""``await tell(wait)``: how the connection ended, waiting up to ``wait`` seconds for the process to exit."""


class UpstreamStartError(GuardError):
    """The upstream could not be started or connected (command not found, not executable, ended before it
    answered any request, ...). Defined here, below both the stdio upstream and the peer, which raise it;
    ``peer.upstream`` is where it is imported from."""


_tellers: weakref.WeakKeyDictionary[object, EndTeller] = weakref.WeakKeyDictionary()


def tell_end(link: object, teller: EndTeller) -> None:
    """Register how ``link`` (a connector's line stream) says why it ended."""
    _tellers[link] = teller


async def end_of(link: object, wait: float = END_WAIT_SECONDS) -> str | None:
    """How ``link`` ended (a clause: ``"it exited with status 2; ..."``), or None when it cannot tell."""
    teller = _tellers.get(link)
    return None if teller is None else await teller(wait)


def exit_text(status: int | None, stderr_lines: int, stderr_label: str) -> str:
    """The clause for a process that ended its output: ``status`` (None: still running; negative: the
    signal that ended it, as ``subprocess`` gives it), and where to read why (its stderr lines, written
    to the guard's stderr prefixed ``stderr_label``)."""
    if status is None:
        what = "it closed its output but is still running"
    elif status < 0:
        what = f"it was ended by signal {-status}"
    else:
        what = f"it exited with status {status}"
    if stderr_lines:
        where = f"its stderr, relayed to the guard's stderr as `{stderr_label.strip()} ...`, may say why"
    else:
        where = "it wrote nothing to its stderr"
    return f"{what}; {where}"


_stop: list[str] = []
"""The name of the stop signal the guard is stopping on (one element), or empty (:func:`note_stop`)."""


def note_stop(signum: int | None) -> None:
    """The guard got the stop signal ``signum`` and is stopping (``fronts.stop_signals``, before it cancels
    anything); None: it is not (a front starts or has stopped: the note is the process's, so it is cleared)."""
    _stop.clear()
    if signum is not None:
        try:
            _stop.append(signal.Signals(signum).name)
        except ValueError:
            _stop.append(f"signal {signum}")


def stop_signal() -> str | None:
    """The name of the stop signal the guard is stopping on (``"SIGTERM"``), or None while it is not stopping on one."""
    return _stop[0] if _stop else None
