"""One client server entry, judged and rewritten: is it behind the guard, and what it becomes.

Pure functions on plain values (the entry as a ``dict``); the files are edited elsewhere
(:mod:`.clients_files`). The rules, from issue 13 item 1:

- A stdio entry (``command``, ``args``) becomes ``<guard> wrap [options] -- <command> <args>``;
  ``env``, ``cwd`` and every other key stay as they are, in their order.
- A URL entry becomes ``<guard> wrap [options] --upstream-url URL`` with its headers; a URL with
  user info or a query string (:func:`url_holds_credentials`) moves to the entry's ``env`` as
  ``MCP_GUARD_UPSTREAM_URL``, passed with ``--upstream-url-env`` (every client install knows has
  ``env`` on stdio entries). A header
  whose name says it holds a secret (:func:`is_secret_header`) never goes on the command line:
  its value moves to the entry's ``env`` under a new variable, passed with ``--header-env``.
  The URL key (``url``, ``serverUrl``, ``httpUrl``) is replaced by ``command`` and ``args`` in its
  place; the header keys go; ``type`` becomes ``"stdio"``.
- An entry already behind the guard (:func:`mcp_guard.guarded.guarded_upstream`) is left alone.
- What cannot be guarded exactly is left alone with the reason: SSE endpoints (``type: sse``,
  Gemini CLI's ``url``, a URL path ending in ``/sse``: ``wrap --upstream-url`` speaks streamable
  HTTP only), OAuth blocks and headers taken from the
  client's own environment (the guard cannot know the client's variables), an entry with
  neither a command nor a URL.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import urlsplit

from ..guarded import URL_FLAGS, guarded_upstream  # the recognition lives below the commands: serve and check too

__all__ = ["EXPOSED", "Plan", "guarded_upstream", "is_secret_header", "plan_entry", "url_holds_credentials"]

URL_KEYS: Final = ("url", "serverUrl", "httpUrl")
HEADER_KEYS: Final = ("headers", "http_headers")
UNGUARDABLE_KEYS: Final = ("oauth", "auth", "bearer_token_env_var", "env_http_headers", "bearer_token")
"""URL entry keys the guard cannot carry over exactly (their meaning depends on the client)."""

EXPOSED: Final = (
    "its --upstream-url holds a credential (user info or a query string) on the command line, where other "
    "users can read it: run uninstall, then install, to move it to env (--upstream-url-env)"
)
"""The reason given for a guarded entry whose ``--upstream-url`` may hold a secret (written by hand, or
by an install from before the URL moved to ``env``)."""

_SECRET_WORDS: Final = ("auth", "token", "key", "secret", "password", "passwd", "cookie", "session", "credential")


def is_secret_header(name: str) -> bool:
    """Whether a header's value is treated as a secret: ``Authorization``, ``Cookie``, and any name
    holding ``token``, ``key``, ``secret``, ``password``, ``session``, ``credential`` or ``auth``
    (case-insensitive; ``X-API-Key``, ``X-Auth-Token``)."""
    lowered = name.lower()
    return any(word in lowered for word in _SECRET_WORDS)


@dataclass
class Plan:
    """What :func:`plan_entry` decided for one entry.

    Attributes:
        action: ``"guard"`` (``entry`` is the rewritten entry), ``"guarded"`` (already behind the
            guard: left alone) or ``"skip"`` (cannot be guarded: ``reason`` says why).
        entry: the new entry (``"guard"``), keys in the original order.
        kind: ``"stdio"`` or ``"url"`` (what the original entry was).
        reason: why an entry is skipped, or how it is guarded (``"guarded"``).
        secret_vars: names of the ``env`` variables that now carry header values.
    """

    action: str
    kind: str
    entry: dict[str, Any] = field(default_factory=dict)
    reason: str = ""
    secret_vars: list[str] = field(default_factory=list)


def url_holds_credentials(url: str) -> bool:
    """Whether an upstream URL may carry a secret: it has user info (``https://user:pass@host``,
    ``https://TOKEN@host``) or a query string (``?apiKey=...``; any query, since which parameter
    names hold secrets is each server's choice). Such a URL is never put on a command line, where
    other users of the machine can read it (``ps``, ``/proc/PID/cmdline``)."""
    try:
        parts = urlsplit(url)
    except ValueError:  # not a URL wrap would take; said so elsewhere, but never put on a command line
        return True
    return "@" in parts.netloc or bool(parts.query) or "?" in url


def _env_name(header: str, taken: set[str], base: str = "") -> str:
    base = base or "MCP_GUARD_HEADER_" + re.sub(r"[^A-Z0-9]+", "_", header.upper()).strip("_")
    name, n = base, 2
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    taken.add(name)
    return name


def plan_entry(entry: Any, guard: list[str], options: list[str], *, client: str = "") -> Plan:
    """Decide and build the guarded form of one client server entry.

    Args:
        entry: the entry's value (a JSON object / TOML table as a ``dict``).
        guard: how the client starts the guard: ``["/path/to/mcp-guard"]`` or
            ``[python, "-m", "mcp_guard"]``.
        options: ``wrap`` options to put before ``--`` (``["--profile", "standard"]``).
        client: the client's name: Gemini CLI's ``url`` key means SSE (its streamable HTTP key is
            ``httpUrl``); for the other clients ``url`` is streamable HTTP unless ``type`` says ``sse``.

    Returns:
        The :class:`Plan`; nothing is raised for an entry of an unexpected shape (it is skipped).
    """
    if not isinstance(entry, dict):
        return Plan("skip", "?", reason="the entry is not an object")
    command, args = entry.get("command"), entry.get("args")
    url_key = next((k for k in URL_KEYS if k in entry), None)
    if isinstance(command, str):
        behind = guarded_upstream(command, args)
        if behind is not None:  # a guarded URL entry is still a URL entry (trial T2)
            kind = "url" if behind[1][:1] and behind[1][0] in URL_FLAGS else "stdio"
            if behind[1][:1] == ["--upstream-url"] and url_holds_credentials(behind[1][1]):
                return Plan("guarded", kind, reason=EXPOSED)
            return Plan("guarded", kind, reason="already behind the guard")
        if args is not None and not (isinstance(args, list) and all(isinstance(a, str) for a in args)):
            return Plan("skip", "stdio", reason="'args' is not a list of strings")
        if url_key is not None:
            return Plan("skip", "stdio", reason=f"both 'command' and '{url_key}' are set")
        new = dict(entry)
        new["command"] = guard[0]
        new["args"] = [*guard[1:], "wrap", *options, "--", command, *(args or [])]
        return Plan("guard", "stdio", new)
    if command is not None:
        return Plan("skip", "stdio", reason="'command' is not a string")
    if url_key is None:
        return Plan("skip", "?", reason="neither 'command' nor a URL")
    return _plan_url(entry, url_key, guard, options, sse=client == "gemini" and url_key == "url")


def _plan_url(entry: dict[str, Any], url_key: str, guard: list[str], options: list[str], *, sse: bool) -> Plan:
    url = entry[url_key]
    kind_hint = str(entry.get("type", entry.get("transport", ""))).lower()
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        return Plan("skip", "url", reason=f"'{url_key}' is not an http(s) URL")
    if sse or "sse" in kind_hint or url.split("?")[0].rstrip("/").endswith("/sse"):
        return Plan("skip", "url", reason="an SSE endpoint (wrap --upstream-url speaks streamable HTTP only)")
    blocked = [k for k in UNGUARDABLE_KEYS if k in entry]
    if blocked:
        return Plan("skip", "url", reason=f"'{blocked[0]}' has no exact equivalent in wrap --upstream-url")
    headers: dict[str, Any] = {}
    for key in HEADER_KEYS:
        value = entry.get(key)
        if value is None:
            continue
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            return Plan("skip", "url", reason=f"'{key}' is not a map of strings")
        headers.update(value)
    env = entry.get("env", {})
    if not isinstance(env, dict):
        return Plan("skip", "url", reason="'env' is not an object")
    env = dict(env)
    taken = set(env)
    secret_vars: list[str] = []
    if url_holds_credentials(url):  # never on a command line: through the entry's env (docs/wrap.md)
        var = _env_name("", taken, base="MCP_GUARD_UPSTREAM_URL")
        env[var] = url
        secret_vars.append(var)
        wrap_args = [*guard[1:], "wrap", *options, "--upstream-url-env", var]
    else:
        wrap_args = [*guard[1:], "wrap", *options, "--upstream-url", url]
    for name, value in headers.items():
        if is_secret_header(name):
            var = _env_name(name, taken)
            env[var] = value
            secret_vars.append(var)
            wrap_args += ["--header-env", f"{name}={var}"]
        else:
            wrap_args += ["--header", f"{name}={value}"]
    from ..peer.http_upstream import parse_headers

    plain = [a for i, a in enumerate(wrap_args) if i and wrap_args[i - 1] == "--header"]
    from_env = [a for i, a in enumerate(wrap_args) if i and wrap_args[i - 1] == "--header-env"]
    try:  # what wrap would refuse at start (a reserved name, a value that is not printable ASCII)
        parse_headers(plain, from_env, {k: str(v) for k, v in env.items()})
    except ValueError as exc:
        return Plan("skip", "url", reason=f"a header wrap --upstream-url would refuse: {exc}")
    new: dict[str, Any] = {}
    for key, value in entry.items():
        if key == url_key:
            new["command"], new["args"] = guard[0], wrap_args
        elif key in HEADER_KEYS or key in URL_KEYS:
            continue
        elif key in ("type", "transport"):
            new[key] = "stdio"
        elif key == "env":
            new["env"] = env
        else:
            new[key] = value
    if env and "env" not in new:
        new["env"] = env
    return Plan("guard", "url", new, secret_vars=secret_vars)
