"""FastMCP's proxy (``fastmcp.server.create_proxy``) in front of an upstream command, for comparison.

Usage::

    python benchmarks/fastmcp_proxy.py [--http HOST:PORT] -- COMMAND [ARGS...]

Serves stdio by default, or streamable HTTP at ``/mcp`` with ``--http``. Needs ``fastmcp``,
in a venv of its own (it brings its own ``mcp``): the figures in the docs were measured with
``pip install fastmcp==4.1.6`` (:data:`PINNED`; another version is used, with a warning).
``relay_throughput.py`` and ``http_throughput.py`` run it with the Python given by
``--fastmcp-python``. Used only by the benchmarks, never by mcp-guard itself.
"""

from __future__ import annotations

import argparse
import sys
from typing import Final

PINNED: Final = "4.1.6"
"""The FastMCP version the benchmarks compare against."""


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--http", default=None, help="serve streamable HTTP on HOST:PORT instead of stdio")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    import fastmcp
    from fastmcp.client.transports import StdioTransport
    from fastmcp.server import create_proxy

    if fastmcp.__version__ != PINNED:
        print(f"warning: fastmcp {fastmcp.__version__}, not the pinned {PINNED}", file=sys.stderr)
    proxy = create_proxy(StdioTransport(command=command[0], args=command[1:]))
    if args.http:
        host, _, port = args.http.rpartition(":")
        proxy.run(transport="http", host=host or "127.0.0.1", port=int(port), show_banner=False, log_level="warning")
    else:
        proxy.run(show_banner=False, log_level="warning")
    return 0


if __name__ == "__main__":
    sys.exit(main())
