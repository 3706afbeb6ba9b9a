"""The backend protocol every telemetry store implements.

Requests and answers keep Elasticsearch's shapes; failures raise `EsError` with
Elasticsearch's error body and status.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Backend(Protocol):
    name: str  # "embedded" | "live"

    def list_indices(self, pattern: str = "*") -> list[dict[str, Any]]:
        """Like GET /_cat/indices/<pattern>?format=json."""
        ...

    def get_mappings(self, index: str) -> dict[str, Any]:
        """Like GET /<index>/_mapping: {index_name: {"mappings": {"properties": {...}}}}."""
        ...

    def es_search(self, index: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        """Like POST /<index>/_search."""
        ...

    def esql_query(
        self, query: str, params: list[Any] | None = None, columnar: bool = False
    ) -> dict[str, Any]:
        """Like POST /_query. Runtime warnings, when any, are under the key "warnings"
        (Elasticsearch sends them as Warning headers)."""
        ...

    def close(self) -> None: ...
