"""Instructions per ``tools/call`` of ``wrap``, and per tool of an extended classification, against another
checkout (issue 23, item 4): the code's own work, a figure the machine's load does not move.

The timed figures (``relay_throughput.py --paired``, ``core_speed.py --parts list``) count CPU time, which also
moves with how the work meets the caches: two trees that execute the same instructions can differ by a few
percent (stop 39: main and 7e06dad classified 10,000 tools in the same instructions, 0.1% apart, with ~3% more
simulated L1 data misses in main). This benchmark counts instead: valgrind's callgrind counts the instructions
a process executes in user space (the kernel's share, its reads and writes, is not counted; ``strace -c`` shows
the same system calls per call in both trees: 2 reads, 2 writes, 2 ``epoll_wait``).

Each arm first runs once outside valgrind to write its bytecode (``PYTHONPYCACHEPREFIX``, a folder of its
own): both counted runs then read it, and neither pays for compiling.

- ``call``: ``python -m mcp_guard wrap`` (this checkout, then ``--before DIR``'s: DIR first on ``PYTHONPATH``)
  over the Sigma server of ``relay_throughput.py`` (a real process over pipes, not counted), initialized, its
  tools listed, then ``--calls-from`` and ``--calls-to`` calls of ``grep`` (``{"pattern": "x"}``) in two
  processes; the difference over the calls between is the instructions per call (start-up cancels out).
- ``classify``: ``mcp_guard.compile(schema, profile="extended", defer=True)`` of the corpus's tools, each
  with a root description of its own, as ``core_speed.py``'s list part (``--tools-from``/``--tools-to``).

``--top N`` lists the N C functions (libpython, libc) whose instructions per unit differ most: where a change
comes from (stop 39 found bytes ``in`` making and clearing a ``TypeError`` per test this way).

Usage (from a folder that is not a checkout, this checkout's venv)::

    cd /tmp && PYTHONPATH=/path/to/this python /path/to/this/benchmarks/call_instructions.py --before DIR [--top 20]

Needs ``valgrind`` (``callgrind_annotate``) on ``PATH``; about four minutes.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from relay_throughput import CALLS, SERVER, RawClient  # (this folder's benchmark: its client and server)

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "data" / "mcp-tool-corpus"

CLASSIFY = r"""
import json, sys
from pathlib import Path
from mcp_guard import compile as guard_compile
tools = []
for path in sorted(Path(sys.argv[1]).glob("*.json")):
    document = json.loads(path.read_text())
    listed = document.get("tools") if isinstance(document, dict) else None
    if isinstance(listed, list):
        tools += [t for t in listed if isinstance(t, dict) and isinstance(t.get("inputSchema"), dict)]
schemas = [{**tools[i % len(tools)]["inputSchema"], "description": f"variant {i}"} for i in range(int(sys.argv[2]))]
for schema in json.loads(json.dumps(schemas)):
    guard_compile(schema, profile="extended", defer=True)
"""

Counts = tuple[int, dict[str, int]]


def driven(command: list[str], calls: int) -> None:
    """Start the guard ``command``, initialize it, list its tools, make ``calls`` calls of ``grep``, close it."""
    client = RawClient(command)
    try:
        init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "b", "version": "0"}}
        assert "result" in client.request("initialize", init)
        client.notify("notifications/initialized")
        assert "result" in client.request("tools/list", {})
        for _ in range(calls):
            assert "result" in client.request("tools/call", CALLS["grep"])
    finally:
        client.close()


def counted(command: list[str], env: dict[str, str], out: Path, drive: int | None) -> Counts:
    """Run ``command`` under callgrind (its output in ``out``): total instructions and per C function. With
    ``drive``, ``command`` is a guard driven through ``drive`` calls of ``grep``; else it runs to its end."""
    valgrind = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *command]
    if drive is None:
        subprocess.run(valgrind, env=env, check=True, capture_output=True)
    else:
        driven(["env", *(f"{k}={v}" for k, v in env.items()), *valgrind], drive)
        for _ in range(240):  # callgrind writes its file as the process ends
            if out.exists() and out.stat().st_size and "totals:" in out.read_text(errors="replace")[-4096:]:
                break
            time.sleep(0.25)
    text = subprocess.run(["callgrind_annotate", "--threshold=100", str(out)], capture_output=True, text=True).stdout
    total, functions = 0, collections.Counter[str]()
    for row in text.splitlines():
        found = re.match(r"\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*)$", row)
        if found:
            value, name = int(found.group(1).replace(",", "")), found.group(2)
            if "PROGRAM TOTALS" in name:
                total = value
            else:
                functions[re.sub(r"\s*\[.*\]$", "", name).rsplit("/", 2)[-1]] += value
    return total, dict(functions)


def per_unit(low: Counts, high: Counts, units: int) -> Counts:
    """Instructions per unit between two runs (``units`` more in ``high``): total and per function."""
    names = set(low[1]) | set(high[1])
    return (high[0] - low[0]) // units, {n: (high[1].get(n, 0) - low[1].get(n, 0)) // units for n in names}


def arm(checkout: Path, kind: str, low: int, high: int, folder: Path) -> Counts:
    """One checkout's instructions per unit of ``kind`` (``call`` or ``classify``)."""
    cache = folder / f"pycache-{len(list(folder.iterdir()))}"  # (bytecode of this arm's own, made once first)
    env = {
        "PYTHONPATH": str(checkout),
        "PYTHONHASHSEED": "0",
        "PATH": os.environ["PATH"],
        "PYTHONPYCACHEPREFIX": str(cache),
    }
    if kind == "call":
        command = [sys.executable, "-m", "mcp_guard", "wrap", "--log-level", "warning", "--", *SERVER]
        driven(["env", *(f"{k}={v}" for k, v in env.items()), *command], 5)  # compiles the modules it runs
    else:
        command = [sys.executable, "-c", CLASSIFY, str(CORPUS)]
        subprocess.run([*command, "10"], env=env, check=True, capture_output=True)
    runs = []
    for n in (low, high):
        out = folder / f"{checkout.name}-{kind}-{n}.out"
        runs.append(counted(command, env, out, n) if kind == "call" else counted([*command, str(n)], env, out, None))
    return per_unit(runs[0], runs[1], high - low)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--before", metavar="DIR", required=True, help="the other checkout")
    parser.add_argument("--calls-from", type=int, default=200)
    parser.add_argument("--calls-to", type=int, default=1000)
    parser.add_argument("--tools-from", type=int, default=1000)
    parser.add_argument("--tools-to", type=int, default=3000)
    parser.add_argument("--top", type=int, default=0, help="list the N C functions that differ most")
    args = parser.parse_args()
    if shutil.which("valgrind") is None or shutil.which("callgrind_annotate") is None:
        parser.error("needs valgrind and callgrind_annotate on PATH")
    this = Path(__file__).resolve().parents[1]
    before = Path(args.before).resolve()
    with tempfile.TemporaryDirectory(prefix="mcp-guard-instructions-") as tmp:
        folder = Path(tmp)
        for kind, low, high, unit in (
            ("call", args.calls_from, args.calls_to, "tools/call of wrap"),
            ("classify", args.tools_from, args.tools_to, "tool classified (extended, defer=True)"),
        ):
            ours, theirs = arm(this, kind, low, high, folder), arm(before, kind, low, high, folder)
            ratio = ours[0] / theirs[0]
            print(f"instructions per {unit}: this {ours[0]:,}, before {theirs[0]:,}, this/before {ratio:.4f}")
            if args.top:
                names = set(ours[1]) | set(theirs[1])
                rows = sorted(names, key=lambda n: -abs(ours[1].get(n, 0) - theirs[1].get(n, 0)))[: args.top]
                for name in rows:
                    a, b = ours[1].get(name, 0), theirs[1].get(name, 0)
                    print(f"    {a - b:+8,} {a:9,} {b:9,}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
