"""Run an in-process agent in a worker process (`--soclab-isolate`): an agent that calls
`os._exit`, segfaults or spins the CPU ends its own item only, and a timeout kills its work
instead of only giving up waiting for it.

The worker is forked (the agent function need not be importable by name); its tools are a proxy
that sends each call over a pipe to this process, where the item's simulator answers it as usual,
so the guard, the budget and the transcript stay here."""

from __future__ import annotations

import asyncio
import faulthandler
import inspect
import multiprocessing as mp
import os
import signal
import time
import traceback
from multiprocessing.connection import Connection
from typing import Any

from pytest_soclab.agents import Agent
from pytest_soclab.errors import ToolError
from pytest_soclab.sim import Simulator


class WorkerDied(Exception):
    """The worker ended without a result: `reason` says how."""

    def __init__(self, reason: str, detail: str = ""):
        super().__init__(reason)
        self.reason = reason
        self.detail = detail


class _ProxyTools:
    """The agent's tools inside the worker: the same `specs()` and `call(name, **args)`."""

    def __init__(self, conn: Connection, specs: list[dict[str, Any]]):
        self._conn = conn
        self._specs = specs

    def specs(self) -> list[dict[str, Any]]:
        return [dict(s) for s in self._specs]

    def call(self, name: str, /, **args: Any) -> dict[str, Any]:
        self._conn.send(("call", name, args))
        reply = self._conn.recv()
        if reply[0] == "ok":
            return reply[1]
        _, status, type_, reason, extra = reply
        raise ToolError(status, type_, reason, **extra)


def _worker(agent: Agent, trigger: dict[str, Any], conn: Connection, specs: list[dict[str, Any]], timeout: float) -> None:
    faulthandler.disable()  # a crash is the parent's to report, not a traceback dump of the forked test runner
    try:
        out = agent.fn(dict(trigger), _ProxyTools(conn, specs))
        if inspect.isawaitable(out):
            out = asyncio.run(asyncio.wait_for(out, timeout))
        conn.send(("done", out))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent as the item's failure
        lines = traceback.format_exception(exc)[-8:]
        conn.send(("raised", type(exc).__name__, str(exc), "".join(lines)))
    finally:
        conn.close()
        os._exit(0)  # no atexit handlers or inherited finalizers of the parent in the worker


def run_in_worker(agent: Agent, trigger: dict[str, Any], sim: Simulator, timeout: float) -> tuple[str, Any]:
    """("done", value) or ("raised", (name, message, traceback)); WorkerDied or TimeoutError otherwise."""
    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe()
    specs = sim.tools().specs()
    proc = ctx.Process(target=_worker, args=(agent, trigger, child, specs, timeout), daemon=True)
    proc.start()
    child.close()
    deadline = time.monotonic() + timeout
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            if not parent.poll(min(left, 0.2)):
                if not proc.is_alive():
                    raise WorkerDied(f"the agent's worker process {_how(proc.exitcode)} before sending a report")
                continue
            try:
                msg = parent.recv()
            except (EOFError, OSError):
                proc.join(1)
                raise WorkerDied(f"the agent's worker process {_how(proc.exitcode)} before sending a report") from None
            if msg[0] == "call":
                _answer(parent, sim, msg[1], msg[2])
            elif msg[0] == "done":
                return "done", msg[1]
            else:
                return "raised", msg[1:]
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join(5)
        parent.close()


def _answer(conn: Connection, sim: Simulator, name: str, args: dict[str, Any]) -> None:
    try:
        conn.send(("ok", sim.call(name, args)))
    except ToolError as err:
        conn.send(("err", err.status, err.type, err.reason, dict(getattr(err, "extra", {}) or {})))


def _how(code: int | None) -> str:
    if code is None:
        return "stopped"
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"
