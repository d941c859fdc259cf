"""OpenTelemetry traces: their settings (:class:`OtelSettings`, ``guard.otel``; issue 27 item 3).

Pure pydantic, like :mod:`.oauth_config`: the tracing itself (``mcp_guard.telemetry``, the ``otel``
extra) reads it; this module imports no OpenTelemetry, so a config without ``guard.otel`` costs nothing.
The standard ``OTEL_*`` variables win over what is written here (docs/tracing.md).
"""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.alias_generators import to_camel

__all__ = ["OtelSettings"]


class OtelSettings(BaseModel):
    """``guard.otel``: trace every ``tools/call`` (as ``--otel`` does), exported over OTLP/HTTP.

    Attributes:
        enabled: ``false`` keeps the settings but traces nothing (default ``true``).
        endpoint: the OTLP/HTTP traces URL (e.g. ``http://collector:4318/v1/traces``), used when neither
            ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` nor ``OTEL_EXPORTER_OTLP_ENDPOINT`` is set; with none of
            them the SDK's default, ``http://localhost:4318/v1/traces``.
        service_name: ``service.name`` when ``OTEL_SERVICE_NAME`` is not set (default ``mcp-guard``).
    """

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True, strict=True)

    enabled: bool = True
    endpoint: Annotated[str, Field(min_length=1, max_length=2000)] | None = None
    service_name: Annotated[str, Field(min_length=1, max_length=200)] | None = None

    @field_validator("endpoint")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is None:
            return value
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("must be an http or https URL (the OTLP/HTTP traces endpoint)")
        return value
