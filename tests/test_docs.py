"""The README stays short, and the README and docs/ hold no dead link and no made-up command.

- README.md has at most 160 lines: the reference belongs in docs/ (issue 13, item 2).
- Every relative link of README.md and docs/*.md names a file or folder of the repository,
  and every ``#anchor`` names a heading of its page, slugged as GitHub slugs headings.
- Every ``mcp-guard SUBCOMMAND`` written as code (a fenced shell block, a console block, an
  inline code span) is a subcommand of the CLI: ``mcp-guard SUBCOMMAND --help`` exits 0.
- The refusals shown are the guard's own: the README's excerpt of ``mcp-guard demo`` is in the
  demo's output, and each refusal result shown as JSON is what the call pipeline builds.
- The error texts the pages quote are the guard's own, and the pages that must say them do (red team 37
  F5: the refusal of a duplicate request id was documented nowhere).
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import anyio
import pytest

from mcp_guard import compile
from mcp_guard.calls.refusals import schema_verdict
from mcp_guard.cli import main

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

FENCE = re.compile(r"^(```+|~~~+)(.*)$")
LINK = re.compile(r"(?<!!)\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
COMMAND = re.compile(r"^(?:\$\s+)?(?:\S*/)?mcp-guard\s+([a-z][a-z-]*)\b")
SHELL_LANGUAGES = {"sh", "shell", "bash", "console", "sh-session"}


def split_page(text: str) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """(prose lines, [(fence language, code lines), ...]) of a Markdown page."""
    prose: list[str] = []
    blocks: list[tuple[str, list[str]]] = []
    fence: str | None = None
    for line in text.splitlines():
        opened = FENCE.match(line.strip())
        if fence is None and opened:
            fence = opened.group(1)
            blocks.append((opened.group(2).strip().lower(), []))
        elif fence is not None and line.strip().startswith(fence[0] * len(fence)) and not line.strip()[len(fence) :]:
            fence = None
        elif fence is not None:
            blocks[-1][1].append(line)
        else:
            prose.append(line)
    return prose, blocks


def code_blocks(page: Path, language: str) -> list[str]:
    """The bodies of the page's fenced blocks in ``language`` (``""``: no language given)."""
    _, blocks = split_page(page.read_text(encoding="utf-8"))
    return ["\n".join(lines) for lang, lines in blocks if lang == language]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: its text lowercased, punctuation dropped, spaces to ``-``."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = text.replace("`", "").strip().lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every anchor of a page's headings, duplicates numbered ``-1``, ``-2`` as GitHub does."""
    prose, _ = split_page(page.read_text(encoding="utf-8"))
    found: set[str] = set()
    seen: dict[str, int] = {}
    for line in prose:
        match = HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(page: Path) -> list[str]:
    """The targets of the page's Markdown links, outside code blocks and code spans."""
    prose, _ = split_page(page.read_text(encoding="utf-8"))
    text = CODE_SPAN.sub("", "\n".join(prose))
    return LINK.findall(text)


def commands(page: Path) -> set[str]:
    """The subcommands named as ``mcp-guard SUBCOMMAND`` in the page's shell blocks and code spans."""
    prose, blocks = split_page(page.read_text(encoding="utf-8"))
    found: set[str] = set()
    for language, lines in blocks:
        if language in SHELL_LANGUAGES:
            found.update(m.group(1) for line in lines if (m := COMMAND.match(line.strip())))
    for line in prose:
        for _, span in CODE_SPAN.findall(line):
            if m := COMMAND.match(span.strip()):
                found.add(m.group(1))
    return found


def test_the_readme_is_short() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 160, f"README.md has {len(lines)} lines; move reference material to docs/"


def test_the_readme_keeps_its_two_commands() -> None:
    # A fresh machine runs these two lines as they are (.ci/run runs the second's pip and pytest).
    blocks = code_blocks(ROOT / "README.md", "sh")
    assert "python3 -m venv .venv && .venv/bin/pip install . && .venv/bin/mcp-guard demo" in blocks
    assert "python3 -m venv .venv && .venv/bin/pip install -e '.[test]' && .venv/bin/python -m pytest -n auto" in blocks
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "pip install --quiet -e '.[test]' && python -m pytest -n auto " in ci


@pytest.mark.parametrize("page", PAGES[1:], ids=lambda p: p.relative_to(ROOT).as_posix())
def test_each_docs_page_opens_with_an_example(page: Path) -> None:
    # An example before the first section: the reader sees the thing work before the reference.
    text = page.read_text(encoding="utf-8")
    first_section = text.find("\n## ")
    opening = text if first_section < 0 else text[:first_section]
    assert re.search(r"^```", opening, flags=re.M), f"{page.name}: no example before its first section"


def test_slugs_follow_github() -> None:
    assert slug("`schema`: one schema, and arguments against it") == "schema-one-schema-and-arguments-against-it"
    assert slug("Limits (the guard's work budget)") == "limits-the-guards-work-budget"
    assert slug("The 2026-07-28 era") == "the-2026-07-28-era"
    assert slug("Which tools? `mcp-guard check`") == "which-tools-mcp-guard-check"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_links_resolve(page: Path) -> None:
    dead = []
    for target in links(page):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):
            continue  # https:, mailto: ...
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            dead.append(f"{target}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            dead.append(f"{target}: no heading with anchor #{anchor} in {file.name}")
    assert not dead, f"{page.name}: " + "; ".join(dead)


def test_links_are_found() -> None:
    # The link reader itself must see links, or the test above could pass on anything.
    readme = links(ROOT / "README.md")
    assert "docs/install.md" in readme and "docs/wrap.md" in readme


def test_every_named_subcommand_exists(capsys: pytest.CaptureFixture[str]) -> None:
    named: dict[str, set[str]] = {}
    for page in PAGES:
        for command in commands(page):
            named.setdefault(command, set()).add(page.name)
    assert {"wrap", "check", "schema", "serve", "install", "demo"} <= set(named)
    unknown = []
    for command, pages in sorted(named.items()):
        with pytest.raises(SystemExit) as exited:
            main([command, "--help"])
        capsys.readouterr()
        if exited.value.code != 0:
            unknown.append(f"{command} (in {', '.join(sorted(pages))})")
    assert not unknown, "not a subcommand of mcp-guard: " + "; ".join(unknown)


def test_a_made_up_subcommand_is_caught(capsys: pytest.CaptureFixture[str]) -> None:
    # The check above relies on argparse exiting non-zero for an unknown subcommand.
    with pytest.raises(SystemExit) as exited:
        main(["frobnicate", "--help"])
    capsys.readouterr()
    assert exited.value.code != 0


# (page, the arguments of the call to Sigma's `read` whose refusal the page shows)
REFUSALS = [("README.md", {"path": "README.md", "offset": 0}), ("docs/protocol.md", {"offset": 0})]


@pytest.mark.parametrize(("page", "arguments"), REFUSALS)
def test_refusals_shown_are_the_guards(page: str, arguments: dict[str, object]) -> None:
    shown = [json.loads(b) for b in code_blocks(ROOT / page, "json") if "mcp-guard/rejection" in b]
    assert len(shown) == 1, page
    tool = json.loads((ROOT / "fixtures" / "sigma" / "read.json").read_text(encoding="utf-8"))
    verdict = schema_verdict("read", compile(tool["inputSchema"]), arguments, modern=False)
    assert verdict.result == shown[0]


@pytest.mark.anyio
async def test_the_readme_demo_excerpt_is_the_demos_output() -> None:
    excerpt = [b for b in code_blocks(ROOT / "README.md", "") if "refused (validation)" in b]
    assert len(excerpt) == 1
    with anyio.fail_after(120):
        # 100 columns: the demo's width when it has no terminal, as when the excerpt was copied.
        env = {**os.environ, "COLUMNS": "100"}
        done = await anyio.run_process([sys.executable, "-m", "mcp_guard", "demo"], check=False, env=env)
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    out = done.stdout.decode().splitlines()
    missing = [line for line in excerpt[0].splitlines() if line not in out]
    assert not missing, missing


# (page, a fragment of a guard's error text it quotes, the text it is taken from)
QUOTED = [
    ("docs/wrap.md", "a request with this id is still in flight", "DUPLICATE_ID"),
    ("docs/protocol.md", "a request with this id is still in flight", "DUPLICATE_ID"),
    ("docs/wrap.md", "the guard was stopped (SIGTERM) before the upstream server answered", "stopped"),
    ("docs/wrap.md", "the upstream's answer is not a JSON-RPC response (", "wrong answer"),
    ("docs/wrap.md", "the guard was stopped (SIGTERM) while it held the request; no server got it", "held"),
    ("docs/wrap.md", "Invalid Request: this session has sent initialize already", "ALREADY_INITIALIZED"),
    ("docs/protocol.md", "this session has sent initialize already", "ALREADY_INITIALIZED"),
    ("docs/gateway.md", "this session has sent initialize already", "ALREADY_INITIALIZED"),
    ("docs/http-front.md", "this session has sent initialize already", "ALREADY_INITIALIZED"),
]


@pytest.mark.parametrize(("page", "fragment", "source"), QUOTED)
def test_the_error_texts_quoted_are_the_guards(page: str, fragment: str, source: str) -> None:
    from mcp_guard.wire.messages import ALREADY_INITIALIZED, DUPLICATE_ID, not_a_response_text, stopped_text

    texts = {
        "ALREADY_INITIALIZED": ALREADY_INITIALIZED,
        "DUPLICATE_ID": DUPLICATE_ID,
        "stopped": stopped_text("SIGTERM"),
        "held": stopped_text("SIGTERM", forwarded=False),
        "wrong answer": not_a_response_text("it has neither a result nor an error"),
    }
    assert fragment in texts[source]
    prose = " ".join(" ".join(split_page((ROOT / page).read_text(encoding="utf-8"))[0]).split())
    assert fragment in prose, f"{page} does not say `{fragment}`"
