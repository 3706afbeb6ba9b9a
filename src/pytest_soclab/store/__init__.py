"""Telemetry backends behind one protocol: embedded (DuckDB) and live (Elasticsearch)."""

from pytest_soclab.faces import lazy_face

# Imported on first use: see pytest_soclab.faces.
__getattr__, __dir__ = lazy_face(__name__, {
    "Auth": "pytest_soclab.store.httpframe",
    "Backend": "pytest_soclab.store.base",
    "EmbeddedBackend": "pytest_soclab.store.embedded",
    "EsConnection": "pytest_soclab.store.connection",
    "FORMAT_VERSION": "pytest_soclab.store.catalog",
    "LiveBackend": "pytest_soclab.store.live",
    "build_client": "pytest_soclab.store.connection",
    "build_database": "pytest_soclab.store.embedded",
    "make_server": "pytest_soclab.store.http",
    "open_sources": "pytest_soclab.store.embedded",
    "ServeLimits": "pytest_soclab.store.http",
})

__all__ = [
    "Auth",
    "Backend",
    "EmbeddedBackend",
    "EsConnection",
    "FORMAT_VERSION",
    "LiveBackend",
    "build_client",
    "build_database",
    "make_server",
    "open_sources",
    "ServeLimits",
]
