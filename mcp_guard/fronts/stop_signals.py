"""The stop signals: SIGTERM, SIGHUP and SIGINT stop a front, and further ones cannot cut its upstreams' stop short.

Every front (``wrap`` and ``serve``, on stdio or over HTTP) runs inside :func:`held_stop_signals`,
which holds the three signals from before its first upstream starts until its last upstream has
stopped. The first one is noted as the process's stop cause (``streams.ends.note_stop``: what is cut
off says the guard was stopped by it, not that the server went away) and calls the front's ``stop``
(the stdio fronts cancel their session; the HTTP front asks uvicorn to stop): the upstreams then get
their shutdown (``upstream``: stdin closed, and SIGTERM to the whole process group
:data:`~.upstream.STOP_EXIT_SECONDS` later unless the server exited, SIGKILL
:data:`~.upstream.KILL_GRACE_SECONDS` after that). Any further one is logged, and changes nothing:
with the signals' default actions a second SIGTERM from a supervisor, or a double Ctrl-C, used to
kill the guard at once and leave the server and its group running as orphans (new-user trial F3).
Once the block is left, the upstreams are stopped, and the signals have their default actions again,
or (the CLI's fronts) stay ignored while the process exits. One that came while the command was
still starting (held by ``start_signals``) is raised again as the block begins, and stops the front
at once. The guard killed with SIGKILL still cleans up nothing.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
from collections.abc import AsyncIterator, Callable

import anyio

from ..peer.spawn import STOP_SIGNALS
from ..peer.upstream import KILL_GRACE_SECONDS
from ..start_signals import release
from ..streams.ends import note_stop

__all__ = ["STOP_SIGNALS", "StopSignals", "held_stop_signals"]

log = logging.getLogger("mcp_guard")


class StopSignals:
    """The stop signals a front has received while it ran.

    Attributes:
        first: the first one's number, or ``None`` when none came.
    """

    def __init__(self) -> None:
        self.first: int | None = None

    @property
    def exit_status(self) -> int:
        """The front's exit status once it stopped: 130 (128 + 2, the shell's) after SIGINT came first, else 0."""
        return 130 if self.first == signal.SIGINT else 0


@contextlib.asynccontextmanager
async def held_stop_signals(stop: Callable[[], None], *, then_ignore: bool = False) -> AsyncIterator[StopSignals]:
    """Hold :data:`STOP_SIGNALS` while the block runs: the first calls ``stop()``, later ones are only logged.

    ``stop`` runs on the event loop, not in a signal handler. Run the front, and every
    upstream's stop, inside the block. With ``then_ignore`` (a front that is the process's
    last work: the CLI's) the signals are ignored once the block is left, instead of getting
    their default actions back: the upstreams are stopped by then, and a signal while the
    process exits (Python's finalization can take a second on a loaded machine) would only
    turn its exit status into death by that signal (trial F3b). Off the main thread (where
    signals cannot be caught) the block runs without holding any.

    Yields:
        The :class:`StopSignals` received, for the exit status.

    Raises:
        Whatever the block raises, as it was raised (not in an exception group).
    """
    received = StopSignals()
    note_stop(None)  # (the process's note: not a former front's)
    if threading.current_thread() is not threading.main_thread():
        yield received
        return

    async def watch(signals: AsyncIterator[int]) -> None:
        async for signum in signals:
            if received.first is None:
                received.first = signum
                log.info("received signal %d; stopping", signum)
                note_stop(signum)  # (before anything is cancelled: what is cut off says why)
                stop()
                continue
            log.info(
                "received signal %d while stopping; the upstreams are stopped first (SIGTERM to each "
                "process group, SIGKILL %g s later)",
                signum,
                KILL_GRACE_SECONDS,
            )

    try:
        with anyio.open_signal_receiver(*STOP_SIGNALS) as signals:
            try:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(watch, signals)
                    release()  # the ones that came while the command started (``start_signals``): caught now
                    try:
                        yield received
                    finally:
                        tg.cancel_scope.cancel()
            except BaseExceptionGroup as group:
                if len(group.exceptions) == 1:  # the block's own (the watcher raises none): as without a task group
                    raise group.exceptions[0] from None
                raise
    finally:
        note_stop(None)
        if then_ignore:  # (after the receiver is closed: closing it restores the default actions)
            for signum in STOP_SIGNALS:
                signal.signal(signum, signal.SIG_IGN)
