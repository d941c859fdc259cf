"""The upstream peer: what ``wrap`` and ``serve`` both need to talk to one upstream, written once.

- :mod:`.connection`: :class:`~.connection.UpstreamPeer`, the one upstream peer of both commands
  (the connection loop with its restart policy, eager with backoff, and why; reading, unreadable
  lines, the guard's own requests, the answers when the upstream goes away), and the
  :class:`~.connection.PeerEvents` protocol by which it tells its owner (``sessions.upstream_side``'s
  ``UpstreamSide`` for ``wrap``, ``sessions.link.Link`` for ``serve``).
- :mod:`.inflight`: the forwarded requests in flight (the id map, their timeouts, late answers).
- :mod:`.requests`: the guard's own requests to an upstream (fresh ids with a random nonce,
  the pending map, the answer or the reason there is none), :class:`RequestFailed`, and the
  paging of list methods.
- :mod:`.backoff`: when to start an upstream again after failed or short-lived starts.
- :mod:`.deadlines`: forwarded requests' timeouts (``--request-timeout``), restarted by progress.
- The transports: :mod:`.upstream` (a stdio upstream process: the connector, its start and stop),
  :mod:`.spawn` (starting it before the event loop), :mod:`.child_stderr` (its stderr, escaped and
  marked), :mod:`.http_upstream` (a streamable HTTP upstream: the connections) with
  :mod:`.http_session` (a connection's state and receive side), :mod:`.http_posts` (its POSTs),
  :mod:`.http_events` (its event streams), :mod:`.http_endpoint` (one HTTP request),
  :mod:`.http_headers` and :mod:`.http_faults`.

Above the wire vocabulary (:mod:`mcp_guard.wire`, :mod:`mcp_guard.wire.jsonrpc`) and the byte
streams (:mod:`mcp_guard.streams`); below the
sessions (:mod:`mcp_guard.sessions.relay`, :mod:`mcp_guard.sessions.gateway`), which own a peer
per upstream and are never imported from here (``tests/test_layering.py``). The submodules are
imported by name (``peer.connection``), not re-exported here: the package stays light.
"""

from .backoff import Backoff
from .deadlines import Deadlines
from .requests import MAX_LIST_PAGES, IdMint, ListingFailed, OwnRequests, PendingRequest, RequestFailed, list_pages

__all__ = [
    "MAX_LIST_PAGES",
    "Backoff",
    "Deadlines",
    "IdMint",
    "ListingFailed",
    "OwnRequests",
    "PendingRequest",
    "RequestFailed",
    "list_pages",
]
