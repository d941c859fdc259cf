"""``jsonrpc.with_id``: a line's top-level id replaced in its text, the rest byte for byte (issue 25 item 5:
every forwarded request goes upstream under an id of the guard's own, and big lines keep going as received)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from mcp_guard.wire.jsonrpc import Spliced, with_id

ids = st.integers(-(10**12), 10**12) | st.text(alphabet="abcXYZ019_.:-", min_size=1, max_size=20)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8,
)
members = st.dictionaries(st.text(max_size=6).filter(lambda k: k not in ("id", "jsonrpc")), json_values, max_size=4)


@given(
    members,
    ids,
    ids,
    st.sampled_from(["first", "second", "last", "inside"]),
    st.sampled_from([(",", ":"), (", ", ": "), (" ,", " : ")]),
    st.sampled_from([bytes, str]),
)
def test_only_the_top_level_id_changes(
    rest: dict[str, Any], old: Any, new: Any, place: str, separators: tuple[str, str], kind: type
) -> None:
    """Oracle: the parsed result is the message with ``new`` as its id; where the id is written first,
    second after the version, or last, it is always found."""
    items = list(rest.items())
    if place == "first":
        ordered = [("id", old), ("jsonrpc", "2.0"), *items]
    elif place == "second":
        ordered = [("jsonrpc", "2.0"), ("id", old), *items]
    elif place == "last":
        ordered = [*items, ("jsonrpc", "2.0"), ("id", old)]
    else:  # nested too: an inner "id" equal to the old one must stay
        ordered = [("jsonrpc", "2.0"), ("x", {"id": old}), ("id", old), ("y", [{"id": old}])]
    message = dict(ordered)
    text = json.dumps(message, separators=separators)
    line: bytes | str = text.encode() if kind is bytes else text
    out = with_id(line, old, new)
    if place in ("first", "second", "last"):
        assert out is not None
    if out is not None:
        assert type(out) is (bytes if kind is bytes else Spliced)  # text is spliced, not copied
        whole = str(out) if isinstance(out, Spliced) else out
        assert json.loads(whole) == {**message, "id": new}
        assert "".join(t[a:b] for t, a, b in out.segments()) == whole if isinstance(out, Spliced) else True
        if place != "inside":
            assert len(whole) - len(line) == len(json.dumps(new)) - len(json.dumps(old))


def test_ids_it_does_not_look_for_and_ids_elsewhere_are_left_to_the_caller() -> None:
    assert with_id(b'{"jsonrpc":"2.0","id":"a\\u0062","method":"m"}', "ab", 1) is None  # escaped: not plain
    assert with_id(b'{"jsonrpc":"2.0","id":1.0,"method":"m"}', 1, 2) is None  # written as a float
    assert with_id(b'{"a":{"b":1,"id":7}}', 7, 8) is None  # the last "id" is not the object's own
    assert with_id(b'{"jsonrpc":"2.0","id":17,"m":1}', 1, 2) is None  # another id
    assert with_id(b'{"jsonrpc":"2.0","id":true}', True, 2) is None  # not a JSON-RPC id
