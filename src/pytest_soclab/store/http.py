"""An Elasticsearch-compatible, read-only HTTP endpoint in front of any backend.

Serves what investigation agents and the official clients use: `GET /`, `GET /_cat/indices`,
`GET|POST /{index}/_search`, `POST /_query`, `GET /{index}/_mapping`, `GET /_resolve/index/{expr}`,
`GET /_cluster/health`, and the read API of `api/` (documents, counts, multi-search, field
capabilities, cat tables, scroll, point in time, async ES|QL, SQL). Every other method or path
answers 405/400 in Elasticsearch's error shape. Responses carry `X-Elastic-Product: Elasticsearch`, which the clients check.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import socket
import sys
import threading
import uuid
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from pytest_soclab.errors import EsError

from .api import ROUTES as API_ROUTES
from .api import ApiRequest, filter_path, run_search
from .api.cat import INDICES_COLUMNS, render as render_cat
from .api.indices import narrow
from .base import Backend
from .deadline import bounded, timed_out
from .httpframe import (
    Auth, BodyError, error_body, header_value, parse_json, read_body, resolve_date_math, unauthorized, warning_header,
)  # fmt: skip
from .limits import MAX_CONTENT_LENGTH, STORE_MEMORY_LIMIT

VERSION = "9.1.0"
MAX_BODY = MAX_CONTENT_LENGTH

_ROUTES: list[tuple[re.Pattern[str], tuple[str, ...], Any]] = [
    (re.compile(r"^/$"), ("GET", "HEAD"), "root"),
    (re.compile(r"^/_cat/indices(?:/(?P<index>[^/]+))?/?$"), ("GET",), "cat_indices"),
    (re.compile(r"^/_cluster/health(?:/(?P<index>[^/]+))?/?$"), ("GET",), "health"),
    (re.compile(r"^/_query/?$"), ("POST",), "esql"),
    (re.compile(r"^/_resolve/index/(?P<index>[^/]+)/?$"), ("GET",), "resolve"),
    (re.compile(r"^/_mapping/?$"), ("GET",), "mapping"),
    (re.compile(r"^/(?P<index>[^/_][^/]*|_all)/_mapping/?$"), ("GET",), "mapping"),
    (re.compile(r"^/_search/?$"), ("GET", "POST"), "search"),
    (re.compile(r"^/(?P<index>[^/_][^/]*|_all)/_search/?$"), ("GET", "POST"), "search"),
]


def _es_product_headers() -> dict[str, str]:
    return {"X-Elastic-Product": "Elasticsearch"}


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    backend: Backend
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # ~44 ms per call otherwise (Nagle + delayed ACK)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        if self.server.verbose:
            sys.stderr.write("soclab serve: " + (format % args) + "\n")

    # every method goes through one dispatcher
    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_HEAD(self) -> None:
        self._dispatch("HEAD")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")

    def do_PATCH(self) -> None:
        self._dispatch("PATCH")

    def do_OPTIONS(self) -> None:
        self._dispatch("OPTIONS")

    def _dispatch(self, method: str) -> None:
        try:
            self._serve_one(method)
        except (ConnectionError, TimeoutError):
            self.close_connection = True  # the client went away: nothing to answer

    def _serve_one(self, method: str) -> None:
        server = self.server
        parts = urlsplit(self.path)
        path = parts.path or "/"
        query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        try:
            raw = read_body(self.headers, self.rfile, server.max_content_length)
        except BodyError as exc:
            self.close_connection = exc.close
            self._send(exc.error.status, exc.error.body(), close=exc.close)
            return
        if not server.auth.allows(self.headers.get("Authorization")):
            err = unauthorized()
            self._send(401, err.body(), {"WWW-Authenticate": ['Basic realm="security", charset="UTF-8"', "ApiKey"]})
            return
        if "ndjson" in (self.headers.get("Content-Type") or ""):
            body: Any = raw.decode("utf-8", errors="replace")  # _msearch: pairs of lines, parsed there
        else:
            try:
                has_body, body = parse_json(raw)
            except EsError as exc:
                self._send(exc.status, exc.body())
                return
            if not has_body:
                body = {}
        allowed: list[str] = []
        for rx, methods, name in [*_ROUTES, *API_ROUTES]:
            m = rx.match(path)
            if not m:
                continue
            if method not in methods:
                allowed += [x for x in methods if x != "HEAD" and x not in allowed]
                continue
            self._route(method, name, m.groupdict(), query, body)
            return
        if allowed:
            reason = f"Incorrect HTTP method for uri [{self.path}] and method [{method}], allowed: [{', '.join(allowed)}]"
            self._send(405, error_body(405, "method_not_allowed_exception", reason), {"Allow": ", ".join(allowed)})
            return
        reason = f"no handler found for uri [{self.path}] and method [{method}]"
        self._send(400, error_body(400, "illegal_argument_exception", reason))

    def _route(self, method: str, name: Any, groups: dict[str, str | None], query: dict[str, str], body: Any) -> None:
        server = self.server
        if not server.slots.acquire(blocking=False):
            err = EsError(429, "es_rejected_execution_exception",
                          f"rejected execution: {server.max_queued} requests are already queued (soclab serve --max-queued)")  # fmt: skip
            self._send(429, err.body())
            return
        # a cursor of its own where the backend allows it: requests run side by side, and a deadline
        # interrupts this request's work only
        fork = getattr(server.backend, "fork", None)
        self.backend = fork() if fork is not None else server.backend
        try:
            index = unquote(groups.get("index") or "") or None
            if index is not None:
                index = ",".join(resolve_date_math(part, _now(self.backend)) for part in index.split(","))
            with bounded(self.backend, server.request_timeout, cancelled=self._client_gone,
                         on_timeout=lambda s: timed_out(s, "soclab serve --request-timeout")):  # fmt: skip
                if callable(name):
                    status, payload, headers = name(ApiRequest.from_handler(self, method, index, query, body, groups))
                else:
                    status, payload, headers = getattr(self, f"_r_{name}")(index, query, body)
        except EsError as exc:
            self._send(exc.status, exc.body())
            return
        except Exception as exc:  # noqa: BLE001 - the endpoint must answer, not die
            err = EsError(500, "exception", f"internal error: {type(exc).__name__}: {exc}")
            self._send(500, err.body())
            return
        finally:
            if self.backend is not server.backend:
                self.backend.close()
            server.slots.release()
        self._send(status, filter_path(payload, query.get("filter_path")), headers, head_only=method == "HEAD")

    def _client_gone(self) -> bool:
        """Whether the client closed its side while its request runs: its work is then cancelled,
        as Elasticsearch cancels a search whose HTTP channel closes. A pipelined next request
        (readable bytes) is not a departure."""
        try:  # a peek that does not wait (no select: it cannot watch descriptors past 1024)
            return self.connection.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
        except (BlockingIOError, InterruptedError):
            return False  # nothing to read: the client is still there, waiting
        except OSError:
            return True

    def _send(self, status: int, payload: Any, headers: dict[str, Any] | None = None, head_only: bool = False,
              close: bool = False) -> None:  # fmt: skip
        if isinstance(payload, str):
            data = payload.encode("utf-8")
            ctype = "text/plain; charset=UTF-8"
        else:
            data = (json.dumps(payload, indent=2) + "\n" if _wants_pretty(self.path) else json.dumps(payload)).encode("utf-8")
            accept = self.headers.get("Accept", "") if self.headers else ""
            m = re.search(r"application/vnd\.elasticsearch\+json;\s*compatible-with=(\d+)", accept)
            ctype = f"application/vnd.elasticsearch+json;compatible-with={m.group(1)}" if m else "application/json"
        self.send_response(status)
        for k, v in _es_product_headers().items():
            self.send_header(k, v)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        if close:
            self.send_header("Connection", "close")
        for k, v in (headers or {}).items():
            for item in v if isinstance(v, list) else [v]:
                # every value may carry document text (warnings quote failing values): never raw
                self.send_header(header_value(str(k)), header_value(str(item)))
        self.end_headers()
        if not head_only:
            self.wfile.write(data)

    # ---------------------------------------------------------------- routes

    def _r_root(self, index: str | None, q: dict[str, str], body: Any) -> tuple[int, Any, dict[str, str]]:
        return 200, {
            "name": "soclab",
            "cluster_name": "soclab",
            "cluster_uuid": self.server.cluster_uuid,
            "version": {
                "number": VERSION, "build_flavor": "default", "build_type": "soclab", "build_hash": "soclab",
                "build_date": "2025-01-01T00:00:00.000Z", "build_snapshot": False, "lucene_version": "10.2.2",
                "minimum_wire_compatibility_version": "8.19.0", "minimum_index_compatibility_version": "8.0.0",
            },
            "tagline": "You Know, for Search",
        }, {}  # fmt: skip

    def _r_health(self, index: str | None, q: dict[str, str], body: Any) -> tuple[int, Any, dict[str, str]]:
        rows = self.backend.list_indices(index or "*")
        n = len(rows)
        return 200, {
            "cluster_name": "soclab", "status": "green", "timed_out": False, "number_of_nodes": 1,
            "number_of_data_nodes": 1, "active_primary_shards": n, "active_shards": n, "relocating_shards": 0,
            "initializing_shards": 0, "unassigned_shards": 0, "unassigned_primary_shards": 0,
            "delayed_unassigned_shards": 0, "number_of_pending_tasks": 0, "number_of_in_flight_fetch": 0,
            "task_max_waiting_in_queue_millis": 0, "active_shards_percent_as_number": 100.0,
        }, {}  # fmt: skip

    def _r_cat_indices(self, index: str | None, q: dict[str, str], body: Any) -> tuple[int, Any, dict[str, str]]:
        return 200, render_cat(self.backend.list_indices(index or "*"), INDICES_COLUMNS, q), {}

    def _r_mapping(self, index: str | None, q: dict[str, str], body: Any) -> tuple[int, Any, dict[str, str]]:
        return 200, self.backend.get_mappings(narrow(self.backend, index or "*", q)), {}

    def _r_resolve(self, index: str | None, q: dict[str, str], body: Any) -> tuple[int, Any, dict[str, str]]:
        backend = self.backend
        resolver = getattr(backend, "resolve_index", None)
        if resolver is None:
            raise EsError(400, "illegal_argument_exception", "_resolve/index is not available on this backend")
        return 200, resolver(index or "*"), {}

    def _r_search(self, index: str | None, q: dict[str, str], body: Any) -> tuple[int, Any, dict[str, str]]:
        if not isinstance(body, dict):
            raise EsError(400, "parsing_exception", "request body must be a JSON object")
        body = dict(body)
        for key in ("size", "from", "track_total_hits", "terminate_after"):
            if key in q:
                body[key] = _param_value(q[key])
        if "q" in q:
            qs: dict[str, Any] = {"query": q["q"]}
            if "df" in q:
                qs["default_field"] = q["df"]
            if "default_operator" in q:
                qs["default_operator"] = q["default_operator"]
            body["query"] = {"query_string": qs}
        if "sort" in q:
            body["sort"] = [{s.split(":")[0]: s.split(":")[1]} if ":" in s else s for s in q["sort"].split(",")]
        if "_source" in q:
            body["_source"] = _param_value(q["_source"]) if q["_source"] in ("true", "false") else q["_source"].split(",")
        if "_source_includes" in q or "_source_excludes" in q:
            body["_source"] = {"includes": [s for s in q.get("_source_includes", "").split(",") if s],
                               "excludes": [s for s in q.get("_source_excludes", "").split(",") if s]}  # fmt: skip
        result = run_search(ApiRequest.from_handler(self, "POST", index, q, body, {}), index or "*", body)
        if q.get("rest_total_hits_as_int") in ("", "true") and "total" in result.get("hits", {}):
            result["hits"]["total"] = result["hits"]["total"]["value"]
        return 200, result, {}

    def _r_esql(self, index: str | None, q: dict[str, str], body: Any) -> tuple[int, Any, dict[str, Any]]:
        if not isinstance(body, dict) or "query" not in body:
            raise EsError(400, "parsing_exception", "[query] is required")
        fmt = q.get("format", "json").lower()
        if fmt not in ("json", "txt", "csv", "tsv"):
            raise EsError(400, "illegal_argument_exception", f"Invalid format [{fmt}], supported formats are [json, txt, csv, tsv]")
        for key in body:
            if key not in ("query", "params", "columnar", "locale", "filter", "time_zone", "profile",
                           "include_ccs_metadata", "include_execution_metadata", "allow_partial_results"):  # fmt: skip
                raise EsError(400, "parsing_exception", f"unknown field [{key}]")
        if body.get("filter") is not None:
            raise EsError(400, "unsupported_operation_exception", "[filter] of ES|QL requests is not supported by the soclab embedded store")
        columnar = bool(body.get("columnar", False)) or q.get("columnar") in ("", "true")
        result = dict(self.backend.esql_query(body["query"], body.get("params"), columnar and fmt == "json"))
        warnings = result.pop("warnings", [])
        headers: dict[str, Any] = {}
        if warnings:
            headers["Warning"] = [warning_header(w, VERSION) for w in warnings]
        if fmt == "json":
            return 200, result, headers
        return 200, _tabular(result, fmt), headers


def _param_value(text: str) -> Any:
    if text in ("true", "false"):
        return text == "true"
    try:
        return int(text)
    except ValueError:
        return text


def _tabular(result: dict[str, Any], fmt: str) -> str:
    names = [c["name"] for c in result["columns"]]
    rows = [["" if v is None else (json.dumps(v) if isinstance(v, list) else str(v)) for v in row] for row in result["values"]]
    if fmt == "csv":
        import csv
        import io

        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\r\n")
        w.writerow(names)
        w.writerows(rows)
        return buf.getvalue()
    if fmt == "tsv":
        return "\n".join("\t".join(r) for r in [names, *rows]) + "\n"
    widths = [max([len(n)] + [len(r[i]) for r in rows]) for i, n in enumerate(names)]
    lines = ["|".join(n.ljust(w) for n, w in zip(names, widths)), "+".join("-" * w for w in widths)]
    lines += ["|".join(v.ljust(w) for v, w in zip(r, widths)) for r in rows]
    return "\n".join(lines) + "\n"


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 64

    def __init__(self, addr: tuple[str, int], backend: Backend, verbose: bool = False, *, limits: ServeLimits | None = None,
                 auth: Auth | None = None):  # fmt: skip
        super().__init__(addr, _Handler)
        lim = limits or ServeLimits()
        self.backend = backend
        self.verbose = verbose
        self.auth = auth or Auth()
        self.cluster_uuid = uuid.uuid5(uuid.NAMESPACE_URL, "soclab").hex[:22]
        self.max_content_length = lim.max_content_length
        self.request_timeout = lim.request_timeout
        self.max_queued = lim.max_queued
        # requests admitted (running or waiting for the store); beyond them a request answers 429
        self.slots = threading.BoundedSemaphore(lim.max_queued)
        con = getattr(getattr(backend, "engine", None), "con", None)
        if lim.memory_limit and con is not None:
            con.execute(f"SET memory_limit = '{int(lim.memory_limit[:-2])}{lim.memory_limit[-2:].upper()}'")


@dataclass(frozen=True)
class ServeLimits:
    """The endpoint's limits (docs/store.md): body size, per-request deadline, admitted requests."""

    max_content_length: int = MAX_CONTENT_LENGTH
    request_timeout: float | None = 30.0
    max_queued: int = 16
    memory_limit: str | None = STORE_MEMORY_LIMIT  # DuckDB's memory_limit for the served store (fails past it)


def _now(backend: Backend) -> dt.datetime:
    engine = getattr(backend, "engine", None)
    if engine is not None:
        return engine.now()
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


def make_server(backend: Backend, host: str = "127.0.0.1", port: int = 9200, *, verbose: bool = False,
                limits: ServeLimits | None = None, auth: Auth | None = None) -> _Server:  # fmt: skip
    """A bound (not yet serving) server; port 0 picks a free port (see `server.server_address`)."""
    return _Server((host, port), backend, verbose, limits=limits, auth=auth)


def serve(backend: Backend, host: str = "127.0.0.1", port: int = 9200, *, verbose: bool = False) -> None:
    """Serve until interrupted."""
    server = make_server(backend, host, port, verbose=verbose)
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()


def serve_in_thread(backend: Backend, host: str = "127.0.0.1", port: int = 0, *, limits: ServeLimits | None = None,
                    auth: Auth | None = None) -> tuple[_Server, threading.Thread]:  # fmt: skip
    """Start serving in a daemon thread (tests, embedding); stop with `server.shutdown()`."""
    server = make_server(backend, host, port, limits=limits, auth=auth)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    return server, thread


def _wants_pretty(path: str) -> bool:
    """`?pretty` (or `?pretty=true`) asks for indented JSON, as Elasticsearch answers it."""
    values = parse_qs(urlsplit(path).query, keep_blank_values=True).get("pretty")
    return values is not None and values[-1].lower() not in ("false", "0")
