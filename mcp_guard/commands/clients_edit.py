"""Rewrite one entry of a JSONC or TOML config by splicing the spans that change, and nothing else.

The editor compares the entry's value as it is (``old``) with what it becomes (``new``) key by
key, on the spans the readers found (:mod:`.clients_jsonc`, :mod:`.clients_toml`):

- a key that stays with the same value is not touched;
- a key whose value changes gets a new value text in the old value's span, except that an
  array that only gains items in front (``args``: the guard's words before the server's
  command) gets them inserted before its first item, and an object/inline table is edited
  member by member (``env``), so comments inside either stay;
- a key that goes is cut from its key to the end of its value (one comma with it); a
  comment inside what is cut stays, on a line of its own; a line left blank goes;
- keys that come are written in the place of the first key that goes between the same kept
  neighbours (``url`` becomes ``command`` and ``args``), else after the kept key before them,
  in the member layout of the entry (one per line at the members' indentation, or inline);
- a comment at the end of the ``command`` line (``command = "uvx"  # uv's runner``) annotates
  the command, which moves into ``args`` behind the guard's words: the comment moves with it,
  to the end of the line of ``args`` that now holds the command (the same line when ``args``
  stands on one line), or, where that line has a comment of its own, ``args`` does not follow
  ``command`` or there is none, onto a line of its own above ``command`` (:meth:`Splicer.command_note`).

Every byte outside the spans cut or replaced stays, so every comment before, inside, after
the entry and at the end of the file stays where it stands (issue 25 item 2). What the
editor cannot do exactly (keys reordered, a changed value holding a comment, a dotted or
sub-table key of TOML that would change) raises :class:`EditRefused`; the caller checks the
result besides (it must read back as the intended document with the same comments).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import GuardError
from .clients_jsonc import Node

__all__ = ["EditRefused", "Splicer"]

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


class EditRefused(GuardError):
    """The entry's text cannot be changed exactly by span edits (the caller tries another way or skips)."""


@dataclass
class Splicer:
    """Collects non-overlapping edits of ``text`` and applies them.

    Attributes:
        text: the document (without a byte order mark).
        toml: TOML syntax (``key = value``, ``#`` comments) rather than JSON (``"key": value``).
        comments: ``(start, end)`` of every comment of ``text``.
        subtable: TOML: the ``[table]`` at a key path (its node and its ``others``), or None.
        edits: the ``(start, end, new text)`` edits made so far.
        note: the comment moving with the command (:meth:`command_note`): ``(start of the args
            array, comment text)``, written after the command where ``args`` gains its lines.
    """

    text: str
    toml: bool
    comments: list[tuple[int, int]]
    subtable: Callable[[tuple[str, ...]], tuple[Node, frozenset[str]] | None] | None = None
    edits: list[tuple[int, int, str]] = field(default_factory=list)
    note: tuple[int, str] | None = None

    @property
    def nl(self) -> str:
        """The file's newline."""
        return "\r\n" if "\r\n" in self.text else "\n"

    def splice(self, start: int, end: int, new: str) -> None:
        """Replace ``text[start:end]`` with ``new``."""
        self.edits.append((start, end, new))

    def result(self) -> str:
        """The text with every edit applied.

        Raises:
            EditRefused: two edits overlap.
        """
        text, last = self.text, len(self.text) + 1
        order = sorted(range(len(self.edits)), key=lambda i: (self.edits[i][0], self.edits[i][1], i), reverse=True)
        for start, end, new in (self.edits[i] for i in order):  # at one offset: in the order they were made
            if end > last:
                raise EditRefused("overlapping edits")
            text = text[:start] + new + text[end:]
            last = start
        return text

    # --- rendering ---------------------------------------------------------------------------

    def key(self, name: str) -> str:
        """A key as the format writes it."""
        if self.toml and _BARE_KEY.fullmatch(name):
            return name
        return self.string(name)

    def string(self, value: str) -> str:
        """A string literal (JSON's escapes are TOML basic-string escapes too; DEL is escaped for TOML)."""
        text = json.dumps(value, ensure_ascii=False)
        return text.replace("\x7f", "\\u007f") if self.toml else text

    def value(self, value: Any, indent: str | None = None, unit: str = "  ") -> str:
        """A value: inline, or (JSON, ``indent`` given) over lines as ``json.dumps(indent=unit)`` lays it out."""
        if not self.toml:
            if indent is None:
                return json.dumps(value, ensure_ascii=False)
            return json.dumps(value, indent=unit, ensure_ascii=False).replace("\n", self.nl + indent)
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, (int, float)):
            return json.dumps(value)
        if isinstance(value, str):
            return self.string(value)
        if isinstance(value, list):
            return "[" + ", ".join(self.value(v) for v in value) + "]"
        if isinstance(value, dict):
            if not value:
                return "{}"
            return "{ " + ", ".join(f"{self.key(k)} = {self.value(v)}" for k, v in value.items()) + " }"
        raise EditRefused(f"no TOML form for {type(value).__name__}")

    def member(self, name: str, value: Any, indent: str | None = None, unit: str = "  ") -> str:
        """``key = value`` / ``"key": value`` (a JSON array or object over lines when ``indent`` is given)."""
        lines = indent if isinstance(value, (list, dict)) and value else None
        return f"{self.key(name)}{' = ' if self.toml else ': '}{self.value(value, lines, unit)}"

    # --- positions ---------------------------------------------------------------------------

    def line_start(self, offset: int) -> int:
        """The offset of the first character of the line holding ``offset``."""
        return self.text.rfind("\n", 0, offset) + 1

    def line_end(self, offset: int) -> int:
        """The offset of the newline (``\\r\\n`` or ``\\n``) ending the line holding ``offset``, or the end."""
        newline = self.text.find("\n", offset)
        if newline < 0:
            return len(self.text)
        return newline - 1 if newline > 0 and self.text[newline - 1] == "\r" else newline

    def rest_is_quiet(self, start: int, end: int) -> bool:
        """Whether ``text[start:end]`` holds only spaces and comments."""
        pos = start
        while pos < end:
            if self.text[pos] in " \t\r\n":
                pos += 1
                continue
            span = next((c for c in self.comments if c[0] == pos), None)
            if span is None:
                return False
            pos = span[1]
        return True

    def comments_in(self, start: int, end: int) -> list[str]:
        """The text of every comment inside ``text[start:end]``."""
        return [self.text[a:b] for a, b in self.comments if a >= start and b <= end]

    def indent(self, offset: int) -> str:
        """The whitespace before ``offset`` on its line (empty when something else precedes it)."""
        prefix = self.text[self.line_start(offset) : offset]
        return prefix if prefix.strip() == "" else ""

    # --- the edit ----------------------------------------------------------------------------

    def edit_object(
        self, node: Node, old: dict[str, Any], new: dict[str, Any], others: frozenset[str], path: tuple[str, ...] = ()
    ) -> None:
        """Edit the members of ``node`` (an object, an inline table or a ``[table]``) from ``old`` to ``new``.

        ``others``: keys of ``old`` that are not members of ``node`` (TOML dotted keys and
        sub-tables); they must stay as they are, but for a ``[path.key]`` sub-table whose own
        members change (``env`` gaining a variable), edited in turn. ``path``: the key path
        of ``node`` (for :attr:`subtable`).

        Raises:
            EditRefused: what cannot be done by span edits.
        """
        names = [name for name, _, _ in node.members]
        self.command_note(node, old, new)
        for name in others:
            if name in new and new[name] == old.get(name):
                continue
            table = self.subtable((*path, name)) if self.subtable is not None and name in new else None
            if table is None or not isinstance(old.get(name), dict) or not isinstance(new[name], dict):
                raise EditRefused(f"'{name}' would change but is not a member on its own line")
            self.edit_object(table[0], old[name], new[name], table[1], (*path, name))
        if set(old) - set(names) - others:
            raise EditRefused("a member the reader did not find")
        kept = [name for name in names if name in new]
        if kept != [name for name in new if name in names]:
            raise EditRefused("members reordered")
        if not node.members:
            if node.kind == "table":
                raise EditRefused("an empty table")
            self.splice(node.start, node.end, self.value(new))
            return
        block = node.kind == "table" or "\n" in self.text[node.start : node.members[0][1]]
        indent = self.indent(node.members[0][1]) if block else ""
        base = self.text[self.line_start(node.start) : node.start]
        base = base[: len(base) - len(base.lstrip(" \t"))]
        unit = indent[len(base) :] if indent.startswith(base) and len(indent) > len(base) else "  "
        over_lines = indent if block and not self.toml else None
        deleted: list[list[int]] = [[] for _ in range(len(kept) + 1)]
        gap = 0
        for index, (name, _, value) in enumerate(node.members):
            if name in new:
                gap += 1
                if new[name] != old[name]:
                    self.edit_value(value, old[name], new[name])
            else:
                deleted[gap].append(index)
        inserted: list[list[str]] = [[] for _ in range(len(kept) + 1)]
        gap = 0
        for name, value in new.items():
            if name in names:
                gap += 1
            elif name not in others:
                inserted[gap].append(self.member(name, value, over_lines, unit))
        where = [i for i, (name, _, _) in enumerate(node.members) if name in new]
        vanish = {i for gap, gone in enumerate(deleted) for n, i in enumerate(gone) if n or not inserted[gap]}
        for gap in range(len(kept) + 1):
            gone, come = deleted[gap], inserted[gap]
            for n, index in enumerate(gone):
                if n == 0 and come:
                    self.replace_member(node, index, come, block, indent)
                else:
                    self.cut(node, index, vanish)
            if come and not gone:
                if gap > 0:
                    self.insert_after(node, where[gap - 1], come, block, indent)
                else:
                    self.insert_before(node, where[0], come, block, indent)

    def command_note(self, node: Node, old: dict[str, Any], new: dict[str, Any]) -> None:
        """Move the comment at the end of the ``command`` member's line with the command, when the
        command moves into ``args`` behind new words (``old["command"]`` followed by ``old["args"]``
        ends ``new["args"]``): see the module's rules. Anything else is left as it is."""
        names = [name for name, _, _ in node.members]
        before, after = old.get("args") or [], new.get("args")
        if "command" not in names or new.get("command") in (None, old.get("command")):
            return
        if not isinstance(before, list) or not isinstance(after, list) or len(after) <= len(before):
            return
        if after[len(after) - len(before) - 1 :] != [old["command"], *before]:
            return
        index = names.index("command")
        _, key_start, value = node.members[index]
        line = self.line_start(key_start)
        if self.text[line:key_start].strip():
            return  # the member shares its line with what precedes it: the comment is the line's
        pos = value.end
        comma = node.commas[index] if index < len(node.commas) else -1
        if comma >= 0 and self.text[pos:comma].strip() == "":
            pos = comma + 1
        cut = pos
        while pos < len(self.text) and self.text[pos] in " \t":
            pos += 1
        span = next((c for c in self.comments if c[0] == pos), None)
        stop = self.line_end(value.end)
        if span is None or span[1] > stop or self.text[span[1] : stop].strip():
            return
        comment = self.text[span[0] : span[1]]
        self.splice(cut, span[1], "")
        args = node.members[index + 1][2] if names[index + 1 : index + 2] == ["args"] and before else None
        if args is not None and args.kind == "array" and args.items:
            first = args.items[0].start
            own_line = self.line_start(first) > args.start and self.text[self.line_start(first) : first].strip() == ""
            if own_line and not self.comments_in(span[1], first):
                self.note = (args.start, comment)  # written with the inserted lines (edit_value)
                return
            end = self.line_end(first)
            if (
                not own_line
                and not self.comments_in(span[1], end)
                and not any(c[0] < end < c[1] for c in self.comments)
            ):
                self.splice(end, end, f"  {comment}")
                return
        self.splice(line, line, f"{self.text[line:key_start]}{comment}{self.nl}")

    def edit_value(self, node: Node, old: Any, new: Any) -> None:
        """Replace one value, keeping what it holds where it can (see the module's rules)."""
        if isinstance(old, dict) and isinstance(new, dict) and node.kind == "object":
            self.edit_object(node, old, new, frozenset())
            return
        if (
            isinstance(old, list)
            and isinstance(new, list)
            and node.kind == "array"
            and old
            and len(new) > len(old)
            and new[len(new) - len(old) :] == old
        ):
            front = [self.value(v) for v in new[: len(new) - len(old)]]
            first = node.items[0].start
            line = self.line_start(first)
            if line > node.start and self.text[line:first].strip() == "":
                lead = self.text[line:first]
                lines = [f"{lead}{v}," for v in front]
                if self.note is not None and self.note[0] == node.start:
                    lines[-1] += f"  {self.note[1]}"
                self.splice(line, line, "".join(f"{text}{self.nl}" for text in lines))
            else:
                self.splice(first, first, "".join(f"{v}, " for v in front))
            return
        if self.comments_in(node.start, node.end):
            raise EditRefused("a changed value holds a comment")
        over_lines = not self.toml and "\n" in self.text[node.start : node.end]
        base = self.text[self.line_start(node.start) : node.start]
        base = base[: len(base) - len(base.lstrip(" \t"))]
        unit = "  "
        if over_lines and (node.items or node.members):
            first = node.items[0].start if node.items else node.members[0][1]
            inner = self.indent(first)
            unit = inner[len(base) :] if inner.startswith(base) and len(inner) > len(base) else "  "
        self.splice(node.start, node.end, self.value(new, base if over_lines else None, unit))

    def replace_member(self, node: Node, index: int, members: list[str], block: bool, indent: str) -> None:
        """Write ``members`` in the place of member ``index`` of ``node`` (its comma stays)."""
        _, start, value = node.members[index]
        if self.comments_in(start, value.end):
            raise EditRefused("a comment inside a member that is replaced")
        joint = (("" if self.toml else ",") + self.nl + indent) if block else ", "
        self.splice(start, value.end, joint.join(members))

    def cut(self, node: Node, index: int, vanish: set[int]) -> None:
        """Cut member ``index`` of ``node`` (``vanish``: every member cut without replacement)."""
        _, start, value = node.members[index]
        end = value.end
        comma = node.commas[index] if index < len(node.commas) else -1
        if node.kind != "table":
            if comma >= 0:
                end = comma + 1
                while end < len(self.text) and self.text[end] in " \t":
                    end += 1
            else:
                stays = [j for j in range(index) if j not in vanish]
                if stays and node.commas[stays[-1]] >= 0:
                    self.splice(node.commas[stays[-1]], node.commas[stays[-1]] + 1, "")
        inside = self.comments_in(start, end)
        first = self.line_start(start)
        stop = self.line_end(end)
        lead = self.text[first:start]
        if lead.strip() == "":
            kept = "".join(f"{lead}{c}{self.nl}" for c in inside)
            if self.text[end:stop].strip() == "":  # the member's lines go; its comments stay, one a line
                newline = stop + (2 if self.text.startswith("\r\n", stop) else 1 if stop < len(self.text) else 0)
                self.splice(first, newline, kept)
                return
            while end < stop and self.text[end] in " \t":  # what follows (a comment) takes the member's place
                end += 1
            self.splice(first, end, kept + lead)
            return
        if any(not c.startswith("/*") for c in inside):
            raise EditRefused("a line comment inside a member cut from a shared line")
        self.splice(start, end, "".join(f"{c} " for c in inside))

    def insert_after(self, node: Node, index: int, members: list[str], block: bool, indent: str) -> None:
        """Insert ``members`` after member ``index`` of ``node``."""
        value = node.members[index][2]
        comma = node.commas[index] if index < len(node.commas) else -1
        tail = comma + 1 if comma >= 0 else value.end
        stop = self.line_end(tail)
        if block and self.rest_is_quiet(tail, stop):
            if self.toml:
                self.splice(stop, stop, "".join(f"{self.nl}{indent}{m}" for m in members))
            elif comma >= 0:
                self.splice(stop, stop, "".join(f"{self.nl}{indent}{m}," for m in members))
            else:
                self.splice(value.end, value.end, ",")
                self.splice(stop, stop, f"{self.nl}{indent}" + f",{self.nl}{indent}".join(members))
            return
        if node.kind == "table":
            raise EditRefused("a table member shares its line")
        self.splice(value.end, value.end, "".join(f", {m}" for m in members))

    def insert_before(self, node: Node, index: int, members: list[str], block: bool, indent: str) -> None:
        """Insert ``members`` before member ``index`` of ``node`` (the first member)."""
        start = node.members[index][1]
        separator = "" if self.toml else ","
        if block and self.text[self.line_start(start) : start].strip() == "":
            line = self.line_start(start)
            lead = self.text[line:start]
            self.splice(line, line, "".join(f"{lead}{m}{separator}{self.nl}" for m in members))
        elif node.kind == "table":
            raise EditRefused("a table member shares its line")
        else:
            self.splice(start, start, "".join(f"{m}, " for m in members))
