"""LLM plumbing shared by the LLM agents and the LLM judge.

    model = make_chat_model("openai:gpt-4o-mini")          # or "anthropic:claude-sonnet-4-5"
    text, usage = model.complete_text(system, user)         # the judge
    turn = await model.achat(system, messages, tool_specs)  # the agents' tool-calling turn

The provider SDKs are optional extras, imported only when a model is made.
"""

from pytest_soclab.llm.base import (
    AssistantMessage,
    ChatModel,
    ChatTurn,
    Message,
    ToolCallRequest,
    ToolResult,
    ToolResultsMessage,
    UserMessage,
    parse_tool_arguments,
)
from pytest_soclab.llm.errors import LLMError, MissingExtraError
from pytest_soclab.llm.factory import make_chat_model, parse_spec
from pytest_soclab.llm.limits import ProviderLimit, configure_limits
from pytest_soclab.llm.retry import RetryPolicy
from pytest_soclab.llm.usage import Price, Usage, lookup_price, price_table

from pytest_soclab.llm.serialize import DEFAULT_MAX_CHARS, bounded_json, compact_json

__all__ = [
    "AssistantMessage",
    "ChatModel",
    "ChatTurn",
    "DEFAULT_MAX_CHARS",
    "LLMError",
    "Message",
    "MissingExtraError",
    "Price",
    "ProviderLimit",
    "RetryPolicy",
    "ToolCallRequest",
    "ToolResult",
    "ToolResultsMessage",
    "Usage",
    "UserMessage",
    "bounded_json",
    "compact_json",
    "configure_limits",
    "lookup_price",
    "make_chat_model",
    "parse_spec",
    "parse_tool_arguments",
    "price_table",
]
