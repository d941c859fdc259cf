"""Operator tools: thin readers and printers around the schema core.

- Which tools can the guard enforce? :func:`report_tools` (``mcp-guard check``) judges tool
  entries: MCP tool objects, or tool definitions in the Arcade preview format; a
  :class:`ToolsReport` holds a :class:`ToolReport` per tool (``supported``, ``unsupported``
  or ``malformed``, with every finding's JSON Pointer). :func:`list_tools` lists a live
  server with the ``mcp`` SDK's client (stdio command or streamable HTTP URL), every page.
- Tool definitions (Arcade preview format): :func:`parse_tool_definition` (precise errors),
  :func:`to_mcp_tool` (an ``inputSchema`` in the subset), :func:`definition_notes`.
- toolcall-verifier documents (``toolcall-verifier-input/v1`` and ``/v2``):
  :func:`verify_document` gives the deterministic verdict on one parsed document,
  :func:`verify_text` on a JSON or JSONL text; the same verdicts as ``mcp-guard verify``.
- Documents: :func:`loads` (JSON, optionally with ``//`` and ``/* */`` comments; duplicate
  keys refused), :class:`DocumentError`, :class:`FieldError`.

Faults raise (``ValueError`` for an unknown profile, :class:`DocumentError` for text that is
not JSON, :class:`ListingError` for a server that cannot be listed); verdicts never do.
The names are imported on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .documents import DocumentError, FieldError, loads, strip_comments
    from .listing import Listing, ListingError, list_tools
    from .tool_definitions import (
        DefinitionNote,
        ToolDefinition,
        definition_notes,
        is_tool_definition,
        parse_tool_definition,
        to_mcp_tool,
    )
    from .tools import ToolReport, ToolsReport, judge_tool, judge_tools, render_table, report_tools, tool_entries
    from .verifier import (
        V1,
        V2,
        Check,
        DocumentV1,
        DocumentV2,
        Verdict,
        VerifierWarning,
        parse_document,
        render_verdicts,
        verify_document,
        verify_text,
    )

_MODULES = {
    "documents": ("DocumentError", "FieldError", "loads", "strip_comments"),
    "listing": ("Listing", "ListingError", "list_tools"),
    "tool_definitions": (
        "DefinitionNote",
        "ToolDefinition",
        "definition_notes",
        "is_tool_definition",
        "parse_tool_definition",
        "to_mcp_tool",
    ),
    "tools": ("ToolReport", "ToolsReport", "judge_tool", "judge_tools", "render_table", "report_tools", "tool_entries"),
    "verifier": (
        "V1",
        "V2",
        "Check",
        "DocumentV1",
        "DocumentV2",
        "Verdict",
        "VerifierWarning",
        "parse_document",
        "render_verdicts",
        "verify_document",
        "verify_text",
    ),
}
_WHERE = {name: module for module, names in _MODULES.items() for name in names}


def __getattr__(name: str) -> Any:
    """Import the public names on first use: ``mcp-guard wrap`` starts without loading the report models."""
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "V1",
    "V2",
    "Check",
    "DefinitionNote",
    "DocumentError",
    "DocumentV1",
    "DocumentV2",
    "FieldError",
    "Listing",
    "ListingError",
    "ToolDefinition",
    "ToolReport",
    "ToolsReport",
    "Verdict",
    "VerifierWarning",
    "definition_notes",
    "is_tool_definition",
    "judge_tool",
    "judge_tools",
    "list_tools",
    "loads",
    "parse_document",
    "parse_tool_definition",
    "render_table",
    "render_verdicts",
    "report_tools",
    "strip_comments",
    "to_mcp_tool",
    "tool_entries",
    "verify_document",
    "verify_text",
]
