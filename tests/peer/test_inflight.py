"""The id map of forwarded requests (``peer.inflight``), shared by ``wrap`` and ``serve``."""

from __future__ import annotations

import logging

import pytest

from mcp_guard.peer.inflight import LATE, MAX_LATE, InFlight
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
    inflight.give_up(id_key("cancelled"), pass_late=True)
    assert inflight.match(id_key("timed-out")) is None
    assert inflight.match(id_key("cancelled")) is LATE
    assert inflight.match(id_key("cancelled")) is None  # once


def test_the_late_memory_is_bounded() -> None:
    inflight: InFlight[int] = InFlight(None)
    for n in range(MAX_LATE + 1):
        inflight.give_up(id_key(n), pass_late=True)
    assert inflight.match(id_key(0)) is None  # the oldest was forgotten
    assert inflight.match(id_key(MAX_LATE)) is LATE


def test_requests_open_by_design_are_not_timed_and_clear_gives_every_record_back() -> None:
    inflight: InFlight[str] = InFlight(5.0)
    assert inflight.deadlines is not None
    inflight.start(id_key(1), "call", "tools/call", {})
    inflight.start(id_key(2), "listen", "subscriptions/listen", {})
    assert len(inflight.deadlines) == 1
    assert sorted(inflight.clear()) == ["call", "listen"]
    assert len(inflight) == 0 and len(inflight.deadlines) == 0
