"""Reading documents: comments stripped outside strings only, duplicate keys refused, exact floats."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from mcp_guard.core.json_values import Inexact
from mcp_guard.reports.documents import DocumentError, iter_lines, loads, read_text, strip_comments


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1} // trailing', {"a": 1}),
        ('// first\n{"a": 1}', {"a": 1}),
        ('{"a": /* inline */ 1}', {"a": 1}),
        ('{"url": "http://x//y"}', {"url": "http://x//y"}),
        ('{"c": "/* not a comment */"}', {"c": "/* not a comment */"}),
        ('{"q": "a \\" // still string"}', {"q": 'a " // still string'}),
        ('{"b": "\\\\"} // after an escaped backslash', {"b": "\\"}),
        ('{"a": 1 /* multi\nline\n*/, "b": 2}', {"a": 1, "b": 2}),
        ('{"a": "x"}/**/', {"a": "x"}),
        ("[1, // one\n 2]", [1, 2]),
    ],
    ids=[
        "line-comment-after",
        "line-comment-before",
        "block-inline",
        "slashes-in-string",
        "block-in-string",
        "escaped-quote-in-string",
        "escaped-backslash-ends-string",
        "block-multiline",
        "empty-block",
        "inside-array",
    ],
)
def test_comments_are_stripped_outside_strings_only(text: str, expected: object) -> None:
    assert loads(text, comments=True) == expected


def test_stripping_keeps_positions() -> None:
    text = '/* one\ntwo */ {"a": 1,\n // c\n "b": }'
    stripped = strip_comments(text)
    assert len(stripped) == len(text)
    assert stripped.count("\n") == text.count("\n")
    with pytest.raises(DocumentError, match=r"^line 4 column 7: not JSON"):
        loads(text, comments=True)


def test_unclosed_block_comment_names_its_start() -> None:
    with pytest.raises(DocumentError, match=r"line 2 column 3: a /\* comment is never closed"):
        strip_comments('{\n  /* open\n "a": 1}')


def test_comments_are_not_json_without_the_flag() -> None:
    with pytest.raises(DocumentError, match="not JSON"):
        loads('{"a": 1} // x')


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('{"a": 1, "a": 2}', "(document)"),
        ('{"x": [{"k": 1}, {"k": 1, "k": 1}]}', "/x/1"),
        ('{"a~b/c": {"d": 1, "d": 2}}', "/a~0b~1c"),
    ],
)
def test_duplicate_keys_are_refused_with_their_pointer(text: str, where: str) -> None:
    with pytest.raises(DocumentError) as info:
        loads(text)
    assert str(info.value).startswith(f"{where}: the key ")
    assert "appears twice" in str(info.value)


def test_exact_floats_mark_what_a_double_cannot_hold() -> None:
    value = loads('{"a": 0.1, "b": 0.99999999999999999999, "c": 1e2, "d": 1e400}')
    assert value["a"] == 0.1 and value["c"] == 100.0
    assert type(value["b"]) is Inexact and type(value["d"]) is Inexact  # never rounded, as the relay reads


def test_an_argument_beyond_the_double_range_is_judged_as_the_relay_judges_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Under extended, a literal no double holds is an exact number (E1), but one beyond the range of a double
    (1e400) is a number JSON cannot carry (decision 12), as the relay judges them."""
    from mcp_guard.cli import main

    schema = tmp_path / "v.json"
    schema.write_text('{"type": "object", "properties": {"v": {"type": "number", "maximum": 1e300}}}')
    assert main(["schema", str(schema), "--arguments", '{"v": -1.00000000000000000001e300}']) == 0
    assert "arguments: valid" in capsys.readouterr().out
    assert main(["schema", str(schema), "--arguments", '{"v": 1.00000000000000000001e300}']) == 1
    assert "(maximum)" in capsys.readouterr().out
    assert main(["schema", str(schema), "--arguments", '{"v": -1e400}']) == 1
    assert "beyond the range of a double" in capsys.readouterr().out


def test_a_schema_literal_no_double_holds_is_not_enforced_rounded() -> None:
    from mcp_guard import classify

    schema = loads('{"type":"object","properties":{"x":{"type":"integer","minimum":9007199254740993.0}}}')
    report = classify(schema, profile="standard")
    assert not report.ok and "json" in {issue.keyword for issue in report.issues}


def test_non_finite_literals_parse_for_the_core_to_judge() -> None:
    value = loads('{"a": NaN, "b": -Infinity}')
    assert value["a"] != value["a"] and value["b"] == float("-inf")


def test_hostile_nesting_is_a_document_error() -> None:
    with pytest.raises(DocumentError, match="nests too deeply"):
        loads("[" * 100_000 + "]" * 100_000)


def test_read_text(tmp_path: Path) -> None:
    good = tmp_path / "a.json"
    good.write_bytes(b'\xef\xbb\xbf{"a": 1}')
    assert json.loads(read_text(str(good))) == {"a": 1}
    bad = tmp_path / "b.json"
    bad.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(DocumentError, match=r"b\.json: not UTF-8 text \(byte 7\)"):
        read_text(str(bad))
    with pytest.raises(DocumentError, match="cannot read the file"):
        read_text(str(tmp_path / "missing.json"))


def test_lines_split_on_newlines_only() -> None:
    text = '{"a": "x\u2028y"}\r\n\n   \n{"b": 1}'
    assert list(iter_lines(text)) == [(1, '{"a": "x\u2028y"}'), (4, '{"b": 1}')]


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["schema", "-"], "mcp-guard schema: error: stdin: not UTF-8 text (byte 7)\n"),
        (["verify", "-"], "mcp-guard verify: error: stdin: not UTF-8 text (byte 7)\n"),
        (["check", "--tools-file", "-"], "mcp-guard check: error: stdin: not UTF-8 text (byte 7)\n"),
    ],
)
def test_stdin_that_is_not_utf8_is_named_stdin_once_with_the_byte(
    argv: list[str], expected: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcp_guard.cli import main

    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b'{"a": "\xff"}')))
    assert main(argv) == 2
    assert capsys.readouterr().err == expected


@pytest.mark.parametrize(
    ("arguments", "byte"),
    [('{"a": "\udcff"}', 7), ('{"\u00e9": "\udcc3"}', 8)],  # how sys.argv carries the bytes 0xff and 0xc3
)
def test_argv_arguments_that_are_not_utf8_are_refused_as_the_relay_refuses_them(
    arguments: str, byte: int, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from mcp_guard.cli import main

    schema = tmp_path / "o.json"
    schema.write_text('{"type": "object", "properties": {"a": {"type": "string", "pattern": "^x"}}}')
    assert main(["schema", str(schema), "--arguments", arguments]) == 2
    out, err = capsys.readouterr()
    assert err == f"mcp-guard schema: error: --arguments: not UTF-8 text (byte {byte})\n"
    assert "valid" not in out and "surrogate" not in out + err
    file = tmp_path / "args.json"
    file.write_bytes(arguments.encode("utf-8", "surrogateescape"))
    assert main(["schema", str(schema), "--arguments", f"@{file}"]) == 2
    assert f"not UTF-8 text (byte {byte})" in capsys.readouterr().err  # the @FILE form says the same
