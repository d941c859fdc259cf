"""The fronts: what serves a session to a client, and the entries that run one.

- :mod:`.stdio`: ``wrap`` over stdio (a stdio or an HTTP upstream), the hot path.
- :mod:`.http`: the streamable HTTP front (``wrap --http``, ``serve --http``).
- :mod:`.serve`: ``serve``'s entry (one gateway session over stdio, or over the HTTP front).
- :mod:`.stop_signals`: holding SIGINT/SIGTERM until the upstreams are stopped.

Above the sessions (:mod:`mcp_guard.sessions`); below the commands. The submodules are imported
by name and on first use: ``wrap`` over stdio never loads the HTTP front (``tests/test_layering.py``,
``tests/fronts/test_lean_imports.py``).
"""
