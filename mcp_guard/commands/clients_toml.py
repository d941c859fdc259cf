"""A TOML reader that keeps every byte: where each table, key, value and comment stands, for editing in place.

``mcp-guard install`` rewrites the server entries of Codex's ``config.toml``, a file people
annotate by hand. Re-dumping it through ``tomlkit`` keeps most comments but not all: tomlkit
attaches a comment that stands before a table to the end of the table above it, so replacing
that table drops the comment (issue 25 item 2), and replacing an array drops the comments
inside it. This module finds the spans instead, and the caller (:mod:`.clients_edit`) splices
new text into exactly the spans it changes, as it does for JSONC (:mod:`.clients_jsonc`).

It reads documents that :mod:`tomllib` and ``tomlkit`` have already accepted (TOML 1.0): it does not judge
validity, only positions. Values are :class:`.clients_jsonc.Node` s (``object`` for an inline
table, ``array``, ``string`` and ``scalar``); a scalar's value comes from :mod:`tomllib`, so it
is exactly what a TOML reader gives.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from typing import Any

from .clients_jsonc import Node

__all__ = ["Document", "Entry", "parse"]

_BLANK = re.compile(r"[ \t]*")
_BARE = re.compile(r"[A-Za-z0-9_-]+")
_BASIC = re.compile(r'"(?:[^"\\\r\n]|\\.)*"')
_LITERAL = re.compile(r"'[^'\r\n]*'")
_ML_BASIC = re.compile(r'"""(?:[^"\\]|\\.|"{1,2}(?!"))*"{3,5}', re.S)
_ML_LITERAL = re.compile(r"'''(?:[^']|'{1,2}(?!'))*'{3,5}", re.S)
_DATETIME = re.compile(r"\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d(?::\d\d)?(?:\.\d+)?(?:[Zz]|[+-]\d\d:\d\d)?")
_SCALAR = re.compile(r"[A-Za-z0-9_.:+-]+")
_COMMENT = re.compile(r"#[^\r\n]*")


@dataclass
class Entry:
    """One table of the document, as the editor sees it.

    Attributes:
        node: ``kind="table"`` for a ``[header]`` table (``start`` at the header; ``members`` its
            one-key ``key = value`` lines), or the inline table's own node.
        others: first keys of what belongs to the table but is not a one-key member (dotted
            keys ``env.A = ...``, sub-tables ``[t.env]``): left as they are.
    """

    node: Node
    others: set[str] = field(default_factory=set)


@dataclass
class Document:
    """The spans of a TOML document: its tables, key/value lines and comments.

    Attributes:
        headers: ``(path, start, is_array_of_tables)`` of every ``[table]`` header.
        pairs: ``(full key path, key_start, value, header index or -1, relative key length)``.
        comments: ``(start, end)`` of every comment.
        dotted: for an inline table (by its start), the first keys of its dotted keys.
    """

    headers: list[tuple[tuple[str, ...], int, bool]] = field(default_factory=list)
    pairs: list[tuple[tuple[str, ...], int, Node, int, int]] = field(default_factory=list)
    comments: list[tuple[int, int]] = field(default_factory=list)
    dotted: dict[int, set[str]] = field(default_factory=dict)

    def entry(self, location: tuple[str, ...]) -> Entry | None:
        """The table at ``location``: a ``[header]`` table or an inline table (``None``: another shape)."""
        n = len(location)
        for index, (path, start, array) in enumerate(self.headers):
            if path != location or array:
                continue
            table = Node("table", start, start)
            entry = Entry(table)
            for full, key_start, value, header, rel in self.pairs:
                if full[:n] != location:
                    continue
                if header == index and rel == 1:
                    table.members.append((full[-1], key_start, value))
                    table.commas.append(-1)
                    table.end = value.end
                else:
                    entry.others.add(full[n])
            entry.others |= {p[n] for p, _, _ in self.headers if len(p) > n and p[:n] == location}
            return entry
        for full, _, value, _, _ in self.pairs:
            if full == location and value.kind == "object":
                return Entry(value, self.dotted.get(value.start, set()))
        return None


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.doc = Document()

    def fail(self, message: str) -> ValueError:
        return ValueError(f"offset {self.pos}: {message}")

    def blank(self, newlines: bool) -> None:
        """Skip spaces (and newlines and comments when ``newlines``)."""
        while True:
            self.pos = _BLANK.match(self.text, self.pos).end()  # type: ignore[union-attr]
            char = self.text[self.pos : self.pos + 1]
            if char == "#":
                match = _COMMENT.match(self.text, self.pos)
                assert match is not None
                self.doc.comments.append(match.span())
                self.pos = match.end()
            elif newlines and char in ("\r", "\n"):
                self.pos += 1
            else:
                return

    def key(self) -> tuple[str, ...]:
        keys = []
        while True:
            self.pos = _BLANK.match(self.text, self.pos).end()  # type: ignore[union-attr]
            for pattern in (_BASIC, _LITERAL, _BARE):
                match = pattern.match(self.text, self.pos)
                if match is not None:
                    break
            else:
                raise self.fail("expected a key")
            raw = match.group()
            keys.append(tomllib.loads(f"k = {raw}")["k"] if raw[0] in "\"'" else raw)
            self.pos = _BLANK.match(self.text, match.end()).end()  # type: ignore[union-attr]
            if not self.text.startswith(".", self.pos):
                return tuple(keys)
            self.pos += 1

    def document(self) -> Document:
        header = -1
        prefix: tuple[str, ...] = ()
        while True:
            self.blank(newlines=True)
            if self.pos >= len(self.text):
                return self.doc
            start = self.pos
            if self.text.startswith("[", self.pos):
                array = self.text.startswith("[[", self.pos)
                self.pos += 2 if array else 1
                prefix = self.key()
                close = "]]" if array else "]"
                if not self.text.startswith(close, self.pos):
                    raise self.fail("expected the end of a table header")
                self.pos += len(close)
                header = len(self.doc.headers)
                self.doc.headers.append((prefix, start, array))
            else:
                keys = self.key()
                if not self.text.startswith("=", self.pos):
                    raise self.fail("expected '='")
                self.pos += 1
                value = self.value()
                self.doc.pairs.append((prefix + keys, start, value, header, len(keys)))
            self.blank(newlines=False)

    def value(self) -> Node:
        self.blank(newlines=False)
        start = self.pos
        char = self.text[start : start + 1]
        if char == "[":
            return self.array(start)
        if char == "{":
            return self.table(start)
        for pattern in (_ML_BASIC, _ML_LITERAL, _BASIC, _LITERAL):
            match = pattern.match(self.text, start)
            if match is not None:
                return self.scalar(start, match.end(), "string")
        match = _DATETIME.match(self.text, start) or _SCALAR.match(self.text, start)
        if match is None:
            raise self.fail("expected a value")
        return self.scalar(start, match.end(), "scalar")

    def scalar(self, start: int, end: int, kind: str) -> Node:
        self.pos = end
        value: Any = tomllib.loads(f"v = {self.text[start:end]}")["v"]
        return Node(kind, start, end, scalar=value)

    def array(self, start: int) -> Node:
        node = Node("array", start, start)
        self.pos += 1
        while True:
            self.blank(newlines=True)
            if self.text.startswith("]", self.pos):
                break
            node.items.append(self.value())
            self.blank(newlines=True)
            if self.text.startswith(",", self.pos):
                node.commas.append(self.pos)
                self.pos += 1
                continue
            node.commas.append(-1)
            if not self.text.startswith("]", self.pos):
                raise self.fail("expected ',' or ']'")
            break
        self.pos += 1
        node.end = self.pos
        return node

    def table(self, start: int) -> Node:
        node = Node("object", start, start)
        dotted: set[str] = set()
        self.pos += 1
        while True:
            self.blank(newlines=True)
            if self.text.startswith("}", self.pos):
                break
            key_start = self.pos
            keys = self.key()
            if not self.text.startswith("=", self.pos):
                raise self.fail("expected '='")
            self.pos += 1
            value = self.value()
            if len(keys) == 1:
                node.members.append((keys[0], key_start, value))
            else:
                dotted.add(keys[0])
            self.blank(newlines=True)
            if self.text.startswith(",", self.pos):
                if len(keys) == 1:
                    node.commas.append(self.pos)
                self.pos += 1
                continue
            if len(keys) == 1:
                node.commas.append(-1)
            if not self.text.startswith("}", self.pos):
                raise self.fail("expected ',' or '}'")
            break
        self.pos += 1
        node.end = self.pos
        if dotted:
            self.doc.dotted[start] = dotted
        return node


def parse(text: str) -> Document:
    """The spans of a TOML document that a TOML reader accepted.

    Raises:
        ValueError: the reader lost its way (a construct it does not know); the caller then
            edits another way or not at all.
    """
    try:
        return _Reader(text).document()
    except (tomllib.TOMLDecodeError, IndexError) as exc:
        raise ValueError(f"unexpected TOML: {type(exc).__name__}") from None
