"""A shared store's URL: written in the config, or taken from the environment variable the config names.

``guard.state`` and ``guard.journal`` give a URL either as written (``"redis": "redis://..."``)
or by the name of an environment variable that holds it (``"redisEnv": "MCP_GUARD_REDIS_URL"``),
so that a password need not sit in the config file. The URL itself is never logged: messages
carry :func:`redacted`, which keeps the scheme, host, port and path and drops the user and
password (RFC 3986 section 3.2.1: userinfo; the query, where libpq takes ``password=``, is dropped
too).
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit

from ..errors import GuardError

__all__ = ["UrlError", "redacted", "resolve_url"]


class UrlError(GuardError):
    """A store's URL cannot be had: its environment variable is not set, or it is not a URL of the store."""


def resolve_url(
    url: str | None, env: str | None, environ: Mapping[str, str], *, where: str, schemes: tuple[str, ...]
) -> str:
    """The URL to connect to: ``url`` as written, else the value of the environment variable ``env``.

    Args:
        url, env: the config's two ways to give it (exactly one is set; the config checks).
        environ: the environment (``os.environ`` in use).
        where: the config key, for messages (``guard.state.redisEnv``).
        schemes: the URL schemes the store takes (``redis``, ``rediss``, ``unix``).

    Raises:
        UrlError: the variable is not set or empty, or the URL's scheme is not one of ``schemes``
            (the message names the variable and the scheme, never the value).
    """
    if url is None:
        assert env is not None
        value = environ.get(env, "")
        if not value:
            raise UrlError(f"{where}: the environment variable {env} is not set")
        url = value
        where = f"{where} ({env})"
    scheme = urlsplit(url).scheme
    if scheme not in schemes:
        raise UrlError(f"{where}: not a URL of the store (its scheme must be one of {', '.join(schemes)})")
    return url


def redacted(url: str) -> str:
    """``url`` without credentials: ``scheme://host:port/path`` (user, password and query dropped).

    >>> redacted("redis://user:secret@10.0.0.5:6379/2?x=1")
    'redis://10.0.0.5:6379/2'
    """
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port is not None else ""
    except ValueError:
        return "(an unreadable URL)"
    if ":" in host:
        host = f"[{host}]"
    return f"{parts.scheme}://{host}{port}{parts.path}"
