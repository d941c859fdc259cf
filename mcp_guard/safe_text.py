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

from typing import Final

__all__ = ["display_width", "escape", "escape_json", "pad"]

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

_SURROGATES: Final = range(0xD800, 0xE000)
"""Lone surrogates (a JSON ``"\\ud800"`` decodes to one): no UTF-8 encodes them, so a stream writes them as
it can (``backslashreplace``: six characters for one), and a table would measure one and show six."""

_TABLE: Final[dict[int, str]] = {
    **{c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F)},  # C0 controls (newline, ESC, ...) and DEL
    **{c: f"\\u{c:04x}" for c in (*_UNSAFE, *_SURROGATES)},
}


def escape(text: str) -> str:
    """``text`` with every character that breaks a line, controls a terminal or reorders text escaped.

    C0 controls and DEL become ``\\xNN`` (``\\x0a``, ``\\x1b``); C1 controls, U+2028, U+2029, the
    bidi marks, embeddings, overrides and isolates, and lone surrogates (which no UTF-8 encodes)
    become ``\\uNNNN`` (``\\u0085``, ``\\u009b``, ``\\u202e``, ``\\ud800``). The result holds no
    line break (neither ``str.splitlines`` nor a terminal sees one) and nothing a terminal acts on.
    """
    return text.translate(_TABLE)


_JSON_TABLE: Final[dict[int, str]] = {c: f"\\u{c:04x}" for c in (0x7F, *_UNSAFE, *_SURROGATES)}


def escape_json(text: str) -> str:
    """JSON text (``json.dumps(..., ensure_ascii=False)``) with DEL, the C1 controls, U+2028, U+2029,
    the bidi marks, embeddings, overrides and isolates, and lone surrogates written as JSON ``\\uNNNN`` escapes: the
    same JSON value, safe on a terminal (the encoder already escapes the C0 controls; other non-ASCII text
    stays readable). Used for every ``--json`` report, as :func:`escape` is for the text ones.
    """
    return text.translate(_JSON_TABLE)


def display_width(text: str) -> int:
    """The columns ``text`` takes on a terminal (for tables of escaped names: :func:`escape` first).

    Rules (Unicode's East Asian Width, UAX #11, as ``wcwidth`` applies it): East Asian wide and
    fullwidth characters (``W``, ``F``: CJK, most emoji) take 2; combining marks (``Mn``, ``Me``),
    format characters (``Cf``: zero-width space and joiner...; not the soft hyphen, shown) and controls take 0;
    a lone surrogate takes 6 (a stream writes it ``\\udXXX``); everything else 1. Grapheme
    clusters are not joined (an emoji sequence counts each of its parts).
    """
    import unicodedata  # (here: wrap starts without it)

    width = 0
    for char in text:
        code = ord(char)
        if 0x20 <= code < 0x7F:  # (ASCII: the common case, no look-up)
            width += 1
        elif 0xD800 <= code < 0xE000:
            width += 6
        elif unicodedata.category(char) in ("Mn", "Me", "Cf", "Cc") and code != 0xAD:
            width += 0  # (SOFT HYPHEN, Cf, is shown as a hyphen)
        elif unicodedata.east_asian_width(char) in ("W", "F"):
            width += 2
        else:
            width += 1
    return width


def pad(text: str, width: int) -> str:
    """``text`` followed by spaces up to ``width`` terminal columns (:func:`display_width`): ``str.ljust`` by
    columns instead of code points; a wider text is returned as it is."""
    return text + " " * max(0, width - display_width(text))
