"""Text from clients, servers and files made safe for one log line or one terminal row.

Tool names, methods, keys, server names and messages reach the operator's log and terminal.
Raw, a name could end the line and write one of its own (``\\n``, but also NEL U+0085 and
U+2028/U+2029, which many viewers and ``str.splitlines`` take as line breaks), drive the
terminal (ESC, or CSI U+009B on its own), or reorder what is shown around it (bidi overrides
and isolates, as in "Trojan Source", CVE-2021-42574). :func:`escape` writes every such
character as an escape: C0 and DEL as ``\\xNN``, the others as ``\\uNNNN``. Other text,
non-ASCII letters included, is left as it is.

This module imports nothing of the package; the log formatter and every report use it.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["COLUMN_MAX", "column_widths", "display_width", "escape", "escape_json", "pad"]

_UNSAFE: Final = (
    *range(0x80, 0xA0),  # C1 controls: NEL (U+0085), CSI (U+009B), OSC (U+009D), ...
    0x061C,  # ARABIC LETTER MARK
    0x200E,  # LEFT-TO-RIGHT MARK
    0x200F,  # RIGHT-TO-LEFT MARK
    0x2028,  # LINE SEPARATOR
    0x2029,  # PARAGRAPH SEPARATOR
    *range(0x202A, 0x202F),  # bidi embeddings and overrides (LRE, RLE, PDF, LRO, RLO)
    *range(0x2066, 0x206A),  # bidi isolates (LRI, RLI, FSI, PDI)
)

_SURROGATE: Final = re.compile("[\ud800-\udfff]")
"""A lone surrogate (a JSON ``"\\ud800"`` decodes to one): no UTF-8 encodes them, so a stream writes them as
it can (``backslashreplace``: six characters for one), and a table would measure one and show six. Found by
this pattern, not by 2,048 entries in each translation table (they held half a MiB of every process's memory)."""


def _code_point(found: re.Match[str]) -> str:
    return f"\\u{ord(found.group()):04x}"


def _surrogates_escaped(text: str) -> str:
    """``text`` with each lone surrogate written as ``\\uNNNN`` (one search when there is none)."""
    return _SURROGATE.sub(_code_point, text) if _SURROGATE.search(text) is not None else text


_TABLE: Final[dict[int, str]] = {
    **{c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F)},  # C0 controls (newline, ESC, ...) and DEL
    **{c: f"\\u{c:04x}" for c in _UNSAFE},
}


def escape(text: str) -> str:
    """``text`` with every character that breaks a line, controls a terminal or reorders text escaped.

    C0 controls and DEL become ``\\xNN`` (``\\x0a``, ``\\x1b``); C1 controls, U+2028, U+2029, the
    bidi marks, embeddings, overrides and isolates, and lone surrogates (which no UTF-8 encodes)
    become ``\\uNNNN`` (``\\u0085``, ``\\u009b``, ``\\u202e``, ``\\ud800``). The result holds no
    line break (neither ``str.splitlines`` nor a terminal sees one) and nothing a terminal acts on.
    """
    return _surrogates_escaped(text.translate(_TABLE))


_JSON_TABLE: Final[dict[int, str]] = {c: f"\\u{c:04x}" for c in (0x7F, *_UNSAFE)}


def escape_json(text: str) -> str:
    """JSON text (``json.dumps(..., ensure_ascii=False)``) with DEL, the C1 controls, U+2028, U+2029,
    the bidi marks, embeddings, overrides and isolates, and lone surrogates written as JSON ``\\uNNNN`` escapes: the
    same JSON value, safe on a terminal (the encoder already escapes the C0 controls; other non-ASCII text
    stays readable). Used for every ``--json`` report, as :func:`escape` is for the text ones.
    """
    return _surrogates_escaped(text.translate(_JSON_TABLE))


def display_width(text: str) -> int:
    """The columns ``text`` takes on a terminal (for tables of escaped names: :func:`escape` first).

    Rules (Unicode's East Asian Width, UAX #11, as ``wcwidth`` applies it, with the standard library's
    ``unicodedata`` only): East Asian wide and fullwidth characters (``W``, ``F``: CJK, most emoji) take 2;
    combining marks (``Mn``, ``Me``), format characters (``Cf``: zero-width space and joiner, tags...; not
    the soft hyphen, shown), controls, Hangul's conjoining vowels and final consonants take 0; a lone
    surrogate takes 6 (a stream writes it ``\\udXXX``); everything else 1. What a terminal draws as one
    glyph counts once (grapheme clusters, UAX #29, as far as they change columns): a pair of regional
    indicators is one flag (2; a lone one takes 1), VARIATION SELECTOR-16 makes its narrow base an emoji
    (2: ``❤️``, the keycap ``1️⃣``), an emoji modifier (skin tone) after an emoji takes 0, and a ZERO
    WIDTH JOINER between an emoji and a symbol joins them into the one emoji (``👨‍👩‍👧``: 2).
    """
    import unicodedata  # (here: wrap starts without it)

    width = 0
    cluster = 0  # the columns of the glyph being measured (0: none, or one that nothing joins)
    joiner = False  # that glyph, an emoji, ends in a ZERO WIDTH JOINER: a symbol next joins it
    flag = False  # that glyph is one regional indicator, waiting for its pair
    for char in text:
        code = ord(char)
        if 0x20 <= code < 0x7F:  # (ASCII: the common case, no look-up)
            width += 1
            cluster, joiner, flag = 1, False, False
            continue
        if 0xD800 <= code < 0xE000:
            width += 6
            cluster, joiner, flag = 0, False, False
            continue
        if code == 0x200D:  # ZERO WIDTH JOINER
            joiner = cluster == 2
            continue
        if code == 0xFE0F:  # VARIATION SELECTOR-16: emoji presentation, 2 columns
            if cluster == 1:
                width += 1
                cluster = 2
            continue
        category = unicodedata.category(char)
        if (
            (category in ("Mn", "Me", "Cf", "Cc") and code != 0xAD)
            or 0x1160 <= code < 0x1200
            or 0xD7B0 <= code < 0xD800
        ):
            continue  # (SOFT HYPHEN, Cf, is shown as a hyphen; Hangul jamo vowels and finals join their syllable)
        if cluster == 2 and (0x1F3FB <= code < 0x1F400 or (joiner and category == "So")):
            joiner = False  # a skin tone, or an emoji joined to the one before: one glyph
            continue
        if 0x1F1E6 <= code < 0x1F200:  # REGIONAL INDICATOR SYMBOL LETTER: two make a flag
            width += 1
            cluster, joiner, flag = (2, False, False) if flag else (1, False, True)
            continue
        columns = 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
        width += columns
        cluster, joiner, flag = columns, False, False
    return width


def pad(text: str, width: int) -> str:
    """``text`` followed by spaces up to ``width`` terminal columns (:func:`display_width`): ``str.ljust`` by
    columns instead of code points; a wider text is returned as it is."""
    return text + " " * max(0, width - display_width(text))


COLUMN_MAX: Final = 48
"""The widest a table's column is laid out (terminal columns). A longer cell is shown whole on its own row and
pushes that row's later cells right; the other rows keep their layout (red team 37: one tool named with 5,000
characters made every row of ``check``'s table 5,207 wide)."""


def column_widths(rows: list[tuple[str, ...]], count: int) -> list[int]:
    """The layout width of each of the first ``count`` columns of ``rows`` (escaped text, the header among them):
    its widest cell (:func:`display_width`), at most :data:`COLUMN_MAX`. Pad with :func:`pad`."""
    return [min(COLUMN_MAX, max(display_width(row[i]) for row in rows)) for i in range(count)]
