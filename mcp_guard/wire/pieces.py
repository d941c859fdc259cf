"""A big message written as JSON in bounded pieces, for a worker thread that must let the event loop run.

:func:`~mcp_guard.wire.jsonrpc.dumps` writes a message with one call into Python's C encoder,
which holds the interpreter lock until the whole text is made: for a 30 MB tool listing (one
schema of 1,000,000 properties, issue 25 item 1) that is seconds on a loaded machine, and a
worker thread doing it stalls the event loop as surely as the loop doing it itself.
:func:`dumps_in_pieces` writes the same bytes with many calls, none over :data:`PIECE` values
(JSON nodes, counted as a tree): a container of more is written member by member (consecutive
small members together, one encoder call per group), so between two calls the lock can pass to
the loop. Compact JSON is compositional (``{`` + members joined by ``,`` + ``}``), so the pieces
join to exactly what ``dumps`` writes, and fail as it fails (:class:`~mcp_guard.wire.jsonrpc.Uncarriable`).

Freeing such a value is one C call too (a dict's deallocation frees its members, and theirs):
:func:`free_in_pieces` takes apart, a member at a time, the big containers no one else holds.

This module does no I/O.
"""

from __future__ import annotations

import sys
from typing import Any, Final

from .jsonrpc import dumps

__all__ = ["PIECE", "count_nodes", "dumps_in_pieces", "free_in_pieces"]

PIECE: Final = 4096
"""JSON values (nodes) written by one call into the encoder, at most (a long string counts as one)."""


def count_nodes(value: Any, limit: int) -> int:
    """How many nodes ``value`` holds as a tree, counted up to ``limit + 1`` (then the count stops, so the
    cost is bounded by ``limit`` and the length of the containers met)."""
    count = 0
    stack = [value]
    while stack:
        current = stack.pop()
        count += 1
        if count > limit:
            return count
        kind = type(current)
        if kind is dict:
            if len(current) > limit:
                return limit + 1
            stack.extend(current.values())
        elif kind is list:
            if len(current) > limit:
                return limit + 1
            stack.extend(current)
    return count


class _Raw(bytes):
    """Bytes already written (a bracket, a key and its colon, a comma, a group of members)."""


def dumps_in_pieces(message: Any, *, piece: int = PIECE) -> bytes:
    """``dumps(message)``, the same bytes, made by encoder calls of at most ``piece`` nodes each.

    Raises:
        Uncarriable: as ``dumps`` (NaN or ±Infinity, an ``Inexact`` without its literal, too deep).
    """
    if count_nodes(message, piece) <= piece:
        return dumps(message)
    out: list[bytes] = []
    todo: list[Any] = [message]  # values to write, and _Raw bytes, last first
    while todo:
        item = todo.pop()
        if type(item) is _Raw:
            out.append(item)
            continue
        if type(item) not in (dict, list) or count_nodes(item, piece) <= piece:
            out.append(dumps(item))
            continue
        todo.extend(reversed(_members(item, piece)))
    return b"".join(out)


def _members(container: dict[str, Any] | list[Any], piece: int) -> list[Any]:
    """A big container as what to write in order: its brackets and commas, groups of small members
    (each one encoder call) as :class:`_Raw`, and each big member's value (written in turn)."""
    is_dict = type(container) is dict
    items: list[tuple[Any, Any]] = list(container.items()) if is_dict else [(None, v) for v in container]  # type: ignore[union-attr]
    parts: list[Any] = [_Raw(b"{" if is_dict else b"[")]
    group: list[tuple[Any, Any]] = []
    weight = 0

    def flush() -> None:
        nonlocal weight
        if group:
            text = dumps(dict(group) if is_dict else [v for _, v in group])
            if len(parts) > 1:
                parts.append(_Raw(b","))
            parts.append(_Raw(text[1:-1]))
            group.clear()
        weight = 0

    for key, value in items:
        size = count_nodes(value, piece)
        if size > piece:
            flush()
            if len(parts) > 1:
                parts.append(_Raw(b","))
            if is_dict:
                parts.append(_Raw(dumps(key) + b":"))
            parts.append(value)
            continue
        if weight + size > piece:
            flush()
        group.append((key, value))
        weight += size
    flush()
    parts.append(_Raw(b"}" if is_dict else b"]"))
    return parts


def free_in_pieces(holder: list[Any]) -> None:
    """Empty ``holder`` (a list that holds the last references to big values), freeing them a piece at a time.

    A container of more than :data:`PIECE` nodes that nothing but this walk references is taken
    apart member by member (each member freed, or taken apart in turn), so no single deallocation
    holds the interpreter lock for long; a container anyone else holds is only let go of. Values
    are never changed while they can be seen: a container is taken apart only when its one
    reference is this walk's.
    """
    stack = holder[::-1]
    holder.clear()
    while stack:
        current = stack.pop()
        # References: ``stack`` had it, ``current`` and getrefcount's argument have it (3 with none other).
        if type(current) not in (dict, list) or sys.getrefcount(current) > 2 or count_nodes(current, PIECE) <= PIECE:
            continue  # (freed here, at once: small, or not ours)
        if type(current) is dict:
            while current:
                stack.append(current.popitem()[1])
                _free_top(stack)
        else:
            while current:
                stack.append(current.pop())
                _free_top(stack)


def _free_top(stack: list[Any]) -> None:
    """Free the value on top of ``stack`` now when it is small (a big one stays, to be taken apart)."""
    top = stack[-1]
    if type(top) not in (dict, list) or count_nodes(top, PIECE) <= PIECE:
        del top
        stack.pop()
