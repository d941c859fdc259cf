"""Classify a schema against the subset and compile it into a validator, in one walk.

``compile(schema)`` walks the *complete* schema once (every property, every ``items``,
every ``oneOf`` branch; spec "Two error kinds"), records every finding, and, when there is
none, assembles a tree of small validator nodes from the parts the keyword functions of
``keywords.KEYWORDS`` returned. ``Compiled.check(arguments)`` then runs only that tree:
no schema analysis per call.

Each node has two paths:

- ``valid(value) -> bool``: the fast path, taken by every call. It accepts only JSON
  values (exact types, finite numbers), so a ``True`` answer also proves the arguments
  can be forwarded as JSON.
- ``collect(value, instance_path, out)``: the slow path, run only when ``valid`` said no,
  to name every violation with its pointers.

Recursion is bounded by the schema's depth (:data:`MAX_SCHEMA_DEPTH`), never by the
arguments': positions the schema does not constrain are checked iteratively.

This module does not read files, speak MCP, or know about tools.
"""

from __future__ import annotations

from collections.abc import Callable
from math import isfinite
from typing import Any, Final

from .json_values import escape_token, is_integer, is_json, is_number, json_type_name, pointer, scan
from .keywords import (
    KEYWORDS,
    PROFILES,
    Additional,
    Check,
    Items,
    OneOf,
    Part,
    Properties,
    Required,
    TypeName,
    where,
)
from .report import OK_REPORT, UNSUPPORTED, VALIDATION, Issue, Report

__all__ = ["MAX_SCHEMA_DEPTH", "Compiled", "Node", "check", "classify", "compile"]

MAX_SCHEMA_DEPTH: Final = 64
"""Schemas nested deeper than this many subschema levels are ``unsupported_capability``."""

Path = tuple[str | int, ...]
"""A schema path during classification (turned into a JSON Pointer per finding)."""

Collect = Callable[[Any, str, list[Issue]], None]
"""``collect(value, instance_pointer, out)``; instance pointers are built as strings as the walk descends."""

_MISSING: Final = object()

_ARTICLE = {
    "object": "an object",
    "array": "an array",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
}

_TYPE_CHECKS: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: type(v) is str,
    "boolean": lambda v: type(v) is bool,
    "integer": is_integer,
    "number": is_number,
}


class Node:
    """A compiled schema node.

    Attributes:
        valid: ``valid(value) -> bool``; True only for a JSON value that satisfies the node.
        collect: ``collect(value, instance_path, out)``; appends an :class:`Issue` per violation.
        describe: what the node expects, in a few words, for ``oneOf`` messages.
    """

    __slots__ = ("collect", "describe", "valid")

    def __init__(self, valid: Callable[[Any], bool], collect: Collect, describe: str) -> None:
        self.valid = valid
        self.collect = collect
        self.describe = describe


def _child(ip: str, key: str) -> str:
    """The pointer of member ``key`` below ``ip`` (RFC 6901 escaping only when needed)."""
    if "~" in key or "/" in key:
        return ip + "/" + escape_token(key)
    return ip + "/" + key


def _type_issue(type_path: str, name: str, v: Any, ip: str, out: list[Issue]) -> None:
    if type(v) is float and not isfinite(v):
        return  # reported once, as a "json" finding, by the scan
    out.append(
        Issue(
            VALIDATION,
            "type",
            type_path,
            ip,
            f"{where(ip)} must be {_ARTICLE[name]}, not {json_type_name(v)} (type)",
        )
    )


def _all(checks: tuple[Callable[[Any], bool], ...]) -> Callable[[Any], bool] | None:
    """One predicate that is true when all are (None for no predicate)."""
    if not checks:
        return None
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        a, b = checks
        return lambda v: a(v) and b(v)

    def every(v: Any) -> bool:
        for c in checks:
            if not c(v):
                return False
        return True

    return every


def _scalar_node(name: str, type_path: str, checks: list[Check]) -> Node:
    tcheck = _TYPE_CHECKS[name]
    rest = _all(tuple(c.valid for c in checks))
    collects = tuple(c.collect for c in checks)
    if rest is None:
        valid = tcheck
    else:
        r = rest

        def valid(v: Any) -> bool:
            return tcheck(v) and r(v)

    def collect(v: Any, ip: str, out: list[Issue]) -> None:
        if not tcheck(v):
            _type_issue(type_path, name, v, ip, out)
            return
        for c in collects:
            c(v, ip, out)

    return Node(valid, collect, _ARTICLE[name])


def _object_node(
    type_path: str,
    props: dict[str, Node],
    required: Required | None,
    additional: Additional | None,
    checks: list[Check],
) -> Node:
    names = required.names if required is not None else ()
    required_path = required.schema_path if required is not None else ""
    allowed = additional.allowed if additional is not None else True
    additional_path = additional.schema_path if additional is not None else ""
    prop_valid = {name: node.valid for name, node in props.items()}
    get_valid = prop_valid.get
    rest = _all(tuple(c.valid for c in checks))
    collects = tuple(c.collect for c in checks)

    def valid(v: Any) -> bool:
        if type(v) is not dict:
            return False
        for name in names:
            if name not in v:
                return False
        for key, item in v.items():
            sub = get_valid(key)
            if sub is None:
                if not allowed or type(key) is not str or not is_json(item):
                    return False
            elif not sub(item):
                return False
        return rest is None or rest(v)

    def collect(v: Any, ip: str, out: list[Issue]) -> None:
        if type(v) is not dict:
            _type_issue(type_path, "object", v, ip, out)
            return
        for name in names:
            if name not in v:
                out.append(
                    Issue(
                        VALIDATION,
                        "required",
                        required_path,
                        ip,
                        f"{where(_child(ip, name))} is required",
                    )
                )
        for key, item in v.items():
            node = props.get(key)
            if node is not None:
                if not node.valid(item):
                    node.collect(item, _child(ip, key), out)
            elif not allowed:
                out.append(
                    Issue(
                        VALIDATION,
                        "additionalProperties",
                        additional_path,
                        _child(ip, key),
                        f"{where(_child(ip, key))} is not allowed: the schema declares no such property "
                        "(additionalProperties: false)",
                    )
                )
        for c in collects:
            c(v, ip, out)

    describe = "an object"
    if names:
        describe += " with " + ", ".join(f"`{n}`" for n in names[:4]) + (", …" if len(names) > 4 else "")
    return Node(valid, collect, describe)


def _array_node(type_path: str, items: Node | None, checks: list[Check]) -> Node:
    rest = _all(tuple(c.valid for c in checks))
    collects = tuple(c.collect for c in checks)
    if items is None:

        def elements_valid(v: list[Any]) -> bool:
            return is_json(v)

        def elements_collect(v: list[Any], ip: str, out: list[Issue]) -> None:
            return None  # unconstrained elements; non-JSON ones were found by the scan

    else:
        item_valid = items.valid
        item_collect = items.collect

        def elements_valid(v: list[Any]) -> bool:
            for x in v:
                if not item_valid(x):
                    return False
            return True

        def elements_collect(v: list[Any], ip: str, out: list[Issue]) -> None:
            for i, x in enumerate(v):
                if not item_valid(x):
                    item_collect(x, f"{ip}/{i}", out)

    def valid(v: Any) -> bool:
        return type(v) is list and elements_valid(v) and (rest is None or rest(v))

    def collect(v: Any, ip: str, out: list[Issue]) -> None:
        if type(v) is not list:
            _type_issue(type_path, "array", v, ip, out)
            return
        elements_collect(v, ip, out)
        for c in collects:
            c(v, ip, out)

    return Node(valid, collect, "an array")


def _one_of_node(part: OneOf) -> Node:
    branches = part.branches
    tests = tuple(b.valid for b in branches)
    schema_path = part.schema_path
    count = len(branches)
    summary = "; ".join(f"{i + 1}: {b.describe}" for i, b in enumerate(branches))

    def matches(v: Any) -> int:
        n = 0
        for t in tests:
            if t(v):
                n += 1
                if n > 1:
                    break
        return n

    def valid(v: Any) -> bool:
        return matches(v) == 1

    def collect(v: Any, ip: str, out: list[Issue]) -> None:
        n = matches(v)
        if n == 1 or (type(v) is float and not isfinite(v)):
            return  # a non-finite number is reported once, as a "json" finding, by the scan
        if n == 0:
            message = f"{where(ip)} matches none of the {count} alternatives of oneOf ({summary})"
        else:
            message = f"{where(ip)} matches more than one of the {count} alternatives of oneOf ({summary})"
        out.append(Issue(VALIDATION, "oneOf", schema_path, ip, message))

    return Node(valid, collect, "one of: " + ", ".join(b.describe for b in branches))


class _Classifier:
    """Walks one schema; records findings; builds nodes. Implements ``keywords.Site``."""

    def __init__(self, profile: str) -> None:
        self.profile = profile
        self.issues: list[Issue] = []
        self._seen: set[tuple[str, str, str]] = set()

    def finding(self, kind: str, keyword: str, path: Path, message: str) -> None:
        at = pointer(path)
        if (kind, keyword, at) in self._seen:
            return  # one finding per kind, keyword and place (e.g. wrong type *and* tuple-form items)
        self._seen.add((kind, keyword, at))
        self.issues.append(Issue(kind, keyword, at, None, message))  # type: ignore[arg-type]

    def subschema(self, schema: Any, path: Path, holder: str, depth: int) -> Node | None:
        return self.node(schema, path, holder, depth, root=False)

    def node(self, schema: Any, path: Path, holder: str, depth: int, *, root: bool) -> Node | None:
        if depth > MAX_SCHEMA_DEPTH:
            self.finding(
                UNSUPPORTED,
                "schema",
                path,
                f"schemas nested more than {MAX_SCHEMA_DEPTH} levels deep are not supported",
            )
            return None
        if type(schema) is bool:
            self.finding(
                UNSUPPORTED,
                "schema",
                path,
                "boolean schemas (true/false in place of a schema) are not supported",
            )
            return None
        if type(schema) is not dict:
            self.finding(
                VALIDATION, holder, path, f"a schema must be an object, not {json_type_name(schema)}"
            )
            return None
        if "oneOf" in schema:
            return self._one_of(schema, path, depth, root)
        return self._typed(schema, path, depth, root)

    def _keyword(self, key: str, value: Any, schema: dict[str, Any], path: Path, depth: int) -> Part | None:
        """Run the table's function for ``key``; an unknown key is unsupported (decision 9)."""
        kpath = (*path, key)
        spec = KEYWORDS.get(key)
        if spec is None:
            self.finding(UNSUPPORTED, key, kpath, f"`{key}` is not supported by the guard's schema subset")
            return None
        if self.profile not in spec.profiles:
            self.finding(UNSUPPORTED, key, kpath, f"`{key}` is not accepted in the {self.profile} profile")
            return None
        return spec.fn(self, value, schema, kpath, depth)

    def _one_of(self, schema: dict[str, Any], path: Path, depth: int, root: bool) -> Node | None:
        """A ``oneOf`` node: only ``description`` and annotations beside it (decision 3)."""
        before = len(self.issues)
        if root:
            self.finding(
                UNSUPPORTED, "oneOf", (*path, "oneOf"), "the root must be an object schema, not a oneOf"
            )
        part: Part | None = None
        for key, value in schema.items():
            spec = KEYWORDS.get(key)
            if key != "oneOf" and spec is not None and not spec.in_one_of and self.profile in spec.profiles:
                self.finding(
                    UNSUPPORTED,
                    key,
                    (*path, key),
                    f"`{key}` beside `oneOf` is not supported (a oneOf node carries only description "
                    "and annotations)",
                )
                spec.fn(self, value, schema, (*path, key), depth)  # still report what lies below
                continue
            result = self._keyword(key, value, schema, path, depth)
            if key == "oneOf":
                part = result
        if len(self.issues) != before or not isinstance(part, OneOf):
            return None
        return _one_of_node(part)

    def _typed(self, schema: dict[str, Any], path: Path, depth: int, root: bool) -> Node | None:
        """A node that is not ``oneOf``: it has a ``type`` (the root may omit it; decisions 1, 2)."""
        before = len(self.issues)
        ntype: str | None = None
        if "type" in schema:
            type_path = pointer((*path, "type"))
            part = self._keyword("type", schema["type"], schema, path, depth)
            if isinstance(part, TypeName):
                ntype = part.name
                if root and ntype != "object":
                    self.finding(UNSUPPORTED, "type", (*path, "type"), "the root must be an object schema")
                    ntype = None
        elif root:
            ntype, type_path = "object", pointer(path)
        else:
            type_path = ""
            self.finding(
                UNSUPPORTED,
                "type",
                path,
                "a nested schema without `type` accepts any JSON value, which the subset does not support",
            )

        parts: list[Part] = []
        for key, value in schema.items():
            if key == "type":
                continue
            spec = KEYWORDS.get(key)
            if spec is not None and spec.types is not None and ntype is not None and ntype not in spec.types:
                allowed = " and ".join(sorted(spec.types))
                self.finding(
                    UNSUPPORTED,
                    key,
                    (*path, key),
                    f"`{key}` applies only to {allowed} schemas here, not {ntype}",
                )
            result = self._keyword(key, value, schema, path, depth)
            if result is not None:
                parts.append(result)

        if len(self.issues) != before or ntype is None:
            return None
        return _assemble(ntype, type_path, parts)


def _assemble(ntype: str, type_path: str, parts: list[Part]) -> Node:
    """Build the validator node of a typed schema from its keywords' parts."""
    checks = [p for p in parts if isinstance(p, Check)]
    if ntype == "object":
        props: dict[str, Node] = {}
        required: Required | None = None
        additional: Additional | None = None
        for p in parts:
            if isinstance(p, Properties):
                props = p.nodes
            elif isinstance(p, Required):
                required = p
            elif isinstance(p, Additional):
                additional = p
        return _object_node(type_path, props, required, additional, checks)
    if ntype == "array":
        items = next((p.node for p in parts if isinstance(p, Items)), None)
        return _array_node(type_path, items, checks)
    return _scalar_node(ntype, type_path, checks)


class Compiled:
    """A schema classified once and, when supported, compiled for per-call checks.

    Attributes:
        report: the classification (spec decisions 13, 14).
        profile: ``"standard"`` or ``"strict"``.

    Build with :func:`compile`. Thread-safe and reusable: ``check`` keeps no state.
    """

    __slots__ = ("_root", "profile", "report")

    def __init__(self, report: Report, root: Node | None, profile: str) -> None:
        self.report = report
        self.profile = profile
        self._root = root if report.ok else None

    @property
    def supported(self) -> bool:
        """True when the schema classified with no finding at all (decision 14)."""
        return self.report.ok

    def check(self, arguments: Any) -> Report:
        """Validate one call's arguments without any schema analysis.

        Args:
            arguments: the ``arguments`` of a ``tools/call`` as a JSON value (the relay
                passes ``{}`` when a call has none, decision 11).

        Returns:
            The classification report when the schema is not supported (never validates
            then); otherwise an empty report, or one ``validation`` issue per violation,
            each with its instance and schema pointers.

        Raises:
            TypeError: ``arguments`` holds a value that is not JSON (see ``json_values``).
        """
        root = self._root
        if root is None:
            return self.report
        if root.valid(arguments):
            return OK_REPORT
        out: list[Issue] = []
        if not is_json(arguments):  # only then is the full walk (with its paths) worth it
            for p in scan(arguments, what="arguments"):
                ip = pointer(p)
                out.append(
                    Issue(
                        VALIDATION,
                        "json",
                        "",
                        ip,
                        f"{where(ip)} is not a finite number (NaN, Infinity and numbers beyond the "
                        "double range cannot be carried by JSON)",
                    )
                )
        root.collect(arguments, "", out)
        if not out:  # pragma: no cover - valid() and collect() disagree: fail closed, loudly
            raise AssertionError("validator paths disagree; refusing to call this valid")
        return Report(tuple(out))


def _profile(profile: str) -> str:
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; expected one of {sorted(PROFILES)}")
    return profile


def compile(schema: Any, *, profile: str = "standard") -> Compiled:
    """Classify ``schema`` completely and compile it when it is inside the subset.

    Args:
        schema: a tool's ``inputSchema`` as a JSON value.
        profile: ``"standard"`` (default) or ``"strict"`` (spec, "Two profiles").

    Returns:
        A :class:`Compiled`; ``Compiled.report`` holds every finding.

    Raises:
        ValueError: an unknown profile.
        TypeError: the schema holds a value that is not JSON; the message names its pointer.
    """
    classifier = _Classifier(_profile(profile))
    for p in scan(schema, what="schema"):
        classifier.finding(
            VALIDATION, "json", p, "the schema holds a non-finite number, which JSON cannot carry"
        )
    root = classifier.node(schema, (), "schema", 0, root=True)
    return Compiled(Report(tuple(classifier.issues)), root, profile)


def classify(schema: Any, *, profile: str = "standard") -> Report:
    """Classify ``schema`` against the subset: every finding, no arguments involved.

    Same arguments and errors as :func:`compile`; returns ``compile(...).report``.
    """
    return compile(schema, profile=profile).report


def check(schema: Any, arguments: Any, *, profile: str = "standard") -> Report:
    """Classify ``schema``, then, only if it is supported, validate ``arguments`` against it.

    The one-shot convenience; the relay compiles once per tool instead. Raises as
    :func:`compile` and :meth:`Compiled.check`.
    """
    return compile(schema, profile=profile).check(arguments)
