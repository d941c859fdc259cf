"""The id map of forwarded requests (``peer.inflight``), shared by ``wrap`` and ``serve``."""

from __future__ import annotations

import logging

import pytest

from mcp_guard.peer.inflight import MAX_LATE, InFlight, Late
from mcp_guard.wire.jsonrpc import id_key
from mcp_guard.wire.messages import UNANSWERED_DROPPED


def test_each_answer_matches_its_request_once() -> None:
    inflight: InFlight[str] = InFlight(None)
    inflight.start(id_key(1), "client-1", "tools/call", {})
    assert id_key(1) in inflight and id_key("1") not in inflight  # "1" and 1 are different ids
    assert inflight.match(id_key(1)) == "client-1"
    assert inflight.match(id_key(1)) is None  # a second answer to the same id is dropped
    assert len(inflight) == 0


def test_answers_to_ids_never_sent_are_dropped_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    inflight: InFlight[str] = InFlight(None, label="upstream s: ")
    with caplog.at_level(logging.WARNING, logger="mcp_guard"):
        assert inflight.match(id_key("forged")) is None
    assert caplog.messages == [f"upstream s: {UNANSWERED_DROPPED}"]


def test_late_answers_of_given_up_requests_are_dropped_or_passed_on() -> None:
    inflight: InFlight[str] = InFlight(None)
    for request_id in ("timed-out", "cancelled"):
        inflight.start(id_key(request_id), request_id, "tools/call", {})
        assert inflight.take(id_key(request_id)) == request_id
    inflight.give_up(id_key("timed-out"))
    inflight.give_up(id_key("cancelled"), late="cancelled")
    assert inflight.match(id_key("timed-out")) is None
    assert inflight.match(id_key("cancelled")) == Late("cancelled")
    assert inflight.match(id_key("cancelled")) is None  # once


def test_the_late_memory_is_bounded() -> None:
    inflight: InFlight[int] = InFlight(None)
    for n in range(MAX_LATE + 1):
        inflight.give_up(id_key(n), late=n)
    assert inflight.match(id_key(0)) is None  # the oldest was forgotten
    assert inflight.match(id_key(MAX_LATE)) == Late(MAX_LATE)


def test_requests_open_by_design_are_not_timed_and_clear_gives_every_record_back() -> None:
    inflight: InFlight[str] = InFlight(5.0)
    assert inflight.deadlines is not None
    inflight.start(id_key(1), "call", "tools/call", {})
    inflight.start(id_key(2), "listen", "subscriptions/listen", {})
    assert len(inflight.deadlines) == 1
    assert sorted(inflight.clear()) == ["call", "listen"]
    assert len(inflight) == 0 and len(inflight.deadlines) == 0


def test_upstream_ids_are_the_guard_s_own_and_a_reused_client_id_never_gets_an_earlier_late_answer() -> None:
    """Issue 25 item 5, at the map: the client's id 9 goes upstream under a fresh id each time; the late
    answer of the first (given up, its late answer to be passed on) is dropped once the client reused 9."""
    inflight: InFlight[int] = InFlight(None)
    first, second = inflight.new_id(), inflight.new_id()
    assert first != second and type(first) is str and first.startswith("mcp-guard-")
    inflight.start(id_key(first), 9, "tools/call", {}, client=id_key(9))
    assert inflight.upstream_of(id_key(9)) == id_key(first)
    inflight.give_up(id_key(first), late=inflight.take(id_key(first)), client=id_key(9))
    assert inflight.upstream_of(id_key(9)) is None
    inflight.start(id_key(second), 9, "tools/call", {}, client=id_key(9))
    assert inflight.match(id_key(first)) is None  # the late answer: dropped, the id 9 is another request's now
    assert inflight.match(id_key(second)) == 9
    assert inflight.upstream_of(id_key(9)) is None and len(inflight) == 0


def test_a_late_answer_is_passed_on_while_the_client_has_not_reused_the_id() -> None:
    inflight: InFlight[str] = InFlight(None)
    upstream_id = inflight.new_id()
    inflight.start(id_key(upstream_id), "c", "tools/call", {}, client=id_key("c"))
    inflight.give_up(id_key(upstream_id), late=inflight.take(id_key(upstream_id)), client=id_key("c"))
    other = inflight.new_id()
    inflight.start(id_key(other), "d", "tools/call", {}, client=id_key("d"))  # another id: no effect
    assert inflight.match(id_key(upstream_id)) == Late("c")
