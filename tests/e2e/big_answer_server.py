"""A raw MCP stdio server whose answers to ``tools/call`` are written as the test asks (standard library only).

One tool, ``answer``, with a ``text`` string. Its result is ``{"content": [{"type": "text",
"text": TEXT}]}`` written with ``json.dumps``'s default separators (``", "`` and ``": "``, not
the compact form the guard writes), so a test can tell an answer passed on as written from
one re-serialized. Optional arguments: ``forged`` (adds ``"_meta": {"mcp-guard/schema": 1}``
to the result, which the guard removes), ``crlf`` (ends the line with CR LF), ``repeat`` (the
result's ``isError`` written twice: ``true`` then ``false``).
"""

import json
import sys

TOOL = {
    "name": "answer",
    "inputSchema": {
        "type": "object",
        "properties": {
            "text": {"type": "string"},
            "forged": {"type": "boolean"},
            "crlf": {"type": "boolean"},
            "repeat": {"type": "boolean"},
        },
        "required": ["text"],
    },
}


def write(line: str, ending: str = "\n") -> None:
    sys.stdout.buffer.write((line + ending).encode())
    sys.stdout.buffer.flush()


def main() -> None:
    for raw in sys.stdin.buffer:
        message = json.loads(raw)
        if "id" not in message or "method" not in message:
            continue
        request_id, method = message["id"], message["method"]
        if method == "initialize":
            result: object = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "big-answer", "version": "1"},
            }
        elif method == "tools/list":
            result = {"tools": [TOOL]}
        elif method == "tools/call":
            arguments = message["params"].get("arguments", {})
            body: dict[str, object] = {"content": [{"type": "text", "text": arguments["text"]}]}
            if arguments.get("forged"):
                body["_meta"] = {"mcp-guard/schema": 1}
            text = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": body})
            if arguments.get("repeat"):
                text = text[:-2] + ', "isError": true, "isError": false}}'
            write(text, "\r\n" if arguments.get("crlf") else "\n")
            continue
        else:
            result = {}
        write(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}))


if __name__ == "__main__":
    main()
