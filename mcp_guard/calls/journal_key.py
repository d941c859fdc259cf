"""The journal's argument digest key: ``arguments_sha256`` is HMAC-SHA256, not a plain hash.

A plain SHA-256 of short arguments (a PIN, ``yes``, a ticket id) is reversed by trying every
candidate; a keyed digest (HMAC-SHA256, RFC 2104) cannot be, without the key. Two calls with the
same arguments in one journal still have the same digest, so an operator can compare them.

Where the key comes from (first that applies):

- the environment variable :data:`KEY_ENV` (any non-empty text, used as its UTF-8 bytes): set it to
  the same secret on every replica for digests comparable across replicas and in PostgreSQL;
- a JSONL journal ``J``: the file ``J.key`` beside it (64 hex digits, 32 random bytes), created
  with mode 0600 on first use and read after;
- a PostgreSQL journal without :data:`KEY_ENV`: a random key for this process (digests comparable
  within one replica's run only; a warning says so).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["KEY_ENV", "argument_digest", "key_path", "load_key"]

KEY_ENV: Final = "MCP_GUARD_JOURNAL_KEY"
"""The environment variable holding a shared journal key (its value never appears in logs or errors)."""


def key_path(journal: Path) -> Path:
    """The key file of the JSONL journal ``journal``: ``<journal>.key`` in the same folder."""
    return journal.with_name(journal.name + ".key")


def load_key(journal: Path | None, environ: Mapping[str, str] | None = None) -> tuple[bytes, str]:
    """The digest key and where it came from (``"env"``, ``"file"`` or ``"process"``).

    Args:
        journal: the JSONL journal's path, or None (PostgreSQL: no file beside it).
        environ: the environment (default ``os.environ``).

    Raises:
        OSError: the key file cannot be created or read; ValueError: it does not hold 64 hex digits.
    """
    env = os.environ if environ is None else environ
    shared = env.get(KEY_ENV, "")
    if shared:
        return shared.encode("utf-8"), "env"
    if journal is None:
        return secrets.token_bytes(32), "process"
    path = key_path(journal)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
    except FileExistsError:
        text = path.read_text(encoding="ascii").strip()
        if len(text) != 64:
            raise ValueError(f"{path} does not hold a journal key (64 hex digits)") from None
        return bytes.fromhex(text), "file"
    try:
        key = secrets.token_bytes(32)
        os.write(fd, (key.hex() + "\n").encode("ascii"))
        os.fsync(fd)
    finally:
        os.close(fd)
    return key, "file"


def argument_digest(key: bytes, arguments: Any) -> str:
    """Lower-case hex HMAC-SHA256 under ``key`` of the arguments' RFC 8785 canonical JSON.

    Raises:
        ValueError: the arguments have no canonical form (:func:`.jcs.canonical_json`).
    """
    from .jcs import canonical_json

    return hmac.new(key, canonical_json(arguments), hashlib.sha256).hexdigest()
