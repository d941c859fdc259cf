"""pydantic's errors of the configuration's models, in the guard's own words (red team 36, 6c).

pydantic's messages ("Input should be a valid list") name neither what the key takes nor what was
written in the guard's terms, and some of them would quote the value. :func:`explain` words one
error of a config model (``config.GuardSettings`` and its parts, ``oauth_config.OAuthSettings``,
``otel_config.OtelSettings``, ``config_servers.StdioServer``/``HttpServer``) as ``expected ..., found ...``,
where the expectation is read from the field's own annotation (:func:`describe`) and what was found
is the JSON kind of the value (a string, an integer, a list...), never the value itself: a config
holds tokens and passwords. A rule of a validator of our own (``ValueError``) keeps its words.
:func:`pydantic_errors` words every error of one validation so, each under its key's JSON path, and
:func:`did_you_mean` hints at the key a mistyped one is close to.

Pure: no I/O; :mod:`mcp_guard.config` and :mod:`mcp_guard.config_servers` use it.
"""

from __future__ import annotations

import difflib
import types
from collections.abc import Collection, Iterable, Mapping
from typing import Annotated, Any, Final, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from .config_text import json_path

__all__ = ["bare_type", "describe", "did_you_mean", "explain", "field_at", "found", "pydantic_errors"]

_PATTERN_WORDS: Final = {
    r"^[A-Za-z_][A-Za-z0-9_]*$": "an environment variable's name (letters, digits and _, not starting with a digit)",
    r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$": (
        "a rule name: 1 to 64 of A-Z a-z 0-9 _ . : -, starting with a letter or digit"
    ),
    r"^[\x21\x23-\x5b\x5d-\x7e]+$": 'a scope token (printable ASCII, no space, `"` or `\\`)',
}
"""What a string of each pattern used in the config models is, in words (the patterns themselves are
shown for any other)."""

_BOUND_WORDS: Final = {
    "greater_than": ("gt", "greater than"),
    "greater_than_equal": ("ge", "at least"),
    "less_than": ("lt", "less than"),
    "less_than_equal": ("le", "at most"),
}

_KIND_OF_TYPE: Final = {
    "string_type": "a string",
    "int_type": "an integer",
    "float_type": "a number",
    "bool_type": "true or false",
    "list_type": "a list",
    "tuple_type": "a list",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
    "none_required": "null",
}
"""The JSON kind each of pydantic's type errors asks for, when the annotation cannot be read."""


def found(value: Any) -> str:
    """The JSON kind of ``value``, for "found ...": never the value (a config holds secrets)."""
    t = type(value)
    if t is str:
        return "an empty string" if value == "" else "a string"
    if t is bool:
        return "true" if value else "false"  # not a secret: a switch
    if t is int:
        return "an integer"
    if t is float:
        return "a number with a fraction" if not value.is_integer() else "a number written with a decimal point"
    if value is None:
        return "null"
    if t is list or t is tuple:
        return "an empty list" if not value else "a list"
    if t is dict:
        return "an object"
    return "a value of another kind"


def _unwrapped(annotation: Any) -> tuple[Any, list[Any]]:
    """``annotation`` without ``Annotated`` metadata and without ``None`` in a union (``X | None`` -> ``X``), and the
    constraints (``Field(...)`` metadata) met on the way; a union of two or more types is left as it is."""
    out: list[Any] = []
    while True:
        origin = get_origin(annotation)
        if origin is Annotated:
            annotation, *meta = get_args(annotation)
            for m in meta:  # a ``Field(...)`` inside an annotation holds its constraints as metadata
                out += m.metadata if isinstance(m, FieldInfo) else [m]
        elif origin is Union or origin is types.UnionType:
            members = [a for a in get_args(annotation) if a is not type(None)]
            if len(members) != 1:
                return annotation, out
            annotation = members[0]
        else:
            return annotation, out


def bare_type(annotation: Any) -> Any:
    """``annotation`` without ``Annotated`` metadata and without ``None`` in a union (``X | None`` → ``X``)."""
    return _unwrapped(annotation)[0]


def _metadata(annotation: Any) -> list[Any]:
    """The constraints (``Field(...)`` metadata) of an annotation, through ``X | None``."""
    return _unwrapped(annotation)[1]


_PLURALS: Final = {
    "a string": "strings",
    "a non-empty string": "non-empty strings",
    "an integer": "integers",
    "a number": "numbers",
    "true or false": "true or false",
}


def _items(container: str, words: str) -> str:
    """A list (``container`` ``a list``) or an object (``an object``) of items described by ``words``:
    ``a list of strings``, ``an object whose values are strings``, else ``a list, each item X``."""
    plural = _PLURALS.get(words)
    if container == "a list":
        return f"a list of {plural}" if plural else f"a list, each item {words}"
    return f"an object whose values are {plural}" if plural else f"an object, each value {words}"


def describe(annotation: Any) -> str:
    """What a value of ``annotation`` is, in words: ``a list of strings``, ``an integer greater than 0``,
    ``one of reject, hide``, ``an object (its keys: ...)``. Read from the annotation itself, so every
    field of every config model is described, and a new field needs no new words."""
    meta = _metadata(annotation)
    bare = bare_type(annotation)
    origin = get_origin(bare)
    if origin is Literal:
        return "one of " + ", ".join(str(a) for a in get_args(bare))
    if origin is Union or origin is types.UnionType:
        parts = [describe(a) for a in get_args(bare) if a is not type(None)]
        return " or ".join(parts)
    if origin is list or origin is tuple:
        items = [a for a in get_args(bare) if a is not Ellipsis]
        return _items("a list", describe(items[0])) if items else "a list"
    if origin is dict:
        pair = get_args(bare)
        return _items("an object", describe(pair[1])) if len(pair) == 2 else "an object"
    if isinstance(bare, type) and issubclass(bare, BaseModel):
        keys = [f.alias or name for name, f in bare.model_fields.items()]
        return f"an object (its keys: {', '.join(keys)})"
    base = {str: "a string", int: "an integer", float: "a number", bool: "true or false"}.get(bare, "a value")
    if bare is str and _non_empty(meta):
        base = "a non-empty string"
    rest = _constraints(meta, bare is str)
    return rest[1:] if rest.startswith("=") else base + rest


def _constraints(meta: list[Any], text: bool) -> str:
    """The ``Field`` constraints of a number (``an integer`` + `` greater than 0, at most 60``) or a string
    (`` (at most 200 characters)``) in words; for a string with a pattern or non-empty, the whole phrase."""
    words = []
    for m in meta:
        pattern = getattr(m, "pattern", None)
        if text and pattern is not None:
            return "=" + _PATTERN_WORDS.get(pattern, f"a string matching `{pattern}`")
        for attr, word in (("gt", "greater than"), ("ge", "at least"), ("lt", "less than"), ("le", "at most")):
            bound = getattr(m, attr, None)
            if bound is not None:
                words.append(f"{word} {bound:g}" if type(bound) is float else f"{word} {bound}")
        shortest, longest = getattr(m, "min_length", None), getattr(m, "max_length", None)
        if text and shortest and shortest > 1:
            words.append(f"at least {shortest} characters")
        if text and longest:
            words.append(f"at most {longest} characters")
    if not words:
        return ""
    return f" ({', '.join(words)})" if text else " " + ", ".join(words)


def _non_empty(meta: list[Any]) -> bool:
    return any(getattr(m, "min_length", None) == 1 for m in meta)


def _has_field(model: Any, key: str) -> bool:
    return (
        isinstance(model, type)
        and issubclass(model, BaseModel)
        and any(key in (n, f.alias) for n, f in model.model_fields.items())
    )


def field_at(model: type[BaseModel], loc: tuple[str | int, ...]) -> Any:
    """The annotation of what sits at ``loc`` (pydantic's location, by alias or name) inside ``model``,
    or ``None`` where it cannot be followed. In a union, a key follows the member model that has it."""
    current: Any = model
    for step in loc:
        bare = bare_type(current)
        origin = get_origin(bare)
        if (origin is Union or origin is types.UnionType) and isinstance(step, str):  # the member with that key
            bare = next((m for m in map(bare_type, get_args(bare)) if _has_field(m, step)), bare)
            origin = get_origin(bare)
        if isinstance(bare, type) and issubclass(bare, BaseModel) and isinstance(step, str):
            fields = bare.model_fields
            match = next((f for n, f in fields.items() if step in (n, f.alias)), None)
            if match is None:
                return None
            current = match.annotation
            for m in match.metadata:
                current = Annotated[current, m]
        elif (origin is list or origin is tuple) and isinstance(step, int):
            current = get_args(bare)[0]
        elif origin is dict and isinstance(step, str):
            current = get_args(bare)[1]
        else:
            return None
    return current


def explain(error: Mapping[str, Any], model: type[BaseModel], loc: tuple[str | int, ...]) -> str:
    """One pydantic error (``ValidationError.errors()`` with ``include_input``) in the guard's words.

    Args:
        error: the error; its ``input`` is read for its JSON kind only, never shown.
        model: the model validated (``GuardSettings``, ``StdioServer``...).
        loc: the error's location in ``model``, union tags left out.

    Returns:
        ``expected <what the annotation takes>, found <the kind of value>``, or for a rule of ours
        (a ``ValueError`` of a validator) its own words; ``missing (required): expected ...`` for a required key.
    """
    kind = str(error.get("type", ""))
    ctx = error.get("ctx") or {}
    value = error.get("input")
    annotation = field_at(model, loc)
    expected = describe(annotation) if annotation is not None else _KIND_OF_TYPE.get(kind, "another value")
    if kind in ("value_error", "assertion_error"):
        text = str(ctx.get("error", ""))
        return text or f"not valid: expected {expected}"
    if kind == "missing":
        return f"missing (required): expected {expected}"
    if kind in _BOUND_WORDS:
        key, word = _BOUND_WORDS[kind]
        bound = ctx.get(key)
        shown = f"{bound:g}" if type(bound) is float else str(bound)
        return f"expected {expected}, found {found(value)} that is not {word} {shown}"
    if kind == "string_too_short":
        return f"expected {expected}, found {found(value)}" + (
            "" if value == "" else f" of {len(value)} characters" if type(value) is str else ""
        )
    if kind == "string_too_long":
        return f"expected {expected}, found a string of {len(value) if type(value) is str else 'more'} characters"
    if kind == "string_pattern_mismatch":
        return f"expected {expected}, found a string that is not one"
    if kind in ("literal_error", "enum"):
        what = "a string that is none of them" if type(value) is str else found(value)
        return f"expected {expected}, found {what}"
    hint = ""
    if kind in ("list_type", "tuple_type") and type(value) is str and value:
        hint = ' (one item is written as a list of one: ["..."])'
    return f"expected {expected}, found {found(value)}{hint}"


def pydantic_errors(
    exc: ValidationError,
    prefix: tuple[str | int, ...],
    model: type[BaseModel],
    *,
    keys: Iterable[str] = (),
    tags: Collection[str] = (),
) -> list[str]:
    """Each error of ``model`` as ``<JSON path>: <our words>`` (:func:`explain`: what the key
    takes and the kind of value found, never the value).

    Args:
        exc: the error of validating ``model``.
        prefix: the JSON path of what was validated (``("guard",)``, ``("mcpServers", NAME)``).
        model: the model validated.
        keys: the keys an unknown key may be a typo of (the hint of :func:`did_you_mean`): every key of
            the guard section (only its models refuse unknown keys; a server entry's are warned of and
            left out before it is validated).
        tags: the tags of the model's unions, left out of the paths (as pydantic's ``function-...`` steps are).
    """
    lines = []
    for error in exc.errors(include_url=False):
        inner = tuple(x for x in error["loc"] if not (isinstance(x, str) and (x.startswith("function-") or x in tags)))
        loc = prefix + inner
        if error["type"] == "extra_forbidden":
            last = loc[-1] if loc else ""
            hint = did_you_mean(last, keys) if isinstance(last, str) else ""
            message = f"unknown key (the guard section accepts only its own settings){hint}"
        else:
            message = explain(error, model, inner)
        lines.append(f"{json_path(loc)}: {message}")
    return lines


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean `command`?)`` for a key close to one of ``choices``, else ``""``."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.75)
    return f" (did you mean `{close[0]}`?)" if close else ""
