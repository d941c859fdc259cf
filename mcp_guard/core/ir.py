"""The classifier's output: a small tree of typed and ``oneOf`` nodes holding keyword parts.

``compiler`` builds it (only for a schema with no finding); ``codegen`` turns it into
Python functions. Plain data; no behaviour beyond lookups.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from .keywords import OneOf, Part

__all__ = ["Node", "OneOfNode", "TypedNode"]

P = TypeVar("P", bound="Part")


@dataclass(eq=False, slots=True)
class TypedNode:
    """A classified schema node with a ``type``: its type, where that is, and its keywords' parts.

    ``type_path`` is the schema path of the node's ``type`` keyword (the node's own path for
    a root without ``type``, which is treated as ``object``; decision 1).
    """

    ntype: str
    type_path: tuple[str | int, ...]
    parts: list[Part]

    def part(self, kind: type[P]) -> P | None:
        """The part of the given class, if the node has that keyword."""
        for p in self.parts:
            if isinstance(p, kind):
                return p
        return None


@dataclass(eq=False, slots=True)
class OneOfNode:
    """A classified ``oneOf`` node (decision 3): only its branches matter for validation."""

    one_of: OneOf


Node = TypedNode | OneOfNode
"""The classifier's output for one schema node; ``codegen`` turns a tree of them into code."""
