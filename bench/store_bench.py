"""Benchmark of the embedded store: load rate, memory, and the latency of a fixed mix of
investigation queries (Query DSL and ES|QL), side by side with a plain Python scan of the
same documents in the same run.

    python bench/store_bench.py --sizes 100000 1000000
    python bench/store_bench.py --sizes 1000000 --baseline-src OLD/src [--source case-06-capstone]
    python bench/store_bench.py --sizes 1000000 --floor --rounds 3   # load paths and DuckDB's own floor

Each store query runs `--repeat` times after a warm-up; the mix's median and p95 are over all
those runs. The speed-up of a query is the plain scan's median time over the store's median.
RSS is measured in a fresh process that only opens the store and runs the mix.
"""

from __future__ import annotations

import argparse
import datetime as dt
import ipaddress
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

PROC = "logs-endpoint.events.process-default"
CONN = "logs-zeek.conn-default"
AUTH = "logs-system.auth-default"
START = dt.datetime(2024, 5, 1, tzinfo=dt.timezone.utc)
SPAN_S = 7 * 86400
PROCESS_NAMES = [
    "bash", "sshd", "python3", "curl", "nginx", "java", "systemd", "cron", "sh", "powershell.exe", "cmd.exe",
    "wget", "node", "postgres", "mysqld", "dockerd", "containerd", "kubelet", "sudo", "su", "ls", "cat", "grep",
    "awk", "sed", "tar", "gzip", "scp", "rsync", "nc", "perl", "ruby", "php-fpm", "httpd", "chrome.exe",
    "explorer.exe", "svchost.exe", "lsass.exe", "winlogon.exe", "rundll32.exe", "regsvr32.exe", "mshta.exe",
    "wmic.exe", "schtasks.exe", "certutil.exe", "bitsadmin.exe", "net.exe", "whoami", "id", "uname",
]  # fmt: skip
TAGS = ["suspicious", "admin", "scheduled", "network", "lateral"]
PORTS = [80, 443, 53, 22, 445, 3389, 8080, 8443, 25, 123, 5432, 3306, 6379, 9200, 4444]


def host_ip(h: int) -> str:
    return f"10.1.{h // 250}.{h % 250 + 1}"


def generate(n: int, seed: int = 7) -> Iterator[tuple[str, str, dict[str, Any]]]:
    rng = random.Random(seed)
    externals = [f"{rng.randint(11, 223)}.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}" for _ in range(5000)]
    weights = [1.0 / (k + 1) for k in range(len(PROCESS_NAMES))]
    for i in range(n):
        ts = START + dt.timedelta(seconds=SPAN_S * i / n + rng.random())
        stamp = ts.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ts.microsecond // 1000:03d}Z"
        h = rng.randrange(200)
        host = {"name": f"host-{h:03d}", "ip": [host_ip(h)], "os": {"family": "linux" if h % 3 else "windows"}}
        kind = rng.random()
        if kind < 0.45:
            name = rng.choices(PROCESS_NAMES, weights)[0]
            arg = rng.choice(["-c", "-la", "--help", "/tmp/x", "-enc", "status", "run", "-v"])
            tail = f"job{rng.randrange(1000)}"
            if rng.random() < 0.0005:
                tail = "sekurlsa::logonpasswords mimikatz.exe"
            cmd = f"{name} {arg} {tail}"
            doc: dict[str, Any] = {
                "@timestamp": stamp,
                "event": {"kind": "event", "category": ["process"], "type": ["start"], "action": "exec"},
                "host": host,
                "user": {"name": f"user{rng.randrange(500)}"},
                "process": {"name": name, "pid": rng.randrange(1, 65535), "command_line": cmd, "args": cmd.split(" "),
                            "parent": {"name": rng.choice(["bash", "sshd", "systemd", "explorer.exe"])}},
            }  # fmt: skip
            if rng.random() < 0.1:
                doc["tags"] = rng.sample(TAGS, rng.randint(1, 3))
            yield PROC, f"p{i}", doc
        elif kind < 0.85:
            r = rng.random()
            dst = host_ip(rng.randrange(200)) if r < 0.7 else (rng.choice(externals) if r < 0.99 else f"2001:db8::{rng.randrange(1, 500):x}")
            src = host_ip(h)
            yield CONN, f"c{i}", {
                "@timestamp": stamp,
                "event": {"kind": "event", "category": ["network"], "dataset": "zeek.conn"},
                "host": {"name": host["name"]},
                "source": {"ip": src, "port": rng.randrange(1024, 65535)},
                "destination": {"ip": dst, "port": rng.choice(PORTS)},
                "network": {"transport": "tcp", "bytes": int(rng.lognormvariate(7, 2))},
                "related": {"ip": [src, dst]},
            }
        else:
            user = f"user{rng.randrange(500)}"
            src = rng.choice(externals) if rng.random() < 0.3 else host_ip(rng.randrange(200))
            ok = rng.random() < 0.8
            yield AUTH, f"a{i}", {
                "@timestamp": stamp,
                "event": {"kind": "event", "category": ["authentication"], "outcome": "success" if ok else "failure"},
                "host": {"name": host["name"]},
                "user": {"name": user},
                "source": {"ip": src},
                "message": f"{'Accepted' if ok else 'Failed'} password for {user} from {src} port {rng.randrange(1024, 65535)} ssh2",
            }


# ---------------------------------------------------------------------------- the query mix

HOST = "host-042"
WIN_FROM, WIN_TO = "2024-05-03T00:00:00.000Z", "2024-05-03T12:00:00.000Z"


def _g(doc: dict[str, Any], path: str) -> Any:
    cur: Any = doc
    for part in path.split("."):
        if not isinstance(cur, dict):
            return None
        cur = cur.get(part)
    return cur


def mix(suspect_ip: str) -> list[dict[str, Any]]:
    """(name, language, how to run it on the store, the same question as a plain Python scan)."""

    def scan_host_window(docs: list[Any]) -> Any:
        hits = [d for s, _, d in docs if s == PROC and d["host"]["name"] == HOST and WIN_FROM <= d["@timestamp"] < WIN_TO]
        hits.sort(key=lambda d: d["@timestamp"], reverse=True)
        return len(hits)

    def scan_term(docs: list[Any]) -> Any:
        return sum(1 for s, _, d in docs if s == PROC and d["process"]["name"] == "curl")

    def scan_wildcard(docs: list[Any]) -> Any:
        return sum(1 for s, _, d in docs if s == PROC and "mimikatz" in d["process"]["command_line"])

    net = ipaddress.ip_network("10.1.0.0/16")

    def scan_cidr(docs: list[Any]) -> Any:
        return sum(1 for s, _, d in docs if s == AUTH and ipaddress.ip_address(d["source"]["ip"]) in net)

    def scan_by_dest(docs: list[Any]) -> Any:
        c = Counter(d["destination"]["ip"] for s, _, d in docs if s == CONN)
        return len(c.most_common(10))

    def scan_distinct(docs: list[Any]) -> Any:
        users: dict[str, set[str]] = defaultdict(set)
        for s, _, d in docs:
            if s == AUTH and d["event"]["outcome"] == "failure":
                users[d["host"]["name"]].add(d["user"]["name"])
        return len(users)

    def scan_top_hits(docs: list[Any]) -> Any:
        last: dict[str, dict[str, Any]] = {}
        for s, _, d in docs:
            if s == PROC:
                h = d["host"]["name"]
                if h not in last or d["@timestamp"] > last[h]["@timestamp"]:
                    last[h] = d
        return len(sorted(last, key=lambda k: -1)[:10])

    def scan_histogram(docs: list[Any]) -> Any:
        return len(Counter(d["@timestamp"][:13] for s, _, d in docs if s == AUTH and d["event"]["outcome"] == "failure"))

    def scan_mv(docs: list[Any]) -> Any:
        return sum(1 for s, _, d in docs if s == PROC and "lateral" in (d.get("tags") or []))

    def scan_pivot(docs: list[Any]) -> Any:
        hosts = {d["host"]["name"] for s, _, d in docs if s == CONN and d["destination"]["ip"] == suspect_ip}
        c = Counter(d["process"]["name"] for s, _, d in docs if s == PROC and d["host"]["name"] in hosts)
        return len(c)

    def scan_failed_text(docs: list[Any]) -> Any:
        return sum(1 for s, _, d in docs if s == AUTH and "failed" in d["message"].lower().split())

    host_window_dsl = {"query": {"bool": {"filter": [{"term": {"host.name": HOST}},
                       {"range": {"@timestamp": {"gte": WIN_FROM, "lt": WIN_TO}}}]}},
                       "sort": [{"@timestamp": "desc"}], "size": 100}  # fmt: skip

    def pivot_store(b: Any) -> Any:
        first = b.esql_query(f'FROM {CONN} | WHERE destination.ip == "{suspect_ip}" | STATS c = COUNT(*) BY host.name')
        hosts = [row[1] for row in first["values"]]
        second = b.es_search(PROC, {"size": 0, "query": {"terms": {"host.name": hosts}},
                                    "aggs": {"p": {"terms": {"field": "process.name", "size": 100}}}})  # fmt: skip
        return second

    return [
        {"name": "host+window sorted (DSL)", "lang": "dsl", "run": lambda b: b.es_search(PROC, host_window_dsl), "scan": scan_host_window},
        {"name": "host+window sorted (ES|QL)", "lang": "esql", "run": lambda b: b.esql_query(
            f'FROM {PROC} | WHERE host.name == "{HOST}" AND @timestamp >= "{WIN_FROM}" AND @timestamp < "{WIN_TO}" '
            f"| SORT @timestamp DESC | LIMIT 100"), "scan": scan_host_window},
        {"name": "term process.name (DSL)", "lang": "dsl", "run": lambda b: b.es_search(PROC, {"query": {"term": {"process.name": "curl"}}, "size": 100}), "scan": scan_term},
        {"name": "term process.name (ES|QL)", "lang": "esql", "run": lambda b: b.esql_query(
            f'FROM {PROC} | WHERE process.name == "curl" | LIMIT 100'), "scan": scan_term},
        {"name": "wildcard command_line (DSL)", "lang": "dsl", "run": lambda b: b.es_search(PROC, {"query": {"wildcard": {"process.command_line": "*mimikatz*"}}}), "scan": scan_wildcard},
        {"name": "LIKE command_line (ES|QL)", "lang": "esql", "run": lambda b: b.esql_query(
            f'FROM {PROC} | WHERE process.command_line LIKE "*mimikatz*" | KEEP @timestamp, host.name, process.command_line'), "scan": scan_wildcard},
        {"name": "CIDR_MATCH source.ip (ES|QL)", "lang": "esql", "run": lambda b: b.esql_query(
            f'FROM {AUTH} | WHERE CIDR_MATCH(source.ip, "10.1.0.0/16") | STATS c = COUNT(*)'), "scan": scan_cidr},
        {"name": "CIDR term source.ip (DSL)", "lang": "dsl", "run": lambda b: b.es_search(AUTH, {"size": 0, "track_total_hits": True, "query": {"term": {"source.ip": "10.1.0.0/16"}}}), "scan": scan_cidr},
        {"name": "STATS count BY destination.ip (ES|QL)", "lang": "esql", "run": lambda b: b.esql_query(
            f"FROM {CONN} | STATS c = COUNT(*) BY destination.ip | SORT c DESC | LIMIT 10"), "scan": scan_by_dest},
        {"name": "terms destination.ip (DSL)", "lang": "dsl", "run": lambda b: b.es_search(CONN, {"size": 0, "aggs": {"d": {"terms": {"field": "destination.ip", "size": 10}}}}), "scan": scan_by_dest},
        {"name": "COUNT_DISTINCT user BY host (ES|QL)", "lang": "esql", "run": lambda b: b.esql_query(
            f'FROM {AUTH} | WHERE event.outcome == "failure" | STATS u = COUNT_DISTINCT(user.name) BY host.name | SORT u DESC | LIMIT 20'), "scan": scan_distinct},
        {"name": "cardinality user per host (DSL)", "lang": "dsl", "run": lambda b: b.es_search(AUTH, {"size": 0, "query": {"term": {"event.outcome": "failure"}},
            "aggs": {"h": {"terms": {"field": "host.name", "size": 20}, "aggs": {"u": {"cardinality": {"field": "user.name"}}}}}}), "scan": scan_distinct},  # fmt: skip
        {"name": "top_hits latest per host (DSL)", "lang": "dsl", "run": lambda b: b.es_search(PROC, {"size": 0, "aggs": {"h": {"terms": {"field": "host.name", "size": 10},
            "aggs": {"last": {"top_hits": {"size": 1, "sort": [{"@timestamp": "desc"}]}}}}}}), "scan": scan_top_hits},  # fmt: skip
        {"name": "date_histogram failures (DSL)", "lang": "dsl", "run": lambda b: b.es_search(AUTH, {"size": 0, "query": {"term": {"event.outcome": "failure"}},
            "aggs": {"t": {"date_histogram": {"field": "@timestamp", "fixed_interval": "1h"}}}}), "scan": scan_histogram},  # fmt: skip
        {"name": "BUCKET 1h failures (ES|QL)", "lang": "esql", "run": lambda b: b.esql_query(
            f'FROM {AUTH} | WHERE event.outcome == "failure" | STATS c = COUNT(*) BY t = BUCKET(@timestamp, 1 hour) | SORT t | LIMIT 1000'), "scan": scan_histogram},
        {"name": "multi-value contains tags (DSL)", "lang": "dsl", "run": lambda b: b.es_search(PROC, {"query": {"term": {"tags": "lateral"}}, "size": 20}), "scan": scan_mv},
        {"name": "multi-value contains tags (ES|QL)", "lang": "esql", "run": lambda b: b.esql_query(
            f'FROM {PROC} | WHERE MV_CONTAINS(tags, "lateral") | KEEP @timestamp, host.name, tags | LIMIT 20'), "scan": scan_mv},
        {"name": "match failed password (DSL)", "lang": "dsl", "run": lambda b: b.es_search(AUTH, {"query": {"match": {"message": "failed"}}, "size": 10}), "scan": scan_failed_text},
        {"name": "two-step pivot dest.ip -> hosts -> processes", "lang": "both", "run": pivot_store, "scan": scan_pivot},
    ]


# ---------------------------------------------------------------------------- measurement


def rss_mb() -> tuple[float, float]:
    cur = peak = 0.0
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                cur = int(line.split()[1]) / 1024
            elif line.startswith("VmHWM:"):
                peak = int(line.split()[1]) / 1024
    return cur, peak


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def timed_cpu(fn: Callable[[], Any]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process, DuckDB's threads included)."""
    t0, c0 = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - t0, time.process_time() - c0


def probe(path: str, suspect_ip: str, repeat: int) -> dict[str, Any]:
    """Run in a fresh process: open the store, run the mix, report latencies and RSS."""
    from pytest_soclab.store.embedded import EmbeddedBackend

    t_open, backend = timed(lambda: EmbeddedBackend.open(Path(path)))
    opens = []
    for _ in range(20):
        t, b2 = timed(lambda: EmbeddedBackend.open(Path(path), overlay=[(PROC, "planted", {"@timestamp": "2024-05-03T01:00:00Z", "host": {"name": HOST}})]))
        b2.close()
        opens.append(t)
    results = []
    for q in mix(suspect_ip):
        q["run"](backend)  # warm-up
        both = [timed_cpu(lambda q=q: q["run"](backend)) for _ in range(repeat)]
        results.append({"name": q["name"], "lang": q["lang"], "runs": [w for w, _ in both], "cpu": [c for _, c in both]})
    cur, peak = rss_mb()
    with open("/proc/loadavg") as fh:
        load = fh.read().split()[0]
    return {"first_open_s": t_open, "loadavg": load, "open_overlay_ms_median": statistics.median(opens) * 1000,
            "queries": results, "rss_mb": cur, "peak_rss_mb": peak}  # fmt: skip


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    k = max(0, min(len(s) - 1, math.ceil(p / 100 * len(s)) - 1))
    return s[k]


def run_size(n: int, repeat: int, scan_repeat: int, workdir: Path) -> dict[str, Any]:
    from pytest_soclab.store.embedded import build_database

    t_gen, docs = timed(lambda: list(generate(n)))
    path = workdir / f"bench-{n}.duckdb"
    t_load, info = timed(lambda: build_database(docs, path))
    # the most contacted external destination: the pivot's starting point
    ext = Counter(d["destination"]["ip"] for s, _, d in docs if s == CONN and not d["destination"]["ip"].startswith("10."))
    suspect_ip = ext.most_common(1)[0][0]
    out = subprocess.run(
        [sys.executable, __file__, "--probe", str(path), "--suspect", suspect_ip, "--repeat", str(repeat)],
        capture_output=True, text=True, check=True, env={**os.environ},
    )  # fmt: skip
    probed = json.loads(out.stdout)
    scans = []
    for q in mix(suspect_ip):
        runs = [timed(lambda q=q: q["scan"](docs))[0] for _ in range(scan_repeat)]
        scans.append(statistics.median(runs))
    store_medians = [statistics.median(r["runs"]) for r in probed["queries"]]
    all_runs = [t for r in probed["queries"] for t in r["runs"]]
    speedups = [s / m for s, m in zip(scans, store_medians)]
    return {
        "docs": n,
        "generate_s": round(t_gen, 2),
        "load_s": round(t_load, 2),
        "load_docs_per_s": round(n / t_load),
        "file_mb": round(path.stat().st_size / 2**20, 1),
        "open_overlay_ms_median": round(probed["open_overlay_ms_median"], 2),
        "serve_rss_mb": round(probed["rss_mb"]),
        "serve_peak_rss_mb": round(probed["peak_rss_mb"]),
        "mix_median_ms": round(statistics.median(all_runs) * 1000, 2),
        "mix_p95_ms": round(pct(all_runs, 95) * 1000, 2),
        "mix_median_cpu_ms": round(statistics.median([c for r in probed["queries"] for c in r["cpu"]]) * 1000, 2),
        "mix_p95_cpu_ms": round(pct([c for r in probed["queries"] for c in r["cpu"]], 95) * 1000, 2),
        "loadavg_during_mix": probed["loadavg"],
        "geomean_speedup": round(math.exp(sum(math.log(s) for s in speedups) / len(speedups)), 1),
        "queries": [
            {"name": r["name"], "store_ms": round(m * 1000, 2), "cpu_ms": round(statistics.median(r["cpu"]) * 1000, 2),
             "scan_ms": round(s * 1000, 1), "speedup": round(s / m, 1)}
            for r, m, s in zip(probed["queries"], store_medians, scans)
        ],
        "info": {k: v["docs"] for k, v in info["indices"].items()},
    }


def corpus_docs(n: int, case: str) -> list[tuple[str, str, dict[str, Any]]]:
    """About n documents of a corpus case (time-ordered, sub-objects shared between documents)."""
    from pytest_soclab.corpus.generate import generate as corpus_generate
    from pytest_soclab.corpus.recipe import find_case, load_case

    recipe = load_case(find_case(Path(__file__).resolve().parents[1] / "corpus", case))
    per_scale = sum(1 for _ in corpus_generate(recipe, scale=1.0))
    return list(corpus_generate(recipe, scale=n / max(1, per_scale)))


def load_probe(n: int, source: str, repeat: int) -> dict[str, Any]:
    """Run in a fresh process (whose PYTHONPATH picks the code measured): build `repeat` times."""
    import gc

    from pytest_soclab.store.embedded import build_database

    docs = list(generate(n)) if source == "bench" else corpus_docs(n, source)
    gc.collect()
    runs = []
    with tempfile.TemporaryDirectory(prefix="soclab-load-") as tmp:
        for i in range(repeat):
            with open("/proc/loadavg") as fh:
                load = float(fh.read().split()[0])
            path = Path(tmp) / f"s{i}.duckdb"
            t0, c0 = time.perf_counter(), time.process_time()
            build_database(docs, path)
            runs.append({"wall": time.perf_counter() - t0, "cpu": time.process_time() - c0, "load": load})
            path.unlink()
    return {"docs": len(docs), "runs": runs}


def compare_load(n: int, source: str, baseline: str, rounds: int) -> None:
    """Old code (a source tree given by --baseline-src) against this one, alternating, same machine."""
    here = str(Path(__file__).resolve().parents[1] / "src")
    figures: dict[str, list[dict[str, float]]] = {"baseline": [], "current": []}
    docs = 0
    for _ in range(rounds):
        for label, src in (("baseline", baseline), ("current", here)):
            out = subprocess.run(
                [sys.executable, __file__, "--load-probe", str(n), "--source", source],
                capture_output=True, text=True, check=True, env={**os.environ, "PYTHONPATH": src},
            )  # fmt: skip
            probed = json.loads(out.stdout)
            docs = probed["docs"]
            figures[label] += probed["runs"]
    print_load_table(f"load {docs:,} documents ({source}), {rounds} alternating rounds", docs, figures)


def print_load_table(title: str, docs: int, figures: dict[str, list[dict[str, float]]]) -> None:
    """Medians of timed builds ({label: [{wall, cpu, load}]}), one line per label."""
    width = max(len(label) for label in figures)
    print(f"\n== {title} ==")
    print(f"  {'':{width}s} {'wall s':>7s} {'docs/s':>9s} {'CPU s':>6s} {'docs/CPU-s':>11s} {'load avg':>9s}")
    for label, runs in figures.items():
        wall = statistics.median(r["wall"] for r in runs)
        cpu = statistics.median(r["cpu"] for r in runs)
        load = statistics.median(r["load"] for r in runs)
        print(f"  {label:{width}s} {wall:7.2f} {docs / wall:9,.0f} {cpu:6.2f} {docs / cpu:11,.0f} {load:9.2f}")
    sys.stdout.flush()


FLOOR_KINDS = {
    "dicts": "soclab: build_database, dicts in memory",
    "ndjson": "soclab: build_database, NDJSON files",
    "ndjson-python": "soclab: NDJSON files, Python reader forced",
    "native": "DuckDB alone: read_json + sorted write",
    "write": "DuckDB alone: sorted write of parsed rows",
}


def floor_probe(kind: str, n: int, folder: str) -> dict[str, Any]:
    """One build in a fresh process. `dicts`: build_database from Python dicts made beforehand
    (untimed, as in the mix). `ndjson`: from the same documents as `{"_id", "_source"}` NDJSON
    files (what `soclab corpus build` writes), read by DuckDB where the native reader takes them;
    `ndjson-python`: the same files read line by line in Python. `native`: DuckDB alone parses the
    documents (bare sources) and writes each stream as a table sorted by @timestamp (no mapping,
    no flattening, no conversion). `write`: DuckDB alone writes the already parsed and typed rows
    (in memory, untimed) to the file, sorted: the sort and the compressed write, nothing else."""
    import duckdb

    from pytest_soclab.store import native
    from pytest_soclab.store.embedded import build_database

    bare = sorted((Path(folder) / "bare").glob("*.ndjson"))
    hits = {f.stem: f for f in sorted((Path(folder) / "hits").glob("*.ndjson"))}
    with tempfile.TemporaryDirectory(prefix="soclab-floor-") as tmp:
        path = Path(tmp) / "store.duckdb"
        docs: list[Any] = list(generate(n)) if kind == "dicts" else []
        mem = None
        if kind == "write":
            mem = duckdb.connect(":memory:")
            for i, f in enumerate(bare):
                mem.execute(f"CREATE TABLE t{i} AS SELECT * FROM read_json('{f}', format='newline_delimited')")
        if kind == "ndjson-python":
            native.read_native = lambda *a, **k: False
        with open("/proc/loadavg") as fh:
            load = float(fh.read().split()[0])
        t0, c0 = time.perf_counter(), time.process_time()
        if kind == "dicts":
            build_database(docs, path)
        elif kind in ("ndjson", "ndjson-python"):
            info = build_database((), path, files=hits)
            assert all(i["native"] == (kind == "ndjson") for i in info["indices"].values()), info
        elif kind == "native":
            con = duckdb.connect(str(path))
            for i, f in enumerate(bare):
                con.execute(f"CREATE TABLE t{i} AS SELECT * FROM read_json('{f}', format='newline_delimited') "
                            'ORDER BY "@timestamp"')  # fmt: skip
            con.execute("CHECKPOINT")
            con.close()
        else:
            assert mem is not None
            mem.execute(f"ATTACH '{path}' AS f")
            for i in range(len(bare)):
                mem.execute(f'CREATE TABLE f.t{i} AS SELECT * FROM t{i} ORDER BY "@timestamp"')
            mem.execute("DETACH f")
        return {"wall": time.perf_counter() - t0, "cpu": time.process_time() - c0, "load": load}


def engine_floor(n: int, rounds: int, kinds: list[str]) -> None:
    """soclab's load paths next to what DuckDB alone needs for the same documents, alternating."""
    with tempfile.TemporaryDirectory(prefix="soclab-ndjson-") as tmp:
        (Path(tmp) / "bare").mkdir()
        (Path(tmp) / "hits").mkdir()
        handles: dict[str, Any] = {}
        for stream, doc_id, doc in generate(n):
            if stream not in handles:
                handles[stream] = (open(Path(tmp) / "bare" / f"{stream}.ndjson", "w"),
                                   open(Path(tmp) / "hits" / f"{stream}.ndjson", "w"))  # fmt: skip
            bare, hit = handles[stream]
            bare.write(json.dumps(doc) + "\n")
            hit.write(json.dumps({"_id": doc_id, "_source": doc}) + "\n")
        for pair in handles.values():
            for fh in pair:
                fh.close()
        figures: dict[str, list[dict[str, float]]] = {k: [] for k in kinds}
        for _ in range(rounds):
            for kind in kinds:
                out = subprocess.run(
                    [sys.executable, __file__, "--floor-probe", kind, "--sizes", str(n), "--ndjson", tmp],
                    capture_output=True, text=True, check=True, env={**os.environ},
                )  # fmt: skip
                figures[kind].append(json.loads(out.stdout))
    labelled = {FLOOR_KINDS[kind]: runs for kind, runs in figures.items()}
    print_load_table(f"load, {n:,} documents, {rounds} alternating rounds", n, labelled)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--scan-repeat", type=int, default=1)
    ap.add_argument("--probe", help=argparse.SUPPRESS)
    ap.add_argument("--suspect", help=argparse.SUPPRESS)
    ap.add_argument("--json", help="also write the figures to this file")
    ap.add_argument("--baseline-src", help="compare loading with the package in this source tree "
                    "(e.g. an older commit's `src`), alternating runs, then stop")  # fmt: skip
    ap.add_argument("--source", default="bench", help="documents to load: bench (this script's "
                    "generator) or a corpus case id such as case-06-capstone")  # fmt: skip
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds of --baseline-src")
    ap.add_argument("--load-probe", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--floor", nargs="*", choices=sorted(FLOOR_KINDS), metavar="KIND",
                    help="measure soclab's load paths (from dicts, from NDJSON files) next to what DuckDB "
                    f"alone needs for the same documents, then stop; kinds: {', '.join(FLOOR_KINDS)} (default all)")  # fmt: skip
    ap.add_argument("--floor-probe", choices=sorted(FLOOR_KINDS), help=argparse.SUPPRESS)
    ap.add_argument("--ndjson", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.floor_probe:
        print(json.dumps(floor_probe(args.floor_probe, args.sizes[0], args.ndjson)))
        return
    if args.floor is not None:
        for n in args.sizes:
            engine_floor(n, args.rounds, args.floor or list(FLOOR_KINDS))
        return
    if args.probe:
        print(json.dumps(probe(args.probe, args.suspect, args.repeat)))
        return
    if args.load_probe:
        print(json.dumps(load_probe(args.load_probe, args.source, 1)))
        return
    if args.baseline_src:
        for n in args.sizes:
            compare_load(n, args.source, args.baseline_src, args.rounds)
        return
    results = []
    with tempfile.TemporaryDirectory(prefix="soclab-bench-") as tmp:
        for n in args.sizes:
            res = run_size(n, args.repeat, args.scan_repeat, Path(tmp))
            results.append(res)
            print(f"\n== {n:,} events ==")
            for k, v in res.items():
                if k not in ("queries", "info"):
                    print(f"  {k:24s} {v}")
            print(f"  {'query':46s} {'store ms':>9s} {'cpu ms':>8s} {'scan ms':>9s} {'x':>7s}")
            for q in res["queries"]:
                print(f"  {q['name']:46s} {q['store_ms']:9.2f} {q['cpu_ms']:8.2f} {q['scan_ms']:9.1f} {q['speedup']:7.1f}")
            sys.stdout.flush()
    if len(results) >= 2:
        a, b = results[0], results[-1]
        print(f"\nscaling {a['docs']:,} -> {b['docs']:,} ({b['docs'] / a['docs']:.0f}x data): median latency x"
              f"{b['mix_median_ms'] / a['mix_median_ms']:.1f}, p95 x{b['mix_p95_ms'] / a['mix_p95_ms']:.1f}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
