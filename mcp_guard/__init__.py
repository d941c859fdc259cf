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

The names are imported from :mod:`mcp_guard.core` on first use (PEP 562): ``import mcp_guard``
(which every ``mcp_guard.*`` import runs) loads none of the core, so ``wrap`` starts without it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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


_CORE_NAMES = frozenset(__all__) - {"__version__"}


def __getattr__(name: str) -> Any:
    """Import a public name of the schema core on first use (then it is an ordinary attribute)."""
    if name not in _CORE_NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(".core", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_CORE_NAMES})
