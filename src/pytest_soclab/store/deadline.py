"""Bounded store work: a deadline, and an optional "is anyone still waiting?" check, that
interrupt a backend's DuckDB query instead of letting it run on.

    with bounded(backend, 30.0, on_timeout=lambda s: timed_out(s, "--soclab-query-timeout")):
        backend.esql_query(...)

Used by the HTTP endpoint (per request; a client that hangs up cancels its request) and by the
simulator (per tool call, so that an agent's runaway query fails that call, not the session).
Interrupting a DuckDB cursor stops only that cursor's query: each request and each item has its own.
One watchdog thread serves every bounded block of the process, so a tool call costs no thread.
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from pytest_soclab.errors import EsError

POLL_S = 0.2  # how often a cancel check runs while work is under way


def interrupt(backend: Any) -> bool:
    """Interrupt the backend's running DuckDB work, if it has any; whether it could."""
    con = getattr(getattr(backend, "engine", None), "con", None)
    if con is None:
        return False
    try:
        con.interrupt()
    except Exception:  # noqa: BLE001 - a closed cursor has nothing left to stop
        return False
    return True


def timed_out(seconds: float, option: str) -> EsError:
    """Elasticsearch's answer to a cancelled task, naming the limit and the option that sets it."""
    return EsError(400, "task_cancelled_exception",
                   f"the request exceeded its deadline of [{seconds:g}s] and was cancelled ({option})")  # fmt: skip


@dataclass(eq=False)
class _Job:
    backend: Any
    end: float | None  # monotonic
    cancelled: Callable[[], bool] | None
    fired: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)  # firing and finishing exclude each other


class _Watchdog:
    """One thread for every bounded block: wakes at the next deadline or poll, interrupts what is due."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.jobs: dict[int, _Job] = {}
        self.ids = itertools.count()
        self.thread: threading.Thread | None = None

    def add(self, job: _Job) -> int:
        with self.cond:
            key = next(self.ids)
            self.jobs[key] = job
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(target=self._run, name="soclab-store-watchdog", daemon=True)
                self.thread.start()
            self.cond.notify()
            return key

    def remove(self, key: int) -> None:
        with self.cond:
            self.jobs.pop(key, None)

    def _run(self) -> None:
        next_poll = 0.0  # cancel checks and repeated interrupts run together, every POLL_S
        while True:
            with self.cond:
                while not self.jobs:
                    self.cond.wait()
                jobs = list(self.jobs.values())
                wake = [j.end for j in jobs if j.end is not None and not j.fired]
                if any(j.cancelled is not None or j.fired for j in jobs):
                    wake.append(next_poll)
                now = time.monotonic()
                if not wake or min(wake) > now:
                    self.cond.wait(min(wake) - now if wake else POLL_S)
                    continue
            polling = now >= next_poll
            if polling:
                next_poll = now + POLL_S
            for job in jobs:
                if job.fired:
                    if polling:
                        # an interrupt that came before the query started is lost: repeat it
                        # until the block ends
                        self._fire(job, job.fired)
                elif job.end is not None and now >= job.end:
                    self._fire(job, "deadline")
                elif polling and job.cancelled is not None and job.cancelled():
                    self._fire(job, "cancelled")

    @staticmethod
    def _fire(job: _Job, why: str) -> None:
        with job.lock:
            if job.fired == "done":
                return
            job.fired = why
            interrupt(job.backend)


_WATCHDOG = _Watchdog()


def _after_fork() -> None:
    # a forked child (an isolated agent's worker) has no watchdog thread: start its own on demand
    global _WATCHDOG
    _WATCHDOG = _Watchdog()


os.register_at_fork(after_in_child=_after_fork)


@contextmanager
def bounded(
    backend: Any,
    seconds: float | None,
    *,
    on_timeout: Callable[[float], EsError],
    cancelled: Callable[[], bool] | None = None,
) -> Iterator[None]:
    """Run the block; past `seconds`, or once `cancelled()` says so, interrupt the backend's work.
    Work interrupted by the deadline raises `on_timeout(seconds)`; work cancelled for a departed
    client raises whatever the interruption raised (there is no one to answer)."""
    if (not seconds and cancelled is None) or getattr(getattr(backend, "engine", None), "con", None) is None:
        yield
        return
    job = _Job(backend, time.monotonic() + seconds if seconds else None, cancelled)
    key = _WATCHDOG.add(job)
    try:
        yield
    except EsError as exc:
        if job.fired == "deadline" and ("INTERRUPT" in exc.reason.upper() or exc.status >= 500):
            raise on_timeout(seconds or 0.0) from None
        raise
    except Exception:
        if job.fired == "deadline":
            raise on_timeout(seconds or 0.0) from None
        raise
    finally:
        with job.lock:
            job.fired = job.fired or "done"  # the watchdog must not interrupt this cursor's next work
        _WATCHDOG.remove(key)
