"""Opt-in: the openai:MODEL adapter against a live OpenAI-compatible server (llama.cpp, vLLM, Ollama).

    SOCLAB_SMOKE_OPENAI_BASE_URL=http://127.0.0.1:8000/v1 [SOCLAB_SMOKE_OPENAI_MODEL=local]
    [SOCLAB_SMOKE_TOOL_RESULT_ROLE=user] python -m pytest tests/agents/test_live_openai.py

It proves the plumbing against a real server and model (requests accepted, tool calls parsed and
run, results sent back, usage counted), not the model's investigation quality: a tiny model may
well end without a report, which is a clean LLMError, never a crash.
"""

from __future__ import annotations

import asyncio
import os

import pytest

from pytest_soclab.agents.openai_agent import openai_agent
from pytest_soclab.llm import LLMError

from .test_openai_agent import TRIGGER

BASE_URL = os.environ.get("SOCLAB_SMOKE_OPENAI_BASE_URL")
pytestmark = pytest.mark.skipif(
    not BASE_URL, reason="set SOCLAB_SMOKE_OPENAI_BASE_URL to run against a live server"
)


def _agent(**options):
    return openai_agent(
        os.environ.get("SOCLAB_SMOKE_OPENAI_MODEL", "local"),
        base_url=BASE_URL,
        tool_result_role=os.environ.get("SOCLAB_SMOKE_TOOL_RESULT_ROLE", "tool"),
        timeout=120,
        max_retries=1,
        **options,
    )


def test_forced_tool_calls_reach_the_tools(tools):
    agent = _agent(tool_choice="required", max_turns=3)
    try:
        report = asyncio.run(agent(TRIGGER, tools))
    except LLMError as exc:
        assert "no report after 3 model turns" in str(exc)
    else:
        assert tools.reports == [report]  # with forced tool calls, a run ends only through submit_report
    assert agent.turns == agent.usage.calls >= 1
    assert agent.usage.output_tokens > 0
    assert len(tools.calls) >= 1, "the server answered, but no well-formed tool call reached the tools"


def test_free_run_ends_cleanly(tools):
    agent = _agent(max_turns=4)
    try:
        report = asyncio.run(agent(TRIGGER, tools))
    except LLMError as exc:
        assert "no report after 4 model turns" in str(exc) or "empty answers" in str(exc)
    else:
        assert isinstance(report["markdown"], str) and report["markdown"].strip()
    assert agent.usage.calls == agent.turns >= 1
