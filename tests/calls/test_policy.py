"""Policy: access by glob rules (order-free, strictest wins), limits, argument size, the sliding budget."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_guard.calls.policy import Budget, Policy, argument_bytes, matches
from mcp_guard.config import GuardSettings


def policy(**guard: Any) -> Policy:
    return Policy(GuardSettings.model_validate(guard, by_alias=True))


ACCESS = [
    ("no rules", {}, "fs", "read", "allow", ""),
    (
        "server deny",
        {"servers": {"fs": {"deny": ["write*"]}}},
        "fs",
        "write_file",
        "deny",
        'guard.servers.fs.deny "write*"',
    ),
    ("server deny other server", {"servers": {"fs": {"deny": ["*"]}}}, "web", "get", "allow", ""),
    ("guard deny over server/tool", {"deny": ["*/delete_*"]}, "db", "delete_row", "deny", 'guard.deny "*/delete_*"'),
    ("guard deny whole server", {"deny": ["web/*"]}, "web", "get", "deny", 'guard.deny "web/*"'),
    (
        "server hide",
        {"servers": {"fs": {"hide": ["debug_?"]}}},
        "fs",
        "debug_1",
        "hide",
        'guard.servers.fs.hide "debug_?"',
    ),
    ("guard hide", {"hide": ["fs/tmp*"]}, "fs", "tmp1", "hide", 'guard.hide "fs/tmp*"'),
    (
        "server allow list miss",
        {"servers": {"fs": {"allow": ["read*", "list*"]}}},
        "fs",
        "write",
        "deny",
        "not matched by guard.servers.fs.allow",
    ),
    ("server allow list hit", {"servers": {"fs": {"allow": ["read*", "list*"]}}}, "fs", "list_dir", "allow", ""),
    (
        "empty allow list allows none",
        {"servers": {"fs": {"allow": []}}},
        "fs",
        "read",
        "deny",
        "not matched by guard.servers.fs.allow",
    ),
    ("guard allow list miss", {"allow": ["fs/*"]}, "web", "get", "deny", "not matched by guard.allow"),
    (
        "deny beats allow",
        {"servers": {"fs": {"allow": ["*"], "deny": ["rm"]}}},
        "fs",
        "rm",
        "deny",
        'guard.servers.fs.deny "rm"',
    ),
    (
        "deny beats hide",
        {"servers": {"fs": {"hide": ["rm"], "deny": ["rm"]}}},
        "fs",
        "rm",
        "deny",
        'guard.servers.fs.deny "rm"',
    ),
    (
        "allow does not unhide",
        {"servers": {"fs": {"allow": ["*"], "hide": ["x"]}}},
        "fs",
        "x",
        "hide",
        'guard.servers.fs.hide "x"',
    ),
    ("case-sensitive", {"servers": {"fs": {"deny": ["Write"]}}}, "fs", "write", "allow", ""),
    ("character class", {"servers": {"fs": {"deny": ["[rw]m"]}}}, "fs", "wm", "deny", 'guard.servers.fs.deny "[rw]m"'),
    ("a literal name with glob characters", {"deny": ["h/[x]"]}, "h", "[x]", "deny", 'guard.deny "h/[x]"'),
    ("the same pattern as a glob", {"deny": ["h/[x]"]}, "h", "x", "deny", 'guard.deny "h/[x]"'),
    (
        "a literal per-server name",
        {"servers": {"h": {"deny": ["a*b"]}}},
        "h",
        "a*b",
        "deny",
        'guard.servers.h.deny "a*b"',
    ),
]


@pytest.mark.parametrize(
    ("guard", "server", "tool", "access", "rule"), [a[1:] for a in ACCESS], ids=[a[0] for a in ACCESS]
)
def test_access(guard: dict[str, Any], server: str, tool: str, access: str, rule: str) -> None:
    decided = policy(**guard).for_tool(server, tool)
    assert (decided.access, decided.rule) == (access, rule)


LIMITS = [
    ("none", {}, (None, None)),
    ("guard wide", {"maxArgumentBytes": 100, "callsPerMinute": 10}, (100, 10)),
    ("server lowers", {"maxArgumentBytes": 100, "servers": {"fs": {"maxArgumentBytes": 50}}}, (50, None)),
    ("server cannot raise", {"callsPerMinute": 10, "servers": {"fs": {"callsPerMinute": 99}}}, (None, 10)),
    (
        "smallest of matching tool patterns",
        {
            "servers": {
                "fs": {
                    "tools": {
                        "write*": {"callsPerMinute": 5},
                        "*_file": {"callsPerMinute": 3, "maxArgumentBytes": 7},
                        "read*": {"callsPerMinute": 1},
                    }
                }
            }
        },
        (7, 3),
    ),
]


@pytest.mark.parametrize(("guard", "expected"), [lim[1:] for lim in LIMITS], ids=[lim[0] for lim in LIMITS])
def test_limits_take_the_smallest(guard: dict[str, Any], expected: tuple[int | None, int | None]) -> None:
    decided = policy(**guard).for_tool("fs", "write_file")
    assert (decided.max_argument_bytes, decided.calls_per_minute) == expected


def test_matches_is_the_name_itself_or_the_glob() -> None:
    assert matches("[x]", "[x]") and matches("x", "[x]") and not matches("[x]", "[y]")
    assert matches("Bash", "Bash") and not matches("bash", "Bash")  # case-sensitive


def test_patterns_that_match_nothing_are_reported() -> None:
    """The trial's srvtypo.json: an exposed name as a pattern, an unknown server, a case typo, a tool typo."""
    p = policy(
        deny=["filesystem__echo", "nosuchserver/*", "filesystem/echo"],
        hide=["FILESYSTEM/*"],
        servers={"filesystem": {"tools": {"ech*": {"callsPerMinute": 1}, "nonexistent_tool": {"callsPerMinute": 1}}}},
    )
    listed = {"filesystem": ["echo", "crash"]}
    warnings = p.pattern_warnings(
        {"filesystem"}, listed, every_server_listed=True, exposed={"filesystem__echo": "filesystem/echo"}
    )
    assert warnings == [
        'guard.deny "filesystem__echo" matches no listed tool (`filesystem__echo` is an exposed name; patterns '
        "match server/tool: filesystem/echo)",
        'guard.deny "nosuchserver/*" names no server of the config: nosuchserver',
        'guard.hide "FILESYSTEM/*" names no server of the config: FILESYSTEM (did you mean filesystem?)',
        'guard.servers.filesystem.tools "nonexistent_tool" matches no tool of filesystem',
    ]
    # While a server is still starting, a guard-wide pattern may yet match: only the unknown server is said.
    early = p.pattern_warnings({"filesystem", "other"}, {}, every_server_listed=False)
    assert early == [
        'guard.deny "nosuchserver/*" names no server of the config: nosuchserver',
        'guard.hide "FILESYSTEM/*" names no server of the config: FILESYSTEM (did you mean filesystem?)',
    ]


def test_unsupported_setting_per_server() -> None:
    p = policy(unsupported="hide", servers={"fs": {"unsupported": "reject"}})
    assert p.for_tool("fs", "x").unsupported == "reject"
    assert p.for_tool("web", "x").unsupported == "hide"


SIZES = [
    ("empty object", {}, 2),
    ("compact separators", {"a": [1, 2]}, len('{"a":[1,2]}')),
    ("utf-8 bytes, not characters", {"é": "€"}, len('{"é":"€"}'.encode())),
    ("astral character", ["😀"], len('["😀"]'.encode())),
    ("lone surrogate counts 3 bytes", ["\ud800"], 2 + 2 + 3),
    ("null", None, 4),
]


@pytest.mark.parametrize(("arguments", "expected"), [s[1:] for s in SIZES], ids=[s[0] for s in SIZES])
def test_argument_bytes(arguments: Any, expected: int) -> None:
    assert argument_bytes(arguments) == expected


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_budget_sliding_window() -> None:
    clock = Clock()
    budget = Budget(clock)
    assert [budget.take("t", 3) for _ in range(3)] == [None, None, None]
    clock.now += 20
    wait = budget.take("t", 3)
    assert wait == pytest.approx(40.0)  # the first slot frees 60 s after it was taken
    assert budget.take("other", 3) is None  # per key
    clock.now += 39.9
    assert budget.take("t", 3) == pytest.approx(0.1)
    clock.now += 0.1
    assert budget.take("t", 3) is None  # exactly 60 s after: a slot is free
    assert budget.used("t") == 1  # the three first calls left the window together
    clock.now += 60
    assert budget.used("t") == 0


def test_refused_calls_take_no_slot() -> None:
    clock = Clock()
    budget = Budget(clock)
    assert budget.take("t", 1) is None
    for _ in range(100):
        clock.now += 0.5
        assert budget.take("t", 1) is not None
    clock.now = 1060.0
    assert budget.take("t", 1) is None


def test_budget_limit_can_change() -> None:
    clock = Clock()
    budget = Budget(clock)
    for _ in range(5):
        assert budget.take("t", 5) is None
    assert budget.take("t", 2) == pytest.approx(60.0)  # a stricter limit counts the same window
