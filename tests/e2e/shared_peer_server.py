"""``http_peer_server.py`` plus what the shared-upstream tests need: standard library only.

Besides the peer server's tools and records (``RECORD_FILE``), it answers
``resources/subscribe``, ``resources/unsubscribe`` and ``logging/setLevel`` with ``{}``,
counts ``initialize`` (``initialize`` answers ``serverInfo.version`` ``"init-N"``) and has
two more tools:

``updated``
    Sends ``notifications/resources/updated`` for the argument ``uri``, then answers ``sent``.
``exit_now``
    Exits at once (status 1) without answering.
``sample``
    As ``ask``, with the server-to-client request ``sampling/createMessage``.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from http_peer_server import TOOLS, PeerServer

TOOLS.extend(
    {"name": name, "description": f"{name} (test tool)", "inputSchema": {"type": "object"}}
    for name in ("updated", "exit_now", "sample")
)


class SharedPeerServer(PeerServer):
    """The peer server with subscriptions, log level and two more tools."""

    initialized = 0

    def handle(self, line: bytes) -> None:
        """Answer the extra methods here; everything else as the peer server does."""
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        method = message.get("method") if isinstance(message, dict) else None
        params = message.get("params") if isinstance(message, dict) and isinstance(message.get("params"), dict) else {}
        assert isinstance(params, dict)
        if isinstance(message, dict) and "id" in message and method is not None:
            if self.record is not None:
                self.record.write(line if line.endswith(b"\n") else line + b"\n")
                self.record.flush()
            request_id = message["id"]
            if method in ("resources/subscribe", "resources/unsubscribe", "logging/setLevel"):
                self.send({"jsonrpc": "2.0", "id": request_id, "result": {}})
                return
            if method == "initialize":
                self.initialized += 1
                result = {
                    "protocolVersion": params.get("protocolVersion", "2025-11-25"),
                    "capabilities": {"tools": {}, "resources": {"subscribe": True}, "logging": {}},
                    "serverInfo": {"name": "shared-peer", "version": f"init-{self.initialized}"},
                }
                self.send({"jsonrpc": "2.0", "id": request_id, "result": result})
                return
            if method == "tools/call" and params.get("name") in ("updated", "exit_now", "sample"):
                if params["name"] == "exit_now":
                    os._exit(1)
                if params["name"] == "sample":
                    self.counter += 1
                    ask_id = f"srv-{self.counter}"
                    self.asks[json.dumps(ask_id)] = request_id
                    sampling = {"messages": [], "maxTokens": 1}
                    self.send({"jsonrpc": "2.0", "id": ask_id, "method": "sampling/createMessage", "params": sampling})
                    return
                arguments = params.get("arguments") if isinstance(params.get("arguments"), dict) else {}
                assert isinstance(arguments, dict)
                note = {"uri": arguments.get("uri")}
                self.send({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": note})
                self.text(request_id, "sent")
                return
            self.record, record = None, self.record
            try:
                super().handle(line)
            finally:
                self.record = record
            return
        super().handle(line)


def main() -> None:
    """Serve on stdin/stdout."""
    try:  # noqa: SIM105 - standard library only
        SharedPeerServer().serve()
    except (BrokenPipeError, KeyboardInterrupt):
        pass
    os._exit(0)  # pending timers do not keep the process alive


if __name__ == "__main__":
    main()
