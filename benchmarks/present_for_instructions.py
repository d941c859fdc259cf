"""What ``wrap --present-for HOST`` adds to a judged call, counted in instructions (issue 24, item 6: at most 5%):
a figure the machine's load does not move.

The timed figures (``relay_throughput.py --paired``, ``present_for_call.py``) need a quiet machine; on a shared
one their control rows show spreads of 5-10%, as large as the figure. This benchmark counts instead: valgrind's
callgrind counts the instructions a process executes in user space (the kernel's share of a call, its reads and
writes, is the same in every arm and not counted). The work is ``present_for_call``'s rig, the relay's real hot
path: a ``Relay`` over ``os.pipe()`` pairs, an in-process upstream serving the Sigma ``grep`` tool (five
optional properties); per call, ``Relay._client_line_now`` for the line, the upstream's answer, the relay's
answer to the client. The arms:

- ``wrap``: plain ``wrap``, the call ``{"pattern": "x"}``;
- ``control``: the same again (the method's own repeatability);
- each host: ``wrap --present-for HOST``, the call as that host's model sends it (``Lowered.present``;
  ``openai-strict``: the five optional properties as ``null``, mapped back to absent).

Each arm runs twice, in processes of its own under callgrind (``PYTHONHASHSEED=0``): the same start-up and
warm-up, then 0 and ``--calls`` calls; the difference over ``--calls`` is the arm's instructions per call, so
start-up cancels out. Printed: each arm's instructions per call and its ratio to ``wrap``.

Usage::

    python benchmarks/present_for_instructions.py [--hosts openai-strict,gemini] [--calls 1024]

Needs ``valgrind`` on ``PATH``; about a minute per arm on one core (two run at a time).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))
from present_for_call import CHUNK, Rig, line  # (this folder's benchmark: its rig)

from mcp_guard.hosts import HOSTS, present_tools

GREP = Path(__file__).resolve().parents[1] / "fixtures" / "sigma" / "grep.json"
ARGUMENTS = {"pattern": "x"}
WARM = 3
"""Chunks of :data:`~present_for_call.CHUNK` calls made before the counted ones, in both runs of an arm."""


def arm_lines(arm: str) -> tuple[str | None, list[bytes]]:
    """The relay's host (None: plain ``wrap``) and one chunk of the call's lines, as ``arm``'s client sends them."""
    tool = json.loads(GREP.read_text(encoding="utf-8"))
    if arm in ("wrap", "control"):
        return None, [line(i, tool["name"], ARGUMENTS) for i in range(CHUNK)]
    entry = present_tools([tool], HOSTS[arm]).shown  # type: ignore[index]
    (shown,) = entry.values()
    arguments = ARGUMENTS if shown.lowered is None else shown.lowered.present(ARGUMENTS)
    return arm, [line(i, shown.shown_name, arguments) for i in range(CHUNK)]


async def run_arm(arm: str, calls: int) -> None:
    """(In the process callgrind counts.) Start a rig for ``arm``, warm it, make ``calls`` calls (whole chunks)."""
    host, lines = arm_lines(arm)
    tool = json.loads(GREP.read_text(encoding="utf-8"))
    async with anyio.create_task_group() as tg:
        rig = Rig([tool], host)
        tg.start_soon(rig.relay.run)
        await rig.start()
        for _ in range(WARM + calls // CHUNK):
            await rig.timed(lines)
        await rig.client.close_send()
        tg.cancel_scope.cancel()


def counted(arm: str, calls: int, folder: str) -> int:
    """Instructions callgrind counted for a process running ``arm`` with ``calls`` calls."""
    log = os.path.join(folder, f"{arm}-{calls}.log")
    command = [
        "valgrind",
        "--tool=callgrind",
        "--callgrind-out-file=/dev/null",
        f"--log-file={log}",
        sys.executable,
        __file__,
        "--arm",
        arm,
        "--calls",
        str(calls),
    ]
    subprocess.run(command, check=True, env={**os.environ, "PYTHONHASHSEED": "0"}, stdout=subprocess.DEVNULL)
    found = re.search(r"Collected : (\d+)", Path(log).read_text(encoding="utf-8"))
    if found is None:
        raise SystemExit(f"callgrind counted nothing for {arm}: see {log}")
    return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", default="openai-strict,gemini", help="comma-separated host profiles")
    parser.add_argument("--calls", type=int, default=1024, help="counted calls per arm (whole chunks of 64)")
    parser.add_argument("--arm", help=argparse.SUPPRESS)  # (the counted process)
    args = parser.parse_args()
    calls = max(CHUNK, args.calls // CHUNK * CHUNK)
    if args.arm is not None:
        logging.disable(logging.CRITICAL)
        asyncio.run(run_arm(args.arm, args.calls))
        return
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not on PATH")
    arms = ["wrap", "control", *args.hosts.split(",")]
    with tempfile.TemporaryDirectory() as folder, ThreadPoolExecutor(2) as pool:
        runs = {(arm, n): pool.submit(counted, arm, n, folder) for arm in arms for n in (0, calls)}
        per_call = {arm: (runs[arm, calls].result() - runs[arm, 0].result()) / calls for arm in arms}
    print(f"instructions per judged call (callgrind, user space; {calls} calls after {WARM * CHUNK} warm-up ones)")
    for arm in arms:
        ratio = per_call[arm] / per_call["wrap"]
        print(f"  {arm:14} {per_call[arm]:9.0f}   {ratio:.3f}x wrap   {per_call[arm] - per_call['wrap']:+8.0f}")


if __name__ == "__main__":
    main()
