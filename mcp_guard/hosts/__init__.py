"""What a model host is shown: host profiles, their checkers, and the lowering (issue 24).

A pure room above the core: imports neither ``mcp`` nor ``anyio``. ``tables`` holds each host's
versioned table (``HOSTS``), ``checker`` says whether a host accepts a schema and a name as they
are, ``lowering`` (the driver, with the pass's state in ``run`` and its result in ``lowered``)
builds the schema a host is shown through ``widening``, ``reshaping`` and ``narrowing`` steps,
with the exact inverse of each reshaping (``inverse``, compiled once per lowering by ``plans``),
and ``names`` makes tool names valid for a host (collisions reported, never merged).
``present_tools`` (``listing``) does all of it for one ``tools/list``.

The tables are imported with the package (the command line lists the host names); the rest on
first use (PEP 562), so a command that never shows a host loads none of it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .tables import HOST_NAMES, HOSTS, HostName, HostProfile, host_profile

if TYPE_CHECKING:
    from .checker import HostIssue, check_name, check_schema
    from .inverse import BackError
    from .listing import Presentation, ShownTool, present_tools
    from .lowered import Lowered, Step
    from .lowering import lower

_LAZY = {
    "HostIssue": "checker",
    "check_name": "checker",
    "check_schema": "checker",
    "BackError": "inverse",
    "Presentation": "listing",
    "ShownTool": "listing",
    "present_tools": "listing",
    "Lowered": "lowered",
    "Step": "lowered",
    "lower": "lowering",
}
"""Public names imported on first use, by the submodule that defines them."""


def __getattr__(name: str) -> Any:
    """Import a name on first use (then it is an ordinary attribute of the package)."""
    home = _LAZY.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{home}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "HOSTS",
    "HOST_NAMES",
    "BackError",
    "HostIssue",
    "HostName",
    "HostProfile",
    "Lowered",
    "Presentation",
    "ShownTool",
    "Step",
    "check_name",
    "check_schema",
    "host_profile",
    "lower",
    "present_tools",
]
