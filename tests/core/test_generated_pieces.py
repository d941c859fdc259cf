"""A validator of many branches compiles in bounded pieces, each shape once (issue 25 items 1 and 4).

Python's ``compile()`` is one call that holds the interpreter lock: the validator of an ``anyOf`` of
1,000 branches under ``unevaluatedProperties`` was 2.3 MB of source, compiled in one call (0.6 s on an
idle machine, seconds under load), and every ``ping`` waited for it, even when the call was judged in
the worker thread. Now a function that differs from one generated before only in its generated names
(its constants, the functions it calls) is that one's code with its own names
(``writer.ModuleWriter.load``), and what is compiled goes in pieces of at most ``CHUNK_CHARS``. The
copies must judge by their own constants: the oracle (``jsonschema``) says so.
"""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from mcp_guard import compile
from mcp_guard.core.extended import writer

BRANCHES = [{"properties": {f"a{i}": {"type": "string"}}} for i in range(1000)]


@pytest.fixture
def pieces(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The length of each source text the generated module's writer gives ``compile()``."""
    sizes: list[int] = []

    def counting(source: str, *args: Any, **kwargs: Any) -> Any:
        sizes.append(len(source))
        return compile_builtin(source, *args, **kwargs)

    compile_builtin = __builtins__["compile"] if isinstance(__builtins__, dict) else __builtins__.compile
    monkeypatch.setattr(writer, "compile", counting, raising=False)
    return sizes


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "anyOf": BRANCHES, "unevaluatedProperties": False},
        {"type": "object", "oneOf": BRANCHES},
        {"type": "object", "allOf": BRANCHES[:50]},
    ],
    ids=["anyOf-unevaluated", "oneOf", "allOf"],
)
def test_many_branches_compile_in_small_pieces_each_shape_once(pieces: list[int], schema: dict[str, Any]) -> None:
    compiled = compile(schema)
    assert compiled.check({"a7": "x"}).ok is (schema.get("oneOf") is None)  # (oneOf: every other branch passes too)
    assert pieces, "the validator was generated"
    # (one function may pass the mark: the root's, which names each of the 1,000 branches once, is 50,000 characters)
    assert max(pieces) <= 2 * writer.CHUNK_CHARS, max(pieces)
    assert sum(pieces) < 100_000, sum(pieces)  # the branches' common shape is compiled once, not 1,000 times


def test_branches_that_differ_only_in_constants_each_judge_by_their_own() -> None:
    branches = [
        {
            "properties": {f"k{i}": {"type": "integer", "minimum": i, "maximum": 2 * i}, "tag": {"const": f"t{i}"}},
            "required": ["tag", f"k{i}"],
        }
        for i in range(40)
    ]
    schema = {"type": "object", "anyOf": branches, "unevaluatedProperties": False}
    compiled = compile(schema)
    oracle = jsonschema.Draft202012Validator(schema)
    for i in range(0, 40, 3):
        for arguments in (
            {"tag": f"t{i}", f"k{i}": i},
            {"tag": f"t{i}", f"k{i}": 2 * i + 1},
            {"tag": f"t{i}", f"k{i}": i - 1},
            {"tag": f"t{i + 1}", f"k{i}": i},
            {"tag": f"t{i}", f"k{i}": i, "other": 1},
            {"tag": f"t{i}", f"k{i + 1}": i + 1},
        ):
            assert compiled.check(arguments).ok is oracle.is_valid(arguments), arguments
