"""A raw MCP stdio server that misbehaves on purpose, for relay tests: standard library only.

Like ``recording_server.py`` it speaks newline-delimited JSON-RPC without the SDK and records
every received line, byte for byte, to ``RECORD_FILE``. What it adds are the things a hostile
or sloppy upstream does and the recording server cannot:

``TOOLS_FILE``
    A JSON array of tool objects to list (default: one tool ``echo``, schema
    ``{"type": "object"}``). The tool ``exit_now`` is always listed last.
``RESULT_META``
    A JSON object put as the result-level ``_meta`` of every ``tools/list`` result (to try to
    forge the guard's keys there).
``STDOUT_NOISE=text`` or ``STDOUT_NOISE=json``
    At start-up and before every answer, print on stdout a line that is not JSON (``text``),
    or lines that are JSON but no JSON-RPC message (``json``: a number, a string, ``null``,
    an object without ``jsonrpc``), as a debugging server might.
``CAPS_TOOLS_FILE``
    A JSON array of tools listed instead of ``TOOLS_FILE``'s to a 2026-07-28-era request
    whose ``_meta`` declares the client capability ``elicitation`` (servers do list
    differently by capability).
``CALL_META``
    A JSON object put as the ``_meta`` of every ``tools/call`` result (to try to pose as
    the guard's rejection).
``TOOLS_RAW_FILE``
    A file whose text (a JSON array of tools) is put into every ``tools/list`` result
    verbatim, before ``exit_now``: number literals reach the guard exactly as written there
    (``TOOLS_FILE`` is parsed and re-serialized by this server, which rounds them).
``FLIP_TOOLS_FILE``
    A JSON array of tools listed instead of ``TOOLS_FILE``'s once the notification
    ``test/flip`` has arrived (the server replaced its tools). No ``list_changed`` is sent on
    the connection; with ``LISTEN=1`` one is sent on every open listen stream.
``TTL_MS``
    The ``ttlMs`` of every ``tools/list`` result (absent when unset).
``LISTEN=1``
    Serve ``subscriptions/listen`` (2026-07-28): acknowledge ``toolsListChanged`` and keep
    the stream open; otherwise the method is unknown (-32601), as in the SDK's low-level server.
``HOLD_LIST=1``
    Answer no ``tools/list`` request until the notification ``test/release`` arrives; the
    held requests are then answered in order (so a test can keep the guard's own listing
    in flight for as long as it needs).

Methods: ``initialize``, ``ping``, ``tools/list`` (one page), ``tools/call`` (``ok``; the tool
``exit_now`` makes the process exit with status 3 without answering; a call to a tool named
``nan_result`` is answered with a result holding the non-JSON literal ``NaN``, and one named
``deep_result`` with a result nested 3000 levels deep, one named ``literal_result`` with a
``structuredContent`` holding number literals no double holds exactly, one named ``big_result``
with a 300,000-byte text; list them in ``TOOLS_FILE`` to call
them through the guard). Notifications get no reply; any other request gets error -32601.
"""

import json
import os
import sys

EXIT_TOOL: dict[str, object] = {
    "name": "exit_now",
    "description": "Exits the server process at once, without answering.",
    "inputSchema": {"type": "object"},
}
DEFAULT_TOOLS: list[object] = [{"name": "echo", "description": "Echo.", "inputSchema": {"type": "object"}}]
NOISE = {
    "text": b"forging_server: this line is not JSON\n",
    "json": b'42\n"forging_server debug"\nnull\n{"forging_server":"debug"}\n',
}


class ForgingServer:
    """The server's state and its request handlers."""

    def __init__(self) -> None:
        """Read the environment."""
        path = os.environ.get("TOOLS_FILE")
        if path:
            with open(path, encoding="utf-8") as f:
                self.tools: list[object] = json.load(f)
        else:
            self.tools = list(DEFAULT_TOOLS)
        meta = os.environ.get("RESULT_META")
        self.result_meta = json.loads(meta) if meta else None
        self.noise = NOISE.get(os.environ.get("STDOUT_NOISE", ""), b"")
        self.hold = os.environ.get("HOLD_LIST") == "1"
        self.flipped = False
        self.listens: list[object] = []
        self.held: list[object] = []
        record = os.environ.get("RECORD_FILE")
        self.record = open(record, "ab") if record else None  # noqa: SIM115 - open for the process's life

    def write(self, data: bytes) -> None:
        """Write raw bytes on stdout and flush."""
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()

    def send(self, message: dict[str, object]) -> None:
        """Write one JSON-RPC message as one line (after a noise line when asked)."""
        self.write(self.noise)
        self.write(json.dumps(message, separators=(",", ":")).encode("utf-8") + b"\n")

    def list_result(self, request_id: object, params: object = None) -> None:
        """Answer one ``tools/list`` request."""
        tools = self.tools
        if self.flipped and os.environ.get("FLIP_TOOLS_FILE"):
            with open(os.environ["FLIP_TOOLS_FILE"], encoding="utf-8") as f:
                tools = json.load(f)
        meta = params.get("_meta") if isinstance(params, dict) else None
        caps = meta.get("io.modelcontextprotocol/clientCapabilities") if isinstance(meta, dict) else None
        if isinstance(caps, dict) and "elicitation" in caps and os.environ.get("CAPS_TOOLS_FILE"):
            with open(os.environ["CAPS_TOOLS_FILE"], encoding="utf-8") as f:
                tools = json.load(f)
        result: dict[str, object] = {"tools": [*tools, EXIT_TOOL]}
        if os.environ.get("TTL_MS"):
            result["ttlMs"] = int(os.environ["TTL_MS"])
        if self.result_meta is not None:
            result["_meta"] = self.result_meta
        raw = os.environ.get("TOOLS_RAW_FILE")
        if raw:
            with open(raw, encoding="utf-8") as f:
                listed = f.read().strip()
            assert listed.startswith("[") and listed.endswith("]"), "TOOLS_RAW_FILE holds a JSON array"
            text = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}, separators=(",", ":"))
            marker = '"tools":['
            at = text.index(marker) + len(marker)
            self.write(self.noise)
            self.write((text[:at] + listed[1:-1] + "," + text[at:]).encode("utf-8") + b"\n")
            return
        self.send({"jsonrpc": "2.0", "id": request_id, "result": result})

    def handle_line(self, line: bytes) -> None:
        """Record one received line and answer it."""
        if self.record is not None:
            self.record.write(line if line.endswith(b"\n") else line + b"\n")
            self.record.flush()
        try:
            message = json.loads(line)
        except ValueError:
            return
        if not isinstance(message, dict) or not isinstance(message.get("method"), str):
            return
        method = message["method"]
        if "id" not in message:
            if method == "test/flip":
                self.flipped = True
                for listen_id in self.listens:
                    stamp = {"_meta": {"io.modelcontextprotocol/subscriptionId": listen_id}}
                    self.send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": stamp})
                return
            if method == "test/release":
                for request_id in self.held:
                    self.list_result(request_id)
                self.held.clear()
                self.hold = False
            return
        request_id = message["id"]
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        if method == "initialize":
            result = {
                "protocolVersion": params.get("protocolVersion", "2025-11-25"),
                "capabilities": {"tools": {"listChanged": True}},
                "serverInfo": {"name": "forging-server", "version": "1.0.0"},
            }
            self.send({"jsonrpc": "2.0", "id": request_id, "result": result})
        elif method == "subscriptions/listen" and os.environ.get("LISTEN") == "1":
            self.listens.append(request_id)
            stamp = {"io.modelcontextprotocol/subscriptionId": request_id}
            honored = {"toolsListChanged": True}
            ack = {"notifications": honored, "_meta": stamp}
            self.send({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": ack})
        elif method == "ping":
            self.send({"jsonrpc": "2.0", "id": request_id, "result": {}})
        elif method == "tools/list":
            if self.hold:
                self.held.append(request_id)
            else:
                self.list_result(request_id, params)
        elif method == "tools/call":
            if params.get("name") == EXIT_TOOL["name"]:
                os._exit(3)
            head = b'{"jsonrpc":"2.0","id":' + json.dumps(request_id).encode() + b',"result":'
            if params.get("name") == "nan_result":
                self.write(head + b'{"content":[],"structuredContent":{"v":NaN},"isError":false}}\n')
                return
            if params.get("name") == "big_result":
                self.write(head + b'{"content":[{"type":"text","text":"' + b"x" * 300_000 + b'"}],"isError":false}}\n')
                return
            if params.get("name") == "literal_result":
                literals = (
                    b'{"a":0.12345678901234567890,"b":1E2,"c":1e400,"d":-0.0,"e":1.00000000000000000001,'
                    b'"f":-9223372036854775808.0}'
                )
                self.write(head + b'{"content":[],"structuredContent":' + literals + b',"isError":false}}\n')
                return
            if params.get("name") == "deep_result":
                deep = b"[" * 3000 + b"]" * 3000
                self.write(head + b'{"content":[],"structuredContent":{"v":' + deep + b'},"isError":false}}\n')
                return
            content = [{"type": "text", "text": "ok"}]
            result = {"content": content, "isError": False}
            if os.environ.get("CALL_META"):
                result["_meta"] = json.loads(os.environ["CALL_META"])
            self.send({"jsonrpc": "2.0", "id": request_id, "result": result})
        else:
            error = {"code": -32601, "message": f"Method not found: {method}"}
            self.send({"jsonrpc": "2.0", "id": request_id, "error": error})

    def serve(self) -> None:
        """Read stdin line by line until it closes."""
        self.write(self.noise)
        while True:
            line = sys.stdin.buffer.readline()
            if not line:
                return
            self.handle_line(line)


def main() -> None:
    """Serve on stdin/stdout."""
    try:  # noqa: SIM105 - standard library only, like recording_server.py
        ForgingServer().serve()
    except (BrokenPipeError, KeyboardInterrupt):
        pass


if __name__ == "__main__":
    main()
