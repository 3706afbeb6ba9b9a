"""Per-provider limits on concurrent connections and requests per minute, shared by a process.

With --soclab-concurrency several agents call one provider at once; these limits keep them under
the provider's quotas (soclab.yaml `limits:`). Each attempt of a call takes a slot (so a retry
counts as a request); a 429 or 5xx that still happens is retried with backoff by `retry.py`.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from collections.abc import Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from collections.abc import AsyncIterator
from dataclasses import dataclass


@dataclass(frozen=True)
class ProviderLimit:
    connections: int | None = None  # at most this many requests in flight
    requests_per_minute: int | None = None  # at most this many requests started in any 60 s


class Limiter:
    def __init__(self, limit: ProviderLimit, clock: object = time.monotonic):
        self.limit = limit
        self.clock = clock
        self.lock = threading.Lock()
        self.in_flight = 0
        self.started: deque[float] = deque()

    def _try_take(self) -> float:
        """Take a slot and return 0, or return how long to wait before trying again."""
        now = self.clock()  # type: ignore[operator]
        with self.lock:
            rpm = self.limit.requests_per_minute
            while self.started and now - self.started[0] >= 60.0:
                self.started.popleft()
            if self.limit.connections is not None and self.in_flight >= self.limit.connections:
                return 0.01
            if rpm is not None and len(self.started) >= rpm:
                return max(0.01, 60.0 - (now - self.started[0]))
            self.in_flight += 1
            self.started.append(now)
            return 0.0

    def _release(self) -> None:
        with self.lock:
            self.in_flight -= 1

    @contextmanager
    def slot(self) -> Iterator[None]:
        while (wait := self._try_take()) > 0:
            time.sleep(min(wait, 1.0))
        try:
            yield
        finally:
            self._release()

    @asynccontextmanager
    async def aslot(self) -> AsyncIterator[None]:
        while (wait := self._try_take()) > 0:
            await asyncio.sleep(min(wait, 1.0))  # cancellation (a timeout) interrupts the wait
        try:
            yield
        finally:
            self._release()


_LIMITERS: dict[str, Limiter] = {}
_LOCK = threading.Lock()


def configure_limits(limits: Mapping[str, ProviderLimit]) -> None:
    """Set this process's limits (provider name -> limit); providers not named are unlimited."""
    with _LOCK:
        _LIMITERS.clear()
        for provider, limit in limits.items():
            if limit.connections is not None or limit.requests_per_minute is not None:
                _LIMITERS[provider] = Limiter(limit)


def limiter(provider: str) -> Limiter | None:
    return _LIMITERS.get(provider)


@contextmanager
def request_slot(provider: str) -> Iterator[None]:
    lim = limiter(provider)
    if lim is None:
        yield
        return
    with lim.slot():
        yield


@asynccontextmanager
async def arequest_slot(provider: str) -> AsyncIterator[None]:
    lim = limiter(provider)
    if lim is None:
        yield
        return
    async with lim.aslot():
        yield
