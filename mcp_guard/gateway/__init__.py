"""The gateway: one guard in front of several upstreams from one config (issue 6).

Modules: :mod:`.config` (the ``mcpServers`` file and its ``guard`` section), :mod:`.naming`
(exposed names, resource routes, cursors), :mod:`.policy` (access, limits, budget),
:mod:`.pinning` (lock file), :mod:`.journal` (durable JSONL), :mod:`.jcs` (RFC 8785),
:mod:`.pipeline` (the ordered checks of a call), :mod:`.catalog` (the merged tool list),
:mod:`.listing` (listing upstreams with the ``mcp`` SDK), :mod:`.commands` (CLI).

Imports the core and the relay; neither imports this package.
"""
