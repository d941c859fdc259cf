"""A stop signal while ``serve`` (or ``wrap``) is still starting (red team 34, item 2).

``serve``'s imports take 2-3 s on a loaded machine; a SIGINT meanwhile printed a
``KeyboardInterrupt`` traceback, a SIGTERM killed the guard (exit status -15). The signal is now held
from the CLI's first line (``start_signals``) and raised again once the front holds the signals:
the guard stops as for a later one, 130 after SIGINT, 0 after SIGTERM, no traceback.

The timing is made deterministic: the child sends itself the signal from an import hook, when
the CLI imports the gateway's commands (while it builds its parser, as under load), not after a sleep.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mcp_guard.start_signals import STOP_SIGNALS, held_until_front, release

pytestmark = pytest.mark.e2e

CHILD = textwrap.dedent(
    """
    import importlib.abc, os, signal, sys

    class SignalOnImport(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name == "mcp_guard.commands.gateway":
                sys.meta_path.remove(self)
                os.kill(os.getpid(), int(os.environ["SIGNAL_ON_IMPORT"]))
            return None

    sys.meta_path.insert(0, SignalOnImport())
    from mcp_guard.cli import main

    sys.exit(main(sys.argv[1:]))
    """
)

UPSTREAM = "import sys\nfor line in sys.stdin:\n    pass\n"


def run_child(tmp_path: Path, signum: int, *argv: str) -> subprocess.CompletedProcess[str]:
    child = tmp_path / "child.py"
    child.write_text(CHILD, encoding="utf-8")
    env = {**__import__("os").environ, "SIGNAL_ON_IMPORT": str(int(signum))}
    with subprocess.Popen(
        [sys.executable, str(child), *argv],
        stdin=subprocess.PIPE,  # kept open: the client does not leave, only the signal stops the guard
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    ) as process:
        try:
            out, err = process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            out, err = process.communicate()
            pytest.fail(f"the guard did not stop: {err}")
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def gateway_config(tmp_path: Path) -> Path:
    upstream = tmp_path / "upstream.py"
    upstream.write_text(UPSTREAM, encoding="utf-8")
    config = tmp_path / "gateway.json"
    servers = {"s": {"command": sys.executable, "args": [str(upstream)]}}
    config.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return config


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 0), (signal.SIGHUP, 0)])
@pytest.mark.parametrize("front", ["stdio", "http"])
def test_serve_stopped_while_it_starts_exits_cleanly(tmp_path: Path, signum: int, status: int, front: str) -> None:
    http = ["--http", "127.0.0.1:0"] if front == "http" else []
    done = run_child(tmp_path, signum, "serve", "--config", str(gateway_config(tmp_path)), *http)
    assert "Traceback" not in done.stderr and "KeyboardInterrupt" not in done.stderr
    assert done.returncode == status, done.stderr
    assert f"received signal {int(signum)}; stopping" in done.stderr


def test_wrap_stopped_before_its_upstream_starts_exits_cleanly(tmp_path: Path) -> None:
    """wrap's parser imports no gateway command: the hook fires on another import of its start."""
    child = CHILD.replace("mcp_guard.commands.gateway", "mcp_guard.allocator")
    (tmp_path / "child.py").write_text(child, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(tmp_path / "child.py"), "wrap", "--", sys.executable, "-c", UPSTREAM],
        stdin=subprocess.PIPE,
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "SIGNAL_ON_IMPORT": str(int(signal.SIGINT))},
        timeout=60,
        check=False,
    )
    assert "Traceback" not in done.stderr
    assert done.returncode == 130, done.stderr


def test_held_signals_are_recorded_and_the_handlers_given_back() -> None:
    """In-process: inside the hold a stop signal is recorded (not acted on); leaving it restores the handlers
    it replaced and drops what no front released."""
    before = {s: signal.getsignal(s) for s in STOP_SIGNALS}
    with held_until_front():
        signal.raise_signal(signal.SIGINT)  # (Python's default here: KeyboardInterrupt)
        signal.raise_signal(signal.SIGTERM)  # (the default: death by the signal)
        caught: list[int] = []
        previous = {s: signal.signal(s, lambda n, _f: caught.append(n)) for s in STOP_SIGNALS}  # a front's
        assert release() == [signal.SIGINT, signal.SIGTERM]
        assert caught == [signal.SIGINT, signal.SIGTERM]
        for s, handler in previous.items():
            signal.signal(s, handler)
        signal.raise_signal(signal.SIGHUP)
    assert {s: signal.getsignal(s) for s in STOP_SIGNALS} == before
    assert release() == []


ENTRY_CHILD = textwrap.dedent(
    """
    import importlib.abc, os, runpy, sys

    class SignalOnImport(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name == "mcp_guard.cli":
                sys.meta_path.remove(self)
                os.kill(os.getpid(), int(os.environ["SIGNAL_ON_IMPORT"]))
            return None

    sys.meta_path.insert(0, SignalOnImport())
    if os.environ["ENTRY"] == "module":  # python -m mcp_guard
        sys.argv[0] = "mcp_guard"
        runpy.run_module("mcp_guard", run_name="__main__", alter_sys=True)
    else:  # the console script, as pip writes it
        from mcp_guard.entry import main

        sys.exit(main())
    """
)


@pytest.mark.parametrize("entry", ["module", "script"])
@pytest.mark.parametrize(("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 0)])
def test_a_signal_while_the_cli_is_imported_is_held(tmp_path: Path, entry: str, signum: int, status: int) -> None:
    """`cli.main` held the signals from its first line, but importing `mcp_guard.cli` comes first: a Ctrl-C then
    printed a KeyboardInterrupt traceback (SIGTERM: death by the signal). `mcp_guard.entry` holds them first."""
    (tmp_path / "child.py").write_text(ENTRY_CHILD, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(tmp_path / "child.py"), "serve", "--config", str(gateway_config(tmp_path))],
        stdin=subprocess.PIPE,
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "SIGNAL_ON_IMPORT": str(int(signum)), "ENTRY": entry},
        timeout=60,
        check=False,
    )
    assert "Traceback" not in done.stderr and "KeyboardInterrupt" not in done.stderr
    assert done.returncode == status, done.stderr
    assert f"received signal {int(signum)}; stopping" in done.stderr


def test_a_command_that_is_no_front_is_not_held(tmp_path: Path) -> None:
    """Only `wrap` and `serve` hold the signals (a front stops for them); `check` and the rest keep Python's."""
    (tmp_path / "child.py").write_text(ENTRY_CHILD, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(tmp_path / "child.py"), "status"],
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "SIGNAL_ON_IMPORT": str(int(signal.SIGTERM)), "ENTRY": "script"},
        timeout=60,
        check=False,
    )
    assert done.returncode == -signal.SIGTERM


def test_the_console_script_is_the_entry() -> None:
    import tomllib

    pyproject = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["project"]["scripts"]["mcp-guard"] == "mcp_guard.entry:main"


def test_a_hold_inside_a_hold_changes_nothing() -> None:
    """`entry` holds the signals, then `cli.main` holds them again: what the outer one recorded stays."""
    before = {s: signal.getsignal(s) for s in STOP_SIGNALS}
    with held_until_front():
        signal.raise_signal(signal.SIGINT)
        with held_until_front():
            signal.raise_signal(signal.SIGTERM)
        caught: list[int] = []
        previous = {s: signal.signal(s, lambda n, _f: caught.append(n)) for s in STOP_SIGNALS}
        assert release() == [signal.SIGINT, signal.SIGTERM]
        for s, handler in previous.items():
            signal.signal(s, handler)
    assert {s: signal.getsignal(s) for s in STOP_SIGNALS} == before
