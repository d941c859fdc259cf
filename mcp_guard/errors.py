"""The exceptions mcp-guard raises for faults, under one root (verdicts are values, never exceptions).

A rejected ``tools/call`` is a result (``Report``, a ``CallToolResult`` with ``isError``), not
an exception. What is raised is a fault: an upstream that cannot be started or answered, a
line too long to read, a number JSON cannot carry, a broken config or lock file, a usage
error. Every such exception derives from :class:`GuardError`::

    GuardError
     ├── UpstreamStartError     streams.ends        the upstream cannot be started or connected
     ├── RequestFailed          peer                a request of the guard's own got no usable answer
     │    └── ListingFailed     peer                ... the guard's own tools/list
     │         └── FailedBefore sessions.freshness  ... one a request waited for (not tried again for it)
     ├── LineTooLong            wire.framing        a line over --max-message-bytes (its prefix kept)
     ├── MessageTooLarge        peer.http_endpoint  an HTTP body over --max-message-bytes
     ├── _Disconnected          fronts.http         (private) the client left while its body was read
     ├── _BodyTimeout           fronts.http         (private) a body slower than --http-body-timeout
     ├── _HeadTooLarge          fronts.http.parsers (private) a request head over 16 KiB (answered 431)
     ├── Uncarriable            wire.jsonrpc        a number JSON cannot carry exactly (also ValueError)
     ├── ConfigError            config              the gateway config cannot be used
     ├── LockError              calls.pinning       the lock file cannot be read or written
     ├── StoreUnavailable       calls.stores        Redis or PostgreSQL cannot be reached (a call refused)
     ├── UrlError               state.urls          a store's URL variable is unset, or not the store's scheme
     ├── JournalDatabaseError   state.pg_schema     the journal's database cannot be used (journal init/read)
     ├── StateError             state.opening       a store of the config cannot be used at start
     ├── AuthServerError        auth.documents      the OAuth issuer's metadata, JWKS or introspection cannot be had
     ├── InvalidCursor          sessions.naming     a cursor the guard did not issue (also ValueError)
     ├── ListingError           reports.listing     ``check`` cannot list a server
     ├── DocumentError          reports.documents   a document cannot be read (also ValueError)
     ├── EditRefused            commands.clients_edit  a config entry's text cannot be changed exactly
     └── UsageError             commands.reports    a command line that cannot be run

The schema core (:mod:`mcp_guard.core`) imports nothing of the rest of the package: it raises
Python's own ``ValueError`` (unknown profile) and ``TypeError`` (a value that is not JSON, with
its pointer) for programming faults. A test (``tests/test_layering.py``) fails when an
exception class outside the core does not derive from :class:`GuardError`.

This module imports nothing.
"""

from __future__ import annotations

__all__ = ["GuardError"]


class GuardError(Exception):
    """The root of every exception mcp-guard raises for a fault (see the module docstring for the tree)."""
