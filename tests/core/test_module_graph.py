"""The schema core's modules form a DAG: no import cycle, ``core/extended`` included (issue 23, item 3).

Every module under ``mcp_guard/core`` is read with ``ast``; every import counts (inside functions
and under ``TYPE_CHECKING`` too: a type-only import is a dependency all the same, and mypy reads
it). ``from .x import y`` depends on ``x``, and on ``x.y`` when that is a module. Edges to a
package's own ``__init__`` from its modules are left out (Python runs a parent package first
whatever the module imports, so that edge says nothing of the design); ``__init__``'s own imports
count. A cycle is a strongly connected component of more than one module, or a module importing
itself. The checker is run on planted graphs too, so that it cannot pass by finding nothing.
"""

from __future__ import annotations

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "mcp_guard" / "core"


def _module_name(path: Path) -> str:
    parts = path.relative_to(CORE.parent.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _resolve(module: str, is_package: bool, level: int, target: str | None) -> str:
    if level == 0:
        return target or ""
    base = module.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, *([target] if target else [])])


def import_graph(root: Path = CORE) -> dict[str, set[str]]:
    """``{module: modules it imports}`` for the modules under ``root`` (only edges inside it)."""
    files = {_module_name(p): p for p in sorted(root.rglob("*.py"))}
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom):
                base = _resolve(name, is_package, node.level, node.module)
                targets.append(base)
                targets += [f"{base}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Import):
                targets += [alias.name for alias in node.names]
            for target in targets:
                if (target in files and target != name and not name.startswith(target + ".")) or target == name:
                    graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with a cycle (Tarjan's algorithm, iterative), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for succ in edges:
                if succ not in index:
                    index[succ] = low[succ] = counter
                    counter += 1
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(graph[succ]))))
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component: list[str] = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1 or node in graph[node]:
                        found.append(sorted(component))
    return sorted(found)


def test_the_checker_finds_planted_cycles() -> None:
    dag = {"a": {"b", "c"}, "b": {"c"}, "c": set()}
    assert cycles(dag) == []
    assert cycles({**dag, "c": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"a"}, "b": set()}) == [["a"]]
    assert cycles({"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"c"}}) == [["a", "b"], ["c", "d"]]


def test_the_graph_reads_every_kind_of_import() -> None:
    graph = import_graph()
    extended = "mcp_guard.core.extended"
    assert f"{extended}.ir" in graph[f"{extended}.table"]  # from .ir import Keyword
    assert f"{extended}.kw_any" in graph[f"{extended}.table"]  # from . import kw_any, ...
    assert "mcp_guard.core.json_values" in graph[f"{extended}.values"]  # from ..json_values import ...
    assert f"{extended}.classify" in graph[extended]  # a package's __init__ counts its imports


def test_the_core_has_no_import_cycle() -> None:
    graph = import_graph()
    assert len([m for m in graph if m.startswith("mcp_guard.core.extended.")]) >= 10  # the modules were read
    assert cycles(graph) == []
