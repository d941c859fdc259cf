"""Throughput and latency of sequential ``tools/call`` over streamable HTTP: direct, through
``mcp-guard wrap --http``, and through FastMCP's proxy (``fastmcp.server.create_proxy``).

Targets, each started fresh per round:

- direct: the Sigma fixture server served over the SDK's streamable HTTP transport
  (``tests/e2e/sigma_http_server.py``);
- mcp-guard: ``mcp-guard wrap --http 127.0.0.1:0 -- python fixtures/sigma/server.py``;
- fastmcp proxy: ``benchmarks/fastmcp_proxy.py --http 127.0.0.1:PORT -- python fixtures/sigma/server.py``
  (skipped when ``--fastmcp-python`` cannot import fastmcp).

The client is a raw HTTP client (one connection, JSON-RPC POSTs, SSE or JSON answers), so
the figures measure the servers and proxies, not a client library. Rounds of the targets
are interleaved and medians compared, so machine noise hits all alike.

Usage::

    python benchmarks/http_throughput.py [--calls 500] [--rounds 3] [--fastmcp-python PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2
from relay_throughput import summarize  # (this script's folder is on sys.path when it runs)

ROOT = Path(__file__).resolve().parents[1]
SIGMA = [sys.executable, str(ROOT / "fixtures" / "sigma" / "server.py")]
DIRECT = [sys.executable, str(ROOT / "tests" / "e2e" / "sigma_http_server.py")]
INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def serving(command: list[str], url_from: str, port: int | None = None) -> Iterator[str]:
    """Start a server; yield its MCP endpoint URL once it answers; stop it after."""
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"}
    )
    try:
        url = ""
        deadline = time.monotonic() + 60
        stream = process.stdout if url_from == "stdout" else process.stderr
        assert stream is not None
        if port is not None:
            url = f"http://127.0.0.1:{port}/mcp"
        else:
            while time.monotonic() < deadline and not url:
                line = stream.readline()
                if not line:
                    raise RuntimeError(f"{command[1]} ended before it listened")
                found = re.search(r"(http://127\.0\.0\.1:\d+/mcp)", line)
                url = found.group(1) if found else ""
        while time.monotonic() < deadline:  # until it accepts connections
            try:
                httpx2.post(url, content=b"{}", timeout=2)
                break
            except httpx2.HTTPError:
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


def messages(response: httpx2.Response) -> list[dict[str, Any]]:
    """The JSON-RPC messages of one answer (a JSON body, or an SSE stream's data lines)."""
    if response.headers.get("content-type", "").startswith("application/json"):
        body = response.json()
        return body if isinstance(body, list) else [body]
    return [
        json.loads(line[5:]) for line in response.text.splitlines() if line.startswith("data:") and line[5:].strip()
    ]


def run_round(url: str, calls: int) -> tuple[float, list[float]]:
    """Initialize, then ``calls`` sequential tools/call; return calls/s and each call's latency (s)."""
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    with httpx2.Client(timeout=60) as client:
        init = client.post(
            url, json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT}, headers=headers
        )
        init.raise_for_status()
        session = init.headers.get("mcp-session-id")
        if session:
            headers["Mcp-Session-Id"] = session
        headers["MCP-Protocol-Version"] = messages(init)[-1]["result"]["protocolVersion"]
        client.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "add", "arguments": {"a": 2, "b": 3}},
        }
        for _ in range(30):  # warm-up (and the guard's first listing)
            client.post(url, json=body, headers=headers)
        latencies = []
        start = time.perf_counter()
        for i in range(calls):
            body["id"] = i + 2
            before = time.perf_counter()
            answer = messages(client.post(url, json=body, headers=headers))[-1]
            latencies.append(time.perf_counter() - before)
            assert answer["id"] == i + 2 and answer["result"]["isError"] is False, answer
        return calls / (time.perf_counter() - start), latencies


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--fastmcp-python", default=sys.executable, help="a Python with fastmcp installed")
    args = parser.parse_args()
    has_fastmcp = subprocess.run([args.fastmcp_python, "-c", "import fastmcp"], capture_output=True).returncode == 0
    if not has_fastmcp:
        print(f"(fastmcp not importable by {args.fastmcp_python}: FastMCP proxy target skipped)")
    rates: dict[str, list[float]] = {}
    latencies: dict[str, list[float]] = {}
    for i in range(args.rounds):
        targets: list[tuple[str, list[str], str, int | None]] = [
            ("direct", DIRECT, "stdout", None),
            (
                "mcp-guard",
                [
                    sys.executable,
                    "-m",
                    "mcp_guard",
                    "wrap",
                    "--log-level",
                    "info",
                    "--http",
                    "127.0.0.1:0",
                    "--",
                    *SIGMA,
                ],
                "stderr",
                None,
            ),
        ]
        if has_fastmcp:
            port = free_port()
            proxy = [args.fastmcp_python, str(ROOT / "benchmarks" / "fastmcp_proxy.py"), "--http", f"127.0.0.1:{port}"]
            targets.append(("fastmcp proxy", [*proxy, "--", *SIGMA], "stderr", port))
        line = []
        for name, command, url_from, port_given in targets:
            with serving(command, url_from, port_given) as url:
                rate, lat = run_round(url, args.calls)
            rates.setdefault(name, []).append(rate)
            latencies.setdefault(name, []).extend(lat)
            line.append(f"{name} {rate:7.1f}/s")
        print(f"round {i + 1}: " + "   ".join(line))
    title = f"median over {args.rounds} rounds of {args.calls} sequential tools/call over streamable HTTP:"
    summarize(title, rates, latencies, "ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
