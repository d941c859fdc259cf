"""Time and peak memory of one big ``tools/call`` on stdio: direct, a bare relay, and ``mcp-guard wrap``.

Issue 14 item 4. The upstream is a minimal raw stdio server (in this file: it reads one line,
parses it, and answers), so the figures are the relays' cost, not an SDK's. Two cases:

- ``take``: a call with one big string argument (``--mib``, 16 MiB by default) and a small answer;
- ``echo``: the same argument, echoed back whole in the answer's text content.

Targets: ``direct`` (the client talks to the upstream), ``bare relay`` (a Python process that
parses each line with ``json.loads`` and writes ``json.dumps`` of it on, both ways: the floor for a
guard, which must read a whole message before it may forward it) and ``mcp-guard`` (``wrap``).
Rounds of the targets are interleaved (a fresh process each), and the median of each target's
call times is compared. Memory: the relay process's peak resident set (``VmHWM``, what
``/usr/bin/time -v`` reports as maximum resident set size) minus its resident set once idle
(after ``tools/list``, before the first big call), as a multiple of the message's size.

Usage::

    python benchmarks/big_message.py [--mib 16] [--calls 3] [--rounds 3] [--case take|echo|both] [--before DIR]

``--before DIR`` adds ``wrap`` run with DIR first on ``PYTHONPATH`` (another checkout), in the same
alternated rounds; run from a folder that is not a checkout (``python -m`` puts it first). It prints
then each round's own ratio mcp-guard/before of the median call time (>1: this checkout slower), as
the median of the rounds with quartiles and range. For issue 23::

    cd /tmp && PYTHONPATH=/path/to/this python /path/to/this/benchmarks/big_message.py --rounds 9 --before DIR

Goals (issue 14): ``mcp-guard/bare relay`` time <= 1.2 and peak above idle <= 3x the message.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

from relay_throughput import spread  # (this folder's benchmark, on sys.path when a script runs)

ROOT = Path(__file__).resolve().parents[1]

UPSTREAM_CODE = r"""
import json, sys
read, write = sys.stdin.buffer.readline, sys.stdout.buffer
SCHEMA = {"type": "object", "properties": {"data": {"type": "string"}}, "required": ["data"]}
TOOLS = [{"name": n, "inputSchema": SCHEMA} for n in ("take", "echo")]
def answer(i, result):
    write.write(json.dumps({"jsonrpc": "2.0", "id": i, "result": result}, separators=(",", ":")).encode() + b"\n")
    write.flush()
while True:
    line = read()
    if not line:
        break
    m = json.loads(line)
    if "id" not in m or "method" not in m:
        continue
    method = m["method"]
    if method == "initialize":
        answer(m["id"], {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}},
                         "serverInfo": {"name": "big", "version": "0"}})
    elif method == "tools/list":
        answer(m["id"], {"tools": TOOLS})
    elif method == "tools/call":
        data = m["params"]["arguments"]["data"]
        text = data if m["params"]["name"] == "echo" else str(len(data))
        answer(m["id"], {"content": [{"type": "text", "text": text}], "isError": False})
    else:
        answer(m["id"], {})
"""

BARE_RELAY_CODE = r"""
import json, subprocess, sys, threading
child = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def pump(read, write):
    while True:
        line = read.readline()
        if not line:
            break
        write.write(json.dumps(json.loads(line), separators=(",", ":")).encode() + b"\n")
        write.flush()
    write.close()
up = threading.Thread(target=pump, args=(sys.stdin.buffer, child.stdin))
up.start()
pump(child.stdout, sys.stdout.buffer)
up.join()
child.wait()
"""

UPSTREAM = [sys.executable, "-c", UPSTREAM_CODE]
TARGETS = {
    "direct": UPSTREAM,
    "bare relay": [sys.executable, "-c", BARE_RELAY_CODE, *UPSTREAM],
    "mcp-guard": [sys.executable, "-m", "mcp_guard", "wrap", "--log-level", "warning", "--", *UPSTREAM],
}


def rss_kib(pid: int, field: str) -> int:
    """``VmRSS`` or ``VmHWM`` of a process, in KiB (Linux ``/proc``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} for {pid}")


class Client:
    """A blocking newline-delimited JSON-RPC client over a child's pipes (big answers are read, not parsed)."""

    def __init__(self, command: list[str]) -> None:
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdin = self.process.stdin
        self.stdout = self.process.stdout
        self.next_id = 0
        self.rest = b""

    def readline(self) -> bytes:
        parts = [self.rest]
        while b"\n" not in parts[-1]:
            chunk = self.stdout.read(1 << 20)
            if not chunk:
                raise RuntimeError("the target closed its output")
            parts.append(chunk)
        data = b"".join(parts)
        end = data.index(b"\n")
        self.rest = data[end + 1 :]
        return data[:end]

    def send(self, data: bytes) -> None:
        self.stdin.write(data)

    def request(self, method: str, params: dict[str, object]) -> dict[str, object]:
        self.next_id += 1
        self.send(
            json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}).encode() + b"\n"
        )
        answer: dict[str, object] = json.loads(self.readline())
        assert answer.get("id") == self.next_id and "result" in answer, answer
        return answer

    def close(self) -> None:
        self.stdin.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


HEAD = re.compile(rb'^\{"jsonrpc":"2.0","id":(\d+),"result":')


def big_line(request_id: int, tool: str, data: str) -> bytes:
    message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call"}
    head = json.dumps(message, separators=(",", ":"))[:-1]
    return f'{head},"params":{{"name":"{tool}","arguments":{{"data":"{data}"}}}}}}\n'.encode()


def run_round(command: list[str], tool: str, data: str, calls: int) -> tuple[list[float], float]:
    """One fresh target: handshake, list, then ``calls`` big calls of ``tool``.

    Returns:
        each call's seconds, and the relay's peak resident set above idle, in bytes (0 for direct).
    """
    client = Client(command)
    try:
        client.request(
            "initialize",
            {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}},
        )
        client.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        client.request("tools/list", {})
        client.request("tools/call", {"name": "take", "arguments": {"data": "warm"}})
        pid = client.process.pid
        idle = rss_kib(pid, "VmRSS")
        times = []
        for _ in range(calls):
            client.next_id += 1
            line = big_line(client.next_id, tool, data)
            start = time.perf_counter()
            client.send(line)
            answer = client.readline()
            times.append(time.perf_counter() - start)
            match = HEAD.match(answer[:100])
            assert match and int(match.group(1)) == client.next_id, answer[:200]
            assert len(answer) > len(data) if tool == "echo" else len(answer) < 1000, answer[:200]
        peak = rss_kib(pid, "VmHWM")
        above = 0.0 if command is UPSTREAM else (peak - idle) * 1024.0
        return times, above
    finally:
        client.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--mib", type=float, default=16.0, help="the argument's size, in MiB")
    parser.add_argument("--calls", type=int, default=3, help="big calls per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--case", choices=("take", "echo", "both"), default="both")
    parser.add_argument("--before", metavar="DIR", help="also time wrap with DIR first on PYTHONPATH")
    args = parser.parse_args()
    targets = dict(TARGETS)
    if args.before:
        targets["before"] = ["env", f"PYTHONPATH={Path(args.before).resolve()}", *TARGETS["mcp-guard"]]
    size = int(args.mib * (1 << 20))
    data = base64.b64encode(os.urandom(size * 3 // 4 + 3)).decode()[:size]
    message = len(big_line(1, "take", data))
    cases = ("take", "echo") if args.case == "both" else (args.case,)
    for tool in cases:
        times: dict[str, list[float]] = {name: [] for name in targets}
        memory: dict[str, list[float]] = {name: [] for name in targets}
        rounds: dict[str, list[float]] = {name: [] for name in targets}
        for i in range(args.rounds):
            shown = []
            for name, command in targets.items():
                spent, above = run_round(command, tool, data, args.calls)
                times[name] += spent
                rounds[name].append(statistics.median(spent))
                memory[name].append(above)
                shown.append(f"{name} {statistics.median(spent) * 1e3:7.1f} ms")
            print(f"{tool} round {i + 1}: " + "   ".join(shown), flush=True)
        print(f"{tool}: a {message / (1 << 20):.1f} MiB tools/call, median over {args.rounds} rounds of {args.calls}:")
        median = {name: statistics.median(values) for name, values in times.items()}
        for name in targets:
            peak = max(memory[name]) / message
            shown_peak = "" if name == "direct" else f"   peak above idle {peak:4.2f}x the message"
            ratio = median[name] / median["direct"]
            span = f"rounds {min(rounds[name]) * 1e3:.1f}-{max(rounds[name]) * 1e3:.1f} ms"
            print(f"  {name:<11} {median[name] * 1e3:8.1f} ms   {ratio:4.2f}x direct   {span}{shown_peak}")
        print(f"  mcp-guard/bare relay = {median['mcp-guard'] / median['bare relay']:.2f}", end="")
        if "before" in median:
            print(f";  mcp-guard/before = {median['mcp-guard'] / median['before']:.2f}", end="")
        print(flush=True)
        if "before" in median:  # each round's own ratio of its median call (the rounds alternate the targets)
            ratios = [a / b for a, b in zip(rounds["mcp-guard"], rounds["before"], strict=True)]
            print(f"  mcp-guard/before, each round's own (>1: mcp-guard slower): {spread(ratios)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
