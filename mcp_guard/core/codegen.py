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

from .extended.writer import CHAIN_LIMIT, Collect, ModuleWriter, OverBudget, Valid, base_namespace
from .ir import Node, TypedNode
from .json_values import escape_token, pointer
from .keywords import Additional, Check, Items, Properties, Required, issue_code

__all__ = ["ModuleWriter", "OverBudget", "base_namespace", "describe", "generate"]


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
