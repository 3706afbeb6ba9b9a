"""`cmd:` agents that misbehave on the protocol (issue 19): each ends its item with a clear error,
in bounded time and memory."""

from __future__ import annotations

import asyncio
import sys
import time

import pytest

from pytest_soclab.agents.command import AgentProcessError, AgentTimeoutError, command_agent

from .test_openai_agent import TRIGGER


def _agent(code: str, timeout: float = 5.0):  # type: ignore[no-untyped-def]
    return command_agent([sys.executable, "-c", code], timeout=timeout)


def test_stdout_flood_without_newline(tools) -> None:
    code = "import sys, time\nsys.stdout.buffer.write(b'x' * (20 * 1024 * 1024)); sys.stdout.flush(); time.sleep(30)"
    with pytest.raises(AgentProcessError, match="longer than"):
        asyncio.run(_agent(code, timeout=20)(TRIGGER, tools))


def test_endless_blank_lines_end_at_the_timeout(tools) -> None:
    started = time.monotonic()
    with pytest.raises(AgentTimeoutError):
        asyncio.run(_agent("while True: print(flush=True)", timeout=1.5)(TRIGGER, tools))
    assert time.monotonic() - started < 10


def test_never_answers(tools) -> None:
    with pytest.raises(AgentTimeoutError):
        asyncio.run(_agent("import time\ntime.sleep(60)", timeout=1.0)(TRIGGER, tools))


def test_invalid_utf8(tools) -> None:
    code = "import sys, time\nsys.stdout.buffer.write(b'\\xff\\xfe{}\\n'); sys.stdout.flush(); time.sleep(30)"
    with pytest.raises(AgentProcessError, match="not UTF-8"):
        asyncio.run(_agent(code, timeout=20)(TRIGGER, tools))
