"""The schema core: subset classification, compiled validators, JSON value rules.

Pure Python: imports neither ``mcp`` nor ``anyio``. Entry points: :func:`classify`,
:func:`compile`, :func:`check`; verdicts are :class:`Report` values, never exceptions.
Exceptions are faults: ``ValueError`` (unknown profile), ``TypeError`` (a Python value
that is not JSON, with its pointer).
"""

from .budget import MAX_ENUM_CHOICES, MAX_SCHEMA_DEPTH, MAX_SCHEMA_NODES, MAX_WORK
from .compiler import ALL_PROFILES as PROFILES
from .compiler import Compiled, check, classify, compile
from .keywords import KEYWORDS
from .report import UNSUPPORTED, VALIDATION, Issue, Kind, Note, Report

__all__ = [
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
    "Report",
    "check",
    "classify",
    "compile",
]
