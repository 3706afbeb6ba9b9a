"""Generated documents use ECS names and value types (non-ECS fields only under integration namespaces)."""

from __future__ import annotations

import pytest
from corpus_testlib import case_ids, check_doc

from pytest_soclab.corpus.docs import ALERTS, STREAMS, dataset_of


def test_checker_catches_bad_documents() -> None:
    assert check_doc({"process": {"pid": "12"}}) == ["process.pid: '12' is not a valid long"]
    assert check_doc({"source": {"ip": "nope"}}) == ["source.ip: 'nope' is not a valid ip"]
    assert check_doc({"process": {"colour": "red"}}) == ["process.colour: not an ECS field"]
    assert check_doc({"@timestamp": "2025-03-10 10:00"}) != []
    assert check_doc({"zeek": {"session_id": "Cx1"}, "event": {"category": ["network"]}}) == []
    assert check_doc({"zeek": {"anything": 1}}) == [
        "zeek.anything: integration field missing from corpus.fields.NON_ECS_FIELDS"
    ]
    assert check_doc({"suricata": {"eve": {"alert": {"signature_id": "x"}}}}) == [
        "suricata.eve.alert.signature_id: 'x' is not a valid long"
    ]


@pytest.mark.parametrize("case_id", case_ids())
def test_documents_are_valid_ecs(case_id: str, corpus_docs) -> None:
    for stream, _id, doc in corpus_docs(case_id):
        problems = check_doc(doc)
        assert not problems, f"{case_id} {stream} {_id}: {problems}"


@pytest.mark.parametrize("case_id", case_ids())
def test_streams_and_shared_fields(case_id: str, corpus_docs) -> None:
    ids = set()
    for stream, _id, doc in corpus_docs(case_id):
        assert stream in STREAMS, stream
        assert _id not in ids, f"duplicate id {_id}"
        ids.add(_id)
        assert doc["@timestamp"].endswith("Z")
        if stream == ALERTS:
            assert doc["event"]["kind"] == "signal"
            assert doc["kibana"]["alert"]["rule"]["name"]
            continue
        assert doc["data_stream"] == {"dataset": dataset_of(stream), "namespace": "default", "type": "logs"}
        assert doc["event"]["dataset"] == dataset_of(stream)
        assert doc["agent"]["id"] and doc["agent"]["type"] in ("endpoint", "filebeat")
        if not stream.startswith("logs-ti_"):
            assert doc["host"]["name"]
