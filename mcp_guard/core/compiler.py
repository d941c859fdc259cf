"""Classify a schema against the subset, in one complete walk, into a tree the code generator compiles.

``compile(schema)`` walks the *complete* schema once (every property, every ``items``,
every ``oneOf`` branch; spec "Two error kinds"), records every finding, and, when there is
none, keeps a small tree of :class:`TypedNode` / :class:`OneOfNode` holding the parts the
keyword functions of ``keywords.KEYWORDS`` returned. ``Compiled.check(arguments)`` runs
the validator ``codegen`` generates from that tree (on first use): no schema analysis per
call.

Classification recursion is bounded by :data:`MAX_SCHEMA_DEPTH`; the JSON scans are
iterative, so hostile nesting in a schema or in arguments cannot exhaust the stack.

This module does not read files, speak MCP, or know about tools.
"""

from __future__ import annotations

from typing import Any, Final

from .budget import MAX_SCHEMA_DEPTH, MAX_SCHEMA_NODES, MAX_WORK
from .codegen import generate
from .ecma_regex import Undecidable, UnsearchableText
from .extended import XNode, classify_extended
from .extended import generate as generate_extended
from .extended.classify import Quick
from .extended.subset import SubsetClassifier, SubsetQuick
from .extended.values import exact_uncarriable
from .extended.writer import Collect, OverBudget, Valid
from .ir import Node, OneOfNode, TypedNode
from .json_values import TooLarge, is_json, json_type_name, pointer, scan
from .keywords import (
    KEYWORDS,
    PROFILE_KEYWORDS,
    TYPE_PARTS,
    Keyword,
    OneOf,
    Part,
    TypeName,
    where,
)
from .profiles import DEFAULT_PROFILE, PROFILES
from .report import OK_REPORT, UNSUPPORTED, VALIDATION, Issue, Note, Report

__all__ = ["MAX_SCHEMA_DEPTH", "Compiled", "check", "classify", "compile"]


Path = tuple[str | int, ...]
"""A schema path during classification (turned into a JSON Pointer per finding)."""


_MISSING: Final = object()


class _NotJson(Exception):
    """A keyword's opaque value (``Keyword.opaque``) is not plain JSON: classify the slow way."""


class _Classifier:
    """Walks one schema; records findings; builds nodes. Implements ``keywords.Site``.

    With ``skim`` (findings only, for a schema the verdict-only walk did not find clean),
    each nested schema is first given to :class:`_Verdict`; one it finds clean has no
    finding to word, so the classifier does not descend into it and puts :data:`_SKIMMED`
    in its place. The findings, their order and the subschema count are those of the full
    walk; the tree is not (it is never used).

    What the walk proves JSON: every value a keyword function accepted without a finding (each
    accepts only exact JSON types; opaque values are checked first), and every skimmed
    subschema. What it does not: the value a finding was about (kept in ``loose``: an unknown
    keyword's value, a malformed one, a node that is not a schema) and, past the subschema
    budget, the nodes it stopped visiting (``unproven``). :meth:`proves_json` checks the rest,
    so a schema with findings needs no separate walk of all of it.
    """

    def __init__(self, profile: str, *, skim: bool = False) -> None:
        self.profile = profile
        self._table = PROFILE_KEYWORDS[profile]
        self.issues: list[Issue] = []
        self._seen: set[tuple[str, str, str]] = set()
        self.nodes = 0
        self.json_checked = False  # the whole schema is known to be JSON (else opaque values are checked)
        self._verdict = _Verdict(profile) if skim else None
        self._current: Any = None  # the value the walk is looking at (a finding's value is kept in loose)
        self.loose: list[Any] = []
        self.unproven = False

    def proves_json(self) -> bool:
        """True when the schema walked is JSON (see the class docstring); False: scan it to know."""
        if self.unproven:
            return False
        for value in self.loose:
            if not is_json(value):
                return False
        return True

    def _opaque(self, value: Any) -> None:
        """Before an opaque keyword's function runs: its value must be JSON (``Keyword.opaque``)."""
        if not self.json_checked and not is_json(value):
            raise _NotJson

    def finding(self, kind: str, keyword: str, path: Path, message: str) -> None:
        at = pointer(path)
        if (kind, keyword, at) in self._seen:
            return  # one finding per kind, keyword and place (e.g. wrong type *and* tuple-form items)
        self._seen.add((kind, keyword, at))
        self.issues.append(Issue(kind, keyword, at, None, message))  # type: ignore[arg-type]
        self.loose.append(self._current)

    def subschema(self, schema: Any, path: Path, holder: str, depth: int) -> Node | None:
        """A nested schema (``properties`` value, ``items``, ``oneOf`` branch): see :meth:`node`."""
        if self.nodes > MAX_SCHEMA_NODES:
            # Past the budget (its finding is recorded): counted and not visited, as node() would,
            # without the verdict walk's call first (a million properties cost a million calls).
            self.nodes += 1
            self.unproven = True
            return None
        verdict = self._verdict
        if verdict is not None:
            verdict.nodes = self.nodes
            if verdict.clean(schema, depth):
                self.nodes = verdict.nodes  # counted as the full walk counts them, in the same order
                return _SKIMMED
        current = self._current
        self.nodes += 1
        if type(schema) is dict and depth <= MAX_SCHEMA_DEPTH and self.nodes <= MAX_SCHEMA_NODES:
            if "oneOf" in schema:
                found = self._one_of(schema, path, depth, False)
            else:
                found = self._typed(schema, path, depth, False)
        else:
            self.nodes -= 1
            found = self.node(schema, path, holder, depth, root=False)
        self._current = current  # the holder's keyword may still record a finding about its value
        return found

    def node(self, schema: Any, path: Path, holder: str, depth: int, *, root: bool) -> Node | None:
        self.nodes += 1
        self._current = schema
        if self.nodes > MAX_SCHEMA_NODES:
            self.unproven = True  # nodes past the budget are not visited
            if self.nodes == MAX_SCHEMA_NODES + 1:
                self.finding(
                    UNSUPPORTED,
                    holder,
                    path,
                    f"the schema has more than {MAX_SCHEMA_NODES} subschemas, the guard's work budget",
                )
            return None
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
            self.finding(VALIDATION, holder, path, f"a schema must be an object, not {json_type_name(schema)}")
            return None
        if "oneOf" in schema:
            return self._one_of(schema, path, depth, root)
        return self._typed(schema, path, depth, root)

    def _keyword(self, key: str, value: Any, schema: dict[str, Any], path: Path, depth: int) -> Part | None:
        """Run the table's function for ``key``; an unknown key is unsupported (decision 9)."""
        kpath = (*path, key)
        spec = KEYWORDS.get(key)
        if spec is None:
            if type(key) is not str:
                self.unproven = True  # a key JSON cannot have: the scan says where
            self.finding(UNSUPPORTED, key, kpath, f"`{key}` is not supported by the guard's schema subset")
            return None
        if self.profile not in spec.profiles:
            self.finding(UNSUPPORTED, key, kpath, f"`{key}` is not accepted in the {self.profile} profile")
            return None
        if spec.opaque:
            self._opaque(value)
        return spec.fn(self, value, schema, kpath, depth)

    def _one_of(self, schema: dict[str, Any], path: Path, depth: int, root: bool) -> Node | None:
        """A ``oneOf`` node: only ``description`` and annotations beside it (decision 3)."""
        before = len(self.issues)
        if root:
            self.finding(UNSUPPORTED, "oneOf", (*path, "oneOf"), "the root must be an object schema, not a oneOf")
        part: Part | None = None
        for key, value in schema.items():
            self._current = value
            if type(key) is not str:
                raise _NotJson  # a str subclass would find its row: the scan names it
            spec = KEYWORDS.get(key)
            if key != "oneOf" and spec is not None and not spec.in_one_of and self.profile in spec.profiles:
                self.finding(
                    UNSUPPORTED,
                    key,
                    (*path, key),
                    f"`{key}` beside `oneOf` is not supported (a oneOf node carries only description and annotations)",
                )
                if spec.opaque:
                    self._opaque(value)
                spec.fn(self, value, schema, (*path, key), depth)  # still report what lies below
                continue
            result = self._keyword(key, value, schema, path, depth)
            if key == "oneOf":
                part = result
        if len(self.issues) != before or not isinstance(part, OneOf):
            return None
        return OneOfNode(part)

    def _typed(self, schema: dict[str, Any], path: Path, depth: int, root: bool) -> Node | None:
        """A node that is not ``oneOf``: it has a ``type`` (the root may omit it; decisions 1, 2)."""
        before = len(self.issues)
        ntype: str | None = None
        self._current = None  # a finding about the node itself (no `type`) keeps nothing
        if "type" in schema:
            type_path: Path = (*path, "type")
            value = self._current = schema["type"]
            part: Part | None = TYPE_PARTS.get(value) if type(value) is str else None  # kw_type's accepted values
            if part is None:
                part = self._keyword("type", value, schema, path, depth)
            if isinstance(part, TypeName):  # TypeName is never subclassed
                ntype = part.name
                if root and ntype != "object":
                    self.finding(UNSUPPORTED, "type", (*path, "type"), "the root must be an object schema")
                    ntype = None
        elif root:
            ntype, type_path = "object", path
        else:
            type_path = ()
            self.finding(
                UNSUPPORTED,
                "type",
                path,
                "a nested schema without `type` accepts any JSON value, which the subset does not support",
            )

        parts: list[Part] = []
        table = self._table
        for key, value in schema.items():
            if type(key) is not str:
                raise _NotJson  # a str subclass would find its row: the scan names it
            if key == "type":
                continue
            self._current = value
            spec = table.get(key)
            if spec is None:  # unknown, or not in this profile: the general path words the finding
                self._keyword(key, value, schema, path, depth)
                continue
            if spec.opaque:
                self._opaque(value)
            accepts = spec.accepts
            if accepts is not None and type(value) in accepts and spec.types is None:
                continue  # an annotation its function would accept without a word (Keyword.accepts)
            if spec.types is not None and ntype is not None and ntype not in spec.types:
                allowed = " and ".join(sorted(spec.types))
                self.finding(
                    UNSUPPORTED,
                    key,
                    (*path, key),
                    f"`{key}` applies only to {allowed} schemas here, not {ntype}",
                )
            result = spec.fn(self, value, schema, (*path, key), depth)
            if result is not None:
                parts.append(result)

        if len(self.issues) != before or ntype is None:
            return None
        return TypedNode(ntype, type_path, parts)


class _Verdict:
    """The verdict-only walk of ``compile(..., defer=True)``. Implements ``keywords.Walk``.

    It answers one question — is the schema inside the subset with no finding at all? —
    without paths, findings or parts, reading each keyword through its table row
    (``Keyword.accepts``, ``Keyword.quick``, ``Keyword.types``, ``Keyword.in_one_of``) and
    counting subschemas and depth as :class:`_Classifier` does. Any doubt is False, and the
    full classifier then words the findings; True is only ever said where the full
    classifier finds nothing (a property test holds the two together).
    """

    __slots__ = ("nodes", "table")

    def __init__(self, profile: str) -> None:
        self.table = PROFILE_KEYWORDS[profile]
        self.nodes = 0

    def clean(self, schema: Any, depth: int) -> bool:
        """True when ``schema`` at ``depth`` (0: the root) would classify with no finding."""
        self.nodes += 1
        if type(schema) is not dict or self.nodes > MAX_SCHEMA_NODES or depth > MAX_SCHEMA_DEPTH:
            return False
        table = self.table
        if "oneOf" in schema:
            if depth == 0:
                return False  # the root must be an object schema
            for key, value in schema.items():
                spec = table.get(key)
                if spec is None or type(key) is not str or not spec.in_one_of or not self._value(spec, value, depth):
                    return False
            return True
        ntype = schema.get("type", _MISSING)
        if ntype is _MISSING:
            if depth:
                return False  # a nested schema without type
            ntype = "object"
        elif type(ntype) is not str or ntype not in TYPE_PARTS or (depth == 0 and ntype != "object"):
            return False
        for key, value in schema.items():  # the body of _value, inlined: this loop is the walk's cost
            spec = table.get(key)
            if spec is None or type(key) is not str:  # a str subclass finds its row too: not JSON
                return False
            types = spec.types
            if types is not None and ntype not in types:
                return False
            accepts = spec.accepts
            if accepts is not None:
                t = type(value)
                if t not in accepts or (spec.opaque and (t is dict or t is list or t is float) and not is_json(value)):
                    return False
            elif key != "type":
                quick = spec.quick
                if quick is None or not quick(value, depth, self):
                    return False
        return True

    def _value(self, spec: Keyword, value: Any, depth: int) -> bool:
        """Whether one keyword's value is clean: its ``accepts`` decides, else its ``quick``."""
        accepts = spec.accepts
        if accepts is not None:
            t = type(value)
            if t not in accepts:
                return False
            return not spec.opaque or not (t is dict or t is list or t is float) or is_json(value)
        quick = spec.quick
        return quick is not None and quick(value, depth, self)


_SKIMMED: Final = TypedNode("object", (), [])
"""The stand-in for a clean subschema a skimming classifier did not descend into."""


class Compiled:
    """A schema classified once and, when supported, compiled for per-call checks.

    Attributes:
        report: the classification (spec decisions 13, 14).
        profile: the profile that judged, one of ``profiles.PROFILES``.
        notes: :class:`~.report.Note` values, what the report must say that is not a finding
            (``extended``: a ``format`` that 2020-12 does not define is an annotation, E4); ``()``
            for the other profiles. A deferred schema's notes are its own (the verdict walk passes
            only a schema with none).

    Build with :func:`compile`. The validator's code is generated on the first
    :meth:`check` (see ``codegen``), so classifying a long ``tools/list`` costs no code
    generation for tools that are never called. Reusable; ``check`` keeps no state beyond
    the validator it builds once.
    """

    __slots__ = ("_collect", "_deferred", "_root", "_valid", "notes", "profile", "report")

    def __init__(
        self,
        report: Report,
        root: Node | XNode | None,
        profile: str,
        deferred: Any = _MISSING,
        notes: tuple[Note, ...] = (),
    ) -> None:
        self.report = report
        self.profile = profile
        self.notes = notes
        self._root = root if report.ok else None
        self._deferred = deferred  # a clean schema whose tree is built on first use (compile's defer)
        self._valid: Valid | None = None
        self._collect: Collect | None = None

    def _build(self) -> Node | XNode | None:
        """The tree of a deferred schema, built once by the full classifier.

        Should the full classifier find anything where the verdict-only walk found nothing
        (a fault in the guard, or a schema changed after ``compile``), its findings become
        the report and nothing is validated (fail closed).
        """
        schema, self._deferred = self._deferred, _MISSING
        compiled = compile(schema, profile=self.profile)
        if not compiled.report.ok:
            self.report = compiled.report
        self._root = compiled._root
        return self._root

    @property
    def supported(self) -> bool:
        """True when the schema classified with no finding at all (decision 14)."""
        return self.report.ok

    @property
    def source(self) -> str | None:
        """The generated validator's Python source (None for an unsupported schema)."""
        root = self._root if self._deferred is _MISSING else self._build()
        if root is None:
            return None
        return _generate(root, self.profile)[2]

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
        valid = self._valid
        if valid is None:
            root = self._root if self._deferred is _MISSING else self._build()
            if root is None:
                return self.report
            valid, self._collect, _source = _generate(root, self.profile)
            self._valid = valid
        try:
            if valid(arguments, [MAX_WORK, 0, None]):  # budget, scan flag, per-call memo (codegen)
                return OK_REPORT  # (every charge of the generated code checks the budget at once)
            return self._findings(arguments)
        except Undecidable as exc:  # never a guessed verdict: under `not` either guess could pass
            if isinstance(exc, UnsearchableText):
                keyword, why = (
                    "pattern",
                    "holds a lone surrogate, which the guard's ECMA-262 pattern engine cannot read",
                )
            else:
                keyword, why = "format", "is a regular expression too large for the guard to check"
            message = f"a string in these arguments {why}; they are refused unchecked"
            return Report((Issue(VALIDATION, keyword, "", "", message),))
        except RecursionError:  # extended: a recursive schema ($ref) followed down very deep arguments
            message = (
                "these arguments nest deeper than the guard can follow through this recursive schema; refused unchecked"
            )
            return Report((Issue(VALIDATION, "budget", "", "", message),))
        except (OverBudget, TooLarge):
            message = (
                f"checking these arguments against this schema takes more than the guard's work budget "
                f"({MAX_WORK:,} subschema evaluations); they are refused unchecked"
            )
            return Report((Issue(VALIDATION, "budget", "", "", message),))

    def _uncarriable(self, arguments: Any) -> list[tuple[str | int, ...]]:
        """The scan's paths of numbers JSON cannot carry (``TypeError`` for non-JSON); under
        ``extended``, a literal no double holds is an exact number (E1) and is not among them."""
        found = scan(arguments, what="arguments")
        if self.profile != "extended":
            return found
        return [p for p in found if exact_uncarriable(_at(arguments, p))]

    def _findings(self, arguments: Any) -> Report:
        """The slow path: every violation, with its pointers."""
        out: list[Issue] = []
        assert self._collect is not None
        cell: list[Any] = [MAX_WORK, 0, None]  # work budget, "the JSON scan is needed", per-call memo
        self._collect(arguments, "", out, cell)
        if cell[1]:
            # Somewhere sits a value that is not JSON (TypeError with its pointer) or a number JSON
            # cannot carry: only now is the path-tracking scan worth its cost.
            why = (
                " is a number the guard cannot read exactly (NaN, Infinity, or a literal past its digit limit); "
                "it is refused"
                if self.profile == "extended"
                else " is a number JSON cannot carry exactly (NaN, Infinity, beyond the double range, or more digits "
                "than a double holds); it is refused rather than rounded"
            )
            found = [
                Issue(VALIDATION, "json", "", ip, where(ip) + why) for ip in map(pointer, self._uncarriable(arguments))
            ]
            out = found + out
        if not out:  # pragma: no cover - the two paths disagree (a fault in the guard): fail closed
            message = "the arguments do not satisfy the schema (the guard could not say where: a fault, reported)"
            out = [Issue(VALIDATION, "schema", "", "", message)]
        return Report(tuple(out))


def _at(value: Any, path: tuple[str | int, ...]) -> Any:
    for key in path:
        value = value[key]
    return value


def _generate(root: Node | XNode, profile: str) -> tuple[Valid, Collect, str]:
    """The validator of a classified root: the table's code generator, or the extended profile's."""
    if isinstance(root, XNode):
        return generate_extended(root, decimals=profile == "extended")
    return generate(root)


def _profile(profile: str) -> str:
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; expected one of {list(PROFILES)}")
    return profile


def _compile_extended(schema: Any, defer: bool, known_json: bool) -> Compiled:
    """``extended``: classify (``extended.classify``); the validator is generated on first use.

    With ``defer``, a schema the verdict-only walk (``extended.classify.Quick``) finds clean is
    classified in full (its tree built) on the first check, as for the other profiles.
    """
    if defer and Quick().root(schema):
        return Compiled(OK_REPORT, None, "extended", schema)
    issues, root, notes = classify_extended(schema, known_json=known_json)
    if issues:
        return Compiled(Report(tuple(issues)), None, "extended", notes=notes)
    return Compiled(OK_REPORT, root, "extended", notes=notes)


_JSON_FINDING: Final = (
    "the schema holds a number JSON cannot carry exactly (NaN, Infinity, beyond the double range, or more "
    "digits than a double holds): the guard cannot enforce what it cannot read exactly"
)


def _compile_subset(schema: Any, profile: str, defer: bool, known_json: bool) -> Compiled:
    """``standard``/``strict``: the table's selected rows and the subset's node rules (``extended.subset``).

    The JSON scan comes first (``TypeError`` for a value that is not JSON; a ``json`` finding for
    each number JSON cannot carry exactly, before the walk's findings), unless ``known_json``.
    With ``defer``, a schema the verdict-only walk finds clean is classified in full on first use.
    """
    if defer and SubsetQuick(profile).clean(schema, 0):
        return Compiled(OK_REPORT, None, profile, schema)  # a clean quick walk proves the schema JSON
    found = () if known_json else scan(schema, what="schema")  # TypeError: not JSON, with its pointer
    issues = [Issue(VALIDATION, "json", pointer(p), None, _JSON_FINDING) for p in found]
    classifier = SubsetClassifier(profile)
    root = classifier.root(schema)
    issues += classifier.issues
    if issues:
        return Compiled(Report(tuple(issues)), None, profile)
    return Compiled(OK_REPORT, root, profile)


def compile(schema: Any, *, profile: str = DEFAULT_PROFILE, defer: bool = False, known_json: bool = False) -> Compiled:
    """Classify ``schema`` completely and compile it when it is inside the subset.

    Args:
        schema: a tool's ``inputSchema`` as a JSON value.
        profile: one of ``profiles.PROFILES``: ``"extended"`` (spec, "The extended profile"),
            ``"standard"`` and ``"strict"`` (spec, "Two profiles"); default ``profiles.DEFAULT_PROFILE``.
        defer: classify a clean schema with the verdict-only walk (no paths, no parts) and
            build its validator from ``schema`` on the first :meth:`Compiled.check`: a long
            ``tools/list`` then costs one light walk per tool. The caller must not change
            ``schema`` afterwards (the relay compiles what it parsed and never changes it);
            should the first check find the schema no longer clean, the check returns the
            findings and validates nothing. A schema with any finding is classified in full
            at once either way, so ``report`` is the same.
        known_json: the caller has proven ``schema`` JSON with no number JSON cannot carry
            exactly (the relay: parsed by its JSON parser and serialized with
            ``allow_nan=False`` and no ``default``, which fails on ``NaN``, ``±inf`` and an
            ``Inexact``). The JSON scan is then skipped: its findings would be none. The
            report is the same; only work is saved (a schema past the subschema budget is
            otherwise scanned whole, every value, to prove what the walk did not visit).

    Returns:
        A :class:`Compiled`; ``Compiled.report`` holds every finding.

    Raises:
        ValueError: an unknown profile.
        TypeError: the schema holds a value that is not JSON; the message names its pointer.
    """
    profile = _profile(profile)
    if profile == "extended":
        return _compile_extended(schema, defer, known_json)
    return _compile_subset(schema, profile, defer, known_json)


def _compile_old(schema: Any, profile: str, defer: bool = False, known_json: bool = False) -> Compiled:
    """The old engine (compared with the new one by tests/core/test_unify.py until it is deleted)."""
    if defer and _Verdict(profile).clean(schema, 0):
        # Every value the walk accepted has an exact JSON type (opaque ones were checked as
        # JSON), so a clean walk proves the schema is JSON, as for the full walk below.
        return Compiled(OK_REPORT, None, profile, schema)
    classifier = _Classifier(profile, skim=defer)
    try:
        root = classifier.node(schema, (), "schema", 0, root=True)
    except Exception:  # not JSON somewhere (a tuple as a key, say): the slow way below says where
        walked = False
    else:
        walked = True
        if not classifier.issues:
            # Each keyword function accepts only values of exact JSON types, and opaque values were
            # checked as JSON: a clean walk proves the schema is JSON; no separate walk is needed.
            if defer:  # a skimmed tree stands in for clean parts: build the real one when first used
                return Compiled(OK_REPORT, None, profile, schema)
            return Compiled(OK_REPORT, root, profile)
    proven = (known_json or classifier.proves_json()) if walked else is_json(schema)
    findings = [] if proven else scan(schema, what="schema")  # TypeError: not JSON, with its pointer
    issues = [
        Issue(
            VALIDATION,
            "json",
            pointer(p),
            None,
            "the schema holds a number JSON cannot carry exactly (NaN, Infinity, beyond the double range, or more "
            "digits than a double holds): the guard cannot enforce what it cannot read exactly",
        )
        for p in findings
    ]
    if walked:
        issues += classifier.issues  # the walk does not depend on the JSON check: its findings stand
    else:
        classifier = _Classifier(profile, skim=defer)
        classifier.json_checked = True
        classifier.node(schema, (), "schema", 0, root=True)
        issues += classifier.issues
    return Compiled(Report(tuple(issues)), None, profile)


def classify(schema: Any, *, profile: str = DEFAULT_PROFILE) -> Report:
    """Classify ``schema`` against the subset: every finding, no arguments involved.

    Same arguments and errors as :func:`compile`; returns ``compile(...).report``.
    """
    return compile(schema, profile=profile).report


def check(schema: Any, arguments: Any, *, profile: str = DEFAULT_PROFILE) -> Report:
    """Classify ``schema``, then, only if it is supported, validate ``arguments`` against it.

    The one-shot convenience; the relay compiles once per tool instead. Raises as
    :func:`compile` and :meth:`Compiled.check`.
    """
    return compile(schema, profile=profile).check(arguments)
