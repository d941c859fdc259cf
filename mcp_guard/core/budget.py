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
values in ``enum``/        100,000     ``unsupported_capability`` at the keyword that
``const`` of one schema                passes it (``enum`` or ``const``)
work for one call          4,000,000   ``validation``, keyword ``budget``
digits of one integer      4,300       the message (or document) is not parsed at all:
                                       JSON-RPC -32700 from the relay, a usage error from
                                       the commands
=========================  ==========  ==================================================

The digit limit is Python's own (``sys.get_int_max_str_digits()``, a guard against the
quadratic cost of converting long digit strings; ``PYTHONINTMAXSTRDIGITS`` changes it), kept
on purpose: within it every integer is exact, digit for digit; beyond it nothing is read.

Work is counted in subschema evaluations: each array the arguments hold costs its length
times the weight of its ``items`` schema (the subschemas one element is checked against,
every ``oneOf`` branch included). Values the schema does not constrain cost no budget: they
are only checked to be JSON, iteratively, in time linear in their size, once per call however
many ``oneOf`` branches look at them (a per-call memo; see ``extended.gen``). A pass over an object's
members that no member schema weighs (undeclared members walked by ``properties``, the members one branch
evaluated for an ``unevaluated*`` sibling) costs one unit a member, paid by each branch that makes it
(``extended.gen.Gen.scanned``; issue 25 item 4). An ``enum`` key stands
for its value as a tree: built from a Python caller's shared sub-objects, a value past the
budget is refused (classification: ``enum`` choices are ``unsupported_capability``; a call:
``budget``) rather than keyed. The values of all ``enum`` and ``const`` keywords of one schema
are counted together, every node of a nested value included (as trees: a shared sub-object
counts each time it is met), and the count stops at the limit: a schema holding a 30 MB
``enum`` or ``const`` is refused after reading the first 100,000 values, never walked whole.
The same table is in docs/input-schema-subset.md ("Limits").

The ``extended`` profile keeps these limits and counts the same way, with what its keywords
add (spec E6): a ``$ref`` target costs one unit each time it is entered (recursion is paid
per level of the instance); a container whose members meet ``patternProperties``,
``additionalProperties``/``unevaluated*`` schemas, ``contains`` or ``propertyNames`` costs
its length times the heaviest such schema; ``pattern`` and ``format`` charge their engines'
cost bounds before they run; ``uniqueItems`` keys each item within the remaining budget and
200 levels. A schema whose references expand past the budget on a single value is
``unsupported_capability`` at classification; the depth and subschema limits are the same.
"""

import json
import sys
from typing import Final

__all__ = [
    "MAX_ENUM_CHOICES",
    "MAX_ENUM_VALUES",
    "MAX_SCHEMA_DEPTH",
    "MAX_SCHEMA_NODES",
    "MAX_WORK",
    "integer_digit_limit",
    "is_integer_too_long",
]

MAX_SCHEMA_DEPTH: Final = 64
MAX_SCHEMA_NODES: Final = 10_000
MAX_ENUM_CHOICES: Final = 10_000
MAX_ENUM_VALUES: Final = 100_000
"""JSON values (nodes, nested ones included, counted as trees) in the ``enum``/``const`` keywords of one schema."""
MAX_WORK: Final = 4_000_000


def integer_digit_limit() -> int:
    """The most digits an integer literal may have to be parsed (Python's ``sys.get_int_max_str_digits()``; 0: none)."""
    return sys.get_int_max_str_digits()


def is_integer_too_long(exc: BaseException) -> bool:
    """Whether a JSON parser's ``ValueError`` is Python's integer digit limit (not a syntax error).

    ``json`` converts integer literals with ``int()``, which raises a plain ``ValueError``
    ("Exceeds the limit (4300 digits) for integer string conversion ...") past the limit.
    """
    return (
        isinstance(exc, ValueError)
        and not isinstance(exc, json.JSONDecodeError | UnicodeError)
        and "integer string conversion" in str(exc)
    )
