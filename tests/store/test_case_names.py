"""Fields whose names differ only in case are two fields (as in Elasticsearch), though DuckDB
resolves column names case-insensitively: real Sysmon writes `SourceProcessGUID` in event 10
and `SourceProcessGuid` in event 8."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_soclab.store.embedded import EmbeddedBackend, build_database

SYSMON = "logs-windows.sysmon_operational-default"
UPPER, LOWER = "winlog.event_data.SourceProcessGUID", "winlog.event_data.SourceProcessGuid"


def _event(i: int, code: str, key: str, guid: str, wide: int) -> tuple[str, str, dict[str, Any]]:
    data: dict[str, Any] = {key: guid, "TargetImage": "C:\\Windows\\system32\\lsass.exe"}
    data.update({f"Extra{k}": f"x{k}" for k in range(wide)})
    return SYSMON, f"e{i}", {"@timestamp": f"2024-01-01T00:00:{i:02d}Z", "event": {"code": code},
                             "message": f"event {code}", "winlog": {"event_data": data}}  # fmt: skip


def _docs(wide: int) -> list[tuple[str, str, dict[str, Any]]]:
    out = [_event(i, "10", "SourceProcessGUID", f"{{ACCESS-{i}}}", wide) for i in range(0, 6)]
    out += [_event(i, "8", "SourceProcessGuid", f"{{THREAD-{i}}}", wide) for i in range(6, 9)]
    return out


@pytest.fixture(scope="module", params=[0, 80], ids=["narrow", "wide"])
def backend(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> EmbeddedBackend:
    path: Path = tmp_path_factory.mktemp("case") / "case.duckdb"
    build_database(_docs(request.param), path)
    return EmbeddedBackend.open(path)


def _guids(res: dict[str, Any], key: str) -> list[str]:
    return [h["_source"]["winlog"]["event_data"][key] for h in res["hits"]["hits"]]


def test_each_spelling_holds_its_own_values(backend: EmbeddedBackend) -> None:
    upper = backend.es_search(SYSMON, {"query": {"exists": {"field": UPPER}}, "sort": ["@timestamp"]})
    lower = backend.es_search(SYSMON, {"query": {"exists": {"field": LOWER}}, "sort": ["@timestamp"]})
    assert _guids(upper, "SourceProcessGUID") == [f"{{ACCESS-{i}}}" for i in range(6)]
    assert _guids(lower, "SourceProcessGuid") == [f"{{THREAD-{i}}}" for i in range(6, 9)]
    assert all("SourceProcessGUID" not in h["_source"]["winlog"]["event_data"] for h in lower["hits"]["hits"])
    term = backend.es_search(SYSMON, {"query": {"term": {LOWER: "{THREAD-7}"}}})
    assert [h["_id"] for h in term["hits"]["hits"]] == ["e7"]
    assert backend.es_search(SYSMON, {"query": {"term": {UPPER: "{THREAD-7}"}}})["hits"]["total"]["value"] == 0


def test_aggregations_and_esql_tell_them_apart(backend: EmbeddedBackend) -> None:
    aggs = backend.es_search(SYSMON, {"size": 0, "aggs": {"u": {"terms": {"field": UPPER}}, "l": {"terms": {"field": LOWER}}}})
    assert sorted(b["key"] for b in aggs["aggregations"]["l"]["buckets"]) == [f"{{THREAD-{i}}}" for i in range(6, 9)]
    assert len(aggs["aggregations"]["u"]["buckets"]) == 6
    res = backend.esql_query(f"FROM {SYSMON} | WHERE {LOWER} IS NOT NULL | KEEP {UPPER}, {LOWER} | SORT {LOWER}")
    assert res["values"] == [[None, f"{{THREAD-{i}}}"] for i in range(6, 9)]
    whole = backend.esql_query(f"FROM {SYSMON} | WHERE event.code == \"8\" | LIMIT 10")  # every column: late when wide
    names = [c["name"] for c in whole["columns"]]
    assert [row[names.index(LOWER)] for row in whole["values"]] == [f"{{THREAD-{i}}}" for i in range(6, 9)]
    assert [row[names.index(UPPER)] for row in whole["values"]] == [None, None, None]


def test_both_are_mapped(backend: EmbeddedBackend) -> None:
    mapping = next(iter(backend.get_mappings(SYSMON).values()))["mappings"]
    fields = mapping["properties"]["winlog"]["properties"]["event_data"]["properties"]
    assert {"SourceProcessGUID", "SourceProcessGuid"} <= set(fields)


def test_overlay_documents_keep_the_spellings_apart(tmp_path: Path) -> None:
    path = tmp_path / "base.duckdb"
    build_database(_docs(0)[:6], path)  # the base has only the upper spelling
    planted = [_event(20, "8", "SourceProcessGuid", "{PLANTED}", 0), _event(21, "10", "SourceProcessGUID", "{P2}", 0)]
    b = EmbeddedBackend.open(path, overlay=planted)
    lower = b.es_search(SYSMON, {"query": {"exists": {"field": LOWER}}})
    assert _guids(lower, "SourceProcessGuid") == ["{PLANTED}"]
    upper = b.es_search(SYSMON, {"size": 20, "query": {"exists": {"field": UPPER}}, "sort": ["@timestamp"]})
    assert _guids(upper, "SourceProcessGUID")[-1] == "{P2}" and len(upper["hits"]["hits"]) == 7


@pytest.mark.parametrize("fast", [True, False], ids=["fast path", "python path"])
def test_a_source_field_named_id_is_counted_not_stored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fast: bool) -> None:
    """Elasticsearch rejects `_id` inside a source; here it would have replaced the documents' ids."""
    from pytest_soclab.store import build

    if not fast:
        monkeypatch.setattr(build.TableBuilder, "_arrow_chunk", lambda self, seq0: (_ for _ in ()).throw(build._Fallback()))
    docs = [("notes", f"n{i}", {"_id": f"inner-{i}", "text": f"note {i}"}) for i in range(3)]
    info = build_database(docs, tmp_path / "ids.duckdb")
    assert info["indices"]["notes"]["malformed"] == {"_id": 3}
    b = EmbeddedBackend.open(tmp_path / "ids.duckdb")
    hits = b.es_search("notes", {})["hits"]["hits"]
    assert sorted(h["_id"] for h in hits) == ["n0", "n1", "n2"]
    assert all("_id" not in h["_source"] for h in hits)
