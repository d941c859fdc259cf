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

__all__ = ["escape", "escape_json"]

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

_TABLE: Final[dict[int, str]] = {
    **{c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F)},  # C0 controls (newline, ESC, ...) and DEL
    **{c: f"\\u{c:04x}" for c in _UNSAFE},
}


def escape(text: str) -> str:
    """``text`` with every character that breaks a line, controls a terminal or reorders text escaped.

    C0 controls and DEL become ``\\xNN`` (``\\x0a``, ``\\x1b``); C1 controls, U+2028, U+2029 and
    the bidi marks, embeddings, overrides and isolates become ``\\uNNNN`` (``\\u0085``,
    ``\\u009b``, ``\\u202e``). The result holds no line break (neither ``str.splitlines`` nor a
    terminal sees one) and nothing a terminal acts on.
    """
    return text.translate(_TABLE)


_JSON_TABLE: Final[dict[int, str]] = {c: f"\\u{c:04x}" for c in (0x7F, *_UNSAFE)}


def escape_json(text: str) -> str:
    """JSON text (``json.dumps(..., ensure_ascii=False)``) with DEL, the C1 controls, U+2028, U+2029 and
    the bidi marks, embeddings, overrides and isolates written as JSON ``\\uNNNN`` escapes: the same
    JSON value, safe on a terminal (the encoder already escapes the C0 controls; other non-ASCII text
    stays readable). Used for every ``--json`` report, as :func:`escape` is for the text ones.
    """
    return text.translate(_JSON_TABLE)
