"""Real Redis, PostgreSQL and HAProxy for the tests, from the distribution's packages (issue 26 item 4).

Each server runs on a free loopback port in a temporary folder of its own and is stopped at the
end; PostgreSQL runs as the ``postgres`` user (``runuser``) when the tests run as root, as
``initdb`` refuses root. A test that needs a server that is not installed is skipped with the
reason (a user's clone); ``.ci/run`` installs them (``apt-get install redis-server postgresql
haproxy``). The servers can be stopped and started again on the same port (outage tests).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

__all__ = ["Haproxy", "Postgres", "Redis", "free_port", "pg_bin", "wait_port"]

PG_VERSIONS = ("17", "16", "15", "14", "13")

LOADED = 30.0
"""Seconds a store's client waits for the real server in tests of what the store answers, not of its timeout:
the guard's 2 s default timed out racing clients at a load of 5 on two cores (stop 36), a false red."""


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, proc: subprocess.Popen[bytes] | None, what: str, log: Path, timeout: float = 30.0) -> None:
    """Wait until 127.0.0.1:``port`` accepts connections (fails with the server's log when it exits)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"{what} exited ({proc.returncode}): {_tail(log)}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return
        time.sleep(0.05)
    raise RuntimeError(f"{what} did not listen on {port} within {timeout} s: {_tail(log)}")


def _tail(log: Path) -> str:
    try:
        return log.read_text(errors="replace")[-2000:]
    except OSError:
        return "(no log)"


def _temp_folder(prefix: str) -> Path:
    return Path(tempfile.mkdtemp(prefix=f"mcp-guard-{prefix}-"))


class Redis:
    """``redis-server`` on a free loopback port, no persistence.

    Raises ``pytest.skip`` when ``redis-server`` is not installed.
    """

    def __init__(self, password: str | None = None) -> None:
        exe = shutil.which("redis-server")
        self.password = password
        if exe is None:
            pytest.skip("redis-server is not installed (apt-get install redis-server); .ci/run installs it")
        self.exe = exe
        self.folder = _temp_folder("redis")
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """``redis://127.0.0.1:PORT/0``."""
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        """Start it (again, on the same port) and wait until it listens."""
        log = self.folder / "redis.log"
        self.proc = subprocess.Popen(
            [
                *(self.exe, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.folder)),
                *("--save", "", "--appendonly", "no", "--logfile", str(log), "--protected-mode", "no"),
                *(("--requirepass", self.password) if self.password else ()),
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
        )
        wait_port(self.port, self.proc, "redis-server", log)

    def stop(self) -> None:
        """Stop it at once (SIGKILL: an outage, not a shutdown)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)
        self.proc = None

    def close(self) -> None:
        """Stop it and remove its folder."""
        self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)


def pg_bin() -> Path | None:
    """The folder of PostgreSQL's server programs (``initdb``, ``pg_ctl``), or ``None``."""
    for version in PG_VERSIONS:
        folder = Path(f"/usr/lib/postgresql/{version}/bin")
        if (folder / "initdb").exists():
            return folder
    found = shutil.which("initdb")
    return Path(found).parent if found else None


class Postgres:
    """A PostgreSQL cluster of its own on a free loopback port (trust authentication, user ``postgres``).

    As root, ``initdb`` and ``pg_ctl`` run as the ``postgres`` user (``runuser -u postgres --``),
    the folder owned by it. Raises ``pytest.skip`` when the server programs are not installed.
    """

    def __init__(self) -> None:
        folder = pg_bin()
        if folder is None:
            pytest.skip("PostgreSQL's server is not installed (apt-get install postgresql); .ci/run installs it")
        self.bin = folder
        self.folder = _temp_folder("pg")
        self.data = self.folder / "data"
        self.log = self.folder / "pg.log"
        self.port = free_port()
        self.as_root = os.geteuid() == 0
        if self.as_root:
            if shutil.which("runuser") is None:
                pytest.skip("running as root without runuser: cannot run PostgreSQL as the postgres user")
            shutil.chown(self.folder, "postgres", "postgres")
        self._run(str(self.bin / "initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "-N")

    def _run(self, *argv: str) -> None:
        command = ["runuser", "-u", "postgres", "--", *argv] if self.as_root else list(argv)
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=self.folder)
        if done.returncode != 0:
            raise RuntimeError(f"{argv[0]} failed ({done.returncode}): {done.stderr[-2000:]} {_tail(self.log)}")

    @property
    def url(self) -> str:
        """``postgresql://postgres@127.0.0.1:PORT/postgres``."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def start(self) -> None:
        """Start it (again, on the same port) and wait until it accepts connections."""
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.folder} -c max_connections=200"
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-o", options, "-w", "start")

    def stop(self) -> None:
        """Stop it at once (``-m immediate``: an outage, not a shutdown)."""
        with contextlib.suppress(RuntimeError):
            self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")

    def close(self) -> None:
        """Stop it and remove its folder."""
        self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)


class Haproxy:
    """``haproxy`` running a config file in the foreground (``-db``), its ports given by the environment.

    Raises ``pytest.skip`` when ``haproxy`` is not installed.
    """

    def __init__(self, config: Path, environ: dict[str, str], port: int) -> None:
        exe = shutil.which("haproxy")
        if exe is None:
            pytest.skip("haproxy is not installed (apt-get install haproxy); .ci/run installs it")
        self.exe = exe
        self.config = config
        self.environ = environ
        self.port = port
        self.folder = _temp_folder("haproxy")
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Check the config (``-c``), start it, wait until its front listens."""
        env = {**os.environ, **self.environ}
        check = subprocess.run([self.exe, "-c", "-f", str(self.config)], env=env, capture_output=True, text=True)
        if check.returncode != 0:
            raise RuntimeError(f"haproxy -c failed: {check.stdout}{check.stderr}")
        log = self.folder / "haproxy.log"
        with open(log, "wb") as out:
            self.proc = subprocess.Popen(
                [self.exe, "-db", "-f", str(self.config)], env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=out
            )
        wait_port(self.port, self.proc, "haproxy", log)

    def close(self) -> None:
        """Stop it and remove its folder."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        shutil.rmtree(self.folder, ignore_errors=True)
