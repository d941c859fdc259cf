"""formats: the 19 formats of 2020-12, exact on every dialect's optional/format suite (E4), plus RFC edge cases."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcp_guard.core.formats import FORMATS, format_checker
from tests.datasets import JSON_SCHEMA_TEST_SUITE

SUITE = JSON_SCHEMA_TEST_SUITE

# String tests per file and dialect, pinned so the run can never silently compare nothing.
_BASE = {
    "date-time.json": 27,
    "date.json": 75,
    "duration.json": 46,
    "ecmascript-regex.json": 12,
    "email.json": 21,
    "hostname.json": 58,
    "idn-email.json": 12,
    "idn-hostname.json": 84,
    "ipv4.json": 35,
    "ipv6.json": 36,
    "iri-reference.json": 7,
    "iri.json": 18,
    "json-pointer.json": 34,
    "regex.json": 2,
    "relative-json-pointer.json": 19,
    "time.json": 41,
    "unknown.json": 0,
    "uri-reference.json": 22,
    "uri-template.json": 32,
    "uri.json": 40,
    "uuid.json": 22,
}
_2019 = {**_BASE, "email.json": 14}
_DRAFT7 = {k: v for k, v in _2019.items() if k not in ("duration.json", "uuid.json")} | {"idn-hostname.json": 83}
_DRAFT6 = {
    k: _BASE[k]
    for k in (
        "date-time.json",
        "email.json",
        "ipv4.json",
        "ipv6.json",
        "json-pointer.json",
        "unknown.json",
        "uri-reference.json",
        "uri-template.json",
        "uri.json",
    )
} | {"email.json": 14, "hostname.json": 24}
COUNTS = {"draft2020-12": _BASE, "draft2019-09": _2019, "draft7": _DRAFT7, "draft6": _DRAFT6}


def _files() -> list[Any]:
    return [pytest.param(d, f, id=f"{d}/{f}") for d, files in COUNTS.items() for f in sorted(files)]


@pytest.mark.parametrize(("dialect", "name"), _files())
def test_suite_format_file(dialect: str, name: str) -> None:
    path = SUITE / dialect / "optional" / "format" / name
    checked = 0
    for group in json.loads(path.read_text(encoding="utf-8")):
        fmt = group["schema"]["format"]
        checker = format_checker(fmt)
        assert (checker is None) == (fmt not in FORMATS)
        for case in group["tests"]:
            if checker is None or not isinstance(case["data"], str):
                assert case["valid"] is True  # an annotation, or a format on a non-string: no constraint
                continue
            assert checker(case["data"]) is case["valid"], (group["description"], case["description"])
            checked += 1
    assert checked == COUNTS[dialect][name]


def test_the_suite_folders_hold_what_the_counts_say() -> None:
    for dialect, files in COUNTS.items():
        folder = SUITE / dialect / "optional" / "format"
        assert {p.name for p in folder.glob("*.json")} == set(files), dialect


def test_interface() -> None:
    assert len(FORMATS) == 19
    for name in FORMATS:
        assert callable(format_checker(name))
    for name in ("int32", "path", "password", "binary", "Date-Time", "uri "):
        assert format_checker(name) is None


def check(fmt: str, value: str) -> bool:
    checker = format_checker(fmt)
    assert checker is not None
    return checker(value)


# Edge cases the suite does not hold, from the RFCs.
EDGES = [
    # RFC 3339 5.7: a leap second is 23:59:60 UTC, whatever the offset.
    ("date-time", "1998-12-31T23:59:60+00:00", True),
    ("date-time", "1999-01-01T00:59:60+01:00", True),
    ("date-time", "1998-12-31T23:59:60+01:00", False),
    ("date-time", "1998-12-31T23:59:60.5Z", True),
    ("date-time", "1998-12-31 23:59:59Z", False),  # RFC 3339 5.6 NOTE allows a space only by agreement
    ("date-time", "2000-02-29T00:00:00Z", True),
    ("date-time", "1900-02-29T00:00:00Z", False),
    ("date-time", "2020-01-01T00:00:00.Z", False),
    ("date", "0000-02-29", True),  # year 0 is divisible by 400
    ("time", "23:59:60-00:00", True),
    ("time", "12:00:00+23:59", True),
    ("duration", "P1Y2M3DT4H5M", True),
    ("duration", "P1W1D", False),
    ("duration", "p1dt2h", True),  # ABNF strings are case-insensitive (RFC 5234, 2.3)
    # RFC 2673 dotted-quad: no leading zeros, no shorthand.
    ("ipv4", "01.2.3.4", False),
    ("ipv4", "1.2.3.04", False),
    ("ipv4", "0.0.0.00", False),
    # RFC 4291 2.2 text forms; zone ids (RFC 4007) are not part of the address.
    ("ipv6", "fe80::1%eth0", False),
    ("ipv6", "fe80::1%25eth0", False),
    ("ipv6", "::ffff:1.2.3.04", False),
    ("ipv6", "1:2:3:4:5:6:7::", True),
    ("ipv6", "::1:2:3:4:5:6:7", True),
    ("ipv6", "1:2:3:4:5:6:1.2.3.4", True),
    ("ipv6", "1:2:3:4:5:6:7:1.2.3.4", False),
    ("ipv6", "\u0661::", False),
    ("uri", "http://[fe80::1%25eth0]/", False),  # RFC 6874 zone ids are not RFC 3986
    ("uri", "http://[::1]:8080/a", True),
    ("uri", "http://a/b?c#d#e", False),
    ("uri", "x:", True),
    ("uri-reference", "a/b:c", True),
    ("iri", "http://例え.テスト/パス?クエリ#断片", True),
    ("iri", "http://example.com/\ue000", False),  # iprivate only in the query
    ("iri", "http://example.com/?\ue000", True),
    ("uri-template", "{=var}", True),  # op-reserve is in the grammar
    ("uri-template", "{var:9999}", True),
    ("uri-template", "{var*:3}", False),
    ("uri-template", "{%4}", False),
    ("uri-template", "%zz", False),
    # RFC 5321 4.1.2, 4.1.3, 4.5.3.1.
    ("email", "a" * 64 + "@example.com", True),
    ("email", "a" * 65 + "@example.com", False),
    ("email", '"a\\"b"@example.com', True),
    ("email", '"a"b"@example.com', False),
    ("email", "joe@[IPv6:::ffff:1.2.3.4]", True),
    ("email", "joe@[IPv6:1.2.3.4]", False),
    ("email", "joe@[tag:anything]", True),
    ("email", "joe@-example.com", False),
    ("email", "joe@example-.com", False),
    ("email", "jöe@example.com", False),
    # the domain is a hostname as the `hostname` format judges it (RFC 5321, 2.3.5; a new-user trial)
    ("email", "a@xn--X.com", False),
    ("email", "a@a--b.XN--xx", False),
    ("email", "a@" + "b" * 64 + ".com", False),
    ("email", "a@" + "b" * 63 + ".com", True),
    ("idn-email", "jöe@exämple.com", True),
    ("idn-email", "joe@", False),
    # RFC 1123 and IDNA2008 (RFC 5891, 5892 contextual rules, 5893 Bidi).
    ("hostname", "a" * 63 + "." + "b" * 63 + "." + "c" * 63 + "." + "d" * 61, True),
    ("hostname", "a" * 63 + "." + "b" * 63 + "." + "c" * 63 + "." + "d" * 62, False),
    ("hostname", "xn--ls8h", False),  # U+1F4A9: symbols are DISALLOWED in IDNA2008 (RFC 5892)
    ("hostname", "ab--cd.example", True),  # an R-LDH label that is not xn-- is still LDH (RFC 1123)
    ("idn-hostname", "\u0627\u0644\u0639\u0631\u0628\u064a\u0629", True),
    ("idn-hostname", "a\u200db", False),  # ZWJ not after a virama (CONTEXTJ)
    ("idn-hostname", "\u00e4.\u05d0", True),
    ("idn-hostname", "Bücher", False),  # uppercase is DISALLOWED in IDNA2008 (no mapping)
    ("idn-hostname", "bu\u0308cher", False),  # not NFC
    ("json-pointer", "/a~01", True),
    ("json-pointer", "~0", False),
    ("relative-json-pointer", "0", True),
    ("relative-json-pointer", "00", False),
    ("regex", "(?<a>x)(?<a>y)", False),  # duplicate group names
    ("regex", "\\p{Script=Greek}", True),
    ("regex", "\\p{Nope}", False),
    ("regex", "a\ud800", True),  # a lone surrogate is a literal code point in ECMA-262 source
    ("uuid", "{2eb8aa08-aa98-11ea-b4aa-73b441d16380}", False),
]


@pytest.mark.parametrize(("fmt", "value", "valid"), EDGES, ids=[f"{f}:{v[:30]!r}" for f, v, _ in EDGES])
def test_rfc_edge_cases(fmt: str, value: str, valid: bool) -> None:
    assert check(fmt, value) is valid


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_checkers_never_raise_on_lone_surrogates_and_controls(fmt: str) -> None:
    for value in ("\ud800", "a\udfff@b.c", "http://a/\ud800", "\x00", "", "\n", "[", "%", "{", "\\", "xn--", "."):
        assert isinstance(check(fmt, value), bool)


HUGE = 1 << 20
ADVERSARIAL = {
    "letters": "a" * HUGE,
    "digits": "1" * HUGE,
    "labels": "a." * (HUGE // 2),
    "duration": "P" + "1" * HUGE,
    "colons": ":" * HUGE,
    "slashes": "/" * HUGE,
    "percent": "%41" * (HUGE // 3),
    "open brace": "{" + "a" * HUGE,
    "dotted var": "{a" + ".a" * (HUGE // 2),
    "at": "a" * HUGE + "@",
    "quote": '"' + "a" * HUGE,
    "url": "http://" + "a" * HUGE,
    "pointer": "/~0" * (HUGE // 3),
    "non-ascii": "é" * HUGE,
}


@pytest.mark.parametrize("fmt", sorted(FORMATS - {"regex"}))
def test_a_mebibyte_string_is_decided(fmt: str) -> None:
    """Every checker finishes on 1 MiB adversarial strings (their cost is linear: see the benchmark)."""
    results = {name: check(fmt, value) for name, value in ADVERSARIAL.items()}
    assert all(isinstance(r, bool) for r in results.values())
    if fmt in ("hostname", "idn-hostname", "ipv4", "ipv6", "date", "date-time", "time", "uuid", "email"):
        assert not any(results.values())


def test_format_cost_is_monotone_and_covers_every_format() -> None:
    from mcp_guard.core.formats import format_cost

    assert format_cost("int32", 10) == 0
    for name in FORMATS:
        costs = [format_cost(name, n) for n in (0, 1, 10, 253, 254, 1 << 20)]
        assert costs == sorted(costs)
        assert costs[0] > 0
    assert format_cost("hostname", 1 << 20) == format_cost("hostname", 253)  # refused before any IDNA work
    assert format_cost("regex", 1 << 20) > format_cost("uri", 1 << 20) > format_cost("uuid", 1 << 20)


def test_regex_with_too_many_alternatives_is_undecidable_not_guessed() -> None:
    from mcp_guard.core.formats import Undecidable

    checker = format_checker("regex")
    assert checker is not None
    with pytest.raises(Undecidable):
        checker("a" + "|a" * 50_000)  # regress would crash the process on it
    assert checker("a" + "|a" * 1_000) is True


def test_no_suite_test_disagrees_between_dialects() -> None:
    """The same format and string never has two verdicts across the four dialects' folders."""
    verdicts: dict[tuple[str, str], set[bool]] = {}
    for dialect in COUNTS:
        folder = SUITE / dialect / "optional" / "format"
        for path in folder.glob("*.json"):
            for group in json.loads(path.read_text(encoding="utf-8")):
                for case in group["tests"]:
                    if isinstance(case["data"], str):
                        verdicts.setdefault((group["schema"]["format"], case["data"]), set()).add(case["valid"])
    assert len(verdicts) > 500
    assert [key for key, seen in verdicts.items() if len(seen) > 1] == []
