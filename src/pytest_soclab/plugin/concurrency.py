"""--soclab-concurrency=N: run the agents of the next N items at once, and let each item take its own result.

pytest still runs one item at a time, in collection order, each with its own report. When an item's
body runs, it hands the next 2N items of *this process's* queue (the session's items here; under
xdist, the worker's own queue) to a pool of N threads, and waits for its own result; the agents of
the items after it are already running meanwhile. So `-k`, `-m`, `--lf` and sharding (which shape
the queue) need nothing; `-x` / `--maxfail` and Ctrl-C stop the look-ahead and close the tools of
agents still running (their next call fails, their item is never reported); every agent keeps its
own timeout and tool budget.

Each pool thread has its own agent and judge (model adapters keep per-run state such as usage);
each item gets its own backend and simulator, as the fixtures would build them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import pytest

from pytest_soclab.errors import SoclabError
from pytest_soclab.models import ItemResult
from pytest_soclab.plugin import itembuild, keys
from pytest_soclab.sim import Simulator

pool_key = pytest.StashKey["AheadPool"]()
LOOKAHEAD = 2  # items handed to the pool, in multiples of its size


def _worker_queue(config: pytest.Config) -> Any:
    """xdist's worker loop object, which holds this worker's pending item indices (None outside xdist).

    xdist has no public API for a worker's queue: look for the registered object that has one, and
    fall back to the session order when it is not found (look-ahead over items this worker may not
    run is harmless: a result nobody takes is dropped)."""
    if not hasattr(config, "workerinput"):
        return None
    for plugin in config.pluginmanager.get_plugins():
        if hasattr(plugin, "torun") and hasattr(plugin, "nextitem_index"):
            return plugin
    return None


class AheadPool:
    """The look-ahead pool of one pytest process."""

    def __init__(self, config: pytest.Config, size: int, make_agent: Callable[[], Any],
                 make_judge: Callable[[], Any]):
        self.config = config
        self.size = size
        self.make_agent = make_agent
        self.make_judge = make_judge
        self.executor = ThreadPoolExecutor(max_workers=size, thread_name_prefix="soclab-item")
        self.futures: dict[str, Future[tuple[ItemResult, list[Any]]]] = {}
        self.sims: dict[str, Simulator] = {}
        self.index: dict[str, int] = {}
        self.local = threading.local()
        self.case_lock = threading.Lock()
        self.stopped = False
        self.fixtures: dict[str, Any] = {}

    # -- which items come next -------------------------------------------------------------
    def upcoming(self, item: pytest.Item) -> list[pytest.Item]:
        items = item.session.items
        if not self.index:
            self.index = {it.nodeid: i for i, it in enumerate(items)}
        queue = _worker_queue(self.config)
        if queue is not None:
            with queue.torun.lock() as pending:
                ahead = [queue.nextitem_index, *pending]
            order = [items[i] for i in ahead if isinstance(i, int) and not isinstance(i, bool)]
        else:
            start = self.index.get(item.nodeid, len(items)) + 1
            order = items[start:]
        # Twice the pool's size is queued: a thread whose agent is done takes the next item at once,
        # instead of waiting until pytest reports the items before it (N threads still bound the
        # agents running at once; the queued ones only wait for a thread).
        return [item, *order[: LOOKAHEAD * self.size - 1]]

    # -- running ---------------------------------------------------------------------------
    def result_for(self, item: pytest.Item) -> tuple[ItemResult, list[Any]]:
        """This item's result and recorded calls: submit it and the look-ahead, then wait (Ctrl-C
        interrupts the wait). A case that cannot be built fails the item, as without the pool."""
        if not self.fixtures:
            self.fixtures = {k: item.funcargs.get(k) for k in ("soclab_cases", "soclab_live_backend")}  # type: ignore[attr-defined]
        for nxt in self.upcoming(item):
            self.submit(nxt)
        future = self.futures.pop(item.nodeid)
        try:
            return future.result()
        except SoclabError as exc:
            pytest.fail(str(exc), pytrace=False)
        finally:
            self.sims.pop(item.nodeid, None)

    def submit(self, item: pytest.Item) -> None:
        if self.stopped or item.nodeid in self.futures or keys.item_spec_key not in item.stash:
            return
        resume = self.config.pluginmanager.get_plugin("soclab-resume")
        if resume is not None and resume.carries(item):
            return
        if itembuild.live_refusal(item.stash[keys.item_spec_key], self.fixtures.get("soclab_live_backend")):
            return  # its setup skips it
        self.futures[item.nodeid] = self.executor.submit(self._run, item)

    def _thread_agent_and_judge(self) -> tuple[Any, Any]:
        # Once per pool thread, the way the session fixtures resolve them once per process.
        if not hasattr(self.local, "agent"):
            self.local.agent = self.make_agent()
            self.local.judge = self.make_judge()
        return self.local.agent, self.local.judge

    def _run(self, item: pytest.Item) -> tuple[ItemResult, list[Any]]:
        agent, judge = self._thread_agent_and_judge()
        with self.case_lock:  # the case library builds a case once; it is not thread-safe
            ispec, case = itembuild.case_for(self.config, itembuild.collected(item), self.fixtures["soclab_cases"])
        live = self.fixtures.get("soclab_live_backend")
        backend = itembuild.backend_for(ispec, case, live)
        sim = itembuild.simulator_for(self.config, ispec, case, backend, self.config.stash.get(keys.guard_key, None))
        self.sims[item.nodeid] = sim
        if self.stopped:
            sim.closed = True
        try:
            result = itembuild.run_built(self.config, ispec, item.nodeid, sim, agent, judge)
        finally:
            if live is None:
                sim.close()
        return result, sim.recorder.calls

    # -- stopping ----------------------------------------------------------------------------
    def stop(self) -> None:
        """No more look-ahead; agents still running get closed tools, queued ones never start."""
        self.stopped = True
        for sim in list(self.sims.values()):
            sim.closed = True
        for future in self.futures.values():
            future.cancel()
        self.executor.shutdown(wait=False, cancel_futures=True)


class ConcurrencyHooks:
    """Registered when --soclab-concurrency > 1."""

    def __init__(self, pool: AheadPool):
        self.pool = pool
        self.session: pytest.Session | None = None

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.session = session

    def pytest_runtest_logfinish(self, nodeid: str) -> None:
        # -x / --maxfail set these when an item's report comes in: stop looking ahead.
        if self.session is not None and (self.session.shouldfail or self.session.shouldstop):
            self.pool.stop()

    def pytest_keyboard_interrupt(self, excinfo: Any) -> None:
        self.pool.stop()

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.pool.stop()


def install(config: pytest.Config, size: int, make_agent: Callable[[], Any], make_judge: Callable[[], Any]) -> None:
    pool = AheadPool(config, size, make_agent, make_judge)
    config.stash[pool_key] = pool
    config.pluginmanager.register(ConcurrencyHooks(pool), "soclab-concurrency")


def pool_of(config: pytest.Config) -> AheadPool | None:
    return config.stash.get(pool_key, None)
