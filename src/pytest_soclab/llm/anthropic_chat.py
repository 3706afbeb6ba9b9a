"""Anthropic Messages API with tool use.

The Messages API of the pinned SDK has no sampling parameters (no temperature,
no seed): runs are as repeatable as the API makes them, which the published
settings say. Consecutive user-role messages (tool results, then a nudge) are
merged, and an assistant turn's content blocks go back verbatim (thinking
blocks must).
"""

from __future__ import annotations

import os
from typing import Any

from pytest_soclab.llm.base import (
    AssistantMessage,
    ChatTurn,
    Message,
    SDKChatModel,
    ToolCallRequest,
    ToolResultsMessage,
    UserMessage,
)
from pytest_soclab.llm.base import attr_or_key as _get
from pytest_soclab.llm.errors import LLMError
from pytest_soclab.llm.retry import RetryPolicy
from pytest_soclab.llm.serialize import compact_json
from pytest_soclab.llm.usage import Price

NO_KEY = "soclab-no-key"
DEFAULT_MAX_TOKENS = 4096


def _block_param(block: Any) -> dict[str, Any]:
    """A response content block as a request content block."""
    kind = _get(block, "type")
    if kind == "text":
        return {"type": "text", "text": _get(block, "text") or ""}
    if kind == "tool_use":
        return {
            "type": "tool_use",
            "id": _get(block, "id"),
            "name": _get(block, "name"),
            "input": _get(block, "input"),
        }
    if kind == "thinking":
        return {
            "type": "thinking",
            "thinking": _get(block, "thinking"),
            "signature": _get(block, "signature"),
        }
    if kind == "redacted_thinking":
        return {"type": "redacted_thinking", "data": _get(block, "data")}
    if isinstance(block, dict):
        return block
    return block.model_dump(exclude_none=True)


class AnthropicChatModel(SDKChatModel):
    provider = "anthropic"
    sdk_module = "anthropic"
    sync_client_class = "Anthropic"
    async_client_class = "AsyncAnthropic"
    base_url_env = "ANTHROPIC_BASE_URL"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 60,
        policy: RetryPolicy | None = None,
        max_tokens: int | None = None,
        extra_body: dict[str, Any] | None = None,
        price: Price | None = None,
    ):
        super().__init__(
            model, base_url=base_url, timeout=timeout, policy=policy, extra_body=extra_body, price=price
        )
        key = api_key or os.environ.get("ANTHROPIC_API_KEY")
        self._auth_token = None if key else os.environ.get("ANTHROPIC_AUTH_TOKEN")
        if not key and not self._auth_token:
            if not self.base_url:
                raise LLMError(f"anthropic:{model} needs an API key: set ANTHROPIC_API_KEY")
            key = NO_KEY
        self._api_key = key
        self.max_tokens = max_tokens or DEFAULT_MAX_TOKENS

    def sampling_settings(self) -> dict[str, Any]:
        return {
            "temperature": None,  # not offered by the Messages API of the pinned SDK
            "seed": None,
            "max_tokens": self.max_tokens,
            "tool_choice": "auto",
        }

    def _client_kwargs(self) -> dict[str, Any]:
        kw: dict[str, Any] = {"timeout": self.timeout, "max_retries": 0}
        if self._api_key:
            kw["api_key"] = self._api_key
        else:
            kw["auth_token"] = self._auth_token
        if self.base_url:
            kw["base_url"] = self.base_url
        return kw

    def _send(self, client: Any, req: dict[str, Any]) -> Any:
        return client.messages.create(**req)

    def request(self, system: str, messages: list[Message], tools: list[dict[str, Any]]) -> dict[str, Any]:
        wire: list[dict[str, Any]] = []
        for msg in messages:
            role, content = self._to_wire(msg)
            if not content:
                continue  # the API refuses empty messages
            if wire and wire[-1]["role"] == role:
                wire[-1]["content"] = wire[-1]["content"] + content
            else:
                wire.append({"role": role, "content": content})
        req: dict[str, Any] = {"model": self.model, "max_tokens": self.max_tokens, "messages": wire}
        if system:
            req["system"] = system
        if tools:
            req["tools"] = [
                {"name": s["name"], "description": s.get("description", ""), "input_schema": s["parameters"]}
                for s in tools
            ]
            req["tool_choice"] = {"type": "auto"}
        if self.extra_body:
            req["extra_body"] = self.extra_body
        return req

    def _to_wire(self, msg: Message) -> tuple[str, list[dict[str, Any]]]:
        if isinstance(msg, UserMessage):
            return "user", ([{"type": "text", "text": msg.text}] if msg.text else [])
        if isinstance(msg, AssistantMessage):
            blocks = msg.turn.raw
            if blocks is None:  # a turn built by hand: rebuild from the neutral fields
                blocks = ([{"type": "text", "text": msg.turn.text}] if msg.turn.text else []) + [
                    {"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments or {}}
                    for c in msg.turn.tool_calls
                ]
            return "assistant", [_block_param(b) for b in blocks]
        if isinstance(msg, ToolResultsMessage):
            return "user", [
                {
                    "type": "tool_result",
                    "tool_use_id": r.call_id,
                    "content": r.content,
                    "is_error": r.is_error,
                }
                for r in msg.results
            ]
        raise TypeError(f"not a chat message: {msg!r}")

    def parse(self, resp: Any, retries: int) -> ChatTurn:
        blocks = _get(resp, "content")
        if blocks is None:
            raise LLMError(f"{self.spec}: the API answered without content: {str(resp)[:300]}")
        texts: list[str] = []
        calls: list[ToolCallRequest] = []
        for block in blocks:
            kind = _get(block, "type")
            if kind == "text":
                texts.append(_get(block, "text") or "")
            elif kind == "tool_use":
                args = _get(block, "input")
                ok = isinstance(args, dict)
                calls.append(
                    ToolCallRequest(
                        id=str(_get(block, "id") or f"toolu_{len(calls)}"),
                        name=str(_get(block, "name") or "").strip(),
                        arguments=args if ok else None,
                        raw_arguments=compact_json(args),
                        error=None if ok else f"the input must be a JSON object, got {type(args).__name__}",
                    )
                )
        usage = _get(resp, "usage")
        input_tokens = sum(
            int(_get(usage, k, 0) or 0)
            for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        )
        return ChatTurn(
            text="".join(texts),
            tool_calls=calls,
            stop_reason=str(_get(resp, "stop_reason") or ""),
            input_tokens=input_tokens,
            output_tokens=int(_get(usage, "output_tokens", 0) or 0),
            retries=retries,
            raw=list(blocks),
        )
