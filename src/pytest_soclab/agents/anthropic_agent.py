"""`anthropic:MODEL`: a tool-calling agent on Anthropic's Messages API."""

from __future__ import annotations

from typing import Any

from pytest_soclab.agents.llm_agent import LLMAgent, llm_agent


def anthropic_agent(model: str, **options: Any) -> LLMAgent:
    """The agent for `--soclab-agent=anthropic:MODEL`.

    options: the agent's system_prompt, max_turns, max_result_chars (see llm_agent), and make_chat_model's
    base_url, api_key (default ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY), timeout, max_retries, prices,
    max_tokens, extra_body.
    """
    return llm_agent(f"anthropic:{model}", **options)
