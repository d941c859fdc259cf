"""Throughput and latency of sequential ``tools/call`` on stdio: direct, through ``mcp-guard wrap``,
and through FastMCP's proxy (``fastmcp.server.create_proxy``), over the same upstream.

The upstream is the Sigma fixture server (an SDK 2.x low-level server). The client is a
minimal raw JSON-RPC client (newline-delimited JSON over the process's pipes), so the
figure measures the proxies' cost, not a client library's. Rounds of the targets are
interleaved and the median of each is compared, so machine noise hits all alike.

Usage::

    python benchmarks/relay_throughput.py [--calls 2000] [--rounds 3] [--era handshake|modern]
        [--fastmcp-python PATH] [--before DIR] [--present-for HOST]

``--fastmcp-python`` names a Python that has ``fastmcp`` installed (default: this one; the
FastMCP target is skipped when it cannot import fastmcp). ``--before DIR`` adds ``wrap`` run with DIR
first on ``PYTHONPATH`` (another checkout of mcp-guard, say the tree before a refactor), in the same
alternated rounds. ``--present-for HOST`` adds ``wrap --present-for HOST`` (issue 24: the mapping back
adds at most 5% to a judged call): every target then calls ``grep`` (five optional properties) with the
pattern alone, and the present-for target sends it as that host's model does (openai-strict: every optional
property as ``null``, mapped back to absent). Prints calls/s and p50/p99
latency per target, and the ratios guard/direct (target >= 0.8) and guard/FastMCP (>= 2); and each target's own
process CPU per call, with the ratios present-for/mcp-guard and before/mcp-guard of each round's CPU (median and
spread): how much the mapping back adds to a judged call's CPU (issue 24 item 6), and a refactor's cost. With
``--before``, also each round's own mcp-guard/before of the time per call and of the CPU per call (>1: this
checkout costs more), median, quartiles and range. For issue 23, from a folder that is not a checkout::

    cd /tmp && PYTHONPATH=/path/to/this python /path/to/this/benchmarks/relay_throughput.py --rounds 15 --before DIR

``--paired`` (with ``--present-for`` and/or ``--before``) measures those last figures with less noise: each round
starts the guards at once over their own upstreams, ``wrap`` twice (the reference and a control), ``wrap
--present-for HOST`` and/or ``before`` (``wrap`` with ``--before``'s DIR first on ``PYTHONPATH``; every guard then
calls ``grep``),
connects and warms each, then gives each in turn a block of :data:`BLOCK` calls (the order rotated each block),
summing each guard's own CPU over its blocks: they share every slow spell of the machine. Printed: the
median over rounds of the paired ratios present-for/wrap, before/wrap and control/wrap (the latter is the
measurement's own floor: two identical guards), their spreads, and the CPU microseconds per call each adds. Usage::

    python benchmarks/relay_throughput.py --present-for openai-strict --paired [--calls 2000] [--rounds 15]
    cd /tmp && PYTHONPATH=/path/to/this python /path/to/this/benchmarks/relay_throughput.py --before DIR --paired \
        --rounds 15
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SERVER = [sys.executable, str(ROOT / "fixtures" / "sigma" / "server.py")]
GUARD = [sys.executable, "-m", "mcp_guard", "wrap", "--log-level", "warning", "--"]


def cpu_seconds(pid: int) -> float:
    """CPU time of process ``pid`` itself (all its threads, not its children), in seconds.

    From ``/proc/PID/task/*/schedstat`` (nanoseconds on the CPU), finer than the clock ticks of
    ``/proc/PID/stat``.
    """
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat", "rb") as stat:
                total += int(stat.read().split()[0])
        except FileNotFoundError:  # a thread that ended meanwhile
            continue
    return total / 1e9


class RawClient:
    """A blocking newline-delimited JSON-RPC client over a child process's pipes."""

    def __init__(self, command: list[str]) -> None:
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdin = self.process.stdin
        # Buffered reads: ``readline`` on the raw (bufsize=0) pipe reads one byte per system
        # call, a client cost that would weigh on every target alike and flatter the ratios.
        self.stdout = io.BufferedReader(self.process.stdout, buffer_size=1 << 16)
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


CALLS: dict[str, dict[str, object]] = {
    "add": {"name": "add", "arguments": {"a": 2, "b": 3}},
    "grep": {"name": "grep", "arguments": {"pattern": "x"}},
    "grep-strict": {
        "name": "grep",
        "arguments": {"pattern": "x", "path": None, "glob": None, "ignore_case": None, "context": None, "limit": None},
    },
}
"""The call each target makes, by name (``--present-for``: ``grep``, and ``grep-strict`` as an OpenAI strict model
sends it)."""


def run_round(command: list[str], calls: int, era: str, call: str = "add") -> tuple[float, list[float], float]:
    """Start ``command``, connect, list tools, make ``calls`` sequential calls of :data:`CALLS` ``[call]``.

    Returns:
        calls per second, each call's latency in seconds, and the CPU seconds per call of ``command``'s own
        process (:func:`cpu_seconds`: the guard's, not its upstream's) over the timed calls.
    """
    client, params = connected(command, era, call)
    try:
        latencies = []
        clock = time.perf_counter
        cpu_before = cpu_seconds(client.process.pid)
        start = clock()
        for _ in range(calls):
            before = clock()
            response = client.request("tools/call", params)
            latencies.append(clock() - before)
        elapsed = clock() - start
        cpu = (cpu_seconds(client.process.pid) - cpu_before) / calls
        assert "result" in response and not response["result"].get("isError"), response  # type: ignore[union-attr]
        return calls / elapsed, latencies, cpu
    finally:
        client.close()


BLOCK = 50
"""Calls a guard gets in a row in ``--paired`` mode before the next guard's turn."""


def connected(command: list[str], era: str, call: str) -> tuple[RawClient, dict[str, object]]:
    """A client of ``command``, initialized (or with the modern era's ``_meta``), its tools listed and 50 calls of
    :data:`CALLS` ``[call]`` made (warm-up); with the params to call it with."""
    client = RawClient(command)
    try:
        extra: dict[str, object] = {}
        if era == "handshake":
            init = client.request(
                "initialize",
                {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}},
            )
            assert "result" in init, init
            client.notify("notifications/initialized")
        else:
            extra = {"_meta": MODERN_META}
        listed = client.request("tools/list", dict(extra))
        assert "result" in listed, listed
        params = {**CALLS[call], **extra}
        for _ in range(50):  # warm-up
            client.request("tools/call", params)
    except BaseException:
        client.close()
        raise
    return client, params


def paired_round(targets: dict[str, tuple[list[str], str]], calls: int, era: str) -> dict[str, float]:
    """One ``--paired`` round: every target (name -> (command, call)) started and warmed, then ``calls`` calls
    each, given in blocks of :data:`BLOCK` in turn (the order rotated each block). Returns each target's own
    process CPU seconds per call (:func:`cpu_seconds`, summed over its blocks only)."""
    clients = {name: connected(command, era, call) for name, (command, call) in targets.items()}
    try:
        spent = dict.fromkeys(targets, 0.0)
        names = list(targets)
        for block in range(calls // BLOCK):
            turn = block % len(names)
            for name in names[turn:] + names[:turn]:
                client, params = clients[name]
                before = cpu_seconds(client.process.pid)
                for _ in range(BLOCK):
                    response = client.request("tools/call", params)
                spent[name] += cpu_seconds(client.process.pid) - before
                assert "result" in response and not response["result"].get("isError"), response  # type: ignore[union-attr]
        return {name: total / (calls // BLOCK * BLOCK) for name, total in spent.items()}
    finally:
        for client, _ in clients.values():
            client.close()


def paired(host: str | None, before: str | None, calls: int, rounds: int, era: str) -> None:
    """``--paired``: the module docstring's last paragraph (``host``, ``before``: the options' values or None)."""
    targets = {"wrap": (GUARD + SERVER, "grep"), "control": (GUARD + SERVER, "grep")}
    if host:
        strict = "grep-strict" if host == "openai-strict" else "grep"
        targets["present-for"] = ([*GUARD[:-1], "--present-for", host, "--", *SERVER], strict)
    if before:
        targets["before"] = (["env", f"PYTHONPATH={Path(before).resolve()}", *GUARD, *SERVER], "grep")
    found: list[dict[str, float]] = []
    for i in range(rounds):
        cpu = paired_round(targets, calls, era)
        found.append(cpu)
        print(f"round {i + 1}: " + "   ".join(f"{name} {value * 1e6:6.1f} µs CPU/call" for name, value in cpu.items()))
    print(f"{rounds} rounds of {calls} calls per guard, blocks of {BLOCK} alternated ({era} era), each guard's CPU:")
    for name in targets:
        print(f"  {name:<12} {statistics.median(r[name] for r in found) * 1e6:6.1f} µs/call (median)")
    for name in [name for name in targets if name != "wrap"]:
        added = statistics.median((r[name] - r["wrap"]) * 1e6 for r in found)
        print(f"  {name}/wrap = {spread([r[name] / r['wrap'] for r in found])}, {added:+.1f} µs/call")


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values``, nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def has_fastmcp(python: str) -> bool:
    """Whether ``python`` can import fastmcp."""
    return subprocess.run([python, "-c", "import fastmcp"], capture_output=True).returncode == 0


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--era", choices=("handshake", "modern"), default="handshake")
    parser.add_argument("--fastmcp-python", default=sys.executable, help="a Python with fastmcp installed")
    parser.add_argument("--before", metavar="DIR", help="also time wrap with DIR first on PYTHONPATH")
    parser.add_argument("--present-for", metavar="HOST", help="also time wrap --present-for HOST (calls grep)")
    parser.add_argument(
        "--paired", action="store_true", help="with --present-for and/or --before: paired blocks, see the docstring"
    )
    args = parser.parse_args()
    if args.paired:
        if not args.present_for and not args.before:
            parser.error("--paired needs --present-for HOST or --before DIR")
        paired(args.present_for, args.before, args.calls, args.rounds, args.era)
        return 0
    targets = {"direct": SERVER, "mcp-guard": GUARD + SERVER}
    call = {name: "add" for name in ("direct", "mcp-guard", "before", "fastmcp proxy")}
    if args.present_for:
        targets["present-for"] = [*GUARD[:-1], "--present-for", args.present_for, "--", *SERVER]
        call = {name: "grep" for name in call}
        call["present-for"] = "grep-strict" if args.present_for == "openai-strict" else "grep"
    if args.before:
        targets["before"] = ["env", f"PYTHONPATH={Path(args.before).resolve()}", *GUARD, *SERVER]
    if has_fastmcp(args.fastmcp_python):
        targets["fastmcp proxy"] = [args.fastmcp_python, str(ROOT / "benchmarks" / "fastmcp_proxy.py"), "--", *SERVER]
    else:
        print(f"(fastmcp not importable by {args.fastmcp_python}: FastMCP proxy target skipped)")
    rates: dict[str, list[float]] = {name: [] for name in targets}
    latencies: dict[str, list[float]] = {name: [] for name in targets}
    cpus: dict[str, list[float]] = {name: [] for name in targets}
    for i in range(args.rounds):
        line = []
        for name, command in targets.items():
            rate, lat, cpu = run_round(command, args.calls, args.era, call[name])
            rates[name].append(rate)
            latencies[name] += lat
            cpus[name].append(cpu)
            line.append(f"{name} {rate:7.1f}/s {cpu * 1e6:5.0f} µs CPU")
        print(f"round {i + 1}: " + "   ".join(line))
    title = f"median over {args.rounds} rounds of {args.calls} sequential tools/call on stdio ({args.era} era):"
    summarize(title, rates, latencies, "µs")
    for name, values in cpus.items():  # the process's own CPU per call (the guard's, or the direct server's)
        print(f"  {name:<14} CPU {statistics.median(values) * 1e6:6.0f} µs/call (its process, not its upstream)")
    for other in ("present-for", "before"):
        if other in cpus:  # (the ratio of each round's own, its median and spread: the rounds alternate)
            ratios = [a / b for a, b in zip(cpus[other], cpus["mcp-guard"], strict=True)]
            print(
                f"  CPU per call, {other}/mcp-guard = {statistics.median(ratios):.3f} "
                f"({min(ratios):.3f}-{max(ratios):.3f})"
            )
    if "before" in rates:  # each round's own ratio (the rounds alternate the targets): their median and spread
        print("  mcp-guard/before, each round's own (>1: mcp-guard costs more):")
        slower = [b / a for a, b in zip(rates["mcp-guard"], rates["before"], strict=True)]
        print(f"    time per call {spread(slower)}")
        print(f"    CPU per call  {spread([a / b for a, b in zip(cpus['mcp-guard'], cpus['before'], strict=True)])}")
    return 0


def spread(values: list[float]) -> str:
    """``values`` (one per round) as "median (quartiles q1-q3, range min-max)", three decimals."""
    ordered = sorted(values)
    quartiles = statistics.quantiles(ordered, n=4, method="inclusive") if len(ordered) > 1 else [ordered[0]] * 3
    return (
        f"{statistics.median(ordered):.3f} (quartiles {quartiles[0]:.3f}-{quartiles[2]:.3f}, "
        f"range {ordered[0]:.3f}-{ordered[-1]:.3f})"
    )


def summarize(title: str, rates: dict[str, list[float]], latencies: dict[str, list[float]], unit: str) -> None:
    """Print the median rate and p50/p99 latency (``unit``: "µs" or "ms") per target, and the ratios."""
    scale, digits = (1e6, 0) if unit == "µs" else (1e3, 2)
    print(title)
    median = {name: statistics.median(values) for name, values in rates.items()}
    for name, value in median.items():
        lat = latencies[name]
        print(
            f"  {name:<14} {value:8.1f} calls/s   p50 {percentile(lat, 0.5) * scale:7.{digits}f} {unit}"
            f"   p99 {percentile(lat, 0.99) * scale:7.{digits}f} {unit}"
            f"   rounds {min(rates[name]):.1f}-{max(rates[name]):.1f}/s"
        )
    print(f"  mcp-guard/direct = {median['mcp-guard'] / median['direct']:.2f}", end="")
    if "before" in median:
        print(f";  mcp-guard/before = {median['mcp-guard'] / median['before']:.2f}", end="")
    if "present-for" in median:
        print(f";  present-for/mcp-guard = {median['present-for'] / median['mcp-guard']:.3f}", end="")
    if "fastmcp proxy" in median:
        print(f";  mcp-guard/fastmcp proxy = {median['mcp-guard'] / median['fastmcp proxy']:.2f}", end="")
    print()


if __name__ == "__main__":
    sys.exit(main())
