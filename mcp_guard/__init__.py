"""mcp-guard: an MCP proxy that enforces tool input schemas.

Every constraint of a tool's ``inputSchema`` is enforced exactly, or the tool is
classified unsupported and its calls are refused before they reach the upstream server.

The public API is the schema core (pure Python, no I/O):

- :func:`classify` ``(schema, *, profile=DEFAULT_PROFILE) -> Report``
- :func:`compile` ``(schema, *, profile=DEFAULT_PROFILE) -> Compiled``; ``Compiled.check(arguments) -> Report``
- :func:`check` ``(schema, arguments, *, profile=DEFAULT_PROFILE) -> Report``

:data:`DEFAULT_PROFILE` (``"extended"``) is the profile of every command and function not
given one; :data:`PROFILES` names them all.

Exceptions (faults, never verdicts)::

    ValueError   unknown profile
    TypeError    a Python value that is not JSON (tuple, set, bytes, non-string key), with its pointer
"""

from .core import (
    DEFAULT_PROFILE,
    PROFILES,
    UNSUPPORTED,
    VALIDATION,
    Compiled,
    Issue,
    Kind,
    Report,
    check,
    classify,
    compile,
)

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_PROFILE",
    "PROFILES",
    "UNSUPPORTED",
    "VALIDATION",
    "Compiled",
    "Issue",
    "Kind",
    "Report",
    "__version__",
    "check",
    "classify",
    "compile",
]
