from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

import pytest

from pytest_soclab.agents.command import AgentProcessError, AgentTimeoutError, command_agent
from pytest_soclab.bridge.protocol import parse_agent_line

from .test_openai_agent import TRIGGER

SCRIPT = Path(__file__).with_name("jsonl_agent.py")


def agent_for(mode: str, **kw):
    return command_agent([sys.executable, str(SCRIPT), mode], **kw)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0): check its state.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except FileNotFoundError:
        return False


def pids(path: Path) -> list[int]:
    return [int(p) for p in path.read_text().split()]


def test_report_message(tools):
    agent = agent_for("report", timeout=30)
    report = asyncio.run(agent(TRIGGER, tools))
    assert report["markdown"] == "web-01 ran /tmp/.sysupdate (pid 4242) at 2024-05-14T09:12:03.120Z."
    assert report["findings"]["iocs"] == ["/tmp/.sysupdate"]
    assert [(n, ok) for n, _, ok in tools.calls] == [
        ("list_indices", True),
        ("get_mappings", False),
        ("esql_query", True),
    ]
    assert agent.usage.to_dict() == {
        "llm_calls": 0,
        "llm_retries": 0,
        "input_tokens": 1200,
        "output_tokens": 300,
        "total_tokens": 1500,
        "cost_usd": 0.0042,
    }
    assert tools.reports == []  # a report message is the agent's answer, not a tool call


def test_submit_report_call_ends_the_run(tools):
    report = asyncio.run(agent_for("submit", timeout=30)(TRIGGER, tools))
    assert tools.reports == [report] and report["findings"]["implicated_hosts"] == ["web-01"]
    assert [n for n, _, _ in tools.calls][-1] == "submit_report"


def test_crash_reports_exit_code_and_stderr(tools):
    with pytest.raises(AgentProcessError) as err:
        asyncio.run(agent_for("crash", timeout=30)(TRIGGER, tools))
    msg = str(err.value)
    assert "the agent exited with code 3 before sending a report" in msg
    assert "--- stderr" in msg and "RuntimeError: model server unreachable" in msg


def test_malformed_line_names_the_line(tools):
    with pytest.raises(AgentProcessError) as err:
        asyncio.run(agent_for("malformed", timeout=30)(TRIGGER, tools))
    msg = str(err.value)
    assert "malformed protocol line 1: not JSON (Expecting value at character 0)" in msg
    assert "line 1: thinking about it..." in msg


def test_bad_report_is_a_failure(tools):
    with pytest.raises(
        AgentProcessError,
        match=r"malformed protocol line 5: bad report message: findings: Input should be a valid dictionary",
    ):
        asyncio.run(agent_for("bad-report", timeout=30)(TRIGGER, tools))


def test_hanging_agent_is_killed_at_the_timeout(tools, tmp_path):
    pidfile = tmp_path / "pids"
    agent = agent_for("child-hang", timeout=1.5, env={"SOCLAB_TEST_PIDFILE": str(pidfile)})
    started = time.monotonic()
    with pytest.raises(AgentTimeoutError) as err:
        asyncio.run(agent(TRIGGER, tools))
    assert time.monotonic() - started < 5
    assert "no report within 1.5 s; the process was killed" in str(err.value)
    assert "agent: started on a alert" in str(err.value)
    assert isinstance(err.value, TimeoutError)
    parent, child = pids(pidfile)
    deadline = time.monotonic() + 2
    while (alive(parent) or alive(child)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(parent) and not alive(child)  # the whole process group


def test_lingering_agent_is_killed_after_the_grace_period(tools, tmp_path):
    pidfile = tmp_path / "pids"
    agent = agent_for("linger", timeout=30, grace=0.3, env={"SOCLAB_TEST_PIDFILE": str(pidfile)})
    started = time.monotonic()
    report = asyncio.run(agent(TRIGGER, tools))
    assert report["markdown"].startswith("web-01 ran") and time.monotonic() - started < 5
    assert not alive(pids(pidfile)[0])


def test_cancellation_kills_the_agent(tools, tmp_path):
    pidfile = tmp_path / "pids"
    agent = agent_for("hang", env={"SOCLAB_TEST_PIDFILE": str(pidfile)})

    async def runner() -> None:
        await asyncio.wait_for(agent(TRIGGER, tools), 1.0)

    with pytest.raises(TimeoutError):
        asyncio.run(runner())
    assert not alive(pids(pidfile)[0])


def test_missing_command(tools):
    with pytest.raises(
        AgentProcessError, match=r"cannot start 'no-such-agent-binary': no such file or command"
    ):
        asyncio.run(command_agent("no-such-agent-binary --flag")(TRIGGER, tools))
    with pytest.raises(AgentProcessError, match="the agent command is empty"):
        command_agent("  ")


@pytest.mark.parametrize(
    ("line", "error"),
    [
        ("[1]", "a message must be a JSON object, got a JSON list"),
        ('{"type": "log"}', "unknown message type 'log'; an agent sends 'call' or 'report'"),
        ('{"type": "call", "tool": "es_search"}', "bad call message: id: Field required"),
        (
            '{"type": "call", "id": 1, "tool": "es_search", "args": [1]}',
            "bad call message: args: Input should be a valid dictionary",
        ),
        ('{"type": "report"}', "bad report message: markdown: Field required"),
        (
            '{"type": "report", "markdown": "x", "verdict": 1}',
            "bad report message: verdict: Extra inputs are not permitted",
        ),
    ],
)
def test_protocol_line_errors(line, error):
    with pytest.raises(ValueError) as err:
        parse_agent_line(line)
    assert str(err.value) == error
