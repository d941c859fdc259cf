"""``wrap``'s notes on forwarded requests (``sessions.answer_notes``): bounded, told once, forgotten."""

from __future__ import annotations

from typing import Any

from mcp_guard.calls.call import Call, Route
from mcp_guard.calls.policy import ToolPolicy
from mcp_guard.core import compile as compile_schema
from mcp_guard.sessions.answer_notes import MAX_NOTED, AnswerNotes
from mcp_guard.wire.jsonrpc import id_key

OUTPUT = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def call(outputs: str = "enforce") -> Call:
    compiled = compile_schema({"type": "object"})
    policy = ToolPolicy("allow", "", "reject", None, None)
    route = Route("t", "", "t", compiled, policy, output=compile_schema(OUTPUT), outputs=outputs)
    return Call(route, {}, False, call_id="")


def answer(request_id: Any, structured: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": {"content": [], "structuredContent": structured}}


def test_an_observed_call_is_told_once_with_the_judged_outcome() -> None:
    told: list[str] = []
    notes = AnswerNotes(lambda key: True)
    notes.observe(1, told.append)
    notes.note_call(1, call())
    out = notes.answer(id_key(1), answer(1, {"n": "x"}))
    assert out["result"].get("isError") is True and told == ["output_invalid"]
    assert notes.answer(id_key(1), answer(1, {"n": "x"}))["result"].get("isError") is None  # forgotten: relayed
    assert told == ["output_invalid"] and not notes.any


def test_ended_tells_the_observer_and_keeps_the_listing_note() -> None:
    told: list[str] = []
    notes = AnswerNotes(lambda key: True)
    notes.observe(2, told.append)
    notes.ended(id_key(2), "cancelled")
    notes.ended(id_key(2), "cancelled")
    assert told == ["cancelled"]


def test_gone_tells_only_the_requests_in_flight_and_drops_every_note() -> None:
    told: dict[Any, str] = {}
    notes = AnswerNotes(lambda key: True)
    for request_id in (1, 2):
        notes.observe(request_id, lambda outcome, r=request_id: told.__setitem__(r, outcome))
        notes.note_call(request_id, call())
    notes.gone([id_key(1)])
    assert told == {1: "upstream_died"} and not notes.any


def test_forget_drops_silently_and_outputs_off_notes_nothing() -> None:
    told: list[str] = []
    notes = AnswerNotes(lambda key: True)
    notes.observe(3, told.append)
    notes.forget(id_key(3))
    notes.note_call(4, call(outputs="off"))
    assert not notes.any and told == []


def test_notes_of_requests_no_longer_in_flight_are_dropped_at_the_bound() -> None:
    in_flight = {id_key(0)}
    notes = AnswerNotes(lambda key: key in in_flight)
    for request_id in range(MAX_NOTED + 1):
        notes.note_call(request_id, call())
        notes.observe(request_id, lambda outcome: None)
    # At the bound, only the one still in flight survived, and the newest was noted after the pruning.
    assert notes.answer(id_key(0), answer(0, {"n": "x"}))["result"].get("isError") is True
    assert notes.answer(id_key(MAX_NOTED), answer(MAX_NOTED, {"n": "x"}))["result"].get("isError") is True
    assert notes.answer(id_key(5), answer(5, {"n": "x"}))["result"].get("isError") is None
