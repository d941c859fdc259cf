"""``python -m mcp_guard``: the same as the ``mcp-guard`` command (``entry``: stop signals held first)."""

import sys

from .entry import main

sys.exit(main())
