"""``mcp-guard check --tools-file`` over every file of the shared tool corpus (../shared/data/mcp-tool-corpus).

Each file is a saved ``tools/list`` of a public MCP server. The per-server counts are pinned
below (a change in the subset or the classifier shows up here as a diff, on purpose) and
printed as a table (``pytest -s``). Skips when ../shared is absent.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from mcp_guard.cli import main

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "mcp-tool-corpus"

needs_corpus = pytest.mark.skipif(
    not CORPUS.is_dir(), reason=f"the shared tool corpus is absent ({CORPUS}); it sits beside the repository"
)

# server: (total, supported, unsupported, malformed) per profile
EXPECTED: dict[str, dict[str, tuple[int, int, int, int]]] = {
    "antv-mcp-server-chart": {"standard": (27, 4, 23, 0), "strict": (27, 0, 27, 0)},
    "arxiv-mcp-server": {"standard": (19, 11, 8, 0), "strict": (19, 8, 11, 0)},
    "aws-billing-cost-management-mcp-server": {"standard": (47, 4, 43, 0), "strict": (47, 4, 43, 0)},
    "aws-iam-mcp-server": {"standard": (29, 18, 11, 0), "strict": (29, 0, 29, 0)},
    "aws-kb-retrieval": {"standard": (1, 1, 0, 0), "strict": (1, 0, 1, 0)},
    "brave-search-mcp-server": {"standard": (8, 1, 7, 0), "strict": (8, 0, 8, 0)},
    "chroma-mcp": {"standard": (13, 6, 7, 0), "strict": (13, 0, 13, 0)},
    "chrome-devtools-mcp": {"standard": (32, 22, 10, 0), "strict": (32, 0, 32, 0)},
    "circleci-mcp": {"standard": (13, 10, 3, 0), "strict": (13, 0, 13, 0)},
    "context7-mcp": {"standard": (2, 2, 0, 0), "strict": (2, 0, 2, 0)},
    "desktop-commander": {"standard": (26, 21, 5, 0), "strict": (26, 0, 26, 0)},
    "everything": {"standard": (13, 11, 2, 0), "strict": (13, 0, 13, 0)},
    "fetch": {"standard": (1, 0, 1, 0), "strict": (1, 0, 1, 0)},
    "firecrawl-mcp": {"standard": (29, 7, 22, 0), "strict": (29, 0, 29, 0)},
    "github-mcp-server": {"standard": (117, 79, 38, 0), "strict": (117, 72, 45, 0)},
    "gitlab": {"standard": (9, 9, 0, 0), "strict": (9, 0, 9, 0)},
    "google-maps": {"standard": (7, 7, 0, 0), "strict": (7, 7, 0, 0)},
    "ha-mcp": {"standard": (30, 17, 13, 0), "strict": (30, 14, 16, 0)},
    "kubernetes-mcp-server": {"standard": (46, 36, 10, 0), "strict": (46, 25, 21, 0)},
    "mcp-grafana": {"standard": (79, 73, 6, 0), "strict": (79, 60, 19, 0)},
    "mcp-obsidian": {"standard": (15, 6, 9, 0), "strict": (15, 4, 11, 0)},
    "mcp-server-motherduck": {"standard": (4, 2, 2, 0), "strict": (4, 2, 2, 0)},
    "memory": {"standard": (9, 9, 0, 0), "strict": (9, 0, 9, 0)},
    "mongodb-mcp-server": {"standard": (27, 14, 13, 0), "strict": (27, 0, 27, 0)},
    "office-word-mcp-server": {"standard": (54, 54, 0, 0), "strict": (54, 20, 34, 0)},
    "playwright-mcp": {"standard": (25, 22, 3, 0), "strict": (25, 0, 25, 0)},
    "redis": {"standard": (4, 4, 0, 0), "strict": (4, 4, 0, 0)},
    "servicenow-mcp": {"standard": (32, 32, 0, 0), "strict": (32, 5, 27, 0)},
    "supabase-mcp": {"standard": (31, 30, 1, 0), "strict": (31, 0, 31, 0)},
    "tavily-mcp": {"standard": (5, 4, 1, 0), "strict": (5, 0, 5, 0)},
    "wikipedia-mcp": {"standard": (22, 22, 0, 0), "strict": (22, 12, 10, 0)},
    "zereight-mcp-gitlab": {"standard": (118, 104, 14, 0), "strict": (118, 102, 16, 0)},
}


@needs_corpus
def test_check_over_the_corpus(capsys: pytest.CaptureFixture[str]) -> None:
    files = sorted(CORPUS.glob("*.json"))
    assert {f.stem for f in files} == set(EXPECTED), "the corpus changed: update EXPECTED"
    got: dict[str, dict[str, tuple[int, int, int, int]]] = {}
    blockers: dict[str, Counter[str]] = {}
    for path in files:
        listed = json.loads(path.read_text(encoding="utf-8"))["tools"]
        got[path.stem] = {}
        for profile in ("standard", "strict"):
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
                assert tool["supported"] == (tool["issues"] == [] and tool["notes"] == [])
            if profile == "standard":
                blockers[path.stem] = Counter(issue["keyword"] for tool in report["tools"] for issue in tool["issues"])
            # --fail-on unsupported exits 1 exactly when a tool is not supported
            fails = main(["check", "--profile", profile, "--tools-file", str(path)])
            capsys.readouterr()
            assert fails == (1 if summary["supported"] < summary["total"] else 0)

    width = max(len(name) for name in got)
    lines = [f"{'server':<{width}} {'tools':>5}  standard sup/uns/mal   strict sup/uns/mal   blockers (standard)"]
    for name, profiles in got.items():
        s, t = profiles["standard"], profiles["strict"]
        top = ", ".join(f"{k} {n}" for k, n in blockers[name].most_common(4))
        lines.append(
            f"{name:<{width}} {s[0]:>5}  {s[1]:>7}/{s[2]:>3}/{s[3]:>3}   {t[1]:>7}/{t[2]:>3}/{t[3]:>3}   {top}"
        )
    totals = [sum(p[profile][i] for p in got.values()) for profile in ("standard", "strict") for i in range(4)]
    lines.append(
        f"{'total':<{width}} {totals[0]:>5}  {totals[1]:>7}/{totals[2]:>3}/{totals[3]:>3}   "
        f"{totals[5]:>7}/{totals[6]:>3}/{totals[7]:>3}"
    )
    with capsys.disabled():
        print("\n" + "\n".join(lines))
    assert got == EXPECTED
