"""Start-up cost of ``mcp-guard wrap`` over stdio: time to the ``initialize`` answer and idle memory.

Targets over the same fast upstream (a tiny newline-delimited JSON-RPC server written below, in
this Python): ``direct`` (the upstream itself), ``bare`` (a bare asyncio relay, also below: it
reads lines from its stdin, parses and re-serializes them, writes them to the child, and back),
``wrap`` (``python -m mcp_guard wrap --``) and ``script`` (the ``mcp-guard`` console script next
to this Python, as clients start it: no ``runpy``; left out where it is not installed). All run
with this Python and its ``site`` (the venv's ``.pth`` files). For each start the client spawns the
target, writes ``initialize`` and times until the answer line arrives (process start included);
then sends ``notifications/initialized``, waits ``--idle`` seconds and reads the target process's
own resident memory (``VmRSS`` of ``/proc/PID/status``; the upstream child is not counted). The
CPU time of each whole run (target and upstream, user and system, ``RUSAGE_CHILDREN``) is shown
too: on a loaded machine it is steadier than the time to the answer. Rounds
interleave the targets so machine noise hits all alike; the medians are compared as ratios.

Usage::

    python benchmarks/startup.py [--rounds 9] [--idle 0.5] [--before DIR] [--no-bytecode-cache]

The targets run in a scratch directory (``python -m`` puts the working directory first on
``sys.path``). Bytecode is cached as an installed package has it (``pip install`` compiles it):
every target runs with ``PYTHONPYCACHEPREFIX`` in the scratch directory, filled by the unmeasured
first start, and without ``PYTHONDONTWRITEBYTECODE`` (set, it makes every start of the guard
compile ~100 modules from source, which no user pays); ``--no-bytecode-cache`` keeps the
environment's setting. The order of the targets turns by one each round (no target always starts
right after the same other one). Goals (issue 14 item 1): wrap/bare <= 1.5 for both the time and
the memory.

``--before DIR`` adds ``before``: ``wrap`` again, with DIR (another checkout of mcp-guard, say the
tree before a refactor: ``git worktree add --detach /tmp/before REV``) first on ``PYTHONPATH``, in
the same alternated rounds; and ``wrap-env``: ``wrap`` with ``MALLOC_ARENA_MAX=1`` in its
environment, the same one malloc arena set by glibc at the start, so ``mcp_guard.allocator`` loads
no ``ctypes`` (issue 25's trade: ~0.36 MiB of the idle RSS, for a big call's peak 2.35x instead of
3.0x the message); its RSS ratio to ``before`` shows what the rest of the code costs. Printed then:
each round's own ratio wrap/before of the time, the idle RSS and the CPU (>1: this checkout costs
more), as the median of the rounds with their quartiles and range; a ratio whose range straddles 1
is within the spread of the rounds. Run it from a folder that is not a checkout; for issue 23::

    cd /tmp && PYTHONPATH=/path/to/this python /path/to/this/benchmarks/startup.py --rounds 25 --before /path/to/before
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from relay_throughput import spread  # (this folder's benchmark, on sys.path when a script runs)

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = Path(sys.executable).with_name("mcp-guard")

UPSTREAM = """
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    if m.get("method") == "initialize":
        r = {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}},
             "serverInfo": {"name": "fast", "version": "1"}}
    else:
        r = {}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}) + "\\n")
    sys.stdout.flush()
"""

BARE_RELAY = """
import asyncio, json, sys

async def pump(reader, write):
    while line := await reader.readline():
        await write((json.dumps(json.loads(line), separators=(",", ":")) + "\\n").encode())

async def main():
    child = await asyncio.create_subprocess_exec(*sys.argv[1:], stdin=asyncio.subprocess.PIPE,
                                                 stdout=asyncio.subprocess.PIPE)
    loop = asyncio.get_running_loop()
    stdin = asyncio.StreamReader(limit=1 << 25)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdin), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, sys.stdout)
    stdout = asyncio.StreamWriter(transport, protocol, None, loop)

    async def to_child(data):
        child.stdin.write(data)
        await child.stdin.drain()

    async def to_client(data):
        stdout.write(data)
        await stdout.drain()

    upward = asyncio.create_task(pump(child.stdout, to_client))
    await pump(stdin, to_child)
    child.stdin.close()
    await child.wait()
    upward.cancel()

asyncio.run(main())
"""

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
}


def rss_kib(pid: int) -> int:
    """The process's resident set size in KiB (``VmRSS``, Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def one_start(command: list[str], env: dict[str, str], idle: float, cwd: str) -> tuple[float, int, float]:
    """(seconds from spawn to the initialize answer, idle RSS in KiB, CPU seconds of the whole run) of one
    start of ``command``; the CPU counts the target and the upstream it waited for, user and system."""
    cpu_before = _children_cpu()
    started = time.perf_counter()
    process = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=cwd, bufsize=0
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
        answer = process.stdout.readline()
        elapsed = time.perf_counter() - started
        if json.loads(answer).get("id") != 1:
            raise RuntimeError(f"unexpected answer {answer[:200]!r}")
        process.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        time.sleep(idle)
        rss = rss_kib(process.pid)
    finally:
        process.stdin.close()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return elapsed, rss, _children_cpu() - cpu_before


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--idle", type=float, default=0.5, help="seconds to wait before reading RSS")
    parser.add_argument("--before", metavar="DIR", help="also measure wrap with DIR first on PYTHONPATH")
    parser.add_argument(
        "--no-bytecode-cache", action="store_true", help="keep the environment's bytecode settings (see above)"
    )
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        upstream = Path(scratch, "upstream.py")
        upstream.write_text(UPSTREAM)
        bare = Path(scratch, "bare_relay.py")
        bare.write_text(BARE_RELAY)
        server = [sys.executable, str(upstream)]
        targets = {
            "direct": server,
            "bare": [sys.executable, str(bare), *server],
            "wrap": [sys.executable, "-m", "mcp_guard", "wrap", "--log-level", "warning", "--", *server],
        }
        if SCRIPT.exists():
            targets["script"] = [str(SCRIPT), "wrap", "--log-level", "warning", "--", *server]
        env = dict(os.environ)
        if not options.no_bytecode_cache:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = str(Path(scratch, "pycache"))
        envs = {name: env for name in targets}
        if options.before:
            targets["before"] = targets["wrap"]
            before = str(Path(options.before).resolve())
            path = os.pathsep.join([before, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
            envs["before"] = {**env, "PYTHONPATH": path}
            targets["wrap-env"] = targets["wrap"]
            envs["wrap-env"] = {**env, "MALLOC_ARENA_MAX": "1"}
        times: dict[str, list[float]] = {name: [] for name in targets}
        memory: dict[str, list[int]] = {name: [] for name in targets}
        cpu: dict[str, list[float]] = {name: [] for name in targets}
        for name, command in targets.items():  # warm the file cache once, unmeasured
            one_start(command, envs[name], 0.0, scratch)
        names = list(targets)
        for turn in range(options.rounds):
            for name in names[turn % len(names) :] + names[: turn % len(names)]:
                elapsed, rss, used = one_start(targets[name], envs[name], options.idle, scratch)
                times[name].append(elapsed)
                memory[name].append(rss)
                cpu[name].append(used)
    median_time = {name: statistics.median(v) for name, v in times.items()}
    median_rss = {name: statistics.median(v) for name, v in memory.items()}
    median_cpu = {name: statistics.median(v) for name, v in cpu.items()}
    print(
        f"{'target':8} {'initialize (ms)':>16} {'idle RSS (MiB)':>15} {'CPU (ms)':>9}   "
        f"(medians, {options.rounds} rounds)"
    )
    for name in targets:
        print(
            f"{name:8} {median_time[name] * 1000:16.1f} {median_rss[name] / 1024:15.1f} {median_cpu[name] * 1000:9.1f}"
        )
    print(
        f"wrap/bare: time {median_time['wrap'] / median_time['bare']:.2f}x (goal <= 1.5), "
        f"RSS {median_rss['wrap'] / median_rss['bare']:.2f}x (goal <= 1.5), "
        f"CPU {median_cpu['wrap'] / median_cpu['bare']:.2f}x (steadier than the time on a loaded machine)"
    )
    if "script" in median_time:
        print(
            f"script/bare: time {median_time['script'] / median_time['bare']:.2f}x, "
            f"RSS {median_rss['script'] / median_rss['bare']:.2f}x, "
            f"CPU {median_cpu['script'] / median_cpu['bare']:.2f}x"
        )
    print(
        f"wrap/direct: time {median_time['wrap'] / median_time['direct']:.2f}x, "
        f"RSS {median_rss['wrap'] / median_rss['direct']:.2f}x"
    )
    if options.before:
        print(f"wrap/before, each round's own ratio (>1: this checkout costs more; {options.rounds} rounds):")
        for label, figures in (("time", times), ("RSS", memory), ("CPU", cpu)):
            ratios = [a / b for a, b in zip(figures["wrap"], figures["before"], strict=True)]
            print(f"  {label:<4} {spread(ratios)}")
        ratios = [a / b for a, b in zip(memory["wrap-env"], memory["before"], strict=True)]
        print(f"wrap-env/before, RSS: {spread(ratios)} (the one malloc arena from the environment: no ctypes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
