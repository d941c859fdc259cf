"""``mcp_guard.allocator.one_arena``: set once, never over the user's own setting, never raising."""

from __future__ import annotations

import platform
import sys

import pytest

from mcp_guard import allocator

GLIBC = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """As in a new process: not set yet, and no malloc variable in the environment."""
    monkeypatch.setattr(allocator, "_done", False)
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    monkeypatch.delenv("GLIBC_TUNABLES", raising=False)


@pytest.mark.skipif(not GLIBC, reason="mallopt(M_ARENA_MAX) is glibc's")
def test_it_is_set_once_under_glibc(fresh: None) -> None:
    assert allocator.one_arena() is True
    assert allocator.one_arena() is False


@pytest.mark.parametrize("variable", ["MALLOC_ARENA_MAX", "GLIBC_TUNABLES"])
def test_the_users_own_setting_is_left_alone(fresh: None, monkeypatch: pytest.MonkeyPatch, variable: str) -> None:
    monkeypatch.setenv(variable, "2" if variable == "MALLOC_ARENA_MAX" else "glibc.malloc.arena_max=2")
    assert allocator.one_arena() is False


def test_elsewhere_nothing_is_done(fresh: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(allocator.sys, "platform", "darwin")
    assert allocator.one_arena() is False
