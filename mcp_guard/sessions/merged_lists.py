"""Everything one client view of ``serve`` sees, merged over the upstreams: tools, prompts, resources.

:class:`MergedLists` holds the tool :class:`~.catalog.Catalog` (named, pinned, classified, routed), the
prompts (named like tools: :func:`expose_prompts`) and the resources and resource templates (routed by
URI: ``naming.ResourceMap``). The gateway keeps one for the handshake era and one per 2026-07-28
envelope. Each list has its generation (``catalog.next_generation``), changed only when the list is
rebuilt from a listing that differs from the one before, so a cursor stays valid while its list is
unchanged.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread

from ..config import GatewayConfig
from ..wire.meta import META_PREFIX
from ..wire.pieces import count_nodes
from .catalog import Catalog, exposed_item, listing_text, next_generation
from .client_writer import BIG_NODES
from .naming import CursorCodec, NameMap, ResourceMap

if TYPE_CHECKING:
    from ..auth.principal import Principal
    from ..calls.pinning import LockFile

__all__ = ["MergedLists", "expose_prompts"]

log = logging.getLogger("mcp_guard")


def expose_prompts(
    listings: Mapping[str, Sequence[Any]], name_format: str, order: Sequence[str]
) -> tuple[NameMap[Any], list[dict[str, Any]]]:
    """Prompts of every upstream, named like tools: the name map and the prompts to list.

    Each listed prompt is the upstream's object with ``name`` exposed and
    ``_meta["mcp-guard/origin"] = {"server", "prompt"}``; guard-owned ``_meta`` keys from the
    upstream are dropped. ``prompts/get`` is routed by ``names.origin(exposed)``.
    """
    names: NameMap[Any] = NameMap.build([(s, listings[s]) for s in order if s in listings], name_format)
    listed = []
    for exposed, (origin, prompt) in names.items.items():
        cleaned = dict(prompt)
        if type(cleaned.get("_meta")) is dict:
            cleaned["_meta"] = {k: v for k, v in cleaned["_meta"].items() if not str(k).startswith(META_PREFIX)}
        listed.append(exposed_item(cleaned, exposed, origin.server, "prompt"))
    return names, listed


class MergedLists:
    """Every list one client view sees, merged over the upstreams (handshake era, or one 2026-07-28 envelope).

    Args:
        config, lock, cursors: as for :class:`Catalog` (one codec per session: its cursors
            are refused by every other list, see the module docstring).

    Attributes:
        catalog: the tool list and the routes of ``tools/call``.
        prompt_names: exposed prompt name → origin (``prompts/get``, ``completion/complete``).
        prompts: the prompts listed, each renamed (see :func:`expose_prompts`).
        resources: the URI → server table, with the resources and templates listed.
    """

    def __init__(self, config: GatewayConfig, lock: LockFile | None, cursors: CursorCodec) -> None:
        self.config = config
        self.cursors = cursors
        self.catalog = Catalog(config, lock, cursors)
        self.prompt_names: NameMap[Any] = NameMap()
        self.prompts: list[dict[str, Any]] = []
        self.resources = ResourceMap()
        self._generations = {"prompts": next_generation(), "resources": next_generation()}
        self._prompts: dict[str, list[Any]] = {}
        self._resources: dict[str, tuple[list[Any], list[Any]]] = {}
        self._texts: dict[tuple[str, str], bytes | None] = {}
        self._notes: dict[str, set[str]] = {"prompts": set(), "resources": set()}
        self._limiter = anyio.CapacityLimiter(1)  # one listing prepared at a time (put_tools)
        self._preparing = 0  # listings being prepared (put_tools)
        self._idle = anyio.Event()

    def config_order(self) -> list[str]:
        """Server names in config order."""
        return [s.name for s in self.config.servers]

    def set_tools(self, server: str, tools: Sequence[Any] | None) -> set[str]:
        """Replace ``server``'s tools (``None``: none); returns ``{"tools"}`` when what the client sees changed."""
        before = self.catalog.tools
        if not self.catalog.update(server, tools):
            return set()
        return {"tools"} if self.catalog.tools != before else set()

    async def put_tools(self, server: str, tools: Sequence[Any] | None, still: Callable[[], bool]) -> set[str]:
        """:meth:`set_tools`, a big listing (more than ``BIG_NODES`` JSON values) prepared in a worker thread
        first (``Catalog.prepare``: no message waits behind its classification, issue 25 item 1). When
        ``still()`` is false after that, the listing is no longer the server's (it went down, or listed
        again): nothing is changed, and ``set()`` returned (the later change makes its own call)."""
        if tools is None or count_nodes(tools, BIG_NODES) <= BIG_NODES:
            return self.set_tools(server, tools)
        if not self._preparing:
            self._idle = anyio.Event()
        self._preparing += 1
        try:
            text = await anyio.to_thread.run_sync(self.catalog.prepare, server, tools, limiter=self._limiter)
            if not still():
                return set()
            before = self.catalog.tools
            if not self.catalog.update(server, tools, text):
                return set()
            return {"tools"} if self.catalog.tools != before else set()
        finally:
            self._preparing -= 1
            if not self._preparing:
                self._idle.set()

    async def prepared(self) -> None:
        """Wait until no listing is being prepared (:meth:`put_tools`): the view then holds every listing
        put so far (a ``tools/list`` after an upstream came up is answered with its tools)."""
        while self._preparing:
            await self._idle.wait()

    def set_prompts(self, server: str, prompts: Sequence[Any] | None) -> set[str]:
        """Replace ``server``'s prompts (``None``: it offers none, or is down); returns ``{"prompts"}`` on a change."""
        if not self._replace(self._prompts, server, "prompts", None if prompts is None else list(prompts)):
            return set()
        before = self.prompts
        order = self.config_order()
        self.prompt_names, self.prompts = expose_prompts(self._prompts, self.config.guard.name_format, order)
        self._note("prompts", [f"prompt name collision: {c.describe()}" for c in self.prompt_names.collisions])
        self._generations["prompts"] = next_generation()
        return {"prompts"} if self.prompts != before else set()

    def set_resources(self, server: str, resources: Sequence[Any] | None, templates: Sequence[Any] | None) -> set[str]:
        """Replace ``server``'s resources and templates (both ``None``: none); returns ``{"resources"}`` on a change."""
        pair = None if resources is None and templates is None else (list(resources or []), list(templates or []))
        if not self._replace(self._resources, server, "resources", pair):
            return set()
        before = (self.resources.resources, self.resources.templates)
        order = [s for s in self.config_order() if s in self._resources]
        self.resources = ResourceMap.build(
            {s: self._resources[s][0] for s in order}, {s: self._resources[s][1] for s in order}
        )
        notes = [
            f"resource listed by several servers, withheld: {uri[:200]} ({', '.join(servers)})"
            for uri, servers in self.resources.withheld_uris.items()
        ]
        notes += [
            f"resource template listed by several servers, withheld: {text[:200]} ({', '.join(servers)})"
            for text, servers in self.resources.withheld_templates.items()
        ]
        self._note("resources", notes)
        self._generations["resources"] = next_generation()
        return {"resources"} if (self.resources.resources, self.resources.templates) != before else set()

    def _note(self, kind: str, lines: list[str]) -> None:
        """Log each finding about the ``kind`` list once, until it changes."""
        for line in lines:
            if line not in self._notes[kind]:
                log.warning("%s", line)
        self._notes[kind] = set(lines)

    def remove(self, server: str) -> set[str]:
        """``server`` is down: its listings leave every list; returns the kinds whose visible list changed."""
        return self.set_tools(server, None) | self.set_prompts(server, None) | self.set_resources(server, None, None)

    def _replace(self, store: dict[str, Any], server: str, kind: str, value: Any) -> bool:
        key = (server, kind)
        if value is None:
            if server not in store:
                return False
            del store[server]
            self._texts.pop(key, None)
            return True
        text = listing_text(value)
        if server in store and text is not None and self._texts.get(key) == text:
            return False
        store[server] = value
        self._texts[key] = text
        return True

    def page(self, member: str, cursor: Any, principal: Principal | None = None) -> dict[str, Any]:
        """One page of a merged list: ``member`` is ``tools``, ``prompts``, ``resources`` or
        ``resourceTemplates``; the result holds that member and, when more remain, ``nextCursor``.
        ``principal``: who asks (the tools it is shown, :meth:`Catalog.view_of`).

        Raises:
            InvalidCursor: a cursor this view did not issue for the list as it is now (-32602).
        """
        if member == "tools":
            return self.catalog.page(cursor, principal)
        if member == "prompts":
            items: list[Any] = self.prompts
            generation = self._generations["prompts"]
        else:
            pairs = self.resources.resources if member == "resources" else self.resources.templates
            items = [item for _, item in pairs]
            generation = self._generations["resources"]
        page, next_cursor = self.cursors.page(items, cursor, member, generation, self.config.guard.page_size)
        result: dict[str, Any] = {member: page}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        return result
