"""Chat completions with tool calling: OpenAI, or any OpenAI-compatible server (vLLM, Ollama, llama.cpp).

Compatibility choices, each for a server seen to need it:
- `tool_choice` is always sent with tools (llama.cpp servers ignore the tools without it);
- an assistant message with tool calls carries `content: ""`, never null (llama.cpp answers null with a 500);
- tool-call arguments are parsed leniently (raw newlines, HTML-escaped quotes) and sent back re-serialized;
- `tool_result_role="user"` sends tool results as a user message, for chat formats that drop `role: tool`
  messages (llama-cpp-python's `chatml-function-calling`);
- usage may be missing (counted as 0 tokens); a missing tool-call id gets a deterministic one.
"""

from __future__ import annotations

import os
from typing import Any, Literal

from pytest_soclab.llm.base import (
    AssistantMessage,
    ChatTurn,
    Message,
    SDKChatModel,
    ToolCallRequest,
    ToolResultsMessage,
    UserMessage,
    parse_tool_arguments,
)
from pytest_soclab.llm.base import attr_or_key as _get
from pytest_soclab.llm.errors import LLMError
from pytest_soclab.llm.retry import RetryPolicy
from pytest_soclab.llm.serialize import compact_json
from pytest_soclab.llm.usage import Price

# Sent as the key to local servers that need none: the SDK refuses to build a client without one.
NO_KEY = "soclab-no-key"


class OpenAIChatModel(SDKChatModel):
    provider = "openai"
    sdk_module = "openai"
    sync_client_class = "OpenAI"
    async_client_class = "AsyncOpenAI"
    base_url_env = "OPENAI_BASE_URL"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 60,
        policy: RetryPolicy | None = None,
        seed: int | None = 0,
        temperature: float | None = 0,
        max_tokens: int | None = None,
        tool_choice: Literal["auto", "required"] = "auto",
        tool_result_role: Literal["tool", "user"] = "tool",
        extra_body: dict[str, Any] | None = None,
        price: Price | None = None,
    ):
        super().__init__(
            model, base_url=base_url, timeout=timeout, policy=policy, extra_body=extra_body, price=price
        )
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key:
            if not self.base_url:
                raise LLMError(
                    f"openai:{model} needs an API key: set OPENAI_API_KEY (or, for a local OpenAI-compatible"
                    " server, set OPENAI_BASE_URL)"
                )
            key = NO_KEY
        self._api_key = key
        self.seed = seed
        self.temperature = temperature
        self.max_tokens = max_tokens
        if tool_choice not in ("auto", "required"):
            raise LLMError(f"openai:{model}: tool_choice must be 'auto' or 'required', got {tool_choice!r}")
        if tool_result_role not in ("tool", "user"):
            raise LLMError(
                f"openai:{model}: tool_result_role must be 'tool' or 'user', got {tool_result_role!r}"
            )
        self.tool_choice = tool_choice
        self.tool_result_role = tool_result_role

    def sampling_settings(self) -> dict[str, Any]:
        return {
            "temperature": self.temperature,
            "seed": self.seed,
            "max_tokens": self.max_tokens,
            "tool_choice": self.tool_choice,
            "tool_result_role": self.tool_result_role,
        }

    # -- clients --------------------------------------------------------------------------------
    def _client_kwargs(self) -> dict[str, Any]:
        kw: dict[str, Any] = {"api_key": self._api_key, "timeout": self.timeout, "max_retries": 0}
        if self.base_url:
            kw["base_url"] = self.base_url
        return kw

    def _send(self, client: Any, req: dict[str, Any]) -> Any:
        return client.chat.completions.create(**req)

    # -- wire format ----------------------------------------------------------------------------
    def request(self, system: str, messages: list[Message], tools: list[dict[str, Any]]) -> dict[str, Any]:
        """The keyword arguments of chat.completions.create for this conversation."""
        wire: list[dict[str, Any]] = []
        if system:
            wire.append({"role": "system", "content": system})
        for msg in messages:
            wire.extend(self._to_wire(msg))
        req: dict[str, Any] = {"model": self.model, "messages": wire}
        if tools:
            req["tools"] = [{"type": "function", "function": spec} for spec in tools]
            req["tool_choice"] = self.tool_choice
        if self.temperature is not None:
            req["temperature"] = self.temperature
        if self.seed is not None:
            req["seed"] = self.seed
        if self.max_tokens is not None:
            req["max_tokens"] = self.max_tokens
        if self.extra_body:
            req["extra_body"] = self.extra_body
        return req

    def _to_wire(self, msg: Message) -> list[dict[str, Any]]:
        if isinstance(msg, UserMessage):
            return [{"role": "user", "content": msg.text}]
        if isinstance(msg, AssistantMessage):
            turn = msg.turn
            out: dict[str, Any] = {"role": "assistant", "content": turn.text or ""}
            if turn.tool_calls:
                out["tool_calls"] = [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {
                            "name": call.name,
                            # Always valid JSON: some servers re-parse the history's arguments.
                            "arguments": compact_json(
                                call.arguments
                                if call.arguments is not None
                                else {"_unparseable_arguments": call.raw_arguments}
                            ),
                        },
                    }
                    for call in turn.tool_calls
                ]
            return [out]
        if isinstance(msg, ToolResultsMessage):
            if self.tool_result_role == "tool":
                return [
                    {"role": "tool", "tool_call_id": r.call_id, "content": r.content} for r in msg.results
                ]
            parts = [f"Result of tool call {r.call_id} ({r.name}):\n{r.content}" for r in msg.results]
            return [{"role": "user", "content": "\n\n".join(parts)}]
        raise TypeError(f"not a chat message: {msg!r}")

    def parse(self, resp: Any, retries: int) -> ChatTurn:
        choices = _get(resp, "choices")
        if not choices:
            raise LLMError(f"{self.spec}: the server answered without any choice: {str(resp)[:300]}")
        choice = choices[0]
        message = _get(choice, "message") or {}
        calls: list[ToolCallRequest] = []
        for i, tc in enumerate(_get(message, "tool_calls") or []):
            fn = _get(tc, "function") or {}
            raw = _get(fn, "arguments")
            args, error = parse_tool_arguments(raw)
            name = str(_get(fn, "name") or "").strip()
            calls.append(
                ToolCallRequest(
                    id=str(_get(tc, "id") or f"call_{i}"),
                    name=name,
                    arguments=args,
                    raw_arguments=raw if isinstance(raw, str) else compact_json(raw),
                    error=error,
                )
            )
        usage = _get(resp, "usage")
        content = _get(message, "content") or ""
        if isinstance(content, list):  # content parts, as some servers answer
            content = "".join(str(_get(part, "text") or "") for part in content)
        return ChatTurn(
            text=str(content),
            tool_calls=calls,
            stop_reason=str(_get(choice, "finish_reason") or ""),
            input_tokens=int(_get(usage, "prompt_tokens", 0) or 0),
            output_tokens=int(_get(usage, "completion_tokens", 0) or 0),
            retries=retries,
            raw=message,
        )
