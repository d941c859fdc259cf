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

- A server entry is stdio (``command``) or streamable HTTP (``url``), never both; ``${VAR}`` is
  replaced from the environment in its strings; server names are non-empty and hold no ``/``.
  The entry's rules and its parsing are :mod:`.config_servers`' (:class:`~.config_servers.StdioServer`
  and :class:`~.config_servers.HttpServer`, re-exported here).
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

import json
import logging
import os
import string
from collections.abc import Mapping
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

from .config_messages import pydantic_errors
from .config_servers import HttpServer, StdioServer, server_entry
from .config_text import expand_variables, json_path, strip_jsonc
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
        server, problems = server_entry(name, entry, key, environ, warnings)
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
            errors.extend(pydantic_errors(exc, ("guard",), GuardSettings, keys=_GUARD_KEYS, tags=_UNION_TAGS))
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
