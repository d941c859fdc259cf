"""The schema core: subset classification, compiled validators, JSON value rules.

Pure Python: imports neither ``mcp`` nor ``anyio``. Entry points: :func:`classify`,
:func:`compile`, :func:`check`; verdicts are :class:`Report` values, never exceptions.
Every function taking a ``profile`` defaults to :data:`DEFAULT_PROFILE`; :data:`PROFILES`
lists the valid names (both defined once, in ``profiles``). Exceptions are faults:
``ValueError`` (unknown profile), ``TypeError`` (a Python value that is not JSON, with its
pointer).
"""

from .budget import MAX_ENUM_CHOICES, MAX_SCHEMA_DEPTH, MAX_SCHEMA_NODES, MAX_WORK
from .compiler import Compiled, check, classify, compile
from .extended.table import KEYWORDS
from .profiles import DEFAULT_PROFILE, PROFILES, ProfileName
from .report import UNSUPPORTED, VALIDATION, Issue, Kind, Note, Report

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
