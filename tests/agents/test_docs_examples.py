"""The complete examples of docs/agents.md run as written."""

from __future__ import annotations

import asyncio
import importlib.util
import re
import sys
from pathlib import Path

import pytest

from pytest_soclab.agents.command import command_agent
from pytest_soclab.agents.mcp_agent import mcp_agent

from .fake_tools import FakeTools
from .test_openai_agent import TRIGGER

DOC = Path(__file__).parents[2] / "docs" / "agents.md"
BLOCK = re.compile(r"```python\n# file: (\S+)\n(.*?)```", re.S)


@pytest.fixture(scope="module")
def examples(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("doc-examples")
    files = {}
    for name, code in BLOCK.findall(DOC.read_text("utf-8")):
        (out / name).write_text(code, "utf-8")
        files[name] = out / name
    return files


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(f"doc_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_kind_has_an_example(examples):
    assert sorted(examples) == [
        "async_agent.py",
        "cmd_agent.py",
        "local_llm.py",
        "mcp_agent.py",
        "simple_agent.py",
    ]


def test_python_callables(examples):
    report = _load(examples["simple_agent.py"]).investigate(TRIGGER, FakeTools())
    assert report["findings"] == {"implicated_hosts": ["web-01"], "iocs": ["/tmp/.sysupdate"]}
    assert "pid 4242 `/tmp/.sysupdate` (parent php-fpm)" in report["markdown"]
    text = asyncio.run(_load(examples["async_agent.py"]).investigate(TRIGGER, FakeTools()))
    assert (
        text == "# Data available\n\n- .ds-logs-endpoint.events.process-default-2024.05.14-000001\n"
        "- .ds-logs-zeek.conn-default-2024.05.14-000001"
    )


def test_cmd_example(examples):
    report = asyncio.run(
        command_agent([sys.executable, str(examples["cmd_agent.py"])], timeout=30)(TRIGGER, FakeTools())
    )
    assert report["markdown"].startswith("# web-01\n\n- 2024-05-14T09:11:58.004Z `/usr/bin/curl`")


def test_mcp_example(examples):
    tools = FakeTools()
    report = asyncio.run(
        mcp_agent([sys.executable, str(examples["mcp_agent.py"])], timeout=60)(TRIGGER, tools)
    )
    assert "- 2024-05-14T09:12:03.120Z `/tmp/.sysupdate`" in report["markdown"]
    assert tools.reports == [report]


def test_local_llm_example(examples, clean_llm_env):
    agent = _load(examples["local_llm.py"]).agent
    assert agent.name == "openai:local"
    assert agent.settings()["tool_result_role"] == "user" and agent.settings()["timeout_s"] == 120
