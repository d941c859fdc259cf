"""The metrics registry (``mcp_guard.calls.metrics``): exact lines, bounded labels, escaping, lazy import."""

from __future__ import annotations

import subprocess
import sys

from mcp_guard.calls.metrics import OTHER_TOOL, Metrics


def lines(metrics: Metrics, prefix: str) -> list[str]:
    return [line for line in metrics.render().decode().splitlines() if line.startswith(prefix)]


def test_each_guard_has_its_own_registry() -> None:
    one, two = Metrics(), Metrics()
    one.call_ended("gw", "read", "ok", None, 0.01)
    one.call_ended("gw", "read", "rejected", "validation", 0.0)
    one.upstream_restarted("gw")
    assert lines(one, "mcp_guard_calls_total") == [
        'mcp_guard_calls_total{outcome="ok",server="gw",tool="read"} 1.0',
        'mcp_guard_calls_total{outcome="rejected",server="gw",tool="read"} 1.0',
    ]
    assert lines(one, "mcp_guard_refusals_total") == ['mcp_guard_refusals_total{kind="validation",server="gw"} 1.0']
    assert lines(one, "mcp_guard_upstream_restarts_total") == ['mcp_guard_upstream_restarts_total{server="gw"} 1.0']
    assert lines(two, "mcp_guard_calls_total") == []


def test_new_outcomes_flow_through() -> None:
    metrics = Metrics()
    metrics.call_ended("", "t", "output_invalid", None, None)
    assert lines(metrics, "mcp_guard_calls_total") == [
        'mcp_guard_calls_total{outcome="output_invalid",server="",tool="t"} 1.0'
    ]


def test_tool_labels_are_capped() -> None:
    metrics = Metrics(max_tools=2)
    for name in ("a", "b", "c", "d", "a", "x" * 500):
        metrics.call_ended("s", name, "ok", None, None)
    assert lines(metrics, "mcp_guard_calls_total") == [
        'mcp_guard_calls_total{outcome="ok",server="s",tool="a"} 2.0',
        'mcp_guard_calls_total{outcome="ok",server="s",tool="b"} 1.0',
        f'mcp_guard_calls_total{{outcome="ok",server="s",tool="{OTHER_TOOL}"}} 3.0',
    ]


def test_kept_children_count_each_combination_on_its_own() -> None:
    """call_ended keeps its labelled children: repeated and mixed combinations still count apart."""
    metrics = Metrics()
    for _ in range(3):
        metrics.call_ended("s", "t", "rejected", "validation", 0.001)
        metrics.call_ended("s", "t", "rejected", "unsupported_capability", None)
        metrics.call_ended("s", "t", "ok", None, 0.2)
    assert lines(metrics, "mcp_guard_calls_total") == [
        'mcp_guard_calls_total{outcome="rejected",server="s",tool="t"} 6.0',
        'mcp_guard_calls_total{outcome="ok",server="s",tool="t"} 3.0',
    ]
    assert lines(metrics, "mcp_guard_refusals_total") == [
        'mcp_guard_refusals_total{kind="validation",server="s"} 3.0',
        'mcp_guard_refusals_total{kind="unsupported_capability",server="s"} 3.0',
    ]
    assert 'mcp_guard_call_duration_seconds_count{outcome="rejected",server="s"} 3.0' in lines(
        metrics, "mcp_guard_call_duration_seconds_count"
    )
    assert 'mcp_guard_call_duration_seconds_count{outcome="ok",server="s"} 3.0' in lines(
        metrics, "mcp_guard_call_duration_seconds_count"
    )


def test_label_values_are_escaped_by_the_exposition() -> None:
    metrics = Metrics()
    metrics.call_ended("s", 'evil"}\nmcp_guard_fake 1\\', "ok", None, None)
    text = metrics.render().decode()
    assert "\nmcp_guard_fake 1" not in text
    # (the newline is escaped as log lines escape it, \x0a; the exposition then doubles each backslash)
    assert 'tool="evil\\"}\\\\x0amcp_guard_fake 1\\\\"' in text


def test_label_values_reach_a_terminal_escaped() -> None:
    """A tool or server name holding ESC or a bidi override is escaped as log lines are (trial 3 T4)."""
    metrics = Metrics()
    metrics.call_ended("s\u202e", "ec\u001b[2Jho", "ok", None, None)
    text = metrics.render().decode()
    assert "\u001b" not in text and "\u202e" not in text
    assert 'server="s\\\\u202e",tool="ec\\\\x1b[2Jho"' in text


def test_the_stdio_paths_do_not_import_prometheus_client() -> None:
    code = (
        "import sys, mcp_guard.cli, mcp_guard.fronts.stdio, mcp_guard.fronts.serve, mcp_guard.sessions.relay;"
        "import mcp_guard.commands.gateway; print('prometheus_client' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
