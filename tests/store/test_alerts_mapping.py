"""Kibana's alerts index maps all of ECS (plus kibana.alert.*): fields no alert has are mapped,
queryable and null, without a column; data streams keep ecs@mappings' map-on-first-value."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from pytest_soclab.errors import EsError
from pytest_soclab.store.embedded import EmbeddedBackend, build_database, open_sources

from store_testdata import ALERTS, DOCS, PROC


def test_esql_keeps_an_ecs_field_no_alert_has(backend: EmbeddedBackend) -> None:
    res = backend.esql_query(f"FROM {ALERTS} | KEEP @timestamp, source.ip, destination.ip | SORT @timestamp")
    assert res["columns"] == [
        {"name": "@timestamp", "type": "date"}, {"name": "source.ip", "type": "ip"},
        {"name": "destination.ip", "type": "ip"},
    ]  # fmt: skip
    assert res["values"] == [["2024-05-01T10:06:30.000Z", None, None], ["2024-05-01T11:30:10.000Z", None, None]]


def test_esql_empty_fields_behave_as_null_everywhere(backend: EmbeddedBackend) -> None:
    q = backend.esql_query
    assert q(f"FROM {ALERTS} | WHERE source.ip IS NULL | STATS c = COUNT(*)")["values"] == [[2]]
    assert q(f'FROM {ALERTS} | WHERE CIDR_MATCH(source.ip, "10.0.0.0/8") | STATS c = COUNT(*)')["values"] == [[0]]
    res = q(f"FROM {ALERTS} | STATS c = COUNT(*) BY process.command_line.text")
    assert res["columns"][1] == {"name": "process.command_line.text", "type": "text"} and res["values"] == [[2, None]]
    res = q(f"FROM {ALERTS} | EVAL p = COALESCE(user.name, \"none\") | KEEP p, kibana.alert.severity | SORT p, kibana.alert.severity")
    assert res["values"] == [["none", "critical"], ["none", "high"]]
    # unioned with an index that has the field: the alerts' rows read null
    res = q(f"FROM {PROC},{ALERTS} | WHERE host.name == \"db-01\" | STATS c = COUNT(user.name), n = COUNT(*)")
    assert res["values"] == [[2, 3]]
    # all the mapped fields are columns, as Elasticsearch answers FROM without KEEP
    res = q(f"FROM {ALERTS} | LIMIT 1")
    names = [c["name"] for c in res["columns"]]
    assert {"source.ip", "kibana.alert.rule.name", "process.pe.imports", "@timestamp"} <= set(names)
    assert len(names) > 1500 and names == sorted(names)
    row = dict(zip(names, res["values"][0]))
    assert row["kibana.alert.rule.name"] == "Curl to shell" and row["source.ip"] is None


def test_esql_unknown_names_are_still_unknown(backend: EmbeddedBackend) -> None:
    with pytest.raises(EsError) as err:
        backend.esql_query(f"FROM {ALERTS} | KEEP source.ipp")
    assert err.value.type == "verification_exception" and "Unknown column [source.ipp]" in err.value.reason
    with pytest.raises(EsError) as err:  # a data stream maps ECS fields only once a document has them
        backend.esql_query(f"FROM {PROC} | KEEP source.ip")
    assert "Unknown column [source.ip]" in err.value.reason


def test_esql_unsupported_mapped_fields_are_named_when_used(backend: EmbeddedBackend) -> None:
    with pytest.raises(EsError) as err:
        backend.esql_query(f"FROM {ALERTS} | WHERE threat.enrichments IS NOT NULL")
    assert "unsupported type [nested]" in err.value.reason


def test_dsl_on_an_empty_mapped_field(backend: EmbeddedBackend) -> None:
    body = {
        "query": {"bool": {"must_not": [{"term": {"source.ip": "10.0.0.1"}}]}},
        "aggs": {"ips": {"terms": {"field": "source.ip"}}, "n": {"value_count": {"field": "destination.port"}}},
        "sort": [{"destination.ip": "asc"}, "_doc"],
    }
    res = backend.es_search(ALERTS, body)
    assert res["hits"]["total"]["value"] == 2
    assert res["aggregations"]["ips"]["buckets"] == [] and res["aggregations"]["n"]["value"] == 0
    assert backend.es_search(ALERTS, {"query": {"exists": {"field": "source.ip"}}})["hits"]["total"]["value"] == 0
    assert backend.es_search(ALERTS, {"query": {"term": {"source.ip": "10.0.0.1"}}})["hits"]["total"]["value"] == 0
    hits = backend.es_search(ALERTS, {"query": {"query_string": {"query": "source.ip:10.0.0.1 OR host.name:db-01"}}})
    assert [h["_id"] for h in hits["hits"]["hits"]] == ["a2"]
    hit = backend.es_search(ALERTS, {"fields": ["*"], "size": 1, "sort": ["_doc"]})["hits"]["hits"][0]
    assert "source.ip" not in hit["fields"] and "source" not in hit["_source"]


def test_get_mappings_answers_the_full_alerts_mapping(backend: EmbeddedBackend) -> None:
    props = backend.get_mappings(ALERTS)[ALERTS]["mappings"]["properties"]
    assert props["source"]["properties"]["ip"] == {"type": "ip"}
    assert props["process"]["properties"]["command_line"]["fields"]["text"] == {"type": "match_only_text"}
    alert = props["kibana"]["properties"]["alert"]["properties"]
    assert alert["severity"] == {"type": "keyword"} and alert["risk_score"] == {"type": "float"}
    assert alert["rule"]["properties"]["name"] == {"type": "keyword"}
    # a data stream's mapping holds only the fields its documents have
    proc = backend.get_mappings(PROC)
    assert "source" not in next(iter(proc.values()))["mappings"]["properties"]


def test_alert_fields_take_the_declared_types(backend: EmbeddedBackend) -> None:
    res = backend.esql_query(f"FROM {ALERTS} | KEEP kibana.alert.severity, kibana.alert.risk_score | SORT kibana.alert.risk_score")
    assert res["columns"] == [{"name": "kibana.alert.severity", "type": "keyword"},
                              {"name": "kibana.alert.risk_score", "type": "double"}]  # fmt: skip
    assert res["values"] == [["high", 73.0], ["critical", 99.0]]


def test_overlay_alert_gives_an_empty_field_a_column(store_path: Path) -> None:
    extra = [(ALERTS, "a9", {"@timestamp": "2024-05-02T00:00:00Z", "source": {"ip": "10.0.0.9"},
                             "kibana": {"alert": {"severity": "low"}}})]  # fmt: skip
    with EmbeddedBackend.open(store_path, extra, now=dt.datetime(2024, 5, 3)) as b:
        res = b.esql_query(f"FROM {ALERTS} | KEEP source.ip, destination.ip, kibana.alert.severity | SORT source.ip")
        assert res["values"][0] == ["10.0.0.9", None, "low"]
        props = b.get_mappings(ALERTS)[ALERTS]["mappings"]["properties"]
        assert props["source"]["properties"]["ip"] == {"type": "ip"} and "destination" in props


def test_explicit_mapping_fields_are_mapped_without_documents(tmp_path: Path) -> None:
    docs = tmp_path / "d.ndjson"
    docs.write_text('{"title": "x"}\n', encoding="utf-8")
    mapping = tmp_path / "m.json"
    mapping.write_text('{"mappings": {"properties": {"title": {"type": "keyword"}, "port": {"type": "long"}}}}')
    b = open_sources([f"idx={docs}:{mapping}"])
    assert b.get_mappings("idx")["idx"]["mappings"]["properties"]["port"] == {"type": "long"}
    assert b.esql_query("FROM idx | KEEP title, port")["values"] == [["x", None]]


def test_alerts_mapping_does_not_depend_on_the_documents(tmp_path: Path) -> None:
    only_logs = [d for d in DOCS if d[0] != ALERTS] + [(ALERTS, "z", {"@timestamp": "2024-05-01T00:00:00Z"})]
    build_database(only_logs, tmp_path / "s.duckdb")
    with EmbeddedBackend.open(tmp_path / "s.duckdb") as b:
        res = b.esql_query(f"FROM {ALERTS} | KEEP @timestamp, host.name, kibana.alert.rule.name")
        assert res["values"] == [["2024-05-01T00:00:00.000Z", None, None]]
