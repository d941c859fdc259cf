"""Repeated object keys in an upstream's tool schemas: found while parsing, asked for by schema.

RFC 8259 leaves a repeated key's meaning to the parser: Python keeps the last value, other
parsers the first, some refuse the text. A tool schema with one is ambiguous, so the guard
cannot know which schema the server means: such a tool is unsupported, with the pointer of
the object and the key (``mcp-guard schema FILE`` refuses such a file for the same reason).
Arguments are another matter: their duplicate keys are judged as parsed (the last value), and
exactly that value is forwarded.

Finding them costs a Python call per JSON object (``object_pairs_hook``), about twice the
plain parse of a listing, so :func:`decode` pays it only for texts that can hold a tool
listing (they contain ``"inputSchema"``); every other upstream message is parsed at C speed.
The objects found are remembered by identity (:func:`repeated_key` answers for a parsed
``inputSchema`` object; nothing is added to the values themselves, which stay plain JSON) in a
bounded table: :data:`MAX_REMEMBERED` schemas, the oldest forgotten first.

This module does no I/O.
"""

from __future__ import annotations

import gc
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Final

from ..core.json_values import pointer

__all__ = [
    "LISTING_MARK",
    "MAX_REMEMBERED",
    "collector_paused",
    "decode",
    "parse_filled",
    "parse_unique",
    "repeated_key",
    "repeated_key_text",
]

LISTING_MARK: Final = '"inputSchema"'
"""Text that a message carrying tool schemas contains (the check is a substring search)."""

MAX_REMEMBERED: Final = 65_536
"""Schemas with a repeated key remembered at once (across sessions of one process); the oldest go first."""

_remembered: dict[int, tuple[Any, str, str]] = {}
"""``id(inputSchema)`` → (the schema, kept alive so its id cannot be reused; pointer; the key)."""


def decode(
    text: str, parse_float: Callable[[str], Any], raw: Callable[[str], tuple[Any, int]], whole: Callable[[str], Any]
) -> Any:
    """Parse ``text`` as ``whole`` does; for a text holding :data:`LISTING_MARK`, note repeated keys.

    Args:
        text: one JSON text.
        parse_float: the ``parse_float`` hook of the decoder in use (number literals keep their value).
        raw: that decoder's ``raw_decode`` (the fast path when the value fills the text).
        whole: that decoder's ``decode`` (white space around the value, and every error).

    Returns:
        The value, as ``whole`` returns it (a repeated key keeps its last value).

    Raises:
        ValueError, RecursionError: as ``whole``.
    """
    if LISTING_MARK not in text:
        return parse_filled(text, raw, whole)
    found: dict[int, str] = {}

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        value = dict_of(items)
        if len(value) != len(items):
            seen: set[str] = set()
            for key, _ in items:
                if key in seen:
                    found[id(value)] = key
                    break
                seen.add(key)
        return value

    decoder = json.JSONDecoder(parse_float=parse_float, object_pairs_hook=pairs)
    with collector_paused():
        value = parse_filled(text, decoder.raw_decode, decoder.decode)
    if found:
        _remember(value, found)
    return value


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused for a block that builds a big value of JSON (a tool listing's
    parse, its annotation: ``calls.tool_table``), restored as it was on the way out, errors included.

    Parsed JSON holds no reference cycles, so the collector has nothing to find in it; but it runs
    every 700 new containers, and its older generations walk every live one: a 10,000-tool listing
    makes some 600,000. Paused, handling such a listing took 1.66x ``json.loads`` of it instead of
    2.77x (``benchmarks/listing_parse.py``, issue 14 item 5). The block is synchronous (no task
    switch inside it); garbage it makes is collected by the next pass after it. Nested pauses keep
    the collector paused until the outermost ends, in any thread.
    """
    global _pauses, _was_enabled
    with _pause_lock:  # pauses may overlap across threads (``peer.offload``): the last one out restores
        if not _pauses:
            _was_enabled = gc.isenabled()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _pause_lock:
            _pauses -= 1
            if not _pauses and _was_enabled:
                gc.enable()


_pause_lock = threading.Lock()
_pauses = 0
_was_enabled = False


def parse_unique(
    text: str,
    parse_float: Callable[[str], Any],
    parse_constant: Callable[[str], Any],
    parse_int: Callable[[str], Any] | None = None,
) -> tuple[Any, bool]:
    """Parse ``text`` (one JSON value) as the decoders above do, and say whether no object in it repeats a key.

    The value is the same as :func:`decode` gives (a repeated key keeps its last value). The relay
    forwards a big message's own bytes only when no key stands twice: a reader that keeps the first
    value would otherwise read another message than the guard judged (``jsonrpc.loads_as_received``).
    Costs a Python call per JSON object, so it is for texts known to hold few. ``parse_float``,
    ``parse_constant`` and ``parse_int`` (default ``int``) are the decoder's hooks (``json.JSONDecoder``).

    Raises:
        ValueError, RecursionError: not one JSON value, or nested beyond the parser's limit.
    """
    unique = True

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        nonlocal unique
        value = dict_of(items)
        if len(value) != len(items):
            unique = False
        return value

    decoder = json.JSONDecoder(
        parse_float=parse_float,
        parse_int=_int if parse_int is None else parse_int,
        parse_constant=parse_constant,
        object_pairs_hook=pairs,
    )
    value = parse_filled(text, decoder.raw_decode, decoder.decode)
    return value, unique


_PAIRS_AT_ONCE: Final = 4096
"""Members put into a parsed object by one C call (:func:`dict_of`)."""


def dict_of(items: list[tuple[str, Any]]) -> dict[str, Any]:
    """``dict(items)`` (a repeated key keeps its first place and its last value), built :data:`_PAIRS_AT_ONCE`
    members at a time: a parse in a worker thread (``peer.offload``) then lets the interpreter lock go
    between two pieces of an object of 1,000,000 members, not only after it."""
    if len(items) <= _PAIRS_AT_ONCE:
        return dict(items)
    value: dict[str, Any] = {}
    for start in range(0, len(items), _PAIRS_AT_ONCE):
        value.update(items[start : start + _PAIRS_AT_ONCE])
    return value


def _int(text: str) -> int:
    """``int`` as a Python hook of the decoder: every integer parsed returns to the interpreter, which can
    then let its lock go (a worker thread's parse of a line of many numbers, ``peer.offload``)."""
    return int(text)


def parse_filled(text: str, raw: Callable[[str], tuple[Any, int]], whole: Callable[[str], Any]) -> Any:
    """``whole(text)``, by way of ``raw`` when the value fills the text (the usual line): the same value,
    without the two white-space regexes of ``JSONDecoder.decode``. White space around the value, and
    every error, take ``whole``, which raises as it always did."""
    try:
        value, end = raw(text)
    except json.JSONDecodeError:
        return whole(text)
    if end != len(text):
        return whole(text)
    return value


def _remember(value: Any, found: dict[int, str]) -> None:
    """Note, for every tool of every ``tools`` list in ``value``, the first repeated key in its schema."""
    for message in value if type(value) is list else [value]:
        result = message.get("result") if type(message) is dict else None
        tools = result.get("tools") if type(result) is dict else None
        if type(tools) is not list:
            continue
        for tool in tools:
            if type(tool) is not dict or type(tool.get("inputSchema")) not in (dict, list):
                continue
            schema = tool["inputSchema"]
            # The tool's own object (``inputSchema`` itself, or ``name``, twice), else within the schema.
            where = ("", found[id(tool)]) if id(tool) in found else _first_repeated(schema, found)
            if where is not None:
                if len(_remembered) >= MAX_REMEMBERED:
                    del _remembered[next(iter(_remembered))]
                _remembered[id(schema)] = (schema, *where)


def _first_repeated(schema: Any, found: dict[int, str]) -> tuple[str, str] | None:
    """``(pointer, key)`` of the first object (document order) under ``schema`` with a repeated key. Iterative."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(schema, ())]
    while stack:
        current, path = stack.pop()
        if type(current) is dict:
            if id(current) in found:
                return pointer(path), found[id(current)]
            stack.extend((item, (*path, k)) for k, item in reversed(current.items()))
        elif type(current) is list:
            stack.extend((item, (*path, i)) for i, item in reversed(list(enumerate(current))))
    return None


def repeated_key(schema: Any) -> tuple[str, str] | None:
    """``(pointer, key)`` when ``schema`` (a tool's parsed ``inputSchema``, this very object) had a repeated key.

    ``pointer`` is the JSON Pointer of the object within the schema (``""``: the schema itself,
    or the tool's own object repeated a key such as ``inputSchema``); ``key`` is the key that
    stands twice. None for a schema parsed without one, or not parsed by :func:`decode`.
    """
    entry = _remembered.get(id(schema))
    if entry is None or entry[0] is not schema:
        return None
    return entry[1], entry[2]


def repeated_key_text(where: str, key: str) -> str:
    """The message of a tool refused for a repeated key (its ``ToolIssue``): which key, at which object.

    Names the key (a schema's key: a keyword or a property name, never an argument value), escaped
    as a JSON string and cut at 64 characters.
    """
    shown = json.dumps(key[:64]) + ("…" if len(key) > 64 else "")
    at = f"the object at {where}" if where else "the schema (or the tool's own object)"
    return (
        f"{at} repeats the key {shown}: JSON parsers may keep either value, so the guard cannot know which "
        "schema the server means, and refuses calls to this tool (the same rule as `mcp-guard schema FILE`)"
    )
