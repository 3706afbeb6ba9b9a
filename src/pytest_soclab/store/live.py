"""The live backend: a real Elasticsearch cluster through the official client, read-only.

Only four read calls ever leave the process: `_cat/indices`, `_mapping`, `_search` and
`_query` (ES|QL). Connection settings come from arguments or the environment:

    ELASTIC_URL        cluster URL, e.g. https://localhost:9200
    ELASTIC_API_KEY    API key (base64 "id:key" form, as Kibana shows it)
    ELASTIC_USERNAME   basic-auth user (with ELASTIC_PASSWORD)
    ELASTIC_PASSWORD
    ELASTIC_CA_CERTS   path to a CA bundle (PEM)

A failure (unreachable cluster, missing index, bad query) is one `EsError` per call.
"""

from __future__ import annotations

import logging
import os
import re
import warnings
from typing import Any

from pytest_soclab.errors import EsError, SoclabError

_WARNING = re.compile(r'\d{3} [^ ]+ "((?:[^"\\]|\\.)*)"')


class LiveBackend:
    name = "live"

    def __init__(self, client: Any, url: str):
        self.client = client
        self.url = url

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
        from elasticsearch import Elasticsearch

        url = url or os.environ.get("ELASTIC_URL")
        if not url:
            raise SoclabError("no Elasticsearch URL: pass --soclab-es-url or set ELASTIC_URL")
        api_key = api_key or os.environ.get("ELASTIC_API_KEY") or None
        username = username or os.environ.get("ELASTIC_USERNAME") or None
        password = password if password is not None else os.environ.get("ELASTIC_PASSWORD")
        ca_certs = ca_certs or os.environ.get("ELASTIC_CA_CERTS") or None
        if api_key and username:
            raise SoclabError("give either an API key or a username/password, not both")
        if username and password is None:
            raise SoclabError("a username needs a password (ELASTIC_PASSWORD)")
        if ca_certs and not os.path.isfile(ca_certs):
            raise SoclabError(f"CA certificate file not found: {ca_certs}")
        kwargs: dict[str, Any] = {
            "request_timeout": request_timeout,
            "max_retries": 0,  # one clear failure per call, not a retry storm
            "retry_on_timeout": False,
            "verify_certs": verify_certs,
        }
        if api_key:
            kwargs["api_key"] = api_key
        if username:
            kwargs["basic_auth"] = (username, password or "")
        if ca_certs:
            kwargs["ca_certs"] = ca_certs
        if not verify_certs:
            kwargs["ssl_show_warn"] = False
        # the transport logs each failed attempt at WARNING: our caller gets one EsError instead
        logging.getLogger("elastic_transport").setLevel(logging.ERROR)
        try:
            client = Elasticsearch(hosts=[url], **kwargs)
        except (ValueError, TypeError) as exc:
            raise SoclabError(f"bad Elasticsearch URL or options: {exc}") from None
        return cls(client, url)

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
