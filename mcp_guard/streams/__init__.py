"""The byte streams around the wire vocabulary: what carries lines to and from a peer or a client.

- :mod:`.framing`: line streams over file descriptors and ``anyio`` byte streams (the newline
  framing of :mod:`mcp_guard.wire.framing` applied to real streams), and the claim on stdio.
- :mod:`.pipes`: the pipe line stream of the stdio hot path, and the in-memory direct link.
- :mod:`.ends`: why a connection ended (exit status, signal), as a transport can tell it.

Above :mod:`mcp_guard.wire` (pure) because these need ``anyio``/``asyncio``; below the upstream
peer (:mod:`mcp_guard.peer`) and everything that talks over a stream. The submodules are imported
by name; this package loads nothing by itself (``tests/test_layering.py``).
"""
