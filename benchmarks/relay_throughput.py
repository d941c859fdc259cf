"""Throughput of sequential ``tools/call`` on stdio: through ``mcp-guard wrap`` vs direct.

The upstream is the Sigma fixture server (an SDK 2.x low-level server). The client is a
minimal raw JSON-RPC client (newline-delimited JSON over the process's pipes), so the
figure measures the guard's cost, not a client library's. Direct and guarded rounds are
interleaved and the median of each is compared, so machine noise hits both alike.

Usage::

    python benchmarks/relay_throughput.py [--calls 2000] [--rounds 3] [--era handshake|modern]

Prints calls/s for each round and the ratio guard/direct (target: >= 0.7).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SERVER = [sys.executable, str(ROOT / "fixtures" / "sigma" / "server.py")]
GUARD = [sys.executable, "-m", "mcp_guard", "wrap", "--log-level", "warning", "--"]


class RawClient:
    """A blocking newline-delimited JSON-RPC client over a child process's pipes."""

    def __init__(self, command: list[str]) -> None:
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdin = self.process.stdin
        self.stdout = self.process.stdout
        self.next_id = 0

    def request(self, method: str, params: dict[str, object]) -> dict[str, object]:
        self.next_id += 1
        line = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        self.stdin.write(line.encode() + b"\n")
        while True:
            raw = self.stdout.readline()
            if not raw:
                raise RuntimeError("the server closed its output")
            message = json.loads(raw)
            if message.get("id") == self.next_id and "method" not in message:
                return message  # type: ignore[no-any-return]

    def notify(self, method: str) -> None:
        self.stdin.write(json.dumps({"jsonrpc": "2.0", "method": method}).encode() + b"\n")

    def close(self) -> None:
        self.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()


MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def run_round(command: list[str], calls: int, era: str) -> float:
    """Start ``command``, connect, list tools, make ``calls`` sequential calls; return calls/s."""
    client = RawClient(command)
    try:
        extra: dict[str, object] = {}
        if era == "handshake":
            init = client.request(
                "initialize",
                {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "bench", "version": "0"},
                },
            )
            assert "result" in init, init
            client.notify("notifications/initialized")
        else:
            extra = {"_meta": MODERN_META}
        listed = client.request("tools/list", dict(extra))
        assert "result" in listed, listed
        params = {"name": "add", "arguments": {"a": 2, "b": 3}, **extra}
        for _ in range(50):  # warm-up
            client.request("tools/call", params)
        start = time.perf_counter()
        for _ in range(calls):
            response = client.request("tools/call", params)
        elapsed = time.perf_counter() - start
        assert "result" in response and not response["result"].get("isError"), response  # type: ignore[union-attr]
        return calls / elapsed
    finally:
        client.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--era", choices=("handshake", "modern"), default="handshake")
    args = parser.parse_args()
    direct: list[float] = []
    guarded: list[float] = []
    for i in range(args.rounds):
        direct.append(run_round(SERVER, args.calls, args.era))
        guarded.append(run_round(GUARD + SERVER, args.calls, args.era))
        print(f"round {i + 1}: direct {direct[-1]:7.1f} calls/s   guard {guarded[-1]:7.1f} calls/s")
    d, g = statistics.median(direct), statistics.median(guarded)
    print(f"median over {args.rounds} rounds of {args.calls} sequential tools/call ({args.era} era):")
    print(f"  direct {d:7.1f} calls/s   guard {g:7.1f} calls/s   guard/direct = {g / d:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
