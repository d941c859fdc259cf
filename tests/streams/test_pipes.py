"""``pipes.PipeLineStream``: the stdio hot path's stream (lines offered to a handler in the reader callback).

What must hold whatever the handler does: lines keep their order, a declined line reaches
``receive()`` untouched, reading stops while the consumer is busy (backpressure), output is
never interleaved or lost behind a full pipe, and the line cap and the end of a child's
output behave as in ``framing``.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import AsyncIterator, Callable

import anyio
import pytest

from mcp_guard.streams.framing import LineStream
from mcp_guard.streams.pipes import BIG_LINE, PipeLineStream, pipe_line_stream
from mcp_guard.wire.framing import LineTooLong
from mcp_guard.wire.jsonrpc import Spliced, with_id

pytestmark = pytest.mark.anyio

HANG_GUARD = 10


class Pipes:
    """Two pipes around a stream: the test writes ``feed`` (the stream reads it) and reads ``drain``."""

    def __init__(self) -> None:
        self.stream_in, self.feed = os.pipe()
        self.drain, self.stream_out = os.pipe()
        os.set_blocking(self.drain, False)

    def close(self) -> None:
        for fd in (self.stream_in, self.feed, self.drain, self.stream_out):
            if fd >= 0:
                os.close(fd)

    async def read_lines(self, count: int) -> list[bytes]:
        """``count`` lines from ``drain``, waiting for them."""
        data = b""
        with anyio.fail_after(HANG_GUARD):
            while data.count(b"\n") < count:
                try:
                    data += os.read(self.drain, 1 << 16)
                except BlockingIOError:
                    await anyio.sleep(0.005)
        return data.split(b"\n")[:count]


@pytest.fixture
async def pipes() -> AsyncIterator[Pipes]:
    p = Pipes()
    try:
        yield p
    finally:
        p.close()


async def until(condition: Callable[[], bool]) -> None:
    with anyio.fail_after(HANG_GUARD):
        while not condition():
            await anyio.sleep(0.005)


async def test_lines_go_to_the_handler_while_the_consumer_waits_and_declined_ones_to_receive_in_order(
    pipes: Pipes,
) -> None:
    stream = PipeLineStream(pipes.stream_in, pipes.stream_out)
    handled: list[bytes] = []
    received: list[bytes] = []

    def handler(line: bytes) -> bool:
        if line.startswith(b"fast"):
            handled.append(line)
            return True
        return False

    stream.set_line_handler(handler)

    async def consumer() -> None:
        while True:
            try:
                received.append(await stream.receive())
            except anyio.EndOfStream:
                return

    async with anyio.create_task_group() as tg:
        tg.start_soon(consumer)
        await anyio.sleep(0.01)
        os.write(pipes.feed, b"fast1\nslow1\nfast2\n")  # after a declined line, the rest goes to receive()
        await until(lambda: len(received) == 2)
        os.write(pipes.feed, b"fast3\n")
        await until(lambda: len(handled) == 2)
        os.write(pipes.feed, b"slow2\n")
        await until(lambda: len(received) == 3)
        os.close(pipes.feed)
        pipes.feed = -1
    assert handled == [b"fast1", b"fast3"]
    assert received == [b"slow1", b"fast2", b"slow2"]
    await stream.aclose()


async def test_reading_stops_while_the_consumer_is_busy(pipes: Pipes) -> None:
    """A consumer that does not ask for more stops the reading: the writer finds the pipe full."""
    stream = PipeLineStream(pipes.stream_in, pipes.stream_out)
    stream.set_line_handler(lambda line: False)
    os.write(pipes.feed, b"first\n")
    with anyio.fail_after(HANG_GUARD):
        assert await stream.receive() == b"first"
    os.set_blocking(pipes.feed, False)
    written = 0
    full = 0
    with anyio.fail_after(HANG_GUARD):
        while full < 20 and written < 64 << 20:
            try:
                written += os.write(pipes.feed, b"x" * 1000 + b"\n")
                full = 0
            except BlockingIOError:
                full += 1
                await anyio.sleep(0.005)  # time for a stray reader to empty the pipe
    assert written < 1 << 20  # the pipe's capacity, not what a reader in the background would take
    await stream.aclose()


async def test_an_exception_of_the_handler_is_raised_by_receive(pipes: Pipes) -> None:
    stream = PipeLineStream(pipes.stream_in, pipes.stream_out)

    def handler(line: bytes) -> bool:
        if line == b"bad":
            raise KeyError("the handler's own")
        return True

    stream.set_line_handler(handler)

    async def write_soon() -> None:
        await anyio.sleep(0.01)  # the consumer waits by then: the lines go through the reader callback
        os.write(pipes.feed, b"ok\nbad\nafter\n")

    async with anyio.create_task_group() as tg:
        tg.start_soon(write_soon)
        with anyio.fail_after(HANG_GUARD), pytest.raises(KeyError):
            await stream.receive()
    with anyio.fail_after(HANG_GUARD):
        assert await stream.receive() == b"after"  # queued behind the failure, not lost
    await stream.aclose()


async def test_an_over_long_line_is_not_offered_and_is_reported_in_order(pipes: Pipes) -> None:
    stream = PipeLineStream(pipes.stream_in, pipes.stream_out, max_line=100)
    handled: list[bytes] = []
    stream.set_line_handler(lambda line: handled.append(line) is None)

    async def write_soon() -> None:
        await anyio.sleep(0.01)
        os.write(pipes.feed, b"a\n" + b"x" * 300 + b"\nb\n")

    async with anyio.create_task_group() as tg:
        tg.start_soon(write_soon)
        with anyio.fail_after(HANG_GUARD), pytest.raises(LineTooLong) as raised:
            await stream.receive()
    assert raised.value.prefix.startswith(b"xxx") and raised.value.limit == 100
    with anyio.fail_after(HANG_GUARD):
        assert await stream.receive() == b"b"
    assert handled == [b"a"]
    await stream.aclose()


async def test_output_a_full_pipe_does_not_take_is_queued_whole_and_in_order(pipes: Pipes) -> None:
    stream = PipeLineStream(pipes.stream_in, pipes.stream_out)
    lines = [b"%d:" % i + b"y" * 5000 for i in range(100)]  # ~500 KB: far more than a pipe holds
    for line in lines[:50]:
        stream.send_nowait(line)
    assert not stream.idle
    done = anyio.Event()

    async def sender() -> None:
        for line in lines[50:]:
            await stream.send(line)  # waits while the queue is flushed
        done.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(sender)
        await anyio.sleep(0.02)
        assert not done.is_set()
        assert await pipes.read_lines(100) == lines
        with anyio.fail_after(HANG_GUARD):
            await done.wait()
    assert stream.idle
    await stream.aclose()


async def test_a_cancelled_send_still_writes_its_line_whole(pipes: Pipes) -> None:
    stream = PipeLineStream(pipes.stream_in, pipes.stream_out)
    big = b"z" * 300_000
    with anyio.move_on_after(0.05):
        await stream.send(big)  # the pipe takes 64 KiB; the rest waits in the queue
    stream.send_nowait(b"next")
    assert await pipes.read_lines(2) == [big, b"next"]
    await stream.aclose()


async def test_close_send_writes_what_is_queued_then_the_peer_sees_the_end(pipes: Pipes) -> None:
    stream = PipeLineStream(pipes.stream_in, pipes.stream_out, owned=False)
    big = b"q" * 200_000
    stream.send_nowait(big)
    async with anyio.create_task_group() as tg:
        tg.start_soon(stream.close_send)
        assert await pipes.read_lines(1) == [big]
    os.close(pipes.stream_out)  # (not owned: the test closes it; the peer then sees EOF)
    pipes.stream_out = -1
    with anyio.fail_after(HANG_GUARD):
        while True:
            try:
                assert os.read(pipes.drain, 10) == b""
                break
            except BlockingIOError:
                await anyio.sleep(0.005)
    with pytest.raises(anyio.ClosedResourceError):
        stream.send_nowait(b"late")
    await stream.aclose()


async def test_a_reader_that_went_away_breaks_the_stream(pipes: Pipes) -> None:
    stream = PipeLineStream(pipes.stream_in, pipes.stream_out)
    os.close(pipes.drain)
    pipes.drain = -1
    with pytest.raises(anyio.BrokenResourceError):
        stream.send_nowait(b"nobody reads")
    with pytest.raises(anyio.BrokenResourceError):
        await stream.send(b"still nobody")
    await stream.aclose()


async def test_a_queue_whose_reader_goes_away_fails_the_waiting_send(pipes: Pipes) -> None:
    stream = PipeLineStream(pipes.stream_in, pipes.stream_out)
    stream.send_nowait(b"w" * 200_000)  # queued: the pipe is full

    async def reader_leaves() -> None:
        await anyio.sleep(0.02)
        os.close(pipes.drain)
        pipes.drain = -1

    async with anyio.create_task_group() as tg:
        tg.start_soon(reader_leaves)
        with anyio.fail_after(HANG_GUARD), pytest.raises(anyio.BrokenResourceError):
            await stream.send(b"after")
    await stream.aclose()


async def test_the_output_of_an_exited_child_ends_although_the_pipe_is_held_open(pipes: Pipes) -> None:
    """``end_when_drained``: what is in the pipe is still read, then the stream ends (a grandchild holds it)."""
    stream = PipeLineStream(pipes.stream_in, pipes.stream_out)
    received: list[bytes] = []
    ended = anyio.Event()

    async def consumer() -> None:
        while True:
            try:
                received.append(await stream.receive())
            except anyio.EndOfStream:
                ended.set()
                return

    async with anyio.create_task_group() as tg:
        tg.start_soon(consumer)
        os.write(pipes.feed, b"one\n")
        await until(lambda: received == [b"one"])
        await anyio.sleep(0.02)
        assert not ended.is_set()  # the pipe is still open (pipes.feed plays the grandchild)
        os.write(pipes.feed, b"last words")  # no newline: still delivered at the end
        stream.end_when_drained()
        with anyio.fail_after(HANG_GUARD):
            await ended.wait()
    assert received == [b"one", b"last words"]
    await stream.aclose()


async def test_aclose_ends_a_waiting_receive(pipes: Pipes) -> None:
    stream = PipeLineStream(pipes.stream_in, pipes.stream_out)
    async with anyio.create_task_group() as tg:

        async def consumer() -> None:
            with anyio.fail_after(HANG_GUARD), pytest.raises(anyio.EndOfStream):
                await stream.receive()

        tg.start_soon(consumer)
        await anyio.sleep(0.01)
        await stream.aclose()
    assert os.get_blocking(pipes.stream_in)  # the fd's blocking mode is restored


async def test_fds_the_loop_cannot_poll_get_the_generic_stream(pipes: Pipes) -> None:
    with tempfile.TemporaryFile() as regular:
        stream = pipe_line_stream(regular.fileno(), pipes.stream_out)
        assert type(stream) is LineStream
        await stream.aclose()
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        stream = pipe_line_stream(null, pipes.stream_out)
        assert type(stream) is LineStream  # a character device epoll refuses
        await stream.aclose()
    finally:
        os.close(null)
    stream = pipe_line_stream(pipes.stream_in, pipes.stream_out)
    assert type(stream) is PipeLineStream
    await stream.aclose()


def test_no_asyncio_loop_means_no_pipe_stream() -> None:
    read_fd, write_fd = os.pipe()
    try:
        with pytest.raises(RuntimeError):
            PipeLineStream(read_fd, write_fd)
    finally:
        os.close(read_fd)
        os.close(write_fd)


async def test_a_big_line_behind_a_full_pipe_is_queued_without_a_copy_in_order(pipes: Pipes) -> None:
    """What the pipe does not take of a big line waits as a view of the line itself (a 16 MiB line is not
    copied to add its newline or to queue its rest); small lines before and after it keep their order."""
    stream = PipeLineStream(pipes.stream_in, pipes.stream_out)
    big = b"b" * 1_000_000
    stream.send_nowait(b"first")
    stream.send_nowait(big)
    stream.send_nowait(b"second")
    stream.send_nowait(b"third")
    assert not stream.idle
    views = [piece for piece in stream._pending if type(piece) is memoryview]
    assert len(views) == 1 and views[0].obj is big
    assert len(stream._pending) == 2  # ("first" went out) the view, then one buffer: its newline, the small lines
    assert await pipes.read_lines(4) == [b"first", big, b"second", b"third"]
    await until(lambda: stream.idle)
    await stream.aclose()


async def test_a_big_line_is_offered_as_its_text_and_declined_goes_to_receive_as_the_same_bytes(
    pipes: Pipes,
) -> None:
    """A line of BIG_LINE bytes or more that is UTF-8 reaches the handler decoded (its bytes already freed);
    declined, receive() gets exactly the bytes that came; one that is not UTF-8 is offered as bytes."""
    stream = PipeLineStream(pipes.stream_in, pipes.stream_out)
    offered: list[bytes | str] = []
    received: list[bytes] = []
    text_line = ('{"x":"' + "é" * BIG_LINE + '"}').encode()
    not_utf8 = b"\xff" * BIG_LINE

    def handler(line: bytes | str) -> bool:
        offered.append(line)
        return False

    stream.set_line_handler(handler)

    async def consumer() -> None:
        while len(received) < 3:
            received.append(await stream.receive())

    async with anyio.create_task_group() as tg:
        tg.start_soon(consumer)
        await anyio.sleep(0.01)
        for line in (text_line, not_utf8, b"small"):
            await anyio.to_thread.run_sync(os.write, pipes.feed, line + b"\n")  # (a big one fills the pipe)
            await until(lambda: len(received) == len(offered))
    assert [type(line) for line in offered] == [str, bytes, bytes]
    assert offered[0] == text_line.decode()
    assert received == [text_line, not_utf8, b"small"]
    await stream.aclose()


async def test_a_text_line_is_written_a_slice_at_a_time_in_order(pipes: Pipes) -> None:
    """``send_nowait(str)``: the text goes out in UTF-8 behind what was queued, and before what follows."""
    stream = PipeLineStream(pipes.stream_in, pipes.stream_out)
    text = "ü" * 1_500_000  # 3 MB in UTF-8: more than one slice, and more than a pipe takes
    stream.send_nowait(b"first" * 20_000)
    stream.send_nowait(text)
    stream.send_nowait(b"last")
    assert not stream.idle
    queued = [getattr(piece, "segments", [(None,)])[0][0] is text for piece in stream._pending]
    assert queued == [False, True, False]  # the text itself, not a copy
    assert await pipes.read_lines(3) == [b"first" * 20_000, text.encode(), b"last"]
    await until(lambda: stream.idle)
    await stream.aclose()


async def test_a_spliced_text_line_is_written_as_its_pieces_without_a_copy(pipes: Pipes) -> None:
    """``jsonrpc.with_id`` of a big text line (a forwarded request's id, an answer's): its three pieces go out
    in order, the text itself queued (no copy of it is made to replace its id)."""
    stream = PipeLineStream(pipes.stream_in, pipes.stream_out)
    text = '{"jsonrpc":"2.0","id":7,"result":"' + "ü" * 1_500_000 + '"}'
    spliced = with_id(text, 7, "mcp-guard-x-1")
    assert isinstance(spliced, Spliced)
    stream.send_nowait(b"first" * 20_000)
    stream.send_nowait(spliced)
    assert any(getattr(piece, "segments", [(None,)])[-1][0] is text for piece in stream._pending)  # not a copy
    assert await pipes.read_lines(2) == [b"first" * 20_000, text.replace('"id":7', '"id":"mcp-guard-x-1"').encode()]
    await until(lambda: stream.idle)
    await stream.aclose()


async def test_a_big_line_is_handled_with_the_collector_paused_and_it_resumes_after_a_raise(pipes: Pipes) -> None:
    """Issue 14 item 5: a big message's parse, judgement and serialization make no collector pass walk its
    objects; a small line's handler runs as usual; the collector is running again after each, a raise too."""
    import gc

    stream = PipeLineStream(pipes.stream_in, pipes.stream_out)
    seen: list[tuple[int, bool]] = []
    big = b'{"x":"' + b"a" * BIG_LINE + b'"}'

    def handler(line: bytes | str) -> bool:
        seen.append((len(line), gc.isenabled()))
        if len(seen) == 2:
            raise KeyError("the handler's own")
        return len(line) > BIG_LINE  # a small line is declined: receive() returns it

    stream.set_line_handler(handler)
    assert gc.isenabled()

    async def write_soon() -> None:
        await anyio.sleep(0.01)  # the consumer waits by then: the lines go through the reader callback
        await anyio.to_thread.run_sync(os.write, pipes.feed, big + b"\n" + big + b"\nsmall\n")

    async with anyio.create_task_group() as tg:
        tg.start_soon(write_soon)
        with anyio.fail_after(HANG_GUARD), pytest.raises(KeyError):
            await stream.receive()
        assert gc.isenabled()  # resumed although the handler raised
        with anyio.fail_after(HANG_GUARD):
            assert await stream.receive() == b"small"
    assert seen[:2] == [(len(big), False), (len(big), False)]  # handled, then raised
    assert all(enabled for size, enabled in seen[2:])  # the small line, if it was offered
    assert gc.isenabled()
    await stream.aclose()
