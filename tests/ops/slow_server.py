"""A stdio MCP server that starts slowly: sleeps ``START_DELAY`` seconds (default 2.5), then is ``faulty_server.py``."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

time.sleep(float(os.environ.get("START_DELAY", "2.5")))
faulty = Path(__file__).resolve().parents[1] / "e2e" / "faulty_server.py"
os.execv(sys.executable, [sys.executable, str(faulty)])
