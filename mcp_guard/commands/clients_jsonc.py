"""A JSONC reader that keeps every byte: values with their source spans, for editing in place.

``mcp-guard install`` edits client config files that people also edit by hand: VS Code's
``mcp.json`` and ``settings.json`` are JSONC (``//`` and ``/* */`` comments, trailing commas),
and Claude's and Cursor's files are JSON that users annotate the same way. Rewriting such a
file through ``json.loads``/``json.dumps`` would drop the comments and reflow the layout, so
this module parses the text into nodes that know where they start and end, and the caller
splices new text into exactly the span of the entry it changes; every other byte of the file
stays as it was.

Why our own (about 150 lines) rather than a library: the maintained Python JSONC/JSON5
packages either parse to plain values (``json5``, ``commentjson``: comments are lost on
write), target JSON5 rather than JSONC (``json-five``), or were young bindings without a
release history when this was written (``jsonc-edit``, ``json5kit`` unmaintained since
2023). Splicing spans needs only positions, and a byte-exact round trip (install then
uninstall gives the original bytes) is easier to guarantee with the original text in hand
than through a re-serializing concrete syntax tree.

Grammar: RFC 8259 JSON, plus comments anywhere whitespace may stand and one trailing comma
in an object or array (what VS Code's ``jsonc-parser`` accepts). Duplicate keys are refused
(a client keeps one of them; which one is not ours to guess). Errors are ``ValueError`` with
a line and column, never the text around them (a config may hold secrets).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Node", "comment_spans", "find", "indent_of", "line_indent", "line_span", "parse"]

_SPACE = re.compile(r"(?:[ \t\r\n]+|//[^\n]*|/\*.*?\*/)*", re.S)
_COMMENT = re.compile(r"//[^\r\n]*|/\*.*?\*/", re.S)
_STRING = re.compile(r'"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"')
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_LITERALS = {"true": True, "false": False, "null": None}


@dataclass
class Node:
    """One JSON value of the text: its kind, its span ``text[start:end]`` and its parts.

    Attributes:
        kind: ``"object"``, ``"array"``, ``"string"``, ``"number"`` or ``"literal"``.
        start: offset of the value's first character.
        end: offset just past its last character.
        members: for an object, ``(key, key_start, value)`` in source order.
        items: for an array, its values in order.
        scalar: for a scalar, its Python value (numbers as ``int`` or ``float``).
        commas: for an object or array, the offset of the comma after each member or item
            (``-1``: none follows it).
    """

    kind: str
    start: int
    end: int
    members: list[tuple[str, int, Node]] = field(default_factory=list)
    items: list[Node] = field(default_factory=list)
    scalar: Any = None
    commas: list[int] = field(default_factory=list)

    def get(self, key: str) -> Node | None:
        """The value of member ``key`` of an object node, or ``None``."""
        for name, _, value in self.members:
            if name == key:
                return value
        return None

    def value(self) -> Any:
        """The plain Python value (``dict``, ``list``, ``str``, numbers, ``bool``, ``None``)."""
        if self.kind == "object":
            return {name: node.value() for name, _, node in self.members}
        if self.kind == "array":
            return [node.value() for node in self.items]
        return self.scalar


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.comments: list[tuple[int, int]] = []

    def fail(self, message: str, at: int | None = None) -> ValueError:
        where = self.pos if at is None else at
        line = self.text.count("\n", 0, where) + 1
        column = where - (self.text.rfind("\n", 0, where) + 1) + 1
        return ValueError(f"line {line} column {column}: {message}")

    def space(self) -> None:
        match = _SPACE.match(self.text, self.pos)
        assert match is not None  # the pattern matches the empty string
        if match.end() > self.pos:
            self.comments += [c.span() for c in _COMMENT.finditer(self.text, self.pos, match.end())]
        self.pos = match.end()
        if self.text.startswith("/*", self.pos):
            raise self.fail("unterminated /* comment")

    def value(self, depth: int) -> Node:
        if depth > 200:
            raise self.fail("nested too deeply")
        self.space()
        char = self.text[self.pos : self.pos + 1]
        start = self.pos
        if char == "{":
            return self.container(start, depth, "object", "}")
        if char == "[":
            return self.container(start, depth, "array", "]")
        if char == '"':
            token = self.token(_STRING, "an unterminated or invalid string")
            return Node("string", start, self.pos, scalar=json.loads(token))
        for word, literal in _LITERALS.items():
            if self.text.startswith(word, self.pos):
                self.pos += len(word)
                return Node("literal", start, self.pos, scalar=literal)
        if char == "-" or char.isdigit():
            token = self.token(_NUMBER, "an invalid number")
            return Node("number", start, self.pos, scalar=json.loads(token))
        raise self.fail("expected a value" if char else "unexpected end of the file")

    def token(self, pattern: re.Pattern[str], problem: str) -> str:
        match = pattern.match(self.text, self.pos)
        if match is None:
            raise self.fail(problem)
        self.pos = match.end()
        return match.group()

    def container(self, start: int, depth: int, kind: str, close: str) -> Node:
        node = Node(kind, start, start)
        self.pos += 1
        seen: set[str] = set()
        while True:
            self.space()
            if self.text.startswith(close, self.pos):
                break
            if kind == "object":
                key_start = self.pos
                if not self.text.startswith('"', self.pos):
                    raise self.fail("expected a quoted key")
                key = json.loads(self.token(_STRING, "an unterminated or invalid key"))
                if key in seen:
                    raise self.fail("a duplicate key", key_start)
                seen.add(key)
                self.space()
                if not self.text.startswith(":", self.pos):
                    raise self.fail("expected ':'")
                self.pos += 1
                node.members.append((key, key_start, self.value(depth + 1)))
            else:
                node.items.append(self.value(depth + 1))
            self.space()
            if self.text.startswith(",", self.pos):
                node.commas.append(self.pos)
                self.pos += 1
                continue
            node.commas.append(-1)
            if not self.text.startswith(close, self.pos):
                raise self.fail(f"expected ',' or '{close}'")
            break
        self.pos += 1
        node.end = self.pos
        return node


def parse(text: str) -> Node:
    """Parse a JSONC document into :class:`Node` s with spans.

    Raises:
        ValueError: the text is not JSONC (the message gives a line and a column, no content).
    """
    parser = _Parser(text)
    root = parser.value(0)
    parser.space()
    if parser.pos != len(text):
        raise parser.fail("unexpected text after the document")
    return root


def comment_spans(text: str) -> list[tuple[int, int]]:
    """The ``(start, end)`` of every comment of a JSONC document, in order.

    Raises:
        ValueError: the text is not JSONC.
    """
    parser = _Parser(text)
    parser.value(0)
    parser.space()
    if parser.pos != len(text):
        raise parser.fail("unexpected text after the document")
    return parser.comments


def find(root: Node, path: tuple[str, ...]) -> Node | None:
    """The node at the object-key ``path`` under ``root`` (``None`` if any step is missing or not an object)."""
    node: Node | None = root
    for key in path:
        if node is None or node.kind != "object":
            return None
        node = node.get(key)
    return node


def line_span(text: str, start: int, end: int) -> tuple[int, int]:
    """``(start, end)`` widened to whole lines (the end keeps the line's newline)."""
    first = text.rfind("\n", 0, start) + 1
    newline = text.find("\n", end)
    return first, len(text) if newline < 0 else newline + 1


def indent_of(text: str, offset: int) -> str:
    """The whitespace before ``offset`` on its line (empty when something else precedes it)."""
    first = text.rfind("\n", 0, offset) + 1
    prefix = text[first:offset]
    return prefix if prefix.strip() == "" else ""


def line_indent(text: str, offset: int) -> str:
    """The leading whitespace of the line that holds ``offset``."""
    first = text.rfind("\n", 0, offset) + 1
    line = text[first:offset]
    return line[: len(line) - len(line.lstrip(" \t"))]
