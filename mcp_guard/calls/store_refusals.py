"""What a client is told when a shared store fails its call: the budget's (Redis) or the journal's (PostgreSQL).

Both steps fail closed (issue 26 items 1 and 2): a call the store could not count or journal is never
forwarded. The store raises :class:`.stores.StoreUnavailable`, whose ``cause`` tells the two kinds of
fault apart (``state.redis_budget.lasting_cause``, ``state.pg_faults``; fault 37 B):

- a *passing* fault (``cause`` None: the store is down, slow, or a connection broke): retrying may help
  once it answers again;
- a *lasting* one (``cause``: why the store refuses the guard as configured, one of the constants of
  those modules, e.g. ``authentication failed (...)``): retrying will not help; the operator must fix
  the guard's config.

:func:`budget_unavailable` is an ``isError`` result of kind ``budget_unavailable`` (with retry advice for a
passing fault); :func:`journal_unavailable` a JSON-RPC -32603 error (kind ``internal_error`` in the
metrics and the journal, as every journal step failure: docs/gateway.md, What happens to a call).

The client's texts hold the exposed tool name, the store's kind and the cause's constant text only:
never the store's address, URL, role, database, the store's own message or an argument value. The log
line (the rejection's ``reason``) is the store's message, its address redacted (``state.urls.redacted``).
"""

from __future__ import annotations

from typing import Any, Final

from ..wire.jsonrpc import INTERNAL_ERROR
from .call import INTERNAL, Call, Rejection
from .refusals import refusal_result
from .stores import BUDGET_UNAVAILABLE, RETRY_UNAVAILABLE_SECONDS, StoreUnavailable

__all__ = ["JOURNAL_LASTING", "JOURNAL_PASSING", "budget_unavailable", "journal_unavailable"]

JOURNAL_PASSING: Final = (
    "mcp-guard could not record this call in its journal: the journal's database cannot be reached now, and the "
    "guard does not forward calls it cannot journal, so nothing was sent to the server. Retrying may help once "
    "the database answers again."
)
"""The -32603 text of a call whose intent record could not be committed for a passing cause."""

JOURNAL_LASTING: Final = (
    "mcp-guard could not record this call in its journal: the journal's database refuses the guard ({cause}), "
    "and the guard does not forward calls it cannot journal, so nothing was sent to the server. Retrying will "
    "not help: the guard's operator must fix guard.journal in its config."
)
"""The -32603 text for a lasting cause; ``{cause}``: the ``StoreUnavailable``'s (a ``state.pg_faults`` constant)."""


def budget_unavailable(call: Call, exc: StoreUnavailable, store: str, limit: int) -> Rejection:
    """``budget_unavailable``: the shared budget's ``store`` (``Redis``) failed to count ``call``, governed by a
    budget of ``limit`` calls per minute (the least of its budgets). A passing fault carries retry advice
    (``retry_after_seconds``: :data:`.stores.RETRY_UNAVAILABLE_SECONDS`); a lasting one says a retry will not
    help, and carries none."""
    exposed = call.route.exposed
    seconds = RETRY_UNAVAILABLE_SECONDS
    text = (
        f"mcp-guard refused this call to `{exposed}`: the tool's calls-per-minute budget is counted in a "
        f"shared store ({store}) that cannot be reached now, and the guard does not forward calls it "
        f"cannot count, so nothing was sent to the server. Try again in {seconds} seconds."
    )
    retry: dict[str, Any] = {"retry_after_seconds": seconds}
    if exc.cause is not None:
        retry = {}
        text = (
            f"mcp-guard refused this call to `{exposed}`: the tool's calls-per-minute budget is counted "
            f"in a shared store ({store}) that refuses the guard ({exc.cause}), and the guard does not "
            "forward calls it cannot count, so nothing was sent to the server. Retrying will not help: the "
            "guard's operator must fix guard.state in its config."
        )
    result = refusal_result(BUDGET_UNAVAILABLE, exposed, text, modern=call.modern, limit_per_minute=limit, **retry)
    return Rejection(BUDGET_UNAVAILABLE, str(exc), result=result)


def journal_unavailable(exc: StoreUnavailable) -> Rejection:
    """The journal step's rejection when its database could not commit the intent record (-32603, kind
    ``internal_error``): :data:`JOURNAL_LASTING` with the cause for a lasting fault, else
    :data:`JOURNAL_PASSING`. The log line (``reason``) is the store's message (address redacted)."""
    text = JOURNAL_PASSING if exc.cause is None else JOURNAL_LASTING.format(cause=exc.cause)
    return Rejection(INTERNAL, f"the journal step failed: {exc}", error=(INTERNAL_ERROR, text))
