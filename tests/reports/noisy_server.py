"""A raw MCP stdio server that prints lines that are not JSON-RPC on stdout: standard library only.

It writes ``NOISE`` (a line that is not JSON) before anything else, and ``SECRET_NOISE`` before
its ``tools/list`` answer, then answers ``initialize`` and ``tools/list`` (one tool, ``a``)
as a handshake-era server does. Notifications get no reply; other requests get ``{}``. With
``NOISY_BYTES=1`` in its environment, its first line is the byte ``0xff`` instead (not UTF-8).
``NOISY_LINES`` (a JSON array of strings) are written first of all, one a line. With
``NOISY_BAD_LIST=1`` its ``tools/list`` answer holds a byte that is not UTF-8 (an unreadable answer).
"""

import json
import os
import sys

NOISE = "Starting noisy server on stdio..."
SECRET_NOISE = "debug: token=sk-live-0123456789"


def main() -> None:
    for extra in json.loads(os.environ.get("NOISY_LINES", "[]")):
        sys.stdout.write(extra + "\n")
    if os.environ.get("NOISY_BYTES") == "1":
        sys.stdout.buffer.write(b"\xff\n")
        sys.stdout.flush()
    print(NOISE, flush=True)
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:
            continue
        if message.get("method") == "initialize":
            result = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "noisy", "version": "1"},
            }
        elif message.get("method") == "tools/list":
            print(SECRET_NOISE, flush=True)
            result = {"tools": [{"name": "a", "inputSchema": {"type": "object"}}]}
        else:
            result = {}
        answer = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
        if message.get("method") == "tools/list" and os.environ.get("NOISY_BAD_LIST") == "1":
            answer = answer.replace(b'"a"', b'"a\xff"')
        sys.stdout.buffer.write(answer + b"\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
