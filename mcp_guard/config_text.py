"""The text of a configuration file before it is parsed: JSON with comments, and ``${VAR}`` values.

:func:`strip_jsonc` blanks out comments and trailing commas (VS Code's ``mcp.json`` has them),
:func:`expand_variables` replaces ``${VAR}`` forms in a server entry's strings, and
:func:`json_path` writes a key's place for messages. Pure; :mod:`mcp_guard.config` and
:mod:`mcp_guard.config_servers` (a server entry's ``${VAR}``: :func:`expand_entry_value`) use them;
:mod:`mcp_guard.config` re-exports them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Final

__all__ = ["expand_entry_value", "expand_variables", "json_path", "strip_jsonc"]


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


_EDITOR_VARIABLES: Final = frozenset(
    {
        "workspaceFolder",
        "workspaceFolderBasename",
        "workspaceRoot",
        "userHome",
        "cwd",
        "file",
        "fileBasename",
        "fileDirname",
        "fileWorkspaceFolder",
        "relativeFile",
        "pathSeparator",
    }
)
"""VS Code's (and Cursor's) predefined variables: the editor fills them in when it starts a server itself,
never from the environment; a config the guard reads must say the path."""


def expand_variables(value: str, environ: Mapping[str, str], where: str) -> str:
    """Replace ``${VAR}``, ``${VAR:-default}`` and ``${env:VAR}`` in ``value`` from ``environ``.

    ``$${`` stands for a literal ``${``.

    Args:
        value: the configured string.
        environ: the environment (``os.environ`` in use).
        where: the key's JSON path, for error messages.

    Raises:
        ValueError: one message for every problem of ``value``, all at once: the variables that are
            not set and have no default (``the environment variables A and B are not set``; an editor's
            own variable such as ``${workspaceFolder}`` is called one), a ``${`` without its closing
            ``}``, a default holding another ``${`` (nesting is not expanded), a ``${...}`` not of the
            forms above (VS Code's ``${input:...}`` for one). It names the variables and ``where``,
            never a value.
    """
    missing: list[str] = []
    editor: list[str] = []
    problems: list[str] = []

    def replace(match: re.Match[str]) -> str:
        if match.group(0) == "$${":
            return "${"
        body = match.group(1)
        if body is None:
            problems.append("a `${` has no closing `}` (write $${ for a literal `${`)")
            return ""
        name, default = body, None
        if ":-" in body:
            name, default = body.split(":-", 1)
            if "${" in default:
                problems.append(
                    f"the default of ${{{name}:-...}} holds another `${{`; the guard does not expand nested variables"
                )
                return ""
        elif body.startswith("env:"):
            name = body[4:]
        if not _VAR_NAME.match(name):
            problems.append(
                f"`${{{body}}}` is not a variable the guard can expand (use ${{NAME}}, ${{NAME:-default}} or "
                "${env:NAME}; $${ for a literal `${`)"
            )
            return ""
        if name in environ:
            return environ[name]
        if default is not None:
            return default
        found = editor if name in _EDITOR_VARIABLES else missing
        if name not in found:
            found.append(name)
        return ""

    expanded = _VARIABLE.sub(replace, value)
    if editor:
        shown = ", ".join(f"${{{n}}}" for n in editor)
        problems.insert(
            0,
            f"{shown} {'is an editor variable' if len(editor) == 1 else 'are editor variables'} (VS Code fills "
            "it in when it starts a server itself, never from the environment): write the path itself",
        )
    if missing:
        names = missing[0] if len(missing) == 1 else ", ".join(missing[:-1]) + " and " + missing[-1]
        verb = "variable {} is" if len(missing) == 1 else "variables {} are"
        problems.insert(0, f"the environment {verb.format(names)} not set")
    if problems:
        raise ValueError(f"{where}: " + "; ".join(problems))
    return expanded


def expand_entry_value(
    key: str, value: Any, loc: tuple[str | int, ...], environ: Mapping[str, str], errors: list[str], failed: list[str]
) -> Any:
    """``value`` of a server entry's ``key`` (at ``loc``) with its ``${VAR}`` expanded: a string (``command``, ``cwd``,
    ``url``), the strings of a list (``args``) or an object's string values (``env``, ``headers``); a
    value of another shape is left for the model to refuse. Each string with a problem adds one line
    to ``errors`` (its path and every variable it names, ``config_text.expand_variables``) and its
    path to ``failed`` (the model's complaints there would be about the placeholder), and becomes ``""``."""

    def one(text: Any, where: tuple[str | int, ...]) -> Any:
        if type(text) is not str:
            return text
        try:
            return expand_variables(text, environ, json_path(where))
        except ValueError as exc:
            errors.append(str(exc))
            failed.append(json_path(where))
            return ""

    if key in ("env", "headers"):
        return {k: one(v, (*loc, k)) for k, v in value.items()} if type(value) is dict else value
    if key == "args":
        return [one(v, (*loc, i)) for i, v in enumerate(value)] if type(value) is list else value
    return one(value, loc)
