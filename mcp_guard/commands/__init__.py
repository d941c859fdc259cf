"""The CLI's subcommands above the library: ``check``, ``schema``, ``verify`` (:mod:`.reports`) and
``serve``, ``pin``, ``journal``, ``check --config`` (:mod:`.gateway`).

The top layer: it may import the reports, the gateway and the relay; none of them imports it, and
``reports`` and ``gateway`` never import each other (``tests/test_layering.py``). ``wrap`` and
``demo`` are parsed in :mod:`mcp_guard.cli`.
"""
