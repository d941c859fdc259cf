"""What happens to every ``tools/call`` in the gateway, in order, as one list of steps.

The order (issue 6, section 3), each step either letting the call on or rejecting it:

1. ``visibility`` — a tool that is denied or hidden by policy, or hidden because its schema is
   unsupported (``unsupported: hide``), is answered as an unknown tool would be: JSON-RPC
   -32602. This comes first so that no later answer (a validation message) reveals it. Then the
   rules per caller (``guard.principals``, :mod:`.principals`; issue 27): a tool they hide from the
   call's principal is answered the same way, one they deny is refused ``policy_denied`` naming
   the rule (the caller was not shown it, but may know it exists).
2. ``size`` — ``too_large``: the arguments' compact JSON exceeds the tool's limit (or its caller's). Checked
   before validating, so an oversized call costs no validation work.
3. ``schema`` — the core's check against the tool's ``inputSchema`` (``validation`` or
   ``unsupported_capability``, the core's two kinds, unchanged).
4. ``pinning`` — ``pinned_schema_changed``: the tool differs from its lock file digest.
5. ``policy`` — ``policy_denied``: ``newTools`` is ``reject`` and the tool is new since the lock,
   or there is no lock file at all (then every tool is new: fail closed until ``mcp-guard pin``).
6. ``budget`` — ``budget_exceeded``: the tool's calls-per-minute budget, or its caller's
   (``guard.principals``), is spent (a slot of each is taken, both or neither, only by a call that
   passes every earlier step). With a shared budget (``guard.state``,
   Redis: :class:`.stores.SharedBudget`) the slot is taken in the store, awaited after steps 1-5;
   a store that cannot be reached refuses the governed call with ``budget_unavailable``.
7. ``journal`` — the intent record, on disk (fsync) before the call is forwarded, or committed
   in the database (:class:`.stores.JournalSink`, PostgreSQL) before it is forwarded; a database
   that cannot commit it refuses the call -32603, saying whether a retry may help
   (:mod:`.store_refusals`, as for ``budget_unavailable``).
   ``no_canonical_form``: the arguments hold an integer beyond the double range, which RFC 8785
   canonical JSON (the digest's input) cannot express (a client's such integer is an ``Inexact``,
   refused by the schema step first: ``json_values.literal_int``; this step is the fence behind it).

Steps 1-6 are checks (synchronous: ``wrap`` runs them on its stdio hot path, see
:meth:`Pipeline.check`, the entry both commands take; :meth:`Pipeline.admit` adds a shared budget's
step 6, awaited, and step 7); step 7 writes to disk or to the database. Before them, the prelude both
commands share: :func:`tool_name` (a call naming no tool) and :meth:`Pipeline.unlisted` (a name no
listing has), one text each. A command runs the steps its options enable
(:data:`WRAP_STEPS` for ``wrap``: visibility and schema; ``serve``: all), so what a client sees
for a refused call is decided here, once, for both commands.

Then the caller forwards the call and reports its answer to :meth:`Pipeline.finish`, which
writes the outcome record. The records (the journal's intent and outcome, the observer told, the
trace closed) are made by :mod:`.recording`, whose :class:`~.recording.Recorder` the pipeline holds;
this module decides which records a call gets, and when. A step that raises rejects the call with JSON-RPC -32603 (fail
closed; kind ``internal_error`` in the journal). A rejected call gets an outcome record
(``rejected`` with its kind) and no intent.

Rejections other than -32602 and -32603 are ``CallToolResult`` objects with ``isError: true``
and ``_meta["mcp-guard/rejection"] = {"kind", "tool", "issues", ...}`` (the relay's shape;
``issues`` is empty for the gateway's own kinds, which carry their own fields instead).
Texts and logs never hold argument values.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any, Final

from ..wire.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS
from .call import INTERNAL, Call, Rejection
from .observer import CallObserver, CallTracer, Origins, tracer
from .outputs import OUTPUT_INVALID, judge_result, prejudge_result, unsupported_output_result
from .policy import NOBODY, Budget, PrincipalVerdict, argument_bytes
from .recording import Recorder, ended, ended_unrouted, outcome_of
from .refusals import logged_pointers, logged_reason, refusal_result, schema_verdict, unknown_tool
from .store_refusals import budget_unavailable, journal_unavailable
from .stores import JournalSink, SharedBudget, StoreUnavailable

if TYPE_CHECKING:  # (the file journal and the guard.principals rules load where configured: idle memory)
    from .journal import Journal, Result
    from .principals import PrincipalPolicy

__all__ = [
    "BUDGET_EXCEEDED",
    "LISTING_FAILED",
    "NO_CANONICAL_FORM",
    "NO_TOOL_NAME",
    "PINNED_SCHEMA_CHANGED",
    "POLICY_DENIED",
    "SERVER_UNAVAILABLE",
    "STEP_NAMES",
    "TOO_LARGE",
    "WRAP_STEPS",
    "Pipeline",
    "shown",
    "tool_name",
]

log = logging.getLogger("mcp_guard")

TOO_LARGE: Final = "too_large"
PINNED_SCHEMA_CHANGED: Final = "pinned_schema_changed"
POLICY_DENIED: Final = "policy_denied"
BUDGET_EXCEEDED: Final = "budget_exceeded"
NO_CANONICAL_FORM: Final = "no_canonical_form"
SERVER_UNAVAILABLE: Final = "server_unavailable"
"""Journal kind of a call to a tool of a server that is down and not about to start (-32603)."""
LISTING_FAILED: Final = "listing_failed"
"""Trace kind of a call answered -32603 because its server's tools could not be listed (to judge it by)."""
NO_TOOL_NAME: Final = "Invalid params: tools/call needs a string `name`"
"""The -32602 text answering a ``tools/call`` whose ``params`` name no tool (``wrap`` and ``serve``)."""

STEP_NAMES: Final = ("visibility", "size", "schema", "pinning", "policy", "budget", "journal")

WRAP_STEPS: Final = frozenset({"visibility", "schema"})
"""The steps ``wrap``'s options enable (``--hide-unsupported`` is the visibility step's; wrap has no
size limit, pins, policy, budget or journal)."""


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


def _budgets(call: Call, verdict: PrincipalVerdict) -> list[tuple[str, int]]:
    """The budgets a call takes a slot of: ``(key, limit)`` of the tool's (key: its exposed name) and of its
    caller's (``NAME:principal:PSEUDONYM``, :func:`.principals.principal_key`; the calls without a principal
    that an ``authenticated: false`` rule budgets count as one caller, ``NAME:anonymous``)."""
    route = call.route
    wanted = []
    if route.policy.calls_per_minute is not None:
        wanted.append((route.exposed, route.policy.calls_per_minute))
    if verdict.calls_per_minute is not None:  # (set by guard.principals rules: their module is loaded)
        from .principals import principal_key

        who = "anonymous" if call.principal is None else f"principal:{principal_key(call.principal)}"
        wanted.append((f"{route.exposed}:{who}", verdict.calls_per_minute))
    return wanted


def _over_budget(call: Call, spent: tuple[str, int], wait: float) -> Rejection:
    """``budget_exceeded``: the budget ``spent`` (``(key, limit)``, :func:`_budgets`) is spent, a slot frees in
    ``wait`` seconds. For a caller's budget (``guard.principals``) the rejection names its rule (``rule``),
    never who the caller is.
    """
    exposed = call.route.exposed
    key, limit = spent
    seconds = max(1, math.ceil(wait))
    verdict = call.verdict
    per_caller = key != exposed
    who = " by each caller" if per_caller else ""
    text = (
        f"mcp-guard refused this call to `{exposed}`: the tool may be called {_times(limit)} per minute{who} and "
        "that budget is spent, so nothing was sent to the server. "
        f"Try again in {seconds} second{'' if seconds == 1 else 's'}."
    )
    detail: dict[str, Any] = {"limit_per_minute": limit, "retry_after_seconds": seconds}
    reason = f"{limit} call{'' if limit == 1 else 's'} per minute"
    if per_caller and verdict is not None:
        detail["rule"] = verdict.budget_rule
        reason += f" per caller (guard.principals {verdict.budget_rule!r})"
    result = refusal_result(BUDGET_EXCEEDED, exposed, text, modern=call.modern, **detail)
    return Rejection(BUDGET_EXCEEDED, reason, result=result)


def _denied_for_caller(call: Call, verdict: PrincipalVerdict) -> Rejection:
    """``policy_denied`` by a ``guard.principals`` rule: the refusal names the rule, never the caller's claims."""
    exposed = call.route.exposed
    text = (
        f"mcp-guard refused this call to `{exposed}`: the guard's rule `{verdict.rule}` does not let this caller "
        "use this tool, so nothing was sent to the server. Changing the arguments will not help; the operator "
        "decides who may call which tool."
    )
    result = refusal_result(
        POLICY_DENIED, exposed, text, modern=call.modern, reason="principal_rule", rule=verdict.rule
    )
    return Rejection(POLICY_DENIED, f"denied for this caller by guard.principals {verdict.rule!r}", result=result)


def _unknown(call: Call, kind: str, reason: str) -> Rejection:
    return Rejection(kind, reason, error=unknown_tool(call.route.exposed))


def tool_name(params: Any) -> str | None:
    """The prelude of every ``tools/call`` (``params``: the request's): the tool name it calls, or None when
    it names none (:meth:`Pipeline.unlisted` answers it then, with :data:`NO_TOOL_NAME`)."""
    name = params.get("name") if type(params) is dict else None
    return name if type(name) is str else None


def shown(name: str | None) -> str:
    """A tool name for the log: at most 64 characters, in backquotes (control characters are escaped by the
    log formatter)."""
    if name is None:
        return "(no tool name)"
    return f"`{name[:64]}`" + ("…" if len(name) > 64 else "")


Check = Callable[[Call], "Rejection | None"]


class Pipeline:
    """The ordered checks of every call, and when its records are made (by :mod:`.recording`).

    Args:
        budget: the calls-per-minute counters (shared by all calls of a gateway): in process
            (:class:`.policy.Budget`, the default) or in a shared store (:class:`.stores.SharedBudget`).
        journal: where intents and outcomes go: a JSONL file, a database
            (:class:`.stores.JournalSink`), or ``None`` for no journal.
        new_tools: ``"allow"`` or ``"reject"`` (``guard.newTools``).
        principals: the ``guard.principals`` rules (``None``: none; ``wrap`` has none).
        enabled: the names of the steps to run (default: all of :data:`STEP_NAMES`; ``wrap``:
            :data:`WRAP_STEPS`).
        client: the session's client side: the HTTP front's knows where each request came from
            (``calls.observer.Origins``), which a traced call is told (its session, its HTTP trace headers).

    Attributes:
        checks: ``(name, check)`` of steps 1-6 in the order of :data:`STEP_NAMES`, the enabled
            ones. Each returns ``None`` (go on) or a :class:`Rejection`.
        journaled: whether the ``journal`` step is enabled (it is run when there is a journal).
        recorder: the journal's records of the calls (:class:`.recording.Recorder`, over ``journal``).
        observer: told how each call ended (``calls.observer.CallObserver``: metrics); None until set.
        tracer: opens a trace per call (``calls.observer.CallTracer``), the one installed, or None.
    """

    def __init__(
        self,
        *,
        budget: Budget | SharedBudget | None = None,
        journal: Journal | JournalSink | None = None,
        new_tools: str = "allow",
        principals: PrincipalPolicy | None = None,
        enabled: Collection[str] = STEP_NAMES,
        client: object = None,
    ) -> None:
        self.budget: Budget | SharedBudget = budget if budget is not None else Budget()
        self.origins = client if isinstance(client, Origins) else None  # (checked once: a slow isinstance)
        self.recorder = Recorder(journal)
        self.new_tools = new_tools
        self.principals = principals
        self.observer: CallObserver | None = None  # (set by the command: metrics)
        self.tracer: CallTracer | None = tracer()  # (--otel; calls.observer.install_tracer)
        every: tuple[tuple[str, Check], ...] = (
            ("visibility", self.check_visibility),
            ("size", self.check_size),
            ("schema", self.check_schema),
            ("pinning", self.check_pinning),
            ("policy", self.check_policy),
            ("budget", self.check_budget),
        )
        assert (*(name for name, _ in every), "journal") == STEP_NAMES
        unknown = set(enabled) - set(STEP_NAMES)
        if unknown:
            raise ValueError(f"unknown pipeline steps: {sorted(unknown)}")
        self.checks = tuple((name, check) for name, check in every if name in enabled)
        self.journaled = "journal" in enabled
        self._shared_budget = "budget" in enabled and not isinstance(self.budget, Budget)

    def rules_for(self, call: Call) -> PrincipalVerdict:
        """What the ``guard.principals`` rules say of ``call`` (its principal, its tool); kept on the call."""
        verdict = call.verdict
        if verdict is None:
            principals = self.principals
            route = call.route
            verdict = principals.verdict(call.principal, route.server, route.tool) if principals else NOBODY
            call.verdict = verdict
        return verdict

    @property
    def steps(self) -> tuple[str, ...]:
        """The names of the enabled steps, in order."""
        return (*(name for name, _ in self.checks), *(("journal",) if self.journaled else ()))

    def judge(self, call: Call) -> Rejection | None:
        """Run the enabled checks (steps 1-6) in order, without waiting: the first rejection, or None.

        A check that raises rejects the call with -32603 (kind ``internal_error``; fail closed).
        Nothing is logged or journaled here (see :meth:`admit`, and ``wrap``'s relay).
        """
        for name, check in self.checks:
            try:
                rejection = check(call)
            except Exception:
                rejection = self._failed(call, name)
            if rejection is not None:
                return rejection
        return None

    def traced(self, call: Call, request_id: Any, params: dict[str, Any]) -> None:
        """Open ``call``'s trace when a tracer is installed (``request_id``, ``params``: the client's request's;
        its ``_meta`` holds the caller's trace context; the HTTP front's client side knows the request's session
        and HTTP trace context headers). Call it before :meth:`check`; the call's end closes it."""
        if self.tracer is not None:
            route = call.route
            origin = self.origins.origin_of(request_id) if self.origins is not None else None
            call.trace = self.tracer.call_started(
                route.server, route.tool, request_id, params.get("_meta"), call.modern, origin
            )

    @staticmethod
    def forwarded_params(call: Call, params: dict[str, Any]) -> dict[str, Any]:
        """The ``params`` to forward: for a traced call, a copy whose ``_meta`` carries the trace context of the
        upstream round trip (``traceparent``, ``tracestate``: the MCP convention for W3C trace context); else
        ``params`` itself (relayed unchanged: no ``_meta`` is added when tracing is off). A ``_meta`` that is not
        an object is left as it is."""
        trace = call.trace
        if trace is None:
            return params
        meta = params.get("_meta", {})
        if type(meta) is not dict:
            return params
        carrier = trace.forwarding()
        return {**params, "_meta": {**meta, **carrier}} if carrier else params

    def check(self, call: Call) -> Rejection | None:
        """The pipeline's entry, for ``wrap`` and ``serve`` alike: the enabled checks (steps 1-6), without
        waiting. A rejection is logged (:meth:`refused`) and the observer told; its journal record is
        :meth:`admit`'s, which runs this first. A traced call's trace is told of the judgement."""
        trace = call.trace
        if trace is None:
            rejection = self.judge(call)
        else:
            started = time.time_ns()
            rejection = self.judge(call)
            kind, pointers = (None, ()) if rejection is None else (rejection.kind, rejection.pointers)
            trace.judged(started, kind, pointers)
        if rejection is not None:
            self.refused(call.route.exposed, rejection, loud=call.route.policy.access == "deny")
            ended(self.observer, call, "rejected", rejection.kind)
        return rejection

    @staticmethod
    def refused(exposed: str | None, rejection: Rejection, *, loud: bool = False) -> None:
        """The log line of a refused call (one form for both commands, never an argument value): at INFO
        for a -32602 answer (a hidden tool: the client's mistake, or its probe), else at WARNING, as
        with ``loud`` (a tool the operator denied, a name no listing has)."""
        quiet = not loud and rejection.error is not None and rejection.error[0] == INVALID_PARAMS
        level = logging.INFO if quiet else logging.WARNING
        log.log(level, "rejected tools/call %s (%s): %s", shown(exposed), rejection.kind, rejection.reason)

    def unlisted(self, name: str | None, server: str = "", request: tuple[Any, Any] | None = None) -> Rejection:
        """The prelude's rejection of a call naming no tool (``name`` None: -32602 :data:`NO_TOOL_NAME`) or
        one that no listing has (-32602 ``Unknown tool``, as a hidden tool is answered): logged, and the
        observer told (``server``: where the name would have gone; the tool counted as
        ``calls.observer.UNKNOWN_TOOL``, a name the client chose), and traced (``request``: the request's
        ``(id, params)``, see :meth:`traced`)."""
        if name is None:
            rejection = Rejection("invalid", "no tool name", error=(INVALID_PARAMS, NO_TOOL_NAME))
        else:
            rejection = Rejection("unknown", "not listed", error=unknown_tool(name))
        self.refused(name, rejection, loud=True)
        if name is not None:
            ended_unrouted(self.observer, server, rejection.kind)
        self.trace_unrouted(rejection.kind, INVALID_PARAMS, request, server)
        return rejection

    def trace_unrouted(self, kind: str, code: int | None, request: tuple[Any, Any] | None, server: str = "") -> None:
        """The span of a call answered before routing (``CallTracer.refused``), when a tracer is installed:
        ``kind`` and the JSON-RPC error ``code`` answered (None: a tool error result); ``request``: its
        ``(id, params)`` (None: untraced); ``server``: where it would have gone. :meth:`unlisted` and
        :meth:`refused_unrouted` call it; a session or ``presenting.map_call``, the other such answers."""
        if self.tracer is not None and request is not None:
            request_id, params = request
            meta = params.get("_meta") if type(params) is dict else None
            origin = self.origins.origin_of(request_id) if self.origins is not None else None
            self.tracer.refused(server, tool_name(params), request_id, meta, origin, kind, code)

    @staticmethod
    def _failed(call: Call, name: str) -> Rejection:
        log.exception("internal error in the %s step for `%s`; the call is refused", name, call.route.exposed)
        text = "mcp-guard could not check this call; it was not forwarded"
        return Rejection(INTERNAL, f"the {name} step failed", error=(INTERNAL_ERROR, text))

    async def admit(self, call: Call) -> Rejection | None:
        """Run every enabled step in order; ``None`` means forward the call now (its intent is on disk).

        A rejection is logged and journaled (outcome ``rejected``) before it is returned.
        """
        rejection = self.check(call)
        if rejection is not None:
            await self.recorder.outcome(call, "rejected", rejection.kind)
            return rejection
        if self._shared_budget:
            try:
                rejection = await self.take_shared_budget(call)
            except Exception:
                rejection = self._failed(call, "budget")
        if rejection is None and self.journaled:
            try:
                rejection = await self.write_intent(call)
            except StoreUnavailable as exc:  # (a database journal: the client is told whether a retry may help)
                rejection = journal_unavailable(exc)
            except Exception:
                rejection = self._failed(call, "journal")
        if rejection is not None:
            self.refused(call.route.exposed, rejection)
            ended(self.observer, call, "rejected", rejection.kind)
            await self.recorder.outcome(call, "rejected", rejection.kind)
        return rejection

    async def finish(self, call: Call, response: Any, result: Result | None = None) -> Result:
        """Record how a forwarded call ended (observer, trace, journal: :mod:`.recording`); ``response`` is the
        upstream's JSON-RPC response or ``None``.

        ``result`` overrides what the response says (``cancelled``: the client gave up on it); else it is
        ``calls.recording.outcome_of(response)``.
        """
        result = result if result is not None else outcome_of(response)
        ended(self.observer, call, result, None)
        await self.recorder.outcome(call, result, None)
        return result

    def observe(self, call: Call, result: str, kind: str | None) -> None:
        """Tell the observer (if any) how ``call`` ended, and close its trace (if any): ``calls.recording.ended``."""
        ended(self.observer, call, result, kind)

    @staticmethod
    def judge_output(call: Call, response: Any) -> tuple[Any, Result | None]:
        """The upstream's answer to a forwarded call, judged against the tool's ``outputSchema`` (``calls.outputs``).

        Returns:
            ``(response to pass on, outcome)``: the response unchanged and ``None`` when nothing was judged or
            the result is valid; ``output_invalid`` when it broke the schema (under ``enforce`` the response
            then carries the tool error replacing the result; under ``report`` the result with its findings).
            An error response, or a tool without an ``outputSchema``, is passed on as it is.
        """
        route = call.route
        output = route.output
        if output is None or route.outputs == "off" or type(response) is not dict or "result" not in response:
            return response, None
        verdict = judge_result(route.exposed, output, response["result"], route.outputs, modern=call.modern)
        if verdict.result is not response["result"]:
            response = {**response, "result": verdict.result}
        return response, OUTPUT_INVALID if verdict.outcome == OUTPUT_INVALID else None

    @staticmethod
    def prepare_output(call: Call | None, response: Any) -> None:
        """(In a worker thread.) What :meth:`judge_output` will do with ``call``'s big answer ``response``, done
        now (``calls.outputs.prejudge_result``: its check against the ``outputSchema``); nothing for a
        ``call`` of ``None``, or one whose result is not judged. The loop's :meth:`judge_output` then takes
        the report made here."""
        if call is None:
            return
        route = call.route
        if route.output is not None and route.outputs != "off" and type(response) is dict and "result" in response:
            prejudge_result(route.output, response["result"], route.outputs)

    async def refused_unrouted(
        self, server: str, exposed: str, kind: str, request: tuple[Any, Any] | None = None
    ) -> None:
        """Journal a call refused before it could be routed (``kind``: :data:`SERVER_UNAVAILABLE`, its
        server down): an outcome record ``rejected`` with ``kind``, its ``tool`` the name the client
        called (the server's own name for it is not at hand while it is down). Every answered call
        leaves a record (docs/gateway.md, The journal). The observer (metrics) counts it too, with no
        duration (the call was answered at once), and it is traced as :meth:`unlisted` traces (-32603)."""
        ended_unrouted(self.observer, server, kind)
        self.trace_unrouted(kind, INTERNAL_ERROR, request, server)
        await self.recorder.unrouted(server, exposed, kind)

    # --- the steps, in order ------------------------------------------------------------------

    def check_visibility(self, call: Call) -> Rejection | None:
        """Denied and hidden tools are answered as unknown (-32602); a tool a ``guard.principals`` rule hides
        from the caller too, and one a rule denies it with ``policy_denied`` naming the rule."""
        route = call.route
        if route.policy.access == "deny":
            rule = route.policy.rule  # a pattern, or "not matched by guard.allow" (an allow list missed)
            return _unknown(call, POLICY_DENIED, f"denied: {rule}" if rule.startswith("not ") else f"denied by {rule}")
        if route.policy.access == "hide":
            return _unknown(call, POLICY_DENIED, f"hidden by {route.policy.rule}")
        if not route.enforceable and route.policy.unsupported == "hide":
            compiled = route.compiled if not route.compiled.supported else route.output
            assert compiled is not None
            kind = compiled.report.kind or "unsupported_capability"
            return _unknown(call, kind, "its schema is unsupported and unsupported tools are hidden")
        verdict = self.rules_for(call)
        if verdict.access == "deny":
            return _denied_for_caller(call, verdict)
        if verdict.access == "hide":
            return _unknown(call, POLICY_DENIED, f"hidden from this caller by guard.principals {verdict.rule!r}")
        return None

    def check_size(self, call: Call) -> Rejection | None:
        """``too_large`` when the arguments exceed the size limit (measured before validating)."""
        call.size = argument_bytes(call.arguments)
        limit = call.route.policy.max_argument_bytes
        caller = self.rules_for(call).max_argument_bytes
        if caller is not None and (limit is None or caller < limit):
            limit = caller
        if limit is None or call.size <= limit:
            return None
        exposed = call.route.exposed
        text = (
            f"mcp-guard refused this call to `{exposed}`: its arguments are {call.size} bytes of JSON, over this "
            f"tool's limit of {limit} bytes, so nothing was sent to the server. Send smaller arguments, for "
            "example by splitting the work into several calls."
        )
        result = refusal_result(TOO_LARGE, exposed, text, modern=call.modern, bytes=call.size, limit=limit)
        return Rejection(TOO_LARGE, f"{call.size} bytes of arguments, limit {limit}", result=result)

    def check_schema(self, call: Call) -> Rejection | None:
        """The core's verdict on the arguments (or on the schema, when it is unsupported or malformed)."""
        compiled = call.route.compiled
        shown = call.shown
        name = call.route.exposed if shown is None else shown.shown_name
        verdict = schema_verdict(name, compiled, call.arguments, modern=call.modern, shown=shown)
        if verdict.forward:
            output = call.route.output
            if output is None or output.supported or call.route.outputs != "enforce":
                return None
            # calls.outputs: its result could not be checked, and the call would have its effects anyway.
            result = unsupported_output_result(call.route.exposed, output, modern=call.modern)
            return Rejection(str(output.report.kind), "outputSchema: " + logged_reason(output.report), result=result)
        report = verdict.report
        assert report is not None
        names = compiled.declared_names
        pointers = logged_pointers(report, names)
        return Rejection(str(report.kind), logged_reason(report, names), result=verdict.result, pointers=pointers)

    def check_pinning(self, call: Call) -> Rejection | None:
        """``pinned_schema_changed`` when the tool no longer matches its lock file digest."""
        route = call.route
        if route.pin != "changed":
            return None
        text = (
            f"mcp-guard refused this call to `{route.exposed}`: the server's definition of this tool changed since "
            "it was pinned in the guard's lock file, so none of its calls are sent until the operator reviews the "
            "change and pins the tool again (mcp-guard pin). Changing the arguments will not help."
        )
        result = refusal_result(PINNED_SCHEMA_CHANGED, route.exposed, text, modern=call.modern)
        return Rejection(
            PINNED_SCHEMA_CHANGED, f"{route.server}/{route.tool} differs from the lock file", result=result
        )

    def check_policy(self, call: Call) -> Rejection | None:
        """``policy_denied`` for a tool added since the lock when ``newTools`` is ``reject``.

        With no lock file in force every tool is new, so every call is refused (``reason``
        ``no_lock_file``) until the operator pins the tools.
        """
        route = call.route
        if self.new_tools != "reject" or route.pin not in ("new", "unpinned"):
            return None
        if route.pin == "unpinned":
            text = (
                f"mcp-guard refused this call to `{route.exposed}`: the guard's configuration refuses tools that are "
                "not pinned (guard.newTools is reject) and there is no lock file, so no tool is pinned yet; the "
                "operator must pin the tools first (mcp-guard pin --config FILE). Changing the arguments will not help."
            )
            result = refusal_result(POLICY_DENIED, route.exposed, text, modern=call.modern, reason="no_lock_file")
            return Rejection(POLICY_DENIED, "no lock file, and newTools is reject (run mcp-guard pin)", result=result)
        text = (
            f"mcp-guard refused this call to `{route.exposed}`: the tool is not in the guard's lock file (the server "
            "added it after the operator pinned its tools), and the guard's configuration refuses such tools until "
            "they are pinned. Changing the arguments will not help."
        )
        result = refusal_result(POLICY_DENIED, route.exposed, text, modern=call.modern, reason="not_pinned")
        return Rejection(POLICY_DENIED, f"{route.server}/{route.tool} is not in the lock file", result=result)

    def check_budget(self, call: Call) -> Rejection | None:
        """``budget_exceeded`` when the tool had its calls-per-minute already (an in-process budget;
        a shared one is taken by :meth:`take_shared_budget`, awaited after the checks)."""
        budget = self.budget
        if not isinstance(budget, Budget):
            return None
        wanted = _budgets(call, self.rules_for(call))
        if not wanted:
            return None
        found = budget.take_all(wanted)
        return None if found is None else _over_budget(call, wanted[found[1]], found[0])

    async def take_shared_budget(self, call: Call) -> Rejection | None:
        """Step 6 with a shared budget: one atomic check-and-count in the store (:class:`.stores.SharedBudget`).

        A call no budget governs does not touch the store. When the store cannot be reached the
        governed call is refused with ``budget_unavailable`` (never forwarded uncounted: issue 26 item 1).
        """
        budget = self.budget
        if isinstance(budget, Budget):
            return None
        wanted = _budgets(call, self.rules_for(call))
        if not wanted:
            return None
        try:
            found = await budget.take_all(wanted, call.call_id)
        except StoreUnavailable as exc:
            return budget_unavailable(call, exc, budget.store, min(lim for _, lim in wanted))
        return None if found is None else _over_budget(call, wanted[found[1]], found[0])

    async def write_intent(self, call: Call) -> Rejection | None:
        """The intent record, on disk before the call is forwarded (``Recorder.intent``; raises when it cannot
        be written).

        Arguments without an RFC 8785 canonical form (an integer beyond the double range, which the
        schema step refuses first: ``json_values.literal_int``) have no digest to journal: ``no_canonical_form``.
        """
        journal = self.recorder.journal
        if journal is None:
            return None
        from .journal_key import argument_digest  # (with a journal only: off wrap's start, issue 14)

        route = call.route
        try:
            digest = argument_digest(journal.key, call.arguments)
        except ValueError:
            text = (
                f"mcp-guard refused this call to `{route.exposed}`: its arguments hold an integer beyond the range of "
                "a double (about 1.8e308). The guard journals every call by a digest of its arguments' RFC 8785 "
                "canonical JSON, which cannot express such a number, so nothing was sent to the server. Send a "
                "smaller number."
            )
            result = refusal_result(NO_CANONICAL_FORM, route.exposed, text, modern=call.modern)
            return Rejection(NO_CANONICAL_FORM, "an integer beyond the double range (no RFC 8785 form)", result=result)
        size = call.size if call.size is not None else argument_bytes(call.arguments)
        await self.recorder.intent(call, digest, size)
        return None
