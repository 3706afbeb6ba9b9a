"""One request to an endpoint of the read API, and the small parsers its parameters share."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pytest_soclab.errors import EsError, illegal_argument

from ..base import Backend
from .state import ApiState, state_of

# (status, payload, headers): what every handler answers, as http.py's own routes do
Answer = tuple[int, Any, dict[str, Any]]
Handler = Callable[["ApiRequest"], Answer]
Route = tuple[re.Pattern[str], tuple[str, ...], Handler]


@dataclass
class ApiRequest:
    backend: Backend
    state: ApiState
    method: str
    index: str | None
    params: dict[str, str]
    body: Any
    groups: dict[str, str] = field(default_factory=dict)
    client: str = ""  # who asks: scroll, PIT and async contexts are theirs alone

    @classmethod
    def from_handler(cls, handler: Any, method: str, index: str | None, params: dict[str, str], body: Any,
                     groups: dict[str, str | None]) -> ApiRequest:  # fmt: skip
        """Built from http.py's request handler (its server, peer address and credentials)."""
        auth = handler.headers.get("Authorization") or ""
        who = f"{handler.client_address[0]}|{hashlib.sha256(auth.encode()).hexdigest()[:16]}"
        clean = {k: v for k, v in groups.items() if v is not None}
        # the request's own cursor (http.py forks one per request), else the server's backend
        backend = getattr(handler, "backend", None) or handler.server.backend
        return cls(backend, state_of(handler.server), method, index, params, body, clean, who)

    def flag(self, name: str, default: bool = False) -> bool:
        return flag(self.params, name, default)

    def object_body(self) -> dict[str, Any]:
        if self.body in (None, ""):
            return {}
        if not isinstance(self.body, dict):
            raise EsError(400, "parsing_exception", "request body must be a JSON object")
        return self.body


def flag(params: dict[str, str], name: str, default: bool = False) -> bool:
    """A boolean query parameter as Elasticsearch reads it: present and empty means true."""
    if name not in params:
        return default
    value = params[name].strip().lower()
    if value in ("", "true"):
        return True
    if value == "false":
        return False
    raise illegal_argument(f"Failed to parse value [{params[name]}] as only [true] or [false] are allowed.")


_TIME = re.compile(r"^\s*(\d+)\s*(nanos|micros|ms|s|m|h|d)\s*$")
_UNIT_SECONDS = {"nanos": 1e-9, "micros": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def time_value(text: Any, name: str) -> float:
    """A time value (`30s`, `1m`, `500ms`) in seconds."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return float(text) / 1000.0  # a bare number is milliseconds
    m = _TIME.match(str(text))
    if not m:
        raise EsError(400, "parse_exception", f"failed to parse setting [{name}] with value [{text}] as a time value: "
                      "unit is missing or unrecognized")  # fmt: skip
    return int(m.group(1)) * _UNIT_SECONDS[m.group(2)]


def int_param(params: dict[str, str], name: str, default: int) -> int:
    if name not in params:
        return default
    try:
        return int(params[name])
    except ValueError:
        raise illegal_argument(f"Failed to parse int parameter [{name}] with value [{params[name]}]") from None


def csv_param(params: dict[str, str], name: str) -> list[str]:
    return [p.strip() for p in params.get(name, "").split(",") if p.strip()]
