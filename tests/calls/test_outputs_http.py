"""``wrap --http --outputs`` end to end (issue 15): the HTTP front judges results as stdio does.

The upstream is tests/e2e/structured_server.py (the SDK's ``MCPServer``; ``forecast`` returns a
pydantic model, listed with its ``outputSchema``) behind tests/npm/tampering_upstream.py, which
turns ``structuredContent.temperature`` into a string for the calls that ask it to. Raw ``httpx``
requests, both protocol eras: ``enforce`` withholds the spoiled result (a tool error of kind
``output_invalid``, no value shown) and passes the real one unchanged; ``report`` passes the
spoiled result with its findings in ``_meta["mcp-guard/output"]``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_guard.wire.meta import OUTPUT_KEY, REJECTION_KEY
from tests.e2e.http_guard import Guard, call, http_client, messages_of, modern, open_guard, open_session, post
from tests.e2e.test_http_front import anyio_backend

__all__ = ["anyio_backend"]  # module scope (one guard per test here; imported for its scope only)

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

ROOT = Path(__file__).resolve().parents[2]
TAMPERING = ROOT / "tests" / "npm" / "tampering_upstream.py"
STRUCTURED = ROOT / "tests" / "e2e" / "structured_server.py"
ENV = {"TAMPERED_COMMAND": json.dumps([sys.executable, str(STRUCTURED)])}
SPOIL = {"x-tamper": "type"}
REAL = {"city": "Oslo", "temperature": 21.5, "sunny": True}


async def forecasts(guard: Guard) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``forecast`` called real and spoiled, in the handshake era (a session) and in the 2026-07-28 era
    (no session): the two pairs of results, ``[real, spoiled]`` each."""
    async with http_client() as client:
        session = await open_session(client, guard)
        handshake = []
        for i, meta in enumerate([None, SPOIL], 1):
            answer = await post(client, guard, call(i, "forecast", {"city": "Oslo"}, meta), session)
            assert answer.status_code == 200, answer.text
            handshake.append(messages_of(answer)[-1]["result"])
        later = []
        for i, meta in enumerate([None, SPOIL], 11):
            message, headers = modern(call(i, "forecast", {"city": "Oslo"}, meta))
            answer = await post(client, guard, message, headers=headers)
            assert answer.status_code == 200, answer.text
            later.append(messages_of(answer)[-1]["result"])
    return handshake, later


async def test_enforce_over_http_withholds_a_spoiled_result(tmp_path: Path) -> None:
    async with open_guard(tmp_path, "--outputs", "enforce", upstream=TAMPERING, env=ENV) as guard:
        handshake, later = await forecasts(guard)
        log = guard.log
    for era, (real, spoiled) in (("handshake", handshake), ("2026-07-28", later)):
        assert real.get("isError") is not True and real["structuredContent"] == REAL, era
        assert OUTPUT_KEY not in real.get("_meta", {}), era
        assert spoiled["isError"] is True and "structuredContent" not in spoiled, era
        rejection = spoiled["_meta"][REJECTION_KEY]
        assert rejection["kind"] == "output_invalid" and rejection["schema"] == "outputSchema", era
        assert [(i["keyword"], i["instance_path"]) for i in rejection["issues"]] == [("type", "/temperature")], era
        assert "21.5" not in json.dumps(spoiled), era  # the spoiled value ("21.5") is never shown
    assert later[1]["resultType"] == "complete"
    assert log.count("the result of tools/call `forecast` does not match its outputSchema (withheld)") == 2
    assert "21.5" not in log


async def test_report_over_http_annotates_a_spoiled_result(tmp_path: Path) -> None:
    async with open_guard(tmp_path, "--outputs", "report", upstream=TAMPERING, env=ENV) as guard:
        handshake, later = await forecasts(guard)
    for era, (real, spoiled) in (("handshake", handshake), ("2026-07-28", later)):
        assert real["_meta"][OUTPUT_KEY] == {"checked": True, "valid": True, "issues": []}, era
        assert spoiled.get("isError") is not True and spoiled["structuredContent"]["temperature"] == "21.5", era
        note = spoiled["_meta"][OUTPUT_KEY]
        assert note["checked"] is True and note["valid"] is False, era
        assert [(i["keyword"], i["instance_path"]) for i in note["issues"]] == [("type", "/temperature")], era
