"""`anthropic:MODEL`: a tool-calling agent on Anthropic's Messages API."""

from __future__ import annotations

from typing import Any

from pytest_soclab.agents.llm_agent import DEFAULT_MAX_TURNS, LLMAgent
from pytest_soclab.llm.factory import make_chat_model
from pytest_soclab.llm.serialize import DEFAULT_MAX_CHARS


def anthropic_agent(
    model: str,
    *,
    system_prompt: str | None = None,
    max_turns: int = DEFAULT_MAX_TURNS,
    max_result_chars: int = DEFAULT_MAX_CHARS,
    **model_options: Any,
) -> LLMAgent:
    """The agent for `--soclab-agent=anthropic:MODEL`.

    model_options go to make_chat_model: base_url, api_key (default ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY),
    timeout, max_retries, prices, max_tokens, extra_body.
    """
    chat = make_chat_model(f"anthropic:{model}", **model_options)
    return LLMAgent(chat, system_prompt=system_prompt, max_turns=max_turns, max_result_chars=max_result_chars)
