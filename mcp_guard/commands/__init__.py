"""The CLI's subcommands above the library: ``check``, ``schema``, ``verify`` (:mod:`.reports`),
``serve``, ``pin``, ``journal``, ``check --config`` (:mod:`.gateway`), ``install`` (:mod:`.install`)
and ``demo`` (:mod:`.demo`).

The commands room: it may import every room below (reports, calls, sessions, fronts, ...); none of
them imports it (``tests/test_layering.py``). ``wrap`` and ``demo`` are parsed in :mod:`mcp_guard.cli`.
"""
