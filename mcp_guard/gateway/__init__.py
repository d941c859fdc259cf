"""The gateway: one guard in front of several upstreams from one config (issue 6).

Modules: :mod:`.config` (the ``mcpServers`` file and its ``guard`` section), :mod:`.naming`
(exposed names, resource routes, cursors), :mod:`.policy` (access, limits, budget),
:mod:`.pinning` (lock file), :mod:`.journal` (durable JSONL), :mod:`.jcs` (RFC 8785),
:mod:`.pipeline` (the ordered checks of a call), :mod:`.catalog` (the merged tool list),
:mod:`.link` (one upstream: connection loop, own and forwarded requests), :mod:`.envelopes`
(the 2026-07-28 era's per-envelope lists and listen streams), :mod:`.session` and
:mod:`.serve` (``serve``). The CLI's ``serve``, ``pin``, ``journal`` and
``check --config`` are in :mod:`mcp_guard.commands.gateway`.

Imports the core, the wire vocabulary, the peer and the relay's building blocks; never the
reports, and neither the core nor the relay imports this package (``tests/test_layering.py``).
"""
