"""Reading the operator's documents: JSON, JSON with comments, JSONL; precise error locations.

The documents the operator tools read (schemas, tool lists, tool definitions, arguments,
verifier inputs) are files a person wrote or a program saved. Unlike the relay, which must
pass on whatever a peer sent, a reader of such files can and should refuse what is
ambiguous: a **duplicate object key** is an error here (two parsers may keep different
values), named by its JSON Pointer. Everything else follows Python's ``json`` module:
``NaN``/``Infinity`` parse (the schema core reports them as numbers JSON cannot carry), and
a float literal a double cannot hold exactly (``0.99999999999999999999``, ``1e400``) becomes an
:class:`~mcp_guard.core.json_values.Inexact`, as the relay parses a client's ``tools/call`` and
an upstream's answer (``json_values.literal_float``), so an offline verdict on a schema or on
arguments equals the guard's.

Comments (``//`` to the end of the line, ``/* ... */``) are stripped by :func:`strip_comments`
outside strings only; each comment character becomes a space (newlines are kept), so line and
column numbers in error messages still point into the file as written.

This module does not know schemas, tools or MCP.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:  # an annotation only: reading a tool list (wrap's judgement) loads no pydantic
    from pydantic import ValidationError

from ..core.budget import integer_digit_limit, is_integer_too_long
from ..core.json_values import literal_float, pointer
from ..errors import GuardError

__all__ = [
    "DocumentError",
    "FieldError",
    "field_errors",
    "iter_lines",
    "loads",
    "loads_as_relayed",
    "read_text",
    "source_name",
    "strip_comments",
]

T = TypeVar("T")


class DocumentError(GuardError, ValueError):
    """A document that cannot be read as JSON: the message says where (line and column, or pointer) and why."""


@dataclass(frozen=True, slots=True)
class FieldError:
    """One reason a document does not fit its format.

    Attributes:
        path: JSON Pointer (RFC 6901) into the document, at the offending field (``""`` for
            the document itself).
        message: why, in a short English sentence; never quotes a value of the document.
    """

    path: str
    message: str

    def to_json(self) -> dict[str, str]:
        """``{"path": str, "message": str}``."""
        return {"path": self.path, "message": self.message}

    def __str__(self) -> str:
        return f"{self.path or '(document)'}: {self.message}"


def strip_comments(text: str) -> str:
    """``text`` with ``//`` and ``/* */`` comments outside JSON strings replaced by spaces.

    A ``//`` or ``/*`` inside a string (``"http://x"``) is string content, escapes included
    (``"\\"//"`` is one string). Newlines inside a block comment are kept, so positions in
    later error messages stay those of the file.

    Raises:
        DocumentError: a ``/*`` comment that never ends (line and column of its start).
    """
    if "/" not in text:
        return text
    out: list[str] = []
    i, n = 0, len(text)
    start = 0  # first character not yet copied
    while i < n:
        c = text[i]
        if c == '"':
            i += 1
            while i < n:
                d = text[i]
                if d == "\\":
                    i += 2
                    continue
                i += 1
                if d == '"' or d == "\n":  # a newline ends a broken string: the JSON parser reports it
                    break
            continue
        if c == "/" and i + 1 < n and text[i + 1] in "/*":
            out.append(text[start:i])
            if text[i + 1] == "/":
                end = text.find("\n", i)
                end = n if end < 0 else end
                out.append(" " * (end - i))
            else:
                end = text.find("*/", i + 2)
                if end < 0:
                    line, column = _position(text, i)
                    raise DocumentError(f"line {line} column {column}: a /* comment is never closed")
                end += 2
                out.append("".join("\n" if ch == "\n" else " " for ch in text[i:end]))
            i = start = end
            continue
        i += 1
    out.append(text[start:])
    return "".join(out)


def _position(text: str, index: int) -> tuple[int, int]:
    """1-based line and column of ``index`` in ``text``."""
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    return line, column


class _Duplicates(dict[str, Any]):
    """Stands, during parsing only, for an object that had a duplicate key (never returned)."""

    __slots__ = ("duplicate",)

    def __init__(self, pairs: list[tuple[str, Any]], duplicate: str) -> None:
        super().__init__(pairs)
        self.duplicate = duplicate


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) == len(pairs):
        return result
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            return _Duplicates(pairs, key)
        seen.add(key)
    raise AssertionError("unreachable")  # pragma: no cover


# Schemas, tools and arguments: a literal no double holds stays an ``Inexact`` (the profile
# judges it exactly, or refuses it), never a rounded double: the relay's reading (wire.jsonrpc).
_decoder = json.JSONDecoder(object_pairs_hook=_pairs, parse_float=literal_float)


def _find_duplicate(value: Any) -> str | None:
    """The message for the first object (document order) that had a duplicate key, or None. Iterative."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(value, ())]
    while stack:
        current, path = stack.pop()
        if isinstance(current, _Duplicates):
            return f"{pointer(path) or '(document)'}: the key {json.dumps(current.duplicate)} appears twice"
        if type(current) is list:
            stack.extend((item, (*path, i)) for i, item in reversed(list(enumerate(current))))
        elif isinstance(current, dict):
            stack.extend((item, (*path, k)) for k, item in reversed(list(current.items())))
    return None


def loads(text: str, *, comments: bool = False) -> Any:
    """Parse one JSON document (optionally with comments) into plain JSON values.

    Args:
        text: the document.
        comments: strip ``//`` and ``/* */`` comments first (:func:`strip_comments`).

    Returns:
        The value: ``dict`` (``str`` keys), ``list``, ``str``, ``int``, ``float``, ``bool``, ``None``;
        a number literal no double holds exactly is an ``Inexact`` (one beyond the double range
        too), as the relay reads a client's and an upstream's messages.

    Raises:
        DocumentError: not JSON (with line and column), a duplicate object key (with its
            pointer), an unclosed comment, nesting too deep for the parser, or an integer
            literal longer than the parser reads (``core.budget``).
    """
    if comments:
        text = strip_comments(text)
    value = _parsed(_decoder.decode, text)
    duplicate = _find_duplicate(value)
    if duplicate is not None:
        raise DocumentError(duplicate)
    return value


def _parsed(parse: Callable[[str], T], text: str) -> T:
    """``parse(text)`` with the JSON parser's failures told as :class:`DocumentError` (position, depth, an
    integer literal past the parser's digit limit): one wording for every parse of this module."""
    try:
        return parse(text)
    except json.JSONDecodeError as exc:
        raise DocumentError(f"line {exc.lineno} column {exc.colno}: not JSON ({exc.msg})") from None
    except RecursionError:
        raise DocumentError("the document nests too deeply for the JSON parser") from None
    except ValueError as exc:
        if not is_integer_too_long(exc):
            raise
        raise DocumentError(
            f"an integer literal has more than {integer_digit_limit():,} digits, the most the JSON parser reads "
            "(a limit against denial of service)"
        ) from None


def loads_as_relayed(text: str) -> tuple[Any, bool]:
    """Parse arguments (one JSON document) exactly as the relay reads a client's message: a repeated key
    keeps its last value, as the guard judges and forwards it (``wire.repeated.parse_unique``, the
    relay's own parse; red team 36, item 8). Otherwise as :func:`loads` (no comments).

    Returns:
        ``(value, repeated)``: ``repeated`` is true when some object in it repeats a key.

    Raises:
        DocumentError: as :func:`loads`, but never for a repeated key.
    """
    from ..wire.repeated import parse_unique

    value, unique = _parsed(lambda t: parse_unique(t, literal_float, float), text)
    return value, not unique


def source_name(path: str) -> str:
    """How messages name the input ``path``: ``"stdin"`` for ``-``, else the path as given."""
    return "stdin" if path == "-" else path


def read_text(path: str) -> str:
    """The text of the file ``path`` (UTF-8, a leading byte-order mark dropped), or of stdin for ``-``.

    Raises:
        DocumentError: the file cannot be read or is not UTF-8; the message starts with
            :func:`source_name` and a colon (``stdin: not UTF-8 text (byte 0)``; the byte is
            the 0-based offset of the first one that is not UTF-8).
    """
    import sys

    where = source_name(path)
    try:
        data = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    except OSError as exc:
        raise DocumentError(f"{where}: cannot read the file ({exc.strerror or type(exc).__name__})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DocumentError(f"{where}: not UTF-8 text (byte {exc.start})") from None
    return text.removeprefix("\ufeff")


def _loc_pointer(loc: tuple[str | int, ...], drop: frozenset[str]) -> str:
    return pointer(part for part in loc if not (isinstance(part, str) and part in drop))


_MESSAGES = {
    "missing": "is required",
    "extra_forbidden": "is not a field of this format",
    "string_type": "must be a string",
    "bool_type": "must be a boolean",
    "list_type": "must be an array",
    "dict_type": "must be an object",
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
}


_PREFIXES = (
    ("Value error, ", ""),
    ("Input should be ", "must be "),
    ("String should ", "must "),
    ("List should ", "must "),
)


def _reword(message: str) -> str:
    for prefix, replacement in _PREFIXES:
        if message.startswith(prefix):
            return (replacement + message[len(prefix) :]).replace(" after validation", "")
    return message


def field_errors(
    error: ValidationError, *, base: tuple[str | int, ...] = (), drop: frozenset[str] = frozenset()
) -> list[FieldError]:
    """The errors of a pydantic validation as :class:`FieldError` values (path and reason).

    Args:
        error: the exception pydantic raised.
        base: path of the validated value inside the whole document.
        drop: location parts pydantic inserts that are not document keys (union tags).

    Messages are rewritten for the common error types (``"is required"``, ``"must be a
    string"``, ...) and otherwise taken from pydantic's ``msg``, which never holds the input.
    """
    out: list[FieldError] = []
    for item in error.errors(include_url=False, include_input=False):
        loc = tuple(item["loc"])
        message = _MESSAGES.get(item["type"]) or _reword(item["msg"])
        out.append(FieldError(_loc_pointer((*base, *loc), drop), message))
    return out


def iter_lines(text: str) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` for every line of ``text`` that is not blank (1-based numbers)."""
    # Only "\n" ends a line: U+2028 and friends may stand unescaped inside a JSON string.
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.removesuffix("\r")
        if line.strip(" \t\r"):
            yield number, line
