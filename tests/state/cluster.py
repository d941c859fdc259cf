"""A team gateway as it runs (issue 26 items 3-5): N ``serve --http`` replicas behind HAProxy, a recording upstream.

:class:`Cluster` writes a gateway config (one stdio upstream, ``tests/e2e/recording_server.py``,
with the tools ``work`` and ``free``; ``work`` may have a budget), starts the replicas on free
loopback ports and HAProxy with ``config/haproxy.cfg`` (the shipped file, its addresses from the
environment), and stops them all at the end. Every line the upstream processes receive is
appended to one record file, so :meth:`Cluster.forwarded` counts what reached the upstream across
all replicas. The tests (``test_scale_out.py``) and ``benchmarks/scale_out.py`` use it.

:class:`Client` speaks raw streamable HTTP: 2026-07-28 requests (no session; any replica) or a
handshake-era session (sticky at the load balancer).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import anyio
import httpx

from mcp_guard.calls.journal_key import KEY_ENV, argument_digest
from tests.real_servers import Haproxy, free_port

ROOT = Path(__file__).resolve().parents[2]
RECORDING_SERVER = ROOT / "tests" / "e2e" / "recording_server.py"
HAPROXY_CFG = ROOT / "config" / "haproxy.cfg"
MODERN = "2026-07-28"
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "scale-out", "version": "0"}}
TOOLS = [
    {"name": name, "inputSchema": {"type": "object", "properties": {"n": {"type": "string"}}, "required": ["n"]}}
    for name in ("work", "free")
]
START_TIMEOUT = 60.0


@dataclass
class Replica:
    """One ``mcp-guard serve --http`` process."""

    name: str
    port: int
    log_path: Path
    proc: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        """``127.0.0.1:PORT``."""
        return f"127.0.0.1:{self.port}"

    @property
    def log(self) -> str:
        """Its stderr so far."""
        return self.log_path.read_text(errors="replace")


@dataclass
class Cluster:
    """Replicas of one gateway config, optionally behind HAProxy.

    Args:
        folder: where the config, logs and the record file go.
        replicas: how many replicas (``config/haproxy.cfg`` names three; with fewer, the
            missing ones repeat the first's address).
        redis_url: ``guard.state.redis`` (``None``: budgets in process).
        journal: ``guard.journal``: a ``postgresql://`` URI, a file path, or ``None``.
        budget: ``callsPerMinute`` of ``work`` (``None``: no budget).
        balancer: start HAProxy in front.
    """

    folder: Path
    replicas: int = 3
    redis_url: str | None = None
    journal: str | None = None
    budget: int | None = None
    balancer: bool = True
    members: list[Replica] = field(default_factory=list)
    haproxy: Haproxy | None = None
    lb_port: int = 0
    stats_port: int = 0

    @property
    def record(self) -> Path:
        """Every line the upstream processes received."""
        return self.folder / "record.jsonl"

    @property
    def url(self) -> str:
        """The endpoint clients use: the load balancer's, or the first replica's without one."""
        port = self.lb_port if self.balancer else self.members[0].port
        return f"http://127.0.0.1:{port}/mcp"

    def config(self) -> dict[str, Any]:
        """The gateway config every replica runs."""
        tools_file = self.folder / "tools.json"
        tools_file.write_text(json.dumps(TOOLS))
        guard: dict[str, Any] = {"profile": "standard"}
        if self.budget is not None:
            guard["servers"] = {"rec": {"tools": {"work": {"callsPerMinute": self.budget}}}}
        if self.redis_url is not None:
            guard["state"] = {
                "redis": self.redis_url,
                "keyPrefix": f"scale-{uuid.uuid4().hex[:8]}",
                "timeoutSeconds": 1,
            }
        if self.journal is not None:
            guard["journal"] = (
                {"postgres": self.journal, "timeoutSeconds": 1}
                if self.journal.startswith("postgresql:")
                else self.journal
            )
        env = {"RECORD_FILE": str(self.record), "TOOLS_FILE": str(tools_file)}
        server = {"command": sys.executable, "args": [str(RECORDING_SERVER)], "env": env}
        return {"mcpServers": {"rec": server}, "guard": guard}

    async def start(self) -> None:
        """Start the replicas (at once) and wait for each to listen; then HAProxy, and wait until it sees them up."""
        path = self.folder / "gateway.json"
        path.write_text(json.dumps(self.config()))
        for i in range(self.replicas):
            name = f"r{i + 1}"
            replica = Replica(name, free_port(), self.folder / f"{name}.log")
            self.members.append(replica)
            self._spawn(replica, path)
        for replica in self.members:
            await self._listening(replica)
        if self.balancer:
            self.lb_port, self.stats_port = free_port(), free_port()
            addresses = [m.address for m in self.members]
            addresses += [addresses[0]] * (3 - len(addresses))
            environ = {
                "MCP_GUARD_LB_BIND": f"127.0.0.1:{self.lb_port}",
                "MCP_GUARD_LB_STATS": f"127.0.0.1:{self.stats_port}",
                **{f"MCP_GUARD_R{i + 1}": a for i, a in enumerate(addresses)},
            }
            self.haproxy = Haproxy(HAPROXY_CFG, environ, self.lb_port)
            self.haproxy.start()
            await self.wait_status({m.name: "UP" for m in self.members})

    def _spawn(self, replica: Replica, path: Path) -> None:
        command = [sys.executable, "-m", "mcp_guard", "serve", "--config", str(path)]
        command += ["--http", replica.address, "--replica-id", replica.name, "--log-level", "info"]
        with replica.log_path.open("ab") as log:
            replica.proc = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
                cwd=ROOT,
                env={**os.environ, KEY_ENV: JOURNAL_KEY},
            )

    async def _listening(self, replica: Replica) -> None:
        with anyio.fail_after(START_TIMEOUT):
            while "serving MCP streamable HTTP at" not in replica.log:
                assert replica.proc is not None and replica.proc.poll() is None, replica.log
                await anyio.sleep(0.05)

    def kill(self, name: str) -> Replica:
        """``kill -9`` the replica ``name``."""
        replica = next(m for m in self.members if m.name == name)
        assert replica.proc is not None
        replica.proc.send_signal(signal.SIGKILL)
        replica.proc.wait(10)
        return replica

    async def stats(self) -> dict[str, str]:
        """HAProxy's view of each replica of the backend: ``{"r1": "UP", ...}``."""
        async with httpx.AsyncClient(timeout=10) as client:
            answer = await client.get(f"http://127.0.0.1:{self.stats_port}/stats;csv")
        lines = answer.text.lstrip("# ").splitlines()
        header = lines[0].split(",")
        rows = [dict(zip(header, line.split(","), strict=False)) for line in lines[1:]]
        return {r["svname"]: r["status"] for r in rows if r.get("pxname") == "guards" and r["svname"].startswith("r")}

    async def wait_status(self, wanted: dict[str, str], timeout: float = 30.0) -> float:
        """Wait until HAProxy reports each replica of ``wanted`` in its state; returns the seconds waited."""
        started = time.monotonic()
        with anyio.fail_after(timeout):
            while True:
                seen = await self.stats()
                if all(seen.get(k, "").startswith(v) for k, v in wanted.items()):
                    return time.monotonic() - started
                await anyio.sleep(0.1)

    def forwarded(self, tool: str | None = None) -> list[dict[str, Any]]:
        """The ``tools/call`` requests the upstreams received (of ``tool``, the upstream's name, if given)."""
        if not self.record.exists():
            return []
        calls = []
        for line in self.record.read_text().splitlines():
            try:
                message = json.loads(line)
            except ValueError:
                continue
            is_call = type(message) is dict and message.get("method") == "tools/call"
            if is_call and (tool is None or message["params"]["name"] == tool):
                calls.append(message)
        return calls

    async def stop(self) -> None:
        """Stop HAProxy and the replicas (SIGKILL: the tests are done with them; their upstreams read EOF and exit)."""
        if self.haproxy is not None:
            self.haproxy.close()
        for replica in self.members:
            if replica.proc is not None and replica.proc.poll() is None:
                replica.proc.kill()
        for replica in self.members:
            if replica.proc is not None:
                replica.proc.wait(10)


class Refused(Exception):
    """An HTTP-level failure of a request (status, body), or a connection that broke."""


@dataclass
class Client:
    """One MCP client over raw streamable HTTP at ``url``.

    ``session`` is ``None`` for the 2026-07-28 era (each request self-contained), else the
    handshake-era session id after :meth:`initialize`.
    """

    http: httpx.AsyncClient
    url: str
    session: str | None = None
    next_id: int = 0

    async def _post(self, message: dict[str, Any], headers: dict[str, str]) -> dict[str, Any] | None:
        merged = {**ACCEPT, **headers}
        if self.session is not None:
            merged["mcp-session-id"] = self.session
        try:
            answer = await self.http.post(self.url, content=json.dumps(message).encode(), headers=merged)
        except httpx.TransportError as exc:
            raise Refused(f"transport: {type(exc).__name__}") from None
        if answer.status_code == 202:
            return None
        if answer.status_code != 200:
            raise Refused(f"{answer.status_code}: {answer.text[:2000]}")
        kind = answer.headers.get("content-type", "")
        if kind.startswith("application/json"):
            return dict(answer.json())
        for line in answer.text.splitlines():
            if line.startswith("data:"):
                found = json.loads(line[5:])
                if type(found) is dict and found.get("id") == message.get("id"):
                    return found
        raise Refused(f"no answer in the stream: {answer.text[:200]}")

    async def initialize(self) -> str:
        """Open a handshake-era session (through the balancer: on the replica it picks)."""
        self.session = None
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": "initialize", "params": INIT}
        merged = dict(ACCEPT)
        try:
            answer = await self.http.post(self.url, content=json.dumps(message).encode(), headers=merged)
        except httpx.TransportError as exc:
            raise Refused(f"transport: {type(exc).__name__}") from None
        if answer.status_code != 200:
            raise Refused(f"{answer.status_code}: {answer.text[:2000]}")
        self.session = answer.headers["mcp-session-id"]
        await self._post({"jsonrpc": "2.0", "method": "notifications/initialized"}, {})
        return self.session

    async def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """A ``tools/call`` of the exposed ``tool``: its JSON-RPC response (:class:`Refused`: an HTTP failure)."""
        self.next_id += 1
        params: dict[str, Any] = {"name": tool, "arguments": arguments}
        headers: dict[str, str] = {}
        if self.session is None:
            params["_meta"] = {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "scale-out", "version": "0"},
            }
            headers = {"mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": tool}
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call", "params": params}
        answer = await self._post(message, headers)
        assert answer is not None
        return answer

    async def ping(self) -> dict[str, Any] | None:
        """A ``tools/list`` (handshake era: in the session)."""
        self.next_id += 1
        return await self._post({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/list"}, {})


def rejection_kind(response: dict[str, Any]) -> str | None:
    """The ``_meta["mcp-guard/rejection"].kind`` of a refused call's result, else ``None``."""
    result = response.get("result")
    if type(result) is not dict:
        return None
    meta = result.get("_meta") or {}
    rejection = meta.get("mcp-guard/rejection")
    return None if rejection is None else str(rejection["kind"])


JOURNAL_KEY: Final = "cluster journal key"
"""The shared journal key every replica gets (``MCP_GUARD_JOURNAL_KEY``): digests compare across replicas."""


def digest(arguments: object) -> str:
    """The journal digest of ``arguments`` under :data:`JOURNAL_KEY` (HMAC-SHA256 of RFC 8785)."""
    return argument_digest(JOURNAL_KEY.encode(), arguments)


def environ_without_proxies() -> dict[str, str]:
    """The environment minus HTTP proxy variables (loopback traffic only)."""
    return {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
