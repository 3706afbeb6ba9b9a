"""`cmd:COMMAND`: an external agent process speaking soclab's JSON-lines protocol on stdio.

The protocol (docs/agent-protocol.md, version 1), one JSON object per line:

    harness -> agent   {"type": "start", "protocol": 1, "trigger": {...}, "tools": [specs], "limits": {...}}
    agent -> harness   {"type": "call", "id": 1, "tool": "esql_query", "args": {"query": "..."}}
    harness -> agent   {"type": "result", "id": 1, "ok": true, "result": {...}}
                       {"type": "result", "id": 1, "ok": false, "error": {Elasticsearch error body}}
    agent -> harness   {"type": "report", "markdown": "...", "findings": {...}, "usage": {...}}

A successful `submit_report` call also ends the run with that report. After the
report the harness closes the agent's stdin and kills it if it has not exited
within a grace period; on a timeout, a malformed line or any failure it kills
the whole process group at once. Anything the agent writes to stderr is kept
(the tail) for the failure message.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shlex
import signal
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, TypedDict, Unpack

from pytest_soclab.bridge import (
    PROTOCOL_VERSION,
    ReportMessage,
    answer_call,
    parse_agent_line,
    report_from_args,
)
from pytest_soclab.errors import SoclabError
from pytest_soclab.llm import Usage
from pytest_soclab.models import REPORT_TOOL, Tools

MAX_LINE_BYTES = 16 * 1024 * 1024
STDERR_TAIL_BYTES = 4000
DEFAULT_GRACE_S = 2.0


class AgentProcessError(SoclabError):
    """An external agent that failed: could not start, crashed, broke the protocol, or gave no report."""


class AgentTimeoutError(AgentProcessError, TimeoutError):
    """An external agent that was still running when its time was up (it has been killed)."""


# -- processes ------------------------------------------------------------------------------------


def command_argv(command: str | Sequence[str]) -> list[str]:
    argv = shlex.split(command) if isinstance(command, str) else [str(a) for a in command]
    if not argv:
        raise AgentProcessError("the agent command is empty")
    return argv


class StderrTail:
    """Keeps the last bytes a process wrote to a stream."""

    def __init__(self, limit: int = STDERR_TAIL_BYTES):
        self.limit = limit
        self._chunks: deque[bytes] = deque()
        self._size = 0

    async def drain(self, stream: asyncio.StreamReader | None) -> None:
        if stream is None:
            return
        while chunk := await stream.read(65536):
            self._chunks.append(chunk)
            self._size += len(chunk)
            while self._size - len(self._chunks[0]) >= self.limit:
                self._size -= len(self._chunks.popleft())

    def text(self) -> str:
        data = b"".join(self._chunks)[-self.limit :]
        return data.decode("utf-8", errors="replace").strip()

    def suffix(self, label: str = "stderr") -> str:
        tail = self.text()
        return f"\n--- {label} (last {len(tail)} characters) ---\n{tail}" if tail else f" ({label} was empty)"


async def spawn(
    argv: list[str], *, env: Mapping[str, str] | None, cwd: str | None, stdin: bool, label: str
) -> asyncio.subprocess.Process:
    """Start a process in its own process group (so that a kill reaches its children too)."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    try:
        return await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE if stdin else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=full_env,
            cwd=cwd,
            start_new_session=True,
            limit=MAX_LINE_BYTES,
        )
    except FileNotFoundError:
        raise AgentProcessError(f"{label}: cannot start {argv[0]!r}: no such file or command") from None
    except PermissionError:
        raise AgentProcessError(f"{label}: cannot start {argv[0]!r}: permission denied") from None
    except OSError as exc:
        raise AgentProcessError(f"{label}: cannot start {argv[0]!r}: {exc.strerror or exc}") from None


def kill_group(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is not None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()


async def stop(proc: asyncio.subprocess.Process, grace: float) -> None:
    """Let the process exit on its own for `grace` seconds, then kill its group; always reap it."""
    if proc.returncode is None and grace > 0:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.wait(), grace)
    kill_group(proc)
    with contextlib.suppress(ProcessLookupError):
        await proc.wait()


def exit_description(returncode: int | None) -> str:
    if returncode is None:
        return "is still running"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"was killed by {name}"
    return f"exited with code {returncode}"


# -- the adapters ---------------------------------------------------------------------------------


class ProcessOptions(TypedDict, total=False):
    """The keyword options of an agent run as a process (`ProcessAgent`), for the factories to pass on."""

    timeout: float | None
    env: Mapping[str, str] | None
    cwd: str | None
    grace: float


class ProcessAgent:
    """What the process-per-investigation adapters (`cmd:`, `mcp:`) share: the command, its limits,
    its name and usage record under `kind` (the spec prefix), and the agent call. Each adapter has
    its own grace period after the report (`default_grace`), used when `grace` is not given."""

    kind: ClassVar[str]
    default_grace: ClassVar[float]

    def __init__(
        self,
        command: str | Sequence[str],
        *,
        timeout: float | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        grace: float | None = None,
    ):
        self.argv = command_argv(command)
        self.name = f"{self.kind}:" + (command if isinstance(command, str) else shlex.join(self.argv))
        if timeout is not None and timeout <= 0:
            raise AgentProcessError(f"{self.name}: timeout must be positive, got {timeout}")
        self.timeout = timeout
        self.env = dict(env or {})
        self.cwd = cwd
        self.grace = self.default_grace if grace is None else grace
        self.usage = Usage(provider=self.kind, model=self.name)

    async def __call__(self, trigger: dict[str, Any], tools: Tools) -> dict[str, Any]:
        return await self.investigate(trigger, tools)

    async def investigate(self, trigger: dict[str, Any], tools: Tools) -> dict[str, Any]:
        raise NotImplementedError


class CommandAgent(ProcessAgent):
    """An agent run as a process per investigation. `usage` is what its report declared (if anything)."""

    kind = "cmd"
    default_grace = DEFAULT_GRACE_S

    async def investigate(self, trigger: dict[str, Any], tools: Tools) -> dict[str, Any]:
        self.usage = Usage(provider=self.kind, model=self.name)
        proc = await spawn(self.argv, env=self.env, cwd=self.cwd, stdin=True, label=self.name)
        stderr = StderrTail()
        drain = asyncio.create_task(stderr.drain(proc.stderr))
        finished = False
        try:
            try:
                async with asyncio.timeout(self.timeout) as deadline:
                    report = await self._converse(proc, trigger, tools, stderr)
            except TimeoutError:
                if deadline.expired():
                    kill_group(proc)
                    await self._settle(proc, drain)
                    raise AgentTimeoutError(
                        f"{self.name}: no report within {self.timeout:g} s; the process was killed"
                        + stderr.suffix()
                    ) from None
                raise
            # The report is in: tell the agent we are done (EOF on stdin) and give it a moment to exit.
            await self._close_stdin(proc)
            await stop(proc, self.grace)
            finished = True
            return report
        finally:
            if not finished:
                kill_group(proc)
            await self._settle(proc, drain)

    @staticmethod
    async def _settle(proc: asyncio.subprocess.Process, drain: asyncio.Task[None]) -> None:
        with contextlib.suppress(ProcessLookupError):
            await proc.wait()
        with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(drain, 2.0)

    @staticmethod
    async def _close_stdin(proc: asyncio.subprocess.Process) -> None:
        if proc.stdin is not None and not proc.stdin.is_closing():
            proc.stdin.close()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                await proc.stdin.wait_closed()

    async def _send(self, proc: asyncio.subprocess.Process, msg: dict[str, Any], stderr: StderrTail) -> None:
        assert proc.stdin is not None
        data = (json.dumps(msg, ensure_ascii=False, separators=(",", ":"), default=str) + "\n").encode()
        try:
            proc.stdin.write(data)
            await proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            returncode = await proc.wait()
            raise AgentProcessError(
                f"{self.name}: the agent stopped reading its input and {exit_description(returncode)}"
                " before sending a report" + stderr.suffix()
            ) from None

    def _malformed(self, line_no: int, line: str, why: str, stderr: StderrTail) -> AgentProcessError:
        shown = line if len(line) <= 300 else line[:300] + f"... ({len(line)} characters)"
        return AgentProcessError(
            f"{self.name}: malformed protocol line {line_no}: {why}\n  line {line_no}: {shown}"
            + stderr.suffix()
        )

    async def _converse(
        self, proc: asyncio.subprocess.Process, trigger: dict[str, Any], tools: Tools, stderr: StderrTail
    ) -> dict[str, Any]:
        assert proc.stdout is not None
        start: dict[str, Any] = {
            "type": "start",
            "protocol": PROTOCOL_VERSION,
            "trigger": trigger,
            "tools": tools.specs(),
        }
        start["limits"] = {"timeout_s": self.timeout} if self.timeout is not None else {}
        await self._send(proc, start, stderr)
        line_no = 0
        while True:
            try:
                raw = await proc.stdout.readline()
            except ValueError:  # the stream's line limit
                raise self._malformed(
                    line_no + 1, "", f"the line is longer than {MAX_LINE_BYTES} bytes", stderr
                ) from None
            if not raw:
                returncode = await proc.wait()
                raise AgentProcessError(
                    f"{self.name}: the agent {exit_description(returncode)} before sending a report"
                    + stderr.suffix()
                )
            line_no += 1
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise self._malformed(line_no, repr(raw[:200]), f"not UTF-8 ({exc.reason})", stderr) from None
            if not text.strip():
                continue
            try:
                msg = parse_agent_line(text)
            except ValueError as exc:
                raise self._malformed(line_no, text.rstrip("\n"), str(exc), stderr) from None
            if isinstance(msg, ReportMessage):
                try:
                    report = report_from_args({"markdown": msg.markdown, "findings": msg.findings})
                except ValueError as exc:
                    raise self._malformed(line_no, text.rstrip("\n"), f"bad report: {exc}", stderr) from None
                self._record_usage(msg.usage)
                return report
            ok, payload = answer_call(tools, msg.tool, msg.args)
            reply = {"type": "result", "id": msg.id, "ok": ok, ("result" if ok else "error"): payload}
            await self._send(proc, reply, stderr)
            if ok and msg.tool == REPORT_TOOL:
                return report_from_args(msg.args)

    def _record_usage(self, usage: dict[str, float | None] | None) -> None:
        if not usage:
            return
        self.usage.calls = int(usage.get("llm_calls") or 0)
        self.usage.input_tokens = int(usage.get("input_tokens") or 0)
        self.usage.output_tokens = int(usage.get("output_tokens") or 0)
        cost = usage.get("cost_usd")
        self.usage.reported_cost_usd = float(cost) if cost is not None else None


def command_agent(command: str | Sequence[str], **options: Unpack[ProcessOptions]) -> CommandAgent:
    """The agent for `--soclab-agent=cmd:COMMAND` (COMMAND split like a shell would, but run without one)."""
    return CommandAgent(command, **options)
