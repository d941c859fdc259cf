"""``serve``'s routing of the requests that name a prompt or a resource: ``prompts/get``, ``resources/read``,
``resources/subscribe``, ``resources/unsubscribe`` and ``completion/complete``.

A prompt is named like a tool (``naming.NameMap``: the exposed name, mapped back to its server's own);
a resource goes by its URI (``naming.ResourceMap``). The request is forwarded to that server's link, the
prompt under its own name there; one whose server is down is told so (-32603 naming the server, and it
waits for a restart under way: ``whereabouts``); an unknown name or URI gets -32602. In the 2026-07-28 era
only the listing of the name's own server needs to be fresh (``ModernEra._modern_routed``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, Protocol

from ..wire.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, error_response
from ..wire.meta import is_modern
from .link import Forwarded, Link, unavailable

if TYPE_CHECKING:
    from .merged_lists import MergedLists
    from .whereabouts import Whereabouts

__all__ = ["DOWN", "NamedRoutes", "RoutingSession"]

DOWN: Final = "mcp-guard: the upstream server of this request is not running right now; the guard is restarting it"
"""The -32603 text for a request routed to a server whose link is not ready (it is being started again)."""


class RoutingSession(Protocol):
    """What :class:`NamedRoutes` uses of its session (``gateway.Gateway``)."""

    whereabouts: Whereabouts

    async def view_for(
        self, params: Any, kind: str, server_of: Callable[[MergedLists], str | None] | None = None
    ) -> MergedLists:
        """The merged lists the request is served from (fresh for ``kind``)."""

    async def reply(self, message: dict[str, Any]) -> None:
        """Send the client one message."""

    async def forward(self, link: Link, message: dict[str, Any], forwarded: Forwarded) -> None:
        """Forward a client request to ``link`` (answered through the session)."""


class NamedRoutes:
    """The routes of one gateway session's prompt and resource requests.

    Args:
        session: the session (its views, its reply, its forwarding).
        by_name: the session's links by server name.

    Attributes:
        subscriptions: resource URI -> the server the client subscribed to it at (replayed after a restart).
    """

    def __init__(self, session: RoutingSession, by_name: dict[str, Link]) -> None:
        self.session = session
        self.by_name = by_name
        self.subscriptions: dict[str, str] = {}

    def subscriptions_of(self, link: Link) -> list[str]:
        """The resource URIs the client subscribed to at ``link``."""
        return [uri for uri, server in self.subscriptions.items() if server == link.name]

    async def prompt(self, message: dict[str, Any], name: Any, path: tuple[str, ...]) -> None:
        """``prompts/get`` (``path`` ``("name",)``) or a ``completion/complete`` of a ``ref/prompt``
        (``("ref", "name")``): to the server of the prompt named ``name``, under its own name there."""
        request_id = message["id"]

        def server_of(view: MergedLists) -> str | None:
            origin = view.prompt_names.origin(name) if type(name) is str else None
            return origin.server if origin is not None else None

        view = await self.session.view_for(message.get("params"), "prompts", server_of)
        origin = view.prompt_names.origin(name) if type(name) is str else None
        down = self.session.whereabouts.down_owner("prompt", name) if origin is None and type(name) is str else None
        if down and await self.session.whereabouts.restarted(down):
            view = await self.session.view_for(message.get("params"), "prompts", server_of)
            origin = view.prompt_names.origin(name)
        if origin is None:
            down = self.session.whereabouts.down_owner("prompt", name) if type(name) is str else None
            if down is not None:
                await self.session.reply(
                    error_response(request_id, INTERNAL_ERROR, unavailable(down, "prompt", self.by_name[down].failure))
                )
                return
            await self.session.reply(error_response(request_id, INVALID_PARAMS, "Invalid params: unknown prompt"))
            return
        params = dict(message["params"])
        if path == ("name",):
            params["name"] = origin.name
        else:
            params["ref"] = {**params["ref"], "name": origin.name}
        await self._to_link(self.by_name[origin.server], {**message, "params": params})

    async def resource(self, message: dict[str, Any], uri: Any) -> None:
        """``resources/read``, ``subscribe``, ``unsubscribe`` or a ``completion/complete`` of a ``ref/resource``: to
        the server the URI table routes ``uri`` to (a subscription is noted, to be replayed after a restart)."""
        request_id = message["id"]
        if type(uri) is not str:
            await self.session.reply(
                error_response(request_id, INVALID_PARAMS, "Invalid params: a string `uri` is needed")
            )
            return

        def server_of(view: MergedLists) -> str | None:
            return view.resources.route(uri).server

        view = await self.session.view_for(message.get("params"), "resources", server_of)
        route = view.resources.route(uri)
        if (
            route.server is None
            and (down := self.session.whereabouts.down_owner("resource", uri))
            and await self.session.whereabouts.restarted(down)
        ):
            view = await self.session.view_for(message.get("params"), "resources", server_of)
            route = view.resources.route(uri)
        if route.server is None:
            down = self.session.whereabouts.down_owner("resource", uri)
            if down is not None:
                await self.session.reply(
                    error_response(
                        request_id, INTERNAL_ERROR, unavailable(down, "resource", self.by_name[down].failure)
                    )
                )
                return
            await self.session.reply(error_response(request_id, INVALID_PARAMS, f"Invalid params: {route.reason}"))
            return
        method = message["method"]
        if method == "resources/subscribe":
            self.subscriptions[uri] = route.server
        elif method == "resources/unsubscribe":
            self.subscriptions.pop(uri, None)
        await self._to_link(self.by_name[route.server], message)

    async def _to_link(self, link: Link, message: dict[str, Any]) -> None:
        if not link.ready:
            await self.session.reply(error_response(message["id"], INTERNAL_ERROR, DOWN))
            return
        modern = is_modern(message.get("params"))
        await self.session.forward(link, message, Forwarded(message["id"], message["method"], modern=modern))

    async def complete(self, message: dict[str, Any]) -> None:
        """``completion/complete``: by its ``ref``, a prompt's or a resource's."""
        params = message.get("params")
        ref = params.get("ref") if type(params) is dict else None
        if type(ref) is dict and ref.get("type") == "ref/prompt":
            await self.prompt(message, ref.get("name"), ("ref", "name"))
        elif type(ref) is dict and ref.get("type") == "ref/resource":
            await self.resource(message, ref.get("uri"))
        else:
            text = "Invalid params: completion/complete needs a ref/prompt or ref/resource"
            await self.session.reply(error_response(message["id"], INVALID_PARAMS, text))
