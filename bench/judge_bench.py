"""Judge speed: the rules judge and the LLM judge's own work (prompt, grounding, cache) on a large transcript.

Run: PYTHONPATH=src python bench/judge_bench.py [--calls 40] [--rows 1000]

The transcript is the judge tests' recorded case plus N ES|QL calls of background rows (12 columns each),
so that the grounding index has real bulk to scan.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "judge"))

from fake_models import HonestFake  # noqa: E402
from judge_case import THOROUGH_MD, Calls, task, thorough_calls  # noqa: E402

from pytest_soclab.judge import LLMJudge, RulesJudge  # noqa: E402
from pytest_soclab.judge.grounding import Retrieved  # noqa: E402
from pytest_soclab.models.report import AgentReport  # noqa: E402


def big_transcript(n_calls: int, rows: int) -> list:
    c = Calls()
    c.calls = thorough_calls()
    cols = [("@timestamp", "date"), ("host.name", "keyword"), ("host.ip", "ip"), ("process.pid", "long"),
            ("process.executable", "keyword"), ("process.command_line", "keyword"), ("user.name", "keyword"),
            ("source.ip", "ip"), ("destination.ip", "ip"), ("destination.port", "long"), ("event.action", "keyword"),
            ("message", "text")]
    for k in range(n_calls):
        data = [[f"2024-05-14T0{r % 10}:00:{r % 60:02d}Z", f"host-{r % 40:02d}", f"10.20.{r % 250}.{k % 250}", 1000 + r,
                 f"/usr/bin/tool{r % 17}", f"/usr/bin/tool{r % 17} --flag {r}", f"user{r % 23}",
                 f"10.30.{k % 250}.{r % 250}", f"172.16.{r % 250}.{k % 250}", 443, "exec",
                 f"background event {k}-{r} nothing to see"] for r in range(rows)]
        c.esql(f"FROM logs-endpoint.events.process-* | WHERE host.name LIKE \"host-*\" | LIMIT {rows}", cols, data)
    return c.calls


def timed(fn, repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=40)
    ap.add_argument("--rows", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    calls = big_transcript(a.calls, a.rows)
    size = sum(len(json.dumps(c.result)) for c in calls if c.result is not None)
    report = AgentReport(markdown=THOROUGH_MD)
    t = task()
    rules = RulesJudge()
    index = timed(lambda: Retrieved(calls), a.repeat)
    r = timed(lambda: rules.judge(t, report, calls), a.repeat)
    small = timed(lambda: rules.judge(t, report, thorough_calls()), a.repeat * 4)
    with tempfile.TemporaryDirectory() as d:
        llm = LLMJudge(HonestFake(), cache_dir=d)
        first = timed(lambda: llm.judge(t, report, calls), 1)
        cached = timed(lambda: llm.judge(t, report, calls), a.repeat)
    print(f"transcript: {len(calls)} calls, {a.calls * a.rows + 30} documents, {size / 1e6:.1f} MB of results")
    print(f"grounding index build      median {statistics.median(index):8.1f} ms")
    print(f"rules judge, large         median {statistics.median(r):8.1f} ms")
    print(f"rules judge, 11 calls      median {statistics.median(small):8.1f} ms")
    print(f"llm judge (fake), uncached        {first[0]:8.1f} ms")
    print(f"llm judge (fake), cached   median {statistics.median(cached):8.1f} ms")


if __name__ == "__main__":
    main()
