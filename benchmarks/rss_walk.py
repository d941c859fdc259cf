"""Idle memory of ``mcp-guard wrap`` at each commit of a first-parent range: which merge added what.

``startup.py --before`` says how much more a tree costs than another; this says where in the
history the difference came in. For each commit of ``git log --first-parent FROM..TO`` (FROM
itself first), the package at that commit (``git archive REV mcp_guard``, in a scratch folder) is
put first on ``PYTHONPATH`` and ``python -m mcp_guard wrap`` is started over ``startup.py``'s tiny
upstream as that benchmark does: bytecode cached (``PYTHONPYCACHEPREFIX``, filled by one
unmeasured start; without it every start compiles every module, and the compiler's garbage stays
resident), ``initialize`` answered, ``notifications/initialized`` sent, ``VmRSS`` read ``--idle``
seconds later. Printed per commit: the median of ``--rounds`` starts (MiB) with their range, the
change from the previous commit printed, and the subject. The ``FROM`` tree is measured again every
``--check`` commits, so a drift of the machine shows (idle RSS hardly moves with the load; the
rounds agree within ~0.05 MiB).

Usage (from a folder that is not a checkout, with this checkout's venv)::

    cd /tmp && python /path/to/this/benchmarks/rss_walk.py --repo /path/to/this --from 7e06dad --to HEAD

Only commits whose ``mcp_guard`` tree runs ``python -m mcp_guard wrap`` can be measured (every
commit of issue 23's range does); a commit that fails is printed as such and the walk goes on.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from startup import UPSTREAM, rss_kib  # (this folder's benchmark, on sys.path when a script runs)

INITIALIZE = (
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
    b'"capabilities":{},"clientInfo":{"name":"rss_walk","version":"0"}}}\n'
)
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'


def idle_rss(tree: Path, cache: Path, upstream: Path, idle: float, cwd: str) -> float:
    """VmRSS (MiB) of ``wrap`` from ``tree`` ``idle`` seconds after the handshake.

    Raises:
        RuntimeError: the guard gave no answer to ``initialize`` (the tree does not run).
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=str(tree), PYTHONPYCACHEPREFIX=str(cache))
    command = [sys.executable, "-m", "mcp_guard", "wrap", "--log-level", "warning", "--"]
    process = subprocess.Popen(
        [*command, sys.executable, str(upstream)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=cwd,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write(INITIALIZE)
        process.stdin.flush()
        if not process.stdout.readline():
            raise RuntimeError("no answer to initialize")
        process.stdin.write(INITIALIZED)
        process.stdin.flush()
        time.sleep(idle)
        return rss_kib(process.pid) / 1024
    finally:
        process.stdin.close()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", default=".", help="the git checkout whose history is walked")
    parser.add_argument("--from", dest="start", required=True, metavar="REV")
    parser.add_argument("--to", dest="end", default="HEAD", metavar="REV")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--idle", type=float, default=0.5, help="seconds to wait before reading RSS")
    parser.add_argument("--check", type=int, default=20, help="measure FROM again every N commits")
    options = parser.parse_args()
    repo = Path(options.repo).resolve()

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout

    span = f"{options.start}..{options.end}"
    commits = [options.start, *git("log", "--first-parent", "--reverse", "--format=%h", span).split()]
    with tempfile.TemporaryDirectory() as scratch:
        upstream = Path(scratch, "upstream.py")
        upstream.write_text(UPSTREAM)

        def measure(rev: str) -> tuple[float, float, float]:
            tree = Path(scratch, "trees", rev)
            if not tree.exists():
                tree.mkdir(parents=True)
                archive = subprocess.run(["git", "-C", str(repo), "archive", rev, "mcp_guard"], capture_output=True)
                subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
            cache = Path(scratch, "pycache", rev)
            idle_rss(tree, cache, upstream, 0.0, scratch)  # fills the bytecode cache, unmeasured
            values = [idle_rss(tree, cache, upstream, options.idle, scratch) for _ in range(options.rounds)]
            return statistics.median(values), min(values), max(values)

        print(f"{'commit':9} {'MiB':>6} {'range':>13} {'change':>7}  subject  ({options.rounds} starts each)")
        previous = None
        for number, rev in enumerate(commits):
            subject = git("log", "-1", "--format=%s", rev).strip()[:72]
            try:
                median, low, high = measure(rev)
            except (RuntimeError, subprocess.CalledProcessError) as exc:
                print(f"{rev:9} {'-':>6} {'':>13} {'':>7}  {subject}  (not measured: {exc})", flush=True)
                continue
            change = "" if previous is None else f"{median - previous:+7.2f}"
            print(f"{rev:9} {median:6.2f} {f'{low:.2f}-{high:.2f}':>13} {change:>7}  {subject}", flush=True)
            previous = median
            if number and number % options.check == 0:
                again = measure(options.start)[0]
                print(f"{'':9} {again:6.2f} {'':>13} {'':>7}  ({options.start} again)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
