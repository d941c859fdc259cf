"""JSON-RPC 2.0 details the relay needs: strict serialization, ids, and ids of lines that do not parse.

A line that does not parse as a whole (nested beyond the parser's limit, or broken after its
``id``) still deserves an answer for its request id (JSON-RPC 2.0, section 5: the id, or
``null`` when it cannot be determined). :func:`recover_id` finds the top-level ``"id"`` by
scanning, without recursion, so a hostile nesting depth costs time linear in the line.

This module does no I/O.
"""

from __future__ import annotations

import json
import json.encoder
import math
import os
import re
from collections.abc import Callable
from typing import Any, Final

from ..core.json_values import INT_BEYOND_DOUBLE_DIGITS, Inexact, literal_float, literal_int
from ..errors import GuardError
from . import repeated

__all__ = [
    "ANSWER_FAULTS",
    "AS_RECEIVED_MIN",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "MAX_OBJECTS_AS_RECEIVED",
    "METHOD_NOT_FOUND",
    "NO_ID",
    "PARSE_ERROR",
    "Spliced",
    "Uncarriable",
    "dumps",
    "error_response",
    "forwarded_line",
    "id_key",
    "invalid_request_text",
    "loads_as_received",
    "loads_client",
    "loads_upstream",
    "message_fault",
    "recover_id",
    "safe_as_received",
    "valid_id",
    "with_id",
]

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603

NO_ID: Final = object()
"""Returned by :func:`recover_id` when no id can be found."""

_WS = " \t\r\n"
_decoder = json.JSONDecoder()
# Built once: json.dumps/json.loads with keyword arguments construct a new encoder/decoder per call.
_encoder = json.JSONEncoder(separators=(",", ":"), allow_nan=False)
# One rule for both sides (spec decision E1): a literal no double holds keeps its text. The profile
# judges it (``extended`` by its exact value, ``standard``/``strict`` refuse it, keyword ``json``).
_client_decoder = json.JSONDecoder(parse_float=literal_float)
_upstream_decoder = _client_decoder
_decode_client = _client_decoder.decode
_decode_upstream = _upstream_decoder.decode
_raw_client = _client_decoder.raw_decode
_raw_upstream = _upstream_decoder.raw_decode


def _int(text: str) -> int:
    return int(text)


YIELDING_MIN: Final = 1 << 20
"""Characters of a line past which it is parsed by a decoder that returns to the interpreter for every object
and every integer (``_yielding``). The C decoder alone holds the interpreter lock for the whole text: a result
of 1,000,000 objects (26 MB) took 0.44 s in one call on an idle machine, and a parse in a worker thread
(``peer.offload``) held every ``ping`` that long (issue 25 items 1 and 4). The value is the same (a repeated
key keeps its first place and its last value, as ``dict``), and the parse takes about as long."""
_yielding = json.JSONDecoder(parse_float=literal_float, parse_int=_int, object_pairs_hook=repeated.dict_of)
_raw_yielding = _yielding.raw_decode
_decode_yielding = _yielding.decode
# A client's integer beyond the range of a double is an Inexact, as 1e400 is (``json_values.literal_int``, decision
# 12). Only a text holding a run of that many digits can hold one: the others keep the C decoder's own ints.
_client_wide = json.JSONDecoder(parse_float=literal_float, parse_int=literal_int)
_client_yielding = json.JSONDecoder(
    parse_float=literal_float, parse_int=literal_int, object_pairs_hook=repeated.dict_of
)
_LONG_DIGITS: Final = re.compile(rf"[0-9]{{{INT_BEYOND_DOUBLE_DIGITS}}}")
_DIGITS: Final = b"0123456789"


def _may_hold_long_integer(line: bytes | str, text: str) -> bool:
    """Whether a client line may hold an integer literal of 309 digits or more (``json_values.literal_int``).

    A cheap test first: a line of bytes with fewer digits than that in all holds none (``bytes.translate``
    deletes them at C speed, about 0.6 ns a byte); only the others are searched for such a run (``re``,
    about 3 ns a character), so a tools/call pays the search only when it holds many digits.
    """
    if len(text) < INT_BEYOND_DOUBLE_DIGITS:
        return False
    if type(line) is bytes and len(line) - len(line.translate(None, _DIGITS)) < INT_BEYOND_DOUBLE_DIGITS:
        return False
    return _LONG_DIGITS.search(text) is not None


def _c_encoder() -> Callable[[Any], str]:
    """``_encoder.encode`` without building the C encoder anew for every message (as ``JSONEncoder.encode``
    does): the same output; a cycle, which parsed JSON cannot hold, ends in RecursionError instead of
    ValueError. The pure-Python encoder where the C one is missing."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return _encoder.encode
    encode = make(
        None,  # no cycle markers
        _encoder.default,  # raises TypeError: an Inexact takes dumps's slow path
        json.encoder.encode_basestring_ascii,
        None,
        _encoder.key_separator,
        _encoder.item_separator,
        False,  # sort_keys
        False,  # skipkeys
        False,  # allow_nan
    )

    def run(value: Any) -> str:
        return "".join(encode(value, 0))

    return run


_encode = _c_encoder()

# The slow path of dumps: an Inexact number is written as a placeholder string, then the
# placeholder (with a per-process nonce no peer can guess) is replaced by the literal.
_NONCE = os.urandom(8).hex()  # (secrets.token_hex, without its import: hmac, hashlib, random; issue 14)
_PLACEHOLDER = re.compile(rf'"\\u0000mcp-guard-literal-{_NONCE}-(\d+)\\u0000"')


class Uncarriable(GuardError, ValueError):
    """A message holds a number JSON cannot carry exactly (NaN, ±Infinity, an ``Inexact``), or is too deep."""


def dumps(message: Any) -> bytes:
    """Compact, ASCII-only JSON bytes of a message (any string, even a lone surrogate, survives).

    An :class:`~mcp_guard.core.json_values.Inexact` number that kept its literal (parsed by
    :func:`loads_upstream`, or a client literal) is written back as that literal, digit for
    digit: the peer reads the number the sender wrote.

    Raises:
        Uncarriable: the message holds NaN or ±Infinity (which are not JSON), an ``Inexact``
            without its literal, or nests deeper than the encoder goes. Nothing invalid is
            ever written.
    """
    try:
        text = _encode(message)
    except TypeError:
        return _dumps_literals(message)
    except (ValueError, RecursionError) as exc:
        raise Uncarriable(str(type(exc).__name__)) from None
    return (_exact_exponents(text) if "e+" in text else text).encode("ascii")


# A string token (skipped as it is) or a float written with a positive exponent (``repr`` writes
# every double of 1e16 and up that way, and only those may differ from their shortest decimal).
_EXPONENT_FLOAT = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|(\d(?:\.\d+)?e\+\d+)')


def _exact_literal(match: re.Match[str]) -> str:
    shortest = match.group(1)
    if shortest is None:
        return match.group(0)
    digits = str(int(float(shortest)))  # the double's own value: an integer from 2**53 up
    rest = digits[1:].rstrip("0")
    return f"{digits[0]}.{rest}e+{len(digits) - 1}" if rest else f"{digits[0]}e+{len(digits) - 1}"


def _exact_exponents(text: str) -> str:
    """``text`` (compact JSON from the encoder) with every float token of 1e16 and up written as its exact value.

    ``repr`` writes a double as its shortest round-tripping decimal, which from 2**53 up is not
    always its value: ``-9223372036854775808.0`` (-2**63, a double exactly) would go out as
    ``-9.223372036854776e+18``, a different number to a reader that keeps decimals. A client's
    literal is a ``float`` only when the double *is* its value (``literal_float``), so writing the
    double's exact decimal (``-9.223372036854775808e+18``) forwards the number the guard checked;
    a double reader reads the same double as before. ``1e+22`` stays as it is.
    """
    return _EXPONENT_FLOAT.sub(_exact_literal, text)


def _dumps_literals(message: Any) -> bytes:
    """:func:`dumps` for a message holding ``Inexact`` numbers (rare): literals put back by placeholder."""
    literals: list[str] = []

    def placeholder(value: Any) -> str:
        if type(value) is Inexact and value.text:
            literals.append(value.text)
            return f"\x00mcp-guard-literal-{_NONCE}-{len(literals) - 1}\x00"
        raise TypeError(type(value).__name__)

    try:
        text = json.JSONEncoder(separators=(",", ":"), allow_nan=False, default=placeholder).encode(message)
    except (ValueError, TypeError, RecursionError) as exc:
        raise Uncarriable(str(type(exc).__name__)) from None
    if "e+" in text:
        text = _exact_exponents(text)  # before the literals go back: they are the sender's own text
    return _PLACEHOLDER.sub(lambda m: literals[int(m.group(1))], text).encode("ascii")


def loads_client(line: bytes | str) -> Any:
    """Parse a line from the client (its bytes, or its text); a number literal no double holds exactly keeps its text.

    Such a literal (more digits than a double holds, ``1e-400``, or beyond the double range: ``1e400``) becomes
    an ``Inexact`` (``json_values.literal_float``), as in :func:`loads_upstream`; so does an integer beyond that
    range (``json_values.literal_int``: only from the client). Every profile sees it for what it is:
    ``extended`` judges it by its exact value and, when the call is forwarded, :func:`dumps` writes it back
    digit for digit (spec decision E1), but refuses one beyond the range of a double (``1e400``, ``1e-400``:
    ``json_values.in_double_range``, decision 12); ``standard`` and ``strict`` refuse it in arguments (keyword
    ``json``), never rounded. Elsewhere in a message it is relayed as written.

    Raises:
        ValueError: not JSON (including invalid UTF-8).
        RecursionError: nested beyond the parser's limit.
    """
    if isinstance(line, str):
        text = line
    else:
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError:
            line.decode("utf-8-sig")  # raises the error as it always was (its offset counted after a BOM)
            raise
    if text[:1] == "\ufeff":  # MCP is UTF-8; a leading BOM is tolerated (as by the utf-8-sig codec)
        text = text[1:]
    if len(text) >= YIELDING_MIN:
        return repeated.parse_filled(text, _client_yielding.raw_decode, _client_yielding.decode)
    if len(text) >= INT_BEYOND_DOUBLE_DIGITS and _may_hold_long_integer(line, text):  # (no call for a short line)
        return repeated.parse_filled(text, _client_wide.raw_decode, _client_wide.decode)
    return repeated.parse_filled(text, _raw_client, _decode_client)


def loads_upstream(line: bytes | str) -> Any:
    """Parse a line from the upstream (or the relay's own output); number literals keep their value.

    A literal a double cannot hold exactly, or beyond the double range, becomes an
    ``Inexact`` that keeps its text (see ``json_values.literal_float``): :func:`dumps` writes
    it back unchanged, and the schema core does not take it for a double it is not. In a
    message that can carry tool schemas, repeated object keys are noted
    (:func:`mcp_guard.wire.repeated.repeated_key`); the value is the same (the last one wins).
    A leading UTF-8 BOM is tolerated, as on a client's line (:func:`loads_client`).

    Raises:
        ValueError: not JSON (including invalid UTF-8).
        RecursionError: nested beyond the parser's limit.
    """
    text = line.decode("utf-8") if isinstance(line, bytes) else line
    if text[:1] == "\ufeff":  # the client's rule (loads_client): a leading BOM is tolerated, both ways (trial F17)
        text = text[1:]
    if len(text) >= YIELDING_MIN:
        return repeated.decode(text, literal_float, _raw_yielding, _decode_yielding)
    return repeated.decode(text, literal_float, _raw_upstream, _decode_upstream)


AS_RECEIVED_MIN: Final = 1 << 16
"""Lines shorter than this (bytes) are always forwarded re-serialized (:func:`dumps`); see :func:`loads_as_received`."""

MAX_OBJECTS_AS_RECEIVED: Final = 4096
"""A line with more ``{`` than this is re-serialized: finding repeated keys costs a Python call per object."""

# Raw characters that some line readers take for a line break (universal newlines: CR; ``str.splitlines``:
# NEL, LINE SEPARATOR, PARAGRAPH SEPARATOR, which JSON allows raw inside strings), in UTF-8.
_BREAKS: Final = (b"\xc2\x85", b"\xe2\x80\xa8", b"\xe2\x80\xa9")


def safe_as_received(line: bytes | str) -> bool:
    """Whether a parsed ``line`` may go on as received, should the guard forward its value unchanged.

    :func:`dumps` of the parsed value is what the guard forwards by rule: every peer then reads
    what the guard read (ASCII-only, compact, one value per line). The line's own bytes are as
    exact, and spare a big message's re-serialization and its copy, when no reader can take
    them for something else. So this holds only for a line of at least :data:`AS_RECEIVED_MIN`
    bytes that is one object from its first byte to its last (no white space around it, no
    byte-order mark, no batch), with no raw CR anywhere (universal-newline readers, the SDK's
    stdio server among them, break lines there), no raw NEL, U+2028 or U+2029 (``splitlines``
    readers do), and at most :data:`MAX_OBJECTS_AS_RECEIVED` ``{``. Repeated keys, and the
    ``NaN`` and ``Infinity`` Python's parser takes for numbers (:func:`dumps` refuses them), are
    found by :func:`loads_as_received` as it parses. Only byte searches at C speed. ``line`` may
    be the line's text (a ``str``; its length is then counted in characters).
    """
    if isinstance(line, str):
        return _safe_text(line)
    if len(line) < AS_RECEIVED_MIN or line[:1] != b"{" or line[-1:] != b"}":
        return False
    if line.find(b"\r") != -1:  # (not ``in``: see wire.meta.may_hold_guard_keys)
        return False
    if not line.isascii() and any(b in line for b in _BREAKS):
        return False
    return line.count(b"{") <= MAX_OBJECTS_AS_RECEIVED


def _safe_text(text: str) -> bool:
    """:func:`safe_as_received` for a line's text."""
    if len(text) < AS_RECEIVED_MIN or text[:1] != "{" or text[-1:] != "}" or "\r" in text:
        return False
    if not text.isascii() and any(c in text for c in "\x85\u2028\u2029"):
        return False
    return text.count("{") <= MAX_OBJECTS_AS_RECEIVED


def loads_as_received(line: bytes | str, *, upstream: bool = False) -> tuple[Any, bool]:
    """Parse a line as :func:`loads_client` (or, with ``upstream``, :func:`loads_upstream`) does, and say
    whether the line itself may be forwarded in place of :func:`dumps` of its value, should the value go
    on unchanged: :func:`safe_as_received` holds, no object in it repeats a key (a reader that keeps the
    first value would read another message; ``repeated.parse_unique``), it holds no ``NaN``, ``Infinity``
    or ``-Infinity`` (not JSON: :func:`dumps` refuses them, and so the message), and, from the upstream,
    it is no text that can carry tool schemas (``repeated.LISTING_MARK``: those are parsed noting
    repeated keys).

    Returns:
        ``(value, as_received)``; the value is the one the other two functions give.

    Raises:
        ValueError: not JSON (including invalid UTF-8).
        RecursionError: nested beyond the parser's limit.
    """
    if not safe_as_received(line):
        return (loads_upstream(line) if upstream else loads_client(line)), False
    text = line if isinstance(line, str) else line.decode("utf-8")
    if upstream and repeated.LISTING_MARK in text:
        return loads_upstream(text), False
    constants = False

    def constant(name: str) -> float:
        nonlocal constants
        constants = True
        return float(name)  # as Python's parser has it: nan, inf, -inf

    value, unique = repeated.parse_unique(text, literal_float, constant, None if upstream else literal_int)
    return value, unique and not constants


def id_key(request_id: Any) -> tuple[bool, Any]:
    """A map key for a JSON-RPC id: ``"1"`` and ``1`` differ, ``1`` and ``1.0`` do not.

    An id that is not hashable (an array or object, which no peer should send) gets its
    ``repr``: it matches nothing the guard sent, and it cannot crash a lookup.
    """
    t = type(request_id)
    return (t is str, request_id if t is not list and t is not dict else repr(request_id))


_PLAIN_ID = re.compile(r"-?\d{1,18}|[A-Za-z0-9_.:-]{1,200}")
"""An id whose JSON text :func:`with_id` looks for: an integer, or a string of these characters (no escapes)."""

_SPACE = r"[ \t\r\n]*"
_ID_TOKEN = r'-?\d+|"[A-Za-z0-9_.:-]+"'
_VERSION = rf'"jsonrpc"{_SPACE}:{_SPACE}"2\.0"{_SPACE},{_SPACE}'
_FIRST = rf'\{{{_SPACE}(?:{_VERSION})?"id"{_SPACE}:{_SPACE}(?P<id>{_ID_TOKEN}){_SPACE},'
_LAST = rf',{_SPACE}"id"{_SPACE}:{_SPACE}(?P<id>{_ID_TOKEN}){_SPACE}\}}{_SPACE}\Z'
_FIRST_STR, _LAST_STR = re.compile(_FIRST), re.compile(_LAST)
_FIRST_BYTES, _LAST_BYTES = re.compile(_FIRST.encode()), re.compile(_LAST.encode())
"""The top-level id written first (or second, after the version), and written last; for text and bytes."""
_TAIL = 512
"""How far from its end the last member of a line is looked for (characters)."""


class Spliced:
    """A big text line with its id replaced, not copied: ``text[:start]``, then ``new``, then ``text[end:]``.

    What :func:`with_id` gives for a ``str`` (a big line, ``pipes.LineHandler``): a line stream that
    takes it (``pipes``) encodes it a slice at a time as the fd takes it; ``str()`` makes the whole text.
    """

    __slots__ = ("end", "new", "start", "text")

    def __init__(self, text: str, start: int, end: int, new: str) -> None:
        self.text, self.start, self.end, self.new = text, start, end, new

    def segments(self) -> list[tuple[str, int, int]]:
        """The line as ``(text, from, to)`` pieces, in order."""
        return [(self.text, 0, self.start), (self.new, 0, len(self.new)), (self.text, self.end, len(self.text))]

    def __str__(self) -> str:
        return "".join((self.text[: self.start], self.new, self.text[self.end :]))


def with_id(data: bytes | str, old: Any, new: Any) -> bytes | Spliced | None:
    """``data`` (the text of one JSON-RPC object whose top-level ``id`` is ``old``: a line as received,
    no key repeated, see :func:`loads_as_received`; or what :func:`dumps` wrote) with ``new`` in place
    of ``old``, without parsing or serializing the rest (bytes, in one copy; a ``str``, as a
    :class:`Spliced`, in none); None when the id is not written where this can tell it is the
    top-level member (the caller then serializes).

    The id is found only as the first member (``{"id":OLD,``), the second after the version
    (``{"jsonrpc":"2.0","id":OLD,``: the SDKs of Python, Go, Java) or the last
    (``,"id":OLD}``: the TypeScript SDK), white space allowed between the tokens, with ``OLD`` an
    integer or a plain string (:data:`_PLAIN_ID`) written as its value is: at those places the
    member is the top-level one (the first ``{`` and the last ``}`` are the object's own), and there
    is no other (no key repeats). Used to give a forwarded request the guard's own upstream id, and
    an answer its client id back (``peer.inflight``), without a re-serialization of a big line.
    """
    t = type(old)
    if t is str:
        if _PLAIN_ID.fullmatch(old) is None:
            return None
        old_text = f'"{old}"'
    elif t is int and _PLAIN_ID.fullmatch(str(old)) is not None:
        old_text = str(old)
    else:
        return None
    if type(new) is int:
        new_text = str(new)
    elif type(new) is str and _PLAIN_ID.fullmatch(new) is not None:
        new_text = f'"{new}"'  # (no character of a plain id is escaped in JSON)
    else:
        new_text = dumps(new).decode("ascii")
    if isinstance(data, str):
        found = _FIRST_STR.match(data) or _LAST_STR.search(data, max(0, len(data) - _TAIL))
        if found is None or found.group("id") != old_text:
            return None
        return Spliced(data, found.start("id"), found.end("id"), new_text)
    hit = _FIRST_BYTES.match(data) or _LAST_BYTES.search(data, max(0, len(data) - _TAIL))
    if hit is None or hit.group("id") != old_text.encode():
        return None
    return b"".join((data[: hit.start("id")], new_text.encode(), memoryview(data)[hit.end("id") :]))  # one copy


def forwarded_line(line: bytes | str, message: Any, as_received: bool, new_id: Any) -> bytes | str | Spliced:
    """The line that forwards ``message`` (parsed from ``line`` by :func:`loads_as_received`, which said
    ``as_received``) unchanged but for its id: ``new_id`` in place of its ``id`` (None: as it is, not a
    request). ``line`` itself when :func:`loads_as_received` allows it (:func:`with_id` replacing the id),
    else :func:`dumps` of the message (under ``new_id``).

    Raises:
        Uncarriable: as :func:`dumps`.
    """
    if as_received:
        data = line if new_id is None else with_id(line, message["id"], new_id)
        if data is not None:
            return data
    return dumps(message if new_id is None else {**message, "id": new_id})


def valid_id(request_id: Any) -> bool:
    """Whether a request id is a JSON-RPC id MCP allows: a string or an integer (never a boolean)."""
    t = type(request_id)
    return t is str or t is int or (t is float and math.isfinite(request_id) and request_id.is_integer())


def _jsonrpc_id(value: Any) -> bool:
    """Whether ``value`` is an id JSON-RPC 2.0 allows (section 4: a string, a number or null; never a boolean)."""
    t = type(value)
    return t is str or t is int or value is None or (isinstance(value, float) and t is not bool)


def message_fault(message: dict[str, Any]) -> str | None:
    """What keeps an object whose ``jsonrpc`` is ``"2.0"`` from being a JSON-RPC 2.0 message, or None when it is one.

    JSON-RPC 2.0 sections 4 and 5: a request or notification has a string ``method`` (a request's
    ``id`` a string, a number or null); a response has no ``method``, an ``id`` of those kinds (null:
    the server could not tell which request it answers, section 5: a JSON-RPC message, kept) and
    exactly one of ``result`` and ``error``, the error an object with an integer ``code`` and a string
    ``message``. ``params`` is not looked at (a ``null`` one, which JSON-RPC does not allow either, is
    seen on notifications a client needs). The fault is a clause for the log (never a value):
    :data:`ANSWER_FAULTS` are those of a response that names a request by its id.
    """
    if "method" in message:
        if type(message["method"]) is not str:
            return "its method is not a string"
        if "id" in message and not _jsonrpc_id(message["id"]):
            return "its id is not a string, a number or null"
        return None
    if "id" not in message:
        return "it has neither a method nor an id"
    if not _jsonrpc_id(message["id"]):
        return "its id is not a string, a number or null"
    if "result" in message:
        return _BOTH if "error" in message else None
    if "error" not in message:
        return _NEITHER
    error = message["error"]
    code = error.get("code") if type(error) is dict else None
    if type(error) is not dict or type(error.get("message")) is not str or not _integer(code):
        return _BAD_ERROR
    return None


def _integer(value: Any) -> bool:
    t = type(value)
    return t is int or (t is float and value.is_integer())


_BOTH: Final = "it has both a result and an error"
_NEITHER: Final = "it has neither a result nor an error"
_BAD_ERROR: Final = "its error is not an object with an integer code and a string message"
ANSWER_FAULTS: Final = frozenset({_BOTH, _NEITHER, _BAD_ERROR})
"""The faults of :func:`message_fault` of a response with a valid id: it answers a request, wrongly (the guard
answers that request with an error in its place: ``peer.connection``)."""


def invalid_request_text(message: Any, *, batches: bool = True) -> str:
    """The message of the JSON-RPC -32600 answer to a parsed value that is not a JSON-RPC message: what is wrong.

    Args:
        message: the parsed value (never quoted: it may hold secrets; only its shape is named).
        batches: whether the receiver takes batches (an array); if not, an array is refused as one.
    """
    if type(message) is list:
        if not batches:
            return "Invalid Request: JSON-RPC batches (arrays) are not supported; send one message object per line"
        return "Invalid Request: an empty batch" if not message else "Invalid Request: a batch element is not an object"
    if type(message) is not dict:
        shape = {str: "a string", int: "a number", float: "a number", bool: "a boolean"}.get(type(message), "null")
        return f"Invalid Request: a JSON-RPC message is an object, not {shape}"
    if message.get("jsonrpc") != "2.0":
        return 'Invalid Request: `jsonrpc` must be "2.0" (the only JSON-RPC version MCP speaks)'
    if "method" in message and type(message["method"]) is not str:
        return "Invalid Request: `method` must be a string"
    if "id" in message and not valid_id(message["id"]):
        return "Invalid Request: a request id must be a string or an integer"
    return "Invalid Request"


def error_response(request_id: Any, code: int, message: str) -> dict[str, Any]:
    """A JSON-RPC 2.0 error response object."""
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _skip_ws(text: str, i: int) -> int:
    n = len(text)
    while i < n and text[i] in _WS:
        i += 1
    return i


def _skip_value(text: str, i: int) -> int:
    """Index just after the JSON value starting at ``i`` (iterative; raises ValueError when broken)."""
    if i >= len(text):
        raise ValueError("end of input")
    if text[i] not in "{[":
        _value, end = _decoder.raw_decode(text, i)  # a scalar: no nesting
        return int(end)
    closers: list[str] = []  # the brackets still open, as the characters that close them
    n = len(text)
    while i < n:
        c = text[i]
        if c == '"':
            _s, i = _decoder.raw_decode(text, i)  # a string, escapes and all
            continue
        if c == "{":
            closers.append("}")
        elif c == "[":
            closers.append("]")
        elif c in "}]":
            if not closers or closers.pop() != c:
                raise ValueError("mismatched bracket")
            if not closers:
                return i + 1
        i += 1
    raise ValueError("unterminated value")


def recover_id(line: bytes) -> Any:
    """The top-level ``"id"`` of a JSON object line that failed to parse as a whole, else :data:`NO_ID`.

    Only a valid id (see :func:`valid_id`) or ``null`` is returned.
    """
    text = line.decode("utf-8", "replace")
    try:
        i = _skip_ws(text, 0)
        if i >= len(text) or text[i] != "{":
            return NO_ID
        i += 1
        while True:
            i = _skip_ws(text, i)
            if i >= len(text) or text[i] != '"':
                return NO_ID
            key, i = _decoder.raw_decode(text, i)
            i = _skip_ws(text, i)
            if i >= len(text) or text[i] != ":":
                return NO_ID
            i = _skip_ws(text, i + 1)
            if key == "id":
                if text[i : i + 1] in ("{", "["):
                    return NO_ID
                value, end = _decoder.raw_decode(text, i)
                end = _skip_ws(text, end)
                if end < len(text) and text[end] not in ",}":
                    return NO_ID  # the value goes on past what was read (``2**60``): not an id to trust
                return value if value is None or valid_id(value) else NO_ID
            i = _skip_ws(text, _skip_value(text, i))
            if i < len(text) and text[i] == ",":
                i += 1
                continue
            return NO_ID
    except (ValueError, IndexError, RecursionError):
        return NO_ID
