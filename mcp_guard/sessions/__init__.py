"""The sessions: what moves JSON-RPC messages between one client side and the upstream side(s).

One :class:`~.session.Session` per client connection, for both commands (the client's lines, requests,
cancellations and replies), and its routing: ``wrap``'s :class:`~.relay.Relay` (one upstream, with
:mod:`.upstream_side` and the 2026-07-28 listings of :mod:`.listings`) or ``serve``'s
:class:`~.gateway.Gateway` (with :mod:`.modern_era`, one :class:`~.link.Link` per upstream, the merged
:mod:`.catalog`, :mod:`.naming` and the per-envelope lists of :mod:`.envelopes`).

Above the upstream peer (:mod:`mcp_guard.peer`) and the call pipeline (:mod:`mcp_guard.calls`);
below the fronts (:mod:`mcp_guard.fronts`) that carry a session's client side. The submodules
are imported by name; this package loads nothing by itself (``tests/test_layering.py``).
"""
