"""Token usage and cost of model calls.

Prices are USD per million tokens, looked up by model name in a small table
(`prices.json`, overridable). A model that is not in the table has cost None:
an unknown price is reported as unknown, never guessed.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from pytest_soclab.llm.errors import LLMError

PRICES_ENV = "SOCLAB_LLM_PRICES"
# A dated snapshot or alias of a priced model shares its price; any other suffix is a different model.
_SNAPSHOT_SUFFIX = re.compile(r"^-(\d{8}|\d{4}-\d{2}-\d{2}|latest)$")


class Price(BaseModel):
    model_config = ConfigDict(extra="forbid")
    input: float  # USD per million input tokens
    output: float  # USD per million output tokens


@lru_cache(maxsize=1)
def default_prices() -> dict[str, Price]:
    raw = json.loads(resources.files("pytest_soclab.llm").joinpath("prices.json").read_text("utf-8"))
    return {name: Price.model_validate(p) for name, p in raw["models"].items()}


def _parse_price_table(raw: Any, origin: str) -> dict[str, Price]:
    if isinstance(raw, dict) and "models" in raw:
        raw = raw["models"]
    if not isinstance(raw, dict):
        raise LLMError(
            f"{origin}: expected a JSON object of model -> {{input, output}} (USD per million tokens)"
        )
    out: dict[str, Price] = {}
    for name, p in raw.items():
        try:
            out[str(name)] = Price.model_validate(p)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(x) for x in first["loc"])
            raise LLMError(f"{origin}: model {name!r}: {where}: {first['msg']}") from None
    return out


def price_table(overrides: Mapping[str, Any] | None = None) -> dict[str, Price]:
    """The default table, then SOCLAB_LLM_PRICES (inline JSON or a file path), then explicit overrides."""
    table = dict(default_prices())
    env = os.environ.get(PRICES_ENV, "").strip()
    if env:
        if env.startswith("{"):
            origin, text = PRICES_ENV, env
        else:
            origin = f"{PRICES_ENV}={env}"
            try:
                text = Path(env).read_text("utf-8")
            except OSError as exc:
                raise LLMError(f"{origin}: cannot read the price file: {exc.strerror}") from None
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError as exc:
            raise LLMError(f"{origin}: invalid JSON: {exc}") from None
        table.update(_parse_price_table(parsed, origin))
    if overrides:
        table.update(_parse_price_table(dict(overrides), "prices option"))
    return table


def lookup_price(model: str, table: Mapping[str, Price]) -> Price | None:
    """Exact name, or a priced name followed by a snapshot date or -latest (the longest such name wins)."""
    if model in table:
        return table[model]
    best: str | None = None
    for name in table:
        snapshot = model.startswith(name) and _SNAPSHOT_SUFFIX.match(model[len(name) :])
        if snapshot and (best is None or len(name) > len(best)):
            best = name
    return table[best] if best is not None else None


@dataclass
class Usage:
    """What one run (or one call) of a model consumed. `cost_usd` is None when no price is known."""

    provider: str = ""
    model: str = ""
    calls: int = 0
    retries: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    price: Price | None = field(default=None, repr=False)
    # A cost the agent itself reported (external agents), used when no price is known here.
    reported_cost_usd: float | None = None

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    @property
    def cost_usd(self) -> float | None:
        if self.price is None:
            return None if self.reported_cost_usd is None else round(self.reported_cost_usd, 6)
        return round((self.input_tokens * self.price.input + self.output_tokens * self.price.output) / 1e6, 6)

    def add(self, input_tokens: int, output_tokens: int, retries: int = 0) -> None:
        self.calls += 1
        self.retries += retries
        self.input_tokens += input_tokens
        self.output_tokens += output_tokens

    def fresh(self) -> Usage:
        """An empty meter for the same model and price."""
        return Usage(provider=self.provider, model=self.model, price=self.price)

    def to_dict(self) -> dict[str, Any]:
        """The results-file form: counts, and cost_usd (None when the price is unknown)."""
        return {
            "llm_calls": self.calls,
            "llm_retries": self.retries,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "total_tokens": self.total_tokens,
            "cost_usd": self.cost_usd,
        }
