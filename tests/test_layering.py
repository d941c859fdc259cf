"""The package's layers, enforced: imports point down, private names stay home, the core stays pure.

Every module of ``mcp_guard`` is read with ``ast`` (imports inside functions and under
``TYPE_CHECKING`` count: they are dependencies all the same) and placed in a layer of
:data:`LAYERS`, lowest first. A module may import from a lower layer, or from its own layer
within its own package (``relay.*`` with ``relay.*``); never upward, never sideways into another
package of its layer (so the two sessions, ``sessions.relay`` and ``sessions.gateway``, and the
``reports`` and the ``gateway``, cannot lean on each other). A name starting with ``_`` is never
imported from another module. The schema core imports nothing of the rest of the package and
none of the I/O libraries. Every exception class outside the core derives from
``mcp_guard.errors.GuardError``. Modules stay under :data:`MAX_LINES` lines, or under the
ceiling they have today (a ratchet: they may only shrink).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from mcp_guard.errors import GuardError

PACKAGE = Path(__file__).resolve().parents[1] / "mcp_guard"

LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("core", ("mcp_guard.core",)),
    ("root", ("mcp_guard.errors", "mcp_guard.guarded", "mcp_guard")),
    ("wire", ("mcp_guard.wire",)),
    ("streams", ("mcp_guard.streams.framing", "mcp_guard.streams.pipes", "mcp_guard.streams.ends")),
    (
        "peer",
        (
            "mcp_guard.peer",
            "mcp_guard.peer.upstream",
            "mcp_guard.peer.spawn",
            "mcp_guard.peer.child_stderr",
            "mcp_guard.peer.http_upstream",
            "mcp_guard.peer.http_headers",
            "mcp_guard.peer.http_faults",
        ),
    ),
    ("reports", ("mcp_guard.reports",)),
    ("refusals", ("mcp_guard.calls",)),
    ("judgement", ("mcp_guard.calls.tool_table", "mcp_guard.sessions.listings")),
    (
        "gateway parts",
        tuple(
            f"mcp_guard.gateway.{m}"
            for m in ("config", "naming", "policy", "pinning", "journal", "jcs", "pipeline", "catalog")
        ),
    ),
    ("links", ("mcp_guard.sessions.link", "mcp_guard.sessions.envelopes")),
    (
        "sessions",
        (
            "mcp_guard.sessions.relay",
            "mcp_guard.sessions.upstream_side",
            "mcp_guard.sessions.gateway",
            "mcp_guard.sessions.modern_era",
        ),
    ),
    ("fronts", ("mcp_guard.fronts.http", "mcp_guard.fronts.stdio", "mcp_guard.relay")),
    ("entries", ("mcp_guard.fronts.serve", "mcp_guard.gateway")),
    ("commands", ("mcp_guard.commands", "mcp_guard.commands.demo")),
    ("cli", ("mcp_guard.cli",)),
    ("main", ("mcp_guard.__main__",)),
]
"""Layers, lowest first; a module belongs to the layer of its longest matching prefix."""

IO_LIBRARIES = ("mcp", "mcp_types", "anyio", "httpx", "httpx2", "starlette", "uvicorn", "sniffio", "asyncio")
"""What the schema core (and the pure wire vocabulary, ``mcp_guard.wire``) never imports."""

MAX_LINES = 800
CEILINGS = {
    # Modules over MAX_LINES today, with their size as a ceiling until they are split.
}

EXCEPTIONS_OFF_THE_ROOT: set[str] = set()
"""Exception classes outside the core allowed not to derive from the root (none today)."""


@dataclass(frozen=True)
class Import:
    importer: str
    target: str  # the module imported from (``from X import y``: X; a name that is a submodule: X.y)
    names: tuple[str, ...]
    line: int


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports_of(name: str, path: Path) -> list[Import]:
    tree = ast.parse(path.read_text(), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [Import(name, alias.name, (), node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            found.append(Import(name, target, tuple(alias.name for alias in node.names), node.lineno))
    return found


ALL = modules()
IMPORTS = [i for name, path in ALL.items() for i in imports_of(name, path)]


def layer_of(module: str) -> tuple[int, str]:
    """(rank, prefix) of the layer entry whose prefix matches ``module`` longest."""
    best: tuple[int, str] | None = None
    for rank, (_layer, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and (best is None or len(prefix) > len(best[1])):
                best = (rank, prefix)
    assert best is not None, f"{module} is in no layer of LAYERS: place it"
    return best


def resolved(target: str, names: tuple[str, ...]) -> list[str]:
    """The modules an import reaches: ``from pkg import sub`` reaches ``pkg.sub`` when that is a module."""
    subs = [f"{target}.{n}" for n in names if f"{target}.{n}" in ALL]
    return subs or [target]


def top_package(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 else module


def test_every_module_has_a_layer() -> None:
    for name in ALL:
        layer_of(name)


def test_imports_point_down() -> None:
    """No module imports from a higher layer, or from another package of its own layer."""
    wrong = []
    for imp in IMPORTS:
        if not (imp.target == "mcp_guard" or imp.target.startswith("mcp_guard.")):
            continue
        importer_rank, _ = layer_of(imp.importer)
        for target in resolved(imp.target, imp.names):
            rank, _ = layer_of(target)
            sideways = rank == importer_rank and top_package(target) != top_package(imp.importer)
            if rank > importer_rank or sideways:
                wrong.append(
                    f"{imp.importer}:{imp.line} imports {target} "
                    f"({LAYERS[importer_rank][0]} -> {LAYERS[rank][0]}{', sideways' if sideways else ''})"
                )
    assert wrong == []


def test_no_private_name_crosses_a_module_boundary() -> None:
    wrong = [
        f"{imp.importer}:{imp.line} takes {imp.target}.{n}"
        for imp in IMPORTS
        if imp.target.startswith("mcp_guard")
        for n in imp.names
        if n.startswith("_") and not n.startswith("__") and imp.target != imp.importer
    ]
    assert wrong == []


@pytest.mark.parametrize("package", ["mcp_guard.core", "mcp_guard.wire"])
def test_pure_layers_import_no_io_library(package: str) -> None:
    wrong = [
        f"{imp.importer}:{imp.line} imports {imp.target}"
        for imp in IMPORTS
        if imp.importer == package or imp.importer.startswith(package + ".")
        if imp.target.split(".")[0] in IO_LIBRARIES
    ]
    assert wrong == []


def test_the_shared_vocabulary_is_in_the_pure_wire_package() -> None:
    """JSON-RPC (codes, ids, decoders) and the line framing live in ``mcp_guard.wire``, checked pure
    above, and the wire layer is that package alone; the byte streams that need ``anyio``/``asyncio``
    (``streams.framing``, ``streams.pipes``) are the ``streams`` layer just above it."""
    for name in ("mcp_guard.wire.jsonrpc", "mcp_guard.wire.framing", "mcp_guard.wire.meta", "mcp_guard.wire.messages"):
        assert name in ALL, name
    assert "mcp_guard.relay.jsonrpc" not in ALL
    assert [n for n in ALL if LAYERS[layer_of(n)[0]][0] == "wire"] == [n for n in ALL if n.startswith("mcp_guard.wire")]


def test_the_core_imports_nothing_of_the_rest_of_the_package() -> None:
    wrong = [
        f"{imp.importer}:{imp.line} imports {imp.target}"
        for imp in IMPORTS
        if imp.importer.startswith("mcp_guard.core")
        if imp.target.startswith("mcp_guard") and not imp.target.startswith("mcp_guard.core")
    ]
    assert wrong == []


LOADED = """
import importlib, json, sys
loaded = {}
for name in json.loads(sys.argv[1]):
    for m in [m for m in sys.modules if m == "mcp_guard" or m.startswith("mcp_guard.")]:
        del sys.modules[m]
    importlib.import_module(name)
    loaded[name] = sorted(m for m in sys.modules if m.startswith("mcp_guard."))
print(json.dumps(loaded))
"""


def test_importing_a_module_loads_nothing_above_it() -> None:
    """At run time too: importing a module (its packages' ``__init__`` included) loads no module of a
    higher layer (an eager package ``__init__`` would drag the sessions in under the wire layer)."""
    names = [n for n in ALL if n not in ("mcp_guard.__main__",)]
    run = subprocess.run(
        [sys.executable, "-c", LOADED, json.dumps(names)], capture_output=True, text=True, check=True, timeout=120
    )
    wrong = []
    loads = json.loads(run.stdout)
    packages = {n for n, path in ALL.items() if path.name == "__init__.py"}
    for name, loaded in loads.items():
        rank = layer_of(name)[0]
        above = [m for m in loaded if layer_of(m)[0] > rank and m not in packages]
        if above:
            wrong.append(f"importing {name} ({LAYERS[rank][0]}) loads {', '.join(above)}")
    assert wrong == []
    # A package whose modules span layers loads none of them by itself (its names come on first use).
    for package in ("mcp_guard.relay", "mcp_guard.reports", "mcp_guard.wire", "mcp_guard.commands"):
        assert [m for m in loads[package] if m.startswith(package + ".")] == [], package


def test_the_layering_test_sees_a_violation() -> None:
    """The checks above can fail: an upward import and a private name, made up, are caught."""
    upward = Import("mcp_guard.core.ir", "mcp_guard.sessions.relay", ("Relay",), 1)
    assert layer_of(upward.target)[0] > layer_of(upward.importer)[0]
    sideways = Import("mcp_guard.sessions.gateway", "mcp_guard.sessions.relay", ("Relay",), 1)
    assert layer_of(sideways.target)[0] == layer_of(sideways.importer)[0]
    assert top_package(sideways.target) != top_package(sideways.importer)
    assert layer_of("mcp_guard.reports.tools")[0] < layer_of("mcp_guard.sessions.gateway")[0]


def test_every_exception_class_outside_the_core_derives_from_the_root() -> None:
    wrong = []
    for name in ALL:
        if name.startswith("mcp_guard.core") or name == "mcp_guard.__main__":
            continue
        module = importlib.import_module(name)
        for attr, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == name
                and not issubclass(value, GuardError)
                and f"{name}.{attr}" not in EXCEPTIONS_OFF_THE_ROOT
            ):
                wrong.append(f"{name}.{attr}")
    assert wrong == []


def test_the_exception_tree_in_the_docstring_names_every_public_exception() -> None:
    import mcp_guard.errors

    doc = mcp_guard.errors.__doc__ or ""
    for name in ALL:
        if name.startswith("mcp_guard.core") or name == "mcp_guard.__main__":
            continue
        for attr, value in vars(importlib.import_module(name)).items():
            public = not attr.startswith("_") and value is not GuardError
            if public and inspect.isclass(value) and issubclass(value, GuardError) and value.__module__ == name:
                assert f" {attr} " in doc, f"{name}.{attr} is missing from the tree in mcp_guard/errors.py"


def test_modules_stay_small() -> None:
    sizes = {name: len(path.read_text().splitlines()) for name, path in ALL.items()}
    too_big = {
        name: size
        for name, size in sizes.items()
        if size > CEILINGS.get(name, MAX_LINES) and not name.startswith("mcp_guard.core")
    }
    assert too_big == {}, f"split these by concern (at most {MAX_LINES} lines; listed ceilings only shrink)"
