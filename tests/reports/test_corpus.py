"""``mcp-guard check --tools-file`` over every file of the tool corpus (tests/data/mcp-tool-corpus).

Each file is a saved ``tools/list`` of a public MCP server. The per-server counts are pinned
below for every profile (a change in the subset or the classifier shows up here as a diff, on
purpose) and printed as a table (``pytest -s``), with the keywords that block tools. Under
``extended`` at least 99% of the corpus's tools are supported (issue 11, item 7), and the tools it
refuses are pinned with their blocking keyword (:data:`EXTENDED_BLOCKERS`).
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from mcp_guard.cli import main
from tests.datasets import TOOL_CORPUS

CORPUS = TOOL_CORPUS

PROFILES = ("standard", "strict", "extended")

# server: (total, supported, unsupported, malformed) per profile
EXPECTED: dict[str, dict[str, tuple[int, int, int, int]]] = {
    "antv-mcp-server-chart": {"standard": (27, 4, 23, 0), "strict": (27, 0, 27, 0), "extended": (27, 27, 0, 0)},
    "arxiv-mcp-server": {"standard": (19, 11, 8, 0), "strict": (19, 8, 11, 0), "extended": (19, 19, 0, 0)},
    "aws-billing-cost-management-mcp-server": {
        "standard": (47, 4, 43, 0),
        "strict": (47, 4, 43, 0),
        "extended": (47, 47, 0, 0),
    },
    "aws-iam-mcp-server": {"standard": (29, 18, 11, 0), "strict": (29, 0, 29, 0), "extended": (29, 29, 0, 0)},
    "aws-kb-retrieval": {"standard": (1, 1, 0, 0), "strict": (1, 0, 1, 0), "extended": (1, 1, 0, 0)},
    "brave-search-mcp-server": {"standard": (8, 1, 7, 0), "strict": (8, 0, 8, 0), "extended": (8, 8, 0, 0)},
    "chroma-mcp": {"standard": (13, 6, 7, 0), "strict": (13, 0, 13, 0), "extended": (13, 13, 0, 0)},
    "chrome-devtools-mcp": {"standard": (32, 22, 10, 0), "strict": (32, 0, 32, 0), "extended": (32, 32, 0, 0)},
    "circleci-mcp": {"standard": (13, 10, 3, 0), "strict": (13, 0, 13, 0), "extended": (13, 13, 0, 0)},
    "context7-mcp": {"standard": (2, 2, 0, 0), "strict": (2, 0, 2, 0), "extended": (2, 2, 0, 0)},
    "desktop-commander": {"standard": (26, 21, 5, 0), "strict": (26, 0, 26, 0), "extended": (26, 26, 0, 0)},
    "everything": {"standard": (13, 11, 2, 0), "strict": (13, 0, 13, 0), "extended": (13, 13, 0, 0)},
    "fetch": {"standard": (1, 0, 1, 0), "strict": (1, 0, 1, 0), "extended": (1, 1, 0, 0)},
    "firecrawl-mcp": {"standard": (29, 7, 22, 0), "strict": (29, 0, 29, 0), "extended": (29, 29, 0, 0)},
    "github-mcp-server": {"standard": (117, 79, 38, 0), "strict": (117, 72, 45, 0), "extended": (117, 117, 0, 0)},
    "gitlab": {"standard": (9, 9, 0, 0), "strict": (9, 0, 9, 0), "extended": (9, 9, 0, 0)},
    "google-maps": {"standard": (7, 7, 0, 0), "strict": (7, 7, 0, 0), "extended": (7, 7, 0, 0)},
    "ha-mcp": {"standard": (30, 17, 13, 0), "strict": (30, 14, 16, 0), "extended": (30, 30, 0, 0)},
    "kubernetes-mcp-server": {"standard": (46, 36, 10, 0), "strict": (46, 25, 21, 0), "extended": (46, 46, 0, 0)},
    "mcp-grafana": {"standard": (79, 73, 6, 0), "strict": (79, 60, 19, 0), "extended": (79, 79, 0, 0)},
    "mcp-obsidian": {"standard": (15, 6, 9, 0), "strict": (15, 4, 11, 0), "extended": (15, 15, 0, 0)},
    "mcp-server-motherduck": {"standard": (4, 2, 2, 0), "strict": (4, 2, 2, 0), "extended": (4, 4, 0, 0)},
    "memory": {"standard": (9, 9, 0, 0), "strict": (9, 0, 9, 0), "extended": (9, 9, 0, 0)},
    "mongodb-mcp-server": {"standard": (27, 14, 13, 0), "strict": (27, 0, 27, 0), "extended": (27, 27, 0, 0)},
    "office-word-mcp-server": {"standard": (54, 54, 0, 0), "strict": (54, 20, 34, 0), "extended": (54, 54, 0, 0)},
    "playwright-mcp": {"standard": (25, 22, 3, 0), "strict": (25, 0, 25, 0), "extended": (25, 25, 0, 0)},
    "redis": {"standard": (4, 4, 0, 0), "strict": (4, 4, 0, 0), "extended": (4, 4, 0, 0)},
    "servicenow-mcp": {"standard": (32, 32, 0, 0), "strict": (32, 5, 27, 0), "extended": (32, 32, 0, 0)},
    "supabase-mcp": {"standard": (31, 30, 1, 0), "strict": (31, 0, 31, 0), "extended": (31, 31, 0, 0)},
    "tavily-mcp": {"standard": (5, 4, 1, 0), "strict": (5, 0, 5, 0), "extended": (5, 5, 0, 0)},
    "wikipedia-mcp": {"standard": (22, 22, 0, 0), "strict": (22, 12, 10, 0), "extended": (22, 22, 0, 0)},
    "zereight-mcp-gitlab": {"standard": (118, 104, 14, 0), "strict": (118, 102, 16, 0), "extended": (118, 118, 0, 0)},
}


EXTENDED_BLOCKERS: dict[tuple[str, str], set[str]] = {}
"""(server, tool) → the keywords of its findings, for every corpus tool ``extended`` does not support.
Empty: all 894 tools of the 32 servers are supported (read by the contract, the corpus uses no keyword
outside the profile: no ``discriminator``/``nullable``/``x-`` keys, no remote refs; ``format: path`` is
an annotation, E4)."""

MIN_EXTENDED_SHARE = 0.99


def test_check_over_the_corpus(capsys: pytest.CaptureFixture[str]) -> None:
    files = sorted(CORPUS.glob("*.json"))
    assert {f.stem for f in files} == set(EXPECTED), "the corpus changed: update EXPECTED"
    got: dict[str, dict[str, tuple[int, int, int, int]]] = {}
    blockers: dict[str, dict[str, Counter[str]]] = {}
    refused: dict[tuple[str, str], set[str]] = {}
    for path in files:
        listed = json.loads(path.read_text(encoding="utf-8"))["tools"]
        got[path.stem] = {}
        blockers[path.stem] = {}
        for profile in PROFILES:
            status = main(["check", "--json", "--profile", profile, "--fail-on", "never", "--tools-file", str(path)])
            report = json.loads(capsys.readouterr().out)
            assert status == 0
            summary = report["summary"]
            got[path.stem][profile] = (
                summary["total"],
                summary["supported"],
                summary["unsupported"],
                summary["malformed"],
            )
            assert [t["name"] for t in report["tools"]] == [t["name"] for t in listed]
            for tool in report["tools"]:
                if profile == "extended":  # an annotation-only format is a note on a supported tool (E4)
                    assert tool["supported"] == (tool["issues"] == [])
                    if not tool["supported"]:
                        refused[(path.stem, tool["name"])] = {issue["keyword"] for issue in tool["issues"]}
                else:
                    assert tool["supported"] == (tool["issues"] == [] and tool["notes"] == [])
            blockers[path.stem][profile] = Counter(
                issue["keyword"] for tool in report["tools"] for issue in tool["issues"]
            )
            # --fail-on unsupported exits 1 exactly when a tool is not supported
            fails = main(["check", "--profile", profile, "--tools-file", str(path)])
            capsys.readouterr()
            assert fails == (1 if summary["supported"] < summary["total"] else 0)

    width = max(len(name) for name in got)
    head = "".join(f"   {p + ' sup/uns/mal':>22}" for p in PROFILES)
    lines = [f"{'server':<{width}} {'tools':>5}{head}   blockers (standard)"]
    for name, profiles in got.items():
        cells = "".join(f"   {f'{c[1]}/{c[2]}/{c[3]}':>22}" for c in (profiles[p] for p in PROFILES))
        top = ", ".join(f"{k} {n}" for k, n in blockers[name]["standard"].most_common(4))
        lines.append(f"{name:<{width}} {profiles['standard'][0]:>5}{cells}   {top}")
    totals = {p: [sum(c[p][i] for c in got.values()) for i in range(4)] for p in PROFILES}
    cells = "".join(f"   {f'{t[1]}/{t[2]}/{t[3]}':>22}" for t in totals.values())
    lines.append(f"{'total':<{width}} {totals['standard'][0]:>5}{cells}")
    lines += [f"extended refuses {server}/{tool}: {sorted(keywords)}" for (server, tool), keywords in refused.items()]
    with capsys.disabled():
        print("\n" + "\n".join(lines))
    assert got == EXPECTED
    assert refused == EXTENDED_BLOCKERS
    total, supported = totals["extended"][0], totals["extended"][1]
    assert supported >= MIN_EXTENDED_SHARE * total, f"extended supports {supported} of {total} corpus tools"


def test_extended_unknown_formats_are_noted(capsys: pytest.CaptureFixture[str]) -> None:
    """E4: ``format: path`` (mcp-obsidian) constrains nothing, and the report says so in the tool's notes."""
    path = CORPUS / "mcp-obsidian.json"
    listed = json.loads(path.read_text(encoding="utf-8"))["tools"]
    with_path = {t["name"] for t in listed if '"format": "path"' in json.dumps(t["inputSchema"])}
    assert with_path
    main(["check", "--json", "--profile", "extended", "--fail-on", "never", "--tools-file", str(path)])
    report = json.loads(capsys.readouterr().out)
    noted = {t["name"] for t in report["tools"] if "path" in json.dumps(t["notes"])}
    assert noted == with_path
