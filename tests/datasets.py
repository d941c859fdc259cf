"""Where the tests' third-party data sets live: ``tests/data/`` in the repository (not a test module).

- :data:`JSON_SCHEMA_TEST_SUITE`: the official JSON Schema Test Suite, four dialect folders with their
  ``optional/`` files, its LICENSE (MIT) and README; the commit it was copied from is in its
  PROVENANCE.md.
- :data:`TOOL_CORPUS`: saved ``tools/list`` answers of 32 public MCP servers (each file names its
  ``source``), prose-stripped: every ``description`` and ``title`` is ``"..."``.

Both used to be read from ``../shared/data`` beside the repository, so a user's clone skipped the
conformance and corpus tests; now a clone runs the same suite as CI (issue 25, item 7).
"""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
JSON_SCHEMA_TEST_SUITE = DATA / "json-schema-test-suite"
TOOL_CORPUS = DATA / "mcp-tool-corpus"
