from __future__ import annotations

import asyncio
import json

from pytest_soclab.agents.anthropic_agent import anthropic_agent
from pytest_soclab.bridge.prompts import SYSTEM_PROMPT
from pytest_soclab.models.tools import READ_TOOLS

from .fake_tools import FakeTools
from .replay import ReplayServer, load_exchange
from .test_openai_agent import TRIGGER

MODEL = "claude-haiku-4-5-20251001"


def _results(body: dict) -> dict[str, dict]:
    out = {}
    for msg in body["messages"]:
        if msg["role"] == "user" and isinstance(msg["content"], list):
            for block in msg["content"]:
                if block["type"] == "tool_result":
                    out[block["tool_use_id"]] = block
    return out


def test_investigation_end_to_end(tools, policy, clean_llm_env):
    with ReplayServer(load_exchange("anthropic_investigation.json")) as server:
        agent = anthropic_agent(MODEL, base_url=server.url, api_key="sk-ant-test", policy=policy)
        report = asyncio.run(agent(TRIGGER, tools))
    assert server.problems == []
    bodies = server.bodies()
    assert len(bodies) == 6 and {r["path"] for r in server.requests} == {"/v1/messages"}
    assert server.requests[0]["headers"]["authorization"] == "Bearer sk-ant-test"
    assert policy.waits == [3.0, 1.0]  # retry-after honoured, then exponential backoff

    first = bodies[0]
    assert first["system"] == SYSTEM_PROMPT and first["tool_choice"] == {"type": "auto"}
    assert first["max_tokens"] == 4096 and "temperature" not in first
    assert first["tools"][2] == {
        "name": "es_search",
        "description": tools.specs()[2]["description"],
        "input_schema": tools.specs()[2]["parameters"],
    }

    assert report == {
        "markdown": "## Summary\nphp-fpm on web-01 spawned a shell that fetched and ran /tmp/.sysupdate"
        " (pid 4242).",
        "findings": {
            "implicated_hosts": ["web-01"],
            "iocs": ["/tmp/.sysupdate"],
            "evidence": [
                {"index": "logs-endpoint.events.process-default", "id": "p-1", "why": "implant start"}
            ],
        },
    }
    assert tools.reports == [report]  # only the well-formed report reached the tools
    assert [(n, ok) for n, _, ok in tools.calls] == [
        ("list_indices", True),
        ("esql_query", False),
        ("es_search", False),
        ("esql_query", True),
        ("submit_report", True),
    ]

    results = _results(bodies[5])
    assert results["toolu_01Lst"]["is_error"] is False
    unknown = json.loads(results["toolu_01Sh"]["content"])
    assert results["toolu_01Sh"]["is_error"] and "unknown tool [shell_exec]" in unknown["error"]["reason"]
    col = json.loads(results["toolu_01Col"]["content"])
    assert col["error"]["type"] == "verification_exception"
    assert col["error"]["reason"] == "Found 1 problem\nline 1:1: Unknown column [process.hash]"
    assert json.loads(results["toolu_01Rgx"]["content"])["error"]["type"] == "parsing_exception"
    rows = json.loads(results["toolu_01Ok"]["content"])["values"]
    assert rows == [
        ["2024-05-14T09:11:58.004Z", 4239, "/usr/bin/curl", "sh"],
        ["2024-05-14T09:12:03.120Z", 4242, "/tmp/.sysupdate", "php-fpm"],
    ]
    bad = results["toolu_01Bad"]
    assert bad["is_error"] and "submit_report" in bad["content"] and "findings" in bad["content"]

    # The assistant turn with a thinking block went back verbatim, signature included.
    turn = next(
        m for m in bodies[4]["messages"] if m["role"] == "assistant" and m["content"][0]["type"] == "thinking"
    )
    assert turn["content"][0] == {
        "type": "thinking",
        "thinking": "The alert names web-01; check its processes and the zeek logs.",
        "signature": "EqQBCkYIAxgCIkB0c2ln",
    }
    # Roles alternate (tool results and any nudge share one user message).
    roles = [m["role"] for m in bodies[5]["messages"]]
    assert roles == ["user", "assistant"] * 3 + ["user"]

    usage = agent.usage.to_dict()
    assert (
        usage["input_tokens"] == 1500 + 3100 + 3600 + 3800 and usage["output_tokens"] == 60 + 180 + 40 + 120
    )
    assert usage["llm_calls"] == 4 and usage["llm_retries"] == 2
    assert usage["cost_usd"] == round((12000 * 1.0 + 400 * 5.0) / 1e6, 6)


def test_final_text_ends_the_run_without_submit_report(policy, clean_llm_env):
    tools = FakeTools(allowed=READ_TOOLS)
    final = {
        "status": 200,
        "body": {
            "id": "msg_01F",
            "type": "message",
            "role": "assistant",
            "model": MODEL,
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "content": [{"type": "text", "text": "## Report\nNothing malicious on web-01."}],
            "usage": {"input_tokens": 900, "output_tokens": 20},
        },
    }
    with ReplayServer([final]) as server:
        agent = anthropic_agent("claude-unpriced-test", base_url=server.url, policy=policy)
        report = asyncio.run(agent(TRIGGER, tools))
    assert report == {"markdown": "## Report\nNothing malicious on web-01."}
    assert "submit_report" not in [t["name"] for t in server.bodies()[0]["tools"]]
    assert agent.usage.to_dict()["cost_usd"] is None  # no price known for this model
    assert (
        server.requests[0]["headers"]["authorization"] == "Bearer soclab-no-key"
    )  # local server, no key needed
