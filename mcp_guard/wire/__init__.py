"""The wire vocabulary shared by the relay (``wrap``) and the gateway (``serve``), below both.

- :mod:`.meta`: the ``_meta`` keys (the guard's ``mcp-guard/`` ones, the 2026-07-28 era's
  envelope keys), the era test, and the removal of an upstream's ``mcp-guard/`` keys.
- :mod:`.messages`: the texts of the guard's own JSON-RPC errors that both sides send, and why
  a request of the guard's own failed.
- :mod:`.jsonrpc`: JSON-RPC 2.0 codes, ids, the guard's decoders and its strict serializer.
- :mod:`.framing`: newline-delimited framing without I/O (the line splitter and its cap).

The byte streams around the splitter (:mod:`mcp_guard.streams.framing`, which needs ``anyio``,
and the asyncio pipe path :mod:`mcp_guard.streams.pipes`) sit in this layer too, outside the
package. This package imports the schema core at most, never ``mcp``, ``anyio`` or an HTTP
library, and nothing above it (``tests/test_layering.py``).
"""
