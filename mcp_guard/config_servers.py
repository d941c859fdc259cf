"""A server entry of the configuration file (``mcpServers.NAME``): its kind, its keys, its ``${VAR}``.

Shapes (the ``mcpServers`` format clients already use; :mod:`mcp_guard.config` reads the file)::

    "NAME": {"command": "...", "args": [...], "env": {...}, "cwd": "..."},   // stdio: StdioServer
    "NAME": {"url": "https://...", "headers": {...}},                        // streamable HTTP: HttpServer
    "NAME": {..., "disabled": true}                                          // skipped

Rules (:func:`server_entry`):

- A server entry is stdio (``command``) or streamable HTTP (``url``), never both (the error says
  which to remove; Gemini CLI's ``httpUrl`` and Windsurf's ``serverUrl`` count as a URL). ``type`` may
  say which (``stdio``; ``http`` or ``streamable-http``); ``sse`` (the deprecated HTTP+SSE
  transport) is refused. ``disabled: true`` skips the server. Other keys that clients put
  there (``autoApprove``, ``alwaysAllow``, ``timeout``, ``envFile``, ...) are ignored with a
  warning in the log, one per key and server.
- ``${VAR}``, ``${VAR:-default}`` and VS Code's ``${env:VAR}`` are replaced from the environment
  in the strings of ``command``, ``args``, ``cwd``, ``url``, and the values of ``env`` and
  ``headers`` (the fields Claude Code expands, and ``cwd``: :data:`EXPANDED_KEYS`); every variable
  that is not set (and has no default) is an error naming it and the field, all of them at once
  (``config_text.expand_entry_value``). VS Code's own ``${workspaceFolder}`` (and its other editor
  variables) is an error: the guard, not the editor, starts the server. ``$${`` writes a literal
  ``${``. A disabled server's are not expanded.
- Server names are non-empty and hold no ``/`` (lock file keys are ``server/tool``).

Every error names the key as a JSON path (``mcpServers.time.env.TOKEN``) and what is wrong in the
guard's words (:mod:`.config_messages`); it never holds a configured value. :mod:`mcp_guard.config`
re-exports :class:`StdioServer` and :class:`HttpServer`.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .config_messages import did_you_mean, pydantic_errors
from .config_text import expand_entry_value, json_path

__all__ = [
    "EXPANDED_KEYS",
    "HTTP_TYPES",
    "KNOWN_ENTRY_KEYS",
    "STDIO_TYPES",
    "URL_ALIASES",
    "HttpServer",
    "ServerConfig",
    "StdioServer",
    "server_entry",
]

KNOWN_ENTRY_KEYS: Final = frozenset({"command", "args", "env", "cwd", "url", "headers", "type", "disabled"})
URL_ALIASES: Final = {"httpUrl": "Gemini CLI's key", "serverUrl": "Windsurf's key"}
"""Other clients' keys for a streamable HTTP server's URL: here the key is ``url``."""
EXPANDED_KEYS: Final = ("command", "args", "cwd", "url", "env", "headers")
"""The keys whose strings have their ``${VAR}`` expanded: the five Claude Code expands, and ``cwd``."""
STDIO_TYPES: Final = frozenset({"stdio"})
HTTP_TYPES: Final = frozenset({"http", "streamable-http", "streamableHttp"})


class StdioServer(BaseModel):
    """An upstream started as a process and spoken to over stdin/stdout.

    ``env`` is added to the guard's own environment for the process (values expanded);
    ``cwd`` is its working folder (default: the guard's).
    """

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    name: str
    command: Annotated[str, Field(min_length=1)]
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    disabled: bool = False

    @property
    def transport(self) -> Literal["stdio"]:
        """``"stdio"``."""
        return "stdio"


class HttpServer(BaseModel):
    """An upstream spoken to over streamable HTTP at ``url``, with extra request ``headers``."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    name: str
    url: str
    headers: dict[str, str] = Field(default_factory=dict)
    disabled: bool = False

    @field_validator("url")
    @classmethod
    def _check_url(cls, value: str) -> str:
        if not re.match(r"https?://[^/\s]+", value):
            raise ValueError("must be an http:// or https:// URL")
        return value

    @property
    def transport(self) -> Literal["http"]:
        """``"http"``."""
        return "http"


ServerConfig = StdioServer | HttpServer


def _both_kinds(urls: list[str], kind: Any) -> str:
    """The error of an entry with ``command`` and a URL key (``url``, or another client's, ``urls``):
    which key to remove, by ``type`` when it says, else for each kind."""
    named = " and ".join(
        f"`{u}` ({URL_ALIASES[u]} for a streamable HTTP server's URL)" if u in URL_ALIASES else f"`{u}`" for u in urls
    )
    listed = " and ".join(f"`{u}`" for u in urls)
    head = f"has both `command` (a stdio server) and {named}" + (
        "" if urls != ["url"] else " (a streamable HTTP server)"
    )
    if kind in STDIO_TYPES:
        return f"{head}: `type` says stdio, so remove {listed}"
    if kind in HTTP_TYPES:
        return f"{head}: `type` says {kind}, so remove `command`" + (
            " (and name the URL's key `url`)" if "url" not in urls else ""
        )
    return f"{head}: remove {listed} for a stdio server, or `command` for an HTTP one"


def server_entry(
    name: str, entry: Any, key: str, environ: Mapping[str, str], warnings: list[str]
) -> tuple[StdioServer | HttpServer | None, list[str]]:
    """One server entry: the server (``None`` when it has errors) and every error found in it.

    Args:
        name: the server's name (the entry's key).
        entry: the entry as parsed from JSON (any value: an entry that is no object is an error).
        key: the top-level key holding the entries (``mcpServers``, or VS Code's ``servers``), for the paths.
        environ: the environment its ``${VAR}`` are expanded from.
        warnings: what is ignored in it (keys the guard does not use) is appended here, for the caller to log.

    Returns:
        ``(server, errors)``: each error a line ``<JSON path>: <what is wrong>``, never a configured value.
    """
    where = (key, name)
    errors: list[str] = []
    if not name:
        errors.append(f"{json_path(where)}: a server name must not be empty")
    if "/" in name:
        errors.append(f"{json_path(where)}: a server name must not contain '/' (lock file keys are server/tool)")
    if type(entry) is not dict:
        return None, [*errors, f"{json_path(where)}: a server entry must be an object"]
    unknown = [extra for extra in entry if extra not in KNOWN_ENTRY_KEYS]
    aliases = [extra for extra in unknown if extra in URL_ALIASES]  # always an error below
    for extra in unknown:
        if extra in aliases:
            continue
        hint = did_you_mean(extra, KNOWN_ENTRY_KEYS)
        warnings.append(f"{json_path((*where, extra))}: not a key the guard uses; ignored{hint}")
    kind = entry.get("type")
    if kind is not None and (type(kind) is not str or kind not in STDIO_TYPES | HTTP_TYPES | {"sse"}):
        errors.append(f"{json_path((*where, 'type'))}: must be one of stdio, http, streamable-http")
        kind = None
    if kind == "sse":
        errors.append(
            f"{json_path((*where, 'type'))}: the HTTP+SSE transport (deprecated since MCP 2025-03-26) is not "
            "supported; use the server's streamable HTTP endpoint"
        )
        kind = None
    is_http = "url" in entry or ("command" not in entry and (kind in HTTP_TYPES or "headers" in entry))
    urls = (["url"] if "url" in entry else []) + aliases
    if "command" in entry and urls:
        errors.append(f"{json_path(where)}: {_both_kinds(urls, kind)}")
    elif "command" not in entry and "url" not in entry:
        close = [(x, difflib.get_close_matches(x, ["command", "url"], n=1, cutoff=0.75)) for x in unknown]
        hint = "".join(
            f"; `{x}` is {URL_ALIASES[x]} for it: name it `url` here"
            if x in URL_ALIASES
            else f"; `{x}` is not a key the guard knows: did you mean `{m[0]}`?"
            for x, m in close
            if m or x in URL_ALIASES
        )
        errors.append(f"{json_path(where)}: needs `command` (a stdio server) or `url` (a streamable HTTP server){hint}")
    elif kind is not None and (kind in HTTP_TYPES) != is_http:
        expected = "`url`" if kind in HTTP_TYPES else "`command`"
        errors.append(f"{json_path((*where, 'type'))}: type {kind} needs {expected}")
    fields: dict[str, Any] = {
        k: v for k, v in entry.items() if k in KNOWN_ENTRY_KEYS and k != "type" and not (k == "disabled" and v is None)
    }
    if "command" in fields and "url" in fields:
        del fields["command"]  # reported above; the entry is checked as an HTTP one
    # With neither `command` nor `url` the entry is of no kind yet (reported above): its keys of
    # the other kind are not called out of place, and the variables of all its keys are checked.
    undecided = "command" not in entry and "url" not in entry
    every = dict(fields)  # before the keys of the other kind are taken out
    stray = "env" if is_http else "headers"
    fields.pop(stray, None)
    if stray in entry and not undecided:
        errors.append(
            f"{json_path((*where, stray))}: `{stray}` belongs to {'stdio' if is_http else 'HTTP'} servers, "
            f"this one is {'HTTP' if is_http else 'stdio'}"
        )
    for bad in ("cwd", "args"):
        if bad in fields and is_http:
            if not undecided:
                errors.append(f"{json_path((*where, bad))}: `{bad}` belongs to stdio servers, this one is HTTP")
            del fields[bad]
    failed: list[str] = []
    if fields.get("disabled") is not True:  # a disabled server's variables need not be set
        checked = every if undecided else fields  # of no kind yet: every key's variables are checked
        for k in EXPANDED_KEYS:
            if k in checked:
                expanded = expand_entry_value(k, checked[k], (*where, k), environ, errors, failed)
                if k in fields:
                    fields[k] = expanded
    missing = None if "command" in fields or "url" in fields else ("url" if is_http else "command")
    if missing is not None:
        fields[missing] = "http://placeholder" if missing == "url" else "placeholder"  # to check the other keys
    model: type[StdioServer] | type[HttpServer] = HttpServer if is_http else StdioServer
    try:
        server = model.model_validate({"name": name, **fields})
    except ValidationError as exc:
        skip = [json_path((*where, "name")), *failed] + ([json_path((*where, missing))] if missing else [])
        errors += [
            line for line in pydantic_errors(exc, where, model) if not line.startswith(tuple(p + ":" for p in skip))
        ]
        return None, errors
    return (None if errors else server), errors
