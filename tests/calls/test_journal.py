"""The journal: exact records, fsync before forwarding, torn lines after a crash, the summary."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from mcp_guard.calls import journal as journal_module
from mcp_guard.calls.journal import Journal, format_summary, journal_path_problem, read_records, rfc3339, summarize

FIXED = datetime(2026, 11, 20, 10, 0, 0, 123456, tzinfo=UTC)
SHA = "a" * 64


def open_journal(path: Path) -> Journal:
    return Journal(path, clock=lambda: FIXED)


def test_records_have_exactly_the_issue_fields(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    with open_journal(path) as j:
        j.intent("c1", "fs", "read", SHA, 42)
        j.outcome("c1", "fs", "read", "ok")
        j.outcome("c2", "fs", "write", "rejected", "policy_denied")
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == [
        {
            "event": "intent",
            "call_id": "c1",
            "time": "2026-11-20T10:00:00.123Z",
            "server": "fs",
            "tool": "read",
            "arguments_sha256": SHA,
            "arguments_bytes": 42,
        },
        {
            "event": "outcome",
            "call_id": "c1",
            "time": "2026-11-20T10:00:00.123Z",
            "server": "fs",
            "tool": "read",
            "result": "ok",
        },
        {
            "event": "outcome",
            "call_id": "c2",
            "time": "2026-11-20T10:00:00.123Z",
            "server": "fs",
            "tool": "write",
            "result": "rejected",
            "kind": "policy_denied",
        },
    ]
    assert list(json.loads(lines[0])) == [
        "event",
        "call_id",
        "time",
        "server",
        "tool",
        "arguments_sha256",
        "arguments_bytes",
    ]
    assert oct(path.stat().st_mode & 0o777) == "0o600"


def test_rfc3339_is_utc() -> None:
    local = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone(timedelta(hours=2)))
    assert rfc3339(local) == "2026-01-02T01:04:05.000Z"


@pytest.mark.parametrize(
    ("result", "kind"),
    [("rejected", None), ("ok", "too_large"), ("finished", None)],
    ids=["rejected without kind", "kind on ok", "unknown result"],
)
def test_outcome_arguments_are_checked(tmp_path: Path, result: str, kind: str | None) -> None:
    with open_journal(tmp_path / "j.jsonl") as j, pytest.raises(ValueError):
        j.outcome("c", "s", "t", result, kind)  # type: ignore[arg-type]


def test_intent_is_fsynced_before_intent_returns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    events: list[str] = []
    real_write, real_fsync = os.write, os.fsync

    def write(fd: int, data: bytes | memoryview) -> int:
        events.append("write")
        return real_write(fd, data)

    def fsync(fd: int) -> None:
        events.append("fsync")
        real_fsync(fd)

    j = open_journal(tmp_path / "j.jsonl")
    monkeypatch.setattr(journal_module.os, "write", write)
    monkeypatch.setattr(journal_module.os, "fsync", fsync)
    j.intent("c", "s", "t", SHA, 1)
    events.append("returned")
    j.close()
    assert events == ["write", "fsync", "returned"]


def test_a_closed_journal_refuses_to_write(tmp_path: Path) -> None:
    j = open_journal(tmp_path / "j.jsonl")
    j.close()
    j.close()
    with pytest.raises(OSError, match="closed"):
        j.intent("c", "s", "t", SHA, 1)


def test_concurrent_writers_never_interleave(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    j = Journal(path, fsync=False)

    def writer(n: int) -> None:
        for i in range(200):
            j.intent(f"{n}-{i}", "server" * 50, "tool", SHA, i)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    j.close()
    records, damaged = read_records(path)
    assert damaged == 0 and len(records) == 800


def test_a_torn_last_line_is_ended_and_skipped(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    with open_journal(path) as j:
        j.intent("c1", "fs", "read", SHA, 1)
    with open(path, "ab") as f:
        f.write(b'{"event":"intent","call_id":"c2","ti')  # a crash in the middle of a write
    with open_journal(path) as j:
        j.outcome("c1", "fs", "read", "ok")
    records, damaged = read_records(path)
    assert damaged == 1
    assert [(r["event"], r["call_id"]) for r in records] == [("intent", "c1"), ("outcome", "c1")]
    assert path.read_bytes().count(b"\n") == 3


def test_a_call_in_flight_when_the_guard_is_killed_stays_an_intent(tmp_path: Path) -> None:
    """A process writes an intent and is killed (SIGKILL) before its outcome: the intent is on disk."""
    path = tmp_path / "j.jsonl"
    script = (
        "import os, signal, sys\n"
        "from pathlib import Path\n"
        "from mcp_guard.calls.journal import Journal\n"
        "j = Journal(Path(sys.argv[1]))\n"
        "j.intent('done', 'fs', 'read', 'a' * 64, 2)\n"
        "j.outcome('done', 'fs', 'read', 'ok')\n"
        "j.intent('in-flight', 'fs', 'write', 'b' * 64, 9)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    proc = subprocess.run([sys.executable, "-c", script, str(path)], timeout=60, check=False)
    assert proc.returncode == -9
    summary = summarize(*read_records(path))
    assert summary.tools[("fs", "write")].unfinished == ["in-flight"]
    assert summary.tools[("fs", "read")].unfinished == []


def test_summary(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    with open_journal(path) as j:
        for i, result in enumerate(["ok", "ok", "is_error", "protocol_error", "upstream_died", "cancelled", "stopped"]):
            j.intent(f"r{i}", "fs", "read", SHA, 1)
            j.outcome(f"r{i}", "fs", "read", result)  # type: ignore[arg-type]
        j.intent("open", "fs", "read", SHA, 1)
        j.outcome("x1", "fs", "write", "rejected", "too_large")
        j.outcome("x2", "fs", "write", "rejected", "too_large")
        j.outcome("x3", "fs", "write", "rejected", "budget_exceeded")
    with open(path, "a", encoding="utf-8") as f:
        f.write("not json\n\n[1]\n")
    records, damaged = read_records(path)
    summary = summarize(records, damaged)
    read, write = summary.tools[("fs", "read")], summary.tools[("fs", "write")]
    assert (read.calls, read.ok, dict(read.errors), read.cancelled, read.unfinished) == (
        8,
        2,
        {"is_error": 1, "protocol_error": 1, "stopped": 1, "upstream_died": 1},
        1,
        ["open"],
    )
    assert (write.calls, dict(write.rejections), write.unfinished) == (3, {"budget_exceeded": 1, "too_large": 2}, [])
    assert summary.damaged == 2
    text = format_summary(summary)
    header = ["server", "tool", "calls", "ok", "errors", "rejected", "cancelled", "unfinished"]
    assert text.splitlines()[0].split() == header
    assert text.splitlines()[1].split()[-2:] == ["1", "1"]  # read: 1 cancelled, 1 unfinished
    assert "is_error 1, protocol_error 1, stopped 1, upstream_died 1" in text  # (stopped: rt37 F1)
    assert "budget_exceeded 1, too_large 2" in text
    assert "1 call(s) without an outcome" in text and "  open  fs/read" in text
    assert "2 damaged line(s) skipped" in text
    data = summary.to_json()
    assert data["tools"][1] == {
        "server": "fs",
        "tool": "write",
        "calls": 3,
        "ok": 0,
        "errors": {},
        "cancelled": 0,
        "rejections": {"budget_exceeded": 1, "too_large": 2},
        "unfinished": [],
    }


def test_empty_summary() -> None:
    assert "(no calls recorded)" in format_summary(summarize([]))


def test_a_journal_path_that_cannot_be_opened_is_named_without_creating_anything(tmp_path: Path) -> None:
    """``check --config`` asks this (red team, stop 33: a journal in a missing folder passed the check)."""
    assert journal_path_problem(tmp_path / "j.jsonl") is None
    (tmp_path / "old.jsonl").write_text("")
    assert journal_path_problem(tmp_path / "old.jsonl") is None
    missing = tmp_path / "nonexistent" / "dir"
    assert (
        journal_path_problem(missing / "j.jsonl")
        == f"the folder {missing} does not exist (the journal's folder is not created)"
    )
    assert not missing.exists()
    (tmp_path / "file").write_text("")
    assert journal_path_problem(tmp_path / "file" / "j.jsonl") == f"{tmp_path / 'file'} is not a folder"
    (tmp_path / "adir").mkdir()
    assert journal_path_problem(tmp_path / "adir") == f"{tmp_path / 'adir'} is not a regular file"
    with pytest.raises(OSError):
        Journal(tmp_path / "adir")  # (what the check foresees)
    if os.geteuid() != 0:  # root writes anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        try:
            assert journal_path_problem(locked / "j.jsonl") == f"the folder {locked} is not writable by this user"
        finally:
            locked.chmod(0o700)


def test_the_text_summary_escapes_what_the_journal_holds(tmp_path: Path) -> None:
    """Red team 34 (noticed with item 4): a tool name from a client or server reached the terminal raw in
    ``mcp-guard journal FILE`` (ESC, newlines): each cell is now escaped, and the columns counted as shown."""
    from mcp_guard.calls.journal import format_summary, read_records, summarize

    path = tmp_path / "j.jsonl"
    intent = {"event": "intent", "call_id": "c1", "time": "2026-12-04T11:59:25.301Z", "server": "s"}
    rows = [{**intent, "tool": "evil\x1b[2J\nname"}, {**intent, "call_id": "c2", "tool": "検索"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    text = format_summary(summarize(*read_records(path)))
    assert "\x1b" not in text and "evil\\x1b[2J\\x0aname" in text
    from mcp_guard.safe_text import display_width

    starts = set()
    for line in text.splitlines()[:3]:  # the header and both rows: the third column starts at one terminal column
        found = re.match(r"(\S+ {2,}\S+ {2,})\S", line)
        assert found is not None, line
        starts.add(display_width(found.group(1)))
    assert len(starts) == 1
