"""The live backend: a real Elasticsearch cluster through the official client, read-only.

Only four read calls ever leave the process: `_cat/indices`, `_mapping`, `_search` and
`_query` (ES|QL). Connection settings come from arguments or the ELASTIC_* environment
variables (see `pytest_soclab.store.connection`).

A failure (unreachable cluster, missing index, bad query) is one `EsError` per call.
"""

from __future__ import annotations

import re
import warnings
from typing import Any

from pytest_soclab.errors import EsError
from pytest_soclab.store.connection import EsConnection, build_client

_WARNING = re.compile(r'\d{3} [^ ]+ "((?:[^"\\]|\\.)*)"')


class LiveBackend:
    name = "live"

    def __init__(self, client: Any, url: str):
        self.client = client
        self.url = url

    @classmethod
    def connect(cls, conn: EsConnection) -> LiveBackend:
        return cls(build_client(conn), conn.url)

    @classmethod
    def from_options(
        cls,
        url: str | None = None,
        *,
        api_key: str | None = None,
        username: str | None = None,
        password: str | None = None,
        ca_certs: str | None = None,
        verify_certs: bool = True,
        request_timeout: float = 30,
    ) -> LiveBackend:
        """A backend from explicit settings, the environment filling in what is not given."""
        conn = EsConnection.from_env(
            url=url, api_key=api_key, username=username, password=password, ca_certs=ca_certs,
            verify_certs=verify_certs, request_timeout=request_timeout,
        )  # fmt: skip
        return cls.connect(conn)

    # -- calls

    def _call(self, fn: Any, **kwargs: Any) -> Any:
        from elastic_transport import ConnectionError as TransportConnectionError
        from elastic_transport import ConnectionTimeout, TransportError
        from elasticsearch import ApiError

        from elasticsearch import ElasticsearchWarning

        try:
            with warnings.catch_warnings():
                # ES|QL warnings are returned under "warnings", not raised as Python warnings
                warnings.simplefilter("ignore", ElasticsearchWarning)
                return fn(**kwargs)
        except ApiError as exc:
            body = exc.body if isinstance(exc.body, dict) else {"error": str(exc.body or exc.message)}
            raise EsError.from_body(body, exc.meta.status) from None
        except ConnectionTimeout as exc:
            raise EsError(504, "timeout_exception", f"Elasticsearch at {self.url} did not answer in time: {exc.message}") from None
        except TransportConnectionError as exc:
            raise EsError(502, "connection_exception", f"cannot reach Elasticsearch at {self.url}: {exc.message}") from None
        except TransportError as exc:
            raise EsError(502, "transport_exception", f"Elasticsearch at {self.url}: {exc.message}") from None

    def list_indices(self, pattern: str = "*") -> list[dict[str, Any]]:
        resp = self._call(self.client.cat.indices, index=pattern or "*", format="json")
        return list(resp.body)

    def get_mappings(self, index: str) -> dict[str, Any]:
        return dict(self._call(self.client.indices.get_mapping, index=index).body)

    def es_search(self, index: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        return dict(self._call(self.client.search, index=index, body=body or {}).body)

    def esql_query(self, query: str, params: list[Any] | None = None, columnar: bool = False) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"query": query, "columnar": columnar}
        if params is not None:
            kwargs["params"] = params
        resp = self._call(self.client.esql.query, **kwargs)
        result = dict(resp.body)
        found = _warnings(resp.meta.headers.get("warning"))
        if found:
            result["warnings"] = found
        return result

    def close(self) -> None:
        try:
            self.client.close()
        except Exception:  # noqa: BLE001 - closing must not raise
            pass


def _warnings(header: str | None) -> list[str]:
    if not header:
        return []
    return [m.group(1).replace('\\"', '"').replace("\\\\", "\\") for m in _WARNING.finditer(header)]
