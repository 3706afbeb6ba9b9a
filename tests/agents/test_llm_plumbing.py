from __future__ import annotations

import asyncio
import html
import json
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_soclab.llm import base
from pytest_soclab.llm import LLMError, MissingExtraError, make_chat_model, parse_spec, parse_tool_arguments
from pytest_soclab.llm.retry import Failure, RetryPolicy, call_with_retries, retry_after_seconds
from pytest_soclab.llm.serialize import NOTE_KEY, bounded_json, compact_json
from pytest_soclab.llm.usage import Price, Usage, lookup_price, price_table

from .replay import ReplayServer

# -- specs and construction ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("openai:gpt-4o-mini", ("openai", "gpt-4o-mini")),
        ("openai:llama3.1:8b", ("openai", "llama3.1:8b")),
        ("Anthropic: claude-haiku-4-5 ", ("anthropic", "claude-haiku-4-5")),
    ],
)
def test_parse_spec(spec, expected):
    assert parse_spec(spec) == expected


@pytest.mark.parametrize("spec", ["gpt-4o", "openai:", "mistral:large", ":x"])
def test_parse_spec_rejects(spec):
    with pytest.raises(LLMError, match=r"bad model spec .*expected one of 'openai:MODEL', 'anthropic:MODEL'"):
        parse_spec(spec)


def test_missing_key_is_a_clear_error(clean_llm_env):
    with pytest.raises(LLMError, match="openai:gpt-4o needs an API key: set OPENAI_API_KEY"):
        make_chat_model("openai:gpt-4o")
    with pytest.raises(LLMError, match="anthropic:claude-haiku-4-5 needs an API key: set ANTHROPIC_API_KEY"):
        make_chat_model("anthropic:claude-haiku-4-5")


def test_environment_supplies_url_and_key(clean_llm_env):
    clean_llm_env("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1")
    model = make_chat_model("openai:qwen2.5-7b-instruct", seed=7)
    settings_ = model.settings()
    assert settings_["base_url"] == "http://127.0.0.1:8080/v1" and settings_["seed"] == 7
    assert settings_["temperature"] == 0 and settings_["price_per_mtok"] is None
    assert "key" not in json.dumps(settings_).lower()


def test_unknown_option_names_the_accepted_ones(clean_llm_env):
    with pytest.raises(
        LLMError, match=r"unknown option\(s\) \['tool_result_role'\] for anthropic; accepted: "
    ):
        make_chat_model("anthropic:claude-haiku-4-5", api_key="k", tool_result_role="user")
    with pytest.raises(LLMError, match="tool_result_role must be 'tool' or 'user'"):
        make_chat_model("openai:gpt-4o", api_key="k", tool_result_role="system")


@pytest.mark.parametrize(("provider", "extra"), [("openai", "openai"), ("anthropic", "anthropic")])
def test_missing_sdk_names_the_extra(monkeypatch, provider, extra):
    monkeypatch.setitem(sys.modules, provider, None)
    with pytest.raises(MissingExtraError, match=rf"pip install 'pytest-soclab\[{extra}\]'"):
        make_chat_model(f"{provider}:some-model", api_key="k")


# -- retries ------------------------------------------------------------------------------------


def test_retry_after_forms():
    assert retry_after_seconds({"Retry-After": "3"}) == 3.0
    assert retry_after_seconds({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:10 GMT"}, now=1445412480.0) == 10.0
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({}) is None


def test_backoff_is_exponential_and_capped():
    policy = RetryPolicy(base_delay=1.0, max_delay=10.0)
    transient = Failure(True, "HTTP error 503")
    assert [policy.delay(i, transient) for i in range(5)] == [1.0, 2.0, 4.0, 8.0, 10.0]
    assert policy.delay(0, Failure(True, "rate limited", retry_after=3600)) == 10.0


def test_call_with_retries_gives_up_on_permanent_errors():
    waits: list[float] = []
    policy = RetryPolicy(max_retries=3, sleep=waits.append)
    attempts = iter([ValueError("503"), ValueError("400")])

    def fn() -> str:
        raise next(attempts)

    def classify(exc: BaseException) -> Failure:
        return Failure(str(exc) == "503", f"HTTP error {exc}")

    with pytest.raises(LLMError, match=r"^m: HTTP error 400 after 2 attempts$"):
        call_with_retries("m", fn, classify, policy)
    assert waits == [1.0]


def test_sync_text_completion_for_the_judge(policy, clean_llm_env):
    steps = [
        {"status": 500, "body": {"error": {"message": "upstream failure", "type": "server_error"}}},
        {
            "status": 200,
            "body": {
                "id": "c1",
                "object": "chat.completion",
                "created": 1,
                "model": "gpt-4.1-mini",
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": '{"verdict": "hit"}'},
                    }
                ],
                "usage": {"prompt_tokens": 1000, "completion_tokens": 10, "total_tokens": 1010},
            },
        },
    ]
    with ReplayServer(steps) as server:
        model = make_chat_model("openai:gpt-4.1-mini", base_url=server.url + "/v1", policy=policy)
        text, usage = model.complete_text("You grade checkpoints.", "Checkpoint: ...")
    assert text == '{"verdict": "hit"}'
    assert usage == {
        "provider": "openai",
        "model": "gpt-4.1-mini",
        "llm_calls": 1,
        "llm_retries": 1,
        "input_tokens": 1000,
        "output_tokens": 10,
        "total_tokens": 1010,
        "cost_usd": round((1000 * 0.40 + 10 * 1.60) / 1e6, 6),
    }
    body = server.bodies()[1]
    assert "tools" not in body and "tool_choice" not in body
    assert body["messages"] == [
        {"role": "system", "content": "You grade checkpoints."},
        {"role": "user", "content": "Checkpoint: ..."},
    ]
    assert policy.waits == [1.0]


def test_anthropic_text_completion(policy, clean_llm_env):
    step = {
        "status": 200,
        "body": {
            "id": "m1",
            "type": "message",
            "role": "assistant",
            "model": "claude-haiku-4-5",
            "content": [{"type": "text", "text": "partial"}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 50, "output_tokens": 2},
        },
    }
    with ReplayServer([step]) as server:
        model = make_chat_model("anthropic:claude-haiku-4-5", base_url=server.url, policy=policy)
        text, usage = model.complete_text("sys", "user")
    assert (text, usage["input_tokens"], usage["output_tokens"]) == ("partial", 50, 2)
    assert server.bodies()[0]["system"] == "sys" and "tools" not in server.bodies()[0]


def test_permanent_http_error_is_not_retried(policy, clean_llm_env):
    step = {
        "status": 400,
        "body": {
            "error": {"message": "Unsupported parameter: 'temperature'", "type": "invalid_request_error"}
        },
    }
    with ReplayServer([step]) as server:
        model = make_chat_model("openai:o3", base_url=server.url + "/v1", policy=policy)
        with pytest.raises(
            LLMError, match=r"^openai:o3: HTTP error 400: Unsupported parameter: 'temperature'$"
        ):
            model.complete_text("s", "u")
    assert policy.waits == [] and len(server.requests) == 1


def test_connection_errors_are_retried_then_reported(policy, clean_llm_env):
    # A port nobody listens on: every attempt is refused.
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    model = make_chat_model("openai:gpt-4o", base_url=f"http://127.0.0.1:{port}/v1", policy=policy)
    with pytest.raises(LLMError, match=r"^openai:gpt-4o: connection error.* after 5 attempts$"):
        model.complete_text("s", "u")
    assert policy.waits == [1.0, 2.0, 4.0, 8.0]


# -- prices -------------------------------------------------------------------------------------


def test_price_lookup():
    table = price_table()
    assert lookup_price("gpt-4o-mini", table) == Price(input=0.15, output=0.60)
    assert lookup_price("gpt-4o-mini-2024-07-18", table) == Price(input=0.15, output=0.60)
    assert lookup_price("gpt-4o-2024-08-06", table) == Price(input=2.50, output=10.00)
    assert lookup_price("claude-sonnet-4-20250514", table) == Price(input=3.0, output=15.0)
    assert lookup_price("claude-opus-4-5-20251101", table) == Price(input=5.0, output=25.0)
    # A different model sharing a prefix is not priced by its neighbour.
    assert lookup_price("claude-opus-4-7", table) is None
    assert lookup_price("gpt-4o-mini-audio-preview", table) is None
    assert lookup_price("llama3.1:8b", table) is None


def test_price_overrides(tmp_path, clean_llm_env):
    clean_llm_env("SOCLAB_LLM_PRICES", '{"llama3.1:8b": {"input": 0, "output": 0}}')
    assert lookup_price("llama3.1:8b", price_table()) == Price(input=0, output=0)
    path = tmp_path / "prices.json"
    path.write_text(json.dumps({"models": {"gpt-4o": {"input": 1, "output": 2}}}))
    clean_llm_env("SOCLAB_LLM_PRICES", str(path))
    assert lookup_price("gpt-4o", price_table({"gpt-4o-mini": {"input": 9, "output": 9}})) == Price(
        input=1, output=2
    )
    assert lookup_price("gpt-4o-mini", price_table({"gpt-4o-mini": {"input": 9, "output": 9}})).input == 9
    path.write_text('{"gpt-4o": {"input": "cheap"}}')
    with pytest.raises(LLMError, match=r"SOCLAB_LLM_PRICES=.*prices.json: model 'gpt-4o': input: "):
        price_table()
    clean_llm_env("SOCLAB_LLM_PRICES", str(tmp_path / "missing.json"))
    with pytest.raises(LLMError, match="cannot read the price file"):
        price_table()


def test_usage_cost():
    usage = Usage(provider="openai", model="m", price=Price(input=2.0, output=8.0))
    usage.add(1_000_000, 500_000, retries=1)
    usage.add(10, 0)
    assert usage.to_dict() == {
        "llm_calls": 2,
        "llm_retries": 1,
        "input_tokens": 1_000_010,
        "output_tokens": 500_000,
        "total_tokens": 1_500_010,
        "cost_usd": 6.00002,
    }
    assert Usage().to_dict()["cost_usd"] is None


# -- tool-call arguments ------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=10,
)
json_objects = st.dictionaries(st.text(max_size=10), json_values, max_size=4)


@given(json_objects)
def test_arguments_round_trip(args):
    assert parse_tool_arguments(json.dumps(args)) == (args, None)
    assert parse_tool_arguments(args) == (args, None)


@given(json_objects)
def test_html_escaped_arguments_parse_when_plain_json_does_not(args):
    raw = json.dumps(args)
    escaped = html.escape(raw)
    parsed, error = parse_tool_arguments(escaped)
    if escaped == raw:
        assert parsed == args
    elif error is None:
        # Unescaping recovers the object whenever the escaped form is not itself valid JSON.
        assert parsed == args or json.loads(escaped) == parsed


def test_argument_errors():
    assert parse_tool_arguments("") == ({}, None)
    assert parse_tool_arguments(None) == ({}, None)
    assert parse_tool_arguments('{"query": "FROM a\n| LIMIT 1"}') == ({"query": "FROM a\n| LIMIT 1"}, None)
    assert parse_tool_arguments("[1, 2]") == (None, "the arguments must be a JSON object, got a JSON list")
    parsed, error = parse_tool_arguments('{"query": "FROM a"')
    assert parsed is None and error.startswith("the arguments are not valid JSON (Expecting ',' delimiter")


# -- bounded results ----------------------------------------------------------------------------


def _search(n: int, width: int) -> dict:
    hits = [
        {"_index": "logs-x", "_id": str(i), "_source": {"message": "x" * width, "n": i}} for i in range(n)
    ]
    return {"took": 1, "timed_out": False, "hits": {"total": {"value": n, "relation": "eq"}, "hits": hits}}


@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, 60), width=st.integers(0, 400), limit=st.integers(500, 6000))
def test_bounded_search_results(n, width, limit):
    value = _search(n, width)
    text = bounded_json(value, limit)
    assert len(text) <= limit
    if len(compact_json(value)) <= limit:
        assert json.loads(text) == value
    elif f"... [{NOTE_KEY}:" not in text:
        shown = json.loads(text)
        kept = shown["hits"]["hits"]
        assert 1 <= len(kept) < n and kept == value["hits"]["hits"][: len(kept)]
        assert shown[NOTE_KEY].startswith(f"showing {len(kept)} of {n} hits: narrow the query")
    else:  # not even one hit fits: cut as text
        assert "narrow the query" in text and len(compact_json(_search(1, width))) > limit - 150


def test_bounded_esql_and_opaque_results():
    esql = {"columns": [{"name": "a", "type": "keyword"}], "values": [["v" * 50] for _ in range(500)]}
    shown = json.loads(bounded_json(esql, 2000))
    assert shown["columns"] == esql["columns"] and 1 < len(shown["values"]) < 500
    assert shown[NOTE_KEY].startswith(f"showing {len(shown['values'])} of 500 rows")
    opaque = {"blob": "z" * 5000}
    text = bounded_json(opaque, 1000)
    assert len(text) <= 1000 and text.startswith('{"blob":"zzz') and "the result has 5011 characters" in text


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_async_clients_of_every_loop_share_one_tls_context(provider, clean_llm_env, monkeypatch):
    """Each item runs its agent on a loop of its own, so each gets a new async client; the TLS
    context (the CA bundle read, tens of ms of CPU under the GIL) is built once per process."""
    clean_llm_env(f"{provider.upper()}_API_KEY", "k")
    model = make_chat_model(f"{provider}:m", base_url="http://127.0.0.1:9/v1")
    factory = model._sdk.DefaultAsyncHttpxClient
    httpx = sys.modules[str(base.httpx_module_of(factory))]
    made = []
    real = httpx.create_ssl_context
    monkeypatch.setattr(httpx, "create_ssl_context", lambda *a, **k: made.append(1) or real(*a, **k))
    base._ssl_context.cache_clear()
    try:
        async def client():
            return model._async_client()

        first, second = asyncio.run(client()), asyncio.run(client())
    finally:
        base._ssl_context.cache_clear()
    assert first is not second and made == [1]
    assert isinstance(first._client, factory) and isinstance(second._client, factory)


def test_an_sdk_without_a_default_client_keeps_its_own():
    assert base.shared_http_client(object()) is None
