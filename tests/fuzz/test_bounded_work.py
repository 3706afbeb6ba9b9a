"""Store work is bounded (issue 19): a deadline or a departed client interrupts the DuckDB query,
inside pytest runs (per tool call, and by the item's own time) as behind `soclab serve`; a query
past the memory limit is Elasticsearch's 429, not a crash."""

from __future__ import annotations

import datetime as dt
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rawhttp import exchange, parse, request

from pytest_soclab.agents import Agent
from pytest_soclab.errors import EsError, ToolError
from pytest_soclab.models import Estate
from pytest_soclab.models.tools import ALL_TOOLS
from pytest_soclab.run.agent import AgentFailure, run_agent
from pytest_soclab.sim.actions import ActionSurface
from pytest_soclab.sim.simulator import ScenarioContext, Simulator
from pytest_soclab.store.deadline import bounded, timed_out
from pytest_soclab.store.embedded import EmbeddedBackend
from pytest_soclab.store.engine import Engine
from pytest_soclab.store.http import ServeLimits, serve_in_thread

# Two MV_EXPANDs of a million-byte REPEAT: 2.5e11 rows to count, minutes of DuckDB work from a
# 120-byte query, as a careless or hostile agent could write it.
RUNAWAY = 'ROW a = 1 | EVAL s = SPLIT(REPEAT("x,", 500000), ",") | MV_EXPAND s | EVAL t = SPLIT(REPEAT("y,", 500000), ",") | MV_EXPAND t | STATS c = COUNT(*)'
CROSS_JOIN = "SELECT sum(a.range * b.range) FROM range(200000) a, range(200000) b"
NOW = dt.datetime(2024, 5, 2, 12, 30)


def _opt(seconds: float) -> EsError:
    return timed_out(seconds, "--test-option")


def _watchdogs() -> int:
    return sum(t.name == "soclab-store-watchdog" and t.is_alive() for t in threading.enumerate())


def test_the_deadline_interrupts_the_duckdb_work(fuzz_backend: EmbeddedBackend) -> None:
    fork = fuzz_backend.fork()
    assert fork is not fuzz_backend  # a cursor of its own: the interrupt reaches this work only
    started = time.perf_counter()
    with pytest.raises(EsError) as err, bounded(fork, 0.3, on_timeout=_opt):
        fork.engine.query(CROSS_JOIN)
    assert err.value.status == 400 and err.value.type == "task_cancelled_exception"
    assert "[0.3s]" in err.value.reason and "--test-option" in err.value.reason
    assert time.perf_counter() - started < 10
    fork.close()
    assert fuzz_backend.esql_query("ROW a = 1")["values"] == [[1]]  # the store itself is unharmed


def test_a_cancel_check_interrupts_without_a_deadline(fuzz_backend: EmbeddedBackend) -> None:
    fork = fuzz_backend.fork()
    asked = threading.Event()

    def gone() -> bool:
        asked.set()
        return True

    with pytest.raises(Exception) as err, bounded(fork, None, on_timeout=_opt, cancelled=gone):
        fork.engine.query(CROSS_JOIN)
    assert asked.is_set()
    # cancelled for a client that left: the interruption itself, not the deadline's answer
    assert "task_cancelled_exception" not in str(err.value) and "interrupt" in str(err.value).lower()
    fork.close()


def test_work_done_in_time_is_untouched_and_so_is_the_next(fuzz_backend: EmbeddedBackend) -> None:
    fork = fuzz_backend.fork()
    for _ in range(50):
        with bounded(fork, 0.05, on_timeout=_opt):
            assert fork.esql_query("ROW a = 1")["values"] == [[1]]
    time.sleep(0.2)  # every deadline has passed: none may reach the cursor's next query
    assert fork.esql_query("ROW a = 2")["values"] == [[2]]
    fork.close()


def test_one_watchdog_serves_concurrent_blocks(fuzz_backend: EmbeddedBackend) -> None:
    forks = [fuzz_backend.fork() for _ in range(8)]
    errors: list[str] = []

    def one(b: EmbeddedBackend) -> None:
        try:
            with bounded(b, 0.3, on_timeout=_opt):
                b.engine.query(CROSS_JOIN)
        except EsError as exc:
            errors.append(exc.type)

    threads = [threading.Thread(target=one, args=(f,)) for f in forks]
    for t in threads:
        t.start()
    time.sleep(0.1)
    assert _watchdogs() == 1
    for t in threads:
        t.join(20)
    assert errors == ["task_cancelled_exception"] * 8
    for f in forks:
        f.close()


def test_a_query_past_the_memory_limit_is_a_429() -> None:
    backend = EmbeddedBackend(Engine.open(None, [("logs-a", "1", {"@timestamp": "2024-05-01T00:00:00Z", "m": "x"})]))
    backend.engine.con.execute("SET memory_limit = '30MB'")  # a store of its own: the setting is its database's
    with pytest.raises(EsError) as err:
        backend.esql_query('ROW a = 1 | EVAL s = SPLIT(REPEAT("x,", 2000), ",") | MV_EXPAND s | EVAL t = SPLIT(REPEAT("yy,", 2000), ",")'
                           ' | MV_EXPAND t | EVAL u = CONCAT(s, t, TO_STRING(a)) | STATS v = VALUES(u)')
    assert err.value.status == 429 and err.value.type == "circuit_breaking_exception"
    assert "Data too large" in err.value.reason
    assert backend.esql_query("ROW a = 1")["values"] == [[1]]
    backend.close()


def test_stores_open_with_a_memory_limit(fuzz_backend: EmbeddedBackend) -> None:
    (limit,) = fuzz_backend.engine.query("SELECT current_setting('memory_limit')")[0]
    assert limit.replace(" ", "") in ("1.8GiB", "1.9GiB", "2.0GiB", "2GB")


# ---------------------------------------------------------------------- inside a pytest run


def _sim(backend: EmbeddedBackend, query_timeout: float | None) -> Simulator:
    actions = ActionSurface(Estate())
    ctx = ScenarioContext(id="T", kind="task", allowed_tools=list(ALL_TOOLS), scope={}, max_tool_calls=10)
    return Simulator(ctx, "baseline", backend, actions.estate, None, actions, query_timeout=query_timeout)


def test_a_runaway_tool_call_fails_that_call_only(fuzz_store: Path) -> None:
    backend = EmbeddedBackend.open(fuzz_store, now=NOW)
    sim = _sim(backend, query_timeout=0.5)
    tools = sim.tools()
    started = time.perf_counter()
    with pytest.raises(ToolError) as err:
        tools.call("esql_query", query=RUNAWAY)
    assert time.perf_counter() - started < 10
    assert err.value.status == 400 and err.value.type == "task_cancelled_exception"
    assert "--soclab-query-timeout" in err.value.reason
    # the agent goes on: the next call answers, and the failed one is in the transcript, counted
    assert tools.call("esql_query", query="ROW a = 1")["values"] == [[1]]
    calls = sim.recorder.calls
    assert [c.ok for c in calls] == [False, True]
    assert calls[0].error is not None and calls[0].error["error"]["type"] == "task_cancelled_exception"
    sim.close()


def test_the_items_time_stops_the_query_it_waits_on(fuzz_store: Path) -> None:
    """An in-process agent stuck in one long query: at the item's timeout the query is interrupted
    (the agent's thread gets its answer), instead of running on after the item has failed."""
    backend = EmbeddedBackend.open(fuzz_store, now=NOW)
    sim = _sim(backend, query_timeout=None)
    seen: list[str] = []
    finished = threading.Event()

    def agent(trigger: dict[str, Any], tools: Any) -> dict[str, Any]:
        try:
            tools.call("esql_query", query=RUNAWAY)
        except ToolError as exc:
            seen.append(f"{exc.type}: {exc.reason}")
        finished.set()
        return {"markdown": "x", "findings": {}}

    started = time.perf_counter()
    try:
        run_agent(Agent("stuck", agent), {"alert": "x"}, sim, 1.0)
    except AgentFailure as exc:
        assert "timed out after 1s" in exc.reason
    # (the interrupted agent may return just before the wait for it gives up: either is fine)
    assert finished.wait(10), "the agent's query kept running after the item's time was up"
    assert time.perf_counter() - started < 10
    assert len(seen) == 1 and seen[0].startswith("task_cancelled_exception") and "--soclab-timeout" in seen[0]
    sim.close()


# ---------------------------------------------------------------------- behind soclab serve


class _Slow(EmbeddedBackend):
    """The fuzz store, where ES|QL `SLOW` runs minutes of DuckDB work on the request's cursor."""

    def fork(self) -> EmbeddedBackend:
        engine = self.engine.fork()
        return self if engine is None else _Slow(engine)

    def esql_query(self, query: str, params: list[Any] | None = None, columnar: bool = False) -> dict[str, Any]:
        if query == "SLOW":
            self.engine.query(CROSS_JOIN)
        return super().esql_query(query, params, columnar)


@pytest.fixture
def slow_port(fuzz_store: Path) -> Iterator[int]:
    backend = _Slow(EmbeddedBackend.open(fuzz_store, now=NOW).engine)
    srv, thread = serve_in_thread(backend, limits=ServeLimits(max_queued=1, request_timeout=120))
    yield srv.server_address[1]
    srv.shutdown()
    srv.server_close()
    thread.join(5)
    backend.close()


def test_a_client_that_hangs_up_cancels_its_request(slow_port: int) -> None:
    """With one admitted request, the next client gets 429 while SLOW runs; once SLOW's client has
    gone, its work is cancelled and the slot is free again, long before the deadline."""
    sock = socket.create_connection(("127.0.0.1", slow_port))
    sock.sendall(request("POST", "/_query", {"query": "SLOW"}))
    time.sleep(0.5)
    assert parse(exchange(slow_port, request("POST", "/_query", {"query": "ROW a = 1"})))[0] == 429
    sock.close()
    started = time.perf_counter()
    status = 429
    while status == 429 and time.perf_counter() - started < 15:
        time.sleep(0.2)
        status = parse(exchange(slow_port, request("POST", "/_query", {"query": "ROW a = 1"})))[0]
    assert status == 200, "the departed client's request still holds the store"
    assert time.perf_counter() - started < 15
