from __future__ import annotations

import asyncio
import json

import pytest

from pytest_soclab.agents.openai_agent import openai_agent
from pytest_soclab.agents.prompts import SYSTEM_PROMPT
from pytest_soclab.llm import LLMError

from .replay import ReplayServer, load_exchange

TRIGGER = {
    "type": "alert",
    "prompt": "Suspicious process with an outbound connection on web-01.",
    "pivot": {"host.name": "web-01", "time_utc": "2024-05-14T09:12:03Z", "alert_rule": "Unusual Process Network Connection"},
}


def _tool_messages(body: dict) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in body["messages"] if m["role"] == "tool"}


def test_investigation_end_to_end(tools, policy, clean_llm_env):
    with ReplayServer(load_exchange("openai_investigation.json")) as server:
        agent = openai_agent("gpt-4o-mini", base_url=server.url + "/v1", api_key="sk-test", policy=policy)
        report = asyncio.run(agent(TRIGGER, tools))
    assert server.problems == []
    bodies = server.bodies()
    assert len(bodies) == 7 and all(r["path"] == "/v1/chat/completions" for r in server.requests)
    assert server.requests[0]["headers"]["authorization"] == "Bearer sk-test"

    # The report is the submitted one, and it went through the tools (recorded by the harness).
    assert report["markdown"].startswith("## Summary\nweb-01 ran /tmp/.sysupdate")
    assert report["findings"]["attacker_ips"] == ["203.0.113.45"]
    assert tools.reports == [report]

    # Retries: the 429 honoured Retry-After (2 s), the 503 backed off exponentially from 1 s;
    # a retried request is the same request.
    assert policy.waits == [2.0, 1.0]
    assert bodies[0] == bodies[1] and bodies[3] == bodies[4]

    # Settings on every request: the tools, tool_choice sent explicitly, temperature 0, the seed.
    first = bodies[0]
    assert [t["function"]["name"] for t in first["tools"]] == [s["name"] for s in tools.specs()]
    assert first["tools"][0] == {"type": "function", "function": tools.specs()[0]}
    assert (first["tool_choice"], first["temperature"], first["seed"]) == ("auto", 0, 0)
    assert first["messages"][0] == {"role": "system", "content": SYSTEM_PROMPT}
    assert "Suspicious process with an outbound connection on web-01." in first["messages"][1]["content"]

    # What reached the tools: the malformed call and the unknown tool did not; the rest did, in order.
    assert [(name, ok) for name, _, ok in tools.calls] == [
        ("list_indices", True),
        ("es_search", True),
        ("esql_query", True),
        ("es_search", False),
        ("wipe_host", False),
        ("isolate_host", True),
        ("submit_report", True),
    ]
    assert "\n| WHERE destination.ip" in tools.calls[2][1]["query"]  # raw newlines parsed (strict=False)

    # What the model read back.
    results = _tool_messages(bodies[6])
    assert "not valid JSON" in results["call_Esq1"] and "call it again" in results["call_Esq1"]
    unknown = json.loads(results["call_Sh3l"])
    assert unknown["error"]["type"] == "illegal_argument_exception"
    assert "unknown tool [run_shell]" in unknown["error"]["reason"] and "esql_query" in unknown["error"]["reason"]
    hits = json.loads(results["call_Srch"])["hits"]["hits"]
    assert [h["_id"] for h in hits] == ["p-1", "p-2"]
    esql = json.loads(results["call_Esq2"])
    assert esql["values"] == [["2024-05-14T09:12:04.500Z", "10.0.1.15", "203.0.113.45", 443]]
    missing = json.loads(results["call_Miss"])
    assert missing["status"] == 404 and missing["error"]["type"] == "index_not_found_exception"
    denied = json.loads(results["call_W1pe"])
    assert denied["status"] == 403 and denied["error"]["type"] == "security_exception"
    assert json.loads(results["call_Is0l"])["status"] == "successful"

    # The history sent back: content "" (never null) next to tool calls, arguments always valid JSON.
    assistants = [m for m in bodies[6]["messages"] if m["role"] == "assistant"]
    assert all(m["content"] is not None for m in assistants)
    assert assistants[0]["content"] == "" and assistants[2]["content"] == "Checking the network side."
    bad_args = json.loads(assistants[1]["tool_calls"][0]["function"]["arguments"])
    assert bad_args == {"_unparseable_arguments": '{"query": "FROM logs-endpoint.events.process-default | LIMIT 5"'}

    # Usage of the run: the five answered calls, two retries, priced as gpt-4o-mini.
    usage = agent.usage.to_dict()
    assert usage == {
        "llm_calls": 5,
        "llm_retries": 2,
        "input_tokens": 11561,
        "output_tokens": 493,
        "total_tokens": 12054,
        "cost_usd": round((11561 * 0.15 + 493 * 0.60) / 1e6, 6),
    }
    assert agent.turns == 5


def test_rate_limit_exhausted_is_a_clear_error(tools, policy, clean_llm_env):
    step = load_exchange("openai_investigation.json")[0]
    with ReplayServer([step] * 5) as server:
        agent = openai_agent("gpt-4o-mini", base_url=server.url + "/v1", policy=policy)
        with pytest.raises(LLMError) as err:
            asyncio.run(agent(TRIGGER, tools))
    assert str(err.value).startswith("openai:gpt-4o-mini: rate limited 429: Rate limit reached for gpt-4o-mini")
    assert str(err.value).endswith("after 5 attempts")
    assert policy.waits == [2.0] * 4
    assert tools.calls == []
