"""The store's 12-query investigation mix (bench/store_bench.py) adapted to Windows and Zeek fields, on a
recorded case: real Sysmon / Security events with long `message` fields and sparse `winlog.event_data.*`
keys, plus `match` / `query_string` on `message`.

    PYTHONPATH=src python bench/recorded_store_bench.py rec-lsass-05-sharpdump --repeat 7 [--cache DIR]

The case is built into the cache on first use (as a benchmark run would) and its build time reported;
each query runs once to warm up, then `--repeat` times; the table gives each query's median and the
mix's median and p95 over all runs.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_soclab.sim.cases import CaseLibrary
from pytest_soclab.store import EmbeddedBackend

SYSMON = "logs-windows.sysmon_operational-default"
SECURITY = "logs-system.security-default"
CONN = "logs-zeek.connection-default"
LSASS = "C:\\Windows\\system32\\lsass.exe"


def mix(host: str, start: str, end: str) -> list[tuple[str, str, Callable[[Any], Any]]]:
    """(name, kind, run): kind "mix" for the 12 queries, "text" for the full-text ones on message."""
    window = {"range": {"@timestamp": {"gte": start, "lte": end}}}
    return [
        ("host+window sorted (DSL)", "mix", lambda b: b.es_search(SYSMON, {"size": 100, "sort": [{"@timestamp": "desc"}],
            "query": {"bool": {"filter": [{"term": {"host.name": host}}, window]}}})),
        ("host+window sorted (ES|QL)", "mix", lambda b: b.esql_query(
            f'FROM {SYSMON} | WHERE host.name == "{host}" AND @timestamp >= "{start}" AND @timestamp <= "{end}" '
            "| SORT @timestamp DESC | LIMIT 100")),
        ("term process.name (DSL)", "mix", lambda b: b.es_search(SYSMON, {"size": 100, "query": {"term": {"process.name": "cmd.exe"}}})),
        ("term process.name (ES|QL)", "mix", lambda b: b.esql_query(f'FROM {SYSMON} | WHERE process.name == "cmd.exe" | LIMIT 100')),
        ("wildcard command_line (DSL)", "mix", lambda b: b.es_search(SYSMON, {"query": {"wildcard": {"process.command_line": "*lsass*"}}})),
        ("LIKE command_line (ES|QL)", "mix", lambda b: b.esql_query(f'FROM {SYSMON} | WHERE process.command_line LIKE "*lsass*" | LIMIT 100')),
        ("term event_data.TargetImage + code (DSL)", "mix", lambda b: b.es_search(SYSMON, {"size": 50, "query": {"bool": {"filter": [
            {"term": {"event.code": "10"}}, {"term": {"winlog.event_data.TargetImage": LSASS}}]}}})),
        ("STATS BY event_data.SourceImage (ES|QL)", "mix", lambda b: b.esql_query(
            f'FROM {SYSMON} | WHERE event.code == "10" | STATS n = COUNT(*) BY winlog.event_data.SourceImage | SORT n DESC | LIMIT 20')),
        ("terms destination.ip (DSL)", "mix", lambda b: b.es_search(CONN, {"size": 0, "aggs": {"d": {"terms": {"field": "destination.ip", "size": 10}}}})),
        ("STATS count BY event.code (ES|QL)", "mix", lambda b: b.esql_query(f"FROM {SECURITY} | STATS n = COUNT(*) BY event.code | SORT n DESC")),
        ("date_histogram process starts (DSL)", "mix", lambda b: b.es_search(SYSMON, {"size": 0, "query": {"term": {"event.code": "1"}},
            "aggs": {"t": {"date_histogram": {"field": "@timestamp", "fixed_interval": "1m"}}}})),
        ("cardinality user per host (DSL)", "mix", lambda b: b.es_search(SYSMON, {"size": 0, "aggs": {"h": {"terms": {"field": "host.name"},
            "aggs": {"u": {"cardinality": {"field": "user.name"}}}}}})),
        ("match message (DSL)", "text", lambda b: b.es_search(SYSMON, {"size": 10, "query": {"match": {"message": "lsass.exe"}}})),
        ("match_phrase message (DSL)", "text", lambda b: b.es_search(SYSMON, {"size": 10, "query": {"match_phrase": {"message": "Process accessed"}}})),
        ("query_string message (DSL)", "text", lambda b: b.es_search(SECURITY, {"size": 10, "query": {"query_string": {
            "query": "message:(logged AND on)"}}})),
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("case", nargs="?", default="rec-lsass-05-sharpdump")
    ap.add_argument("--corpus", type=Path, default=Path("corpus"))
    ap.add_argument("--cache", type=Path, default=Path(".soclab-cache"))
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    t0, c0 = time.perf_counter(), time.process_time()
    case = CaseLibrary(args.corpus, args.cache).get(args.case)
    print(f"case {args.case}: {sum(case.manifest['streams'].values()):,} documents in {len(case.streams)} streams, "
          f"ready in {time.perf_counter() - t0:.1f} s wall / {time.process_time() - c0:.1f} s CPU "
          f"(store file {case.db_path.stat().st_size / 1e6:.1f} MB)")
    backend = EmbeddedBackend.open(case.db_path)
    host = case.estate.hosts[0].name
    start, end = case.window["gte"], case.window["lte"]
    rows: list[tuple[str, str, float, int]] = []
    all_mix: list[float] = []
    for name, kind, run in mix(host, start, end):
        res = run(backend)  # warm-up (and the hit count)
        hits = res.get("hits", {}).get("total", {}).get("value") if "hits" in res else len(res.get("values", []))
        times = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            run(backend)
            times.append((time.perf_counter() - t) * 1000)
        rows.append((name, kind, statistics.median(times), int(hits or 0)))
        if kind == "mix":
            all_mix += times
    print("\n| query | median ms | hits |\n|---|---:|---:|")
    for name, _kind, med, hits in rows:
        print(f"| {name} | {med:.2f} | {hits} |")
    all_mix.sort()
    p95 = all_mix[min(len(all_mix) - 1, int(0.95 * len(all_mix)))]
    print(f"\nmix of 12: median {statistics.median(all_mix):.2f} ms, p95 {p95:.2f} ms; "
          f"full-text on message: max median {max(m for _n, k, m, _h in rows if k == 'text'):.2f} ms")
    backend.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
