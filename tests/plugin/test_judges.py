"""--soclab-judge=both through the plugin: the rules judge scores, an LLM judge (a fake
OpenAI-compatible server on loopback) gives a second opinion, the scorecard reports kappa."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from project import make_project


class _AlwaysMiss(BaseHTTPRequestHandler):
    """A strict grader: every checkpoint is a miss."""

    disable_nagle_algorithm = True

    def do_POST(self) -> None:  # noqa: N802 (http.server API)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        cps = json.loads(re.search(r"<checkpoints>\n(.*?)\n</checkpoints>", user, re.S).group(1))
        verdicts = [{"index": c["index"], "verdict": "miss", "justification": "not convinced", "evidence": []} for c in cps]
        payload = {
            "id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": json.dumps({"verdicts": verdicts})}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
        }  # fmt: skip
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def model_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _AlwaysMiss)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_both_judges_report_their_agreement(pytester: pytest.Pytester, soclab_cache: Path, model_server: str) -> None:
    pytest.importorskip("openai")
    make_project(pytester, soclab_cache, agent="playbook", atk=None, ben=None, tasks=True)
    out = pytester.path / "results.json"
    result = pytester.runpytest(
        "-p", "no:cacheprovider", f"--soclab-json={out}", "--soclab-judge=both:llm:openai:strict-grader",
        f"--soclab-llm-base-url={model_server}", "--soclab-llm-api-key=test",
    )  # fmt: skip
    result.stdout.fnmatch_lines(["*judges rules vs llm:*: Cohen's kappa *, agreement *% over * checkpoints, * disagreements*"])
    data = json.loads(out.read_text())
    judges = data["modes"]["protected"]["judges"]
    (item,) = data["items"]
    hits = sum(1 for c in item["checkpoints"] if c["verdict"] != "miss")
    assert judges["first"] == "rules" and judges["checkpoints"] == len(item["checkpoints"])
    assert len(judges["disagreements"]) == hits  # the strict grader disagrees wherever rules gave credit
    assert item["judge_extra"]["comparison"]["second_judge"].startswith("llm:")
