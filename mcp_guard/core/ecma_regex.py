"""STUB (core branch) until the ``fmt`` branch's ECMA-262 engine is merged: every pattern is
``unsupported_capability``. Same names as the real module."""

from __future__ import annotations

__all__ = ["Pattern", "PatternError", "compile_pattern"]


class PatternError:
    """Why a pattern cannot be used: ``kind`` ("validation" / "unsupported_capability"), ``message``."""

    def __init__(self, kind: str, message: str) -> None:
        self.kind = kind
        self.message = message


class Pattern:
    """A compiled ECMA-262 pattern (``u`` flag, unanchored)."""

    source: str

    def search(self, text: str) -> bool:
        """Whether the pattern matches somewhere in ``text``."""
        raise NotImplementedError

    def cost(self, length: int) -> int:
        """Upper bound of the work of searching a string of ``length`` code points."""
        raise NotImplementedError


def compile_pattern(source: str) -> Pattern | PatternError:
    """The stub: no engine yet."""
    return PatternError("unsupported_capability", "the ECMA-262 pattern engine is not available in this build")
