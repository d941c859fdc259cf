"""Issue 25 item 3: one ``Host``, one ``Origin``, one reading of them for every path.

Table-driven: :func:`read_host_origin` on raw header lines and a request target, then the
front's :class:`Security` verdict on that reading (400 for a repeated, missing or invalid
``Host`` and a target that is not one, 403 for a repeated ``Origin`` or a foreign authority).
The end-to-end counterparts, over a real socket against ``wrap --http`` and ``serve --http``,
are in ``tests/e2e/test_http_host_origin.py``.
"""

from __future__ import annotations

import pytest

from mcp_guard.fronts.http import HttpConfig
from mcp_guard.fronts.http.fields import request_head, request_headers
from mcp_guard.fronts.http.security import Security, read_host_origin, valid_host

GOOD = "127.0.0.1:8080"


@pytest.mark.parametrize(
    ("value", "valid"),
    [
        ("127.0.0.1:8080", True),
        ("localhost", True),
        ("LocalHost:80", True),
        ("[::1]:8080", True),
        ("[::1]", True),
        ("[v1.fe]:1", True),
        ("app.test", True),
        ("xn--caf-dma.test:443", True),
        ("a%41b.test", True),
        ("127.0.0.1:8080@evil.example", False),
        ("127.0.0.1:8080junk", False),
        ("localhost:8080.evil.com", False),
        ("127.0.0.1:8080, evil.com", False),
        ("127.0.0.1:", False),
        ("user@127.0.0.1", False),
        ("", False),
        ("::1", False),
        ("[::1", False),
        ("[::1]x", False),
        ("[fe80::1%25eth0]", False),
        ("[not-ip]", False),
        ("a b", False),
        ("caf\u00e9.test", False),
        ("host/path", False),
        ("%zz", False),
    ],
)
def test_a_host_is_a_uri_host_and_digits(value: str, valid: bool) -> None:
    assert valid_host(value) is valid


H = b"host"
O = b"origin"  # noqa: E741


@pytest.mark.parametrize(
    ("raw", "target", "status", "check"),
    [
        ([(H, GOOD.encode())], b"/mcp", None, None),
        ([(H, GOOD.encode()), (O, b"http://localhost:5173")], b"/mcp", None, None),
        ([(H, b" 127.0.0.1:8080\t")], b"/mcp", None, None),  # optional white space is not the value
        # Two Host lines, either order: 400 (the one judged cannot be told from the one acted on).
        ([(H, GOOD.encode()), (H, b"evil.example")], b"/mcp", 400, "more than one Host"),
        ([(H, b"evil.example"), (H, GOOD.encode())], b"/mcp", 400, "more than one Host"),
        ([(H, GOOD.encode()), (H, GOOD.encode())], b"/mcp", 400, "more than one Host"),
        # Hosts that are no host[:port]: 400.
        ([(H, b"127.0.0.1:8080@evil.example")], b"/mcp", 400, "not a valid host"),
        ([(H, b"127.0.0.1:8080junk")], b"/mcp", 400, "not a valid host"),
        ([(H, b"localhost:8080.evil.com")], b"/mcp", 400, "not a valid host"),
        ([(H, b"127.0.0.1:8080, evil.com")], b"/mcp", 400, "not a valid host"),
        ([(H, b"")], b"/mcp", 400, "not a valid host"),
        ([(O, b"http://localhost")], b"/mcp", 400, "no Host"),
        # Two Origin lines, either order: 403.
        (
            [(H, GOOD.encode()), (O, b"http://localhost"), (O, b"http://evil.example")],
            b"/mcp",
            403,
            "more than one Origin",
        ),
        (
            [(H, GOOD.encode()), (O, b"http://evil.example"), (O, b"http://localhost")],
            b"/mcp",
            403,
            "more than one Origin",
        ),
        # Absolute form: the target's authority is the Host judged (RFC 9112 section 3.2.2).
        ([(H, GOOD.encode())], b"http://evil.example/mcp", 403, "not an allowed host"),
        ([(H, GOOD.encode())], b"http://evil.example:8080/mcp", 403, "not an allowed host"),
        ([(H, b"evil.example")], b"http://127.0.0.1:8080/mcp", None, None),
        ([(H, GOOD.encode())], b"HTTPS://localhost:8080/mcp?x=1", None, None),
        ([(H, GOOD.encode())], b"http://127.0.0.1:8080@evil.example/mcp", 400, "request target"),
        ([(H, GOOD.encode())], b"http:///mcp", 400, "request target"),
        ([(H, GOOD.encode())], b"ftp://127.0.0.1:8080/mcp", 400, "request target"),
        ([(H, GOOD.encode())], b"127.0.0.1:8080", 400, "request target"),  # authority form is CONNECT's
        ([(H, b"evil.example"), (H, GOOD.encode())], b"http://127.0.0.1:8080/mcp", 400, "more than one Host"),
        # Any other field the front reads that is not a list, twice: 400 naming it (RFC 9110 section 5.3).
        (
            [(H, GOOD.encode()), (b"authorization", b"Bearer a"), (b"authorization", b"Bearer evil")],
            b"/mcp",
            400,
            "more than one Authorization header",
        ),
        (
            [(H, GOOD.encode()), (b"content-type", b"application/json"), (b"content-type", b"text/evil")],
            b"/mcp",
            400,
            "more than one Content-Type header",
        ),
        (
            [(H, GOOD.encode()), (b"content-length", b"2"), (b"content-length", b"2")],
            b"/mcp",
            400,
            "more than one Content-Length header",
        ),
        (
            [(H, GOOD.encode()), (b"mcp-session-id", b"a"), (b"mcp-session-id", b"evil")],
            b"/mcp",
            400,
            "more than one Mcp-Session-Id header",
        ),
        (
            [(H, GOOD.encode()), (b"mcp-protocol-version", b"x"), (b"mcp-protocol-version", b"evil")],
            b"/mcp",
            400,
            "more than one MCP-Protocol-Version header",
        ),
        (
            [(H, GOOD.encode()), (b"mcp-name", b"a"), (b"mcp-name", b"evil")],
            b"/mcp",
            400,
            "more than one Mcp-Name header",
        ),
        # ... and of a list field, or one the front does not read, no refusal.
        (
            [(H, GOOD.encode()), (b"accept", b"application/json"), (b"accept", b"text/event-stream")],
            b"/mcp",
            None,
            None,
        ),
        ([(H, GOOD.encode()), (b"x-evil", b"1"), (b"x-evil", b"2")], b"/mcp", None, None),
        # The allow-list as before, on the one value read.
        ([(H, b"evil.example:8080")], b"/mcp", 403, "not an allowed host"),
        ([(H, GOOD.encode()), (O, b"http://evil.example")], b"/mcp", 403, "not an allowed origin"),
    ],
)
def test_the_one_reading_and_its_verdict(
    raw: list[tuple[bytes, bytes]], target: bytes, status: int | None, check: str | None
) -> None:
    security = Security(HttpConfig(port=8080))
    refusal = security.refusal(read_host_origin(raw, target), None)
    if status is None:
        assert refusal is None
    else:
        assert refusal is not None and refusal[0] == status and check is not None and check in refusal[1], refusal
        routing = any(name in (b"mcp-protocol-version", b"mcp-method", b"mcp-name") for name, _ in raw)
        assert refusal.code == (-32020 if routing else -32600)  # (the 2026-07-28 spec's HEADER_MISMATCH)
        for _, value in raw:  # the message names the check, never a value
            assert b"evil" not in value or "evil" not in refusal[1]


def test_http_1_0_may_leave_host_out_but_the_allow_list_still_wants_one() -> None:
    head = read_host_origin([], b"/mcp", http11=False)
    assert head.problem is None and head.host is None
    refusal = Security(HttpConfig(port=8080)).refusal(head, None)
    assert refusal is not None and refusal[0] == 403
    assert Security(HttpConfig(host="0.0.0.0", port=8080)).refusal(head, None) is None  # no Host check at all


def test_the_host_check_being_off_does_not_let_a_malformed_head_through() -> None:
    """Bound to every interface without --allowed-host, names are not judged; the form still is."""
    security = Security(HttpConfig(host="0.0.0.0", port=8080))
    assert security.refusal(read_host_origin([(H, b"any.example:8080")], b"/mcp"), None) is None
    for raw in ([(H, b"a.example"), (H, b"b.example")], [(H, b"a.example:1x")]):
        refusal = security.refusal(read_host_origin(raw, b"/mcp"), None)
        assert refusal is not None and refusal[0] == 400


@pytest.mark.parametrize(
    ("scope_extra", "path"),
    [
        ({"raw_path": b"/mcp"}, None),  # origin form (both parsers)
        ({"raw_path": b"http://127.0.0.1:8080/mcp"}, "/mcp"),  # h11 hands the whole target on as raw_path
        ({"raw_path": b"/mcp", "extensions": {"mcp_guard.request_target": b"http://127.0.0.1:8080/mcp"}}, "/mcp"),
    ],
)
def test_request_head_reads_the_target_either_parser_gives(scope_extra: dict[str, object], path: str | None) -> None:
    scope = {"type": "http", "http_version": "1.1", "headers": [(H, b"evil.example")], **scope_extra}
    head = request_head(scope)
    assert head.path == path
    assert head.host == ("evil.example" if path is None else "127.0.0.1:8080")


def test_a_list_fields_lines_are_one_value_and_two_traceparents_none() -> None:
    """RFC 9110 section 5.3: ``Accept`` and ``tracestate`` lines join in order; a repeated ``traceparent`` (not a
    list, W3C Trace Context) is read as an invalid one, so the call starts a trace; other fields keep their first."""
    parent = b"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    raw = [
        (b"accept", b"application/json"),
        (b"tracestate", b"a=1"),
        (b"accept", b"text/event-stream"),
        (b"tracestate", b"b=2"),
        (b"traceparent", parent),
        (b"traceparent", parent),
        (b"traceparent", parent),
        (b"x-other", b"first"),
        (b"x-other", b"second"),
    ]
    headers = request_headers({"type": "http", "headers": raw})
    assert headers["accept"] == "application/json, text/event-stream"
    assert headers["tracestate"] == "a=1, b=2"
    assert headers["traceparent"] == ""
    assert headers["x-other"] == "first"
    assert request_headers({"type": "http", "headers": raw[4:5]})["traceparent"] == parent.decode()
