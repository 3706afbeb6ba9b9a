from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from pytest_soclab.llm.retry import RetryPolicy

from .fake_tools import FakeTools


@pytest.fixture
def tools() -> FakeTools:
    return FakeTools()


class RecordingPolicy(RetryPolicy):
    """A retry policy that records the waits it was asked for and sleeps only briefly."""

    def __init__(self, max_retries: int = 4) -> None:
        self.waits: list[float] = []

        def sleep(s: float) -> None:
            self.waits.append(s)

        async def asleep(s: float) -> None:
            self.waits.append(s)
            await asyncio.sleep(0)

        super().__init__(max_retries=max_retries, sleep=sleep, asleep=asleep)


@pytest.fixture
def policy() -> RecordingPolicy:
    return RecordingPolicy()


@pytest.fixture
def clean_llm_env(monkeypatch: pytest.MonkeyPatch) -> Callable[..., Any]:
    for var in (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "ANTHROPIC_AUTH_TOKEN",
        "SOCLAB_LLM_PRICES",
    ):
        monkeypatch.delenv(var, raising=False)
    return monkeypatch.setenv
