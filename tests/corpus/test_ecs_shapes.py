"""Generated documents use ECS names and value types (non-ECS fields only under integration namespaces)."""

from __future__ import annotations

import ipaddress
import re
from typing import Any

import pytest
from corpus_testlib import case_ids

from pytest_soclab.corpus.docs import ALERTS, STREAMS, dataset_of
from pytest_soclab.reference import ecs_fields

# Namespaces the integrations (or Kibana) own: their fields are not ECS and are not checked here.
INTEGRATION_NAMESPACES = ("zeek.", "suricata.", "kibana.", "system.auth.")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")


def _leaves(doc: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    out = []
    for k, v in doc.items():
        key = prefix + k
        if isinstance(v, dict):
            out += _leaves(v, key + ".")
        elif isinstance(v, list) and v and all(isinstance(i, dict) for i in v):
            for item in v:
                out += _leaves(item, key + ".")
        else:
            out.append((key, v))
    return out


def _ok(ftype: str, value: Any) -> bool:
    if ftype in ("keyword", "constant_keyword", "wildcard", "match_only_text", "text", "flattened"):
        return isinstance(value, str)
    if ftype in ("long", "integer", "short", "byte", "unsigned_long"):
        return isinstance(value, int) and not isinstance(value, bool)
    if ftype in ("float", "double", "scaled_float", "half_float"):
        return isinstance(value, int | float) and not isinstance(value, bool)
    if ftype == "boolean":
        return isinstance(value, bool)
    if ftype == "date":
        return isinstance(value, str) and bool(_DATE.match(value))
    if ftype == "ip":
        try:
            ipaddress.ip_address(value)
        except (ValueError, TypeError):
            return False
        return True
    if ftype in ("object", "nested"):
        return False  # an object field holds sub-fields, not a value
    return False


def check_doc(doc: dict[str, Any]) -> list[str]:
    fields = ecs_fields()
    problems = []
    for name, value in _leaves(doc):
        if name.startswith(INTEGRATION_NAMESPACES):
            continue
        spec = fields.get(name)
        if spec is None:
            problems.append(f"{name}: not an ECS field")
            continue
        values = value if isinstance(value, list) else [value]
        if isinstance(value, list) and not spec.get("array") and name != "tags":
            # ECS allows arrays anywhere, but a list where the integration writes one value is a smell.
            if len(value) != 1:
                problems.append(f"{name}: a list where ECS expects one value")
        for v in values:
            if not _ok(spec["type"], v):
                problems.append(f"{name}: {v!r} is not a valid {spec['type']}")
    return problems


def test_checker_catches_bad_documents() -> None:
    assert check_doc({"process": {"pid": "12"}}) == ["process.pid: '12' is not a valid long"]
    assert check_doc({"source": {"ip": "nope"}}) == ["source.ip: 'nope' is not a valid ip"]
    assert check_doc({"process": {"colour": "red"}}) == ["process.colour: not an ECS field"]
    assert check_doc({"@timestamp": "2025-03-10 10:00"}) != []
    assert check_doc({"zeek": {"anything": 1}, "event": {"category": ["network"]}}) == []


@pytest.mark.parametrize("case_id", case_ids())
def test_documents_are_valid_ecs(case_id: str, corpus_docs) -> None:
    seen: dict[str, int] = {}
    for stream, _id, doc in corpus_docs(case_id):
        # One in 7 of each stream is plenty: the documents of a stream share their builder.
        n = seen.get(stream, 0)
        seen[stream] = n + 1
        if n % 7:
            continue
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
