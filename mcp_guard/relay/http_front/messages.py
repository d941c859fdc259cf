"""Messages of the HTTP front: map keys of ids, kinds, error bodies, and a request's stream (:class:`Exchange`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from ...wire.jsonrpc import NO_ID, dumps, error_response, id_key, valid_id
from ...wire.meta import PROTOCOL_VERSION_KEY
from .config import EXCHANGE_BUFFER

__all__ = ["Exchange", "Item", "Key", "envelope_version", "error_bytes", "map_key", "message_kind", "progress_token"]

Key = tuple[bool, Any]
"""A map key of a JSON-RPC id (see :func:`map_key`)."""


def map_key(request_id: Any) -> Key | None:
    """A map key for a JSON-RPC id (``"1"`` and ``1`` differ, ``1`` and ``1.0`` do not); None if not an id."""
    return id_key(request_id) if valid_id(request_id) else None


def message_kind(message: dict[str, Any]) -> str | None:
    """``request``, ``notification``, ``response`` or None (not a JSON-RPC message)."""
    if "method" in message:
        return "request" if "id" in message else "notification"
    if "id" in message and ("result" in message or "error" in message):
        return "response"
    return None


def envelope_version(message: dict[str, Any]) -> Any:
    """The 2026-07-28 ``_meta`` protocol version of a message, or :data:`NO_ID` when it has none."""
    params = message.get("params")
    meta = params.get("_meta") if type(params) is dict else None
    if type(meta) is dict and PROTOCOL_VERSION_KEY in meta:
        return meta[PROTOCOL_VERSION_KEY]
    return NO_ID


def error_bytes(request_id: Any, code: int, text: str) -> bytes:
    return dumps(error_response(request_id, code, text))


@dataclass
class Item:
    """One message for a request stream: its bytes, whether it is the response, the HTTP status for JSON."""

    data: bytes
    final: bool = False
    status: int = 200


@dataclass
class Exchange:
    """A POSTed request waiting for its response, or (``client_id`` unused) a session's GET stream."""

    client_id: Any
    progress: Key | None = None
    initialize: bool = False
    discover: bool = False
    answered: bool = False
    sender: MemoryObjectSendStream[Item] = field(init=False)
    receiver: MemoryObjectReceiveStream[Item] = field(init=False)

    def __post_init__(self) -> None:
        self.sender, self.receiver = anyio.create_memory_object_stream[Item](EXCHANGE_BUFFER)

    async def put(self, item: Item) -> bool:
        """Queue ``item``; False when the HTTP side is gone (or the stream already ended)."""
        try:
            await self.sender.send(item)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            return False
        if item.final:
            self.answered = True
            self.sender.close()
        return True

    def offer(self, item: Item) -> bool:
        """Queue ``item`` if there is room now (never waits); False otherwise."""
        try:
            self.sender.send_nowait(item)
        except (anyio.WouldBlock, anyio.BrokenResourceError, anyio.ClosedResourceError):
            return False
        if item.final:
            self.answered = True
            self.sender.close()
        return True

    async def next(self) -> Item | None:
        """The next item, or None when the stream ended without one."""
        try:
            return await self.receiver.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            return None


def progress_token(message: dict[str, Any]) -> Any:
    params = message.get("params")
    meta = params.get("_meta") if type(params) is dict else None
    return meta.get("progressToken") if type(meta) is dict else None
