"""The term dictionaries of wildcard fields (store/terms.py) answer pattern queries as the scan does.

Each query runs twice on one store: through the dictionaries, and with them hidden from the
engine (each document's values tested, the path overlaid documents take).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_soclab.store import EmbeddedBackend, build_database
from pytest_soclab.store.catalog import IndexInfo
from pytest_soclab.errors import EsError
from pytest_soclab.store.engine import Engine

PARTS = ["cmd.exe", "/c", "powershell", "-enc", "C:\\Windows\\Temp\\", "tmp", "TMP", "x?y", "a*b", "100%", "_", " ", "\\"]
MAPPINGS = {"logs-w": {"properties": {"process.command_line": {"type": "wildcard"},
                                      "registry.data.strings": {"type": "wildcard"},
                                      "process.name": {"type": "keyword"}}}}  # fmt: skip


def _values(rng: random.Random) -> str:
    return "".join(rng.choice(PARTS) for _ in range(rng.randint(1, 5)))


def _docs(n: int, seed: int) -> list[tuple[str, str, dict[str, Any]]]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        doc: dict[str, Any] = {"@timestamp": f"2024-01-01T00:00:{i % 60:02d}Z", "process": {"name": rng.choice(["a", "b"])}}
        if rng.random() < 0.9:
            doc["process"]["command_line"] = _values(rng)
        if rng.random() < 0.7:
            doc["registry"] = {"data": {"strings": [_values(rng) for _ in range(rng.randint(1, 3))]}}
        out.append(("logs-w", str(i), doc))
    return out


def _both(backend: EmbeddedBackend, query: dict[str, Any], monkeypatch: pytest.MonkeyPatch,
          **extra: Any) -> tuple[Any, Any]:  # fmt: skip
    body = {"size": 50, "track_total_hits": True, "query": query, **extra}
    indexed = backend.es_search("logs-w", body)
    with monkeypatch.context() as m:
        m.setattr(Engine, "term_relations", lambda self, info: {})
        plain = backend.es_search("logs-w", body)
    return indexed, plain


def _same(indexed: dict[str, Any], plain: dict[str, Any]) -> None:
    assert indexed["hits"]["total"] == plain["hits"]["total"]
    assert [h["_id"] for h in indexed["hits"]["hits"]] == [h["_id"] for h in plain["hits"]["hits"]]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> EmbeddedBackend:
    path = tmp_path_factory.mktemp("terms") / "s.duckdb"
    build_database(_docs(400, 3), path, mappings=MAPPINGS)
    return EmbeddedBackend.open(path)


def test_only_wildcard_fields_have_a_dictionary(store: EmbeddedBackend) -> None:
    (info,) = [i for i in store.engine.catalog.indices.values() if i.name == "logs-w"]
    assert set(store.engine.term_relations(info)) == {"process.command_line", "registry.data.strings"}


def test_a_dictionary_holds_each_value_once_with_its_documents(store: EmbeddedBackend) -> None:
    (info,) = [i for i in store.engine.catalog.indices.values() if i.name == "logs-w"]
    rel = store.engine.term_relations(info)["registry.data.strings"].relation
    rows = store.engine.query(f"SELECT v, docs FROM {rel}")
    values = [v for v, _ in rows]
    assert len(values) == len(set(values)) and values == sorted(values)
    per_doc: dict[int, set[str]] = {}
    for v, docs in rows:
        for d in docs:
            per_doc.setdefault(d, set()).add(v)
    docs_sql = f"SELECT _doc, \"registry.data.strings\" FROM {store.engine.relation(info)} WHERE \"registry.data.strings\" IS NOT NULL"
    assert per_doc == {d: set(vs) - {None} for d, vs in store.engine.query(docs_sql) if set(vs) - {None}}


@pytest.mark.parametrize("field", ["process.command_line", "registry.data.strings"])
@pytest.mark.parametrize("query", [
    {"wildcard": {"F": "*tmp*"}},
    {"wildcard": {"F": {"value": "*tmp*", "case_insensitive": True}}},
    {"wildcard": {"F": "cmd.exe*"}},
    {"wildcard": {"F": "*\\\\Temp\\\\*"}},
    {"wildcard": {"F": "*x\\?y*"}},
    {"wildcard": {"F": "*a\\*b"}},
    {"wildcard": {"F": "?/c*"}},
    {"wildcard": {"F": "*"}},
    {"wildcard": {"F": "nothing*like*this"}},
    {"prefix": {"F": "powershell"}},
    {"prefix": {"F": {"value": "POWERSHELL", "case_insensitive": True}}},
    {"regexp": {"F": ".*-enc.*"}},
    {"fuzzy": {"F": {"value": "tmp", "fuzziness": 1}}},
    {"query_string": {"query": "F:*owershell*", "allow_leading_wildcard": True}},
    {"query_string": {"query": "F:/.*Temp.*/"}},
    {"bool": {"filter": [{"wildcard": {"F": "*tmp*"}}], "must_not": [{"prefix": {"F": "cmd"}}]}},
    {"bool": {"should": [{"wildcard": {"F": "*100%*"}}, {"wildcard": {"F": "*_*"}}]}},
    {"bool": {"filter": [{"wildcard": {"F": "*tmp*"}}, {"term": {"process.name": "a"}}]}},
])  # fmt: skip
def test_pattern_queries_are_answered_alike(store: EmbeddedBackend, field: str, query: dict[str, Any],
                                            monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    q = _rename(query, field)
    indexed, plain = _both(store, q, monkeypatch)
    _same(indexed, plain)
    sorted_indexed, sorted_plain = _both(store, q, monkeypatch, sort=[{"@timestamp": "desc"}])
    _same(sorted_indexed, sorted_plain)


def _rename(obj: Any, field: str) -> Any:
    if isinstance(obj, dict):
        return {(field if k == "F" else k): _rename(v, field) for k, v in obj.items()}
    if isinstance(obj, str):
        return obj.replace("F:", field.replace(".", "\\.") + ":") if obj.startswith("F:") else obj
    return obj


def test_a_pattern_query_counts_its_hits_from_the_dictionary(store: EmbeddedBackend, monkeypatch: pytest.MonkeyPatch) -> None:
    """The exact total of a wildcard-only search needs no scan of the table: no statement reads
    the command lines themselves."""
    seen: list[str] = []
    orig = Engine.query

    def spy(self: Engine, sql: str, *a: Any, **k: Any) -> Any:
        seen.append(sql)
        return orig(self, sql, *a, **k)

    monkeypatch.setattr(Engine, "query", spy)
    res = store.es_search("logs-w", {"query": {"wildcard": {"process.command_line": "*powershell*"}},
                                     "track_total_hits": True, "size": 0})  # fmt: skip
    assert res["hits"]["total"]["value"] > 0
    assert any("__terms" in s for s in seen)
    assert not any("contains(\"process.command_line\"" in s for s in seen)


@pytest.mark.parametrize(("query", "kind"), [
    ({"regexp": {"process.command_line": "[unclosed"}}, "illegal_argument_exception"),
    ({"fuzzy": {"process.command_line": {"value": "tmp", "fuzziness": "x"}}}, "parsing_exception"),
    ({"wildcard": {"process.command_line": {"value": "*tmp*", "bogus": 1}}}, "parsing_exception"),
])  # fmt: skip
def test_a_bad_pattern_query_fails_as_elasticsearch_does(store: EmbeddedBackend, query: dict[str, Any], kind: str,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """The same error with or without the dictionary, and the store answers the next query."""
    for hidden in (False, True):
        with monkeypatch.context() as m:
            if hidden:
                m.setattr(Engine, "term_relations", lambda self, info: {})
            with pytest.raises(EsError) as err:
                store.es_search("logs-w", {"query": query})
        assert err.value.type == kind and err.value.status == 400
    assert store.es_search("logs-w", {"query": {"wildcard": {"process.command_line": "*tmp*"}}})["hits"]["total"]


def test_a_store_of_an_older_format_has_no_dictionaries() -> None:
    """A catalog written before the dictionaries (format 5) reads as none: its wildcards scan."""
    old = {"name": "logs-w", "kind": "index", "backing": None, "table": "t0", "count": 3, "fields": {}}
    assert IndexInfo.from_json(old).terms == {}
    assert IndexInfo.from_json({**old, "terms": {"process.command_line": "t0__terms0"}}).terms == {
        "process.command_line": "t0__terms0"}


def test_overlaid_documents_are_tested_by_the_scan(tmp_path: Path) -> None:
    """A store opened with documents overlaid on it (the simulator's planted documents) has no
    dictionary for them: the query tests every document, the overlaid ones included."""
    base = tmp_path / "base.duckdb"
    build_database(_docs(50, 5), base, mappings=MAPPINGS)
    planted = [("logs-w", "planted", {"@timestamp": "2024-01-02T00:00:00Z", "process": {"command_line": "planted tmp"}})]
    body = {"query": {"wildcard": {"process.command_line": "*planted tmp*"}}, "track_total_hits": True}
    with EmbeddedBackend.open(base) as plain, EmbeddedBackend.open(base, overlay=planted) as overlaid:
        assert plain.es_search("logs-w", body)["hits"]["total"]["value"] == 0
        assert [h["_id"] for h in overlaid.es_search("logs-w", body)["hits"]["hits"]] == ["planted"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), pattern=st.lists(st.sampled_from(["*", "?", "tmp", "\\*", "\\?", "C:", "%", "_", "e"]),
                                                      min_size=1, max_size=4).map("".join), ci=st.booleans())  # fmt: skip
def test_random_patterns_are_answered_alike(tmp_path_factory: pytest.TempPathFactory, seed: int, pattern: str, ci: bool) -> None:
    path = tmp_path_factory.mktemp("rand") / "s.duckdb"
    build_database(_docs(60, seed), path, mappings=MAPPINGS)
    backend = EmbeddedBackend.open(path)
    try:
        for field in ("process.command_line", "registry.data.strings"):
            with pytest.MonkeyPatch.context() as m:
                indexed, plain = _both(backend, {"wildcard": {field: {"value": pattern, "case_insensitive": ci}}}, m)
            _same(indexed, plain)
    finally:
        backend.close()
