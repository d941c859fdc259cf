"""What is left of the relay package while its modules move to the rooms of their layers (issue 23).

The byte streams are in :mod:`mcp_guard.streams`, the upstream transports in :mod:`mcp_guard.peer`;
the rest moves next. Import the modules by name; this package re-exports nothing.
"""
