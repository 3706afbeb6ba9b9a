"""Provider-neutral chat types and the ChatModel interface.

A conversation is a list of neutral messages (user text, an assistant turn, a
batch of tool results); each provider converts it to its wire format. A turn
keeps the provider's own form of the assistant message (`raw`) where the
provider needs it back verbatim (Anthropic thinking blocks).
"""

from __future__ import annotations

import html
import json
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from pytest_soclab.llm.retry import RetryPolicy
from pytest_soclab.llm.usage import Price, Usage


@dataclass(frozen=True)
class ToolCallRequest:
    """One tool call asked for by the model. `arguments` is None when they are unusable (see `error`)."""

    id: str
    name: str
    arguments: dict[str, Any] | None
    raw_arguments: str
    error: str | None = None


@dataclass
class ChatTurn:
    """One assistant turn: text, tool calls, and what the call cost."""

    text: str
    tool_calls: list[ToolCallRequest]
    stop_reason: str
    input_tokens: int = 0
    output_tokens: int = 0
    retries: int = 0
    raw: Any = field(default=None, repr=False)


@dataclass(frozen=True)
class UserMessage:
    text: str


@dataclass(frozen=True)
class AssistantMessage:
    turn: ChatTurn


@dataclass(frozen=True)
class ToolResult:
    call_id: str
    name: str
    content: str
    is_error: bool = False


@dataclass(frozen=True)
class ToolResultsMessage:
    results: tuple[ToolResult, ...]


Message = UserMessage | AssistantMessage | ToolResultsMessage


def parse_tool_arguments(raw: Any) -> tuple[dict[str, Any] | None, str | None]:
    """A model's tool-call arguments as a dict, or (None, why not).

    Lenient where servers are known to bend JSON (llama.cpp: raw control characters in
    strings, HTML-escaped quotes), strict about the result being a JSON object.
    """
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}, None
    if isinstance(raw, dict):
        return raw, None
    if not isinstance(raw, str):
        return None, f"the arguments must be a JSON object, got {type(raw).__name__}"
    try:
        value = json.loads(raw, strict=False)
    except json.JSONDecodeError as exc:
        unescaped = html.unescape(raw)
        if unescaped == raw:
            return None, f"the arguments are not valid JSON ({exc.msg} at character {exc.pos})"
        try:
            value = json.loads(unescaped, strict=False)
        except json.JSONDecodeError:
            return None, f"the arguments are not valid JSON ({exc.msg} at character {exc.pos})"
    if not isinstance(value, dict):
        return None, f"the arguments must be a JSON object, got a JSON {type(value).__name__}"
    return value, None


class ChatModel(ABC):
    """A chat model with tool calling (for agents) and plain text completion (for the LLM judge).

    Every call runs at temperature 0 (where the API takes one) with a fixed seed
    (where the API has one), retries rate limits and transient failures, and
    reports its token usage.
    """

    provider: str
    model: str
    policy: RetryPolicy
    price: Price | None

    @property
    def spec(self) -> str:
        return f"{self.provider}:{self.model}"

    def new_usage(self) -> Usage:
        return Usage(provider=self.provider, model=self.model, price=self.price)

    @abstractmethod
    def settings(self) -> dict[str, Any]:
        """The published settings of this model (no secrets): provider, model, sampling, limits, price."""

    @abstractmethod
    def chat(self, system: str, messages: list[Message], tools: list[dict[str, Any]]) -> ChatTurn:
        """One assistant turn. tools: soclab function specs ({name, description, parameters})."""

    @abstractmethod
    async def achat(self, system: str, messages: list[Message], tools: list[dict[str, Any]]) -> ChatTurn:
        """The async twin of chat."""

    @abstractmethod
    async def aclose(self) -> None:
        """Release the async HTTP client bound to the running event loop (if any)."""

    def complete_text(self, system: str, user: str) -> tuple[str, dict[str, Any]]:
        """A plain completion without tools: (text, usage dict of this one call)."""
        return self._text_result(self.chat(system, [UserMessage(user)], []))

    async def acomplete_text(self, system: str, user: str) -> tuple[str, dict[str, Any]]:
        return self._text_result(await self.achat(system, [UserMessage(user)], []))

    def _text_result(self, turn: ChatTurn) -> tuple[str, dict[str, Any]]:
        usage = self.new_usage()
        usage.add(turn.input_tokens, turn.output_tokens, turn.retries)
        return turn.text, {"provider": self.provider, "model": self.model, **usage.to_dict()}
