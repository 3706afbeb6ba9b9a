"""Provider-neutral chat types and the ChatModel interface.

A conversation is a list of neutral messages (user text, an assistant turn, a
batch of tool results); each provider converts it to its wire format. A turn
keeps the provider's own form of the assistant message (`raw`) where the
provider needs it back verbatim (Anthropic thinking blocks). SDKChatModel holds
what the two SDK-backed providers share: clients, retries, the call itself.
"""

from __future__ import annotations

import asyncio
import functools
import html
import importlib
import json
import os
import ssl
import sys
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from pytest_soclab.llm.errors import MissingExtraError
from pytest_soclab.llm.limits import arequest_slot, request_slot
from pytest_soclab.llm.retry import RetryPolicy, acall_with_retries, call_with_retries, sdk_failure_classifier
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


def import_sdk(module: str) -> Any:
    """The provider SDK, imported only when a model is made (the SDKs are optional extras named alike)."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name == module:
            raise MissingExtraError(module, module) from None
        raise


def shared_http_client(sdk: Any) -> Any:
    """The SDK's default async HTTP client on a TLS context shared by the whole process, or None.

    Each item runs its agent on an event loop of its own, and an async client belongs to one loop,
    so every item makes a new client. Left alone, each new client loads the CA bundle again
    (about 50 ms of CPU under the GIL, against 0.4 ms for a client on a shared context), which
    bounds --soclab-concurrency; an SSLContext is safe to share across threads and loops."""
    factory = getattr(sdk, "DefaultAsyncHttpxClient", None)
    module = httpx_module_of(factory) if factory is not None else None
    context = _ssl_context(module) if module is not None else None
    return None if context is None else factory(verify=context)


def httpx_module_of(client_factory: type) -> str | None:
    """The httpx package an SDK's client class derives from (a release may build on a renamed fork)."""
    client_class = next((c for c in client_factory.__mro__ if c.__name__ == "AsyncClient"), None)
    return None if client_class is None else client_class.__module__.partition(".")[0]


@functools.cache
def _ssl_context(httpx_module: str) -> ssl.SSLContext | None:
    # Built as the SDK's default client would build it, so certifi, SSL_CERT_FILE and SSL_CERT_DIR apply.
    make = getattr(sys.modules.get(httpx_module), "create_ssl_context", None)
    try:
        return make() if make is not None else None
    except (TypeError, OSError, ssl.SSLError):
        return None


def attr_or_key(obj: Any, name: str, default: Any = None) -> Any:
    """Attribute or key: loosely built SDK objects can hold plain dicts where a server bends the schema."""
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


class SDKChatModel(ChatModel):
    """A ChatModel on the openai or anthropic SDK: the two share client handling, retries and settings.

    Subclasses name the SDK and its client classes, and supply the client keyword arguments,
    the wire format (request/parse), the create call (_send) and their sampling settings.
    """

    sdk_module: str
    sync_client_class: str
    async_client_class: str
    base_url_env: str

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None,
        timeout: float,
        policy: RetryPolicy | None,
        extra_body: dict[str, Any] | None,
        price: Price | None,
    ):
        # The SDK first: a missing extra is the error to show even when the key is missing too.
        self._sdk = import_sdk(self.sdk_module)
        self.model = model
        self.base_url = base_url or os.environ.get(self.base_url_env) or None
        self.timeout = timeout
        self.policy = policy or RetryPolicy()
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
            **self.sampling_settings(),
            "timeout_s": self.timeout,
            "max_retries": self.policy.max_retries,
            "price_per_mtok": self.price.model_dump() if self.price else None,
        }

    @abstractmethod
    def sampling_settings(self) -> dict[str, Any]:
        """The provider's published sampling and request settings, in the order settings() lists them."""

    @abstractmethod
    def request(self, system: str, messages: list[Message], tools: list[dict[str, Any]]) -> dict[str, Any]:
        """The keyword arguments of the SDK's create call for this conversation."""

    @abstractmethod
    def parse(self, resp: Any, retries: int) -> ChatTurn:
        """The SDK's response as a neutral turn."""

    @abstractmethod
    def _send(self, client: Any, req: dict[str, Any]) -> Any:
        """The SDK's create call on either client (the async client returns an awaitable)."""

    @abstractmethod
    def _client_kwargs(self) -> dict[str, Any]:
        """Keyword arguments of both SDK client classes (max_retries=0: retry.py retries)."""

    # -- clients --------------------------------------------------------------------------------
    def _sync_client(self) -> Any:
        if self._client is None:
            self._client = getattr(self._sdk, self.sync_client_class)(**self._client_kwargs())
        return self._client

    def _async_client(self) -> Any:
        # An async HTTP client belongs to one event loop; the runner may use a new loop per item.
        loop = asyncio.get_running_loop()
        if self._aclient is None or self._aclient_loop is not loop:
            kwargs = self._client_kwargs()
            http_client = shared_http_client(self._sdk)
            if http_client is not None:
                kwargs["http_client"] = http_client
            self._aclient = getattr(self._sdk, self.async_client_class)(**kwargs)
            self._aclient_loop = loop
        return self._aclient

    async def aclose(self) -> None:
        client, loop = self._aclient, self._aclient_loop
        self._aclient = self._aclient_loop = None
        if client is not None and loop is asyncio.get_running_loop():
            await client.close()

    # -- calls ----------------------------------------------------------------------------------
    def chat(self, system: str, messages: list[Message], tools: list[dict[str, Any]]) -> ChatTurn:
        req = self.request(system, messages, tools)
        client = self._sync_client()
        resp, retries = call_with_retries(
            self.spec, lambda: self._limited_send(client, req), self._classify, self.policy
        )
        return self.parse(resp, retries)

    def _limited_send(self, client: Any, req: dict[str, Any]) -> Any:
        with request_slot(self.provider):  # soclab.yaml `limits:` (llm/limits.py)
            return self._send(client, req)

    async def _alimited_send(self, client: Any, req: dict[str, Any]) -> Any:
        async with arequest_slot(self.provider):
            return await self._send(client, req)

    async def achat(self, system: str, messages: list[Message], tools: list[dict[str, Any]]) -> ChatTurn:
        req = self.request(system, messages, tools)
        client = self._async_client()
        resp, retries = await acall_with_retries(
            self.spec, lambda: self._alimited_send(client, req), self._classify, self.policy
        )
        return self.parse(resp, retries)
