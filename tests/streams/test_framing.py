"""``framing.LineStream``: lines, and the cap on one line (memory stays bounded)."""

from __future__ import annotations

import anyio
import pytest

from mcp_guard.streams.framing import LineStream
from mcp_guard.wire.framing import LineTooLong

pytestmark = pytest.mark.anyio


class Chunks(anyio.abc.ByteReceiveStream):
    """A byte stream that yields the given chunks, then ends."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = list(chunks)

    async def receive(self, max_bytes: int = 65536) -> bytes:
        if not self.chunks:
            raise anyio.EndOfStream
        return self.chunks.pop(0)

    async def aclose(self) -> None:
        self.chunks.clear()


class Sink(anyio.abc.ByteSendStream):
    async def send(self, item: bytes) -> None:
        pass

    async def aclose(self) -> None:
        pass


async def read_all(stream: LineStream) -> list[object]:
    out: list[object] = []
    while True:
        try:
            out.append(await stream.receive())
        except LineTooLong as exc:
            out.append(("too long", exc.prefix[:12], exc.limit))
        except anyio.EndOfStream:
            return out


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize(
    "chunks",
    [
        [b'{"id":1}\n', b'{"id":2,"x":"' + b"a" * 200 + b'"}\n', b'{"id":3}\n'],  # whole lines
        [b'{"id":1}\n{"id":2,"x":"', b"a" * 100, b"a" * 100 + b'"}\n{"id":3}', b"\n"],  # split anywhere
        [b'{"id":1}\n{"id":2,"x":"' + b"a" * 200 + b'"}\n{"id":3}\n'],  # one chunk
    ],
    ids=["whole", "split", "one-chunk"],
)
async def test_an_over_long_line_is_reported_in_order_and_skipped(chunks: list[bytes]) -> None:
    stream = LineStream(Chunks(chunks), Sink(), max_line=100)
    assert await read_all(stream) == [b'{"id":1}', ("too long", b'{"id":2,"x":', 100), b'{"id":3}']


async def test_the_skipped_line_is_never_buffered_whole() -> None:
    chunks = [b'{"id":"big","x":"'] + [b"z" * 65536] * 64 + [b'"}\n{"id":"next"}\n']  # 4 MiB line
    source = Chunks(chunks)
    stream = LineStream(source, Sink(), max_line=1 << 20)
    with pytest.raises(LineTooLong) as raised:
        await stream.receive()
    assert raised.value.prefix.startswith(b'{"id":"big"') and len(raised.value.prefix) <= 65536
    assert len(stream._buffer) == 0  # dropped at once, not kept
    assert await stream.receive() == b'{"id":"next"}'


async def test_a_last_over_long_line_without_newline_ends_the_stream() -> None:
    stream = LineStream(Chunks([b"x" * 300]), Sink(), max_line=100)
    with pytest.raises(LineTooLong):
        await stream.receive()
    with pytest.raises(anyio.EndOfStream):
        await stream.receive()


@pytest.mark.parametrize(
    ("chunks", "lines"),
    [
        ([b'{"id":1}\n'], [b'{"id":1}']),  # one whole line per chunk: the usual case
        ([b"\n", b"  \r\n", b'{"id":2}\r\n'], [b'{"id":2}\r']),  # blank lines skipped, a CR kept
        ([b'{"id":', b"3}\n"], [b'{"id":3}']),
        ([b"x" * 150 + b"\n", b'{"id":4}\n'], [("too long", b"xxxxxxxxxxxx", 100), b'{"id":4}']),
    ],
    ids=["one-line", "blank-and-cr", "split", "one-over-long-line"],
)
async def test_chunks_holding_one_line_each(chunks: list[bytes], lines: list[object]) -> None:
    stream = LineStream(Chunks(chunks), Sink(), max_line=100)
    assert await read_all(stream) == lines
