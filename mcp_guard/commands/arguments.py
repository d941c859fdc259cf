"""Argparse types of the CLI's options, one copy each for every command that takes them.

A type takes the option's text and returns its value, or raises
:class:`argparse.ArgumentTypeError`, whose message argparse prints as
``mcp-guard ...: error: argument --OPTION: MESSAGE`` and exits with status 2. The message quotes
the text given (the operator's own command line, never a tool argument).
"""

from __future__ import annotations

import argparse

__all__ = ["positive_seconds", "seconds_or_never"]

_INFINITY = float("inf")


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
