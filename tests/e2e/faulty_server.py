"""A raw MCP stdio server that fails on demand, for the upstream-fault tests: standard library only.

Like ``recording_server.py`` it speaks newline-delimited JSON-RPC without the SDK. Every line
it receives is appended to ``RECORD_FILE`` byte for byte; at start it first appends the line
``{"faulty_server_started": PID}``, so a test can tell the processes of one guard apart.

Environment:

``RECORD_FILE``
    Where received lines (and start markers) are appended.
``FAIL_FILE``
    When a file exists at this path at start, the server writes
    ``faulty_server: failing on purpose`` to stderr and exits with status 4 at once.
``STDERR_LINE``
    Written to stderr (plus a newline) at start.
``IGNORE_EOF=1``
    Keep running after stdin closes, and ignore SIGTERM (only SIGKILL ends it).

Tools (all with schema ``{"type": "object"}``; ``tools/list`` is one page):

- ``echo``: answers ``ok``.
- ``crash``: exits with status 3 without answering; ``kill``: SIGKILLs itself.
- ``close_stdout``: closes its stdout and keeps running until stdin closes.
- ``hang``: never answered.
- ``slow``: answered ``arguments.text`` (default ``slow ok``) after ``arguments.seconds``; when the
  request has a ``progressToken``, a progress notification is sent every ``arguments.progress_every``
  seconds meanwhile.
- ``noise``: writes a line that is not JSON to stdout and ``faulty_server: noise on stderr``
  to stderr, then answers ``ok``.
- ``spawn_grandchild``: starts ``sleep 600`` (which inherits stdin, stdout and stderr) and
  answers with its pid as the text.
- ``object_id``: first writes a response whose id is the object ``{"a": 1}``, then answers ``ok``.
- ``sample``: sends the client the request ``sampling/createMessage`` with id
  ``"server-req-1"``, then answers ``ok`` (without waiting for the client's answer).

Without listing, ``test/hang`` and ``subscriptions/listen`` (requests never answered), ``test/crash`` and
``test/close_stdout`` (notifications doing what the tools of the same names do), and
``test/spawn_grandchild`` (a request doing what the tool does, answered ``{"pid": PID}``) act
too; ``HOLD_LIST=1`` leaves every ``tools/list`` request unanswered; ``EXIT_ON_LIST=1`` makes
the process exit (status 4) at the first ``tools/list``, without answering.

Other methods: ``initialize`` (echoes the protocol version; declares tools, logging and
resource subscriptions), ``ping``, ``logging/setLevel``, ``resources/subscribe``,
``resources/unsubscribe`` (all answered ``{}``), ``test/barrier`` (answered once every
``slow`` answer has been written). Notifications get no reply; other requests get -32601.
"""

import json
import os
import signal
import subprocess
import sys
import threading
import time

TOOL_NAMES = [
    "echo",
    "crash",
    "kill",
    "close_stdout",
    "hang",
    "slow",
    "noise",
    "spawn_grandchild",
    "sample",
    "object_id",
]
TOOLS = [{"name": n, "description": f"The {n} tool.", "inputSchema": {"type": "object"}} for n in TOOL_NAMES]


class FaultyServer:
    """The server's state and its request handlers."""

    def __init__(self) -> None:
        """Read the environment and record the start."""
        record = os.environ.get("RECORD_FILE")
        self.record = open(record, "ab") if record else None  # noqa: SIM115 - open for the process's life
        self.lock = threading.Lock()
        self.workers: list[threading.Thread] = []
        self.stdout_open = True
        self.log_line(json.dumps({"faulty_server_started": os.getpid()}).encode())

    def log_line(self, line: bytes) -> None:
        """Append one line to ``RECORD_FILE``."""
        if self.record is not None:
            self.record.write(line if line.endswith(b"\n") else line + b"\n")
            self.record.flush()

    def write(self, data: bytes) -> None:
        """Write raw bytes on stdout and flush (one writer at a time)."""
        with self.lock:
            if self.stdout_open:
                sys.stdout.buffer.write(data)
                sys.stdout.buffer.flush()

    def send(self, message: dict[str, object]) -> None:
        """Write one JSON-RPC message as one line."""
        self.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")

    def reply(self, request_id: object, result: dict[str, object]) -> None:
        """Answer ``request_id`` with ``result``."""
        self.send({"jsonrpc": "2.0", "id": request_id, "result": result})

    def text(self, request_id: object, text: str) -> None:
        """Answer a ``tools/call`` with one text item."""
        self.reply(request_id, {"content": [{"type": "text", "text": text}], "isError": False})

    def handle_line(self, line: bytes) -> None:
        """Record one received line and act on it."""
        self.log_line(line)
        try:
            message = json.loads(line)
        except ValueError:
            return
        if not isinstance(message, dict) or not isinstance(message.get("method"), str):
            return  # responses: recorded only
        method = message["method"]
        if "id" not in message:
            if method == "test/crash":
                os._exit(3)
            elif method == "test/close_stdout":
                self.close_stdout()
            return  # other notifications: recorded only
        request_id = message["id"]
        params: dict[str, object] = message["params"] if isinstance(message.get("params"), dict) else {}
        if method == "initialize":
            self.reply(
                request_id,
                {
                    "protocolVersion": params.get("protocolVersion", "2025-11-25"),
                    "capabilities": {"tools": {"listChanged": True}, "logging": {}, "resources": {"subscribe": True}},
                    "serverInfo": {"name": "faulty-server", "version": "1.0.0"},
                },
            )
        elif method in ("ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"):
            self.reply(request_id, {})
        elif method == "tools/list":
            if os.environ.get("EXIT_ON_LIST") == "1":
                os._exit(4)
            if os.environ.get("HOLD_LIST") != "1":
                self.reply(request_id, {"tools": TOOLS})
        elif method in ("test/hang", "subscriptions/listen"):
            return
        elif method == "test/spawn_grandchild":
            self.reply(request_id, {"pid": subprocess.Popen(["sleep", "600"]).pid})
        elif method == "tools/call":
            self.call(request_id, params)
        elif method == "test/barrier":
            for worker in self.workers:
                worker.join()
            self.reply(request_id, {})
        else:
            self.send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "Method not found"}})

    def call(self, request_id: object, params: dict[str, object]) -> None:
        """Act on one ``tools/call``."""
        name = params.get("name")
        arguments = params.get("arguments") if isinstance(params.get("arguments"), dict) else {}
        assert isinstance(arguments, dict)
        if name == "crash":
            os._exit(3)
        elif name == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        elif name == "close_stdout":
            self.close_stdout()
        elif name == "hang":
            return
        elif name == "slow":
            meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
            assert isinstance(meta, dict)
            worker = threading.Thread(target=self.slow, args=(request_id, arguments, meta.get("progressToken")))
            self.workers.append(worker)
            worker.start()
        elif name == "noise":
            self.write(b"faulty_server: this line is not JSON\n")
            sys.stderr.write("faulty_server: noise on stderr\n")
            sys.stderr.flush()
            self.text(request_id, "ok")
        elif name == "spawn_grandchild":
            child = subprocess.Popen(["sleep", "600"])
            self.text(request_id, str(child.pid))
        elif name == "object_id":
            self.send({"jsonrpc": "2.0", "id": {"a": 1}, "result": {}})
            self.text(request_id, "ok")
        elif name == "sample":
            sampling = {"messages": [], "maxTokens": 1}
            self.send({"jsonrpc": "2.0", "id": "server-req-1", "method": "sampling/createMessage", "params": sampling})
            self.text(request_id, "ok")
        else:
            self.text(request_id, "ok")

    def close_stdout(self) -> None:
        """Close stdout (fd 1) and keep running."""
        with self.lock:
            self.stdout_open = False
            os.close(1)

    def slow(self, request_id: object, arguments: dict[str, object], token: object) -> None:
        """Answer after ``arguments.seconds``, with progress every ``arguments.progress_every`` when asked."""
        seconds = float(arguments.get("seconds", 1))  # type: ignore[arg-type]
        every = float(arguments.get("progress_every", 0))  # type: ignore[arg-type]
        deadline = time.monotonic() + seconds
        step = 0
        while time.monotonic() < deadline:
            time.sleep(min(every, deadline - time.monotonic()) if every > 0 else deadline - time.monotonic())
            if every > 0 and token is not None and time.monotonic() < deadline:
                step += 1
                progress = {"progressToken": token, "progress": step}
                self.send({"jsonrpc": "2.0", "method": "notifications/progress", "params": progress})
        self.text(request_id, str(arguments.get("text", "slow ok")))

    def serve(self) -> None:
        """Read stdin line by line until it closes."""
        while True:
            line = sys.stdin.buffer.readline()
            if not line:
                break
            self.handle_line(line)
        if os.environ.get("IGNORE_EOF") == "1":
            while True:
                time.sleep(60)


def main() -> None:
    """Serve on stdin/stdout, failing at start when ``FAIL_FILE`` exists."""
    fail = os.environ.get("FAIL_FILE")
    if fail and os.path.exists(fail):
        sys.stderr.write("faulty_server: failing on purpose\n")
        sys.exit(4)
    if os.environ.get("IGNORE_EOF") == "1":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    line = os.environ.get("STDERR_LINE")
    if line:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    try:  # noqa: SIM105 - standard library only, like the other fixture servers
        FaultyServer().serve()
    except (BrokenPipeError, KeyboardInterrupt):
        pass


if __name__ == "__main__":
    main()
