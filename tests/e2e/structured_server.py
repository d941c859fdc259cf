"""A stdio MCP server built with the ``mcp`` SDK's ``MCPServer`` (was FastMCP) whose tools return pydantic
models, so they are listed with an ``outputSchema`` and answer with ``structuredContent``.

Tools: ``forecast`` (``{"city": string}``: a ``Forecast`` model, ``$defs``-free), ``reading`` (a model
holding a nested model: its ``outputSchema`` uses ``$ref``/``$defs``), and ``fail`` (raises: an
``isError`` result without ``structuredContent``). Nothing but protocol messages goes to stdout.
"""

from __future__ import annotations

from mcp.server import MCPServer
from pydantic import BaseModel


class Forecast(BaseModel):
    city: str
    temperature: float
    sunny: bool


class Place(BaseModel):
    name: str


class Reading(BaseModel):
    place: Place
    value: int


server = MCPServer("structured")


@server.tool()
def forecast(city: str) -> Forecast:
    """The forecast for a city."""
    return Forecast(city=city, temperature=21.5, sunny=True)


@server.tool()
def reading() -> Reading:
    """A reading at a place."""
    return Reading(place=Place(name="x"), value=3)


@server.tool()
def fail() -> Forecast:
    """Always fails."""
    raise ValueError("no forecast today")


if __name__ == "__main__":
    server.run()
