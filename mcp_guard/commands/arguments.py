"""Argparse types of the CLI's options, one copy each for every command that takes them.

A type takes the option's text and returns its value, or raises
:class:`argparse.ArgumentTypeError`, whose message argparse prints as
``mcp-guard ...: error: argument --OPTION: MESSAGE`` and exits with status 2. The message quotes
the text given (the operator's own command line, never a tool argument).
"""

from __future__ import annotations

import argparse

__all__ = ["port", "positive_int", "positive_seconds", "seconds_or_never"]

_INFINITY = float("inf")

MAX_PORT = 65535
"""The largest TCP port number."""


def _number_of_seconds(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None


def positive_seconds(text: str) -> float:
    """A positive, finite number of seconds (``--timeout``, ``--request-timeout``, ``--http-body-timeout``).

    Raises :class:`argparse.ArgumentTypeError`: ``not a number of seconds: '<text>'`` for text
    ``float`` does not read, ``must be a positive number of seconds: '<text>'`` for 0, a negative
    number, an infinity or NaN.
    """
    value = _number_of_seconds(text)
    if not 0 < value < _INFINITY:  # False for NaN too
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds: {text!r}")
    return value


def seconds_or_never(text: str) -> float:
    """A positive, finite number of seconds, or 0 for never (``--session-idle-timeout``).

    Raises :class:`argparse.ArgumentTypeError` as :func:`positive_seconds` does, with ``must be a
    positive number of seconds, or 0 for never: '<text>'`` for a negative number, an infinity or NaN.
    """
    value = _number_of_seconds(text)
    if not 0 <= value < _INFINITY:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, or 0 for never: {text!r}")
    return value


def _digits(text: str) -> bool:
    """Whether ``text`` is ASCII digits only: ``int`` also reads `` 5``, ``+5``, ``5_000`` and other scripts'
    digits, and ``str.isdigit`` takes ``²``, which ``int`` refuses (argparse then said ``invalid _port value``)."""
    return text.isascii() and text.isdigit()


def positive_int(text: str) -> int:
    """A positive whole number (``--max-message-bytes``, in bytes).

    Raises :class:`argparse.ArgumentTypeError`: ``must be a positive whole number: '<text>'`` for 0 or a
    negative number, ``not a whole number: '<text>'`` for anything else that is not ASCII digits
    (``1.5``, ``1e6``, ``+5``, `` 5``), ``too many digits: '<text>'`` past Python's limit on ``int`` of text
    (4300 digits).
    """
    if not _digits(text):
        if text.startswith("-") and _digits(text[1:]):
            raise argparse.ArgumentTypeError(f"must be a positive whole number: {text!r}")
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}")
    try:
        value = int(text)
    except ValueError:  # (sys.get_int_max_str_digits)
        raise argparse.ArgumentTypeError(f"too many digits: {text[:20]!r}...") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive whole number: {text!r}")
    return value


def port(text: str) -> int:
    """A TCP port number, 0 to :data:`MAX_PORT` (``serve --metrics-port``; 0: any free port).

    Raises :class:`argparse.ArgumentTypeError`: ``not a port number (0-65535): '<text>'`` for anything else
    (a negative or larger number, text that is not ASCII digits).
    """
    if not _digits(text) or len(text) > 5 or int(text) > MAX_PORT:
        raise argparse.ArgumentTypeError(f"not a port number (0-{MAX_PORT}): {text!r}")
    return int(text)
