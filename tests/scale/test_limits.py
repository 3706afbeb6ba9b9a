"""Per-provider limits: requests in flight and requests per minute, shared by a process."""

from __future__ import annotations

import asyncio
import threading
import time

from pytest_soclab.llm import ProviderLimit, configure_limits
from pytest_soclab.llm.limits import Limiter, arequest_slot, limiter, request_slot
from pytest_soclab.models import Suite


def test_connections_bound_the_requests_in_flight() -> None:
    configure_limits({"openai": ProviderLimit(connections=2)})
    peak, now, lock = [0], [0], threading.Lock()

    def call() -> None:
        with request_slot("openai"):
            with lock:
                now[0] += 1
                peak[0] = max(peak[0], now[0])
            time.sleep(0.05)
            with lock:
                now[0] -= 1

    threads = [threading.Thread(target=call) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert peak[0] == 2
    configure_limits({})
    assert limiter("openai") is None


def test_requests_per_minute_wait_for_the_window() -> None:
    clock = [0.0]
    lim = Limiter(ProviderLimit(requests_per_minute=2), clock=lambda: clock[0])
    assert lim._try_take() == 0 and lim._try_take() == 0
    lim._release(), lim._release()
    clock[0] = 10.0
    assert lim._try_take() == 50.0  # the first request leaves the window at t=60
    clock[0] = 60.0
    assert lim._try_take() == 0


def test_async_slots_and_the_suite_setting() -> None:
    configure_limits({"anthropic": ProviderLimit(connections=1)})

    async def two() -> None:
        async with arequest_slot("anthropic"):
            assert limiter("anthropic").in_flight == 1  # type: ignore[union-attr]

    asyncio.run(two())
    configure_limits({})
    suite = Suite.model_validate({"limits": {"openai": {"connections": 8, "requests_per_minute": 500}}})
    assert suite.limits["openai"].requests_per_minute == 500
