"""The relay: MCP messages between a client and an upstream server, with the guard in between.

Imports the schema core; the core never imports this package. A :class:`Relay` serves one
client over an upstream *connector* (see ``upstream``: :data:`Connector`, :class:`LineLink`,
:func:`stdio_connector`), which it calls again whenever the upstream has gone away.
"""

from .guard import ToolTable
from .http_upstream import HttpUpstream, open_http_upstream
from .relay import Relay
from .stdio import wrap_stdio, wrap_stdio_http
from .upstream import Connector, LineLink, UpstreamStartError, stdio_connector

__all__ = [
    "Connector",
    "HttpUpstream",
    "LineLink",
    "Relay",
    "ToolTable",
    "UpstreamStartError",
    "open_http_upstream",
    "stdio_connector",
    "wrap_stdio",
    "wrap_stdio_http",
]
