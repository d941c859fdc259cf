"""The gateway: one guard in front of several upstreams from one config (issue 6).

Modules: :mod:`.config` (the ``mcpServers`` file and its ``guard`` section), :mod:`.naming`
(exposed names, resource routes, cursors), :mod:`.policy` (access, limits, budget),
:mod:`.pinning` (lock file), :mod:`.journal` (durable JSONL), :mod:`.jcs` (RFC 8785),
:mod:`.pipeline` (the ordered checks of a call), :mod:`.catalog` (the merged tool list),
:mod:`.session` and :mod:`.serve` (``serve``), :mod:`.commands` (CLI; ``pin`` and ``check --config``
list each upstream with :func:`mcp_guard.reports.listing.list_tools`).

Imports the core and the relay (and, in ``pin`` and ``check --config``, :mod:`mcp_guard.reports.listing`);
neither the core nor the relay imports this package.
"""
