"""`openai:MODEL`: a tool-calling agent on chat completions (OpenAI, or any compatible server)."""

from __future__ import annotations

from typing import Any

from pytest_soclab.agents.llm_agent import LLMAgent, llm_agent


def openai_agent(model: str, **options: Any) -> LLMAgent:
    """The agent for `--soclab-agent=openai:MODEL`.

    options: the agent's system_prompt, max_turns, max_result_chars (see llm_agent), and make_chat_model's
    base_url, api_key (default OPENAI_BASE_URL, OPENAI_API_KEY), timeout, max_retries, seed, prices,
    temperature, max_tokens, tool_choice, tool_result_role, extra_body.
    """
    return llm_agent(f"openai:{model}", **options)
