"""The long fuzz run of `soclab serve` (issue 19): counts per request class and outcome, p99
latency and the server's peak RSS.

    PYTHONPATH=src python bench/fuzz_bench.py [--requests 2400] [--seed 19] [--timeout 10] [--case CASE]

The store is the small hostile one of tests/fuzz (CR/LF, NUL and non-ASCII planted in its values),
or with --case a case of ./corpus (built and cached under .soclab-cache on first use).

The server runs in a child process (address space capped by --mem-limit-mb, so a runaway query
fails there instead of taking the machine); a child that dies, or stops answering, is restarted
and the request counted as `killed` or `dropped`. Outcomes: ok (2xx), 4xx (in Elasticsearch's
error shape), bad_shape (an error body not in that shape), 5xx, dropped (no answer), slow (an
answer after --slow seconds), killed (the server died on it).
"""

from __future__ import annotations

import argparse
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "fuzz"))

from fuzz_data import DOCS  # noqa: E402
from generators import CLASSES, requests  # noqa: E402
from runner import classify, send  # noqa: E402

SERVER = r"""
import sys, inspect, datetime as dt
from pytest_soclab.store.embedded import EmbeddedBackend
from pytest_soclab.store import http
backend = EmbeddedBackend.open(sys.argv[1], now=dt.datetime.fromisoformat(sys.argv[3]))
kw = {}
if hasattr(http, "ServeLimits"):
    kw["limits"] = http.ServeLimits(request_timeout=float(sys.argv[2]))
server = http.make_server(backend, "127.0.0.1", 0, **kw)
print(server.server_address[1], flush=True)
server.serve_forever(poll_interval=0.1)
"""


class Child:
    def __init__(self, store: Path, now: str, mem_mb: int, deadline: float):
        self.store, self.now, self.mem_mb, self.deadline = store, now, mem_mb, deadline
        self.proc: subprocess.Popen[str] | None = None
        self.port = 0
        self.peak_kb = 0
        self.restarts = 0

    def start(self) -> None:
        limit = self.mem_mb * 1024 * 1024

        def cap() -> None:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

        self.proc = subprocess.Popen([sys.executable, "-c", SERVER, str(self.store), str(self.deadline), self.now],
                                     stdout=subprocess.PIPE, text=True, preexec_fn=cap)  # fmt: skip
        self.port = int(self.proc.stdout.readline())  # type: ignore[union-attr]

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def sample(self) -> None:
        if not self.alive():
            return
        try:
            text = Path(f"/proc/{self.proc.pid}/status").read_text()  # type: ignore[union-attr]
        except OSError:
            return
        for line in text.splitlines():
            if line.startswith("VmHWM:"):
                self.peak_kb = max(self.peak_kb, int(line.split()[1]))

    def restart(self) -> None:
        self.sample()
        self.stop()
        self.restarts += 1
        self.start()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


def _store(case: str | None, tmp: Path) -> tuple[Path, str]:
    """(store file, its `now`): the hostile fuzz store, or a corpus case's cached build."""
    if case is None:
        from pytest_soclab.store.embedded import build_database

        store = tmp / "fuzz.duckdb"
        build_database(DOCS, store)
        return store, "2024-05-02T12:30:00"
    from pytest_soclab.sim.cases import CaseLibrary

    built = CaseLibrary(Path("corpus"), Path(".soclab-cache")).get(case)
    assert built.db_path is not None, f"case {case} has no built store"
    now = built.now()
    return built.db_path, (now.isoformat() if now is not None else "2024-05-02T12:30:00")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--requests", type=int, default=2400)
    ap.add_argument("--seed", type=int, default=19)
    ap.add_argument("--timeout", type=float, default=10.0, help="client timeout per request (s)")
    ap.add_argument("--slow", type=float, default=2.0, help="an answer after this many seconds is slow")
    ap.add_argument("--deadline", type=float, default=5.0, help="the server's per-request deadline (s), when it has one")
    ap.add_argument("--mem-limit-mb", type=int, default=3072)
    ap.add_argument("--case", default=None, help="serve this case of ./corpus instead of the small hostile store")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        store, now = _store(args.case, Path(tmp))
        child = Child(store, now, args.mem_limit_mb, args.deadline)
        child.start()
        counts: dict[str, Counter[str]] = {c: Counter() for c in CLASSES}
        latencies: list[float] = []
        started = time.perf_counter()
        done = 0
        # a run stopped from outside (timeout, Ctrl-C) still reports what it measured
        signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
        try:
            for cls, req in requests(args.seed, args.requests):
                t0 = time.perf_counter()
                status, body = send(child.port, req, args.timeout)
                took = time.perf_counter() - t0
                outcome = classify(status, body)
                if not child.alive():
                    outcome = "killed"
                elif outcome in ("ok", "4xx") and took > args.slow:
                    outcome = "slow"
                counts[cls][outcome] += 1
                latencies.append(took)
                child.sample()
                done += 1
                if outcome in ("killed", "dropped"):
                    child.restart()  # a dead or stuck server would fail every request after it
        except KeyboardInterrupt:
            print(f"stopped after {done} of {args.requests} requests")
        finally:
            child.sample()
            child.stop()
        wall = time.perf_counter() - started
    outcomes = ["ok", "4xx", "5xx", "bad_shape", "dropped", "slow", "killed"]
    print(f"store: {args.case or 'the hostile fuzz store'}")
    print(f"{done} requests, seed {args.seed}, {wall:.0f} s; server restarts {child.restarts}")
    print(f"{'class':14}" + "".join(f"{o:>10}" for o in outcomes))
    for cls, c in counts.items():
        print(f"{cls:14}" + "".join(f"{c[o]:>10}" for o in outcomes))
    total = Counter()
    for c in counts.values():
        total.update(c)
    print(f"{'total':14}" + "".join(f"{total[o]:>10}" for o in outcomes))
    xs = sorted(latencies)
    p99 = xs[min(len(xs) - 1, int(0.99 * len(xs)))] if xs else 0.0
    print(f"p50 {xs[len(xs) // 2]:.3f} s, p99 {p99:.3f} s, max {xs[-1]:.3f} s; server peak RSS {child.peak_kb / 1024:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
