"""The journal's argument digests are keyed (HMAC-SHA256), so short arguments cannot be brute-forced (red team 35)."""

from __future__ import annotations

import hashlib
import json
import stat
from pathlib import Path

import pytest
import rfc8785

from mcp_guard.calls.journal import Journal
from mcp_guard.calls.journal_key import KEY_ENV, argument_digest, key_path, load_key


def test_a_short_argument_cannot_be_recovered_from_the_journal_by_plain_sha256(tmp_path: Path) -> None:
    """Before: the digest was sha256(rfc8785({"s":"abc"})), found by trying three-letter strings."""
    path = tmp_path / "j.jsonl"
    with Journal(path) as journal:
        journal.intent("c1", "s", "t", argument_digest(journal.key, {"s": "abc"}), 11)
    [record] = [json.loads(line) for line in path.read_text().splitlines()]
    candidates = {hashlib.sha256(rfc8785.dumps({"s": s})).hexdigest() for s in ("abc", "abd", "yes", "no")}
    assert record["arguments_sha256"] not in candidates
    key = key_path(path)
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and len(key.read_text().strip()) == 64


def test_the_key_is_kept_so_digests_compare_across_reopenings(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    with Journal(path) as first:
        a = argument_digest(first.key, {"pin": "1234"})
    with Journal(path) as second:
        assert argument_digest(second.key, {"pin": "1234"}) == a != argument_digest(second.key, {"pin": "1235"})
    assert load_key(tmp_path / "other.jsonl", {})[0] != first.key


def test_a_shared_key_from_the_environment_wins(tmp_path: Path) -> None:
    key, source = load_key(tmp_path / "j.jsonl", {KEY_ENV: "team secret"})
    assert (key, source) == (b"team secret", "env") and not key_path(tmp_path / "j.jsonl").exists()
    assert load_key(None, {})[1] == "process"


def test_a_damaged_key_file_is_an_error_not_a_new_key(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    key_path(path).write_text("short\n")
    with pytest.raises(ValueError, match="journal key"):
        load_key(path, {})
