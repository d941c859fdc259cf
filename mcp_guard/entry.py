"""The ``mcp-guard`` console script and ``python -m mcp_guard``: the stop signals held before the CLI loads.

``cli.main`` holds SIGINT, SIGTERM and SIGHUP for ``wrap`` and ``serve`` from its first line
(``start_signals``), but importing ``mcp_guard.cli`` comes first (~0.1 s idle, more under load), and a
Ctrl-C then still ended the guard with a ``KeyboardInterrupt`` traceback. This module imports nothing
of the package but ``start_signals`` (which imports nothing of it) before it holds them, then imports
the CLI inside the hold. Only the interpreter's own start and the package's ``__init__`` (which loads
nothing) remain before the hold.
"""

from __future__ import annotations

import sys

__all__ = ["main"]

FRONTS = ("wrap", "serve")
"""The commands whose stop signals are held while they start (``cli.main``'s)."""


def main() -> int:
    """Run the CLI on ``sys.argv``; returns its exit status (``cli.main``'s: 130 after a SIGINT held while a
    front started, 0 after SIGTERM or SIGHUP)."""
    if sys.argv[1:2] and sys.argv[1] in FRONTS:
        from .start_signals import held_until_front

        with held_until_front():
            from .cli import main as cli_main

            return cli_main()
    from .cli import main as cli_main

    return cli_main()
