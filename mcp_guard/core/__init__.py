"""The schema core: subset classification, compiled validators, JSON value rules.

Pure Python: imports neither ``mcp`` nor ``anyio``. Entry points: :func:`classify`,
:func:`compile`, :func:`check`; verdicts are :class:`Report` values, never exceptions.
Every function taking a ``profile`` defaults to :data:`DEFAULT_PROFILE`; :data:`PROFILES`
lists the valid names (both defined once, in ``profiles``). Exceptions are faults:
``ValueError`` (unknown profile), ``TypeError`` (a Python value that is not JSON, with its
pointer).

The light names (profiles, budgets, the report values) are imported with the package; the
classifier and the validators (``compiler``, ``extended``, ``formats``: most of the core's
import time) on first use of :func:`compile`, :func:`check`, :func:`classify`,
:class:`Compiled` or :data:`KEYWORDS` (PEP 562): ``wrap`` answers ``initialize`` before it
has loaded them, and loads them at the first ``tools/list`` (issue 14).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .budget import MAX_ENUM_CHOICES, MAX_SCHEMA_DEPTH, MAX_SCHEMA_NODES, MAX_WORK
from .profiles import DEFAULT_PROFILE, PROFILES, ProfileName
from .report import UNSUPPORTED, VALIDATION, Issue, Kind, Note, Report

if TYPE_CHECKING:
    from .compiler import Compiled, check, classify, compile
    from .extended.table import KEYWORDS

_LAZY = {
    "Compiled": "compiler",
    "check": "compiler",
    "classify": "compiler",
    "compile": "compiler",
    "KEYWORDS": "extended.table",
}
"""Public names imported on first use, by the submodule that defines them."""


def __getattr__(name: str) -> Any:
    """Import a classifier name on first use (then it is an ordinary attribute of the package)."""
    home = _LAZY.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{home}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "DEFAULT_PROFILE",
    "KEYWORDS",
    "MAX_ENUM_CHOICES",
    "MAX_SCHEMA_DEPTH",
    "MAX_SCHEMA_NODES",
    "MAX_WORK",
    "PROFILES",
    "UNSUPPORTED",
    "VALIDATION",
    "Compiled",
    "Issue",
    "Kind",
    "Note",
    "ProfileName",
    "Report",
    "check",
    "classify",
    "compile",
]
