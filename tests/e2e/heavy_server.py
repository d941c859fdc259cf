"""A raw MCP stdio server whose tools are heavy to judge (standard library only): issue 25 items 1 and 4.

- ``HEAVY_PROPERTIES=N``: ``tools/list`` answers one tool, ``big``, whose ``inputSchema`` declares
  ``N`` properties (the answer's text is made once, at start, so the server answers at once).
- otherwise: ``any_of`` (``anyOf`` of 1,000 branches, each declaring one property, under
  ``unevaluatedProperties: false``) and ``all_of`` (``allOf`` of 50 such branches).

Every ``tools/call`` is answered at once with an empty text result; ``ping`` with ``{}``.
``HEAVY_EXIT_AFTER=METHOD``: the server exits right after its answer to the first ``METHOD`` request
(its end follows the answer's last byte at once).
"""

import json
import os
import sys


def tools() -> list[dict[str, object]]:
    count = int(os.environ.get("HEAVY_PROPERTIES", "0"))
    if count:
        properties = {f"p{i}": {"type": "string"} for i in range(count)}
        return [{"name": "big", "inputSchema": {"type": "object", "properties": properties}}]
    branches = [{"properties": {f"a{i}": {"type": "string"}}} for i in range(1000)]
    return [
        {"name": "any_of", "inputSchema": {"type": "object", "anyOf": branches, "unevaluatedProperties": False}},
        {"name": "all_of", "inputSchema": {"type": "object", "allOf": branches[:50]}},
    ]


def main() -> None:
    listing = json.dumps({"tools": tools()})
    out = sys.stdout.buffer
    for raw in sys.stdin.buffer:
        message = json.loads(raw)
        if "id" not in message or "method" not in message:
            continue
        request_id, method = json.dumps(message["id"]), message["method"]
        if method == "initialize":
            result = json.dumps(
                {
                    "protocolVersion": message["params"]["protocolVersion"],
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "heavy", "version": "1"},
                }
            )
        elif method == "server/discover":  # (2026-07-28 era: it offers tools)
            result = json.dumps({"capabilities": {"tools": {}}, "serverInfo": {"name": "heavy", "version": "1"}})
        elif method == "tools/list":
            result = listing
        elif method == "tools/call":
            result = '{"content": [{"type": "text", "text": ""}]}'
        else:
            result = "{}"
        out.write(f'{{"jsonrpc": "2.0", "id": {request_id}, "result": {result}}}\n'.encode())
        out.flush()
        if method == os.environ.get("HEAVY_EXIT_AFTER"):
            return


if __name__ == "__main__":
    main()
