"""The wire vocabulary shared by the relay (``wrap``) and the gateway (``serve``), below both.

- :mod:`.meta`: the ``_meta`` keys (the guard's ``mcp-guard/`` ones, the 2026-07-28 era's
  envelope keys), the era test, and the removal of an upstream's ``mcp-guard/`` keys.
- :mod:`.messages`: the texts of the guard's own JSON-RPC errors that both sides send, and why
  a request of the guard's own failed.

JSON-RPC serialization, ids and codes are in :mod:`mcp_guard.relay.jsonrpc`, framing in
:mod:`mcp_guard.relay.framing` and :mod:`mcp_guard.relay.pipes` (to move here once the work on
them is merged); they belong to this layer. This package imports the schema core at most,
never ``mcp`` or ``anyio``, and nothing above it (``tests/test_layering.py``).
"""
