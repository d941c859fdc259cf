"""Narrowing steps of the lowering: what a host forces that limits what the model may send (issue 24, item 3).

A narrowing never limits what the guard accepts: the guard judges every call against the
server's own schema. OpenAI strict closes every object (:func:`close`: only the shown properties,
all required); an optional property that also accepts ``null`` cannot be sent as an explicit
``null``, which stands for "absent" (:func:`null_is_absent`). Where closing would take away what
the tool needs (an object whose keys follow a pattern or a schema, or that requires properties it
does not declare), :func:`closable` has that part reshaped as JSON text instead, or, at the root,
makes the tool not presentable.

Pure: imports neither ``mcp`` nor ``anyio``.
"""

from __future__ import annotations

from typing import Any

from .run import NotPresentable, Path, Run, constraining

__all__ = ["closable", "close", "null_is_absent"]


def null_is_absent(run: Run, path: Path) -> None:
    """Record that the optional, nullable property at ``path`` cannot be sent as an explicit ``null``."""
    run.step("narrowing", "null-is-absent", path, "optional and nullable: a null from the model means absent")


def closable(node: dict[str, Any], undeclared: list[str], *, root: bool) -> str | None:
    """Why closing this object would take away what the tool needs (None: it would not); the
    driver then shows it as JSON text.

    Raises:
        NotPresentable: at the root, where no reshaping can stand in.
    """
    extra = node.get("additionalProperties", True)
    if (isinstance(extra, dict) and bool(constraining(extra))) or "patternProperties" in node:
        if root:
            raise NotPresentable(
                "the root object takes keys its properties do not name (a map), and the host closes every object"
            )
        return "an object whose keys follow a pattern or a schema"
    if undeclared:
        if root:
            raise NotPresentable("the root requires properties it does not declare, and the host closes every object")
        return "an object that requires properties it does not declare"
    return None


def close(run: Run, out: dict[str, Any], extra: Any, path: Path) -> None:
    """Close the shown object ``out``: every shown property required, no other key."""
    out["required"] = list(out["properties"])
    if extra is not False:
        run.step("narrowing", "closed", path, "object closed: the model may send only its properties")
    out["additionalProperties"] = False
