"""Every package the guard's code imports is installed by what a user installs: the base dependencies, or the
extra that turns its feature on (``redis``, ``postgres``, ``auth``, ``otel``), with what those require in turn.

Red team 34: ``pip install 'mcp-guard[auth]'`` and ``--oauth-issuer`` ended in ``ModuleNotFoundError: httpx``:
the auth modules imported ``httpx``, which only the test extra brought (through ``mcp-server-fetch``), so the
suite never saw it missing. The check reads the imports of every module (lazy ones too) and the installed
distributions' own requirements; it needs no network."""

from __future__ import annotations

import ast
import importlib.metadata as metadata
import re
import sys
from pathlib import Path

from packaging.requirements import Requirement

PACKAGE = Path(__file__).resolve().parents[1] / "mcp_guard"
USER_EXTRAS = ("redis", "postgres", "auth", "otel")


def imported_top_levels(path: Path) -> set[str]:
    """The top-level names of every absolute import in one module (at any depth: lazy imports count)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def closure(roots: list[Requirement]) -> set[str]:
    """The distributions ``roots`` install, transitively (markers evaluated here, no extras of theirs but
    those they name)."""
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        requirement = todo.pop()
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        name = canonical(requirement.name)
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = metadata.requires(requirement.name) or []
        except metadata.PackageNotFoundError:
            continue
        for text in requires:
            nested = Requirement(text)
            wanted = nested.marker is None or any(
                nested.marker.evaluate({"extra": extra}) for extra in (requirement.extras or {""})
            )
            if wanted:
                todo.append(Requirement(str(nested).split(";")[0]))
    return seen


def user_installed() -> set[str]:
    """The distributions ``pip install 'mcp-guard[redis,postgres,auth,otel]'`` brings."""
    roots = []
    for text in metadata.requires("mcp-guard") or []:
        requirement = Requirement(text)
        marker = requirement.marker
        wanted = marker is None or any(marker.evaluate({"extra": extra}) for extra in ("", *USER_EXTRAS))
        if wanted and canonical(requirement.name) != "mcp-guard":
            roots.append(Requirement(str(requirement).split(";")[0]))
    return closure(roots)


def test_every_import_of_the_guard_is_installed_by_its_dependencies_or_a_user_extra() -> None:
    providers = metadata.packages_distributions()
    installed = user_installed()
    missing: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for name in imported_top_levels(path):
            if name in sys.stdlib_module_names or name == "mcp_guard" or name == "__future__":
                continue
            dists = {canonical(d) for d in providers.get(name, [])}
            if not dists & installed:
                missing.setdefault(name, []).append(str(path.relative_to(PACKAGE)))
    assert missing == {}, f"imported but installed by no dependency or user extra: {missing}"


def test_the_check_sees_a_package_only_a_test_dependency_brings() -> None:
    # httpx is installed here (mcp-server-fetch, a test dependency, requires it) and is no user's dependency.
    assert "httpx" in metadata.packages_distributions()
    assert "httpx" not in user_installed()
    assert {"httpx2", "joserfc", "redis"} <= user_installed()
