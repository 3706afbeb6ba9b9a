"""Anthropic Messages API with tool use.

The Messages API of the pinned SDK has no sampling parameters (no temperature,
no seed): runs are as repeatable as the API makes them, which the published
settings say. Consecutive user-role messages (tool results, then a nudge) are
merged, and an assistant turn's content blocks go back verbatim (thinking
blocks must).
"""

from __future__ import annotations

import asyncio
import importlib
import os
from typing import Any

from pytest_soclab.llm.base import (
    AssistantMessage,
    ChatModel,
    ChatTurn,
    Message,
    ToolCallRequest,
    ToolResultsMessage,
    UserMessage,
)
from pytest_soclab.llm.errors import LLMError, MissingExtraError
from pytest_soclab.llm.retry import RetryPolicy, acall_with_retries, call_with_retries, sdk_failure_classifier
from pytest_soclab.llm.serialize import compact_json
from pytest_soclab.llm.usage import Price

NO_KEY = "soclab-no-key"
DEFAULT_MAX_TOKENS = 4096


def _sdk() -> Any:
    try:
        return importlib.import_module("anthropic")
    except ModuleNotFoundError as exc:
        if exc.name == "anthropic":
            raise MissingExtraError("anthropic", "anthropic") from None
        raise


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


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


class AnthropicChatModel(ChatModel):
    provider = "anthropic"

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
        self._sdk = _sdk()
        self.model = model
        self.base_url = base_url or os.environ.get("ANTHROPIC_BASE_URL") or None
        key = api_key or os.environ.get("ANTHROPIC_API_KEY")
        self._auth_token = None if key else os.environ.get("ANTHROPIC_AUTH_TOKEN")
        if not key and not self._auth_token:
            if not self.base_url:
                raise LLMError(f"anthropic:{model} needs an API key: set ANTHROPIC_API_KEY")
            key = NO_KEY
        self._api_key = key
        self.timeout = timeout
        self.policy = policy or RetryPolicy()
        self.max_tokens = max_tokens or DEFAULT_MAX_TOKENS
        self.extra_body = dict(extra_body or {})
        self.price = price
        self._classify = sdk_failure_classifier(self._sdk)
        self._client: Any = None
        self._aclient: Any = None
        self._aclient_loop: asyncio.AbstractEventLoop | None = None

    def settings(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "model": self.model,
            "base_url": self.base_url,
            "temperature": None,  # not offered by the Messages API of the pinned SDK
            "seed": None,
            "max_tokens": self.max_tokens,
            "tool_choice": "auto",
            "timeout_s": self.timeout,
            "max_retries": self.policy.max_retries,
            "price_per_mtok": self.price.model_dump() if self.price else None,
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

    def _sync_client(self) -> Any:
        if self._client is None:
            self._client = self._sdk.Anthropic(**self._client_kwargs())
        return self._client

    def _async_client(self) -> Any:
        loop = asyncio.get_running_loop()
        if self._aclient is None or self._aclient_loop is not loop:
            self._aclient = self._sdk.AsyncAnthropic(**self._client_kwargs())
            self._aclient_loop = loop
        return self._aclient

    async def aclose(self) -> None:
        client, loop = self._aclient, self._aclient_loop
        self._aclient = self._aclient_loop = None
        if client is not None and loop is asyncio.get_running_loop():
            await client.close()

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

    def chat(self, system: str, messages: list[Message], tools: list[dict[str, Any]]) -> ChatTurn:
        req = self.request(system, messages, tools)
        client = self._sync_client()
        resp, retries = call_with_retries(
            self.spec, lambda: client.messages.create(**req), self._classify, self.policy
        )
        return self.parse(resp, retries)

    async def achat(self, system: str, messages: list[Message], tools: list[dict[str, Any]]) -> ChatTurn:
        req = self.request(system, messages, tools)
        client = self._async_client()
        resp, retries = await acall_with_retries(
            self.spec, lambda: client.messages.create(**req), self._classify, self.policy
        )
        return self.parse(resp, retries)
