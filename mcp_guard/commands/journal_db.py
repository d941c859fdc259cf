"""``mcp-guard journal`` on a database: ``journal init`` (the migration steps) and the summary from PostgreSQL.

- ``mcp-guard journal init --config FILE``: create the journal's tables in the database that
  ``guard.journal`` names (``{"postgres": URI}`` or ``{"postgresEnv": VAR}``), or upgrade them to
  this guard's schema version (``state.pg_schema.STEPS``); idempotent, so a deployment may run it
  before every start (docs/scale-out.md).
- ``mcp-guard journal --config FILE``: the summary of ``guard.journal``, a file or a database;
  ``mcp-guard journal postgresql://...``: the summary of that database. The table and its JSON are
  those of the file form (:func:`mcp_guard.calls.journal.format_summary`); the database's rows add
  which replica left each unfinished call.

Exit status: 0 done; 1 the database cannot be reached or used; 2 usage or configuration errors.
Messages name the database by its redacted URL, never with credentials.
"""

from __future__ import annotations

import json
import os
import sys
from typing import TextIO

__all__ = ["run_journal_database"]


def _fail(message: str, status: int, as_json: bool, out: TextIO) -> int:
    from ..safe_text import escape_json

    print(f"mcp-guard journal: error: {message}", file=sys.stderr)
    if as_json:
        print(escape_json(json.dumps({"error": message}, ensure_ascii=False)), file=out)
    return status


def run_journal_database(
    target: str | None, *, config_path: str | None, as_json: bool = False, out: TextIO | None = None
) -> int:
    """``mcp-guard journal [init | URI] [--config FILE]`` (see the module docstring).

    Args:
        target: ``None`` (the summary of ``--config``'s journal), ``"init"``, or a ``postgresql://`` URI.
        config_path: ``--config``.
        as_json: print the summary as JSON.
        out: where the summary goes (default stdout).

    Returns:
        0, 1 or 2 as the module docstring says.
    """
    from ..calls.journal import format_summary, summarize
    from ..config import ConfigError, JournalDatabase, load_config
    from ..safe_text import escape_json
    from ..state.urls import UrlError, resolve_url

    out = out if out is not None else sys.stdout
    url: str | None = None
    if target is not None and target != "init":
        url = target
    elif config_path is None:
        what = "journal init" if target == "init" else "journal"
        return _fail(f"`{what}` needs --config FILE (or a journal FILE or postgresql:// URI)", 2, as_json, out)
    else:
        try:
            config = load_config(config_path)
        except ConfigError as exc:
            return _fail(str(exc), 2, as_json, out)
        journal = config.guard.journal
        if isinstance(journal, str) and target != "init":
            from .gateway import run_journal

            return run_journal(str(config.resolve(journal)), as_json=as_json, out=out)
        if not isinstance(journal, JournalDatabase):
            return _fail(f"{config_path}: guard.journal names no database (postgres)", 2, as_json, out)
        try:
            from ..state.pg_schema import POSTGRES_SCHEMES

            url = resolve_url(
                journal.postgres, journal.postgres_env, os.environ, where="guard.journal", schemes=POSTGRES_SCHEMES
            )
        except UrlError as exc:
            return _fail(str(exc), 2, as_json, out)
    try:
        from ..state.pg_schema import JournalDatabaseError, init_schema, read_database_records
    except ImportError:  # pragma: no cover - the extra is missing
        return _fail(
            "a journal in PostgreSQL needs the postgres extra: pip install 'mcp-guard[postgres]'", 2, as_json, out
        )
    try:
        if target == "init":
            from ..state.pg_schema import SCHEMA_VERSION
            from ..state.urls import redacted

            before = init_schema(url)
            if before is None:
                done = f"created the journal tables (schema version {SCHEMA_VERSION})"
            elif before < SCHEMA_VERSION:
                done = f"upgraded the journal tables from schema version {before} to {SCHEMA_VERSION}"
            else:
                done = f"the journal tables are there (schema version {before})"
            print(f"{redacted(url)}: {done}", file=out)
            return 0
        records = read_database_records(url)
    except ImportError:
        return _fail(
            "a journal in PostgreSQL needs the postgres extra: pip install 'mcp-guard[postgres]'", 2, as_json, out
        )
    except JournalDatabaseError as exc:
        return _fail(str(exc), 1, as_json, out)
    summary = summarize(records)
    if as_json:
        print(escape_json(json.dumps(summary.to_json(), indent=2, ensure_ascii=False)), file=out)
        return 0
    print(format_summary(summary), file=out)
    replicas: dict[str, int] = {}
    open_ids = {c for s in summary.tools.values() for c in s.unfinished}
    for record in records:
        if record["event"] == "intent" and record["call_id"] in open_ids:
            replicas[record["replica"]] = replicas.get(record["replica"], 0) + 1
    if replicas:
        print("", file=out)
        print("unfinished calls by replica: " + ", ".join(f"{r} {n}" for r, n in sorted(replicas.items())), file=out)
    return 0
