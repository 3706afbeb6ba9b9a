"""Stored sources of wide indices (store/sources.py) and the ES|QL columns read from them
(esql/late.py): every answer must be the one the columns give."""

from __future__ import annotations

import dataclasses
import datetime as dt
import random
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_soclab.store import sources
from pytest_soclab.store.embedded import EmbeddedBackend, build_database
from pytest_soclab.store.esql.run import run as esql_run
from pytest_soclab.store.render import build_source

WIDE = "logs-windows.sysmon_operational-default"
WIDE2 = "logs-system.security-default"
NARROW = "logs-zeek.connection-default"
FIELDS = 90  # sparse vendor fields of the wide indices: well over sources.WIDE_COLUMNS


def _wide_doc(rng: random.Random, i: int, extra: str) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "@timestamp": (dt.datetime(2024, 5, 1) + dt.timedelta(seconds=37 * i)).isoformat() + "Z",
        "event": {"code": str(rng.choice([1, 3, 10, 4624])), "category": rng.choice([["process"], ["network", "process"]])},
        "host": {"name": rng.choice(["ws-1", "ws-2", "DC01"]), "ip": rng.sample(["10.0.0.5", "fe80::1", "ff02::fb", "::1"], 2)},
        "process": {"name": rng.choice(["cmd.exe", "powershell.exe", "lsass.exe"]), "pid": rng.randrange(100, 9000),
                    "command_line": f"run {i} --flag"},
        "source": {"ip": rng.choice(["192.168.1.7", "fd00::7", "ffff:ffff::1"]), "port": rng.randrange(1, 65535)},
        "message": f"Process accessed: event {i}\nTargetImage: C:\\Windows\\system32\\lsass.exe",
        "winlog": {"event_data": {}},
        "tags": rng.sample(["a", "b", "c", "d"], rng.randrange(0, 3)),
    }
    if rng.random() < 0.7:
        doc["event"]["duration"] = rng.randrange(0, 10**6)
    if rng.random() < 0.5:
        doc["network"] = {"bytes": rng.random() * 1000, "transport": "tcp"}
    if rng.random() < 0.4:
        doc["file"] = {"path": f"C:\\temp\\f{i}.dll", "created": "2024-05-01T10:00:00.123Z"}
    data = doc["winlog"]["event_data"]
    for k in rng.sample(range(FIELDS), 12):
        data[f"{extra}{k}"] = rng.choice([f"v{k}-{i}", str(rng.randrange(10)), "true"])
    return doc


def _docs() -> list[tuple[str, str, dict[str, Any]]]:
    rng = random.Random(7)
    out = [(WIDE, f"w{i}", _wide_doc(rng, i, "Field")) for i in range(400)]
    out += [(WIDE2, f"s{i}", _wide_doc(rng, i, "Sec")) for i in range(150)]
    out += [(NARROW, f"z{i}", {"@timestamp": f"2024-05-01T10:{i % 60:02d}:00Z", "source": {"ip": "10.0.0.9"},
                              "destination": {"port": i}}) for i in range(50)]  # fmt: skip
    return out


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sources") / "wide.duckdb"
    build_database(_docs(), path)
    return path


def _backend(path: Path, *, stored: bool = True) -> EmbeddedBackend:
    b = EmbeddedBackend.open(path, now=dt.datetime(2024, 5, 2))
    if not stored:  # the same store read from its columns only
        cat = b.engine.catalog
        for name, info in list(cat.indices.items()):
            cat.indices[name] = dataclasses.replace(info, source="")
    return b


def _same(a: dict[str, Any], b: dict[str, Any]) -> None:
    a, b = dict(a), dict(b)
    a.pop("took", None)
    b.pop("took", None)
    assert a == b


def test_wide_indices_keep_sources_and_narrow_ones_do_not(store: Path) -> None:
    b = _backend(store)
    infos = b.engine.catalog.indices
    assert len(infos[WIDE].fields) > sources.WIDE_COLUMNS and infos[WIDE].source
    assert infos[WIDE2].source
    assert len(infos[NARROW].fields) <= sources.WIDE_COLUMNS and not infos[NARROW].source
    rel = b.engine.source_relation(infos[WIDE])
    assert b.engine.query(f"SELECT count(*), count(src) FROM {rel}") == [(400, 400)]


BODIES: list[dict[str, Any]] = [
    {"size": 100, "query": {"term": {"process.name": "cmd.exe"}}},
    {"size": 50, "sort": [{"@timestamp": "desc"}], "query": {"term": {"host.name": "ws-1"}}},
    {"size": 30, "from": 20, "sort": [{"event.duration": {"order": "asc", "missing": "_first"}}]},
    {"size": 30, "sort": [{"event.duration": {"order": "desc", "missing": "_last"}}, {"@timestamp": "asc"}]},
    {"size": 20, "sort": [{"network.bytes": "asc"}], "search_after": [500.0]},
    {"size": 25, "_source": ["process.*", "host.name"], "query": {"match": {"message": "lsass.exe"}}},
    {"size": 25, "_source": {"includes": ["winlog.event_data.*"], "excludes": ["winlog.event_data.Field1*"]}},
    {"size": 25, "_source": {"excludes": ["message", "host"]}, "sort": [{"source.ip": "desc"}]},
    {"size": 10, "_source": False, "query": {"exists": {"field": "file.path"}}},
    {"size": 10, "fields": ["host.ip", "@timestamp"], "query": {"match_phrase": {"message": "Process accessed"}}},
    {"size": 60, "track_total_hits": True, "query": {"wildcard": {"process.command_line": "*1*"}}},
    {"size": 0, "aggs": {"h": {"terms": {"field": "host.name"}, "aggs": {"top": {"top_hits": {"size": 3}}}}}},
    {"size": 0, "aggs": {"h": {"terms": {"field": "host.name"}, "aggs": {"top": {"top_hits": {
        "size": 2, "_source": ["source.*"], "sort": [{"event.duration": "desc"}, {"@timestamp": "asc"}]}}}}}},
]


@pytest.mark.parametrize("body", BODIES, ids=range(len(BODIES)))
@pytest.mark.parametrize("index", [WIDE, f"{WIDE},{WIDE2}", "logs-*"])
def test_search_answers_as_the_columns_do(store: Path, body: dict[str, Any], index: str) -> None:
    _same(_backend(store).es_search(index, body), _backend(store, stored=False).es_search(index, body))


@pytest.mark.parametrize("order", ["asc", "desc"])
def test_missing_sort_values_order_as_an_extreme_value_would(store: Path, order: str) -> None:
    """`missing: _last` sorts on the bare key with NULLS LAST; a value beyond every real one must
    give the same order (the coalesce form, still used for an explicit missing value)."""
    b = _backend(store)
    beyond = 10**12 if order == "asc" else -1
    ids = []
    for missing in ("_last", beyond):
        res = b.es_search(WIDE, {"size": 400, "_source": False, "sort": [{"event.duration": {"order": order, "missing": missing}}]})
        ids.append([h["_id"] for h in res["hits"]["hits"]])
    assert ids[0] == ids[1]
    assert len(ids[0]) == 400


_PATHS = ["process", "process.name", "host.*", "winlog.event_data.Field1*", "*.ip", "message", "event", "nosuch", "*"]


@settings(max_examples=60, deadline=None)
@given(includes=st.lists(st.sampled_from(_PATHS), max_size=3), excludes=st.lists(st.sampled_from(_PATHS), max_size=2),
       doc=st.integers(min_value=0, max_value=399))  # fmt: skip
def test_source_filtering_of_a_stored_source_is_build_sources(store: Path, includes: list[str], excludes: list[str],
                                                              doc: int) -> None:  # fmt: skip
    b = _backend(store)
    info = b.engine.catalog.indices[WIDE]
    stored = sources.read_stored(b.engine.query, b.engine.source_relation(info), [doc])[doc]
    names = list(info.fields)
    row = b.engine.query(f"SELECT {', '.join(sources.select_columns(info))} FROM {b.engine.relation(info)} WHERE _doc = {doc}")[0]
    expected = build_source(info, dict(zip(names, row)), includes, excludes)
    got = sources.filter_source(info, stored, includes, excludes)
    assert got == expected
    assert list(got) == list(expected)  # the same key order


QUERIES = [
    f"FROM {WIDE} | WHERE process.name == \"cmd.exe\" | LIMIT 100",
    f"FROM {WIDE} | SORT @timestamp DESC | LIMIT 250",
    f"FROM {WIDE}, {WIDE2} | WHERE host.name == \"DC01\" | SORT @timestamp, process.pid | LIMIT 120",
    f"FROM {WIDE} METADATA _id, _index | EVAL x = CONCAT(process.name, \"!\") | RENAME host.name AS h | DROP winlog.event_data.Field2* | LIMIT 40",
    f"FROM {WIDE} | KEEP winlog.*, source.* | LIMIT 30",
    f"FROM {WIDE} | DISSECT process.command_line \"run %{{n}} %{{rest}}\" | WHERE TO_INTEGER(n) > 300 | LIMIT 50",
    f"FROM {WIDE} | WHERE MATCH(message, \"lsass.exe\") | SORT process.pid DESC | LIMIT 5",
    f"FROM {WIDE} | MV_EXPAND tags | LIMIT 40",
    f"FROM {WIDE} | STATS n = COUNT(*) BY host.name | SORT host.name",
    "FROM logs-* | WHERE source.ip == \"10.0.0.9\" | LIMIT 10",
]


@pytest.mark.parametrize("query", QUERIES, ids=range(len(QUERIES)))
def test_esql_columns_read_late_answer_as_the_sql_does(store: Path, query: str) -> None:
    engine = _backend(store).engine
    _same(esql_run(engine, query), esql_run(engine, query, late=False))
    _same(esql_run(engine, query, columnar=True), esql_run(engine, query, columnar=True, late=False))


def test_esql_reads_the_untouched_columns_late(store: Path) -> None:
    from pytest_soclab.store.esql.expr import Ctx
    from pytest_soclab.store.esql.parser import parse
    from pytest_soclab.store.esql.translate import translate
    from pytest_soclab.store.sqlutil import literal

    engine = _backend(store).engine
    out = translate(engine, Ctx(token=0, now_sql=literal(engine.now())), parse(QUERIES[0]))
    late_names = {out.cols[i].name for i in out.late}
    assert "winlog.event_data.Field3" in late_names and "host.ip" in late_names
    assert "process.name" not in late_names  # WHERE reads it
    assert "winlog.event_data.Field3" not in out.sql


def test_a_document_without_a_stored_source_is_read_from_its_columns(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    real = sources.source_sql
    monkeypatch.setattr(sources, "source_sql", lambda info: f'(CASE WHEN "process.pid" % 3 = 0 THEN NULL ELSE {real(info)} END)')
    path = tmp_path / "partial.duckdb"
    build_database(_docs(), path)
    monkeypatch.undo()
    b = _backend(path)
    rel = b.engine.source_relation(b.engine.catalog.indices[WIDE])
    stored, total = b.engine.query(f"SELECT count(src), count(*) FROM {rel}")[0]
    assert 0 < stored < total
    for body in BODIES[:3] + BODIES[5:7] + BODIES[-2:]:
        _same(b.es_search(WIDE, body), _backend(path, stored=False).es_search(WIDE, body))
    for query in QUERIES[:4]:
        _same(esql_run(b.engine, query), esql_run(b.engine, query, late=False))


def test_sources_rendered_in_python_are_the_sql_ones(store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fallback for a type the SQL does not render gives the same text, document by document."""
    monkeypatch.setattr(sources, "source_sql", lambda info: None)
    path = tmp_path / "python.duckdb"
    build_database(_docs(), path)
    monkeypatch.undo()
    for name in (WIDE, WIDE2):
        a, b = _backend(store).engine, _backend(path).engine
        rows_a = a.query(f"SELECT d, src FROM {a.source_relation(a.catalog.indices[name])} ORDER BY d")
        rows_b = b.query(f"SELECT d, src FROM {b.source_relation(b.catalog.indices[name])} ORDER BY d")
        assert len(rows_a) == len(rows_b) > 100
        assert [(d, orjson.dumps(orjson.loads(s))) for d, s in rows_a] == [(d, orjson.dumps(orjson.loads(s))) for d, s in rows_b]  # key order too


def test_top_hits_render_ipv6_addresses_of_the_upper_half(tmp_path: Path) -> None:
    """Arrow reads a UHUGEINT as a wrapped decimal128: fe80::/ff02:: came back negative (a 500)."""
    path = tmp_path / "ip.duckdb"
    build_database([(NARROW, f"i{k}", {"@timestamp": f"2024-01-01T00:00:0{k}Z", "source": {"ip": ip}})
                    for k, ip in enumerate(["fe80::1", "10.0.0.1", "ff02::fb"])], path)  # fmt: skip
    b = EmbeddedBackend.open(path)
    res = b.es_search(NARROW, {"size": 0, "aggs": {"t": {"top_hits": {"size": 3, "sort": [{"@timestamp": "asc"}]}}}})
    assert [h["_source"]["source"]["ip"] for h in res["aggregations"]["t"]["hits"]["hits"]] == ["fe80::1", "10.0.0.1", "ff02::fb"]
    res = b.es_search(NARROW, {"size": 0, "aggs": {"t": {"top_hits": {"size": 3, "sort": [{"source.ip": "desc"}, {"@timestamp": "asc"}]}}}})
    assert [h["_source"]["source"]["ip"] for h in res["aggregations"]["t"]["hits"]["hits"]] == ["ff02::fb", "fe80::1", "10.0.0.1"]
