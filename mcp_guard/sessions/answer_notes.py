"""What ``wrap`` notes of a request it forwards, to do with its answer: one object (``relay.Relay``'s).

``wrap`` relays the upstream's answers as they come, but three kinds of them are the guard's business:

- the answer to a ``tools/list``: annotated by its envelope's tool table (``ToolTable.annotate``: each tool's
  verdict under ``_meta``), the schemas classified in the worker thread first (``ToolTable.prepare``);
- the answer to a ``tools/call`` whose tool has an ``outputSchema``: judged against it
  (``Pipeline.judge_output``, as ``serve`` does), checked in the worker thread first (``Pipeline.prepare_output``);
- the answer to a ``tools/call`` an observer (metrics) or a tracer follows: its outcome told.

Each note is kept by the key of the client's id (``wire.jsonrpc.id_key``) from the forwarding to the answer, and
forgotten with the request: answered, timed out, undeliverable, cancelled, the id reused, the upstream gone.
Not thread-safe, but for :meth:`AnswerNotes.prepare` (read only, in the worker thread): the event loop owns it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from ..calls.call import Call
from ..calls.pipeline import Pipeline
from ..calls.recording import outcome_of
from ..calls.tool_table import ToolTable
from ..wire.jsonrpc import id_key

__all__ = ["MAX_NOTED", "AnswerNotes"]

Key = tuple[bool, Any]

MAX_NOTED: Final = 10_000
"""Noted calls (results to judge, outcomes to tell) past which those no longer in flight are forgotten."""


class AnswerNotes:
    """The notes on forwarded requests whose answers the guard processes (see the module docstring).

    Attributes:
        any: False only while no note is kept (an attribute, not a call: the stdio hot path asks it twice a call).

    Args:
        in_flight: whether the request under a client id key is still awaited upstream (``InFlight.upstream_of``
            is not None): notes of requests the client cancelled and the upstream never answered are dropped
            past :data:`MAX_NOTED`.
    """

    __slots__ = ("_calls", "_in_flight", "_lists", "_observed", "any")

    def __init__(self, in_flight: Callable[[Key], bool]) -> None:
        self._in_flight = in_flight
        # tools/list requests -> (their table, its generation then, first page, cursor), for the annotation.
        self._lists: dict[Key, tuple[ToolTable, int, bool, Any]] = {}
        # tools/call requests whose results are judged (Pipeline.judge_output).
        self._calls: dict[Key, Call] = {}
        # tools/call requests whose outcome the observer (metrics, traces) is told: key -> tell(outcome).
        self._observed: dict[Key, Callable[[str], None]] = {}
        self.any = False

    def _settle(self) -> None:
        self.any = bool(self._lists or self._calls or self._observed)

    # --- noting, on the way upstream ---------------------------------------------------------------

    def note_list(self, request_id: Any, table: ToolTable, cursor: Any) -> None:
        """A ``tools/list`` (``cursor``: its ``params.cursor``) is forwarded: its answer is annotated by ``table``
        (from its cache, unless the table changed meanwhile: ``ToolTable.generation``)."""
        self._lists[id_key(request_id)] = (table, table.generation, cursor is None, cursor)
        self.any = True

    def note_call(self, request_id: Any, call: Call) -> None:
        """A ``tools/call`` is forwarded: its result is judged against its route's ``outputSchema``
        (``outputs`` ``off``, or no schema: nothing noted)."""
        if call.route.output is None or call.route.outputs == "off":
            return
        if len(self._calls) >= MAX_NOTED:
            self._calls = {k: v for k, v in self._calls.items() if self._in_flight(k)}
        self._calls[id_key(request_id)] = call
        self.any = True

    def observe(self, request_id: Any, tell: Callable[[str], None]) -> None:
        """A followed ``tools/call`` is forwarded: ``tell(outcome)`` once it ends (its answer, or the guard's)."""
        if len(self._observed) >= MAX_NOTED:
            self._observed = {k: v for k, v in self._observed.items() if self._in_flight(k)}
        self._observed[id_key(request_id)] = tell
        self.any = True

    # --- forgetting ----------------------------------------------------------------------------

    def ended(self, key: Key, outcome: str) -> None:
        """The forwarded request under the client id key ``key`` ended without its answer (``cancelled``,
        ``timed_out``, ``upstream_died``): its observer is told ``outcome``; its other notes are kept (a cancelled
        ``tools/list``'s late answer is still annotated)."""
        tell = self._observed.pop(key, None)
        if tell is not None:
            self._settle()
            tell(outcome)

    def forget(self, key: Key) -> None:
        """Forget every note of the request under the client id key ``key`` (answered by the guard, or its id
        reused by a new request)."""
        self._lists.pop(key, None)
        self._calls.pop(key, None)
        self._observed.pop(key, None)
        self._settle()

    def gone(self, keys: list[Key], outcome: str = "upstream_died") -> None:
        """The upstream went away: the followed requests among ``keys`` (those in flight) ended ``outcome``
        (``upstream_died``; ``stopped``: the guard was stopped by a signal); every note is dropped."""
        if self._observed:
            for key in keys:
                self.ended(key, outcome)
        self._lists.clear()
        self._calls.clear()
        self._observed.clear()
        self.any = False

    # --- the answers ---------------------------------------------------------------------------

    def prepare(self, client_id: Any, message: dict[str, Any], result: dict[str, Any]) -> None:
        """(In the worker thread.) The upstream's answer ``message`` (its ``result``) to the client's request
        ``client_id``: a listing's schemas classified, a call's result checked, ahead of :meth:`answer`."""
        key = id_key(client_id)
        listing = self._lists.get(key)
        if listing is not None:
            listing[0].prepare(result)
        elif self._calls:
            Pipeline.prepare_output(self._calls.get(key), message)

    def answer(self, key: Key, message: dict[str, Any]) -> dict[str, Any]:
        """The upstream's answer ``message`` (the client's id back) to the request under ``key``, as the client
        gets it: annotated (a listing), judged (a call with an output schema; an observer told its outcome), or
        ``message`` itself."""
        if self._observed and key in self._observed:  # a followed tools/call
            outcome: str = outcome_of(message)
            answer, judged = self._judged(key, message)
            self.ended(key, judged if answer is not message and outcome == "ok" else outcome)
            return answer
        if self._lists:
            listing = self._lists.pop(key, None)
            if listing is not None and "result" in message:
                table, generation, first_page, cursor = listing
                out = dict(message)
                out["result"] = table.annotate(
                    message["result"], cache=generation == table.generation, first_page=first_page, cursor=cursor
                )
                self._settle()
                return out
        if self._calls:
            answer = self._judged(key, message)[0]
            self._settle()
            return answer
        self._settle()
        return message

    def _judged(self, key: Key, message: dict[str, Any]) -> tuple[dict[str, Any], str]:
        """``message`` judged against the noted call's ``outputSchema``: (the answer, its outcome for the
        observer when the answer is a new one)."""
        call = self._calls.pop(key, None) if self._calls else None
        if call is None:
            return message, "ok"
        answer, outcome = Pipeline.judge_output(call, message)
        return answer, outcome or "ok"
