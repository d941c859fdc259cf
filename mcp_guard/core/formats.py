"""``format`` assertions for the formats JSON Schema 2020-12 defines (spec decision E4).

``extended`` asserts ``format`` in every dialect for the 19 formats of 2020-12 Validation,
7.3, exactly as their RFCs and the JSON Schema Test Suite's ``optional/format`` files say
(the format-assertion vocabulary). A ``format`` outside :data:`FORMATS` is an annotation:
:func:`format_checker` returns ``None`` and the core reports it in the notes.

Every checker takes a ``str`` (a format applies to strings only; the core does not call it
for other types), returns ``bool`` and never raises (but ``regex``: see :func:`format_checker`);
:func:`format_cost` bounds its work in budget units before the core calls it. Each is written from its RFC's ABNF:
the grammars are matched by Python regular expressions built so that no two branches can
read the same character (``re`` backtracks; these never do more than a constant amount of
it per character), or by plain scans. Cost: linear in the length of the string, with two
documented exceptions that are linear after a length cut-off (``hostname`` and
``idn-hostname``: longer than 253 octets is invalid, decided before any IDNA work;
``regex``: the pattern is parsed by ``regress``, linear in its length). A 1 MiB string is
decided in milliseconds (``tests/core/test_formats.py`` holds a budget test on sizes).

Libraries (where they are exact on the suite, measured): ``idna`` (IDNA2008, RFC 5891-5893
with the contextual rules and the Bidi rule: U-labels and A-labels) and the standard
library's ``ipaddress`` for the IPv6 text form (RFC 4291, 2.2; zone ids refused here).
``rfc3339-validator``, ``rfc3986-validator``, ``fqdn``, ``uri-template`` and ``isoduration``
(python-jsonschema's choices) each disagree with the suite (leap seconds, lowercase
``t``/``z``, trailing newlines, IPv4 leading zeros inside IPv6 literals, A-label checks,
the duration grammar, ``{a..b}``), so those rules are written here.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from collections.abc import Callable
from typing import Any, Final

import idna

from .ecma_regex import Undecidable, is_ecma_regex

__all__ = ["FORMATS", "Undecidable", "format_checker", "format_cost", "format_cost_terms", "format_shortcut"]

FORMATS: Final[frozenset[str]] = frozenset(
    {
        "date-time",
        "date",
        "time",
        "duration",
        "email",
        "idn-email",
        "hostname",
        "idn-hostname",
        "ipv4",
        "ipv6",
        "uri",
        "uri-reference",
        "iri",
        "iri-reference",
        "uuid",
        "uri-template",
        "json-pointer",
        "relative-json-pointer",
        "regex",
    }
)
"""The formats 2020-12 defines (Validation, 7.3); asserted in every dialect (E4)."""

_A = re.ASCII

# --- dates and times: RFC 3339, 5.6 ---------------------------------------------------------

_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})", _A)
_TIME = re.compile(r"([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.[0-9]+)?(?:[Zz]|([+-])([0-9]{2}):([0-9]{2}))", _A)
_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_MONTH_DAYS: Final = frozenset(f"{m:02d}-{d:02d}" for m in range(1, 13) for d in range(1, _DAYS[m - 1] + 1))
"""Every ``MM-DD`` of a common year (365 of them): February 29 is decided by the year."""


def _full_date(m: re.Match[str]) -> bool:
    return _day_exists(int(m[1]), int(m[2]), int(m[3]))


def _day_exists(year: int, month: int, day: int) -> bool:
    """Whether the month has that day (RFC 3339, 5.7: February 29 in leap years only)."""
    if not 1 <= month <= 12 or day < 1:
        return False
    if day <= _DAYS[month - 1]:
        return True
    return month == 2 and day == 29 and year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def _full_time(m: re.Match[str]) -> bool:
    hour, minute, second = int(m[1]), int(m[2]), int(m[3])
    if hour > 23 or minute > 59 or second > 60:
        return False
    if m[4] is not None:
        off_h, off_m = int(m[5]), int(m[6])
        if off_h > 23 or off_m > 59:
            return False
        sign = 1 if m[4] == "+" else -1
    else:
        off_h = off_m = 0
        sign = 1
    if second == 60:
        # A leap second is the last second of a UTC day (RFC 3339, 5.7): 23:59:60 in UTC.
        utc = (hour * 60 + minute - sign * (off_h * 60 + off_m)) % (24 * 60)
        return utc == 23 * 60 + 59
    return True


def _date(value: str) -> bool:
    """``full-date`` (RFC 3339, 5.6): ``YYYY-MM-DD``, ASCII digits, a day the month has."""
    # Per string, so without a regex: ``MM-DD`` is looked up among the days a common year has.
    if len(value) != 10 or value[4] != "-" or not value.isascii() or not value[:4].isdigit():
        return False
    month_day = value[5:]
    return month_day in _MONTH_DAYS or (month_day == "02-29" and _day_exists(int(value[:4]), 2, 29))


def format_shortcut(name: str) -> tuple[str, Any] | None:
    """An inline sufficient test for format ``name``: ``(template, constant)``, or ``None``.

    ``template.format(v=..., c=...)`` is a Python expression over the string in ``v`` that is
    True only for a valid string (``c``: the name the constant is bound to); where it is False,
    the checker decides. For the generated fast path: most valid strings then cost no call.
    ``date``: :func:`_date`'s own tests without its February 29 branch (a day every year has).
    """
    if name == "date":
        return "(len({v}) == 10 and {v}[5:] in {c} and {v}[4] == '-' and {v}[:4].isdigit() and {v}.isascii())", (
            _MONTH_DAYS
        )
    return None


def _time(value: str) -> bool:
    """``full-time`` (RFC 3339, 5.6): an offset is required; ``:60`` only at 23:59 UTC."""
    m = _TIME.fullmatch(value)
    return m is not None and _full_time(m)


def _date_time(value: str) -> bool:
    """``date-time`` (RFC 3339, 5.6): ``full-date T full-time``, ``T`` and ``Z`` in either case (5.6, note)."""
    if len(value) < 20 or value[10] not in "Tt":
        return False
    d, t = _DATE.fullmatch(value, 0, 10), _TIME.fullmatch(value, 11)
    return d is not None and t is not None and _full_date(d) and _full_time(t)


# RFC 3339, Appendix A: dur-date / dur-time / dur-week, each unit at most once, in order.
_DUR_TIME = r"T(?:[0-9]+H(?:[0-9]+M(?:[0-9]+S)?)?|[0-9]+M(?:[0-9]+S)?|[0-9]+S)"
_DURATION = re.compile(
    rf"P(?:(?:[0-9]+D|[0-9]+M(?:[0-9]+D)?|[0-9]+Y(?:[0-9]+M(?:[0-9]+D)?)?)(?:{_DUR_TIME})?|{_DUR_TIME}|[0-9]+W)",
    _A | re.IGNORECASE,  # ABNF strings are case-insensitive (RFC 5234, 2.3)
)


def _duration(value: str) -> bool:
    """``duration`` (RFC 3339, Appendix A, ABNF): integers only, no sign, weeks alone, letters in either case."""
    # A run of digits is read by one branch at a time: the branch is chosen by the unit
    # letter after it, so the regex backtracks at most over one run per branch (4 deep).
    return _DURATION.fullmatch(value) is not None


# --- internet addresses ---------------------------------------------------------------------

_IPV4 = re.compile(
    r"(?:(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])", _A
)
_HEX = frozenset("0123456789abcdefABCDEF")


def _ipv4(value: str) -> bool:
    """``ipv4`` (RFC 2673, 3.2 dotted-quad): four decimal octets 0-255, no leading zeros."""
    return len(value) <= 15 and _IPV4.fullmatch(value) is not None


def _ipv6(value: str) -> bool:
    """``ipv6`` (RFC 4291, 2.2): the three text forms; no zone id, no brackets, no prefix."""
    if len(value) > 45 or not value.isascii() or "%" in value or "/" in value:
        return False
    if "." in value and not _ipv4(value[value.rfind(":") + 1 :]):
        return False  # the embedded IPv4 is a dotted-quad: no leading zeros
    try:
        ipaddress.IPv6Address(value)
    except ValueError:
        return False
    return True


# --- host names -----------------------------------------------------------------------------

_LDH_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?", _A)
_IDN_DOTS = re.compile("[.\u3002\uff0e\uff61]")
_RTL = frozenset(("R", "AL", "AN"))


def _a_label(label: str) -> bool:
    """An ``xn--`` label is a valid A-label: Punycode of a valid U-label that re-encodes to itself (RFC 5891, 5.4)."""
    try:
        ulabel = idna.decode(label)
        return idna.encode(ulabel).decode("ascii") == label.lower()
    except (idna.IDNAError, UnicodeError, ValueError):
        return False


def _hostname(value: str) -> bool:
    """``hostname`` (RFC 1123, 2.1; RFC 5890, 2.3.2.1): LDH labels of 1-63, at most 253 octets.

    An ``xn--`` label must be a valid A-label (checked with ``idna``: IDNA2008, contextual
    rules and Bidi); other labels with ``--`` in positions 3-4 are plain LDH labels (RFC
    1123; the draft-06 suite). No trailing dot (the suite).
    """
    if not value or len(value) > 253 or not value.isascii():
        return False
    labels = value.split(".")
    for label in labels:
        if _LDH_LABEL.fullmatch(label) is None:
            return False
        if label[:4].lower() == "xn--" and not _a_label(label):
            return False
    ulabels = []
    for label in labels:
        try:
            ulabels.append(idna.decode(label) if label[:4].lower() == "xn--" else label)
        except (idna.IDNAError, UnicodeError, ValueError):
            return False
    return _bidi_domain(ulabels)


def _bidi_domain(ulabels: list[str]) -> bool:
    """RFC 5893, 2: in a domain name with a right-to-left label, every label obeys the Bidi rule."""
    if not any(unicodedata.bidirectional(ch) in _RTL for label in ulabels for ch in label):
        return True
    try:
        return all(idna.check_bidi(label, check_ltr=True) for label in ulabels)
    except idna.IDNAError:
        return False


def _idn_hostname(value: str) -> bool:
    """``idn-hostname`` (RFC 5890, 2.3.2.3; RFC 5891; RFC 5893): U-labels or A-labels, checked by ``idna``.

    Labels are separated by any of the four full stops of RFC 3490, 3.1; the name (as
    A-labels) is at most 253 octets and each label at most 63; no empty label, no trailing
    separator; in a name with a right-to-left label every label obeys the Bidi rule.
    """
    if not value or len(value) > 253 * 4:
        return False
    alabels = []
    ulabels = []
    for label in _IDN_DOTS.split(value):
        if label.isascii():
            if label[:4].lower() == "xn--":
                if not _a_label(label):
                    return False
                ulabels.append(idna.decode(label))
            elif _LDH_LABEL.fullmatch(label) is None or label[2:4] == "--":
                return False
            else:
                ulabels.append(label)
            alabels.append(label)
        else:
            try:
                alabels.append(idna.encode(label).decode("ascii"))
            except (idna.IDNAError, UnicodeError, ValueError):
                return False
            ulabels.append(label)
    return len(".".join(alabels)) <= 253 and _bidi_domain(ulabels)


# --- e-mail addresses: RFC 5321, 4.1.2 (Mailbox); RFC 6531, 3.3 ----------------------------

_ATEXT = r"A-Za-z0-9!#$%&'*+/=?^_`{|}~\-"
_DOT_STRING = re.compile(rf"[{_ATEXT}]++(?:\.[{_ATEXT}]++)*+", _A)
_QUOTED = re.compile(r'"(?:[\x20\x21\x23-\x5b\x5d-\x7e]++|\\[\x20-\x7e])*+"', _A)
_U_ATEXT = _ATEXT + "\u0080-\ud7ff\ue000-\U0010ffff"
_U_DOT_STRING = re.compile(rf"[{_U_ATEXT}]++(?:\.[{_U_ATEXT}]++)*+")
_U_QUOTED = re.compile(r'"(?:[\x20\x21\x23-\x5b\x5d-\x7e\u0080-\ud7ff\ue000-\U0010ffff]++|\\[\x20-\x7e])*+"')
_DOMAIN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*", _A)
_U_LETDIG = "A-Za-z0-9\u0080-\ud7ff\ue000-\U0010ffff"
_U_DOMAIN = re.compile(
    rf"[{_U_LETDIG}](?:[{_U_LETDIG}-]*[{_U_LETDIG}])?(?:\.[{_U_LETDIG}](?:[{_U_LETDIG}-]*[{_U_LETDIG}])?)*"
)
_GENERAL_LITERAL = re.compile(r"[A-Za-z0-9-]*[A-Za-z0-9]:[\x21-\x5a\x5e-\x7e]+", _A)


def _address_literal(body: str) -> bool:
    """RFC 5321, 4.1.3: IPv4, ``IPv6:`` and general address literals (the part inside ``[]``)."""
    if _ipv4(body):
        return True
    if body[:5].lower() == "ipv6:":
        return _ipv6(body[5:])
    return _GENERAL_LITERAL.fullmatch(body) is not None


def _mailbox(value: str, international: bool) -> bool:
    at = value.rfind("@")
    if at <= 0:
        return False
    local, domain = value[:at], value[at + 1 :]
    if len(local.encode("utf-8", "surrogatepass")) > 64 or len(domain) > 255:
        return False  # RFC 5321, 4.5.3.1.1 and 4.5.3.1.2
    dot_string, quoted, plain_domain = (
        (_U_DOT_STRING, _U_QUOTED, _U_DOMAIN) if international else (_DOT_STRING, _QUOTED, _DOMAIN)
    )
    if dot_string.fullmatch(local) is None and quoted.fullmatch(local) is None:
        return False
    if domain.startswith("[") and domain.endswith("]"):
        return _address_literal(domain[1:-1])
    if not international:
        return _hostname(domain)  # RFC 5321, 2.3.5: a domain name as DNS has it (labels of 1-63, valid A-labels)
    return plain_domain.fullmatch(domain) is not None


def _email(value: str) -> bool:
    """``email`` (RFC 5321, 4.1.2 ``Mailbox``): dot-string or quoted local part, a domain or an address literal."""
    return value.isascii() and _mailbox(value, international=False)


def _idn_email(value: str) -> bool:
    """``idn-email`` (RFC 6531, 3.3): ``Mailbox`` with UTF8-non-ascii (RFC 6532, 3.1) in atext, qtext, sub-domains.

    The domain is not held to IDNA2008 (a non-NFC label is valid: the suite)."""
    return _mailbox(value, international=True)


# --- URIs and IRIs: RFC 3986, 3 and 4.1; RFC 3987, 2.2 --------------------------------------

_UNRESERVED = r"A-Za-z0-9\-._~"
_SUB_DELIMS = r"!$&'()*+,;="
_UCSCHAR = (
    "\u00a0-\ud7ff\uf900-\ufdcf\ufdf0-\uffef\U00010000-\U0001fffd\U00020000-\U0002fffd\U00030000-\U0003fffd"
    "\U00040000-\U0004fffd\U00050000-\U0005fffd\U00060000-\U0006fffd\U00070000-\U0007fffd\U00080000-\U0008fffd"
    "\U00090000-\U0009fffd\U000a0000-\U000afffd\U000b0000-\U000bfffd\U000c0000-\U000cfffd\U000d0000-\U000dfffd"
    "\U000e1000-\U000efffd"
)
_IPRIVATE = "\ue000-\uf8ff\U000f0000-\U000ffffd\U00100000-\U0010fffd"
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+\-.]*", _A)
_PORT = re.compile(r"[0-9]*", _A)
_IPVFUTURE = re.compile(rf"[vV][0-9A-Fa-f]+\.[{_UNRESERVED}{_SUB_DELIMS}:]+", _A)


class _Grammar:
    """The RFC 3986 (or, with ``iri``, RFC 3987) character classes as linear regexes."""

    def __init__(self, iri: bool) -> None:
        u = _UNRESERVED + (_UCSCHAR if iri else "")
        pct = "%[0-9A-Fa-f]{2}"
        # (?:[class]++|%XX)*+ : possessive, and the two branches start with different characters.
        self.userinfo = re.compile(f"(?:[{u}{_SUB_DELIMS}:]++|{pct})*+")
        self.reg_name = re.compile(f"(?:[{u}{_SUB_DELIMS}]++|{pct})*+")
        self.path = re.compile(f"(?:[{u}{_SUB_DELIMS}:@/]++|{pct})*+")
        self.seg_nc = re.compile(f"(?:[{u}{_SUB_DELIMS}@]++|{pct})*+")  # first segment of a path-noscheme
        private = _IPRIVATE if iri else ""
        self.query = re.compile(f"(?:[{u}{_SUB_DELIMS}:@/?{private}]++|{pct})*+")
        self.fragment = re.compile(f"(?:[{u}{_SUB_DELIMS}:@/?]++|{pct})*+")

    def authority(self, text: str) -> bool:
        at = text.find("@")
        if at >= 0:
            if self.userinfo.fullmatch(text, 0, at) is None:
                return False
            text = text[at + 1 :]
        if text.startswith("["):
            close = text.find("]")
            if close < 0:
                return False
            inner, rest = text[1:close], text[close + 1 :]
            if not (_ipv6(inner) or _IPVFUTURE.fullmatch(inner) is not None):
                return False
            return rest == "" or (rest[0] == ":" and _PORT.fullmatch(rest, 1) is not None)
        colon = text.find(":")
        host, port = (text, "") if colon < 0 else (text[:colon], text[colon + 1 :])
        return self.reg_name.fullmatch(host) is not None and _PORT.fullmatch(port) is not None

    def reference(self, value: str, absolute: bool) -> bool:
        """``URI`` (``absolute``) or ``URI-reference`` (RFC 3986, 3 and 4.1)."""
        hash_at = value.find("#")
        if hash_at >= 0:
            if self.fragment.fullmatch(value, hash_at + 1) is None:
                return False
            value = value[:hash_at]
        q = value.find("?")
        if q >= 0:
            if self.query.fullmatch(value, q + 1) is None:
                return False
            value = value[:q]
        colon = value.find(":")
        slash = value.find("/")
        has_scheme = colon > 0 and (slash < 0 or colon < slash) and _SCHEME.fullmatch(value, 0, colon) is not None
        if has_scheme:
            value = value[colon + 1 :]
        elif absolute:
            return False
        if value.startswith("//"):
            end = value.find("/", 2)
            end = len(value) if end < 0 else end
            return self.authority(value[2:end]) and self.path.fullmatch(value, end) is not None
        if not has_scheme and not value.startswith("/"):
            # path-noscheme: no ":" in the first segment (RFC 3986, 4.2).
            first_end = value.find("/")
            first_end = len(value) if first_end < 0 else first_end
            if self.seg_nc.fullmatch(value, 0, first_end) is None:
                return False
        return self.path.fullmatch(value) is not None


_URI = _Grammar(iri=False)
_IRI = _Grammar(iri=True)


def _uri(value: str) -> bool:
    """``uri`` (RFC 3986, 3: ``URI``): a scheme, then hier-part, query and fragment; ASCII only."""
    return value.isascii() and _URI.reference(value, absolute=True)


def _uri_reference(value: str) -> bool:
    """``uri-reference`` (RFC 3986, 4.1: ``URI-reference``): a URI or a relative reference; ASCII only."""
    return value.isascii() and _URI.reference(value, absolute=False)


def _iri(value: str) -> bool:
    """``iri`` (RFC 3987, 2.2: ``IRI``): ``uri`` with ``ucschar`` (and ``iprivate`` in the query)."""
    return _IRI.reference(value, absolute=True)


def _iri_reference(value: str) -> bool:
    """``iri-reference`` (RFC 3987, 2.2: ``IRI-reference``)."""
    return _IRI.reference(value, absolute=False)


# --- the rest -------------------------------------------------------------------------------

_UUID = re.compile(r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}", _A)


def _uuid(value: str) -> bool:
    """``uuid`` (RFC 9562, 4: the 8-4-4-4-12 hex form, any case, any version and variant)."""
    return _UUID.fullmatch(value) is not None


# RFC 6570, 2: literals, expressions {op varspec,...}; varname with single dots; prefix 1-9999.
# The apostrophe is a valid literal (the suite; the RFC's ABNF omits %x27, its prose does not list it).
_VARCHAR = r"(?:[A-Za-z0-9_]++|%[0-9A-Fa-f]{2})"
_VARSPEC = rf"{_VARCHAR}++(?:\.{_VARCHAR}++)*+(?::[1-9][0-9]{{0,3}}|\*)?"
_TEMPLATE = re.compile(
    rf"(?:[\x21\x23\x24\x26-\x3b\x3d\x3f-\x5b\x5d\x5f\x61-\x7a\x7e{_UCSCHAR}{_IPRIVATE}]++|%[0-9A-Fa-f]{{2}}"
    rf"|\{{[+#./;?&=,!@|]?{_VARSPEC}(?:,{_VARSPEC})*+\}})*+"
)


def _uri_template(value: str) -> bool:
    """``uri-template`` (RFC 6570, 2.1-2.4, level 4 grammar)."""
    return _TEMPLATE.fullmatch(value) is not None


_POINTER = re.compile(r"(?:/(?:[^~/]++|~[01])*+)*+", re.DOTALL)
_RELATIVE = re.compile(r"(?:0|[1-9][0-9]*+)(?:#|(?:/(?:[^~/]++|~[01])*+)*+)", re.DOTALL | _A)


def _json_pointer(value: str) -> bool:
    """``json-pointer`` (RFC 6901, 3): empty, or ``/``-prefixed tokens where ``~`` is ``~0`` or ``~1``."""
    return _POINTER.fullmatch(value) is not None


def _relative_json_pointer(value: str) -> bool:
    """``relative-json-pointer`` (draft-bhutton-relative-json-pointer-00, 3).

    A non-negative integer without leading zeros, then ``#`` or a JSON Pointer."""
    return _RELATIVE.fullmatch(value) is not None


def _regex(value: str) -> bool:
    """``regex`` (2020-12 Validation, 7.3.8): ECMA-262 syntax with the ``u`` flag, judged by ``regress``."""
    return is_ecma_regex(value)


_CHECKERS: Final[dict[str, Callable[[str], bool]]] = {
    "date-time": _date_time,
    "date": _date,
    "time": _time,
    "duration": _duration,
    "email": _email,
    "idn-email": _idn_email,
    "hostname": _hostname,
    "idn-hostname": _idn_hostname,
    "ipv4": _ipv4,
    "ipv6": _ipv6,
    "uri": _uri,
    "uri-reference": _uri_reference,
    "iri": _iri,
    "iri-reference": _iri_reference,
    "uuid": _uuid,
    "uri-template": _uri_template,
    "json-pointer": _json_pointer,
    "relative-json-pointer": _relative_json_pointer,
    "regex": _regex,
}
assert set(_CHECKERS) == FORMATS


def format_checker(name: str) -> Callable[[str], bool] | None:
    """The checker of format ``name``, or ``None`` when 2020-12 does not define it (an annotation).

    Args:
        name: the ``format`` value as written in the schema (case-sensitive).
    Returns:
        a function ``str -> bool`` (``True``: the string is valid for the format), or
        ``None`` for a name outside :data:`FORMATS` (E4: an annotation). A checker never
        raises, except ``regex``, which raises :class:`Undecidable` for a text beyond the
        engine's limits (more alternatives than it can be given safely, nesting past 255
        groups): the core refuses the argument rather than guess.
        Charge :func:`format_cost` before calling it.
    """
    return _CHECKERS.get(name)


# Work-budget units per code point, with a margin over benchmarks/pattern_cost.py's measure
# (a unit is about 14-20 ns): IDNA work costs about 1-3 us per character of a host name (but
# a name past the length limit is refused before any), regress compiles about 0.5 us per
# character, the URI-like grammars take up to 25 ns per character, the rest less.
_UNITS_PER_CODE_POINT: Final[dict[str, int]] = {
    "hostname": 256,
    "idn-hostname": 256,
    "regex": 64,
    "uri": 4,
    "uri-reference": 4,
    "iri": 4,
    "iri-reference": 4,
    "uri-template": 4,
    "json-pointer": 4,
    "email": 4,
    "idn-email": 4,
}
_LENGTH_LIMIT: Final[dict[str, int]] = {"hostname": 253, "idn-hostname": 253 * 4}


def format_cost(name: str, length: int) -> int:
    """An upper bound, in work-budget units (``budget.MAX_WORK``), of checking ``length`` code points.

    ``0`` for a name outside :data:`FORMATS` (nothing is checked). Monotone in ``length``.
    """
    terms = _COST_TERMS.get(name)
    if terms is None:
        return 0
    units, limit = terms
    return 16 + units * (length if limit is None or length < limit else limit)


def format_cost_terms(name: str) -> tuple[int, int | None] | None:
    """``(units, limit)`` such that :func:`format_cost` is ``16 + units * min(length, limit)``
    (``limit`` None: no cap), or None for a name outside :data:`FORMATS`; for generated code
    that charges the cost inline."""
    return _COST_TERMS.get(name)


_COST_TERMS: Final[dict[str, tuple[int, int | None]]] = {
    name: (_UNITS_PER_CODE_POINT.get(name, 1), _LENGTH_LIMIT.get(name)) for name in _CHECKERS
}
"""Per checked format: (units per code point, length past which it costs no more); one lookup per string."""
