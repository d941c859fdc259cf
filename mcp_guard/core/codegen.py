"""Turn a classified schema (``compiler.TypedNode`` / ``OneOfNode`` tree) into Python functions.

Two functions per container node (object, array) and per ``oneOf`` node or branch:

- ``v<n>(x, w) -> bool``: the fast path. Straight-line type tests and loops, scalars inline,
  nested containers as calls. It is True only for a JSON value (exact types, finite
  numbers) that satisfies the node, so a True answer also proves the arguments can be
  forwarded as JSON.
- ``c<n>(x, ip, out, w)``: the slow path, run only when ``v<n>`` said no. Appends an
  :class:`~.report.Issue` per violation to ``out``; ``ip`` is the value's JSON Pointer.
  Where it meets a value that is not JSON, or a number JSON cannot carry, it sets ``w[1]``
  so that the caller runs the path-tracking scan (``TypeError`` / ``json`` findings) then,
  and only then.

``w`` is the call's cell ``[budget, scan flag, memo]``: ``w[0]`` the remaining work budget
(see ``budget``): entering an array charges its length times its ``items`` schema's weight,
and :class:`OverBudget` is raised when it runs out; ``w[1]`` the scan flag above; ``w[2]``
the per-call memo of ``json_values.json_once`` / ``canonical_once``, so the JSON walk of an
unconstrained container and the ``enum`` key of a value are made once per call however many
``oneOf`` branches look at them (the work the budget does not count stays linear in the
arguments' size).

Safety of the generated source: it is built from fixed templates and generated names
only. Every value that comes from a schema (property names, bounds, enum choices,
pointers, message texts) is bound in the module namespace as a constant
(:meth:`_Generator.const`) and referred to by name; none is ever spliced into the source.
Call depth is bounded by the schema's depth (``MAX_SCHEMA_DEPTH``), never by the
arguments': positions the schema does not constrain are checked by the iterative
``is_json``.

Scalars are inlined rather than given functions of their own, and Python's limit of 20
statically nested blocks is never reached: each container has its own function, holding at
most one loop.
"""

from __future__ import annotations

from collections.abc import Callable
from math import isfinite
from typing import Any

from .ir import Node, TypedNode
from .json_values import canonical_once, escape_token, is_json, is_uncarriable, json_once, json_type_name, pointer
from .keywords import Additional, Check, Items, Properties, Required, issue_code, where
from .report import VALIDATION, Issue

__all__ = ["ModuleWriter", "OverBudget", "base_namespace", "describe", "generate"]

Valid = Callable[[Any, list[Any]], bool]
Collect = Callable[[Any, str, list[Issue], list[Any]], None]


class OverBudget(Exception):
    """Raised by generated code when a call's work budget (``budget.MAX_WORK``) runs out."""


ARTICLE = {
    "object": "an object",
    "array": "an array",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
}

_TYPE_TESTS = {
    # expressions over the value ``{v}``; ``t`` holds ``type({v})``
    "string": "t is str",
    "boolean": "t is bool",
    "integer": "(t is int or (t is float and {v}.is_integer()))",
    "number": "(t is int or (t is float and isfinite({v})))",
}


_PLAIN_NAMES: dict[type, str] = {str: "string", int: "integer", bool: "boolean", type(None): "null"}
"""JSON type names of the scalar types that are always JSON (see ``json_values.json_type_name``)."""


def type_issue(value: Any, ip: str, type_path: str, expected: str, out: list[Issue], w: list[Any]) -> None:
    """Append the ``type`` finding for ``value``; flag (``w[1]``) a value the JSON scan must report.

    An uncarriable number gets no ``type`` finding: the scan reports it once, as ``json``.
    (Runs on the per-call slow path: the common types are named without further calls.)
    """
    t = type(value)
    name = _PLAIN_NAMES.get(t)
    if name is None:
        if t is dict or t is list:
            name = "object" if t is dict else "array"
            if not is_json(value):  # each position meets type_issue once per call: no memo needed
                w[1] = 1
        else:
            if is_uncarriable(value) or not is_json(value):
                w[1] = 1
                if is_uncarriable(value):
                    return
            name = json_type_name(value)
    where_ = "`" + ip + "`" if ip else "the arguments object"  # as keywords.where
    message = where_ + " must be " + expected + ", not " + name + " (type)"
    out.append(tuple.__new__(Issue, (VALIDATION, "type", type_path, ip, message)))


def child(ip: str, key: str) -> str:
    """The pointer of member ``key`` below ``ip`` (RFC 6901 escaping only when needed)."""
    if "~" in key or "/" in key:
        return ip + "/" + escape_token(key)
    return ip + "/" + key


CHAIN_LIMIT = 16
"""Objects with more declared properties than this dispatch through a dict, ``oneOf``s with
more branches loop over a tuple, and longer ``required`` lists loop over a constant: long
``elif`` or ``+`` chains nest in Python's syntax tree and exhaust its compiler's recursion
(about 3,000 deep), and a statement per name makes the source grow with the schema's size."""


def describe(node: Node) -> str:
    """What a node expects, in a few words, for ``oneOf`` messages (schema facts only; bounded size)."""
    if not isinstance(node, TypedNode):
        return f"one of {len(node.one_of.branches)} alternatives"
    text = ARTICLE[node.ntype]
    required = node.part(Required)
    if node.ntype == "object" and required is not None and required.names:
        names = required.names
        text += " with " + ", ".join(f"`{n}`" for n in names[:4]) + (", …" if len(names) > 4 else "")
    return text


class ModuleWriter:
    """The generated module of one validator: its source, its namespace of constants, fresh names.

    Shared by this profile's generator and the extended profile's (``extended.gen``). Every
    schema value reaches the source only through :meth:`const` (see the module docstring).
    """

    def __init__(self, namespace: dict[str, Any]) -> None:
        self.namespace = namespace
        self.source: list[str] = []
        self.trailer: list[str] = []  # assignments that need every function defined first
        self._consts: dict[tuple[type, Any], str] = {}
        self._count = 0

    def const(self, value: Any) -> str:
        """Bind a schema value as a module constant; return its name (see the module docstring)."""
        try:
            key: tuple[type, Any] | None = (type(value), value)
            found = self._consts.get(key)  # type: ignore[arg-type]
        except TypeError:  # unhashable: no sharing
            key, found = None, None
        if found is not None:
            return found
        name = self.name("K")
        self.namespace[name] = value
        if key is not None:
            self._consts[key] = name
        return name

    def name(self, prefix: str) -> str:
        """A fresh generated name."""
        self._count += 1
        return f"{prefix}{self._count}"

    def late_tuple(self, names: list[str]) -> str:
        """A module-level tuple of generated functions, bound after they are all defined."""
        name = self.name("T")
        self.trailer.append(f"{name} = ({', '.join(names)},)")
        return name

    def late_dict(self, entries: dict[str, str]) -> str:
        """A module-level dict from schema constants (by name) to generated functions."""
        name = self.name("D")
        self.trailer.append(f"{name} = {{{', '.join(f'{k}: {v}' for k, v in entries.items())}}}")
        return name

    def emit(self, header: str, body: list[str]) -> None:
        """Append one function definition to the module."""
        self.source.append(header)
        self.source.extend("    " + line for line in (body or ["pass"]))
        self.source.append("")

    def load(self, valid_name: str, collect_name: str, label: str) -> tuple[Valid, Collect, str]:
        """Compile and run the module; ``(valid, collect, source)`` of the two named functions."""
        source = "\n".join([*self.source, *self.trailer])
        code = compile(source, label, "exec")
        exec(code, self.namespace)  # the source holds generated names and templates only; see the docstring
        return self.namespace[valid_name], self.namespace[collect_name], source


def base_namespace() -> dict[str, Any]:
    """The names every generated validator's source may use (both profiles' generators start here)."""
    return {
        "Issue": Issue,
        "OverBudget": OverBudget,
        "new": tuple.__new__,
        "is_json": is_json,
        "json_once": json_once,
        "canonical_once": canonical_once,
        "isfinite": isfinite,
        "where": where,
        "type_issue": type_issue,
        "is_uncarriable": is_uncarriable,
        "child": child,
    }


class _Generator(ModuleWriter):
    def __init__(self) -> None:
        super().__init__(base_namespace())
        self._valid_names: dict[int, str] = {}
        self._weights: dict[int, int] = {}
        self._collect_names: dict[int, str] = {}

    def weight(self, node: Node) -> int:
        """Subschema evaluations one value costs against ``node`` (array elements are charged on entry)."""
        found = self._weights.get(id(node))
        if found is None:
            if isinstance(node, TypedNode):
                props = node.part(Properties)
                found = 1 + (sum(self.weight(sub) for sub in props.nodes.values()) if props else 0)
            else:
                found = 1 + sum(self.weight(b) for b in node.one_of.branches)
            self._weights[id(node)] = found
        return found

    # --- the fast path ----------------------------------------------------------------------

    def valid_fn(self, node: Node) -> str:
        """The name of ``v<n>(x) -> bool`` for ``node``, generating it once."""
        found = self._valid_names.get(id(node))
        if found is not None:
            return found
        name = self.name("v")
        self._valid_names[id(node)] = name
        if isinstance(node, TypedNode):
            body = self._typed_valid(node, "x")
            body.append("return True")
        else:
            tests = [self.valid_fn(b) for b in node.one_of.branches]
            if len(tests) <= CHAIN_LIMIT:
                body = [f"n = 1 if {tests[0]}(x, w) else 0"]
                for test in tests[1:]:
                    body += [f"if {test}(x, w):", "    if n: return False", "    n = 1"]
            else:
                body = ["n = 0", f"for t in {self.late_tuple(tests)}:", "    if t(x, w):"]
                body += ["        if n: return False", "        n = 1"]
            body.append("return n == 1")
        self.emit(f"def {name}(x, w):", body)
        return name

    def _typed_valid(self, node: TypedNode, v: str) -> list[str]:
        """Statements that ``return False`` when ``v`` breaks ``node`` (containers: at function top)."""
        if node.ntype == "object":
            lines = [f"if type({v}) is not dict: return False", *self._object_valid(node, v)]
        elif node.ntype == "array":
            lines = [f"if type({v}) is not list: return False", *self._array_valid(node, v)]
        else:
            lines = [f"t = type({v})", f"if not {_TYPE_TESTS[node.ntype].format(v=v)}: return False"]
        for part in node.parts:
            if isinstance(part, Check):
                lines.extend(part.valid_code(self, v))
        return lines

    def _member_valid(self, node: Node, v: str) -> list[str]:
        """Statements checking a member value: scalars inline, everything else by call."""
        if isinstance(node, TypedNode) and node.ntype not in ("object", "array"):
            return self._typed_valid(node, v)
        return [f"if not {self.valid_fn(node)}({v}, w): return False"]

    def _object_valid(self, node: TypedNode, v: str) -> list[str]:
        props = node.part(Properties)
        required = node.part(Required)
        additional = node.part(Additional)
        allowed = additional is None or additional.allowed
        names = required.names if required else ()
        if len(names) > CHAIN_LIMIT:  # one loop over a constant, not two lines per name
            lines = [f"for n in {self.const(names)}:", f"    if n not in {v}: return False"]
        else:
            lines = [f"if {self.const(n)} not in {v}: return False" for n in names]
        members = props.nodes if props is not None else {}
        if not members:
            lines.append(f"if {v} and not json_once({v}, w): return False" if allowed else f"if {v}: return False")
            return lines
        extra = "if not json_once(y, w): return False" if allowed else "return False"
        lines += [f"for k, y in {v}.items():", "    if type(k) is not str: return False"]
        if len(members) > CHAIN_LIMIT:
            checks = {}
            for prop, sub in members.items():
                fn = self.name("m")
                self.emit(f"def {fn}(y, w):", [*self._member_valid(sub, "y"), "return True"])
                checks[self.const(prop)] = fn
            table = self.late_dict(checks)
            lines += [
                f"    f = {table}.get(k)",
                "    if f is None:",
                f"        {extra}",
                "    elif not f(y, w): return False",
            ]
            return lines
        keyword = "if"
        for prop, sub in members.items():
            lines.append(f"    {keyword} k == {self.const(prop)}:")
            lines.extend("        " + line for line in self._member_valid(sub, "y"))
            keyword = "elif"
        lines += ["    else:", f"        {extra}"]
        return lines

    def _array_valid(self, node: TypedNode, v: str) -> list[str]:
        items = node.part(Items)
        if items is None:
            return [f"if not json_once({v}, w): return False"]
        return [
            *self._charge(items.node, v),
            f"for y in {v}:",
            *("    " + line for line in self._member_valid(items.node, "y")),
        ]

    def _charge(self, items: Node, v: str) -> list[str]:
        """Charge an array's elements to the call's work budget (see ``budget``)."""
        return [f"w[0] -= len({v}) * {self.const(self.weight(items))}", "if w[0] < 0: raise OverBudget"]

    # --- the slow path ----------------------------------------------------------------------

    def collect_fn(self, node: Node) -> str:
        """The name of ``c<n>(x, ip, out)`` for ``node``, generating it once."""
        found = self._collect_names.get(id(node))
        if found is not None:
            return found
        name = self.name("c")
        self._collect_names[id(node)] = name
        if isinstance(node, TypedNode):
            body = self._typed_collect(node, "x", "ip")
        else:
            tests = [self.valid_fn(b) for b in node.one_of.branches]
            branches = node.one_of.branches
            summary = "; ".join(f"{i + 1}: {describe(b)}" for i, b in enumerate(branches[:8]))
            summary += "; …" if len(branches) > 8 else ""
            none = self.const(f" matches none of the {len(branches)} alternatives of oneOf ({summary})")
            more = self.const(f" matches more than one of the {len(branches)} alternatives of oneOf ({summary})")
            body = [
                "n = 0",
                f"for t in {self.late_tuple(tests)}:",
                "    if t(x, w): n += 1",
                "if n == 1: return",
                "if is_uncarriable(x) or not json_once(x, w):",
                "    w[1] = 1",
                "    if is_uncarriable(x): return",
                issue_code(
                    self,
                    "oneOf",
                    node.one_of.schema_path,
                    "ip",
                    f"where(ip) + ({none} if n == 0 else {more})",
                ),
            ]
        self.emit(f"def {name}(x, ip, out, w):", body)
        return name

    def _typed_collect(self, node: TypedNode, v: str, ip: str) -> list[str]:
        """Statements appending every finding for ``v`` (pointer expression ``ip``) against ``node``."""
        tp, expected = self.const(pointer(node.type_path)), self.const(ARTICLE[node.ntype])
        if node.ntype == "object":
            test, rest = f"type({v}) is not dict", self._object_collect(node, v, ip)
        elif node.ntype == "array":
            test, rest = f"type({v}) is not list", self._array_collect(node, v, ip)
        else:
            test, rest = f"not {_TYPE_TESTS[node.ntype].format(v=v)}", []
        lines = [f"t = type({v})"] if node.ntype not in ("object", "array") else []
        lines += [f"if {test}:", f"    type_issue({v}, {ip}, {tp}, {expected}, out, w)", "else:"]
        body = list(rest)
        for part in node.parts:
            if isinstance(part, Check):
                body.extend(part.collect_code(self, v, ip))
        lines.extend("    " + line for line in (body or ["pass"]))
        return lines

    def _member_collect(self, node: Node, v: str, ip: str) -> list[str]:
        if isinstance(node, TypedNode) and node.ntype not in ("object", "array"):
            return self._typed_collect(node, v, ip)
        return [f"if not {self.valid_fn(node)}({v}, w): {self.collect_fn(node)}({v}, {ip}, out, w)"]

    def _object_collect(self, node: TypedNode, v: str, ip: str) -> list[str]:
        props = node.part(Properties)
        required = node.part(Required)
        additional = node.part(Additional)
        lines: list[str] = []
        if required is not None and len(required.names) > CHAIN_LIMIT:
            tails = tuple((n, "/" + escape_token(n) + "` is required") for n in required.names)
            lines.append(f"for n, m in {self.const(tails)}:")
            lines.append(f"    if n not in {v}:")
            message = f"{self.const('`')} + {ip} + m"
            lines.append("        " + issue_code(self, "required", required.schema_path, ip, message))
        elif required is not None:
            for n in required.names:
                # "`" + ip + "/name` is required": the member's pointer is never empty.
                message = f"{self.const('`')} + {ip} + {self.const('/' + escape_token(n) + '` is required')}"
                lines.append(f"if {self.const(n)} not in {v}:")
                lines.append("    " + issue_code(self, "required", required.schema_path, ip, message))
        members = props.nodes if props is not None else {}
        refuse_extra = additional is not None and not additional.allowed
        flag_extra = "if type(k) is not str or not json_once(y, w): w[1] = 1"
        if not members and not refuse_extra:
            return [*lines, f"if not json_once({v}, w): w[1] = 1"]
        if refuse_extra:
            assert additional is not None
            tail = self.const(" is not allowed: the schema declares no such property (additionalProperties: false)")
            issue = issue_code(self, "additionalProperties", additional.schema_path, "p", f"where(p) + {tail}")
            extra = [f"p = child({ip}, k)", issue, flag_extra]
        else:
            extra = [flag_extra]
        lines += [f"for k, y in {v}.items():", "    if type(k) is not str: w[1] = 1"]
        if not members:
            return lines + ["    " + line for line in extra]
        if len(members) > CHAIN_LIMIT:
            collectors = {}
            for prop, sub in members.items():
                fn = self.name("g")
                body = [f"p = ip + {self.const('/' + escape_token(prop))}", *self._member_collect(sub, "y", "p")]
                self.emit(f"def {fn}(y, ip, out, w):", body)
                collectors[self.const(prop)] = fn
            lines += [
                f"    f = {self.late_dict(collectors)}.get(k)",
                "    if f is not None:",
                f"        f(y, {ip}, out, w)",
            ]
        else:
            keyword = "if"
            for prop, sub in members.items():
                lines.append(f"    {keyword} k == {self.const(prop)}:")
                lines.append(f"        p = {ip} + {self.const('/' + escape_token(prop))}")
                lines.extend("        " + line for line in self._member_collect(sub, "y", "p"))
                keyword = "elif"
        lines.append("    else:")
        lines.extend("        " + line for line in extra)
        return lines

    def _array_collect(self, node: TypedNode, v: str, ip: str) -> list[str]:
        items = node.part(Items)
        if items is None:
            return [f"if not json_once({v}, w): w[1] = 1"]
        return [
            *self._charge(items.node, v),
            f"for i, y in enumerate({v}):",
            f'    p = {ip} + "/" + str(i)',
            *("    " + line for line in self._member_collect(items.node, "y", "p")),
        ]


def generate(root: Node) -> tuple[Valid, Collect, str]:
    """Generate the validator of a classified root node.

    Returns:
        ``(valid, collect, source)``: the root's fast and slow functions and the generated
        source text (for inspection and tests).
    """
    gen = _Generator()
    valid_name = gen.valid_fn(root)
    collect_name = gen.collect_fn(root)
    return gen.load(valid_name, collect_name, "<mcp-guard validator>")
