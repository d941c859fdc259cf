"""Where a ``tools/call``'s outcome is reported: the :class:`CallObserver` seam of ``wrap`` and ``serve``.

The call pipeline (``calls.pipeline.Pipeline``) and the upstream links tell an observer how
each call ended and when an upstream restarted; :class:`~mcp_guard.calls.metrics.Metrics`
(imported only when metrics are asked for: it needs ``prometheus_client``) counts them. This
module imports nothing outside the standard library, so the stdio path stays lean.
"""

from __future__ import annotations

from typing import Final, Protocol

__all__ = ["OUTCOMES", "UNKNOWN_TOOL", "CallObserver"]

UNKNOWN_TOOL: Final = "_unknown"
"""The ``tool`` an observer is told for a call naming a tool no server listed: that name is the client's
text, not a server's (it may hold anything a model wrote), so it is never a label (trial 3 T4)."""

OUTCOMES: Final = (
    "ok",
    "is_error",
    "rejected",
    "protocol_error",
    "upstream_died",
    "timed_out",
    "cancelled",
    "output_invalid",
)
"""The outcomes of a call known today (the journal's ``result`` values, and ``output_invalid`` for
result checking); an observer takes any string, so a new outcome flows through unchanged."""


class CallObserver(Protocol):
    """What is told of calls and upstreams; every method is quick and never raises."""

    def call_ended(self, server: str, tool: str, outcome: str, kind: str | None, seconds: float | None) -> None:
        """A ``tools/call`` ended.

        Args:
            server: the gateway server's name (``""`` for ``wrap``).
            tool: the upstream's tool name, as the server listed it (untrusted text).
            outcome: one of :data:`OUTCOMES` (or a newer one).
            kind: the rejection kind (``validation``, ``unsupported_capability``, ...) when
                ``outcome`` is ``rejected``, else ``None``.
            seconds: time from the call's arrival to its end, or ``None`` when unknown.
        """

    def upstream_restarted(self, server: str) -> None:
        """An upstream connection was made again after the first (``server``: ``""`` for ``wrap``)."""
