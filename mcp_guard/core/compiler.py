"""Classify a schema for a profile, in one complete walk, into the tree the code generator compiles.

``compile(schema)`` walks the *complete* schema once (every property, every ``items``, every
branch; spec "Two error kinds"), records every finding, and, when there is none, keeps the
tree of :class:`~.extended.ir.XNode` the keyword table's rules built. Every profile reads the
one table (``extended.table``): ``extended`` all of it (``extended.classify``), ``standard`` and
``strict`` their selection of its rows with each row's subset rule (``extended.subset``).
``Compiled.check(arguments)`` runs the validator ``extended.gen`` generates from that tree (on
first use; ``standard``/``strict`` judge doubles, ``extended`` E1's exact literals): no schema
analysis per call.

Classification recursion is bounded by :data:`MAX_SCHEMA_DEPTH`; the JSON scans are
iterative, so hostile nesting in a schema or in arguments cannot exhaust the stack.

This module does not read files, speak MCP, or know about tools.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from .budget import MAX_SCHEMA_DEPTH, MAX_WORK
from .ecma_regex import Undecidable, UnsearchableText
from .extended import XNode, classify_extended, generate
from .extended.classify import Walker
from .extended.kw_members import Members, Properties
from .extended.subset import SubsetWalker
from .extended.values import exact_uncarriable
from .extended.writer import Collect, OverBudget, Valid, where
from .json_values import TooLarge, is_json, pointer, scan
from .profiles import DEFAULT_PROFILE, PROFILES
from .report import OK_REPORT, UNCHECKED, VALIDATION, Issue, Note, Report

if TYPE_CHECKING:
    from .hints import Hint

__all__ = ["MAX_SCHEMA_DEPTH", "Compiled", "check", "classify", "compile"]


_MISSING: Final = object()


class Compiled:
    """A schema classified once and, when supported, compiled for per-call checks.

    Attributes:
        report: the classification (spec decisions 13, 14).
        profile: the profile that judged, one of ``profiles.PROFILES``.
        notes: :class:`~.report.Note` values, what the report must say that is not a finding
            (``extended``: a ``format`` that 2020-12 does not define is an annotation, E4); ``()``
            for the other profiles. A deferred schema's notes are those of the walk that passed it
            (none when its verdict did; see ``extended.classify.Walker``).

    Build with :func:`compile`. The validator's code is generated on the first
    :meth:`check` (see ``extended.gen``), so classifying a long ``tools/list`` costs no code
    generation for tools that are never called, or ahead with :meth:`build`. Reusable; ``check`` keeps no state beyond
    the validator it builds once.
    """

    __slots__ = ("_collect", "_deferred", "_names", "_root", "_valid", "notes", "profile", "report")

    def __init__(
        self,
        report: Report,
        root: XNode | None,
        profile: str,
        deferred: Any = _MISSING,
        notes: tuple[Note, ...] = (),
    ) -> None:
        self.report = report
        self.profile = profile
        self.notes = notes
        self._root = root if root is not None and report.ok else None
        self._deferred = deferred  # a clean schema whose tree is built on first use (compile's defer)
        self._valid: Valid | None = None
        self._collect: Collect | None = None
        self._names: frozenset[str] | None = None

    def _build(self) -> XNode | None:
        """The tree of a deferred schema, built once by the full classifier.

        Should the full classifier find anything where the verdict or the findings found nothing
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
    def declared_names(self) -> frozenset[str]:
        """Every name the schema declares under a ``properties`` keyword, at any depth and through
        every ``$ref`` (empty for an unsupported schema). Schema text, so the log may show it: a
        finding's instance pointer is logged with these segments and ``…`` for any other
        (``calls.refusals.logged_pointer``; a ``$ref``'s target is not on the finding's schema
        pointer). Built once, on first use."""
        names = self._names
        if names is None:
            root = self._root if self._deferred is _MISSING else self._build()
            names = self._names = frozenset() if root is None else _declared_names(root)
        return names

    def hints(self, issues: Sequence[Issue], arguments: Any = None) -> list[Hint | None]:
        """What the schema expects at each of ``issues`` (findings of :meth:`check`), for a refusal.

        See :mod:`.hints` (issue 24, item 5): the declared names closest to an unknown key, the
        choices of ``enum``/``const``, a missing property's declared type. Computed from the
        classified tree on demand (a refusal's path only; :meth:`check` never calls it).

        Args:
            issues: the findings (those that are not about an argument get ``None``).
            arguments: the call's arguments, read only for the names an object already holds.

        Returns:
            One :class:`~.hints.Hint` or ``None`` per issue (all ``None`` for an unsupported schema).
        """
        root = self._root if self._deferred is _MISSING else self._build()
        if root is None:
            return [None] * len(issues)
        from .hints import hints  # difflib and the ranking: loaded by the first refusal only

        return hints(root, issues, arguments)

    @property
    def source(self) -> str | None:
        """The generated validator's Python source (None for an unsupported schema)."""
        root = self._root if self._deferred is _MISSING else self._build()
        if root is None:
            return None
        return _generate(root, self.profile)[2]

    def build(self) -> Valid | None:
        """Generate the validator now, as the first :meth:`check` would; return its fast path (None for an
        unsupported schema, which is never validated). For a caller off the event loop: a big listing's
        schemas are classified in a worker thread (``calls.tool_table``), and a schema of thousands of
        subschemas has its validator made there too, so that its first call does not make it on the loop
        (issue 25 items 1 and 4). Idempotent; two threads building at once make two equal validators."""
        valid = self._valid
        if valid is None:
            root = self._root if self._deferred is _MISSING else self._build()
            if root is None:
                return None
            valid, self._collect, _source = _generate(root, self.profile)
            self._valid = valid  # (after _collect: check reads _valid first)
        return valid

    def check(self, arguments: Any, *, parsed: bool = False) -> Report:
        """Validate one call's arguments without any schema analysis.

        Args:
            arguments: the ``arguments`` of a ``tools/call`` as a JSON value (the relay
                passes ``{}`` when a call has none, decision 11).
            parsed: the caller vouches that ``arguments`` is what a JSON decoder
                (``json.loads``, ``json.JSONDecoder``) returned, unchanged: every object key
                is then an exact ``str`` (RFC 8259, 4: member names are strings), and the fast
                path of a closed object skips its per-key type test. Only the keys are taken on
                trust: every value is still checked (``NaN``, ``Infinity``, an ``Inexact``...).
                The relay passes True; the default keeps every test, for any caller.

        Returns:
            The classification report when the schema is not supported (never validates
            then); otherwise an empty report, or one ``validation`` issue per violation,
            each with its instance and schema pointers.

        Raises:
            TypeError: ``arguments`` holds a value that is not JSON (see ``json_values``).
        """
        valid = self._valid
        if valid is None:
            valid = self.build()
            if valid is None:
                return self.report
        try:
            cell: list[Any] = [MAX_WORK, 0, None, parsed, None]  # the call's cell (see extended.gen)
            if valid(arguments, cell):
                return OK_REPORT  # (every charge of the generated code checks the budget at once)
            return self._findings(arguments, cell)
        except Undecidable as exc:  # never a guessed verdict: under `not` either guess could pass
            if isinstance(exc, UnsearchableText):
                keyword, why = (
                    "pattern",
                    "holds a lone surrogate, which the guard's ECMA-262 pattern engine cannot read",
                )
            else:
                keyword, why = "format", "is a regular expression too large for the guard to check"
            message = f"a string in these arguments {why}; {UNCHECKED}"
            return Report((Issue(VALIDATION, keyword, "", "", message),))
        except RecursionError:  # extended: a recursive schema ($ref) followed down very deep arguments
            message = (
                f"these arguments nest deeper than the guard can follow through this recursive schema; {UNCHECKED}"
            )
            return Report((Issue(VALIDATION, "budget", "", "", message),))
        except (OverBudget, TooLarge):
            message = (
                f"checking these arguments against this schema would take more than the guard's work budget "
                f"({MAX_WORK:,} units of work); {UNCHECKED}"
            )
            return Report((Issue(VALIDATION, "budget", "", "", message),))

    def _uncarriable(self, arguments: Any) -> list[tuple[str | int, ...]]:
        """The scan's paths of numbers JSON cannot carry (``TypeError`` for non-JSON); under
        ``extended``, a literal no double holds is an exact number (E1) and is not among them."""
        found = scan(arguments, what="arguments")
        if self.profile != "extended":
            return found
        return [p for p in found if exact_uncarriable(_at(arguments, p))]

    def _findings(self, arguments: Any, fast: list[Any]) -> Report:
        """The slow path: every violation, with its pointers.

        ``fast``: the fast path's cell. Its record of where array loops stopped (``w[4]``, see
        ``extended.gen``) is kept: the slow path neither tests again what the fast path found
        failing, nor walks again the items it passed (``None`` until a loop fails: no record). The budget
        and the memo are new ones.
        """
        out: list[Issue] = []
        assert self._collect is not None
        cell = fast  # its keys-exact flag and its records; a new budget and memo (the fast path sets no scan flag)
        cell[0], cell[2] = MAX_WORK, None
        self._collect(arguments, "", out, cell)
        if cell[1]:
            # Somewhere sits a value that is not JSON (TypeError with its pointer) or a number JSON
            # cannot carry: only now is the path-tracking scan worth its cost.
            why = (
                " is a number JSON cannot carry (NaN, Infinity, beyond the range of a double, which parsers read "
                "as an infinity or as 0, or past the guard's digit limit); it is refused"
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


def _declared_names(root: XNode) -> frozenset[str]:
    """The names under every ``properties`` of a classified tree (iterative; each node once, so
    ``$ref`` cycles end)."""
    names: set[str] = set()
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        for part in node.parts:
            if isinstance(part, Members):
                names.update(part.props)
            elif isinstance(part, Properties):
                names.update(part.members)
            stack.extend(part.nodes())
    return frozenset(names)


def _at(value: Any, path: tuple[str | int, ...]) -> Any:
    for key in path:
        value = value[key]
    return value


def _generate(root: XNode, profile: str) -> tuple[Valid, Collect, str]:
    """The validator of a classified root (``extended.gen``): exact literals (E1) under ``extended``
    only; ``standard`` and ``strict`` judge doubles."""
    return generate(root, decimals=profile == "extended")


def _profile(profile: str) -> str:
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; expected one of {list(PROFILES)}")
    return profile


def _compile_extended(schema: Any, defer: bool, known_json: bool) -> Compiled:
    """``extended``: the one walk of ``extended.classify.Walker``; the validator is generated on first use.

    :func:`compile` asks the walk's verdict itself for ``defer`` (a listing asks it per tool); the
    rest come here. With ``defer`` the walk gives its findings only (clean subtrees are not
    built), and a clean schema's tree is built on the first check, as for the verdict's.
    """
    issues, root, notes = classify_extended(schema, known_json=known_json, build=not defer)
    if issues:
        return Compiled(Report(tuple(issues)), None, "extended", notes=notes)
    if root is None:
        return Compiled(OK_REPORT, None, "extended", schema, notes)
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
    if defer and SubsetWalker(profile).clean(schema, 0):
        return Compiled(OK_REPORT, None, profile, schema)  # a clean quick walk proves the schema JSON
    # is_json first (no paths: several times cheaper); only a schema that is not plain JSON needs the
    # scan's pointers (its TypeError for a value that is not JSON, its `json` findings)
    found = () if known_json or is_json(schema) else scan(schema, what="schema")
    issues = [Issue(VALIDATION, "json", pointer(p), None, _JSON_FINDING) for p in found]
    classifier = SubsetWalker.findings(profile, skim=defer)  # skim: a deferred schema here has findings
    root = classifier.root(schema)
    issues += classifier.issues
    if issues:
        return Compiled(Report(tuple(issues)), None, profile)
    if defer:  # the quick walk doubted a clean schema: the skimmed tree stands in for parts, so build it on use
        return Compiled(OK_REPORT, None, profile, schema)
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
    if profile == "extended":
        if defer and Walker().root(schema):  # the walk's verdict, inline: a listing asks it per tool
            return Compiled(OK_REPORT, None, "extended", schema)
        return _compile_extended(schema, defer, known_json)
    return _compile_subset(schema, _profile(profile), defer, known_json)


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
