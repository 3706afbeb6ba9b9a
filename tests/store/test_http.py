"""The HTTP endpoint through the official client, and the live backend against recording servers."""

from __future__ import annotations

import json
import threading
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from elasticsearch import Elasticsearch, NotFoundError
from store_testdata import PROC

from pytest_soclab.errors import EsError, SoclabError
from pytest_soclab.store.live import LiveBackend


def test_official_client_search_esql_mapping_cat(server: str) -> None:
    es = Elasticsearch(server)
    assert es.info()["tagline"] == "You Know, for Search"
    res = es.search(index="logs-*", query={"term": {"host.name": "db-01"}}, sort=[{"@timestamp": "asc"}])
    assert [h["_id"] for h in res["hits"]["hits"]] == ["p4", "p5"]
    res = es.esql.query(query=f"FROM {PROC} | STATS c = COUNT(*) BY host.name | SORT host.name")
    assert res["values"] == [[2, "db-01"], [4, "web-01"], [2, "ws-07"]]
    assert res["columns"][0] == {"name": "c", "type": "long"}
    mapping = es.indices.get_mapping(index=PROC)
    (name,) = mapping.body
    assert mapping[name]["mappings"]["properties"]["host"]["properties"]["name"]["type"] == "keyword"
    rows = es.cat.indices(index="logs-*", format="json")
    assert {r["index"] for r in rows} == {f".ds-{PROC}-2024.05.01-000001", ".ds-logs-zeek.conn-default-2024.05.01-000001"}
    with pytest.raises(NotFoundError) as err:
        es.search(index="nope")
    assert err.value.meta.status == 404 and err.value.error == "index_not_found_exception"


def test_esql_warnings_come_as_warning_headers(server: str) -> None:
    es = Elasticsearch(server)
    with pytest.warns(Warning, match="single-value function encountered multi-value"):
        es.esql.query(query=f"FROM {PROC} | EVAL l = LENGTH(process.args) | KEEP l | LIMIT 1")


def _raw(url: str, method: str = "GET", body: Any = None) -> tuple[int, dict[str, str], bytes]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("PUT", "/notes", 400), ("DELETE", "/notes", 400), ("POST", "/notes/_doc", 400), ("POST", "/_bulk", 400),
        ("GET", "/_query", 405), ("DELETE", "/notes/_search", 405), ("PUT", "/_cat/indices", 405),
        ("POST", "/notes/_update_by_query", 400), ("GET", "/_nodes", 400),
    ],
)
def test_writes_and_unknown_paths_are_refused(server: str, method: str, path: str, status: int) -> None:
    code, headers, body = _raw(server + path, method, {} if method in ("POST", "PUT") else None)
    assert code == status
    assert headers.get("X-Elastic-Product") == "Elasticsearch"
    assert "error" in json.loads(body)


def test_other_routes(server: str) -> None:
    code, _, body = _raw(server + "/_cluster/health")
    assert code == 200 and json.loads(body)["status"] == "green"
    code, _, body = _raw(server + "/_resolve/index/logs-*")
    assert code == 200 and {d["name"] for d in json.loads(body)["data_streams"]} == {PROC, "logs-zeek.conn-default"}
    code, _, body = _raw(server + "/notes/_search?q=body:fox&rest_total_hits_as_int=true")
    assert code == 200 and json.loads(body)["hits"]["total"] == 1
    code, _, body = _raw(server + "/_query?format=csv", "POST", {"query": "FROM notes | KEEP views | SORT views"})
    assert code == 200 and body.decode().splitlines() == ["views", "3", "10"]
    code, _, body = _raw(server + "/_query", "POST", {"query": "FROM notes | WHERE"})
    assert code == 400 and json.loads(body)["error"]["type"] == "parsing_exception"


class _Recorder(BaseHTTPRequestHandler):
    """A fake cluster that answers the four read calls and records every request."""

    protocol_version = "HTTP/1.1"
    seen: list[tuple[str, str]] = []

    def log_message(self, *args: Any) -> None:
        pass

    def _answer(self) -> None:
        self.seen.append((self.command, self.path))
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        path = self.path.split("?")[0]
        if path.startswith("/_cat/indices"):
            body: Any = [{"index": "logs-a", "docs.count": "1"}]
        elif path.endswith("/_mapping"):
            body = {"logs-a": {"mappings": {"properties": {}}}}
        elif path.endswith("/_search"):
            if path.startswith("/missing"):
                self._send(404, {"error": {"root_cause": [], "type": "index_not_found_exception",
                                           "reason": "no such index [missing]"}, "status": 404})  # fmt: skip
                return
            body = {"took": 1, "timed_out": False, "hits": {"total": {"value": 0, "relation": "eq"}, "hits": []}}
        elif path == "/_query":
            body = {"took": 1, "is_partial": False, "columns": [{"name": "c", "type": "long"}], "values": [[1]]}
        else:
            body = {"error": "unexpected"}
        self._send(200, body)

    def _send(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("X-Elastic-Product", "Elasticsearch")
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _answer


@pytest.fixture()
def recorder() -> Iterator[tuple[str, list[tuple[str, str]]]]:
    seen: list[tuple[str, str]] = []
    handler = type("Rec", (_Recorder,), {"seen": seen})
    srv = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}", seen
    srv.shutdown()
    srv.server_close()


def test_live_backend_sends_only_the_four_read_calls(recorder: tuple[str, list[tuple[str, str]]]) -> None:
    url, seen = recorder
    live = LiveBackend.from_options(url, api_key="aWQ6a2V5")
    assert live.list_indices("logs-*") == [{"index": "logs-a", "docs.count": "1"}]
    assert "logs-a" in live.get_mappings("logs-*")
    assert live.es_search("logs-*", {"query": {"match_all": {}}})["hits"]["total"]["value"] == 0
    assert live.esql_query("FROM logs-* | STATS c = COUNT(*)")["values"] == [[1]]
    with pytest.raises(EsError) as err:
        live.es_search("missing", {})
    assert err.value.status == 404 and err.value.type == "index_not_found_exception"
    live.close()
    assert [(m, p.split("?")[0]) for m, p in seen] == [
        ("GET", "/_cat/indices/logs-*"), ("GET", "/logs-*/_mapping"), ("POST", "/logs-*/_search"),
        ("POST", "/_query"), ("POST", "/missing/_search"),
    ]


def test_live_backend_unreachable_is_one_clear_error() -> None:
    live = LiveBackend.from_options("http://127.0.0.1:9", request_timeout=2)
    with pytest.raises(EsError) as err:
        live.es_search("logs-*", {})
    assert err.value.type == "connection_exception" and "cannot reach Elasticsearch" in err.value.reason


def test_live_backend_options_and_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("ELASTIC_URL", raising=False)
    with pytest.raises(SoclabError, match="ELASTIC_URL"):
        LiveBackend.from_options(None)
    monkeypatch.setenv("ELASTIC_URL", "http://127.0.0.1:9200")
    monkeypatch.setenv("ELASTIC_USERNAME", "elastic")
    monkeypatch.setenv("ELASTIC_PASSWORD", "pw")
    live = LiveBackend.from_options(None)
    assert live.url == "http://127.0.0.1:9200"
    with pytest.raises(SoclabError, match="CA certificate"):
        LiveBackend.from_options(None, ca_certs=str(tmp_path / "nope.pem"))
    with pytest.raises(SoclabError, match="not both"):
        LiveBackend.from_options(None, api_key="k")


def test_live_backend_against_the_soclab_endpoint(server: str) -> None:
    live = LiveBackend.from_options(server)
    res = live.esql_query(f"FROM {PROC} | EVAL l = LENGTH(process.args) | STATS c = COUNT(l)")
    assert res["values"] == [[0]]
    assert res["warnings"][1].endswith("single-value function encountered multi-value")


def test_serve_command_parses(tmp_path: Path) -> None:
    from pytest_soclab.cli import build_parser
    from pytest_soclab.cli.serve_cmd import open_backend

    parser = build_parser()
    args = parser.parse_args(["serve", "--index", f"x={tmp_path / 'd.ndjson'}", "--port", "0"])
    (tmp_path / "d.ndjson").write_text('{"a": 1}\n')
    backend = open_backend(args)
    assert backend.esql_query("FROM x | KEEP a")["values"] == [[1]]
    with pytest.raises(SystemExit):
        parser.parse_args(["serve"])
    args = parser.parse_args(["serve", "--case-db", str(tmp_path / "none.duckdb")])
    with pytest.raises(SoclabError, match="no such file"):
        open_backend(args)
