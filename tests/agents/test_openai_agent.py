from __future__ import annotations

import asyncio
import json

import pytest

from pytest_soclab.agents.openai_agent import openai_agent
from pytest_soclab.bridge.prompts import LAST_TURN, NUDGE, SYSTEM_PROMPT
from pytest_soclab.llm import LLMError

from .fake_tools import FakeTools
from .replay import ReplayServer, load_exchange

TRIGGER = {
    "type": "alert",
    "prompt": "Suspicious process with an outbound connection on web-01.",
    "pivot": {
        "host.name": "web-01",
        "time_utc": "2024-05-14T09:12:03Z",
        "alert_rule": "Unusual Process Network Connection",
    },
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
    assert (
        "unknown tool [run_shell]" in unknown["error"]["reason"]
        and "esql_query" in unknown["error"]["reason"]
    )
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
    assert bad_args == {
        "_unparseable_arguments": '{"query": "FROM logs-endpoint.events.process-default | LIMIT 5"'
    }

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
    assert str(err.value).startswith(
        "openai:gpt-4o-mini: rate limited 429: Rate limit reached for gpt-4o-mini"
    )
    assert str(err.value).endswith("after 5 attempts")
    assert policy.waits == [2.0] * 4
    assert tools.calls == []


def _completion(message: dict, usage: dict | None = None, finish: str = "tool_calls") -> dict:
    body = {
        "id": "c",
        "object": "chat.completion",
        "created": 1,
        "model": "local",
        "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}],
    }
    if usage is not None:
        body["usage"] = usage
    return {"status": 200, "body": body}


def test_llama_cpp_quirks(tools, policy, clean_llm_env):
    """A llama.cpp-style server: HTML-escaped arguments, no tool-call ids, no usage, results as user text."""
    steps = [
        _completion(
            {
                "content": None,
                "tool_calls": [
                    {
                        "type": "function",
                        "function": {
                            "name": "es_search",
                            "arguments": "{&quot;index&quot;: &quot;logs-zeek.conn-default&quot;,"
                            " &quot;body&quot;: {&quot;size&quot;: 1}}",
                        },
                    }
                ],
            }
        ),
        _completion({"content": "", "tool_calls": [{"function": {"name": "list_indices", "arguments": ""}}]}),
        _completion(
            {"content": "## Report\nOne connection from 10.0.1.15 to 203.0.113.45:443."}, finish="stop"
        ),
    ]
    clean_llm_env("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")  # overridden by the option below
    with ReplayServer(steps) as server:
        agent = openai_agent(
            "smollm2-135m", base_url=server.url + "/v1", tool_result_role="user", policy=policy
        )
        report = asyncio.run(agent(TRIGGER, tools))
    assert report == {"markdown": "## Report\nOne connection from 10.0.1.15 to 203.0.113.45:443."}
    assert [(n, a) for n, a, _ in tools.calls] == [
        ("es_search", {"index": "logs-zeek.conn-default", "body": {"size": 1}}),
        ("list_indices", {}),
    ]
    last = server.bodies()[2]["messages"]
    assert [m["role"] for m in last] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert not any(m["role"] == "tool" for m in last)
    assert last[3]["content"].startswith('Result of tool call call_0 (es_search):\n{"took":3')
    assert last[2]["content"] == "" and last[2]["tool_calls"][0]["id"] == "call_0"
    assert json.loads(last[2]["tool_calls"][0]["function"]["arguments"]) == tools.calls[0][1]
    assert agent.usage.to_dict()["input_tokens"] == 0 and agent.usage.calls == 3


def test_empty_answers_are_nudged_then_fail(tools, policy, clean_llm_env):
    empty = _completion({"content": ""}, {"prompt_tokens": 10, "completion_tokens": 0}, finish="stop")
    done = _completion({"content": "final"}, {"prompt_tokens": 10, "completion_tokens": 1}, finish="stop")
    with ReplayServer([empty, empty, done]) as server:
        agent = openai_agent("gpt-4o", base_url=server.url + "/v1", policy=policy)
        assert asyncio.run(agent(TRIGGER, tools)) == {"markdown": "final"}
    nudges = [m["content"] for m in server.bodies()[2]["messages"] if m["role"] == "user"][1:]
    assert nudges == [NUDGE, NUDGE]
    with ReplayServer([empty] * 3) as server:
        agent = openai_agent("gpt-4o", base_url=server.url + "/v1", policy=policy)
        with pytest.raises(
            LLMError, match="openai:gpt-4o: the model gave 3 empty answers in a row and no report"
        ):
            asyncio.run(agent(TRIGGER, tools))


def test_turn_limit(tools, policy, clean_llm_env):
    call = _completion(
        {
            "content": "",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "list_indices", "arguments": "{}"}}
            ],
        }
    )
    with ReplayServer([call] * 3) as server:
        agent = openai_agent("gpt-4o", base_url=server.url + "/v1", policy=policy, max_turns=3)
        with pytest.raises(LLMError, match="openai:gpt-4o: no report after 3 model turns"):
            asyncio.run(agent(TRIGGER, tools))
    # The turn before the last one tells the model to report now.
    assert server.bodies()[2]["messages"][-1] == {"role": "user", "content": LAST_TURN}
    assert agent.turns == 3 and len(tools.calls) == 3


def test_non_tool_errors_end_the_run(policy, clean_llm_env):
    class Budgeted(FakeTools):
        def call(self, name, /, **args):
            raise RuntimeError("tool-call budget of 0 exhausted")

    call = _completion(
        {
            "content": "",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "list_indices", "arguments": "{}"}}
            ],
        }
    )
    with ReplayServer([call]) as server:
        agent = openai_agent("gpt-4o", base_url=server.url + "/v1", policy=policy)
        with pytest.raises(RuntimeError, match="budget"):
            asyncio.run(agent(TRIGGER, Budgeted()))
    assert agent.usage.calls == 1


def test_settings_are_published(clean_llm_env):
    agent = openai_agent("gpt-4o-mini", api_key="k", system_prompt="Custom prompt.")
    settings = agent.settings()
    assert settings["model"] == "gpt-4o-mini" and settings["temperature"] == 0 and settings["seed"] == 0
    assert (
        settings["prompt_version"] == "soclab-agent-prompt/1+custom" and len(settings["prompt_sha256"]) == 16
    )
    assert settings["price_per_mtok"] == {"input": 0.15, "output": 0.60}
    assert openai_agent("gpt-4o-mini", api_key="k").settings()["prompt_version"] == "soclab-agent-prompt/1"
