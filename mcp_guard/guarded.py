"""Whether a server's command line runs the guard itself: the entry is already behind ``mcp-guard``.

Pure functions on the command and its arguments (strings), shared by ``install`` (an entry
behind the guard is left alone, issue 13 item 1) and by the gateway (``serve`` warns at start,
``check --config`` reports a line: an entry of the gateway's config that runs the guard again is
*double-wrapped*, issue 13 item 3).

What two guards in a row do (the outer one being the gateway, ``peer.connection``): every call
is judged twice, by the outer guard under the config's ``guard.profile`` and by the inner one
under its own ``--profile``, so the stricter verdict wins; the outer guard removes the
``mcp-guard/`` ``_meta`` keys of whatever the inner one sends, so the inner one's verdicts in
``tools/list`` (``mcp-guard/schema``) are replaced by the outer one's, and a call the inner one
refuses reaches the client as a plain ``isError`` result, its ``mcp-guard/rejection`` gone.
"""

from __future__ import annotations

import re
from typing import Any, Final

__all__ = ["URL_FLAGS", "double_wrapped", "guarded_upstream"]

_RUNNERS: Final = {"uvx": 1, "pipx": 2, "uv": 3}  # uvx X / pipx run X / uv tool run X

URL_FLAGS: Final = ("--upstream-url", "--upstream-url-env")
"""``wrap``'s flags naming an HTTP upstream: the URL itself, or the environment variable holding it."""


def _base(program: str) -> str:
    name = re.split(r"[\\/]", program)[-1].lower()
    return name[:-4] if name.endswith(".exe") else name


def _strip_runner(tokens: list[str]) -> list[str]:
    """``uvx [--from X] mcp-guard ...``, ``pipx run ...``, ``uv tool run ...``, ``python -m mcp_guard ...``
    reduced to ``mcp-guard ...`` (other commands unchanged)."""
    if not tokens:
        return tokens
    base = _base(tokens[0])
    if base.startswith(("python", "py")) and tokens[1:3] == ["-m", "mcp_guard"]:
        return ["mcp-guard", *tokens[3:]]
    script = tokens[1].replace("\\", "/") if base.startswith(("python", "py")) and len(tokens) > 1 else ""
    if _base(script) == "mcp-guard" or script.endswith("mcp_guard/__main__.py"):  # python /venv/bin/mcp-guard
        return ["mcp-guard", *tokens[2:]]
    skip = _RUNNERS.get(base)
    if skip is None or (base == "pipx" and tokens[1:2] != ["run"]) or (base == "uv" and tokens[1:3] != ["tool", "run"]):
        return tokens
    rest = tokens[skip:]
    while rest and rest[0].startswith("-"):  # runner options: --from X, --python X, -q
        rest = rest[2:] if rest[0] in ("--from", "--python", "--with", "--spec") else rest[1:]
    if rest:
        rest = [re.split(r"[=@<>~!\[]", rest[0])[0], *rest[1:]]
    return rest


def guarded_upstream(command: Any, args: Any) -> tuple[str, list[str]] | None:
    """For an entry running the guard, ``(how, upstream)``; ``None`` for any other entry.

    ``how`` is ``"wrap"`` (``upstream`` the command after ``--``, ``["--upstream-url", URL]`` or
    ``["--upstream-url-env", ENVVAR]``: a URL entry, see :data:`URL_FLAGS`)
    or ``"serve"`` (the gateway: ``upstream`` empty). Recognized: ``mcp-guard`` by name or by any
    path (``/opt/venv/bin/mcp-guard``, ``mcp-guard.exe``), ``python -m mcp_guard``, ``python`` with a
    path to the script or to ``mcp_guard/__main__.py``, and the
    runners ``uvx``, ``pipx run``, ``uv tool run`` in front of either. Values of any other type
    (a config's ``command`` that is not a string) give ``None``; nothing is raised.
    """
    if not isinstance(command, str) or not isinstance(args, list | None):
        return None
    tokens = _strip_runner([command, *[str(a) for a in args or []]])
    if len(tokens) < 2 or _base(tokens[0]) not in ("mcp-guard", "mcp_guard"):
        return None
    if tokens[1] == "serve":
        return "serve", []
    if tokens[1] != "wrap":
        return None
    rest = tokens[2:]
    if "--" in rest:
        return "wrap", rest[rest.index("--") + 1 :]
    for flag in URL_FLAGS:
        if flag in rest[:-1]:
            return "wrap", [flag, rest[rest.index(flag) + 1]]
    return "wrap", rest


def double_wrapped(command: Any, args: Any) -> str | None:
    """Why a gateway server entry (``command``, ``args``) is double-wrapped, in a phrase; ``None`` if it is not.

    The phrase (for ``serve``'s start-up warning and ``check --config``'s report, after the
    server's name) says what two guards do (see the module docstring) and what to write instead.
    It names no argument of the entry but the upstream's program (arguments, URLs and headers
    may hold secrets); callers escape it with the name (``mcp_guard.safe_text``).
    """
    found = guarded_upstream(command, args)
    if found is None:
        return None
    how, upstream = found
    if how == "serve":
        return (
            "runs `mcp-guard serve` itself (a gateway behind the gateway): every call is judged by two guards, "
            "and the inner guard's `mcp-guard/` _meta keys (its tools/list verdicts, its refusals' rejection) "
            "are removed by this one, so its refusals reach the client as plain isError results; "
            "list the inner config's servers here instead"
        )
    if upstream[:1] == ["--upstream-url"]:
        instead = "give its --upstream-url as this entry's `url` instead"
    elif upstream[:1] == ["--upstream-url-env"]:
        instead = "give the URL its --upstream-url-env names as this entry's `url` instead"
    elif upstream:
        instead = f"start the upstream (`{_base(upstream[0])} ...`) directly instead"
    else:
        instead = "start the upstream directly instead"
    return (
        "runs `mcp-guard wrap` itself (double-wrapped): every call is judged twice, under this config's "
        "guard.profile and under the inner guard's own --profile, the stricter winning; this guard removes "
        "the inner one's `mcp-guard/` _meta keys, so its tools/list verdicts are replaced by this guard's "
        f"and a call it refuses reaches the client as a plain isError result, without its rejection; {instead}"
    )
