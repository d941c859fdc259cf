"""``wire.framing.LineSplitter``: the line splitter and its cap, without any I/O or event loop."""

from __future__ import annotations

import pytest

from mcp_guard.wire.framing import PREFIX, LineSplitter, LineTooLong


def split(chunks: list[bytes], max_line: int = 100) -> list[object]:
    """Everything the splitter yields for ``chunks`` then EOF: lines, and ("too long", prefix head) in place."""
    splitter = LineSplitter(max_line)
    out: list[object] = []

    def drain() -> None:
        while True:
            try:
                line = splitter._take()
            except LineTooLong as exc:
                out.append(("too long", exc.prefix[:4], exc.limit))
                continue
            if line is None:
                return
            out.append(line)

    for chunk in chunks:
        splitter._feed(chunk)
        drain()
    rest = splitter._finish()
    if rest is not None:
        out.append(rest)
    return out


@pytest.mark.parametrize(
    ("chunks", "lines"),
    [
        ([b'{"id":1}\n'], [b'{"id":1}']),
        ([b'{"id":1}\n{"id":2}\n'], [b'{"id":1}', b'{"id":2}']),
        ([b'{"id"', b":3}\n"], [b'{"id":3}']),
        ([b"\n \n\r\n", b'{"id":4}\r\n'], [b'{"id":4}\r']),  # blank lines skipped, a CR kept
        ([b'{"id":5}'], [b'{"id":5}']),  # a last line without newline
        ([b"x" * 150 + b"\n", b'{"id":6}\n'], [("too long", b"xxxx", 100), b'{"id":6}']),
        ([b'{"id":7}\n' + b"y" * 101, b"y\n" + b'{"id":8}\n'], [b'{"id":7}', ("too long", b"yyyy", 100), b'{"id":8}']),
        ([b"z" * 300], [("too long", b"zzzz", 100)]),  # over the cap and never ended: no last line
    ],
    ids=["one", "two", "split", "blank-cr", "no-newline", "over-long", "over-long-after-a-line", "over-long-at-eof"],
)
def test_lines_and_the_cap(chunks: list[bytes], lines: list[object]) -> None:
    assert split(chunks) == lines


def test_an_over_long_line_keeps_only_a_prefix() -> None:
    splitter = LineSplitter(1 << 20)
    splitter._feed(b'{"id":"big","x":"')
    for _ in range(40):
        splitter._feed(b"z" * 65536)
        assert len(splitter._buffer) <= 1 << 20
    with pytest.raises(LineTooLong) as raised:
        splitter._take()
    assert raised.value.prefix.startswith(b'{"id":"big"') and len(raised.value.prefix) == PREFIX
    splitter._feed(b'"}\n{"id":"next"}\n')
    assert splitter._take() == b'{"id":"next"}'


@pytest.mark.parametrize("ending", [b"\n", b"\r\n"], ids=["lf", "crlf"])
def test_a_line_split_across_many_reads_comes_out_whole(ending: bytes) -> None:
    """A big line read 64 KiB at a time: one line, equal to what was sent (a CR before the newline kept)."""
    line = b'{"id":"big","x":"' + bytes(range(48, 58)) * 50_000 + b'"}'
    data = line + ending + b'{"id":"next"}\n'
    chunks = [data[i : i + 65536] for i in range(0, len(data), 65536)]
    assert len(chunks) > 5
    assert split(chunks, max_line=1 << 20) == [line + ending[:-1], b'{"id":"next"}']


@pytest.mark.parametrize("cut", [1, 17, 65535], ids=["at-1", "at-17", "at-65535"])
def test_a_line_of_exactly_the_cap_is_taken_and_one_byte_more_is_not(cut: int) -> None:
    cap = 200_000
    exact = b'{"x":"' + b"a" * (cap - 8) + b'"}'
    over = b'{"x":"' + b"b" * (cap - 7) + b'"}'
    assert (len(exact), len(over)) == (cap, cap + 1)
    data = exact + b"\n" + over + b"\n" + b'{"id":1}\n'
    chunks = [data[:cut]] + [data[i : i + 65536] for i in range(cut, len(data), 65536)]
    assert split(chunks, max_line=cap) == [exact, ("too long", b'{"x"', cap), b'{"id":1}']


def test_the_buffer_is_freed_once_a_split_line_is_taken() -> None:
    splitter = LineSplitter(1 << 22)
    splitter._feed(b'{"x":"' + b"a" * 300_000)
    splitter._feed(b'"}\n{"y"')
    line = splitter._take()
    assert line is not None and len(line) == 300_008 and type(line) is bytes
    assert bytes(splitter._buffer) == b'{"y"'
