"""`make_chat_model("openai:MODEL" | "anthropic:MODEL", ...)`: how agents and the judge get a model."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pytest_soclab.llm.base import ChatModel
from pytest_soclab.llm.errors import LLMError
from pytest_soclab.llm.retry import RetryPolicy
from pytest_soclab.llm.usage import lookup_price, price_table

if TYPE_CHECKING:
    from pytest_soclab.llm.anthropic_chat import AnthropicChatModel
    from pytest_soclab.llm.openai_chat import OpenAIChatModel

PROVIDERS: tuple[str, ...] = ("openai", "anthropic")


def parse_spec(spec: str) -> tuple[str, str]:
    """'provider:model' -> (provider, model). The model may itself hold colons (Ollama's 'llama3.1:8b')."""
    provider, sep, model = spec.partition(":")
    provider = provider.strip().lower()
    model = model.strip()
    if not sep or provider not in PROVIDERS or not model:
        raise LLMError(
            f"bad model spec {spec!r}: expected one of " + ", ".join(f"'{p}:MODEL'" for p in PROVIDERS)
        )
    return provider, model


def _provider_class(provider: str) -> type[OpenAIChatModel] | type[AnthropicChatModel]:
    # Imported here so that each provider module (and its SDK) loads only when used.
    if provider == "openai":
        from pytest_soclab.llm.openai_chat import OpenAIChatModel

        return OpenAIChatModel
    from pytest_soclab.llm.anthropic_chat import AnthropicChatModel

    return AnthropicChatModel


def make_chat_model(
    spec: str,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    timeout: float = 60,
    max_retries: int = 4,
    seed: int = 0,
    prices: Mapping[str, Any] | None = None,
    policy: RetryPolicy | None = None,
    **options: Any,
) -> ChatModel:
    """A chat model for `openai:MODEL` or `anthropic:MODEL`.

    base_url / api_key default to OPENAI_BASE_URL / OPENAI_API_KEY (ANTHROPIC_BASE_URL /
    ANTHROPIC_API_KEY). `prices` overrides the price table (model -> {input, output} USD per
    million tokens). Provider options (`options`): openai: temperature (default 0, None to omit),
    max_tokens, tool_choice ('auto' | 'required'), tool_result_role ('tool' | 'user'), extra_body;
    anthropic: max_tokens (default 4096), extra_body.
    """
    provider, model = parse_spec(spec)
    if timeout <= 0:
        raise LLMError(f"{spec}: timeout must be positive, got {timeout}")
    if max_retries < 0:
        raise LLMError(f"{spec}: max_retries must be >= 0, got {max_retries}")
    cls = _provider_class(provider)
    accepted = set(inspect.signature(cls.__init__).parameters) - {"self", "model"}
    unknown = sorted(set(options) - accepted)
    if unknown:
        raise LLMError(f"{spec}: unknown option(s) {unknown} for {provider}; accepted: {sorted(accepted)}")
    kwargs: dict[str, Any] = dict(options)
    if provider == "openai":
        kwargs["seed"] = seed
    price = lookup_price(model, price_table(prices))
    return cls(
        model,
        base_url=base_url,
        api_key=api_key,
        timeout=timeout,
        policy=policy or RetryPolicy(max_retries=max_retries),
        price=price,
        **kwargs,
    )
