"""``python -m mcp_guard``: the same as the ``mcp-guard`` command."""

import sys

from .cli import main

sys.exit(main())
