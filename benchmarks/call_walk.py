"""The walk of one ``tools/call`` through the guard: which files and rooms (folders) of
``mcp_guard`` it visits, and how often the walk changes file (issue 23, item 4).

For ``wrap`` and ``serve``, over the in-memory harness of the checkout's own tests
(``tests/harness.py``: a scripted upstream, memory links, no processes, so the stdio hot path
of small lines is not taken), one ``tools/call`` of ``echo`` is made after a first one (the
validator built, the tables warm); during the second, every Python function entered in
``mcp_guard`` is recorded (``sys.setprofile``, call events in order). Printed per command:

- files: distinct modules of ``mcp_guard`` entered;
- rooms: distinct folders among them (``core``, ``wire``, ``sessions``, ...; a top-level module
  counts as the room ``.``);
- file changes: how often the next function entered lives in another file than the last one
  (the "alternations" of the issue), and the same for rooms;
- the files in the order first entered, with the number of functions entered in each.

``--before DIR`` walks another checkout the same way (its ``mcp_guard`` and ``tests`` first on
``PYTHONPATH``), for a before/after table. Run it from a folder that is not a checkout
(``cd /tmp``), so the working directory does not shadow the checkouts::

    cd /tmp && python /path/to/benchmarks/call_walk.py --before /path/to/old-checkout

Counts only, no timings: the figures do not depend on the machine's load.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent

WALKER = r"""
import json, sys
import anyio
from pathlib import Path

from tests.harness import ScriptedUpstream, name, running_guard
import mcp_guard

ROOT = str(Path(mcp_guard.__file__).resolve().parent) + "/"


async def walk(command):
    upstream = ScriptedUpstream()
    async with running_guard(command, upstream) as client:
        first = await client.call(name(command, "echo"), {"text": "warm"})
        assert "result" in first, first
        seen = []

        def profile(frame, event, arg):
            if event == "call":
                path = frame.f_code.co_filename
                if path.startswith(ROOT):
                    seen.append(path[len(ROOT):])

        sys.setprofile(profile)
        try:
            answer = await client.call(name(command, "echo"), {"text": "hello"})
        finally:
            sys.setprofile(None)
        assert "result" in answer, answer
    return seen


out = {}
for command in ("wrap", "serve"):
    out[command] = anyio.run(walk, command)
print(json.dumps(out))
"""


def room(path: str) -> str:
    """The folder of a module path relative to the package (``.`` for a top-level module)."""
    return path.split("/", 1)[0] if "/" in path else "."


def summarize(seen: list[str]) -> dict[str, object]:
    """Counts of one walk: ``seen`` is the file of each function entered, in order."""
    order: dict[str, int] = {}
    for path in seen:
        order[path] = order.get(path, 0) + 1
    file_changes = sum(1 for a, b in itertools.pairwise(seen) if a != b)
    rooms = [room(p) for p in seen]
    room_changes = sum(1 for a, b in itertools.pairwise(rooms) if a != b)
    return {
        "functions": len(seen),
        "files": len(order),
        "rooms": sorted(set(rooms)),
        "file_changes": file_changes,
        "room_changes": room_changes,
        "order": order,
    }


def walk(checkout: Path) -> dict[str, list[str]]:
    """Run the walker with ``checkout`` first on ``PYTHONPATH``; the recorded file sequence per command."""
    env = dict(os.environ, PYTHONPATH=f"{checkout}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    done = subprocess.run(
        [sys.executable, "-c", WALKER], cwd="/", env=env, capture_output=True, text=True, timeout=120, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"the walker failed in {checkout}:\n{done.stderr[-2000:]}")
    result: dict[str, list[str]] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkout", type=Path, default=HERE, help="the checkout to walk (default: this one)")
    parser.add_argument("--before", type=Path, help="another checkout to walk the same way")
    parser.add_argument("--order", action="store_true", help="also list the files in the order first entered")
    args = parser.parse_args()
    sides = [("this", args.checkout)] + ([("before", args.before)] if args.before else [])
    walks = {label: walk(path.resolve()) for label, path in sides}
    for command in ("wrap", "serve"):
        print(f"one tools/call through {command} (in-memory harness, the second call of a tool):")
        for label, path in sides:
            s = summarize(walks[label][command])
            print(
                f"  {label:6} {s['functions']:4} functions in {s['files']:2} files, {len(s['rooms']):d} rooms "  # type: ignore[arg-type]
                f"({', '.join(s['rooms'])}); file changes {s['file_changes']}, room changes {s['room_changes']}"  # type: ignore[arg-type]
                f"   [{path}]"
            )
            if args.order:
                for path_name, count in s["order"].items():  # type: ignore[attr-defined]
                    print(f"           {count:4}  {path_name}")


if __name__ == "__main__":
    main()
