"""Full-text search and the HTTP path at scale: the same query mix timed in process (the
backend's own calls) and through `soclab serve` with the official Python client, as an agent
sees it, over documents whose messages are as long as real Windows telemetry's.

    python bench/store_http_bench.py --size 1000000 --repeat 15

Messages: the bench's own events (bench/store_bench.py) with a Windows-event-like message of
log-normal length (median ~600 characters, a tail past 3,000), drawn from a fixed vocabulary.
Each query runs --repeat times after a warm-up; medians and p95 are over those runs.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from store_bench import AUTH, CONN, PROC, generate  # noqa: E402 - the bench's own generator

WORDS = ("an account was successfully logged on subject security id account name domain logon type process "
         "information new logon network source address port authentication package negotiate kerberos ntlm "
         "workstation key length impersonation level elevated token restricted admin mode virtual linked "
         "object server handle access request privileges service scheduled task created registry value "
         "changed audit policy failure reason unknown user name or bad password credential manager").split()  # fmt: skip
_SERVE = "import sys; from pytest_soclab.cli import main; sys.exit(main(sys.argv[1:]))"


def long_message(rng: random.Random) -> str:
    target = int(min(6000, max(80, rng.lognormvariate(6.4, 0.6))))
    words: list[str] = []
    size = 0
    while size < target:
        w = rng.choice(WORDS)
        words.append(w)
        size += len(w) + 1
    return " ".join(words)


def documents(n: int) -> Iterator[tuple[str, str, dict[str, Any]]]:
    rng = random.Random(11)
    for index, doc_id, doc in generate(n):
        if index == PROC:
            doc["message"] = long_message(rng)
        yield index, doc_id, doc


Body = dict[str, Any] | Callable[[int], dict[str, Any]]  # a body, or one per run from a counter


def dsl_mix() -> list[tuple[str, str, Body]]:
    """(name, index, search body): the text queries, then the shapes the issue found slowest."""
    return [
        ("match message", PROC, {"query": {"match": {"message": "kerberos"}}, "size": 10}),
        ("match_phrase message", PROC, {"query": {"match_phrase": {"message": "bad password"}}, "size": 10}),
        ("query_string message", PROC, {"query": {"query_string": {"query": "message:(elevated AND token)"}}, "size": 10}),
        ("simple_query_string", PROC, {"query": {"simple_query_string": {"query": "\"audit policy\" +failure",
                                                                          "fields": ["message"]}}, "size": 10}),  # fmt: skip
        ("wildcard command_line, exact total", PROC, {"query": {"wildcard": {"process.command_line": "*tmp*"}},
                                                       "track_total_hits": True, "size": 10}),  # fmt: skip
        # a pattern no earlier run asked for: nothing of it is cached (the bench's tails are job0-job999)
        ("wildcard, a new pattern each run", PROC, lambda n: {
            "query": {"wildcard": {"process.command_line": f"*job{n % 1000}*"}}, "track_total_hits": True, "size": 10}),
        ("cardinality destination.ip", CONN, {"size": 0, "aggs": {"d": {"cardinality": {"field": "destination.ip"}}}}),
        ("host plus one day, sorted", PROC, {"query": {"bool": {"filter": [
            {"term": {"host.name": "host-007"}},
            {"range": {"@timestamp": {"gte": "2024-05-02T00:00:00Z", "lt": "2024-05-03T00:00:00Z"}}}]}},
            "sort": [{"@timestamp": "desc"}], "size": 20}),  # fmt: skip
        ("failed logons by source", AUTH, {"size": 0, "query": {"match": {"message": "Failed"}},
                                           "aggs": {"s": {"terms": {"field": "source.ip", "size": 10}}}}),  # fmt: skip
    ]


ESQL_MIX = [
    ("COUNT_DISTINCT destination.ip", f"FROM {CONN} | STATS n = COUNT_DISTINCT(destination.ip)"),
    ("ports by source", f"FROM {CONN} | STATS ports = COUNT_DISTINCT(destination.port) BY source.ip | SORT ports DESC | LIMIT 10"),
    ("top processes", f"FROM {PROC} | STATS c = COUNT(*) BY process.name | SORT c DESC | LIMIT 10"),
    ("match() in ES|QL", f'FROM {PROC} | WHERE MATCH(message, "impersonation") | STATS c = COUNT(*)'),
]


def timed(fn: Callable[[], Any], repeat: int) -> list[float]:
    fn()  # warm-up
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return out


def p95(values: list[float]) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(0.95 * (len(s) - 1))))]


def run(size: int, repeat: int, db: Path | None = None, only: str | None = None) -> dict[str, Any]:
    from elasticsearch import Elasticsearch

    from pytest_soclab.store import EmbeddedBackend, build_database

    path = db or Path(tempfile.mkdtemp(prefix="soclab-http-bench-")) / "bench.duckdb"
    t = time.perf_counter()
    if not path.exists():  # --db: built once, then timed against by several code versions
        build_database(documents(size), path)
    build_s = time.perf_counter() - t
    backend = EmbeddedBackend.open(path)
    proc = subprocess.Popen([sys.executable, "-c", _SERVE, "serve", "--case-db", str(path), "--port", "0"],
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert proc.stderr is not None
    m = re.search(r"(http://[\d.]+:\d+)", proc.stderr.readline())
    if not m:
        proc.kill()
        raise SystemExit("soclab serve did not start")
    es = Elasticsearch(m.group(1), request_timeout=120)
    rows = []
    try:
        runs = itertools.count(1)
        for name, index, body in dsl_mix():
            if only and only not in name:
                continue
            make = body if callable(body) else (lambda n, b=body: b)
            local = timed(lambda: backend.es_search(index, make(next(runs))), repeat)
            wire = timed(lambda: es.search(index=index, body=make(next(runs))), repeat)
            rows.append((name, local, wire))
        for name, query in ESQL_MIX:
            if only and only not in name:
                continue
            local = timed(lambda: backend.esql_query(query), repeat)
            wire = timed(lambda: es.esql.query(query=query), repeat)
            rows.append((name, local, wire))
    finally:
        es.close()
        proc.terminate()
        proc.wait(10)
        backend.close()
    return {"size": size, "build_s": round(build_s, 1), "rows": rows}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--size", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--json", help="also write the figures to this file")
    ap.add_argument("--db", type=Path, help="store file: built if missing, else reused (its --size must match)")
    ap.add_argument("--only", help="time only the queries whose name contains this text")
    args = ap.parse_args()
    res = run(args.size, args.repeat, args.db, args.only)
    print(f"{res['size']:,} events (built in {res['build_s']} s); ms, median / p95 over {args.repeat} runs")
    print(f"| query | in process | through soclab serve (official client) |\n|---|---|---|")
    all_local: list[float] = []
    all_wire: list[float] = []
    for name, local, wire in res["rows"]:
        all_local += local
        all_wire += wire
        print(f"| {name} | {statistics.median(local):.1f} / {p95(local):.1f} | {statistics.median(wire):.1f} / {p95(wire):.1f} |")
    print(f"| **whole mix** | {statistics.median(all_local):.1f} / {p95(all_local):.1f} | "
          f"{statistics.median(all_wire):.1f} / {p95(all_wire):.1f} |")  # fmt: skip
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
