"""``wire.pieces``: a big value written, and freed, in bounded pieces (issue 25 item 1).

The oracle is ``jsonrpc.dumps``: the pieces join to its very bytes, for every piece size; and
freeing takes apart only what no one else holds.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_guard.core.json_values import literal_float
from mcp_guard.wire.jsonrpc import Uncarriable, dumps
from mcp_guard.wire.pieces import count_nodes, dumps_in_pieces, free_in_pieces
from mcp_guard.wire.repeated import dict_of

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=5),
    st.just(literal_float("1e400")),  # an Inexact literal: dumps's slow path, in a piece
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=3), inner, max_size=6),
    max_leaves=60,
)


@settings(max_examples=300, deadline=None)
@given(value=values, piece=st.integers(min_value=1, max_value=8))
def test_the_pieces_join_to_what_dumps_writes(value: Any, piece: int) -> None:
    assert dumps_in_pieces(value, piece=piece) == dumps(value)


def test_a_big_listing_is_written_by_many_bounded_calls() -> None:
    properties = {f"p{i}": {"type": "string"} for i in range(20_000)}
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"tools": [{"name": "big", "inputSchema": {"properties": properties}}]},
    }
    assert dumps_in_pieces(message, piece=100) == dumps(message)


def test_a_value_json_cannot_carry_fails_as_dumps_does() -> None:
    with pytest.raises(Uncarriable):
        dumps_in_pieces([[1] * 10, [float("nan")]], piece=3)


def test_count_nodes_stops_past_its_limit() -> None:
    assert count_nodes({"a": [1, 2], "b": {}}, 100) == 5
    assert count_nodes([0] * 1000, 10) == 11


def test_freeing_takes_apart_only_what_no_one_else_holds() -> None:
    shared = {f"k{i}": [i] for i in range(10_000)}
    kept = [list(range(10)) for _ in range(5000)]
    value = {"shared": shared, "own": {f"o{i}": {"x": i} for i in range(10_000)}, "kept": kept}
    holder = [value]
    del value
    free_in_pieces(holder)
    assert holder == []
    assert len(shared) == 10_000 and shared["k5"] == [5]
    assert len(kept) == 5000 and kept[-1] == list(range(10))


@settings(max_examples=50, deadline=None)
@given(keys=st.lists(st.integers(min_value=0, max_value=6000), max_size=12_000))
def test_a_parsed_object_built_in_pieces_is_the_dict_of_its_members(keys: list[int]) -> None:
    items = [(f"k{k}", i) for i, k in enumerate(keys)]
    built = dict_of(items)
    assert built == dict(items) and list(built) == list(dict(items))  # the last value, in the first place
