"""Server-side contexts of the read API (scrolls, points in time, async ES|QL queries): kept per
client, bounded, and dropped when their keep-alive runs out."""

from __future__ import annotations

import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from pytest_soclab.errors import EsError

MAX_KEEP_ALIVE = 24 * 3600.0  # search.max_keep_alive
MAX_PER_CLIENT = {"scroll": 500, "pit": 500, "async": 100, "sql": 500}  # search.max_open_scroll_context and kin


@dataclass
class Context:
    kind: str
    client: str
    expires: float
    data: dict[str, Any] = field(default_factory=dict)


class ApiState:
    """The contexts of one server. Ids are random: guessing another client's is not a way in,
    and a client that shows someone else's id is told it does not exist."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: dict[str, Context] = {}

    def _purge(self, now: float) -> None:
        for key in [k for k, c in self._items.items() if c.expires <= now]:
            del self._items[key]

    def open(self, kind: str, client: str, keep_alive: float, data: dict[str, Any],
             max_keep_alive: float = MAX_KEEP_ALIVE) -> str:
        if keep_alive > max_keep_alive:
            raise EsError(400, "illegal_argument_exception", f"Keep alive for request ({int(keep_alive)}s) is too large. "
                          f"It must be less than ({int(max_keep_alive)}s). This limit can be set by changing the "
                          "[search.max_keep_alive] cluster level setting.")  # fmt: skip
        now = time.monotonic()
        with self._lock:
            self._purge(now)
            mine = sum(1 for c in self._items.values() if c.kind == kind and c.client == client)
            limit = MAX_PER_CLIENT[kind]
            if mine >= limit:
                raise EsError(429, "es_rejected_execution_exception", f"Trying to create too many {kind} contexts. "
                              f"Must be less than or equal to: [{limit}]. Close the ones you no longer need.")  # fmt: skip
            key = secrets.token_urlsafe(24)
            self._items[key] = Context(kind, client, now + keep_alive, data)
            return key

    def get(self, kind: str, client: str, key: str, keep_alive: float | None = None) -> Context | None:
        """The live context `key` of this client (its keep-alive renewed when given), else None."""
        now = time.monotonic()
        with self._lock:
            self._purge(now)
            ctx = self._items.get(key)
            if ctx is None or ctx.kind != kind or ctx.client != client:
                return None
            if keep_alive is not None:
                ctx.expires = now + keep_alive
            return ctx

    def close(self, kind: str, client: str, key: str) -> bool:
        with self._lock:
            ctx = self._items.get(key)
            if ctx is None or ctx.kind != kind or ctx.client != client:
                return False
            del self._items[key]
            return True

    def close_all(self, kind: str, client: str) -> int:
        with self._lock:
            keys = [k for k, c in self._items.items() if c.kind == kind and c.client == client]
            for key in keys:
                del self._items[key]
            return len(keys)


_STATES_LOCK = threading.Lock()


def state_of(server: Any) -> ApiState:
    """The state of one HTTP server (made on its first request that needs one)."""
    with _STATES_LOCK:
        state = getattr(server, "_soclab_api_state", None)
        if state is None:
            state = ApiState()
            server._soclab_api_state = state
        return state
