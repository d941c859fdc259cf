"""What a lowering returns: its steps and the :class:`Lowered` result (issue 24, item 3).

:class:`Step` records one step of the pass (``hosts.lowering``), of one of three kinds kept apart
in the code: *widening* (``hosts.widening``), *reshaping* (``hosts.reshaping``), *narrowing*
(``hosts.narrowing``). :class:`Lowered` holds the schema the host is shown, every step, why a tool
is not presentable, and the mapping tree of the reshapings' exact inverses (``hosts.inverse``),
compiled once for the calls (``hosts.plans``).

Pure: imports neither ``mcp`` nor ``anyio``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from .checker import HostIssue
from .inverse import Map, narrowed, present
from .plans import UNBUILT, Back, compile_back

__all__ = ["Lowered", "Step", "StepKind", "unshown"]

StepKind = Literal["widening", "reshaping", "narrowing"]


class Step(NamedTuple):
    """One step of a lowering.

    Attributes:
        kind: ``widening``, ``reshaping`` or ``narrowing`` (``hosts.lowering``'s docstring).
        code: what was done (``dropped``, ``annotation``, ``inlined``, ``ref``, ``anyOf``, ``merged``,
            ``json-text``, ``nullable``, ``renamed``, ``closed``, ``null-is-absent``, ``items``, ``root``).
        pointer: JSON Pointer into the server's schema.
        detail: a sentence (schema text only); for ``dropped``, the keyword.
    """

    kind: StepKind
    code: str
    pointer: str
    detail: str

    def to_json(self) -> dict[str, str]:
        """``{"kind", "code", "pointer", "detail"}``."""
        return self._asdict()


def unshown(step: Step) -> bool:
    """Whether ``step`` leaves constraints out of the keywords the host is shown (the guard enforces them, and
    a refusal for one says the model was not shown it): a keyword dropped (written as text), ``oneOf`` shown
    as ``anyOf`` (exactly one is not said), the root's ``anyOf``/``oneOf`` merged into one object, and a
    value shown as JSON text (its schema is in the description, as text). ``check --host`` lists these as
    ``not_shown``; a reshaping's inverse and a narrowing are steps of their own."""
    if step.kind == "reshaping":
        return step.code == "json-text"
    if step.kind != "widening":
        return False
    return step.code == "dropped" or (step.code in ("anyOf", "root") and step.pointer.endswith(("/oneOf", "/anyOf")))


@dataclass(slots=True)
class Lowered:
    """The result of ``hosts.lowering.lower``.

    Attributes:
        host: the host profile's name.
        schema: the schema the model is shown (None when not presentable). It may share unchanged
            subtrees with the server's schema (the lowering copies only what it changes): neither
            is to be changed.
        steps: every step, in the order taken.
        reasons: why the tool is not presentable (``()`` when it is).
        mapping: the mapping tree (``hosts.inverse``); None is the identity.
        issues: what the host's checker says of :attr:`schema` (``()`` when presentable).
        located: where in the server's schema document (``/$defs/...``) the constraints of :attr:`not_shown`
            that were reached through an inlined ``$ref`` are: a finding's schema pointer names a keyword
            reached through a reference by its place in the document, not by the reference's position (a
            value shown as JSON text is not among them: one place may be shown as JSON text at one position
            and as a schema at another; a refusal tells those apart by the instance pointer). The same for the
            constraints of a node the lowering built from elsewhere: a merged ``allOf`` branch's
            (``/properties/a/allOf/0/maxLength``), a root alternative's (``/anyOf/1/properties/b/...``).
        moved: index in :attr:`steps` -> the step's places in the server's schema, for the steps the lowering
            walked elsewhere (``Run.located``; JSON text excepted); None: not known, :attr:`located` stands.
    """

    host: str
    schema: Any
    steps: tuple[Step, ...]
    reasons: tuple[str, ...] = ()
    mapping: Map = None
    issues: tuple[HostIssue, ...] = ()
    _defs: dict[str, Map] = field(default_factory=dict, repr=False)
    _plan: Any = field(default=UNBUILT, repr=False, compare=False)
    located: tuple[str, ...] = ()
    moved: dict[int, tuple[str, ...]] | None = field(default=None, repr=False, compare=False)
    _unshown: tuple[str, ...] | None = field(default=None, repr=False, compare=False)

    @property
    def presentable(self) -> bool:
        """True when the host accepts :attr:`schema` and every reshaping has an exact inverse."""
        return not self.reasons

    @property
    def not_shown(self) -> tuple[Step, ...]:
        """The steps that leave constraints out of the shown schema's keywords (:func:`unshown`); the guard
        enforces every one of them."""
        return tuple(s for s in self.steps if unshown(s))

    @property
    def unshown_at(self) -> tuple[str, ...]:
        """Where every constraint of :attr:`not_shown` is in the server's schema, as the guard's findings name it:
        the step's pointer, or its places where the lowering walked it elsewhere (:attr:`moved`). Worked out
        on first use (a refusal's), not for every lowering."""
        found = self._unshown
        if found is None:
            moved = self.moved
            if moved is None:
                found = (*(s.pointer for s in self.not_shown), *self.located)
            else:
                found = tuple(p for i, s in enumerate(self.steps) if unshown(s) for p in moved.get(i, (s.pointer,)))
            self._unshown = found
        return found

    @property
    def identity(self) -> bool:
        """True when arguments need no mapping back."""
        return self.mapping is None

    @property
    def back_plan(self) -> Back | None:
        """The mapping back compiled once (``hosts.plans``), on first use; None: the identity."""
        plan = self._plan
        if plan is UNBUILT:
            plan = self._plan = compile_back(self.mapping)
        return plan  # type: ignore[no-any-return]

    def back(self, arguments: Any) -> Any:
        """The server-side arguments of the model's ``arguments`` (raises ``inverse.BackError``
        with the instance pointer of a JSON text that does not parse); never changes ``arguments``,
        and returns them as they are where nothing maps."""
        plan = self.back_plan
        return arguments if plan is None else plan(arguments)

    def present(self, arguments: Any) -> Any:
        """The shown form of server-side ``arguments`` (the inverse of :meth:`back`)."""
        return present(self.mapping, arguments)

    def narrowed(self, arguments: Any) -> str | None:
        """Where a narrowing step keeps the model from sending ``arguments`` (None: nowhere)."""
        return narrowed(self.mapping, arguments)
