"""The pipeline's ports to shared state: a budget counted across replicas, a journal in a database.

The call pipeline (:mod:`.pipeline`) keeps its budget and journal in process by default
(:class:`.policy.Budget`, the JSONL :class:`.journal.Journal`). A team gateway runs several
``serve --http`` replicas behind a load balancer (issue 26, docs/scale-out.md): there the budget
must be counted once for all of them and the journal must outlive any one replica's disk. The
adapters that do so live in :mod:`mcp_guard.state` (Redis, PostgreSQL) and are handed to the
pipeline as these two protocols; this module names them and their one fault, and imports no
driver.

Fail closed (issue 26 items 1 and 2): a store that cannot be reached raises
:class:`StoreUnavailable`. The budget step then refuses the call with ``budget_unavailable`` (an
``isError`` result with retry advice); the journal step refuses it with -32603. Neither forwards
a call it could not count or journal; both tell the client whether a retry may help
(:mod:`.store_refusals`, by :attr:`StoreUnavailable.cause`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, Protocol

from ..errors import GuardError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..auth.principal import Principal
    from .journal import Result

__all__ = ["BUDGET_UNAVAILABLE", "RETRY_UNAVAILABLE_SECONDS", "JournalSink", "SharedBudget", "StoreUnavailable"]

BUDGET_UNAVAILABLE: Final = "budget_unavailable"
"""The kind of a governed call refused because the shared budget store cannot be reached."""

RETRY_UNAVAILABLE_SECONDS: Final = 5
"""The retry advice, in seconds, of a ``budget_unavailable`` refusal."""


class StoreUnavailable(GuardError):
    """A shared store (Redis, PostgreSQL) could not be reached or did not answer in time.

    The message names the store and the address without credentials (``state.urls.redacted``),
    never a URL as configured.

    ``cause``: None when the store may answer again by itself (down, slow, a dropped connection),
    else why it never will as configured (``authentication failed``, ...): then a retry cannot help.
    """

    def __init__(self, message: str, cause: str | None = None) -> None:
        super().__init__(message)
        self.cause = cause


class SharedBudget(Protocol):
    """Calls per minute counted across every replica (``guard.state``; :mod:`mcp_guard.state`)."""

    store: str
    """What the store is, for messages (``Redis``)."""

    async def take(self, key: str, limit: int, member: str) -> float | None:
        """Take a slot of ``key`` (the exposed tool name) under ``limit`` calls per sliding 60 s window.

        Args:
            key: the exposed tool name.
            limit: calls per window.
            member: a unique id of this call (its ``call_id``), so that two calls never share a slot.

        Returns:
            ``None`` when the call may go (its slot is taken, atomically with the check), else the
            seconds until a slot frees (> 0).

        Raises:
            StoreUnavailable: the store cannot be reached; the call must not be forwarded.
        """
        ...

    async def take_all(self, wanted: Sequence[tuple[str, int]], member: str) -> tuple[float, int] | None:
        """Take a slot of every ``(key, limit)`` of ``wanted`` or of none, atomically (a tool's budget and its
        caller's, ``guard.principals``).

        Returns:
            ``None`` when the call may go, else ``(seconds, index)``: the seconds until the last full key
            frees a slot, and that key's index in ``wanted``.

        Raises:
            StoreUnavailable: as :meth:`take`.
        """
        ...


class JournalSink(Protocol):
    """A journal the pipeline awaits (``guard.journal: {"postgres": ...}``; :mod:`mcp_guard.state`).

    The records and their fields are those of :mod:`.journal` (the JSONL form), plus the replica.
    """

    key: bytes
    """The argument digest key (:mod:`.journal_key`): ``arguments_sha256`` is HMAC-SHA256 under it."""

    async def intent(
        self,
        call_id: str,
        server: str,
        tool: str,
        arguments_sha256: str,
        arguments_bytes: int,
        principal: Principal | None = None,
    ) -> None:
        """Record that a call is about to be forwarded; returns once the record is durably committed.

        ``principal``: who sent the call (its subject, issuer and client id are recorded; None: no principal).

        Raises:
            StoreUnavailable: the record could not be committed (the call must not be forwarded).
        """
        ...

    async def outcome(
        self,
        call_id: str,
        server: str,
        tool: str,
        result: Result,
        kind: str | None = None,
        principal: Principal | None = None,
    ) -> None:
        """Record how a call ended (``kind`` only, and always, for ``rejected``; ``principal`` as for :meth:`intent`).

        Raises:
            ValueError: as :meth:`.journal.Journal.outcome`.
            StoreUnavailable: the record could not be committed.
        """
        ...
