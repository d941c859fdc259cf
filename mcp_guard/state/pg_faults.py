"""Why PostgreSQL failed the journal, told apart as the Redis store's faults are (fault 37 B).

Two kinds, as :func:`mcp_guard.state.redis_budget.lasting_cause` tells them for Redis:

- a *lasting* cause (:func:`lasting_cause`): the server answers but refuses the guard as configured,
  and retrying cannot help: :data:`AUTHENTICATION` (a wrong or missing password, an unknown role, no
  ``pg_hba.conf`` entry), :data:`NO_DATABASE`, :data:`PERMISSION` (the role may not write the journal's
  table), :data:`NO_TABLES` (``journal init`` never ran), :data:`TLS`. It is the
  :class:`~mcp_guard.calls.stores.StoreUnavailable`'s ``cause``, and the start-up log says it as an error;
- a *passing* cause (:func:`passing_cause`): the server may answer again by itself: :data:`REFUSED`
  (down: no server listens), :data:`TIMED_OUT` (no answer within the timeout), :data:`BROKE` (a
  connection that broke, another fault of the driver).

The texts are these constants, never the server's or libpq's message: those name the host, port, role
and database (``password authentication failed for user "..."``), never the password, but a message
that quotes them is no stable code. libpq's connection failures carry no SQLSTATE (``sqlstate`` is
None, psycopg 3.2), so they are told by the words libpq and the server write
(https://www.postgresql.org/docs/15/errcodes-appendix.html for the SQLSTATEs of the others).
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "AUTHENTICATION",
    "BROKE",
    "NO_DATABASE",
    "NO_TABLES",
    "PERMISSION",
    "REFUSED",
    "TIMED_OUT",
    "TLS",
    "lasting_cause",
    "passing_cause",
]

AUTHENTICATION: Final = (
    "authentication failed (a wrong or missing password or user in the URL, or no pg_hba.conf entry)"
)
NO_DATABASE: Final = "the database in the URL does not exist on this server"
PERMISSION: Final = "permission denied (the user may not write the journal's table)"
NO_TABLES: Final = "the journal's tables are not there (run mcp-guard journal init)"
TLS: Final = "TLS failed (sslmode requires TLS of a server without it, or a certificate problem)"

REFUSED: Final = "not reachable (connection refused: is the server running?)"
TIMED_OUT: Final = "no answer within the timeout"
BROKE: Final = "the connection failed"

_BY_SQLSTATE: Final = {
    "28P01": AUTHENTICATION,  # invalid_password
    "28000": AUTHENTICATION,  # invalid_authorization_specification (an unknown role, pg_hba.conf)
    "3D000": NO_DATABASE,  # invalid_catalog_name
    "42501": PERMISSION,  # insufficient_privilege
    "42P01": NO_TABLES,  # undefined_table
}

_BY_WORDS: Final = (
    ("password authentication failed", AUTHENTICATION),
    ("no password supplied", AUTHENTICATION),
    ("authentication failed for user", AUTHENTICATION),
    ("no pg_hba.conf entry", AUTHENTICATION),
    ("pg_hba.conf rejects", AUTHENTICATION),
    ("FATAL:  role ", AUTHENTICATION),  # role "x" does not exist
    ("FATAL:  database ", NO_DATABASE),  # database "x" does not exist
    ("SSL", TLS),
    ("certificate", TLS),
)


def lasting_cause(exc: BaseException) -> str | None:
    """Why PostgreSQL refuses the guard for as long as the configuration stays (one of this module's
    constants), or None: a passing fault (:func:`passing_cause`). ``exc``: a ``psycopg.Error`` (any
    exception is taken: None for the others)."""
    sqlstate = getattr(exc, "sqlstate", None)
    if isinstance(sqlstate, str) and sqlstate in _BY_SQLSTATE:
        return _BY_SQLSTATE[sqlstate]
    text = str(exc)
    for words, cause in _BY_WORDS:
        if words in text:
            return cause
    return None


def passing_cause(exc: BaseException) -> str:
    """What a fault that may pass was (one of :data:`REFUSED`, :data:`TIMED_OUT`, :data:`BROKE`); ``exc``
    as for :func:`lasting_cause`, or ``psycopg_pool.PoolTimeout``/``TimeoutError``."""
    text = str(exc)
    if isinstance(exc, TimeoutError) or "timeout" in type(exc).__name__.lower() or "timeout expired" in text:
        return TIMED_OUT
    if "Connection refused" in text or "No such file or directory" in text:  # (TCP; a Unix socket's path)
        return REFUSED
    return BROKE
