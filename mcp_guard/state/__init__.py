"""Shared state for a gateway of several replicas: budgets in Redis, the journal in PostgreSQL (issue 26).

- :mod:`.urls`: a store's URL from the config or from the environment variable it names, and
  its redacted form (no credentials) for logs and messages.
- :mod:`.redis_budget`: :class:`~.redis_budget.RedisBudget`, the calls-per-minute budget counted
  once for all replicas (one Lua script per check-and-count, Redis's own clock).
- :mod:`.pg_journal`: :class:`~.pg_journal.PostgresJournal`, the journal as rows committed before
  the call is forwarded; :mod:`.pg_schema`: its one migration step and its reader.

They fill the pipeline's ports (:mod:`mcp_guard.calls.stores`); the fronts build them from the
config. The drivers (``redis``, ``psycopg``) are extras, imported when a store is built, never by
``wrap`` on stdio. The submodules are imported by name; this package loads nothing by itself.
"""
