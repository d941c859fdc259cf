"""Opening many SDK sessions through ``mcp-guard wrap --http``: one upstream each, or ``--shared-upstream``.

Per round and mode, a fresh guard over the Sigma fixture server
(``mcp-guard wrap --http 127.0.0.1:0 [--shared-upstream] -- python fixtures/sigma/server.py``);
``--sessions`` SDK clients (``mcp.Client(url, mode="legacy")``) open at once, and each makes
one ``tools/call`` (so every upstream has answered ``initialize`` and the guard's listing).
Measured: the wall time until every session has its answer, and the resident memory (VmRSS,
``/proc``) of the guard and all its child processes with every session open. Rounds of the two
modes are interleaved and medians compared, so machine noise hits both alike; the figure to
read is the ratio shared / per-session in the same run.

Usage::

    python benchmarks/http_sessions.py [--sessions 32] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import anyio
from mcp import Client

ROOT = Path(__file__).resolve().parents[1]
SIGMA = [sys.executable, str(ROOT / "fixtures" / "sigma" / "server.py")]


def tree_rss_kib(pid: int) -> int:
    """VmRSS of ``pid`` and every descendant, in KiB (Linux ``/proc``)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    tree, frontier = {pid}, [pid]
    while frontier:
        parent = frontier.pop()
        for child, its_parent in parents.items():
            if its_parent == parent and child not in tree:
                tree.add(child)
                frontier.append(child)
    total = 0
    for member in tree:
        try:
            status = Path(f"/proc/{member}/status").read_text()
        except OSError:
            continue
        found = re.search(r"^VmRSS:\s+(\d+) kB", status, re.M)
        total += int(found.group(1)) if found else 0
    return total


async def one_round(sessions: int, shared: bool) -> tuple[float, int, int]:
    """Open ``sessions`` sessions at once through a fresh guard: (seconds, KiB resident, upstream processes)."""
    options = ["--shared-upstream"] if shared else []
    command = [sys.executable, "-m", "mcp_guard", "wrap", "--http", "127.0.0.1:0", "--max-sessions", "1000"]
    process = subprocess.Popen(
        [*command, *options, "--", *SIGMA], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        assert process.stderr is not None
        url = ""
        while not url:
            line = process.stderr.readline().decode(errors="replace")
            if not line:
                raise RuntimeError("the guard ended before it listened")
            found = re.search(r"serving MCP streamable HTTP at (\S+)", line)
            url = found.group(1) if found else ""
        ready = 0
        all_ready, finish = anyio.Event(), anyio.Event()

        async def open_one() -> None:
            nonlocal ready
            async with Client(url, mode="legacy") as client:
                await client.call_tool("add", {"a": 1, "b": 2})
                ready += 1
                if ready == sessions:
                    all_ready.set()
                await finish.wait()

        async with anyio.create_task_group() as tg:
            start = time.perf_counter()
            for _ in range(sessions):
                tg.start_soon(open_one)
            await all_ready.wait()
            elapsed = time.perf_counter() - start
            await anyio.sleep(0.5)  # let allocations settle
            rss = tree_rss_kib(process.pid)
            upstreams = sum(1 for e in os.listdir("/proc") if e.isdigit() and _parent(int(e)) == process.pid)
            finish.set()
        return elapsed, rss, upstreams
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except OSError:
        return -1


def main() -> None:
    """Run the interleaved rounds and print medians and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sessions", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    results: dict[bool, list[tuple[float, int, int]]] = {False: [], True: []}
    for n in range(args.rounds):
        for shared in (False, True) if n % 2 == 0 else (True, False):
            figures = anyio.run(one_round, args.sessions, shared)
            results[shared].append(figures)
            label = "shared     " if shared else "per-session"
            print(f"round {n + 1} {label}: {figures[0]:.2f} s, {figures[1] / 1024:.0f} MiB, {figures[2]} upstream(s)")
    medians = {
        shared: (statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs) / 1024, runs[0][2])
        for shared, runs in results.items()
    }
    print(f"\n{args.sessions} SDK sessions, median of {args.rounds} interleaved rounds:")
    for shared, (seconds, mib, upstreams) in medians.items():
        label = "--shared-upstream" if shared else "one upstream each"
        print(f"  {label:18} {seconds:6.2f} s to open  {mib:7.0f} MiB resident  {upstreams:3d} upstream process(es)")
    print(
        f"  ratio shared / per-session: time {medians[True][0] / medians[False][0]:.2f}, "
        f"memory {medians[True][1] / medians[False][1]:.2f}"
    )


if __name__ == "__main__":
    main()
