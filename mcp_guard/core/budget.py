"""The guard's work budget: the limits that keep classification and validation bounded.

Validation of a supported schema never does exponential work: every subschema is evaluated
at most once per argument value it applies to (a ``oneOf`` tests each branch once, and its
error report never re-walks the branches). What remains to bound is size, and hostile input
meets a documented limit instead of a slow or crashing guard:

=========================  ==========  ==================================================
limit                      value       over it
=========================  ==========  ==================================================
schema nesting depth       64          ``unsupported_capability``, keyword ``schema``
subschemas in one schema   10,000      ``unsupported_capability``, keyword of the holder
                                       (``properties``, ``items``, ``oneOf``)
choices in one ``enum``    10,000      ``unsupported_capability``, keyword ``enum``
``enum`` choice nesting    64          ``unsupported_capability``, keyword ``enum``
work for one call          4,000,000   ``validation``, keyword ``budget``
=========================  ==========  ==================================================

Work is counted in subschema evaluations: each array the arguments hold costs its length
times the weight of its ``items`` schema (the subschemas one element is checked against,
every ``oneOf`` branch included). Values the schema does not constrain cost no budget: they
are only checked to be JSON, iteratively, in time linear in their size.
"""

from typing import Final

__all__ = ["MAX_ENUM_CHOICES", "MAX_SCHEMA_DEPTH", "MAX_SCHEMA_NODES", "MAX_WORK"]

MAX_SCHEMA_DEPTH: Final = 64
MAX_SCHEMA_NODES: Final = 10_000
MAX_ENUM_CHOICES: Final = 10_000
MAX_WORK: Final = 4_000_000
