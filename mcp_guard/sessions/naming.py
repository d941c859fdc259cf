"""Names in the merged lists: exposed tool and prompt names, resource routes, the guard's cursors.

- Tools and prompts of every upstream are exposed as ``name_format`` makes them
  (``{server}__{tool}`` by default), made to fit ``^[a-zA-Z0-9_-]{1,64}$``, the tool name
  rule of several LLM APIs (the MCP spec allows 1–128 of ``[A-Za-z0-9_.-]``): every other
  character becomes ``_``; a name longer than 64 keeps its first 55 characters and gets
  ``_`` and 8 hex digits of the SHA-256 of ``[server, name]`` (JSON), so two long names
  that share a prefix still differ.
- Two items that map to one exposed name are both withheld and reported (a
  :class:`Collision`): which one the client meant is unknowable, so neither is offered
  (fail closed); the result never depends on listing or registration order. An upstream
  listing one name twice is a collision too.
- Resources keep their URIs; ``resources/read`` is routed by a URI → server table. A URI
  listed by two servers is withheld and reported. A URI no server lists is routed by the
  resource templates (RFC 6570 matching of the ``mcp`` SDK): to the one server whose
  templates match it, never to a guess.
- The merged lists are paged by the guard with its own cursors: opaque, bound to the list
  kind and to the list's generation, and signed (HMAC-SHA256 with a per-process key), so a
  changed, forged or stale cursor is refused with JSON-RPC -32602 (:class:`InvalidCursor`).

No I/O here.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
import secrets
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Generic, TypeVar

from mcp.shared.uri_template import InvalidUriTemplate, UriTemplate

from ..config import DEFAULT_NAME_FORMAT
from ..errors import GuardError

__all__ = [
    "HASH_DIGITS",
    "MAX_NAME_LENGTH",
    "NAME_RULE",
    "Collision",
    "CursorCodec",
    "InvalidCursor",
    "NameMap",
    "Origin",
    "ResourceMap",
    "UriRoute",
    "could_name",
    "exposed_name",
]

MAX_NAME_LENGTH: Final = 64
HASH_DIGITS: Final = 8
NAME_RULE: Final = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
"""The exposed-name rule (``re.fullmatch``-equivalent with ``^...$``)."""

_OTHER = re.compile(r"[^a-zA-Z0-9_-]")

T = TypeVar("T")


def exposed_name(server: str, name: str, name_format: str = DEFAULT_NAME_FORMAT) -> str:
    """The name under which ``server``'s tool (or prompt) ``name`` is offered.

    Args:
        server: the server's name in the config.
        name: the upstream's name for the item.
        name_format: a ``str.format`` pattern with ``{tool}`` and optionally ``{server}``.

    Returns:
        A string matching :data:`NAME_RULE` (an empty result becomes ``_``).
    """
    text = _OTHER.sub("_", name_format.format(server=server, tool=name)) or "_"
    if len(text) <= MAX_NAME_LENGTH:
        return text
    digest = hashlib.sha256(json.dumps([server, name]).encode("utf-8")).hexdigest()[:HASH_DIGITS]
    return f"{text[: MAX_NAME_LENGTH - HASH_DIGITS - 1]}_{digest}"


def could_name(exposed: str, server: str, name_format: str = DEFAULT_NAME_FORMAT) -> bool:
    """Whether ``exposed`` has the shape of a name of ``server``'s (its prefix and suffix under
    ``name_format``): which server a name would belong to, when that server has listed nothing."""
    before, _, after = name_format.partition("{tool}")
    prefix = _OTHER.sub("_", before.format(server=server))
    suffix = _OTHER.sub("_", after.format(server=server))
    if len(exposed) <= len(prefix) + len(suffix) or not exposed.startswith(prefix):
        return False
    return exposed.endswith(suffix) or len(exposed) == MAX_NAME_LENGTH  # a long name lost its suffix


@dataclass(frozen=True, slots=True, order=True)
class Origin:
    """Where an exposed item comes from: the server's config name and the upstream's own name."""

    server: str
    name: str

    @property
    def key(self) -> str:
        """``server/name``, the key of the lock file and of policy patterns."""
        return f"{self.server}/{self.name}"


@dataclass(frozen=True, slots=True)
class Collision:
    """Items withheld because they map to one exposed name (sorted origins; duplicates kept)."""

    exposed: str
    origins: tuple[Origin, ...]

    def describe(self) -> str:
        """One line for the log and ``check``."""
        shown = ", ".join(o.key for o in self.origins)
        return f"`{self.exposed}` would name {len(self.origins)} items ({shown}); all are withheld"


@dataclass
class NameMap(Generic[T]):
    """Exposed name → item, built from every upstream's listing (tools or prompts).

    Attributes:
        items: usable exposed names → ``(origin, item)``, in listing order (servers in the
            order given, then each server's order).
        collisions: withheld names, sorted by exposed name.
        nameless: ``(server, item)`` for items without a string ``name``, or with an empty one (withheld).
    """

    items: dict[str, tuple[Origin, T]] = field(default_factory=dict)
    collisions: list[Collision] = field(default_factory=list)
    nameless: list[tuple[str, T]] = field(default_factory=list)

    @classmethod
    def build(
        cls,
        listings: Iterable[tuple[str, Iterable[T]]],
        name_format: str = DEFAULT_NAME_FORMAT,
        offered: Callable[[Origin], bool] | None = None,
    ) -> NameMap[T]:
        """Map the items of ``listings`` (``(server, items)`` pairs) to exposed names.

        Each item is a dict with a ``name`` (the wire form of a tool or prompt); an item
        that is not a dict, or has no string ``name`` or an empty one, goes to :attr:`nameless`.
        ``offered``: whether the gateway offers an item at all (``guard.deny``/``guard.hide`` say no for
        every caller); of several items that map to one name, the one offered takes it when it is the only
        one offered (the others are never listed nor callable, so no client can mean them: red team 38 F3).
        """
        claims: dict[str, list[tuple[Origin, T]]] = {}
        out = cls()
        for server, items in listings:
            for item in items:
                name = item.get("name") if isinstance(item, dict) else None
                if type(name) is not str or not name:
                    out.nameless.append((server, item))
                    continue
                origin = Origin(server, name)
                claims.setdefault(exposed_name(server, name, name_format), []).append((origin, item))
        for exposed, claimants in claims.items():
            if len(claimants) > 1 and offered is not None:
                alive = [c for c in claimants if offered(c[0])]
                claimants = alive if len(alive) == 1 else claimants
            if len(claimants) == 1:
                out.items[exposed] = claimants[0]
            else:
                out.collisions.append(Collision(exposed, tuple(sorted(o for o, _ in claimants))))
        out.collisions.sort(key=lambda c: c.exposed)
        return out

    def origin(self, exposed: str) -> Origin | None:
        """Where the exposed name leads, or ``None`` (unknown or withheld)."""
        found = self.items.get(exposed)
        return None if found is None else found[0]

    def exposed_for(self, origin: Origin) -> str | None:
        """The exposed name of an upstream item, or ``None`` when it is withheld or unknown."""
        for exposed, (o, _) in self.items.items():
            if o == origin:
                return exposed
        return None


# --- resources --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class UriRoute:
    """Where a ``resources/read`` (or subscribe) goes: ``server``, or ``None`` with the reason."""

    server: str | None
    reason: str = ""


@dataclass
class ResourceMap:
    """URI → server, from every upstream's ``resources/list`` and ``resources/templates/list``.

    Attributes:
        resources: ``(server, resource)`` offered to the client, in listing order.
        templates: ``(server, template)`` offered to the client, in listing order.
        withheld_uris: URIs listed by more than one server → those servers (sorted).
        withheld_templates: ``uriTemplate`` strings listed by more than one server → servers.
        invalid: ``(server, item, reason)`` for entries without a string ``uri`` /
            ``uriTemplate`` (withheld).
    """

    resources: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    templates: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    withheld_uris: dict[str, tuple[str, ...]] = field(default_factory=dict)
    withheld_templates: dict[str, tuple[str, ...]] = field(default_factory=dict)
    invalid: list[tuple[str, Any, str]] = field(default_factory=list)
    _uris: dict[str, str] = field(default_factory=dict)
    _parsed: list[tuple[str, UriTemplate]] = field(default_factory=list)
    _withheld_parsed: list[tuple[str, UriTemplate]] = field(default_factory=list)

    @classmethod
    def build(
        cls,
        resources: Mapping[str, Sequence[Any]],
        templates: Mapping[str, Sequence[Any]] | None = None,
    ) -> ResourceMap:
        """Build the table from each server's resources and resource templates (wire dicts)."""
        out = cls()
        owners: dict[str, set[str]] = {}
        for server, items in resources.items():
            for item in items:
                uri = item.get("uri") if type(item) is dict else None
                if type(uri) is not str:
                    out.invalid.append((server, item, "no string `uri`"))
                    continue
                owners.setdefault(uri, set()).add(server)
        out.withheld_uris = {u: tuple(sorted(s)) for u, s in owners.items() if len(s) > 1}
        out._uris = {u: next(iter(s)) for u, s in owners.items() if len(s) == 1}
        for server, items in resources.items():
            for item in items:
                if type(item) is dict and type(item.get("uri")) is str and item["uri"] in out._uris:
                    out.resources.append((server, item))
        template_owners: dict[str, set[str]] = {}
        for server, items in (templates or {}).items():
            for item in items:
                text = item.get("uriTemplate") if type(item) is dict else None
                if type(text) is not str:
                    out.invalid.append((server, item, "no string `uriTemplate`"))
                    continue
                template_owners.setdefault(text, set()).add(server)
        out.withheld_templates = {t: tuple(sorted(s)) for t, s in template_owners.items() if len(s) > 1}
        for text in out.withheld_templates:
            try:
                out._withheld_parsed.append((text, UriTemplate.parse(text)))
            except InvalidUriTemplate:
                continue
        for server, items in (templates or {}).items():
            for item in items:
                text = item.get("uriTemplate") if type(item) is dict else None
                if type(text) is not str or text in out.withheld_templates:
                    continue
                out.templates.append((server, item))
                try:
                    out._parsed.append((server, UriTemplate.parse(text)))
                except InvalidUriTemplate:
                    out.invalid.append((server, item, "a `uriTemplate` the guard cannot match; offered, not routed"))
        return out

    def route(self, uri: str) -> UriRoute:
        """The server to send a request about ``uri`` to.

        A listed URI goes to its server; a URI listed by several servers is refused; an
        unlisted one goes to the single server whose templates match it, and is refused
        when none or several do, or when it matches a template listed by several servers
        (withheld: which of them would serve it is unknowable).
        """
        if uri in self.withheld_uris:
            servers = ", ".join(self.withheld_uris[uri])
            return UriRoute(None, f"the resource is listed by more than one server ({servers}); it is withheld")
        server = self._uris.get(uri)
        if server is not None:
            return UriRoute(server)
        for text, template in self._withheld_parsed:
            try:
                matched = template.match(uri) is not None
            except ValueError:
                continue
            if matched:
                servers = ", ".join(self.withheld_templates[text])
                return UriRoute(
                    None,
                    f"the URI matches the resource template {text[:200]}, which several servers list ({servers}); "
                    "it is withheld",
                )
        matching = set()
        for owner, template in self._parsed:
            try:
                if template.match(uri) is not None:
                    matching.add(owner)
            except ValueError:
                continue
        if len(matching) == 1:
            return UriRoute(matching.pop())
        if matching:
            return UriRoute(
                None, f"the URI matches resource templates of several servers ({', '.join(sorted(matching))})"
            )
        return UriRoute(None, "no server lists this resource or a template matching it")


# --- cursors ------------------------------------------------------------------------------------


class InvalidCursor(GuardError, ValueError):
    """A cursor the guard did not mint for this list (changed, forged, stale or of another list).

    Answered with JSON-RPC -32602 (MCP, "Pagination": invalid cursors are invalid params).
    """


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class CursorCodec:
    """Mints and reads the guard's pagination cursors.

    A cursor is ``base64url(JSON payload) "." base64url(HMAC-SHA256(key, payload)[:16])``;
    the payload is ``{"k": list kind, "g": generation, "o": offset}``. The key is random per
    codec (per guard process): a cursor does not survive a restart, and a client cannot
    make one up.

    Args:
        key: the HMAC key (tests pass a fixed one); default 32 random bytes.
    """

    MAC_BYTES: Final = 16
    MAX_LENGTH: Final = 512

    def __init__(self, key: bytes | None = None) -> None:
        self._key = key if key is not None else secrets.token_bytes(32)

    def _mac(self, payload: bytes) -> bytes:
        return hmac.new(self._key, payload, hashlib.sha256).digest()[: self.MAC_BYTES]

    def encode(self, kind: str, generation: int, offset: int) -> str:
        """The cursor for the page of list ``kind`` (generation ``generation``) that starts at ``offset``."""
        payload = json.dumps({"k": kind, "g": generation, "o": offset}, separators=(",", ":")).encode()
        return f"{_b64(payload)}.{_b64(self._mac(payload))}"

    def decode(self, cursor: Any, kind: str, generation: int) -> int:
        """The offset a cursor stands for.

        Raises:
            InvalidCursor: not a string the guard minted, for another list kind, or for an
                older generation of the list (the list changed; list again from the start).
        """
        if type(cursor) is not str or len(cursor) > self.MAX_LENGTH or cursor.count(".") != 1:
            raise InvalidCursor("Invalid params: the cursor is not one the guard issued")
        body, mac = cursor.split(".")
        try:
            payload, given = _unb64(body), _unb64(mac)
        except (binascii.Error, ValueError):
            raise InvalidCursor("Invalid params: the cursor is not one the guard issued") from None
        if not hmac.compare_digest(self._mac(payload), given):
            raise InvalidCursor("Invalid params: the cursor is not one the guard issued")
        data = json.loads(payload)
        if data.get("k") != kind:
            raise InvalidCursor(f"Invalid params: the cursor belongs to another list, not {kind}")
        if data.get("g") != generation:
            raise InvalidCursor(f"Invalid params: the {kind} list changed since this cursor; list again from the start")
        offset = data.get("o")
        assert type(offset) is int  # the MAC proves the guard wrote it
        return offset

    def page(
        self, items: Sequence[T], cursor: Any, kind: str, generation: int, page_size: int
    ) -> tuple[list[T], str | None]:
        """One page of ``items``: ``(page, nextCursor or None)``; ``cursor`` ``None`` is the first page.

        Raises:
            InvalidCursor: see :meth:`decode`.
        """
        start = 0 if cursor is None else self.decode(cursor, kind, generation)
        if start > len(items):
            raise InvalidCursor("Invalid params: the cursor points past the end of the list")
        end = start + page_size
        return list(items[start:end]), (self.encode(kind, generation, end) if end < len(items) else None)
