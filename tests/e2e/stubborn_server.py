"""A raw MCP stdio server that is hard to stop, for the shutdown-signal tests: standard library only.

At start it starts ``sleep 600`` in its own process group (the group the guard made for it),
then appends the line ``SERVER_PID CHILD_PID`` to the file ``STUBBORN_PIDS``, so a test knows
which processes must be gone once the guard has exited. It answers ``initialize``, ``ping``
and ``tools/list`` (one tool, ``hang``, schema ``{"type": "object"}``); ``tools/call`` is never
answered; notifications get no reply; other requests get -32601.

Environment:

``STUBBORN_PIDS``
    Where the pid line is appended.
``IGNORE_TERM=1``
    Ignore SIGTERM, before the child starts: the child (``sleep``) inherits the ignored
    SIGTERM, so only SIGKILL ends either.
``LINGER=1``
    Keep running (600 s) after stdin closes, instead of exiting at once.
``NO_LIST=1``
    Never answer ``tools/list`` either: a call the guard holds for its own listing stays held.
"""

import json
import os
import signal
import subprocess
import sys
import time


def reply(request_id: object, result: object) -> None:
    """Write one response line."""
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}) + "\n")
    sys.stdout.flush()


def main() -> None:
    """Serve stdin until EOF (then linger, with ``LINGER=1``)."""
    if os.environ.get("IGNORE_TERM") == "1":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    child = subprocess.Popen(["sleep", "600"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    with open(os.environ["STUBBORN_PIDS"], "a") as pids:
        pids.write(f"{os.getpid()} {child.pid}\n")
    for line in sys.stdin:
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        if request_id is None or method == "tools/call":
            continue
        if method == "tools/list" and os.environ.get("NO_LIST") == "1":
            continue
        if method == "initialize":
            reply(
                request_id,
                {
                    "protocolVersion": message["params"]["protocolVersion"],
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "stubborn", "version": "1"},
                },
            )
        elif method == "ping":
            reply(request_id, {})
        elif method == "tools/list":
            reply(request_id, {"tools": [{"name": "hang", "inputSchema": {"type": "object"}}]})
        else:
            error = {"code": -32601, "message": "method not found"}
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}) + "\n")
            sys.stdout.flush()
    if os.environ.get("LINGER") == "1":
        time.sleep(600)


if __name__ == "__main__":
    main()
