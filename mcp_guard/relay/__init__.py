"""The relay: MCP messages between a client and an upstream server, with the guard in between.

Imports the schema core; the core never imports this package.
"""

from .guard import ToolTable
from .http_upstream import HttpUpstream, open_http_upstream
from .relay import Relay
from .stdio import wrap_stdio, wrap_stdio_http

__all__ = ["HttpUpstream", "Relay", "ToolTable", "open_http_upstream", "wrap_stdio", "wrap_stdio_http"]
