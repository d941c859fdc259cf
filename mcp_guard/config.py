"""The gateway's configuration file: the ``mcpServers`` format clients already use, plus ``"guard"``.

Shape (JSON; ``//`` and ``/* */`` comments and trailing commas are accepted, as VS Code accepts
them in its ``mcp.json``)::

    {
      "mcpServers": {                          // or "servers" (VS Code); not both
        "NAME": {"command": "...", "args": [...], "env": {...}, "cwd": "..."},   // stdio
        "NAME": {"url": "https://...", "headers": {...}},                        // streamable HTTP
        "NAME": {..., "disabled": true}                                          // skipped
      },
      "guard": { ... see GuardSettings ... }   // optional
    }

Rules:

- A server entry is stdio (``command``) or streamable HTTP (``url``), never both (the error says
  which to remove; Gemini CLI's ``httpUrl`` and Windsurf's ``serverUrl`` count as a URL). ``type`` may
  say which (``stdio``; ``http`` or ``streamable-http``); ``sse`` (the deprecated HTTP+SSE
  transport) is refused. ``disabled: true`` skips the server. Other keys that clients put
  there (``autoApprove``, ``alwaysAllow``, ``timeout``, ``envFile``, ...) are ignored with a
  warning in the log, one per key and server.
- ``${VAR}``, ``${VAR:-default}`` and VS Code's ``${env:VAR}`` are replaced from the environment
  in the strings of ``command``, ``args``, ``cwd``, ``url``, and the values of ``env`` and
  ``headers`` (the fields Claude Code expands, and ``cwd``); every variable that is not set (and
  has no default) is an error naming it and the field, all of them at once. VS Code's own
  ``${workspaceFolder}`` (and its other editor variables) is an error: the guard, not the editor,
  starts the server. ``$${`` writes a literal ``${``. A disabled server's are not expanded.
- Server names are non-empty and hold no ``/`` (lock file keys are ``server/tool``).
- The ``guard`` section is the guard's own: an unknown key there is an error (a mistyped
  security setting must not be silently ignored). Relative paths in it (``journal``, ``lock``)
  are relative to the config file's folder.
- Other top-level keys (a Claude Desktop config holds preferences, VS Code's ``inputs``) are
  ignored.

Every error is a :class:`ConfigError` whose message names the file, the key as a JSON path
(``mcpServers.time.env.TOKEN``), and what is wrong in the guard's words (``expected a list of
non-empty strings, found a string``: :mod:`.config_messages`); it never holds a configured value.
"""

from __future__ import annotations

import difflib
import json
import logging
import os
import re
import string
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Annotated, Any, Final, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel

from .config_messages import explain
from .config_text import expand_entry_value, expand_variables, json_path, strip_jsonc
from .core.profiles import DEFAULT_PROFILE, ProfileName
from .errors import GuardError
from .hosts.tables import HostName
from .oauth_config import OAuthSettings
from .otel_config import OtelSettings

__all__ = [
    "DEFAULT_NAME_FORMAT",
    "ConfigError",
    "GatewayConfig",
    "GuardSettings",
    "HttpServer",
    "JournalDatabase",
    "PrincipalMatch",
    "PrincipalRule",
    "ServerPolicy",
    "StateSettings",
    "StdioServer",
    "ToolLimits",
    "expand_variables",
    "json_path",
    "load_config",
    "parse_config",
    "strip_jsonc",
]

log = logging.getLogger("mcp_guard")

DEFAULT_NAME_FORMAT: Final = "{server}__{tool}"
"""How an upstream tool is exposed: server name, two underscores, tool name."""

KNOWN_ENTRY_KEYS: Final = frozenset({"command", "args", "env", "cwd", "url", "headers", "type", "disabled"})
URL_ALIASES: Final = {"httpUrl": "Gemini CLI's key", "serverUrl": "Windsurf's key"}
"""Other clients' keys for a streamable HTTP server's URL: here the key is ``url``."""
EXPANDED_KEYS: Final = ("command", "args", "cwd", "url", "env", "headers")
"""The keys whose strings have their ``${VAR}`` expanded: the five Claude Code expands, and ``cwd``."""
STDIO_TYPES: Final = frozenset({"stdio"})
HTTP_TYPES: Final = frozenset({"http", "streamable-http", "streamableHttp"})


class ConfigError(GuardError):
    """The configuration cannot be used; the message names the file, the key, and what is wrong."""


# --- models -------------------------------------------------------------------------------------

PositiveInt = Annotated[int, Field(gt=0, strict=True)]
Pattern = Annotated[str, Field(min_length=1, strict=True)]


class _Model(BaseModel):
    """The guard section's models: camelCase keys, unknown keys refused, no coercion."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", strict=True, frozen=True)


class ToolLimits(_Model):
    """Limits for the tools matching one glob pattern of a server (``guard.servers.NAME.tools``)."""

    max_argument_bytes: PositiveInt | None = None
    calls_per_minute: PositiveInt | None = None


class ServerPolicy(_Model):
    """Settings for one upstream (``guard.servers.NAME``); patterns match its tool names.

    Attributes:
        allow: when set, only tools matching one of these glob patterns are offered; the
            others are denied. ``[]`` allows none.
        deny: tools matching these are denied: not listed, and a call to one is answered as
            a call to an unknown tool would be (-32602); the attempt is logged and journaled
            as ``policy_denied``.
        hide: tools matching these are not listed; a call is answered as unknown (-32602).
        unsupported: overrides ``guard.unsupported`` for this server.
        max_argument_bytes, calls_per_minute: override the guard-wide values (the smaller wins).
            ``calls_per_minute`` is a budget for each of the server's tools, not for the server
            as a whole.
        tools: per tool glob pattern, limits; where several patterns match a tool, the
            smallest limit of each kind applies.
    """

    allow: list[Pattern] | None = None
    deny: list[Pattern] = Field(default_factory=list)
    hide: list[Pattern] = Field(default_factory=list)
    unsupported: Literal["reject", "hide"] | None = None
    max_argument_bytes: PositiveInt | None = None
    calls_per_minute: PositiveInt | None = None
    tools: dict[Pattern, ToolLimits] = Field(default_factory=dict)


RuleName = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$", strict=True)]
"""A principal rule's name: it is told to the client whose call it refuses, so a plain word (1-64 of
``A-Z a-z 0-9 _ . : -``, starting with a letter or digit)."""
ClaimValue = Annotated[str, Field(min_length=1, strict=True)]


class PrincipalMatch(_Model):
    """Who a principal rule is for (``guard.principals.NAME.match``; issue 27 item 2).

    Every key given must match (and); a list matches when the principal has any of its values
    (or). Values are compared exactly (no globs: a subject or a group is a name, not a pattern).

    Attributes:
        authenticated: ``true``: any call with a principal (a verified access token);
            ``false``: only calls without one (stdio, a shared bearer token). Alone, or
            ``true`` with other keys.
        issuers: the token's ``iss`` is one of these (narrows the other keys where several
            authorization servers are trusted).
        subjects: the token's ``sub``.
        client_ids: the token's ``client_id`` (else ``azp``).
        groups: one of the principal's groups (the group claim's values).
        scopes: one of the token's granted scopes.

    A call without a principal matches only ``{"authenticated": false}``: a rule that names
    principals, groups or scopes never matches it.
    """

    authenticated: bool | None = None
    issuers: list[ClaimValue] | None = None
    subjects: list[ClaimValue] | None = None
    client_ids: list[ClaimValue] | None = None
    groups: list[ClaimValue] | None = None
    scopes: list[ClaimValue] | None = None

    @model_validator(mode="after")
    def _says_who(self) -> PrincipalMatch:
        named = [self.issuers, self.subjects, self.client_ids, self.groups, self.scopes]
        if self.authenticated is None and all(v is None for v in named):
            raise ValueError(
                "a rule must say whom it matches: authenticated, issuers, subjects, clientIds, groups or scopes"
            )
        if self.authenticated is False and any(v is not None for v in named):
            raise ValueError("`authenticated: false` matches calls without a principal; it takes no other key")
        if any(v == [] for v in named):
            raise ValueError("an empty list matches nobody; leave the key out")
        return self


class PrincipalRule(_Model):
    """A named rule for the calls of some principals (``guard.principals.NAME``; issue 27 item 2).

    Patterns are the guard-wide ones (:class:`GuardSettings`): globs over ``server/tool``, upstream
    names, with the same meaning. Among the rules that match a call: a ``deny`` of any of them
    denies; when some of them have an ``allow`` list, the tool must match one of those lists (a
    principal in two groups may use what either allows); else a ``hide`` of any hides. The
    guard-wide and per-server rules apply first and cannot be widened by a principal rule.

    Attributes:
        match: whom the rule is for (:class:`PrincipalMatch`).
        allow, deny, hide: glob patterns over ``server/tool``.
        max_argument_bytes: a size limit for these principals (the smallest limit in force wins).
        calls_per_minute: a budget for each matching principal and each tool (counted per
            principal: issuer and subject), in addition to the tool's own budget.
        tools: per ``server/tool`` pattern, limits for these principals.
    """

    match: PrincipalMatch
    allow: list[Pattern] | None = None
    deny: list[Pattern] = Field(default_factory=list)
    hide: list[Pattern] = Field(default_factory=list)
    max_argument_bytes: PositiveInt | None = None
    calls_per_minute: PositiveInt | None = None
    tools: dict[Pattern, ToolLimits] = Field(default_factory=dict)


EnvName = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", strict=True)]


class StateSettings(_Model):
    """Where state shared by the replicas of a gateway lives (``guard.state``; issue 26, docs/scale-out.md).

    Attributes:
        redis: the Redis URL (``redis://[[user]:password@]host[:port][/db]``, ``rediss://``,
            ``unix://``) holding the ``callsPerMinute`` budgets, counted once for every replica.
        redis_env: the name of an environment variable holding that URL instead (a password
            then stays out of the file). Exactly one of ``redis`` and ``redisEnv``.
        key_prefix: the prefix of the guard's Redis keys (two gateways sharing a Redis keep
            apart by it).
        timeout_seconds: how long a replica waits for Redis before a governed call is refused
            with ``budget_unavailable``.
    """

    redis: Annotated[str, Field(min_length=1)] | None = None
    redis_env: EnvName | None = None
    key_prefix: Annotated[str, Field(min_length=1, max_length=200)] = "mcp-guard"
    timeout_seconds: Annotated[float, Field(gt=0, le=60)] = 2.0

    @model_validator(mode="after")
    def _one_url(self) -> StateSettings:
        if (self.redis is None) == (self.redis_env is None):
            raise ValueError("give exactly one of `redis` (a URL) and `redisEnv` (a variable holding it)")
        return self


class JournalDatabase(_Model):
    """The journal in PostgreSQL (``guard.journal: {"postgres": ...}``; issue 26 item 2).

    Attributes:
        postgres: a libpq connection URI (``postgresql://user@host:port/db``; psycopg's
            ``conninfo``; libpq's environment variables and ``.pgpass`` apply as for ``psql``).
        postgres_env: the name of an environment variable holding that URI instead. Exactly one.
        pool_size: connections each replica keeps open at most.
        timeout_seconds: how long a call waits for a connection before it is refused (-32603).
    """

    postgres: Annotated[str, Field(min_length=1)] | None = None
    postgres_env: EnvName | None = None
    pool_size: Annotated[int, Field(gt=0, le=100, strict=True)] = 8
    timeout_seconds: Annotated[float, Field(gt=0, le=60)] = 2.0

    @model_validator(mode="after")
    def _one_url(self) -> JournalDatabase:
        if (self.postgres is None) == (self.postgres_env is None):
            raise ValueError("give exactly one of `postgres` (a URI) and `postgresEnv` (a variable holding it)")
        return self


def _journal_form(value: Any) -> str:
    return "journal-database" if isinstance(value, dict | JournalDatabase) else "journal-file"


_UNION_TAGS: Final = frozenset({"journal-file", "journal-database"})
"""Tags of the config's unions, left out of the JSON paths of messages."""

JournalSetting = Annotated[
    Annotated[str, Tag("journal-file")] | Annotated[JournalDatabase, Tag("journal-database")],
    Discriminator(_journal_form),
]


class GuardSettings(_Model):
    """The optional ``"guard"`` section. Every key is optional.

    Attributes:
        profile: the schema profile, one of ``core.PROFILES`` (default ``core.DEFAULT_PROFILE``).
        name_format: how tools and prompts are exposed; must contain ``{tool}`` and may
            contain ``{server}`` (default ``"{server}__{tool}"``). The result is made to fit
            ``^[a-zA-Z0-9_-]{1,64}$``.
        unsupported: ``"reject"`` (default; tools the guard cannot enforce are listed and
            their calls refused) or ``"hide"`` (left out of lists; calls answered as unknown).
        outputs: what is done with the results of tools that declare an ``outputSchema``
            (``mcp_guard.calls.outputs``): ``"enforce"`` (default; a result that breaks it is
            withheld, a tool whose ``outputSchema`` is unsupported refused), ``"report"`` (findings in
            ``_meta["mcp-guard/output"]``) or ``"off"``.
        allow, deny, hide: glob patterns over ``server/tool`` (upstream names), applied to
            every server in addition to its own rules (see :class:`ServerPolicy`).
        max_argument_bytes: largest ``arguments`` accepted, in bytes of their compact JSON
            (checked before validating); ``None``: no limit of the guard's own.
        calls_per_minute: calls each exposed tool may receive in any 60-second window.
        journal: path of the JSONL journal, or ``{"postgres": URI}`` (:class:`JournalDatabase`)
            for the journal in PostgreSQL (``None``: no journal).
        state: shared state of several replicas (:class:`StateSettings`: budgets in Redis);
            ``None``: budgets counted in process.
        lock: path of the lock file (default: the config file's path plus ``.lock``).
        new_tools: ``"allow"`` (default; tools absent from the lock are reported) or
            ``"reject"`` (their calls are refused with ``policy_denied``; with no lock file
            every tool is absent from it, so every call is refused until ``mcp-guard pin``).
        changed_tools: what the client is shown of a tool whose definition changed since
            ``mcp-guard pin`` (its calls are refused with ``pinned_schema_changed`` either way):
            ``"pinned"`` (default; listed with its pinned definition, from a version-2 lock
            file) or ``"withhold"`` (left out of the list). With a version-1 lock, which holds
            no definitions, such a tool is withheld.
        page_size: tools (prompts, resources) per page of the guard's merged lists.
        present_for: the model host every ``tools/list`` is shown to (``presentFor``, one of
            ``hosts.tables.HOST_NAMES``; ``serve --present-for`` overrides it): each tool's schema
            lowered and its name made valid for the host, each call mapped back and judged against
            the server's own schema (``calls.presenting``, docs/hosts.md); None: lists as merged.
        auth: ``serve --http`` as an OAuth 2.1 resource server (:class:`~.oauth_config.OAuthSettings`:
            ``issuer``, ``resource``, ``scopes``...); every request then needs an access token the
            issuer signed for ``resource`` (docs/gateway.md, "Who is calling"). Ignored on stdio.
        otel: OpenTelemetry traces of every ``tools/call`` (:class:`~.otel_config.OtelSettings`:
            ``endpoint``, ``serviceName``; ``--otel`` turns them on too; docs/tracing.md).
        servers: per upstream settings; each key must name a server of the config.
        principals: named rules per principal (:class:`PrincipalRule`; issue 27): allow, deny or
            hide tools and set budgets for the callers a verified access token names (the HTTP
            front with OAuth). Without a principal (stdio, a shared bearer token) only
            ``{"authenticated": false}`` rules match.
    """

    profile: ProfileName = DEFAULT_PROFILE
    name_format: str = DEFAULT_NAME_FORMAT
    unsupported: Literal["reject", "hide"] = "reject"
    outputs: Literal["enforce", "report", "off"] = "enforce"
    allow: list[Pattern] | None = None
    deny: list[Pattern] = Field(default_factory=list)
    hide: list[Pattern] = Field(default_factory=list)
    max_argument_bytes: PositiveInt | None = None
    calls_per_minute: PositiveInt | None = None
    journal: JournalSetting | None = None
    state: StateSettings | None = None
    lock: str | None = None
    new_tools: Literal["allow", "reject"] = "allow"
    changed_tools: Literal["pinned", "withhold"] = "pinned"
    page_size: Annotated[int, Field(gt=0, le=10_000, strict=True)] = 100
    present_for: HostName | None = None
    auth: OAuthSettings | None = None
    otel: OtelSettings | None = None
    servers: dict[str, ServerPolicy] = Field(default_factory=dict)
    principals: dict[RuleName, PrincipalRule] = Field(default_factory=dict)

    @field_validator("name_format")
    @classmethod
    def _check_format(cls, value: str) -> str:
        try:
            parsed = [(f, spec, conversion) for _, f, spec, conversion in string.Formatter().parse(value)]
        except ValueError as exc:
            raise ValueError(f"not a valid format ({exc})") from None
        fields = {f for f, _, _ in parsed if f is not None}
        if "tool" not in fields:
            raise ValueError("must contain {tool}")
        if fields - {"tool", "server"}:
            raise ValueError("may contain only {server} and {tool} (write {{ and }} for braces)")
        if any(spec or conversion for f, spec, conversion in parsed if f is not None):
            raise ValueError(
                "may contain only {server} and {tool}, as they are: no conversion (!r) or format spec (:>9)"
            )
        return value


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


class GatewayConfig(BaseModel):
    """A loaded configuration.

    Attributes:
        path: the file it came from (``None`` for text parsed directly).
        servers: every server entry, in file order, disabled ones included.
        guard: the guard's settings.
        warnings: what was ignored (unknown keys in server entries), also logged.
    """

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    path: Path | None
    servers: tuple[StdioServer | HttpServer, ...]
    guard: GuardSettings
    warnings: tuple[str, ...] = ()

    @property
    def enabled(self) -> tuple[StdioServer | HttpServer, ...]:
        """The servers not marked ``disabled``."""
        return tuple(s for s in self.servers if not s.disabled)

    def server(self, name: str) -> StdioServer | HttpServer:
        """The server called ``name``; ``KeyError`` if there is none."""
        for s in self.servers:
            if s.name == name:
                return s
        raise KeyError(name)

    def resolve(self, path: str) -> Path:
        """``path`` made absolute against the config file's folder (or the current folder)."""
        p = Path(path).expanduser()
        if p.is_absolute():
            return p
        base = self.path.parent if self.path is not None else Path.cwd()
        return base / p

    @property
    def lock_path(self) -> Path | None:
        """Where the lock file is: ``guard.lock``, else the config path plus ``.lock``."""
        if self.guard.lock is not None:
            return self.resolve(self.guard.lock)
        if self.path is None:
            return None
        return self.path.with_name(self.path.name + ".lock")

    @property
    def journal_path(self) -> Path | None:
        """Where the journal is (``guard.journal`` resolved), or ``None``."""
        journal = self.guard.journal
        return self.resolve(journal) if isinstance(journal, str) else None


# --- loading ------------------------------------------------------------------------------------

_GUARD_KEYS: Final = frozenset(
    field.alias or name
    for model in (
        GuardSettings,
        ServerPolicy,
        ToolLimits,
        StateSettings,
        JournalDatabase,
        PrincipalRule,
        PrincipalMatch,
    )
    for name, field in model.model_fields.items()
)
"""Every key of the guard section, at any level (for "did you mean" hints)."""


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"the key {json.dumps(key)} appears twice in one object")
        out[key] = value
    return out


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _pydantic_errors(exc: ValidationError, prefix: tuple[str | int, ...], model: type[BaseModel]) -> list[str]:
    """Each error of ``model`` as ``<JSON path>: <our words>`` (``config_messages.explain``: what the key
    takes and the kind of value found, never the value)."""
    lines = []
    for error in exc.errors(include_url=False):
        inner = tuple(
            x for x in error["loc"] if not (isinstance(x, str) and (x.startswith("function-") or x in _UNION_TAGS))
        )
        loc = prefix + inner
        if error["type"] == "extra_forbidden":
            last = loc[-1] if loc else ""
            hint = _did_you_mean(last, _GUARD_KEYS) if isinstance(last, str) else ""
            message = f"unknown key (the guard section accepts only its own settings){hint}"
        else:
            message = explain(error, model, inner)
        lines.append(f"{json_path(loc)}: {message}")
    return lines


def _did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean `command`?)`` for a key close to one of ``choices``, else ``""``."""
    found = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.75)
    return f" (did you mean `{found[0]}`?)" if found else ""


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


def _server_entry(
    name: str, entry: Any, key: str, environ: Mapping[str, str], warnings: list[str]
) -> tuple[StdioServer | HttpServer | None, list[str]]:
    """One server entry: the server (``None`` when it has errors) and every error found in it."""
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
        hint = _did_you_mean(extra, KNOWN_ENTRY_KEYS)
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
            line for line in _pydantic_errors(exc, where, model) if not line.startswith(tuple(p + ":" for p in skip))
        ]
        return None, errors
    return (None if errors else server), errors


def parse_config(text: str, *, path: Path | None = None, environ: Mapping[str, str] | None = None) -> GatewayConfig:
    """Parse configuration text (JSON with comments) into a :class:`GatewayConfig`.

    Args:
        text: the file's content.
        path: the file, for messages and relative paths.
        environ: the environment for ``${VAR}`` (default ``os.environ``).

    Raises:
        ConfigError: naming the file, the key and the problem.
    """
    source = str(path) if path is not None else "<config>"
    environ = os.environ if environ is None else environ
    try:
        data = json.loads(strip_jsonc(text), object_pairs_hook=_no_duplicates, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{source}: not valid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except (ValueError, RecursionError) as exc:
        raise ConfigError(f"{source}: {exc}") from None
    if type(data) is not dict:
        raise ConfigError(f"{source}: the top level must be an object with `mcpServers`")
    if "mcpServers" in data and "servers" in data:
        raise ConfigError(f"{source}: has both `mcpServers` and `servers` (VS Code's name); keep one")
    key = "mcpServers" if "mcpServers" in data or "servers" not in data else "servers"
    entries = data.get(key)
    if entries is None:
        raise ConfigError(f"{source}: no `mcpServers` (or VS Code's `servers`) object: there is nothing to guard")
    if type(entries) is not dict:
        raise ConfigError(f"{source}: {key}: must be an object mapping server names to entries")
    warnings: list[str] = []
    servers: list[StdioServer | HttpServer] = []
    errors: list[str] = []
    for name, entry in entries.items():
        server, problems = _server_entry(name, entry, key, environ, warnings)
        errors += problems
        if server is not None:
            servers.append(server)
    guard_data = data.get("guard", {})
    guard = GuardSettings()
    if type(guard_data) is not dict:
        errors.append("guard: must be an object")
    else:
        try:
            guard = GuardSettings.model_validate(guard_data, by_alias=True)
        except ValidationError as exc:
            errors.extend(_pydantic_errors(exc, ("guard",), GuardSettings))
        names = set(entries)
        policies = guard_data.get("servers")
        for policy_name in policies if type(policies) is dict else ():
            if policy_name not in names:
                errors.append(f"{json_path(('guard', 'servers', policy_name))}: no server of that name in `{key}`")
    for warning in warnings:  # before any error: a typo warned of may be what the errors are about
        log.warning("%s: %s", source, warning)
    if errors:
        raise ConfigError(f"{source}: " + ("\n  " if len(errors) > 1 else "") + "\n  ".join(errors))
    return GatewayConfig(path=path, servers=tuple(servers), guard=guard, warnings=tuple(warnings))


def load_config(path: str | Path, *, environ: Mapping[str, str] | None = None) -> GatewayConfig:
    """Read and parse the configuration file at ``path`` (see :func:`parse_config`).

    Raises:
        ConfigError: the file cannot be read, or its content is wrong.
    """
    p = Path(path).expanduser()
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{p}: cannot read the file ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{p}: not UTF-8 text") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return parse_config(text, path=p.absolute(), environ=environ)
