"""Cost an item's model usage with the prices of soclab.yaml (`prices:`, USD per million tokens).

The agent's adapter already costs its usage from the packaged price table where it knows the
model; a price the project declares in soclab.yaml wins (it is the price the project pays), and a
model priced nowhere keeps cost None: an unknown price is reported as unknown, never guessed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_soclab.llm import LLMError, Price, lookup_price, parse_spec
from pytest_soclab.models import ModelPrice


def agent_model(agent_spec: str) -> str | None:
    """The model an `openai:MODEL` / `anthropic:MODEL` agent runs (None for any other kind)."""
    try:
        return parse_spec(agent_spec)[1]
    except LLMError:
        return None


def price_usage(usage: Mapping[str, Any], model: str | None, prices: Mapping[str, ModelPrice]) -> dict[str, Any]:
    out = dict(usage)
    if not out or model is None or not prices:
        return out
    table = {name: Price(input=p.input, output=p.output) for name, p in prices.items()}
    price = lookup_price(model, table)
    if price is None:
        return out
    tokens_in, tokens_out = int(out.get("input_tokens") or 0), int(out.get("output_tokens") or 0)
    out["cost_usd"] = round((tokens_in * price.input + tokens_out * price.output) / 1e6, 6)
    return out
