"""The relay: MCP messages between a client and an upstream server, with the guard in between.

Imports the schema core; the core never imports this package.
"""

from .guard import ToolTable
from .relay import Relay
from .stdio import wrap_stdio

__all__ = ["Relay", "ToolTable", "wrap_stdio"]
