"""A raw MCP stdio server whose tools are heavy to judge (standard library only): issue 25 items 1 and 4.

- ``HEAVY_PROPERTIES=N``: ``tools/list`` answers one tool, ``big``, whose ``inputSchema`` declares
  ``N`` properties (the answer's text is made once, at start, so the server answers at once).
- otherwise: ``any_of`` (``anyOf`` of 1,000 branches, each declaring one property, under
  ``unevaluatedProperties: false``) and ``all_of`` (``allOf`` of 50 such branches).

Every ``tools/call`` is answered at once with an empty text result; ``ping`` with ``{}``.
``HEAVY_RESULT=N``: the tools also hold ``out``, whose ``outputSchema`` wants an array of objects, and a
call to it is answered with ``structuredContent`` of ``N`` such objects (made once, at start).
``HEAVY_RELIST=1`` (with ``HEAVY_PROPERTIES``): the tools also hold ``relist``, whose description counts
the listings; a call to it is answered, then followed by ``notifications/tools/list_changed``.
``HEAVY_EXIT_AFTER=METHOD``: the server exits right after its answer to the first ``METHOD`` request
(its end follows the answer's last byte at once).
"""

import json
import os
import sys

OUTPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
                "required": ["a", "b"],
            },
        }
    },
    "required": ["items"],
}


def call_result(count: int) -> str:
    items = ",".join(f'{{"a":{i},"b":"x{i}"}}' for i in range(count))
    return f'{{"content":[{{"type":"text","text":"{count} items"}}],"structuredContent":{{"items":[{items}]}}}}'


def tools() -> list[dict[str, object]]:
    count = int(os.environ.get("HEAVY_PROPERTIES", "0"))
    if count:
        properties = {f"p{i}": {"type": "string"} for i in range(count)}
        relist = [{"name": "relist", "inputSchema": {"type": "object"}}] if os.environ.get("HEAVY_RELIST") else []
        return [{"name": "big", "inputSchema": {"type": "object", "properties": properties}}, *relist]
    branches = [{"properties": {f"a{i}": {"type": "string"}}} for i in range(1000)]
    listed: list[dict[str, object]] = []
    if os.environ.get("HEAVY_RESULT"):
        listed.append({"name": "out", "inputSchema": {"type": "object"}, "outputSchema": OUTPUT_SCHEMA})
    return [
        *listed,
        {"name": "any_of", "inputSchema": {"type": "object", "anyOf": branches, "unevaluatedProperties": False}},
        {"name": "all_of", "inputSchema": {"type": "object", "allOf": branches[:50]}},
    ]


def main() -> None:
    listing = json.dumps({"tools": tools()})
    listings = 0
    result_count = int(os.environ.get("HEAVY_RESULT", "0"))
    big_result = call_result(result_count) if result_count else None
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
            listings += 1  # (the description of relist, when listed, says which listing this is)
            result = listing.replace('"name": "relist"', f'"name": "relist", "description": "listing {listings}"')
        elif method == "tools/call" and big_result is not None and message["params"]["name"] == "out":
            result = big_result
        elif method == "tools/call":
            result = '{"content": [{"type": "text", "text": ""}]}'
        else:
            result = "{}"
        out.write(f'{{"jsonrpc": "2.0", "id": {request_id}, "result": {result}}}\n'.encode())
        if method == "tools/call" and message["params"]["name"] == "relist":
            out.write(b'{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}\n')
        out.flush()
        if method == os.environ.get("HEAVY_EXIT_AFTER"):
            return


if __name__ == "__main__":
    main()
