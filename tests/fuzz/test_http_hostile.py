"""The HTTP endpoint against hostile requests and hostile telemetry (issue 19): headers cannot be
split or forged from log data, bodies are framed exactly, every error is in Elasticsearch's shape."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fuzz_data import PROC
from rawhttp import exchange, parse, request

from pytest_soclab.store.embedded import EmbeddedBackend
from pytest_soclab.store.http import ServeLimits, serve_in_thread
from pytest_soclab.store.httpframe import Auth, header_value, resolve_date_math, warning_header


def _serve(path: Path, **kw: object) -> Iterator[int]:
    import datetime as dt

    backend = EmbeddedBackend.open(path, now=dt.datetime(2024, 5, 2, 12, 30))
    srv, thread = serve_in_thread(backend, **kw)  # type: ignore[arg-type]
    yield srv.server_address[1]
    srv.shutdown()
    srv.server_close()
    thread.join(5)
    backend.close()


@pytest.fixture(scope="module")
def port(fuzz_store: Path) -> Iterator[int]:
    yield from _serve(fuzz_store, limits=ServeLimits(max_content_length=64 * 1024))


def _es_error(body: bytes, status: int) -> dict:
    doc = json.loads(body)
    assert doc["status"] == status
    err = doc["error"]
    assert isinstance(err["root_cause"], list) and err["type"] and err["reason"]
    return err


def test_telemetry_cannot_split_or_forge_headers(port: int) -> None:
    # TO_LONG fails on every user agent: each failing value is quoted in a Warning header
    query = f"FROM {PROC} | EVAL n = TO_LONG(user_agent.original) | KEEP n"
    raw = exchange(port, request("POST", "/_query", {"query": query}))
    status, pairs, body = parse(raw)
    assert status == 200
    head = raw.partition(b"\r\n\r\n")[0]
    assert b"X-Injected-By-Log" not in [name for name, _ in pairs]
    assert b"X-Forged" not in [name for name, _ in pairs]
    assert b"\x00" not in head
    assert all(0x20 <= b < 0x7F for line in head.split(b"\r\n") for b in line), head
    warnings = [v for n, v in pairs if n.lower() == b"warning"]
    assert warnings and all(v.startswith(b'299 Elasticsearch-') for v in warnings)
    assert json.loads(body)["values"]  # the body is the real one, not a forged one


def test_header_values_escape_controls_and_non_ascii() -> None:
    assert header_value("a\r\nb") == "a%0D%0Ab"
    assert header_value("nul\x00") == "nul%00"
    assert header_value("caf\u00e9 \U0001f980") == "caf%C3%A9 %F0%9F%A6%80"
    assert header_value("100%") == "100%" and header_value("100%", percent=True) == "100%25"
    assert warning_header("50% \u00e9", "9.1.0").endswith('"50%25 %C3%A9"')
    assert warning_header('say "hi"', "9.1.0") == '299 Elasticsearch-9.1.0-soclab "say \\"hi\\""'


def test_the_crab_warning_does_not_drop_the_connection(port: int) -> None:
    raw = exchange(port, request("POST", "/_query", {"query": 'ROW a = "\U0001f980" | EVAL b = TO_LONG(a)'}))
    status, pairs, body = parse(raw)
    assert status == 200 and json.loads(body)["values"] == [["\U0001f980", None]]
    assert any(b"%F0%9F%A6%80" in v for n, v in pairs if n.lower() == b"warning")


@pytest.mark.parametrize("value", ["abc", "-1", "1e3", "+5", " 99999999999999999999"])
def test_bad_content_length_is_a_400_and_closes(port: int, value: str) -> None:
    raw = exchange(port, f"POST /_query HTTP/1.1\r\nHost: x\r\nContent-Length: {value}\r\n\r\n{{}}".encode())
    status, pairs, body = parse(raw)
    assert status == 400
    assert (b"Connection", b"close") in pairs
    _es_error(body, 400)


def test_too_large_body_is_413_and_the_rest_is_not_a_request(port: int) -> None:
    big = b'{"query": "' + b"A" * (70 * 1024) + b'"}'
    # the unread body must not be parsed as a second request
    raw = exchange(port, request("POST", "/_query", big).replace(b"Connection: close", b"Connection: keep-alive"))
    assert raw.count(b"HTTP/1.") == 1
    status, pairs, body = parse(raw)
    assert status == 413 and (b"Connection", b"close") in pairs
    assert "http.max_content_length" in _es_error(body, 413)["reason"]


def test_chunked_body_is_read_as_a_body(port: int) -> None:
    payload = json.dumps({"query": "ROW a = 1"}).encode()
    chunks = b"".join(f"{len(p):x}\r\n".encode() + p + b"\r\n" for p in (payload[:7], payload[7:])) + b"0\r\n\r\n"
    head = b"POST /_query HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    status, _, body = parse(exchange(port, head + chunks))
    assert status == 200 and json.loads(body)["values"] == [[1]]


@pytest.mark.parametrize("body", [b"null", b"[" * 60_000, b'{"a":' * 5000 + b"1" + b"}" * 5000])
def test_odd_json_bodies_get_an_answer(port: int, body: bytes) -> None:
    status, _, resp = parse(exchange(port, request("POST", "/_query", body)))
    assert status == 400
    _es_error(resp, 400)


def test_deep_bool_query_is_a_400(port: int) -> None:
    body = b'{"query": ' + b'{"bool": {"must": [' * 1000 + b'{"match_all": {}}' + b"]}}" * 1000 + b"}"
    status, _, resp = parse(exchange(port, request("POST", f"/{PROC}/_search", body)))
    assert status == 400
    _es_error(resp, 400)


@pytest.mark.parametrize("method,path,status", [("GET", "/nope/nope/nope", 400), ("DELETE", f"/{PROC}/_search", 405),
                                                ("PUT", "/x", 400)])  # fmt: skip
def test_every_error_is_in_elasticsearch_shape(port: int, method: str, path: str, status: int) -> None:
    got, _, body = parse(exchange(port, request(method, path)))
    assert got == status
    _es_error(body, status)


def test_date_math_index_names() -> None:
    import datetime as dt

    now = dt.datetime(2024, 5, 2, 12, 30)
    assert resolve_date_math("<logs-{now/d}>", now) == "logs-2024.05.02"
    assert resolve_date_math("<logs-{now-1d/d}>", now) == "logs-2024.05.01"
    assert resolve_date_math("<logs-{now/M{yyyy.MM}}>", now) == "logs-2024.05"
    assert resolve_date_math("plain", now) == "plain"


def test_date_math_index_over_http_is_index_not_found(port: int) -> None:
    status, _, body = parse(exchange(port, request("POST", "/%3Clogs-%7Bnow%2Fd%7D%3E/_search", {})))
    assert status == 404
    err = _es_error(body, 404)
    assert err["type"] == "index_not_found_exception" and "logs-2024.05.02" in err["reason"]


def test_optional_auth(fuzz_store: Path) -> None:
    gen = _serve(fuzz_store, auth=Auth(api_key="k3y", basic="elastic:pw"))
    port = next(gen)
    try:
        status, pairs, body = parse(exchange(port, request("GET", "/")))
        assert status == 401 and _es_error(body, 401)["type"] == "security_exception"
        assert any(n == b"WWW-Authenticate" for n, _ in pairs)
        assert parse(exchange(port, request("GET", "/", headers={"Authorization": "ApiKey k3y"})))[0] == 200
        basic = base64.b64encode(b"elastic:pw").decode()
        assert parse(exchange(port, request("GET", "/", headers={"Authorization": f"Basic {basic}"})))[0] == 200
        assert parse(exchange(port, request("GET", "/", headers={"Authorization": "ApiKey wrong"})))[0] == 401
    finally:
        next(gen, None)


def test_requests_beyond_the_queue_get_429(fuzz_store: Path) -> None:
    gen = _serve(fuzz_store, limits=ServeLimits(max_queued=1))
    port = next(gen)
    try:
        import threading

        slow = {"query": "ROW a = 1 | EVAL s = SPLIT(REPEAT(\"x,\", 500000), \",\") | MV_EXPAND s | STATS c = COUNT_DISTINCT(s)"}
        results: list[int] = []
        threads = [threading.Thread(target=lambda: results.append(parse(exchange(port, request("POST", "/_query", slow)))[0]))
                   for _ in range(4)]  # fmt: skip
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert set(results) <= {200, 429} and 200 in results
    finally:
        next(gen, None)
