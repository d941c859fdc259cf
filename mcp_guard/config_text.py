"""The text of a configuration file before it is parsed: JSON with comments, and ``${VAR}`` values.

:func:`strip_jsonc` blanks out comments and trailing commas (VS Code's ``mcp.json`` has them),
:func:`expand_variables` replaces ``${VAR}`` forms in ``env`` and ``headers`` values, and
:func:`json_path` writes a key's place for messages. Pure; :mod:`mcp_guard.config` uses them and
re-exports them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

__all__ = ["expand_variables", "json_path", "strip_jsonc"]


# --- JSON with comments -----------------------------------------------------------------------


def strip_jsonc(text: str) -> str:
    """``text`` with ``//`` and ``/* */`` comments and trailing commas blanked out.

    Comments and trailing commas become spaces (newlines are kept), so line and column
    numbers of a later JSON error still point into the file as written. Strings are left
    alone (``"http://x"`` keeps its ``//``). An unterminated ``/*`` runs to the end of the
    text (the JSON parser then reports what is missing).
    """
    out = list(text)
    i, n = 0, len(text)
    last_comma = -1  # index of a comma that may turn out to be trailing
    while i < n:
        c = text[i]
        if c == '"':
            last_comma = -1
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
            continue
        if c == "/" and i + 1 < n and text[i + 1] in "/*":
            end = text.find("\n", i) if text[i + 1] == "/" else text.find("*/", i + 2)
            end = n if end < 0 else (end if text[i + 1] == "/" else end + 2)
            for j in range(i, end):
                if out[j] != "\n":
                    out[j] = " "
            i = end
            continue
        if c == ",":
            last_comma = i
        elif c in "}]":
            if last_comma >= 0:
                out[last_comma] = " "
            last_comma = -1
        elif not c.isspace():
            last_comma = -1
        i += 1
    return "".join(out)


# --- JSON paths and environment variables -----------------------------------------------------

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")


def json_path(loc: tuple[str | int, ...] | list[str | int]) -> str:
    """A readable JSON path: ``mcpServers.time.args[0]``; odd keys quoted: ``mcpServers["my server"]``."""
    parts: list[str] = []
    for item in loc:
        if isinstance(item, int):
            parts.append(f"[{item}]")
        elif _IDENTIFIER.match(item):
            parts.append(("." if parts else "") + item)
        else:
            parts.append(f"[{json.dumps(item)}]")
    return "".join(parts) or "(top level)"


_VARIABLE = re.compile(r"\$\$\{|\$\{([^}]*)\}|\$\{")
_VAR_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def expand_variables(value: str, environ: Mapping[str, str], where: str) -> str:
    """Replace ``${VAR}``, ``${VAR:-default}`` and ``${env:VAR}`` in ``value`` from ``environ``.

    ``$${`` stands for a literal ``${``.

    Args:
        value: the configured string.
        environ: the environment (``os.environ`` in use).
        where: the key's JSON path, for error messages.

    Raises:
        ValueError: a variable is not set and has no default, a ``${`` has no closing ``}``,
            a default holds another ``${`` (nesting is not expanded), or a ``${...}`` is not
            one of the forms above (VS Code's ``${input:...}`` for one). The message names
            the variable and ``where``, never a value.
    """

    def replace(match: re.Match[str]) -> str:
        if match.group(0) == "$${":
            return "${"
        body = match.group(1)
        if body is None:
            raise ValueError(f"{where}: a `${{` has no closing `}}` (write $${{ for a literal `${{`)")
        name, default = body, None
        if ":-" in body:
            name, default = body.split(":-", 1)
            if "${" in default:
                raise ValueError(
                    f"{where}: the default of ${{{name}:-...}} holds another `${{`; the guard does not "
                    "expand nested variables"
                )
        elif body.startswith("env:"):
            name = body[4:]
        if not _VAR_NAME.match(name):
            raise ValueError(
                f"{where}: `${{{body}}}` is not a variable the guard can expand "
                "(use ${NAME}, ${NAME:-default} or ${env:NAME})"
            )
        if name in environ:
            return environ[name]
        if default is not None:
            return default
        raise ValueError(f"{where}: the environment variable {name} is not set")

    return _VARIABLE.sub(replace, value)
