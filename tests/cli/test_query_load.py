"""`soclab query` (standalone and through an item's MCP endpoint), `soclab load` against a recording server."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from pytest_soclab.cli import main

REPO = Path(__file__).resolve().parents[2]
CASE = "case-02-web-implant"


@pytest.fixture
def case_args(soclab_cache: Path) -> list[str]:
    return ["--case", CASE, "--corpus-dir", str(REPO / "corpus"), "--cache-dir", str(soclab_cache),
            "--policy-dir", str(REPO / "rego"), "--scale", "0.05", "--compact"]  # fmt: skip


def test_query_esql_prints_elasticsearch_json(case_args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["query", "esql", 'FROM logs-endpoint.events.process-default | WHERE process.executable LIKE "/tmp/*" '
               "| STATS n = COUNT(*) BY host.name | LIMIT 5", *case_args])  # fmt: skip
    out = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert out["columns"] == [{"name": "n", "type": "long"}, {"name": "host.name", "type": "keyword"}]
    assert ["web-01"] == [row[1] for row in out["values"]]


def test_query_errors_are_elasticsearch_errors_with_exit_1(case_args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["query", "search", ".security", *case_args]) == 1
    err = json.loads(capsys.readouterr().out)
    assert err["status"] == 403 and err["error"]["type"] == "security_exception"
    assert main(["query", "esql", "FROM logs-* | LIMT 1", *case_args]) == 1
    assert json.loads(capsys.readouterr().out)["error"]["type"] == "parsing_exception"
    assert main(["query", "search", "logs-*", "--body", "{not json", *case_args]) == 2
    assert "--body is not valid JSON" in capsys.readouterr().err


def test_query_mappings_indices_and_actions(case_args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["query", "indices", "logs-zeek*", *case_args]) == 0
    rows = json.loads(capsys.readouterr().out)["indices"]
    assert rows and all("zeek" in r["index"] for r in rows)
    assert main(["query", "mappings", "logs-system.auth-default", *case_args]) == 0
    mapping = next(iter(json.loads(capsys.readouterr().out).values()))["mappings"]["properties"]
    assert mapping["source"]["properties"]["ip"]["type"] == "ip"
    # An action on a host the agent never saw in its results: denied by the guard (protected mode).
    assert main(["query", "call", "isolate_host", "--args", '{"host": "web-01"}', *case_args]) == 1
    assert "security_exception" in capsys.readouterr().out


class _Recorder(BaseHTTPRequestHandler):
    requests: list[tuple[str, str, bytes]] = []

    def _answer(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        type(self).requests.append((self.command, self.path, body))
        if self.path.startswith("/_bulk"):
            lines = [json.loads(x) for x in body.decode().splitlines() if x.strip()]
            items = [{"create": {"_index": a["create"]["_index"], "_id": a["create"]["_id"], "status": 201}}
                     for a in lines[::2]]  # fmt: skip
            payload = {"took": 1, "errors": False, "items": items}
        else:
            payload = {"acknowledged": True}
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("X-Elastic-Product", "Elasticsearch")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_PUT = do_POST = _answer

    def log_message(self, *args: object) -> None:
        pass


def test_load_creates_templates_then_bulk_loads_every_document(soclab_cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _Recorder.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        rc = main(["load", CASE, "--es-url", url, "--corpus-dir", str(REPO / "corpus"),
                   "--cache-dir", str(soclab_cache), "--scale", "0.05"])  # fmt: skip
    finally:
        server.shutdown()
    assert rc == 0, capsys.readouterr().err
    templates = [(m, p, json.loads(b)) for m, p, b in _Recorder.requests if p.startswith("/_index_template/")]
    bulks = [b for _, p, b in _Recorder.requests if p.startswith("/_bulk")]
    names = {p.split("/")[2] for _, p, _ in templates}
    assert "soclab-logs-endpoint.events.process-default" in names
    proc = next(t for _, p, t in templates if p.endswith("soclab-logs-endpoint.events.process-default"))
    assert proc["data_stream"] == {} and proc["index_patterns"] == ["logs-endpoint.events.process-default"]
    assert proc["template"]["mappings"]["properties"]["process"]["properties"]["pid"]["type"] == "long"
    docs = sum(len(b.decode().splitlines()) // 2 for b in bulks)
    assert f"{docs:,} documents" in capsys.readouterr().out
    # Templates first, then data.
    first_bulk = next(i for i, (_, p, _) in enumerate(_Recorder.requests) if p.startswith("/_bulk"))
    assert all(p.startswith("/_index_template/") for _, p, _ in _Recorder.requests[:first_bulk])


def test_load_into_an_unreachable_cluster_is_one_line(
    soclab_cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc = main(["load", CASE, "--es-url", "http://127.0.0.1:9", "--corpus-dir", str(REPO / "corpus"),
               "--cache-dir", str(soclab_cache), "--scale", "0.05"])  # fmt: skip
    err = capsys.readouterr().err
    assert rc == 2 and "soclab: error: cannot reach Elasticsearch at http://127.0.0.1:9" in err
    assert "Traceback" not in err
