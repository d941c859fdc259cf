"""What the schema expects where an argument failed it: the hints of a refusal (issue 24, item 5).

A refusal names, for each finding, what the schema expects in words a model acts on, so that one
more try repairs the call:

- an unknown key under a closed object (``additionalProperties: false``, ``unevaluatedProperties:
  false``): the declared names closest to it (``did_you_mean``), or, when none is close, the
  names the object declares;
- ``enum`` / ``const``: the allowed choices (the finding's message already lists them, bounded;
  the hint carries them as data);
- a missing ``required`` (or ``dependentRequired``) property: its declared type, and its choices
  when it has ``enum`` / ``const``.

Everything a hint holds is schema text: declared names, type names, ``enum`` / ``const`` values.
The client's own key is read only to rank the declared names (it is in the finding's pointer
already) and the arguments only for the names an object already holds (which are not suggested
again); no argument value is ever copied into a hint.

Hints are computed from the classified tree (:class:`~.extended.ir.XNode`) when a call is
refused, never while a call is judged: a valid call costs nothing more. Work is bounded: names
longer than :data:`MAX_RANKED_LENGTH` and keys past it are not compared, and a report's ranking
stops after :data:`MAX_COMPARISONS` comparisons (the rest of its unknown keys get the declared
names without a suggestion).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from difflib import SequenceMatcher
from typing import Any, Final, NamedTuple

from .extended.ir import Part, XNode
from .extended.kw_any import Choices, show_value
from .extended.kw_apply import AllOf, AnyOf, OneOf, Ref
from .extended.kw_members import Members
from .extended.kw_object import Required
from .json_values import escape_token, is_json, pointer
from .report import VALIDATION, Issue

__all__ = [
    "MAX_COMPARISONS",
    "MAX_DATA_CHOICE",
    "MAX_RANKED_LENGTH",
    "MAX_SHOWN",
    "MAX_SUGGESTIONS",
    "MAX_VISITS",
    "Hint",
    "closest",
    "hints",
]

MAX_SUGGESTIONS: Final = 3
"""At most this many names in ``did_you_mean``, closest first."""
MAX_SHOWN: Final = 12
"""A hint lists at most this many names or choices (text and data), and says how many more."""
MAX_DATA_CHOICE: Final = 200
"""A choice whose compact JSON is longer than this many characters is left out of the data (and
counted in ``more``); the text shows every listed choice cut at 40 characters (``show_value``)."""
MAX_RANKED_LENGTH: Final = 64
"""Keys and names longer than this are not ranked by similarity (only folded equality, prefixes, abbreviations)."""
MAX_VISITS: Final = 20_000
"""The declared names one report's ranking may look at in all, so a refusal's cost stays bounded
(tens of milliseconds): a closed object of 20 names is ranked for 1,000 unknown keys, one of 5,000
names for its first 4 (the others get the declared names, without a suggestion)."""
MAX_COMPARISONS: Final = 500
"""The similarity comparisons (``difflib``) one report may spend in all."""

_TYPE_WORDS: Final = {
    "object": "an object",
    "array": "an array",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "null": "null",
}
"""Each JSON type name as the text names a value of it, in the order the text lists them."""

_UNKNOWN_KEY: Final = frozenset({"additionalProperties", "unevaluatedProperties"})
_MISSING: Final = frozenset({"required", "dependentRequired", "dependencies"})
_CHOICES: Final = frozenset({"enum", "const"})
_HINTED: Final = _UNKNOWN_KEY | _MISSING | _CHOICES


class Hint(NamedTuple):
    """What the schema expects at one finding.

    Attributes:
        expected: JSON data, schema text only: ``{"type": [...]}`` (the JSON types a missing
            property takes), ``{"one_of": [...]}`` (``enum`` choices; a missing property's too),
            ``{"const": value}``, ``{"properties": [...]}`` (the names a closed object declares),
            with ``"more"``: how many names or choices are not listed.
        did_you_mean: for an unknown key, the declared names closest to it (may be empty);
            ``None`` for other findings.
        text: the words the refusal's text adds after the finding's message (``""``: none): `` — did
            you mean `operations`?``, `` — an array``.
    """

    expected: dict[str, Any]
    did_you_mean: tuple[str, ...] | None
    text: str


def hints(root: XNode, issues: Sequence[Issue], arguments: Any = None) -> list[Hint | None]:
    """The hint of each of ``issues`` (``None`` where there is none), from the classified ``root``.

    Args:
        root: the classified tree the issues were found against (``Compiled``'s).
        issues: validation findings about the arguments (others get ``None``).
        arguments: the call's arguments, read only for the names an object already holds
            (``None``: not known; every declared name may be suggested).

    Returns:
        A list as long as ``issues``.
    """
    if not any(i.keyword in _HINTED for i in issues):  # (a `type` or bound finding: no tree walk at all)
        return [None] * len(issues)
    index = _index(root)
    work = _Work()
    out: list[Hint | None] = []
    for issue in issues:
        found = index.get(issue.schema_path) if issue.kind == VALIDATION and issue.instance_path is not None else None
        if found is None:
            out.append(None)
            continue
        node, part = found
        if issue.keyword in _UNKNOWN_KEY:
            out.append(_unknown_key(node, part, issue, arguments, work))
        elif issue.keyword in _CHOICES and isinstance(part, Choices):
            out.append(_choices_hint(part))
        elif issue.keyword in _MISSING and isinstance(part, Required):
            out.append(_missing(node, part, issue, work))
        else:
            out.append(None)
    return out


class _Work:
    """What one :func:`hints` call keeps between its issues, so that its work stays linear in the
    schema's and the arguments' sizes however many issues share a node: the ranking budget, and
    each node's declared names, conjoined nodes and types, each parent object's names."""

    def __init__(self) -> None:
        self.budget = [MAX_VISITS, MAX_COMPARISONS]
        self.declared: dict[tuple[int, str], list[str]] = {}
        self.candidates: dict[tuple[int, str, str], tuple[list[str], list[str]]] = {}
        self.held: dict[str, frozenset[str]] = {}
        self.conjoined: dict[int, list[XNode]] = {}
        self.types: dict[int, frozenset[str] | None] = {}


def _index(root: XNode) -> dict[str, tuple[XNode, Part]]:
    """Each keyword's schema pointer → its node and part (iterative; each node once, so ``$ref``
    cycles end). ``additionalProperties``, folded into ``Members``, is indexed at its own pointer."""
    index: dict[str, tuple[XNode, Part]] = {}
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        for part in node.parts:
            index.setdefault(pointer(part.path), (node, part))
            if isinstance(part, Members) and part.extra is not None:
                index.setdefault(pointer(part.extra.path), (node, part))
            stack.extend(part.nodes())
    return index


def _in_place(node: XNode) -> Iterator[XNode]:
    """``node`` and every node applied to the same value through in-place applicators (``allOf``,
    ``anyOf``, ``oneOf``, ``$ref``, ``if``/``then``/``else``, ``dependentSchemas``…), each once."""
    seen: set[int] = set()
    stack = [node]
    while stack:
        here = stack.pop()
        if id(here) in seen:
            continue
        seen.add(id(here))
        yield here
        stack.extend(sub for sub, in_place, _ in here.children() if in_place)


def _declared(node: XNode, part: Part, keyword: str, work: _Work) -> list[str]:
    """The names a closed object declares: its own ``properties`` (``additionalProperties``), or
    every ``properties`` applied to the same value (``unevaluatedProperties``)."""
    if keyword == "additionalProperties":
        return list(part.props) if isinstance(part, Members) else []
    found = work.declared.get((id(node), keyword))
    if found is None:
        names: dict[str, None] = {}
        for here in _in_place(node):
            for p in here.parts:
                if isinstance(p, Members):
                    names.update(dict.fromkeys(p.props))
        found = work.declared[id(node), keyword] = list(names)
    return found


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def _held_names(arguments: Any, instance_path: str, work: _Work) -> frozenset[str]:
    """The keys of the object at ``instance_path``'s parent in ``arguments`` (none when not found)."""
    parent = instance_path.rsplit("/", 1)[0]
    held = work.held.get(parent)
    if held is None:
        held = work.held[parent] = _keys_at(arguments, parent)
    return held


def _keys_at(arguments: Any, instance_path: str) -> frozenset[str]:
    """The keys of the object at ``instance_path`` in ``arguments`` (none when it is not one)."""
    value = arguments
    for token in instance_path.split("/")[1:]:
        key = _unescape(token)
        if type(value) is dict:
            value = value.get(key)
        elif type(value) is list and key.isdigit() and key.isascii() and int(key) < len(value):
            value = value[int(key)]
        else:
            return frozenset()
    return frozenset(value) if type(value) is dict else frozenset()


def _unknown_key(node: XNode, part: Part, issue: Issue, arguments: Any, work: _Work) -> Hint:
    """A key a closed object does not declare: the declared names closest to it, or all of them."""
    assert issue.instance_path is not None
    declared = _declared(node, part, issue.keyword, work)
    key = _unescape(issue.instance_path.rsplit("/", 1)[-1])
    held = _held_names(arguments, issue.instance_path, work) if arguments is not None else frozenset()
    candidates, folded = _candidates(node, issue.keyword, issue.instance_path, declared, held, work)
    near = tuple(closest(key, candidates, folded=folded, budget=work.budget))
    listed = declared[:MAX_SHOWN]
    expected: dict[str, Any] = {"properties": listed}
    if len(declared) > len(listed):
        expected["more"] = len(declared) - len(listed)
    if near:
        text = f" — did you mean {_either(near)}?"
    elif declared:
        text = (
            f" — its only declared property is {_name(declared[0])}"
            if len(declared) == 1
            else f" — its declared properties are {_all(listed, len(declared))}"
        )
    else:
        text = " — it declares no property"
    return Hint(expected, near, text)


def _candidates(
    node: XNode, keyword: str, instance_path: str, declared: list[str], held: frozenset[str], work: _Work
) -> tuple[list[str], list[str]]:
    """The declared names an unknown key may be meant for (those its object does not hold), and
    their folded forms: once per closed object and parent object, while the budget lasts."""
    if work.budget[0] <= 0:
        return [], []
    place = (id(node), keyword, instance_path.rsplit("/", 1)[0] if held else "")
    found = work.candidates.get(place)
    if found is None:
        names = [n for n in declared if n not in held] if held else declared
        found = work.candidates[place] = (names, [_fold(n) for n in names])
    return found


def _choices_hint(part: Choices) -> Hint:
    """``enum`` / ``const``: the choices as data (the message lists them already)."""
    if part.keyword == "const":
        value = part.choices[0]
        return Hint({"const": value} if _fits(value) else {"more": 1}, None, "")
    return Hint(_choice_data(part.choices), None, "")


def _choice_data(choices: list[Any]) -> dict[str, Any]:
    shown = [c for c in choices[: MAX_SHOWN * 2] if _fits(c)][:MAX_SHOWN]
    data: dict[str, Any] = {"one_of": shown}
    if len(choices) > len(shown):
        data["more"] = len(choices) - len(shown)
    return data


def _fits(value: Any) -> bool:
    """A choice the data may carry: plain JSON (no literal no double holds) of bounded length."""
    return is_json(value) and len(json.dumps(value, ensure_ascii=False)) <= MAX_DATA_CHOICE


def _missing(node: XNode, part: Required, issue: Issue, work: _Work) -> Hint | None:
    """A missing required property: its declared types (and choices), when the schema says them.

    The property's schema is looked up where it must hold: the node's ``properties`` or those of a
    schema it applies by ``$ref`` or ``allOf`` (not a branch of ``anyOf``, which might not apply).
    """
    prefix = "`" + (issue.instance_path or "") + "/"
    name = next((n for n in part.names if issue.message.startswith(prefix + escape_token(n) + "`")), None)
    if name is None:
        return None
    prop = next(
        (
            p.props[name]
            for here in _conjoined(node, work)
            for p in here.parts
            if isinstance(p, Members) and name in p.props
        ),
        None,
    )
    if prop is None:
        return None
    try:
        types = _types(prop, work.types)
    except RecursionError:  # a chain of ``$ref``s deeper than Python's stack: no type said
        types = None
    choices = next((p for here in _conjoined(prop, work) for p in here.parts if isinstance(p, Choices)), None)
    expected: dict[str, Any] = {}
    words = []
    if types:
        expected["type"] = [t for t in _TYPE_WORDS if t in types]
        words.append(" or ".join(_TYPE_WORDS[t] for t in expected["type"]))
    if choices is not None and choices.keyword == "const":
        expected.update(_choices_hint(choices).expected)
        words.append("exactly " + show_value(choices.choices[0]))
    elif choices is not None and choices.choices:
        expected.update(_choice_data(choices.choices))
        listed = choices.choices[:MAX_SHOWN]
        words.append("one of: " + ", ".join(show_value(c) for c in listed) + _more(len(choices.choices) - len(listed)))
    if not words:
        return None
    return Hint(expected, None, " — " + ", ".join(words))


def _conjoined(node: XNode, work: _Work) -> list[XNode]:
    """``node`` and the nodes that must hold on the same value with it (``$ref`` targets, ``allOf``
    branches), each once."""
    found = work.conjoined.get(id(node))
    if found is not None:
        return found
    found = work.conjoined[id(node)] = []
    seen: set[int] = set()
    stack = [node]
    while stack:
        here = stack.pop()
        if id(here) in seen:
            continue
        seen.add(id(here))
        found.append(here)
        for part in here.parts:
            if isinstance(part, (Ref, AllOf)):
                stack.extend(part.nodes())
    return found


def _types(node: XNode, memo: dict[int, frozenset[str] | None]) -> frozenset[str] | None:
    """The JSON types ``node`` allows, when it or what it applies in place says (``$ref``, ``allOf``:
    any one that names types; ``anyOf``/``oneOf``: the union, when every branch names them).

    ``memo``: each node's answer (``None`` while it is being found: a ``$ref`` cycle says nothing), so
    shared subschemas are visited once and the work stays linear in the schema's size.
    """
    if node.types is not None:
        return node.types
    key = id(node)
    if key in memo:
        return memo[key]
    memo[key] = None
    for part in node.parts:
        if isinstance(part, Ref) and part.target is not None:
            found = _types(part.target, memo)
        elif isinstance(part, AllOf):
            found = next((t for b in part.branches if (t := _types(b, memo))), None)
        elif isinstance(part, (AnyOf, OneOf)):
            each = [t for b in part.branches if (t := _types(b, memo))]
            found = frozenset().union(*each) if len(each) == len(part.branches) else None
        else:
            continue
        if found:
            memo[key] = found
            return found
    return None


_SEPARATORS: Final = str.maketrans("", "", "_-. ")


def _fold(name: str) -> str:
    """A name with case and word separators dropped (``max_results``, ``maxResults`` → ``maxresults``)."""
    return name.casefold().translate(_SEPARATORS)


def _subsequence(short: str, long: str) -> bool:
    """``short``'s letters appear in ``long`` in order (``ops`` in ``operations``)."""
    at = 0
    for c in short:
        at = long.find(c, at) + 1
        if not at:
            return False
    return True


def closest(
    key: str,
    names: Sequence[str],
    *,
    limit: int = MAX_SUGGESTIONS,
    folded: Sequence[str] | None = None,
    budget: list[int] | None = None,
) -> list[str]:
    """The declared ``names`` a model most likely meant by ``key``, closest first (at most ``limit``).

    Ranks, best first: the same name but for case and separators (``maxResults`` for
    ``max_results``); one a prefix of the other, from two characters on (``query`` for ``qu``);
    an abbreviation (the key's letters in order in the name, the same first letter, the key at
    most three quarters of the name's length: ``ops`` for ``operations``); a similar spelling
    (``difflib`` ratio ≥ 0.6 on the folded names, of at most :data:`MAX_RANKED_LENGTH`
    characters: ``alpha`` for ``alpa``). Ties keep the schema's order.

    Args:
        key: the client's key.
        names: the candidates (the declared names not already held).
        limit: how many to return at most.
        folded: ``names`` folded (:func:`_fold`), when the caller has them already.
        budget: ``[names, comparisons]`` left to the caller's report (:data:`MAX_VISITS`,
            :data:`MAX_COMPARISONS`), counted down in place: once names are spent nothing more
            is ranked; once comparisons are, only the cheap ranks apply.
    """
    k = _fold(key)
    if not k:
        return []
    spare = budget if budget is not None else [MAX_VISITS, MAX_COMPARISONS]
    forms = folded if folded is not None else [_fold(n) for n in names]
    count = min(len(names), spare[0])
    spare[0] -= count
    scored: list[tuple[float, int, str]] = []
    size, first = len(k), k[0]
    short = size <= MAX_RANKED_LENGTH
    for order in range(count):
        f = forms[order]
        if not f:
            continue
        if f == k:
            score = 4.0
        elif size >= 2 and len(f) >= 2 and (f.startswith(k) or k.startswith(f)):
            score = 3.0 - abs(len(f) - size) / (len(f) + size)
        elif size >= 2 and 4 * size <= 3 * len(f) and first == f[0] and _subsequence(k, f):
            score = 2.0 + size / len(f)
        elif short and len(f) <= MAX_RANKED_LENGTH and 1.4 * min(size, len(f)) >= 0.6 * max(size, len(f)):
            if spare[1] <= 0:
                continue
            spare[1] -= 1
            matcher = SequenceMatcher(None, k, f)
            if matcher.quick_ratio() < 0.6:
                continue
            score = matcher.ratio()
            if score < 0.6:
                continue
        else:
            continue
        scored.append((-score, order, names[order]))
    scored.sort()
    return [name for _, _, name in scored[:limit]]


def _name(name: str) -> str:
    """A declared name for the text, in backquotes, cut at 40 characters."""
    return "`" + (name if len(name) <= 40 else name[:39] + "…") + "`"


def _either(names: Sequence[str]) -> str:
    quoted = [_name(n) for n in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]


def _all(names: Sequence[str], total: int) -> str:
    """``names`` (the first of ``total``) for the text: `` `a`, `b` and `c` ``, or `` `a`, `b` … and 3 more ``."""
    quoted = [_name(n) for n in names]
    if total > len(quoted):
        return ", ".join(quoted) + _more(total - len(quoted))
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def _more(count: int) -> str:
    return f" … and {count} more" if count > 0 else ""
