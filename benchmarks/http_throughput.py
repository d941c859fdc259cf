"""``tools/call`` over streamable HTTP: throughput, latency and the guard's CPU per call, against
direct, FastMCP's proxy (``fastmcp.server.create_proxy``) and ``mcp-guard wrap`` on stdio.

Targets, each started fresh per round, over the Sigma fixture server:

- direct: the Sigma server over the SDK's streamable HTTP transport (``tests/e2e/sigma_http_server.py``);
- mcp-guard: ``mcp-guard wrap --http 127.0.0.1:PORT -- python fixtures/sigma/server.py``;
- fastmcp proxy: ``benchmarks/fastmcp_proxy.py --http 127.0.0.1:PORT -- python fixtures/sigma/server.py``
  (skipped when ``--fastmcp-python`` cannot import fastmcp; the pinned version is in that script);
- mcp-guard stdio: ``mcp-guard wrap -- python fixtures/sigma/server.py`` with a raw newline-delimited
  client, for the CPU-per-call reference (the same upstream, the same calls, no HTTP).

With ``--oauth`` or ``--otel`` and ``--clients 1``, the ratios' figures are paired: each variant (the otel
target; the two oauth targets together) serves at the same time as a plain ``wrap --http`` of its own, their
calls in interleaved blocks of 64 (:func:`run_paired_round`), each target's CPU read over its own blocks; the
ratio of a round is the variant's CPU per call over its neighbour's, and the figure is the median of the
rounds' ratios, with their spread. The otel target's window counts the export of exactly its own calls' spans
(its calls rounded up to whole batches: 170 calls, 510 spans; every batch they fill waited for at the sink). Each
CPU figure is the guard process's own (``/proc/PID/task/*``: its threads, the export thread included; not
its upstream, a child process; not the OTLP sink or the clients, threads of this process).

``--clients N`` clients run at once, each on its own connection and session, each making
``--calls`` sequential calls (``--clients 1``: latency; ``--clients 8``: throughput under load).
The clients are raw HTTP/1.1 over sockets in threads (keep-alive, JSON or SSE answers), so the
figures measure the servers and proxies, not a client library. The CPU figure is the guard
process's own CPU time (``/proc/PID/task/*/schedstat``, its upstream excluded) over the timed
calls (read once every client has warmed up: the first listing and the classifier's import are
not counted, on either side), divided by their number. Both guards run at the same
``--log-level`` (``warning``; neither logs a line per call at ``info`` either). Rounds of the
targets are interleaved and medians compared, so machine noise hits all alike.

``--oauth`` adds two targets: ``mcp-guard wrap --http`` as an OAuth 2.1 resource server
(``--oauth-issuer``, ``--oauth-resource``, ``--oauth-scope``) in front of the same upstream, with a
test authorization server on loopback (``tests/auth/issuer.py``: RS256 tokens, its JWKS fetched
once), the clients sending ``Authorization: Bearer``: "mcp-guard oauth" with one token per client
(as clients do: the guard checks its signature once, then reuses the verdict), and "mcp-guard
oauth, new token per call" (each call a token never seen: a signature check and the claims on
every call). Their CPU per call is compared with plain ``wrap --http``'s (issue 27 item 5: at most
1.10). It needs the ``auth`` extra (joserfc).

``--otel`` adds "mcp-guard otel": ``mcp-guard wrap --http --otel`` in front of the same upstream, its
spans (three per call: the call, its judgement, the upstream round trip) batched by the SDK's
``BatchSpanProcessor`` and exported over OTLP/HTTP protobuf (``OTEL_EXPORTER_OTLP_ENDPOINT``) to a sink on
loopback in this process (``POST /v1/traces`` answered 200 at once; it counts the spans it got), so the
guard's CPU per call includes making, batching, serializing and sending the spans. Its CPU per call is
compared with plain ``wrap --http``'s (issue 27 item 5: at most 1.15). It needs the ``otel`` extra. The
tracer's own CPU per call is also measured in this process (:func:`tracing_cpu`: the calling thread's part
and the export thread's, a figure the machine's noise does not swamp) and added to plain ``wrap --http``'s.

Usage::

    python benchmarks/http_throughput.py [--calls 500] [--rounds 3] [--clients 1]
        [--fastmcp-python PATH] [--oauth] [--otel]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from relay_throughput import RawClient, cpu_seconds, percentile  # (this script's folder is on sys.path when it runs)

ROOT = Path(__file__).resolve().parents[1]
SIGMA = [sys.executable, str(ROOT / "fixtures" / "sigma" / "server.py")]
DIRECT = [sys.executable, str(ROOT / "tests" / "e2e" / "sigma_http_server.py")]


def guard(log_level: str, http_port: int | None = None, *extra: str) -> list[str]:
    """``mcp-guard wrap`` (over HTTP on ``127.0.0.1:http_port`` when given), up to the ``--`` before the upstream.

    Both guards get the same ``--log-level`` (neither logs a line per call at info or warning);
    the HTTP one gets a port of its own, not :0, since below info it does not log its address.
    """
    http = ["--http", f"127.0.0.1:{http_port}"] if http_port is not None else []
    return [sys.executable, "-m", "mcp_guard", "wrap", "--log-level", log_level, *http, *extra, "--"]


INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}
CALL = {"name": "add", "arguments": {"a": 2, "b": 3}}
WARM_UP = 30


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RawHttp:
    """One keep-alive HTTP/1.1 connection posting JSON-RPC messages to an MCP endpoint."""

    def __init__(self, url: str) -> None:
        found = re.fullmatch(r"http://([^:/]+):(\d+)(/.*)", url)
        assert found, url
        self.host, self.port, self.path = found.group(1), int(found.group(2)), found.group(3)
        self.sock = socket.create_connection((self.host, self.port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.reader = self.sock.makefile("rb", buffering=1 << 16)
        self.headers: dict[str, str] = {}

    def post(self, message: dict[str, Any]) -> tuple[int, dict[str, str], list[dict[str, Any]]]:
        """POST one message; (status, response headers, the JSON-RPC messages of the answer)."""
        body = json.dumps(message).encode()
        head = [
            f"POST {self.path} HTTP/1.1",
            f"Host: {self.host}:{self.port}",
            "Accept: application/json, text/event-stream",
            "Content-Type: application/json",
            f"Content-Length: {len(body)}",
            *(f"{k}: {v}" for k, v in self.headers.items()),
        ]
        self.sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + body)
        status = int(self.reader.readline().split()[1])
        headers: dict[str, str] = {}
        while (line := self.reader.readline()) not in (b"\r\n", b"\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        if "content-length" in headers:
            data = self.reader.read(int(headers["content-length"]))
        elif headers.get("transfer-encoding") == "chunked":
            parts = []
            while (size := int(self.reader.readline().split(b";")[0], 16)) > 0:
                parts.append(self.reader.read(size))
                self.reader.readline()
            self.reader.readline()
            data = b"".join(parts)
        else:
            data = b""
        if headers.get("content-type", "").startswith("text/event-stream"):
            found = [
                json.loads(line[5:]) for line in data.splitlines() if line.startswith(b"data:") and line[5:].strip()
            ]
        else:
            found = [json.loads(data)] if data.strip() else []
        return status, headers, found

    def open_session(self) -> None:
        """``initialize`` and ``notifications/initialized``: the session id and version go on every later POST."""
        status, headers, answer = self.post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT})
        assert status == 200, (status, answer)
        if "mcp-session-id" in headers:
            self.headers["Mcp-Session-Id"] = headers["mcp-session-id"]
        self.headers["MCP-Protocol-Version"] = answer[-1]["result"]["protocolVersion"]
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def close(self) -> None:
        self.reader.close()
        self.sock.close()


@contextmanager
def serving(
    command: list[str],
    url_from: str,
    port: int | None = None,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
) -> Iterator[tuple[str, int]]:
    """Start a server (in ``cwd``); yield its MCP endpoint URL and pid once it accepts connections; stop it after."""
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
        cwd=cwd,
    )
    try:
        url = f"http://127.0.0.1:{port}/mcp" if port is not None else ""
        deadline = time.monotonic() + 60
        stream = process.stdout if url_from == "stdout" else process.stderr
        assert stream is not None
        while not url and time.monotonic() < deadline:
            line = stream.readline()
            if not line:
                raise RuntimeError(f"{command[1]} ended before it listened")
            found = re.search(r"(http://127\.0\.0\.1:\d+/mcp)", line)
            url = found.group(1) if found else ""
        host, port_text = url.split("/")[2].split(":")
        while time.monotonic() < deadline:  # until it accepts connections
            try:
                socket.create_connection((host, int(port_text)), timeout=2).close()
                break
            except OSError:
                time.sleep(0.1)
        # Drain the pipes in the background, so a chatty server never blocks on a full pipe.
        for pipe in (process.stdout, process.stderr):
            threading.Thread(target=pipe.read, daemon=True).start()  # type: ignore[union-attr]
        yield url, process.pid
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


def run_http_round(
    url: str, pid: int, calls: int, clients: int, tokens: list[list[str]] | None = None
) -> tuple[float, list[float], float]:
    """``clients`` sessions at once, ``calls`` sequential tools/call each.

    ``tokens``: per client, the bearer token of its session, then one per call (warm-up included)
    or none (the session's token on every call).

    Returns calls/s over all clients, each call's latency (s), and the server's CPU seconds per call.
    """
    sessions = []
    for index in range(clients):  # each on a connection of its own, closed after (idle ones would time out meanwhile)
        opener = RawHttp(url)
        if tokens is not None:
            opener.headers["Authorization"] = f"Bearer {tokens[index][0]}"
        opener.open_session()
        sessions.append(dict(opener.headers))
        opener.close()
    latencies: list[list[float]] = [[] for _ in range(clients)]
    # Two barriers: every client has warmed up (the guard's first listing, the classifier's import) before
    # the CPU counter is read, and none starts its timed calls before that.
    warmed = threading.Barrier(clients + 1)
    start_line = threading.Barrier(clients + 1)

    def client(index: int) -> None:
        connection = RawHttp(url)
        connection.headers.update(sessions[index])
        fresh = tokens[index][1:] if tokens is not None else []

        def next_token(i: int) -> None:
            if fresh:
                connection.headers["Authorization"] = f"Bearer {fresh[i]}"

        for i in range(WARM_UP):  # warm-up (and the guard's first listing)
            next_token(i)
            connection.post({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": CALL})
        warmed.wait()
        start_line.wait()
        for i in range(calls):
            request_id = WARM_UP + 1 + i
            next_token(WARM_UP + i)
            before = time.perf_counter()
            status, _, answer = connection.post(
                {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": CALL}
            )
            latencies[index].append(time.perf_counter() - before)
            assert status == 200 and answer[-1]["id"] == request_id, (status, answer)
            assert answer[-1]["result"]["isError"] is False, answer
        connection.close()

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    warmed.wait()
    cpu_before = cpu_seconds(pid)
    start_line.wait()
    start = time.perf_counter()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - start
    cpu = cpu_seconds(pid) - cpu_before
    total = calls * clients
    return total / elapsed, [x for each in latencies for x in each], cpu / total


def calls_per_batch() -> int:
    """The calls whose spans fill one batch of the traced guard: its batch processor queues a call's three spans
    as one entry, and batches ``OTEL_BSP_MAX_EXPORT_BATCH_SIZE`` (512) divided by three entries
    (``mcp_guard.telemetry.batch``): 170 calls, 510 spans."""
    return max(1, int(os.environ.get("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "512")) // 3)


def run_paired_round(
    group: list[tuple[str, str, int]],
    calls: int,
    tokens: dict[str, list[str]],
    sink: SpanSink | None = None,
    traced: frozenset[str] = frozenset(),
    block: int = 64,
) -> dict[str, tuple[float, list[float], float]]:
    """The targets of ``group`` (``(name, url, pid)``, all serving at once), one client each, their calls in
    interleaved blocks: ``block`` sequential calls to one target, then as many to the next (the first target
    rotating from turn to turn), so that what else the machine runs meanwhile weighs on each alike, while each
    serves its calls back to back as in :func:`run_http_round`. A target's CPU is its own process's (its
    threads, not its upstream's, not this process's sink), read before and after each of its blocks.

    ``tokens``: per target, its bearer tokens (the session's, then one per call, warm-up included, or none
    more: the session's on every call). ``traced``: the targets that export spans to ``sink``. Their calls
    start with the batch processor's queue empty (after the warm-up, once the sink has its spans), and each
    of their blocks ends once the sink has every batch that block filled (sent at once when full): a
    target's CPU counts the export of its own calls' spans, all of them when ``calls`` is a multiple of
    :func:`calls_per_batch` (170 calls, 510 spans).

    Returns, per target: calls/s over its own calls' time, each call's latency (s), its CPU seconds a call.
    """
    connections: dict[str, RawHttp] = {}
    for name, url, _ in group:  # (each session opened on a connection of its own, closed after: run_http_round)
        opener = RawHttp(url)
        if name in tokens:
            opener.headers["Authorization"] = f"Bearer {tokens[name][0]}"
        opener.open_session()
        opener.close()
        connections[name] = RawHttp(url)
        connections[name].headers.update(opener.headers)
    sent = dict.fromkeys(connections, 0)
    batch = calls_per_batch()

    def call(name: str) -> float:
        connection, request_id = connections[name], sent[name] + 1
        fresh = tokens.get(name, [])
        if len(fresh) > 1:
            connection.headers["Authorization"] = f"Bearer {fresh[request_id]}"
        before = time.perf_counter()
        status, _, answer = connection.post(
            {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": CALL}
        )
        latency = time.perf_counter() - before
        assert status == 200 and answer[-1]["id"] == request_id, (status, answer)
        assert answer[-1]["result"]["isError"] is False, answer
        sent[name] = request_id
        return latency

    def at_sink(expected: int) -> float:  # wait (bounded) until the sink got ``expected`` spans: seconds waited
        start = time.monotonic()
        assert sink is not None
        while sink.spans < expected and time.monotonic() < start + 20:
            time.sleep(0.002)
        if sink.spans < expected:
            print(f"(the sink got {sink.spans} spans, not {expected})", flush=True)
        return time.monotonic() - start

    names = list(connections)
    spans_before = sink.spans if sink is not None else 0
    for _ in range(WARM_UP):
        for name in names:
            call(name)
    if traced and at_sink(spans_before + 3 * WARM_UP * len(traced)) > 1:
        # (the batch processor's timer, up to OTEL_BSP_SCHEDULE_DELAY: idle connections may have been closed
        # meanwhile, keep-alive timeout: new ones, in the same sessions)
        for name, url, _ in group:
            headers = connections[name].headers
            connections[name].close()
            connections[name] = RawHttp(url)
            connections[name].headers.update(headers)
    window_start = sink.spans if sink is not None else 0
    pids = {name: pid for name, _, pid in group}
    cpu = dict.fromkeys(names, 0.0)
    latencies: dict[str, list[float]] = {name: [] for name in names}
    for turn in range(-(-calls // block)):
        first = turn % len(names)
        for name in names[first:] + names[:first]:
            before = cpu_seconds(pids[name])
            for _ in range(min(block, calls - turn * block)):
                latencies[name].append(call(name))
            if name in traced:  # the batches this block filled, exported (by this target's export thread)
                made = sent[name] - WARM_UP
                at_sink(window_start + made // batch * batch * 3)
            cpu[name] += cpu_seconds(pids[name]) - before
    if traced and sink is not None and sink.spans != window_start + 3 * calls * len(traced):
        print(f"(the sink got {sink.spans - window_start} of the timed calls' spans: a window's export counts)")
    for connection in connections.values():
        connection.close()
    return {name: (calls / sum(latencies[name]), latencies[name], cpu[name] / calls) for name in names}


def run_stdio_round(calls: int, guard: list[str]) -> tuple[float, list[float], float]:
    """``wrap`` on stdio (``guard``), one client: calls/s, latencies, and the guard's CPU seconds per call."""
    client = RawClient(guard + SIGMA)
    try:
        init = client.request("initialize", INIT)
        assert "result" in init, init
        client.notify("notifications/initialized")
        for _ in range(WARM_UP):
            client.request("tools/call", CALL)
        latencies = []
        cpu_before = cpu_seconds(client.process.pid)
        start = time.perf_counter()
        for _ in range(calls):
            before = time.perf_counter()
            response = client.request("tools/call", CALL)
            latencies.append(time.perf_counter() - before)
        elapsed = time.perf_counter() - start
        cpu = cpu_seconds(client.process.pid) - cpu_before
        assert "result" in response, response
        return calls / elapsed, latencies, cpu / calls
    finally:
        client.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=500, help="sequential calls per client per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--clients", type=int, default=1, help="concurrent clients (one session each)")
    parser.add_argument("--no-direct", action="store_true", help="leave out the direct target")
    parser.add_argument(
        "--baseline",
        default=None,
        help="a checkout of another mcp-guard version (its root folder): also run its wrap --http, for before/after",
    )
    parser.add_argument("--fastmcp-python", default=sys.executable, help="a Python with fastmcp installed")
    parser.add_argument(
        "--oauth", action="store_true", help="also run wrap --http as an OAuth resource server (needs the auth extra)"
    )
    parser.add_argument(
        "--otel", action="store_true", help="also run wrap --http --otel, exporting to a loopback sink (the otel extra)"
    )
    parser.add_argument(
        "--log-level",
        default="warning",
        help="both guards' --log-level (the same for both: neither logs a line per call at info or warning)",
    )
    args = parser.parse_args()
    stdio_guard = guard(args.log_level)
    with contextlib.ExitStack() as stack:
        issuer = stack.enter_context(_running_issuer()) if args.oauth else None
        return _run(args, stdio_guard, issuer, SpanSink() if args.otel else None)


@contextmanager
def _running_issuer() -> Iterator[Any]:
    sys.path.insert(0, str(ROOT))  # the test authorization server of tests/auth
    from tests.auth.issuer import running_issuer

    with running_issuer() as issuer:
        yield issuer


def _run(args: argparse.Namespace, stdio_guard: list[str], issuer: Any, sink: SpanSink | None = None) -> int:
    has_fastmcp = subprocess.run([args.fastmcp_python, "-c", "import fastmcp"], capture_output=True).returncode == 0
    if not has_fastmcp:
        print(f"(fastmcp not importable by {args.fastmcp_python}: FastMCP proxy target skipped)")
    rates: dict[str, list[float]] = {}
    latencies: dict[str, list[float]] = {}
    cpus: dict[str, list[float]] = {}
    round_ratios: dict[str, list[float]] = {}
    paired_calls = args.calls
    if sink is not None and args.clients == 1:  # the calls' spans fill whole batches (see run_paired_round)
        batch = calls_per_batch()
        paired_calls = -(-args.calls // batch) * batch
        if paired_calls != args.calls:
            print(f"(the interleaved targets make {paired_calls} calls a round: whole batches of {batch} calls)")
    for i in range(args.rounds):
        targets: list[tuple[str, list[str], str, int | None, dict[str, str] | None]] = []
        if not args.no_direct:
            targets.append(("direct", DIRECT, "stdout", None, None))
        port = free_port()
        targets.append(("mcp-guard", guard(args.log_level, port) + SIGMA, "stderr", port, None))
        round_tokens: dict[str, list[list[str]]] = {}
        if issuer is not None:
            for name, fresh in (("mcp-guard oauth", False), ("mcp-guard oauth, new token per call", True)):
                port = free_port()
                resource = f"http://127.0.0.1:{port}/mcp"
                oauth = ("--oauth-issuer", issuer.url, "--oauth-resource", resource, "--oauth-scope", "mcp:tools")
                targets.append((name, guard(args.log_level, port, *oauth) + SIGMA, "stderr", port, None))
                per_client = WARM_UP + paired_calls if fresh else 0  # (paired_calls >= --calls)
                round_tokens[name] = [
                    [issuer.token(resource, jti=f"{c}-{n}") for n in range(1 + per_client)] for c in range(args.clients)
                ]
        if sink is not None:
            port = free_port()
            env = {"OTEL_EXPORTER_OTLP_ENDPOINT": sink.url, "OTEL_SERVICE_NAME": "mcp-guard-benchmark"}
            targets.append(("mcp-guard otel", guard(args.log_level, port, "--otel") + SIGMA, "stderr", port, env))
        if args.baseline:
            port = free_port()
            env = {"PYTHONPATH": args.baseline}
            targets.append(("baseline", guard(args.log_level, port) + SIGMA, "stderr", port, env))
        if has_fastmcp:
            port = free_port()
            proxy = [args.fastmcp_python, str(ROOT / "benchmarks" / "fastmcp_proxy.py"), "--http", f"127.0.0.1:{port}"]
            targets.append(("fastmcp proxy", [*proxy, "--", *SIGMA], "stderr", port, None))
        line = []
        results: dict[str, tuple[float, list[float], float]] = {}
        # Each variant (--otel; the two --oauth targets together) is measured beside a plain wrap --http of its
        # own, serving at once, their calls interleaved (run_paired_round; one client each: --clients 1 only).
        # versus[variant]: its CPU per call over its plain neighbour's, this round.
        versus: dict[str, float] = {}
        by_name = {t[0]: t for t in targets}
        groups = [["mcp-guard otel"], ["mcp-guard oauth", "mcp-guard oauth, new token per call"]]
        for variants in (g for g in groups if g[0] in by_name) if args.clients == 1 else ():
            if "mcp-guard" in results:  # (the first group's plain target is the round's "mcp-guard")
                port = free_port()
                plain = ("mcp-guard beside " + variants[0], guard(args.log_level, port) + SIGMA, "stderr", port, None)
            else:
                plain = by_name["mcp-guard"]
            with contextlib.ExitStack() as group:
                started = [
                    (t[0], *group.enter_context(serving(*t[1:]))) for t in [plain, *(by_name[n] for n in variants)]
                ]
                tokens = {name: each[0] for name, each in round_tokens.items()}
                traced = frozenset(n for n in variants if n == "mcp-guard otel")
                measured = run_paired_round(started, paired_calls, tokens, sink, traced)
            results.update((name, measured[name]) for name in ("mcp-guard", *variants) if name in measured)
            versus.update((name, measured[name][2] / measured[plain[0]][2]) for name in variants)
        for name, command, url_from, port_given, env in targets:
            if name in results:
                continue
            # The baseline runs in its own folder: ``python -m`` puts the working folder first on sys.path.
            cwd = args.baseline if name == "baseline" else None
            with serving(command, url_from, port_given, env, cwd) as (url, pid):
                results[name] = run_http_round(url, pid, args.calls, args.clients, round_tokens.get(name))
        for name, *_ in targets:
            rate, lat, cpu = results[name]
            rates.setdefault(name, []).append(rate)
            latencies.setdefault(name, []).extend(lat)
            cpus.setdefault(name, []).append(cpu)
            line.append(f"{name} {rate:7.1f}/s {cpu * 1e6:4.0f} µs CPU")
        rate, lat, cpu = run_stdio_round(args.calls, stdio_guard)
        rates.setdefault("mcp-guard stdio", []).append(rate)
        latencies.setdefault("mcp-guard stdio", []).extend(lat)
        cpus.setdefault("mcp-guard stdio", []).append(cpu)
        line.append(f"mcp-guard stdio {rate:7.1f}/s {cpu * 1e6:4.0f} µs CPU")
        print(f"round {i + 1}: " + "   ".join(line), flush=True)
        ratio = round_ratios.setdefault
        ratio("guard CPU per call, HTTP/stdio", []).append(cpus["mcp-guard"][-1] / cpu)

        def beside(name: str, versus: dict[str, float] = versus) -> float:
            """``name``'s CPU per call over its plain neighbour's (else the round's plain target's)."""
            return versus[name] if name in versus else cpus[name][-1] / cpus["mcp-guard"][-1]

        if issuer is not None:
            ratio("CPU per call, oauth/plain HTTP", []).append(beside("mcp-guard oauth"))
            fresh = beside("mcp-guard oauth, new token per call")
            ratio("CPU per call, oauth new token per call/plain HTTP", []).append(fresh)
        if sink is not None:
            ratio("CPU per call, otel/plain HTTP", []).append(beside("mcp-guard otel"))
        if args.baseline:
            ratio("baseline CPU per call, HTTP/stdio", []).append(cpus["baseline"][-1] / cpu)
            ratio("mcp-guard/baseline throughput", []).append(rates["mcp-guard"][-1] / rates["baseline"][-1])
        if "direct" in rates:
            ratio("mcp-guard/direct throughput", []).append(rates["mcp-guard"][-1] / rates["direct"][-1])
        if has_fastmcp:
            ratio("mcp-guard/fastmcp proxy throughput", []).append(rates["mcp-guard"][-1] / rates["fastmcp proxy"][-1])
    print(
        f"median over {args.rounds} rounds, {args.clients} client(s) x {args.calls} sequential tools/call "
        "(HTTP targets over streamable HTTP):"
    )
    median = {name: statistics.median(values) for name, values in rates.items()}
    cpu_median = {name: statistics.median(values) for name, values in cpus.items()}
    for name, value in median.items():
        lat = latencies[name]
        print(
            f"  {name:<35} {value:8.1f} calls/s   p50 {percentile(lat, 0.5) * 1e3:6.2f} ms"
            f"   p99 {percentile(lat, 0.99) * 1e3:6.2f} ms   server CPU {cpu_median[name] * 1e6:5.0f} µs/call"
        )
    print(
        "  ratios, median of the rounds' own (and their spread, lowest-highest): "
        + ";  ".join(
            f"{name} = {statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"
            for name, values in round_ratios.items()
        )
    )
    if sink is not None:
        print(f"  the OTLP sink got {sink.spans} spans in {sink.requests} requests (3 per traced call expected)")
        plain = cpu_median["mcp-guard"]
        for shape, context in (("as the rounds' calls (no trace context)", False), ("with trace context", True)):
            calling, exporting = tracing_cpu(sink, context=context)
            print(
                f"  tracing in process (CPU), {shape}: {calling * 1e6:.1f} µs a call on the calling thread, "
                f"{exporting * 1e6:.1f} µs exporting its 3 spans (OTLP encoding, POST); over plain wrap --http's "
                f"{plain * 1e6:.0f} µs per call: {(plain + calling + exporting) / plain:.3f}"
            )
    if issuer is not None:
        cached, fresh = verification_cpu(issuer)
        plain = cpu_median["mcp-guard"]
        print(
            f"  token verification in process (CPU): {cached * 1e6:.1f} µs a request with a token seen before, "
            f"{fresh * 1e6:.0f} µs with a new one (RS256); over plain wrap --http's {plain * 1e6:.0f} µs per call: "
            f"{(plain + cached) / plain:.3f} and {(plain + fresh) / plain:.3f}"
        )
    return 0


class SpanSink:
    """An OTLP/HTTP traces sink on loopback (a thread of this process): ``POST /v1/traces`` answered 200 at
    once; ``spans`` counts the spans of the ``ExportTraceServiceRequest`` bodies it got."""

    def __init__(self) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

        self.spans = 0
        self.requests = 0
        sink = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                request = ExportTraceServiceRequest.FromString(body)
                sink.requests += 1
                sink.spans += sum(len(ss.spans) for rs in request.resource_spans for ss in rs.scope_spans)
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def tracing_cpu(sink: SpanSink, calls: int = 6_000, context: bool = True) -> tuple[float, float]:
    """CPU seconds of tracing one call in this process: the tracer's part on the calling thread (a call opened
    in its HTTP session, with trace context in ``_meta`` and in its HTTP headers when ``context``, else none as
    the rounds' calls, judged, forwarded, ended: ``telemetry.spans``), and
    the export thread's (its three spans encoded by the OTLP exporter and POSTed to ``sink``; flushed every
    150 calls, less than one batch of the batch processor, 170, so that none is dropped). The sink's own
    parsing, in its thread, is not counted."""
    from opentelemetry.sdk.trace.export import SpanExportResult

    from mcp_guard.calls.observer import Origin, tracer
    from mcp_guard.telemetry.export import CallSpanExporter
    from mcp_guard.telemetry.setup import start_tracing, stop_tracing

    exported = [0.0]

    class TimedExporter(CallSpanExporter):
        def export(self, spans: Any) -> SpanExportResult:
            start = time.thread_time()
            try:
                return super().export(spans)
            finally:
                exported[0] += time.thread_time() - start

    provider = start_tracing(exporter=TimedExporter(endpoint=f"{sink.url}/v1/traces"))
    try:
        spans = tracer()
        assert spans is not None
        meta = {"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"} if context else None
        header = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" if context else None
        origin = Origin("9f86d081884c7d659a2feaa0c55ad015", header)
        calling = 0.0
        for done in range(0, calls, 150):
            start = time.thread_time()
            for n in range(done, done + 150):
                trace = spans.call_started("", "add", n, meta, False, origin)
                trace.judged(time.time_ns(), None, ())
                trace.forwarding()
                trace.ended("ok", None)
            calling += time.thread_time() - start
            provider.force_flush()
    finally:
        stop_tracing(provider)
    count = calls // 150 * 150
    return calling / count, exported[0] / count


def verification_cpu(issuer: Any, repeats: int = 20_000, fresh: int = 300) -> tuple[float, float]:
    """CPU seconds of ``TokenVerifier.verify_header`` per request, in this process: a token verified
    before (the verdict reused), and tokens never seen (signature and claims checked), the JWKS cached."""
    import asyncio

    from mcp_guard.auth.verifier import TokenVerifier
    from mcp_guard.oauth_config import OAuthSettings

    resource = "http://127.0.0.1:1/mcp"

    async def measure() -> tuple[float, float]:
        verifier = TokenVerifier(OAuthSettings(issuer=issuer.url, resource=resource, scopes=("mcp:tools",)))
        try:
            header = "Bearer " + issuer.token(resource)
            await verifier.verify_header(header)  # the JWKS fetched, the verdict kept
            start = time.process_time()
            for _ in range(repeats):
                await verifier.verify_header(header)
            cached = (time.process_time() - start) / repeats
            headers = ["Bearer " + issuer.token(resource, jti=str(n)) for n in range(fresh)]
            start = time.process_time()
            for each in headers:
                await verifier.verify_header(each)
            return cached, (time.process_time() - start) / fresh
        finally:
            await verifier.aclose()

    return asyncio.run(measure())


if __name__ == "__main__":
    sys.exit(main())
