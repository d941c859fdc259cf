"""A line relay in front of a real stdio MCP server that spoils chosen ``tools/call`` results, on request.

Usage: ``python tampering_upstream.py SERVER_COMMAND...`` (with no arguments, the command is the
JSON array in the ``TAMPERED_COMMAND`` environment variable: for a harness that runs ``python
SCRIPT`` alone). Every line passes through unchanged,
but for a ``tools/call`` request whose ``params._meta`` holds ``"x-tamper": MODE``: that member
is removed before the request reaches the server, and the server's result for it is changed by
MODE before it goes on:

- ``type``: ``structuredContent.temperature`` becomes a string (the schema says number);
- ``missing``: ``structuredContent.humidity`` is removed (a required property);
- ``extra``: ``structuredContent.secret`` is added (``additionalProperties: false``), holding
  :data:`SECRET`, a value that must not show in what the guard says or logs;
- ``drop``: ``structuredContent`` is removed.

So a real server's real ``outputSchema`` (its tool list is not touched) meets a scripted
non-conforming result (tests/npm/test_structured_content.py). When its input ends, the requests
already sent are waited for (up to 60 s), then the server's input is closed and the server is
terminated a second later (server-everything does not exit when its stdin closes).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from typing import Any

SECRET = "s3cr3t-tampered-value"


def tamper(result: Any, mode: str) -> Any:
    """``result`` (a ``CallToolResult``) spoiled by ``mode`` (see the module docstring)."""
    if type(result) is not dict or type(result.get("structuredContent")) is not dict:
        return result
    structured = dict(result["structuredContent"])
    if mode == "type":
        structured["temperature"] = str(structured.get("temperature"))
    elif mode == "missing":
        structured.pop("humidity", None)
    elif mode == "extra":
        structured["secret"] = SECRET
    elif mode == "drop":
        return {k: v for k, v in result.items() if k != "structuredContent"}
    return {**result, "structuredContent": structured}


def main() -> int:
    command = sys.argv[1:] or json.loads(os.environ["TAMPERED_COMMAND"])
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert server.stdin is not None and server.stdout is not None
    modes: dict[Any, str] = {}  # request id -> tamper mode
    pending: set[str] = set()  # the ids of requests sent to the server, not yet answered
    lock = threading.Lock()
    answered = threading.Condition(lock)

    def downstream() -> None:  # the server's lines, to our stdout
        assert server.stdout is not None
        for line in server.stdout:
            try:
                message = json.loads(line)
            except ValueError:
                message = None
            if type(message) is dict and "id" in message and "result" in message and "method" not in message:
                with lock:
                    mode = modes.pop(json.dumps(message["id"]), None)
                    pending.discard(json.dumps(message["id"]))
                    answered.notify_all()
                if mode is not None:
                    line = (json.dumps({**message, "result": tamper(message["result"], mode)}) + "\n").encode()
            sys.stdout.buffer.write(line)
            sys.stdout.buffer.flush()

    reader = threading.Thread(target=downstream, daemon=True)
    reader.start()
    for line in sys.stdin.buffer:
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        if type(message) is dict and "method" in message and "id" in message:
            with lock:
                pending.add(json.dumps(message["id"]))
        if type(message) is dict and message.get("method") == "tools/call" and type(message.get("params")) is dict:
            meta = message["params"].get("_meta")
            if type(meta) is dict and "x-tamper" in meta:
                with lock:
                    modes[json.dumps(message.get("id"))] = str(meta["x-tamper"])
                rest = {k: v for k, v in meta.items() if k != "x-tamper"}
                params = {**message["params"], "_meta": rest}
                line = (json.dumps({**message, "params": params}) + "\n").encode()
        server.stdin.write(line)
        server.stdin.flush()
    with lock:
        answered.wait_for(lambda: not pending, timeout=60)
    server.stdin.close()
    try:
        server.wait(timeout=1)
    except subprocess.TimeoutExpired:
        server.terminate()
        server.wait(timeout=10)
    reader.join(timeout=5)
    return 0


if __name__ == "__main__":
    sys.exit(main())
