"""The Sigma fixture server over streamable HTTP, for tests of ``mcp-guard check --upstream-url``.

Usage: ``python sigma_http_server.py`` — binds 127.0.0.1 on a free port, prints
``http://127.0.0.1:PORT/mcp`` on stdout once it listens, and serves until killed.
Optional ``--pages N`` splits ``tools/list`` into pages of N tools (opaque cursors), so a
client must follow ``nextCursor`` to see every tool.
"""

from __future__ import annotations

import argparse
import socket
import sys
from pathlib import Path
from typing import Any

import mcp_types as types
import uvicorn
from mcp.server import ServerRequestContext

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "fixtures" / "sigma"))

import server as sigma


def main() -> None:
    """Serve until killed."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=0, help="tools per tools/list page (0: one page)")
    args = parser.parse_args()
    app_server = sigma.build_server()
    if args.pages:
        tools = [types.Tool.model_validate(t) for t in sigma.load_tools()]

        async def on_list_tools(
            ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
        ) -> types.ListToolsResult:
            start = int(params.cursor[len("page-") :]) if params and params.cursor else 0
            end = start + args.pages
            return types.ListToolsResult(
                tools=tools[start:end], next_cursor=f"page-{end}" if end < len(tools) else None
            )

        app_server = type(app_server)(
            "sigma-fixture-paged", version="1.0.0", on_list_tools=on_list_tools, on_call_tool=None
        )
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    app = app_server.streamable_http_app()
    config = uvicorn.Config(app, log_level="warning")
    print(f"http://127.0.0.1:{port}/mcp", flush=True)
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
