"""Where the names ``serve``'s client was shown live: a request the guard cannot route, whose server is down,
is told so (-32603 naming the server) and may wait for its restart, instead of being answered as unknown.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio

from ..peer.backoff import HOLD_MAX
from .catalog import ORIGIN_KEY
from .naming import could_name

if TYPE_CHECKING:
    from .link import Link
    from .merged_lists import MergedLists

__all__ = ["Whereabouts"]


class Whereabouts:
    """The server of every tool, prompt (exposed name) and resource (URI) the client was shown.

    Args:
        links: the session's links, in config order.
        name_format: ``guard.nameFormat`` (a tool or prompt of a server that never listed is known by its prefix).
        request_timeout: seconds a restarted server may take to be ready, beyond :data:`~.backoff.HOLD_MAX`.
    """

    def __init__(self, links: list[Link], name_format: str, request_timeout: float) -> None:
        self.links = links
        self.name_format = name_format
        self.request_timeout = request_timeout
        self._by_name = {link.name: link for link in links}
        self._known: dict[str, dict[str, str]] = {"tool": {}, "prompt": {}, "resource": {}}

    def remember(self, view: MergedLists) -> None:
        """Note the names and URIs the client can see now in ``view``, with their servers."""
        for tool in view.catalog.tools:
            self._known["tool"][tool["name"]] = tool["_meta"][ORIGIN_KEY]["server"]
        for prompt in view.prompts:
            self._known["prompt"][prompt["name"]] = prompt["_meta"][ORIGIN_KEY]["server"]
        for server, resource in view.resources.resources:
            self._known["resource"][resource["uri"]] = server

    async def restarted(self, server: str) -> bool:
        """``wrap``'s rule (``peer.backoff.HOLD_MAX``) for a request to ``server``, now down: when its next
        start is at most HOLD_MAX s away (or under way), wait for it to be ready (at most HOLD_MAX s plus
        ``request_timeout``); True once it is. False at once when the start is further away (the
        request is answered "not running right now" then), and as soon as the start it waited for fails
        (``Link.failed_starts``; docs/gateway.md): red team 37 F10, a request waited on through a failed
        start whose next one was again at most HOLD_MAX s away, and was answered only after the second."""
        link = self._by_name.get(server)
        if link is None or link.peer.wait > HOLD_MAX:
            return False
        failed = link.failed_starts
        with anyio.move_on_after(HOLD_MAX + self.request_timeout):
            while not link.ready:
                if link.failed_starts != failed or link.peer.wait > HOLD_MAX or link.closing:
                    return False
                await anyio.sleep(0.02)
            return True
        return False

    def down_owner(self, kind: str, name: str) -> str | None:
        """The server, now down, that a tool, prompt (exposed name) or resource (URI) the guard
        cannot route belongs to: the client was shown it from that server, or (a tool or prompt
        of a server that never listed) its name has that server's prefix. ``None``: unknown."""
        server = self._known[kind].get(name)
        link = self._by_name.get(server) if server is not None else None
        if link is not None:
            return None if link.ready else link.name
        if kind == "resource":
            return None
        owners = [ln.name for ln in self.links if not ln.ready and could_name(name, ln.name, self.name_format)]
        return owners[0] if len(owners) == 1 else None
