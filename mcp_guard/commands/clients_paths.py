"""Where each MCP client keeps its server list, on Linux, macOS and Windows: one table.

Each row names a client, a scope (``user`` or ``project``), the file's format, the key path
of the server map inside it, and the file's path on each platform, built from the user's
home and environment (``HOME``/``USERPROFILE``, ``APPDATA``, ``XDG_CONFIG_HOME`` (ignored when
relative, as the XDG specification says), ``CODEX_HOME``), never from the real home when a
fake one is given, so tests can point everything at a temporary folder. Project files are relative to the project folder
(``--project``, default the current folder).

Sources (checked when this was written; a comment on each row says which):

- Claude Desktop: modelcontextprotocol.io "Connect to local MCP servers" and
  playwright.dev/mcp/clients/claude-desktop: ``~/Library/Application Support/Claude`` (macOS),
  ``%APPDATA%\\Claude`` (Windows). There is no official Linux build; the community builds use
  ``~/.config/Claude`` (``$XDG_CONFIG_HOME/Claude``), which is listed so that they are found.
- Claude Code: code.claude.com/docs/en/mcp, "MCP installation scopes": user and local scopes in
  ``~/.claude.json`` (top-level ``mcpServers``, and ``projects.<path>.mcpServers``), project
  scope in ``<project>/.mcp.json``.
- Cursor: cursor.com/docs/mcp: ``~/.cursor/mcp.json`` (``%USERPROFILE%\\.cursor`` on Windows) and
  ``<project>/.cursor/mcp.json``.
- VS Code: code.visualstudio.com/docs/agents/reference/mcp-configuration: ``.vscode/mcp.json``
  and the user profile's ``mcp.json`` (``Code/User`` under ``~/Library/Application Support``,
  ``%APPDATA%``, ``~/.config``), key ``servers``; older releases kept them in the user
  ``settings.json`` under ``"mcp": {"servers": ...}``, still read when present.
- Windsurf: docs.windsurf.com/windsurf/cascade/mcp: ``~/.codeium/windsurf/mcp_config.json``.
- Gemini CLI: geminicli.com/docs/cli/configuration: ``~/.gemini/settings.json`` and
  ``<project>/.gemini/settings.json``.
- Codex CLI: developers.openai.com/codex/mcp: ``$CODEX_HOME/config.toml``, default
  ``~/.codex/config.toml``, tables ``[mcp_servers.NAME]``; ``<project>/.codex/config.toml`` in a
  trusted project.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePath, PurePosixPath, PureWindowsPath
from typing import Final

__all__ = ["CLIENTS", "ClientFile", "Places", "client_files", "state_dir"]

CLIENTS: Final = ("claude-desktop", "claude-code", "cursor", "vscode", "windsurf", "gemini", "codex")
"""The ``--client`` names, in the order ``status`` lists them."""


@dataclass(frozen=True)
class Places:
    """The folders paths are built from, for one platform.

    Attributes:
        platform: ``"linux"``, ``"darwin"`` or ``"win32"`` (``sys.platform`` style; others count as linux).
        home: the user's home folder.
        env: the environment (``APPDATA``, ``XDG_CONFIG_HOME``, ``CODEX_HOME``, ...).
        project: the project folder for project-scope files.
    """

    platform: str
    home: PurePath
    env: Mapping[str, str]
    project: PurePath

    @classmethod
    def of(cls, platform: str, env: Mapping[str, str], project: str | Path) -> Places:
        """The places for ``platform`` from ``env`` (``USERPROFILE`` on Windows, else ``HOME``)."""
        flavour: type[PurePath] = PureWindowsPath if platform == "win32" else PurePosixPath
        home_var = "USERPROFILE" if platform == "win32" else "HOME"
        home = env.get(home_var) or str(Path.home())
        return cls(platform, flavour(home), env, flavour(str(project)))

    def var(self, name: str, default: PurePath) -> PurePath:
        """``env[name]`` as a path, or ``default`` when it is unset or empty."""
        value = self.env.get(name, "")
        return type(self.home)(value) if value else default

    def xdg(self, name: str, default: PurePath) -> PurePath:
        """An XDG base directory variable (``XDG_CONFIG_HOME``, ``XDG_DATA_HOME``) as a path, or
        ``default`` when it is unset, empty or relative: "If an implementation encounters a
        relative path in any of these variables it should consider the path invalid and ignore
        it" (XDG Base Directory Specification 0.8)."""
        value = self.var(name, default)
        return value if value.is_absolute() else default

    @property
    def app_data(self) -> PurePath:
        """Per-user app settings: ``%APPDATA%``, ``~/Library/Application Support``, ``~/.config``."""
        if self.platform == "win32":
            return self.var("APPDATA", self.home / "AppData" / "Roaming")
        if self.platform == "darwin":
            return self.home / "Library" / "Application Support"
        return self.xdg("XDG_CONFIG_HOME", self.home / ".config")


@dataclass(frozen=True)
class ClientFile:
    """One config file of one client.

    Attributes:
        client: a name of :data:`CLIENTS`.
        scope: ``"user"`` or ``"project"``.
        path: the file.
        format: ``"json"`` (read as JSONC) or ``"toml"``.
        servers_key: the key path of the server map (``("mcpServers",)``, ``("servers",)``, ...).
        project_maps: whether ``projects.<path>.mcpServers`` maps also hold servers (Claude Code).
    """

    client: str
    scope: str
    path: PurePath
    format: str
    servers_key: tuple[str, ...]
    project_maps: bool = False


_Row = tuple[str, str, str, tuple[str, ...], Callable[[Places], PurePath]]

_ROWS: Final[tuple[_Row, ...]] = (
    # Claude Desktop (modelcontextprotocol.io quickstart; Linux: community builds' ~/.config/Claude)
    ("claude-desktop", "user", "json", ("mcpServers",), lambda p: p.app_data / "Claude" / "claude_desktop_config.json"),
    # Claude Code (code.claude.com/docs/en/mcp, installation scopes): ~/.claude.json on every platform
    ("claude-code", "user", "json", ("mcpServers",), lambda p: p.home / ".claude.json"),
    ("claude-code", "project", "json", ("mcpServers",), lambda p: p.project / ".mcp.json"),
    # Cursor (cursor.com/docs/mcp)
    ("cursor", "user", "json", ("mcpServers",), lambda p: p.home / ".cursor" / "mcp.json"),
    ("cursor", "project", "json", ("mcpServers",), lambda p: p.project / ".cursor" / "mcp.json"),
    # VS Code (code.visualstudio.com/docs/agents/reference/mcp-configuration): key "servers"
    ("vscode", "project", "json", ("servers",), lambda p: p.project / ".vscode" / "mcp.json"),
    ("vscode", "user", "json", ("servers",), lambda p: p.app_data / "Code" / "User" / "mcp.json"),
    ("vscode", "user", "json", ("mcp", "servers"), lambda p: p.app_data / "Code" / "User" / "settings.json"),
    # Windsurf (docs.windsurf.com/windsurf/cascade/mcp)
    ("windsurf", "user", "json", ("mcpServers",), lambda p: p.home / ".codeium" / "windsurf" / "mcp_config.json"),
    # Gemini CLI (geminicli.com/docs/cli/configuration)
    ("gemini", "user", "json", ("mcpServers",), lambda p: p.home / ".gemini" / "settings.json"),
    ("gemini", "project", "json", ("mcpServers",), lambda p: p.project / ".gemini" / "settings.json"),
    # Codex CLI (developers.openai.com/codex/mcp): $CODEX_HOME, default ~/.codex
    ("codex", "user", "toml", ("mcp_servers",), lambda p: p.var("CODEX_HOME", p.home / ".codex") / "config.toml"),
    ("codex", "project", "toml", ("mcp_servers",), lambda p: p.project / ".codex" / "config.toml"),
)


def client_files(places: Places, clients: tuple[str, ...] = CLIENTS) -> list[ClientFile]:
    """Every config file the ``clients`` may read, existing or not, in :data:`CLIENTS` order.

    A project file that is the same file as a user file (a project folder that is the home) is
    listed once, as the user's.
    """
    files: list[ClientFile] = []
    seen: set[PurePath] = set()
    for client in clients:
        for name, scope, fmt, key, where in _ROWS:
            if name != client:
                continue
            path = where(places)
            if path in seen:
                continue
            seen.add(path)
            files.append(ClientFile(name, scope, path, fmt, key, project_maps=(name, scope) == ("claude-code", "user")))
    return files


def state_dir(places: Places) -> PurePath:
    """The guard's own data folder, where ``install`` records the entries it changed.

    ``$MCP_GUARD_STATE_DIR`` if set; else ``%LOCALAPPDATA%\\mcp-guard`` (Windows),
    ``~/Library/Application Support/mcp-guard`` (macOS), ``$XDG_DATA_HOME/mcp-guard`` or
    ``~/.local/share/mcp-guard`` (elsewhere: the XDG base directory specification).
    """
    if places.env.get("MCP_GUARD_STATE_DIR"):
        return type(places.home)(places.env["MCP_GUARD_STATE_DIR"])
    if places.platform == "win32":
        return places.var("LOCALAPPDATA", places.home / "AppData" / "Local") / "mcp-guard"
    if places.platform == "darwin":
        return places.home / "Library" / "Application Support" / "mcp-guard"
    return places.xdg("XDG_DATA_HOME", places.home / ".local" / "share") / "mcp-guard"
