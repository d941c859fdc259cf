"""How a ``tools/call`` ended, recorded: the journal's records, the observer told, the trace closed.

The recording half of the call pipeline (:class:`.pipeline.Pipeline` holds a :class:`Recorder`, and
decides when each record is made; its checks are its own):

- the journal (``guard.journal``): the intent record of an admitted call, written before it is forwarded
  (:meth:`Recorder.intent`, the pipeline's step 7), and one outcome record for every answered call
  (:meth:`Recorder.outcome`; :meth:`Recorder.unrouted` for a call refused before it could be routed).
  The records and their fields are those of :mod:`.journal` (a JSONL file, written in a worker thread)
  or of a :class:`.stores.JournalSink` (a database, awaited).
- the observer (``calls.observer.CallObserver``: metrics) told how each call ended, and the call's trace
  (``calls.observer.CallTrace``) closed: :func:`ended`, :func:`ended_unrouted`.
- :func:`outcome_of`: the journal ``result`` an upstream's answer stands for.

An outcome record that cannot be written is logged and the call goes on (its answer is already decided);
an intent record that cannot be written raises (the pipeline then refuses the call, fail closed). Records
and logs never hold argument values (the intent holds their digest and size).
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

import anyio.to_thread

from .observer import UNKNOWN_TOOL, CallObserver
from .stores import JournalSink, StoreUnavailable

if TYPE_CHECKING:
    from ..auth.principal import Principal
    from .call import Call
    from .journal import Journal, Result

__all__ = ["Recorder", "ended", "ended_unrouted", "new_call_id", "outcome_of"]

log = logging.getLogger("mcp_guard")


def new_call_id() -> str:
    """A fresh ``call_id`` (a random UUID, 32 hex digits): the name of one call in the journal's records and
    in the guard's logs and traces, whether or not a journal is kept."""
    import uuid  # here, not at the top: its import (with `platform`) is ~10 ms of wrap's start (issue 14)

    return uuid.uuid4().hex


def outcome_of(response: Any) -> Result:
    """The journal ``result`` for the upstream's answer (``None``: no answer, the upstream died)."""
    if type(response) is not dict:
        return "upstream_died"
    if "error" in response or "result" not in response:
        return "protocol_error"
    result = response["result"]
    if type(result) is dict and result.get("isError") is True:
        return "is_error"
    return "ok"


def ended(observer: CallObserver | None, call: Call, result: str, kind: str | None) -> None:
    """Tell ``observer`` (if any) how ``call`` ended (``result``: a journal result or ``output_invalid``;
    ``kind``: a rejection's kind, else None), with its duration since it arrived in seconds, and close its
    trace (if any)."""
    if observer is not None:
        route = call.route
        observer.call_ended(route.server, route.tool, result, kind, time.monotonic() - call.started)
    trace = call.trace
    if trace is not None:
        call.trace = None
        trace.ended(result, kind)


def ended_unrouted(observer: CallObserver | None, server: str, kind: str) -> None:
    """Tell ``observer`` (if any) of a call refused (``kind``) before it could be routed (``server``: where it
    would have gone): counted as ``calls.observer.UNKNOWN_TOOL`` (the name is the client's: no server listed
    it now), with no duration (the call was answered at once)."""
    if observer is not None:
        observer.call_ended(server, UNKNOWN_TOOL, "rejected", kind, None)


class Recorder:
    """The journal's records of a pipeline's calls.

    Args:
        journal: where intents and outcomes go: a JSONL file (written in a worker thread), a database
            (:class:`.stores.JournalSink`, awaited), or ``None`` for no journal (then nothing is written).
    """

    def __init__(self, journal: Journal | JournalSink | None) -> None:
        self.journal = journal
        self._file: Journal | None = None  # (the JSONL file: written in a worker thread)
        self._sink: JournalSink | None = None  # (a database: awaited)
        if journal is not None:  # (the file journal's code is loaded where a journal is configured: idle memory)
            from .journal import Journal

            if isinstance(journal, Journal):
                self._file = journal
            else:
                self._sink = journal

    async def intent(self, call: Call, digest: str, size: int) -> None:
        """The intent record of ``call`` (``digest``: its arguments' keyed digest, ``size``: their bytes of
        compact JSON), on disk (fsync) or committed before the call is forwarded; nothing without a journal.

        Raises:
            OSError, StoreUnavailable: it could not be written (the pipeline refuses the call).
        """
        route = call.route
        if self._file is not None:
            await anyio.to_thread.run_sync(
                self._file.intent, call.call_id, route.server, route.tool, digest, size, call.principal
            )
        elif self._sink is not None:
            await self._sink.intent(call.call_id, route.server, route.tool, digest, size, call.principal)

    async def outcome(self, call: Call, result: Result, kind: str | None) -> None:
        """The outcome record of ``call`` (``result``; ``kind``: a rejection's kind, else None); a record that
        cannot be written is logged (the call's answer stands)."""
        if self.journal is None:
            return
        route = call.route
        try:
            await self._write(call.call_id, route.server, route.tool, result, kind, call.principal)
        except (OSError, StoreUnavailable):
            log.exception("could not write an outcome record to the journal")

    async def unrouted(self, server: str, exposed: str, kind: str) -> None:
        """The outcome record ``rejected`` with ``kind`` of a call refused before it could be routed, under a new
        call id: its ``tool`` the name the client called (``exposed``: the server's own name for it is not at
        hand while it is down). A record that cannot be written is logged."""
        if self.journal is None:
            return
        try:
            await self._write(new_call_id(), server, exposed, "rejected", kind, None)
        except (OSError, StoreUnavailable):
            log.exception("could not write an outcome record to the journal")

    async def _write(
        self, call_id: str, server: str, tool: str, result: Result, kind: str | None, principal: Principal | None
    ) -> None:
        if self._file is not None:
            await anyio.to_thread.run_sync(self._file.outcome, call_id, server, tool, result, kind, principal)
        elif self._sink is not None:
            await self._sink.outcome(call_id, server, tool, result, kind, principal)
