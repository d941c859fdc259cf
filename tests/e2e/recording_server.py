"""A raw MCP stdio server for relay tests: newline-delimited JSON-RPC, standard library only.

It does not use the SDK, so it sees the bytes exactly as a relay sent them, and its answers
are exactly what is written here (no model drops or adds a field).

Environment:

``RECORD_FILE``
    Every line received on stdin is appended to this file, byte for byte, one line each
    (a final line without a newline gets one), flushed after each line.
``TOOLS_FILE``
    A JSON array of tool objects to list instead of the fixture tools. By default the tools
    are those of ``fixtures/sigma/*.json`` then ``fixtures/sigma/extra/*.json`` (each folder
    sorted by file name), found relative to this file.
``TOOLS_FILE_2``
    A JSON array of tool objects that replaces the tool set once ``trigger_list_changed``
    has been called.
``WITH_TRIGGER=1``
    Adds the tool ``trigger_list_changed`` (schema ``{"type": "object"}``) at the end of
    every listing. A call to it first sends ``notifications/tools/list_changed``, then
    switches to ``TOOLS_FILE_2`` (when set), then answers the call.
``PAGE_SIZE``
    Tools per ``tools/list`` page (default: all in one page). Cursors are opaque strings;
    ``nextCursor`` is present while more tools remain.

Methods: ``initialize`` (echoes a known handshake protocol version, else 2025-11-25), ``ping``,
``tools/list``, ``tools/call`` (always ``ok``, with an unknown top-level result field
``"x-extra": 1``). Notifications get no reply; any other request gets error -32601.
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "..", "fixtures", "sigma")

KNOWN_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
DEFAULT_VERSION = "2025-11-25"

TRIGGER_TOOL: dict[str, object] = {
    "name": "trigger_list_changed",
    "description": "Sends notifications/tools/list_changed, then switches to the second tool set.",
    "inputSchema": {"type": "object"},
}

CURSOR_PREFIX = "rec-page-"


def load_folder(folder: str) -> list[object]:
    """Return the tool objects of every ``*.json`` file in ``folder``, sorted by file name."""
    tools: list[object] = []
    for name in sorted(os.listdir(folder)):
        if name.endswith(".json"):
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                tools.append(json.load(f))
    return tools


def load_tools_file(path: str) -> list[object]:
    """Return the JSON array of tool objects held in the file at ``path``."""
    with open(path, encoding="utf-8") as f:
        tools = json.load(f)
    if not isinstance(tools, list):
        raise SystemExit(f"recording_server: {path} must hold a JSON array of tools")
    return tools


def initial_tools() -> list[object]:
    """Return the first tool set: ``TOOLS_FILE`` if set, else the fixture tools."""
    path = os.environ.get("TOOLS_FILE")
    if path:
        return load_tools_file(path)
    return load_folder(FIXTURES) + load_folder(os.path.join(FIXTURES, "extra"))


class RecordingServer:
    """The server's state and its request handlers."""

    def __init__(self) -> None:
        """Read the environment and load the first tool set."""
        self.tools = initial_tools()
        self.with_trigger = os.environ.get("WITH_TRIGGER") == "1"
        page_size = os.environ.get("PAGE_SIZE")
        self.page_size = int(page_size) if page_size else 0
        record = os.environ.get("RECORD_FILE")
        self.record = open(record, "ab") if record else None  # noqa: SIM115 - open for the process's life

    def listed_tools(self) -> list[object]:
        """Return the tools that ``tools/list`` shows now."""
        if self.with_trigger:
            return [*self.tools, TRIGGER_TOOL]
        return list(self.tools)

    def send(self, message: dict[str, object]) -> None:
        """Write one JSON-RPC message as one line on stdout and flush."""
        data = json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        sys.stdout.buffer.write(data + b"\n")
        sys.stdout.buffer.flush()

    def record_line(self, line: bytes) -> None:
        """Append the received line, byte-exact, to ``RECORD_FILE``."""
        if self.record is None:
            return
        self.record.write(line if line.endswith(b"\n") else line + b"\n")
        self.record.flush()

    def reply(self, request_id: object, result: dict[str, object]) -> None:
        """Send a result for ``request_id``."""
        self.send({"jsonrpc": "2.0", "id": request_id, "result": result})

    def error(self, request_id: object, code: int, message: str) -> None:
        """Send an error for ``request_id``."""
        self.send({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}})

    def handle_line(self, line: bytes) -> None:
        """Record one received line and answer it."""
        self.record_line(line)
        if not line.strip():
            return
        try:
            message = json.loads(line)
        except ValueError:
            self.error(None, -32700, "Parse error")
            return
        if not isinstance(message, dict):
            self.error(None, -32600, "Invalid Request")
            return
        method = message.get("method")
        if not isinstance(method, str):
            return  # a response (this server sends no requests) or garbage without an id to answer
        if "id" not in message:
            return  # a notification: never answered
        request_id = message["id"]
        params = message.get("params")
        if not isinstance(params, dict):
            params = {}
        if method == "initialize":
            self.on_initialize(request_id, params)
        elif method == "ping":
            self.reply(request_id, {})
        elif method == "tools/list":
            self.on_list_tools(request_id, params)
        elif method == "tools/call":
            self.on_call_tool(request_id, params)
        else:
            self.error(request_id, -32601, f"Method not found: {method}")

    def on_initialize(self, request_id: object, params: dict[str, object]) -> None:
        """Answer ``initialize``."""
        version = params.get("protocolVersion")
        self.reply(
            request_id,
            {
                "protocolVersion": version if version in KNOWN_VERSIONS else DEFAULT_VERSION,
                "capabilities": {"tools": {"listChanged": True}},
                "serverInfo": {"name": "recording-server", "version": "1.0.0"},
            },
        )

    def on_list_tools(self, request_id: object, params: dict[str, object]) -> None:
        """Answer ``tools/list``, one page at a time when ``PAGE_SIZE`` is set."""
        tools = self.listed_tools()
        cursor = params.get("cursor")
        start = 0
        if cursor is not None:
            valid = isinstance(cursor, str) and cursor.startswith(CURSOR_PREFIX)
            digits = cursor[len(CURSOR_PREFIX) :] if isinstance(cursor, str) else ""
            if not (valid and digits.isdigit() and int(digits) <= len(tools)):
                self.error(request_id, -32602, "Invalid cursor")
                return
            start = int(digits)
        end = start + self.page_size if self.page_size > 0 else len(tools)
        result: dict[str, object] = {"tools": tools[start:end]}
        if end < len(tools):
            result["nextCursor"] = f"{CURSOR_PREFIX}{end}"
        self.reply(request_id, result)

    def on_call_tool(self, request_id: object, params: dict[str, object]) -> None:
        """Answer ``tools/call``: always ``ok``; ``trigger_list_changed`` switches tool sets first."""
        if self.with_trigger and params.get("name") == TRIGGER_TOOL["name"]:
            self.send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
            second = os.environ.get("TOOLS_FILE_2")
            if second:
                self.tools = load_tools_file(second)
        self.reply(request_id, {"content": [{"type": "text", "text": "ok"}], "isError": False, "x-extra": 1})

    def serve(self) -> None:
        """Read stdin line by line until it closes."""
        stdin = sys.stdin.buffer
        while True:
            line = stdin.readline()  # no length limit
            if not line:
                return
            self.handle_line(line)


def main() -> None:
    """Serve on stdin/stdout."""
    try:  # noqa: SIM105 - no contextlib: this file sticks to json, sys and os
        RecordingServer().serve()
    except (BrokenPipeError, KeyboardInterrupt):
        pass


if __name__ == "__main__":
    main()
