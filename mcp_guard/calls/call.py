"""One ``tools/call`` on its way through the checks: where it goes, what it is, and how it is refused.

The values the call pipeline (:mod:`.pipeline`) passes along and hands back, with no step of their own:

- :class:`Route`: an exposed tool, as the catalog routes a call to it (its server, its own name, its
  classified schemas, its policy and its standing against the lock file);
- :class:`Call`: one call, with what the steps learn of it (its size, its caller's verdict, its trace);
- :class:`Rejection`: a refused call, with the JSON-RPC response it is answered with.

The steps that make rejections, and their kinds, are :mod:`.pipeline`'s; the rejection builders they use
(the ``CallToolResult`` shape) are :mod:`.refusals`'. Texts and logs never hold argument values.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from ..auth.principal import Principal
from ..wire.jsonrpc import INTERNAL_ERROR
from .observer import CallTrace
from .policy import PrincipalVerdict, ToolPolicy
from .recording import new_call_id

if TYPE_CHECKING:  # neither the compiler nor the lock files are loaded with this module (wrap's start, issue 14)
    from ..core import Compiled
    from ..hosts.listing import ShownTool
    from .pinning import PinStatus

__all__ = ["INTERNAL", "Call", "Rejection", "Route"]

INTERNAL: Final = "internal_error"
"""The kind of a call refused because a step failed (the client gets -32603; the journal and metrics say it)."""


@dataclass(frozen=True, slots=True)
class Route:
    """Everything the pipeline knows about an exposed tool.

    Attributes:
        exposed: the name the client calls.
        server: the upstream's name in the config.
        tool: the upstream's own tool name.
        compiled: the tool's classified ``inputSchema``.
        policy: the operator's rules for it.
        pin: its standing against the lock file.
        output: the tool's classified ``outputSchema`` (None: it declares none, or ``outputs`` is ``off``).
        outputs: ``enforce``, ``report`` or ``off`` (``calls.outputs``): what is done with the tool's results.
    """

    exposed: str
    server: str
    tool: str
    compiled: Compiled
    policy: ToolPolicy
    pin: PinStatus = "unpinned"
    output: Compiled | None = None
    outputs: str = "off"

    @property
    def visible(self) -> bool:
        """Whether the tool is listed (and callable) at all."""
        if self.policy.access != "allow":
            return False
        return self.enforceable or self.policy.unsupported != "hide"

    @property
    def enforceable(self) -> bool:
        """Whether its calls can be checked: the ``inputSchema`` is supported and, under ``outputs``
        ``enforce``, so is the ``outputSchema`` (a result that could not be checked is refused)."""
        output = self.output
        return self.compiled.supported and (output is None or output.supported or self.outputs != "enforce")


@dataclass(slots=True)
class Call:
    """One ``tools/call`` on its way through the pipeline.

    Attributes:
        route: where it goes.
        arguments: the ``arguments`` as the client sent them (``{}`` when absent).
        modern: a 2026-07-28-era request (its result then carries ``resultType``).
        call_id: pairs the journal's intent and outcome records.
        size: bytes of the arguments' compact JSON (set by the ``size`` step).
        started: ``time.monotonic()`` when it arrived (the latency metric).
        principal: who sent it, as the HTTP front's verified access token says (issue 27); None
            without OAuth (stdio, or a shared bearer token).
        verdict: what the ``guard.principals`` rules say of it (set by the pipeline's first step that
            asks, :meth:`Pipeline.rules_for`).
        trace: its trace (``--otel``: :meth:`Pipeline.traced`), closed when the call ends; None untraced.
        shown: the tool as the model's host was shown it (``--present-for``: ``calls.presenting``); its
            schema refusals then name the shown tool and say which constraints the model was not shown.
    """

    route: Route
    arguments: Any
    modern: bool = False
    call_id: str = field(default_factory=new_call_id)
    size: int | None = None
    started: float = field(default_factory=time.monotonic)
    principal: Principal | None = None
    verdict: PrincipalVerdict | None = None
    trace: CallTrace | None = None
    shown: ShownTool | None = None


@dataclass(frozen=True, slots=True)
class Rejection:
    """A refused call.

    Attributes:
        kind: ``too_large``, ``validation``, ``unsupported_capability``,
            ``pinned_schema_changed``, ``policy_denied``, ``budget_exceeded``,
            ``no_canonical_form`` or ``internal_error``; the journal records it.
        reason: a line for the log (names rules and sizes, never argument values).
        result: the ``CallToolResult`` to answer with, or ``None`` for an error answer.
        error: the JSON-RPC ``(code, message)`` to answer with when ``result`` is ``None``.
        pointers: the JSON Pointers of the findings of a schema rejection, fit for the log
            (``refusals.logged_pointer``), for its trace; ``()`` for the other kinds.
    """

    kind: str
    reason: str
    result: dict[str, Any] | None = None
    error: tuple[int, str] | None = None
    pointers: tuple[str, ...] = ()

    def response(self, request_id: Any) -> dict[str, Any]:
        """The JSON-RPC response to the client's request ``request_id``."""
        if self.result is not None:
            return {"jsonrpc": "2.0", "id": request_id, "result": self.result}
        code, message = self.error if self.error is not None else (INTERNAL_ERROR, "mcp-guard refused the call")
        return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
