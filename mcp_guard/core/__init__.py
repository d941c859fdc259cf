"""The schema core: subset classification, compiled validators, JSON value rules.

Pure Python: imports neither ``mcp`` nor ``anyio``. Entry points: :func:`classify`,
:func:`compile`, :func:`check`; verdicts are :class:`Report` values, never exceptions.
Exceptions are faults: ``ValueError`` (unknown profile), ``TypeError`` (a Python value
that is not JSON, with its pointer).
"""

from .compiler import MAX_SCHEMA_DEPTH, Compiled, check, classify, compile
from .keywords import KEYWORDS, PROFILES
from .report import UNSUPPORTED, VALIDATION, Issue, Kind, Report

__all__ = [
    "KEYWORDS",
    "MAX_SCHEMA_DEPTH",
    "PROFILES",
    "UNSUPPORTED",
    "VALIDATION",
    "Compiled",
    "Issue",
    "Kind",
    "Report",
    "check",
    "classify",
    "compile",
]
