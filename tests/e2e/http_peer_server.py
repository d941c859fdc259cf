"""A raw MCP stdio server for the HTTP front's routing tests: standard library only.

It sends what the other fixture servers never do: messages outside a request's answer.
Every received line is appended to ``RECORD_FILE`` (when set), byte for byte. It answers
requests of both eras (no ``initialize`` needed).

Tools (schema ``{"type": "object"}`` each):

``echo``
    Answers at once; the text is the compact JSON of the arguments.
``later``
    Answers at once, then 0.2 s later sends ``notifications/message`` (data ``"later"``),
    related to no request.
``ask``
    Sends the server-to-client request ``ping`` (id ``"srv-N"``) and answers the call only
    when the client's response to it arrives; the text is ``asked: `` and the response's
    compact JSON.
``progress``
    Sends three ``notifications/progress`` for the call's ``_meta.progressToken`` (with
    ``message`` set to the argument ``tag``), then answers with the tag.
``slow``
    Answers after ``seconds`` (argument, default 30) unless a ``notifications/cancelled``
    names the call first; then it never answers.

``initialize`` echoes the requested protocol version; ``ping`` answers ``{}``; ``tools/list``
lists the tools; other requests get -32601.
"""

import json
import os
import sys
import threading

TOOLS = [
    {"name": name, "description": f"{name} (test tool)", "inputSchema": {"type": "object"}}
    for name in ("echo", "later", "ask", "progress", "slow")
]


class PeerServer:
    """State: pending ``ask`` calls, running ``slow`` timers, the output lock."""

    def __init__(self) -> None:
        """Open the record file when asked."""
        record = os.environ.get("RECORD_FILE")
        self.record = open(record, "ab") if record else None  # noqa: SIM115 - open for the process's life
        self.lock = threading.Lock()
        self.asks: dict[str, object] = {}
        self.slow: dict[str, threading.Timer] = {}
        self.counter = 0

    def send(self, message: dict[str, object]) -> None:
        """Write one message as one line."""
        data = json.dumps(message, separators=(",", ":")).encode("utf-8") + b"\n"
        with self.lock:
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()

    def text(self, request_id: object, text: str) -> None:
        """Answer a call with one text content."""
        result = {"content": [{"type": "text", "text": text}], "isError": False}
        self.send({"jsonrpc": "2.0", "id": request_id, "result": result})

    def handle(self, line: bytes) -> None:
        """Record one line and act on it."""
        if self.record is not None:
            self.record.write(line if line.endswith(b"\n") else line + b"\n")
            self.record.flush()
        try:
            message = json.loads(line)
        except ValueError:
            return
        if not isinstance(message, dict):
            return
        method = message.get("method")
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        if method is None:
            call_id = self.asks.pop(json.dumps(message.get("id")), None)
            if call_id is not None:
                answer = message.get("result", message.get("error"))
                self.text(call_id, "asked: " + json.dumps(answer, separators=(",", ":")))
            return
        if "id" not in message:
            if method == "notifications/cancelled":
                timer = self.slow.pop(json.dumps(params.get("requestId")), None)
                if timer is not None:
                    timer.cancel()
            return
        request_id = message["id"]
        if method == "initialize":
            result = {
                "protocolVersion": params.get("protocolVersion", "2025-11-25"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "http-peer", "version": "1.0.0"},
            }
            self.send({"jsonrpc": "2.0", "id": request_id, "result": result})
        elif method == "ping":
            self.send({"jsonrpc": "2.0", "id": request_id, "result": {}})
        elif method == "tools/list":
            self.send({"jsonrpc": "2.0", "id": request_id, "result": {"tools": TOOLS}})
        elif method == "tools/call":
            self.call(request_id, params)
        else:
            self.send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "Method not found"}})

    def call(self, request_id: object, params: dict[str, object]) -> None:
        """Run one tool."""
        name = params.get("name")
        arguments = params.get("arguments") if isinstance(params.get("arguments"), dict) else {}
        assert isinstance(arguments, dict)
        if name == "echo":
            self.text(request_id, json.dumps(arguments, separators=(",", ":")))
        elif name == "later":
            self.text(request_id, "now")
            note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "later"}}
            threading.Timer(0.2, self.send, (note,)).start()
        elif name == "ask":
            self.counter += 1
            ask_id = f"srv-{self.counter}"
            self.asks[json.dumps(ask_id)] = request_id
            self.send({"jsonrpc": "2.0", "id": ask_id, "method": "ping"})
        elif name == "progress":
            meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
            assert isinstance(meta, dict)
            token = meta.get("progressToken")
            tag = str(arguments.get("tag"))
            for step in (1, 2, 3):
                progress = {"progressToken": token, "progress": step, "total": 3, "message": tag}
                self.send({"jsonrpc": "2.0", "method": "notifications/progress", "params": progress})
            self.text(request_id, tag)
        elif name == "slow":
            seconds = arguments.get("seconds", 30)
            timer = threading.Timer(float(seconds) if isinstance(seconds, int | float) else 30.0, self.text)
            timer.args = (request_id, "slow done")
            timer.daemon = True
            self.slow[json.dumps(request_id)] = timer
            timer.start()
        else:
            error = {"code": -32602, "message": "Unknown tool"}
            self.send({"jsonrpc": "2.0", "id": request_id, "error": error})

    def serve(self) -> None:
        """Read stdin line by line until it closes."""
        while True:
            line = sys.stdin.buffer.readline()
            if not line:
                return
            self.handle(line)


def main() -> None:
    """Serve on stdin/stdout."""
    try:  # noqa: SIM105 - standard library only
        PeerServer().serve()
    except (BrokenPipeError, KeyboardInterrupt):
        pass
    os._exit(0)  # pending timers do not keep the process alive


if __name__ == "__main__":
    main()
