"""What a model host is shown: host profiles, their checkers, and the lowering (issue 24).

A pure room above the core: imports neither ``mcp`` nor ``anyio``. ``tables`` holds each host's
versioned table (``HOSTS``), ``checker`` says whether a host accepts a schema and a name as they
are, ``lower`` builds the schema a host is shown with the exact inverse of each reshaping
(``inverse``), and ``names`` makes tool names valid for a host (collisions reported, never
merged). ``present_tools`` (``listing``) does all of it for one ``tools/list``.
"""

from __future__ import annotations

from .checker import HostIssue, check_name, check_schema
from .inverse import BackError
from .listing import Presentation, ShownTool, present_tools
from .lower import Lowered, Step, lower
from .tables import HOST_NAMES, HOSTS, HostName, HostProfile, host_profile

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
