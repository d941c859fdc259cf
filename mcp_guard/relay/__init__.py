"""The relay: MCP messages between a client and an upstream server, with the guard in between.

Imports the schema core; the core never imports this package. A :class:`Relay` serves one
client over an upstream *connector* (see ``upstream``: :data:`Connector`, :class:`LineLink`,
:func:`stdio_connector`), which it calls again whenever the upstream has gone away.

The names are imported on first use: this package also holds modules of the streams layer
(``framing``, ``pipes``: the byte streams around :mod:`mcp_guard.wire`) and of the peer layer
(``upstream``, ``http_upstream``), and importing one of them must not load the sessions above
them (``tests/test_layering.py``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .guard import ToolTable
    from .http_upstream import HttpUpstream, open_http_upstream
    from .relay import Relay
    from .stdio import wrap_stdio, wrap_stdio_http
    from .upstream import Connector, LineLink, UpstreamStartError, stdio_connector

_HOMES = {
    "Connector": "upstream",
    "HttpUpstream": "http_upstream",
    "LineLink": "upstream",
    "Relay": "relay",
    "ToolTable": "guard",
    "UpstreamStartError": "upstream",
    "open_http_upstream": "http_upstream",
    "stdio_connector": "upstream",
    "wrap_stdio": "stdio",
    "wrap_stdio_http": "stdio",
}

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


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{home}", __name__), name)
    globals()[name] = value
    return value
