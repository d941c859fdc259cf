"""One HTTP request to an MCP endpoint, as the streamable HTTP upstream makes it.

The HTTP mechanics below the MCP transport of :mod:`.http_upstream`: the client (its
timeouts, connection limits and ``User-Agent``), one streamed request with its redirects,
and a body read under a cap. Nothing here knows JSON-RPC, sessions or eras.

- Redirects are followed only for ``307``/``308`` within the URL's origin (scheme, host and
  port; at most :data:`MAX_REDIRECTS`), so neither a body nor a header reaches another
  host (RFC 9110 §15.4.8/§15.4.9 keep the method and body for these two; other redirects
  are answered to the caller as they are).
- :meth:`Endpoint.reach` makes the connection's first request, an ``OPTIONS`` (RFC 9110 §9.3.7:
  safe, no body, no MCP meaning), to learn whether the endpoint can be reached at all (TCP, name
  resolution, TLS, a proxy) before anything of the client's is sent: whatever HTTP answer comes,
  any status, it can.
- A body is read whole only up to a cap: a ``Content-Length`` above it, or more bytes than
  it, raise :class:`MessageTooLarge` before the excess is held.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from typing import Final

import httpx2

from .. import __version__
from ..errors import GuardError

__all__ = [
    "CONNECT_TIMEOUT",
    "MAX_CONNECTIONS",
    "MAX_REDIRECTS",
    "REACH_WAIT",
    "UNREACHABLE",
    "WRITE_TIMEOUT",
    "Endpoint",
    "MessageTooLarge",
    "media_type",
    "new_client",
]

CONNECT_TIMEOUT: Final = 10.0
"""Seconds to establish a connection to the upstream."""

WRITE_TIMEOUT: Final = 60.0
"""Seconds one write to the upstream's socket may stall."""

MAX_CONNECTIONS: Final = 256
"""Connections to the upstream at once (each request in flight and the event stream hold one); more requests queue."""

MAX_REDIRECTS: Final = 5
"""``307``/``308`` hops followed within the origin for one request."""

REACH_WAIT: Final = 5.0
"""Seconds the answer to :meth:`Endpoint.reach` may take once connected (none in time: reachable all the same)."""

UNREACHABLE: Final = (httpx2.ConnectError, httpx2.ConnectTimeout, httpx2.ProxyError)
"""What :meth:`Endpoint.reach` raises when no connection to the endpoint could be made."""


class MessageTooLarge(GuardError):
    """An incoming message (a body) is larger than the cap."""


def media_type(response: httpx2.Response) -> str:
    """The response's media type, lower case, without parameters (``""`` when absent)."""
    return response.headers.get("content-type", "").partition(";")[0].strip().lower()


def new_client(headers: Mapping[str, str] | None, connect_timeout: float) -> httpx2.AsyncClient:
    """The HTTP client of one upstream connection: ``headers`` on every request (after a
    ``User-Agent: mcp-guard/VERSION`` they may replace), ``connect_timeout`` seconds to connect,
    :data:`WRITE_TIMEOUT` per write, no read timeout (a tool may take its time; the relay's own
    ``--request-timeout`` bounds a request), at most :data:`MAX_CONNECTIONS` connections, no
    automatic redirects (:meth:`Endpoint.request` follows them within the origin).
    ``HTTP_PROXY`` and friends apply as usual for httpx."""
    default_headers = {"User-Agent": f"mcp-guard/{__version__}"}
    default_headers.update(headers or {})
    timeout = httpx2.Timeout(connect=connect_timeout, read=None, write=WRITE_TIMEOUT, pool=None)
    limits = httpx2.Limits(max_connections=MAX_CONNECTIONS, max_keepalive_connections=32)
    return httpx2.AsyncClient(headers=default_headers, timeout=timeout, limits=limits, follow_redirects=False)


class Endpoint:
    """The MCP endpoint ``url`` reached through ``client``.

    Args:
        client: from :func:`new_client` (its owner closes it).
        url: the endpoint, an ``http(s)`` URL already checked.
    """

    def __init__(self, client: httpx2.AsyncClient, url: str) -> None:
        self.url = url
        self._client = client

    @contextlib.asynccontextmanager
    async def request(
        self, method: str, headers: dict[str, str], content: bytes | None = None
    ) -> AsyncIterator[httpx2.Response]:
        """One streamed HTTP request to the endpoint; ``307``/``308`` within the origin are
        followed. The response is closed on exit.

        Raises:
            httpx2.HTTPError: the request failed (connect, write, protocol).
        """
        request = self._client.build_request(method, self.url, headers=headers, content=content)
        response = await self._client.send(request, stream=True, follow_redirects=False)
        try:
            for _hop in range(MAX_REDIRECTS):
                following = response.next_request
                if (
                    following is None
                    or response.status_code not in (307, 308)
                    or (following.url.scheme, following.url.host, following.url.port)
                    != (request.url.scheme, request.url.host, request.url.port)
                ):
                    break
                await response.aclose()
                request = following
                response = await self._client.send(request, stream=True, follow_redirects=False)
            yield response
        finally:
            await response.aclose()

    async def reach(self, wait: float = REACH_WAIT) -> int | None:
        """Connect to the endpoint and send it one ``OPTIONS`` request; its status, or None when the
        connection was made but no answer came within ``wait`` seconds (or the server closed it, or
        answered what is not HTTP). Only the status line and headers are read; the response is closed
        at once. No redirect is followed. The client's connect timeout applies.

        Raises:
            httpx2.ConnectError, httpx2.ConnectTimeout, httpx2.ProxyError (:data:`UNREACHABLE`): no
                connection could be made (refused, the name not resolved, the TLS handshake failed,
                no answer to connect within the timeout, the proxy refused).
        """
        timeout = httpx2.Timeout(connect=self._client.timeout.connect, read=wait, write=wait, pool=None)
        request = self._client.build_request("OPTIONS", self.url, timeout=timeout)
        try:
            response = await self._client.send(request, stream=True, follow_redirects=False)
        except UNREACHABLE:
            raise
        except httpx2.HTTPError:
            return None  # connected: the server is there, whatever it made of the request
        await response.aclose()
        return response.status_code

    @staticmethod
    async def read_body(response: httpx2.Response, cap: int) -> bytes:
        """The whole body of ``response``, at most ``cap`` bytes.

        Raises:
            MessageTooLarge: the body is larger (declared or read).
            httpx2.HTTPError: reading it failed.
        """
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > cap:
            raise MessageTooLarge
        body = bytearray()
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > cap:
                raise MessageTooLarge
        return bytes(body)
