"""ECS documents: field kinds, no original left, kept fields kept, deterministic, unlinkable, correlated."""

from __future__ import annotations

import copy
import json
import random
import re
from typing import Any

import pytest
from pseudo_samples import ATTACKER_IP, IPS, NAME_TOKENS, SHA256, documents, task

from pytest_soclab.pseudonymize import Pseudonymizer
from pytest_soclab.pseudonymize.kinds import (
    ADDRESS,
    DOMAIN,
    DROP,
    EMAIL,
    FULL_NAME,
    HOST,
    IP,
    KEEP,
    LABELS,
    TEXT,
    URL,
    USER,
    classify,
)

KEY = b"documents-test-key-0123456789"
OTHER_KEY = b"another-documents-key-98765"


def pseudonymize_all(key: bytes, docs: list[dict[str, Any]], **options: Any) -> list[dict[str, Any]]:
    p = Pseudonymizer(key, **options)
    p.learn_task(task())
    return p.documents(docs)


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("source.ip", IP),
        ("related.ip", IP),
        ("host.ip", IP),
        ("winlog.event_data.IpAddress", IP),
        ("dns.resolved_ip", IP),
        ("host.name", HOST),
        ("host.hostname", HOST),
        ("agent.name", HOST),
        ("observer.name", HOST),
        ("winlog.computer_name", HOST),
        ("host.target.name", HOST),
        ("user.name", USER),
        ("process.user.name", USER),
        ("source.user.name", USER),
        ("user.target.name", USER),
        ("related.user", USER),
        ("winlog.event_data.TargetUserName", USER),
        ("user.full_name", FULL_NAME),
        ("user.email", EMAIL),
        ("email.from.address", EMAIL),
        ("source.address", ADDRESS),
        ("dns.answers.data", ADDRESS),
        ("dns.question.name", DOMAIN),
        ("url.domain", DOMAIN),
        ("user.domain", DOMAIN),
        ("tls.client.server_name", DOMAIN),
        ("zeek.dns.query", DOMAIN),
        ("dns.question.subdomain", LABELS),
        ("dns.question.top_level_domain", KEEP),
        ("url.full", URL),
        ("url.original", URL),
        ("process.command_line", TEXT),
        ("message", TEXT),
        ("file.path", TEXT),
        ("event.original", TEXT),
        ("process.hash.sha256", KEEP),
        ("file.hash.md5", KEEP),
        ("threat.technique.id", KEEP),
        ("kibana.alert.rule.threat.technique.id", KEEP),
        ("event.dataset", KEEP),
        ("data_stream.dataset", KEEP),
        ("network.protocol", KEEP),
        ("network.transport", KEEP),
        ("network.community_id", KEEP),
        ("process.entity_id", KEEP),
        ("host.id", KEEP),
        ("@timestamp", KEEP),
        ("source.port", KEEP),
        ("host.os.name", KEEP),
        ("user.id", TEXT),
        ("user_agent.name", TEXT),
        ("source.geo.city_name", DROP),
        ("destination.as", DROP),
        ("group.name", TEXT),
    ],
)
def test_field_kinds(path: str, kind: int) -> None:
    assert classify(path) == kind


def _scan(blob: str, originals: list[str]) -> list[str]:
    """Original names found at token boundaries (case-insensitive) in a serialized output."""
    low = blob.lower()
    return [o for o in originals if re.search(rf"(?<![\w.-]){re.escape(o.lower())}(?![\w-])", low)]


def test_no_original_ip_host_user_or_domain_survives() -> None:
    docs = documents()
    out = pseudonymize_all(KEY, docs)
    blob = json.dumps(out, ensure_ascii=False)
    assert _scan(blob, NAME_TOKENS) == []
    assert [ip for ip in IPS if re.search(rf"(?<![\w.:]){re.escape(ip)}(?![\w:]|\.\d)", blob)] == []
    # nor inside an escaped form (JSON doubles backslashes) or split by a path
    assert "bob.smith" not in blob.lower() and "acme" not in blob.lower()


def test_what_links_events_and_what_is_not_personal_is_kept() -> None:
    docs = documents()
    out = pseudonymize_all(KEY, docs)
    for before, after in zip(docs, out):
        assert before.keys() == after.keys()
        assert after.get("@timestamp") == before.get("@timestamp")
        assert after.get("event") == before.get("event")
        assert after.get("network") == before.get("network")
        assert after.get("data_stream") == before.get("data_stream")
        for side in ("source", "destination"):
            if side in before and "port" in before[side]:
                assert after[side]["port"] == before[side]["port"]
    blob = json.dumps(out)
    assert (
        SHA256 in blob and "T1105" in blob and "TA0011" in blob and "d41d8cd98f00b204e9800998ecf8427e" in blob
    )
    assert out[0]["process"]["entity_id"] == docs[0]["process"]["entity_id"]
    assert out[0]["host"]["os"] == docs[0]["host"]["os"]
    assert out[0]["process"]["executable"] == "/usr/bin/curl"


def test_input_documents_are_not_modified() -> None:
    docs = documents()
    snapshot = copy.deepcopy(docs)
    pseudonymize_all(KEY, docs)
    assert docs == snapshot


def test_the_same_key_gives_byte_identical_output_whatever_the_order() -> None:
    a = json.dumps(pseudonymize_all(KEY, documents()), sort_keys=True)
    b = json.dumps(pseudonymize_all(KEY, documents()), sort_keys=True)
    assert a == b
    shuffled = documents()
    order = list(range(len(shuffled)))
    random.Random(7).shuffle(order)
    out = pseudonymize_all(KEY, [shuffled[i] for i in order])
    restored = [None] * len(order)
    for pos, i in enumerate(order):
        restored[i] = out[pos]  # type: ignore[call-overload]
    assert json.dumps(restored, sort_keys=True) == a


def test_two_keys_give_unlinkable_outputs() -> None:
    a = pseudonymize_all(KEY, documents())
    b = pseudonymize_all(OTHER_KEY, documents())
    blob_a, blob_b = json.dumps(a).lower(), json.dumps(b).lower()
    pa, pb = Pseudonymizer(KEY), Pseudonymizer(OTHER_KEY)
    pa.learn_documents(documents())
    learned = sorted(pa.known.bare)
    names_a = {pa.name(t) for t in learned}
    names_b = {pb.name(t) for t in learned}
    assert len(learned) >= 10 and len(names_b) == len(names_a) == len(learned)
    assert all(n in blob_a for n in names_a) and all(n in blob_b for n in names_b)
    assert not names_a & names_b
    assert not any(n in blob_b for n in names_a) and not any(n in blob_a for n in names_b)
    assert a[3]["source"]["ip"] != b[3]["source"]["ip"]  # the attacker address
    # The documents differ wherever an entity stood, and are identical elsewhere.
    assert blob_a != blob_b and a[0]["event"] == b[0]["event"]


def _leaves(doc: Any, path: str = "") -> list[tuple[str, str]]:
    if isinstance(doc, dict):
        return [x for k, v in doc.items() for x in _leaves(v, f"{path}.{k}" if path else k)]
    if isinstance(doc, list):
        return [x for v in doc for x in _leaves(v, path)]
    return [(path, doc)] if isinstance(doc, str) else []


def test_equal_values_stay_equal_and_different_ones_different() -> None:
    """Correlation: across documents and fields, the equality of entity values is preserved."""
    docs = documents()
    out = pseudonymize_all(KEY, docs)
    typed = {IP, HOST, USER, DOMAIN, ADDRESS, EMAIL}
    forward: dict[str, set[str]] = {}
    for before, after in zip(docs, out):
        for (path, v), (path2, w) in zip(_leaves(before), _leaves(after)):
            assert path == path2
            if classify(path) in typed:
                forward.setdefault(v.lower(), set()).add(w.lower())
    assert all(len(ws) == 1 for ws in forward.values()), {k: v for k, v in forward.items() if len(v) > 1}
    images = [next(iter(ws)) for ws in forward.values()]
    assert len(set(images)) == len(images)
    assert forward[ATTACKER_IP] == {Pseudonymizer(KEY).ip(ATTACKER_IP)}


def test_flat_dotted_keys_are_treated_like_nested_objects() -> None:
    p = Pseudonymizer(KEY)
    nested = p.document(
        {"host": {"name": "web-01"}, "source": {"ip": ATTACKER_IP}, "user": {"name": "alice"}}
    )
    flat = p.document({"host.name": "web-01", "source.ip": ATTACKER_IP, "user.name": "alice"})
    assert flat == {
        "host.name": nested["host"]["name"],
        "source.ip": nested["source"]["ip"],
        "user.name": nested["user"]["name"],
    }


def test_drop_geo_removes_the_original_addresses_location() -> None:
    kept = pseudonymize_all(KEY, documents())[1]["destination"]
    dropped = pseudonymize_all(KEY, documents(), drop_geo=True)[1]["destination"]
    assert "geo" in kept and "as" in kept
    assert "geo" not in dropped and "as" not in dropped and dropped["ip"] == kept["ip"]


def test_search_responses_and_esql_results_match_the_documents() -> None:
    docs = documents()
    p = Pseudonymizer(KEY)
    p.learn_documents(docs)
    resp = {
        "took": 3,
        "hits": {
            "total": {"value": 1, "relation": "eq"},
            "hits": [
                {
                    "_index": ".ds-logs-system.auth-default-2024.05.01-000001",
                    "_id": "abc",
                    "_score": 1.0,
                    "_source": docs[3],
                }
            ],
        },
        "aggregations": {"by_user": {"buckets": [{"key": "alice", "doc_count": 1}]}},
    }
    new = p.json(resp, learn=False)
    assert new["hits"]["hits"][0]["_source"] == p.document(docs[3], learn=False)
    assert new["hits"]["hits"][0]["_index"] == resp["hits"]["hits"][0]["_index"]
    assert new["aggregations"]["by_user"]["buckets"][0]["key"] == p.name("alice")
    esql = {
        "columns": [
            {"name": "host.name", "type": "keyword"},
            {"name": "source.ip", "type": "ip"},
            {"name": "c", "type": "long"},
        ],
        "values": [["web-01", ATTACKER_IP, 4]],
    }
    assert p.json(esql, learn=False)["values"] == [[p.name("web-01"), p.ip(ATTACKER_IP), 4]]


def test_keys_of_generic_json_are_pseudonymized_too() -> None:
    p = Pseudonymizer(KEY)
    p.learn_host("web-01")
    guard_input = {"assets": {"web-01": {"tier": 0, "role": "web"}}, "seen": {"hosts": ["web-01"]}}
    out = p.json(guard_input)
    assert out == {
        "assets": {p.name("web-01"): {"tier": 0, "role": "web"}},
        "seen": {"hosts": [p.name("web-01")]},
    }


def test_in_place_gives_the_same_documents_as_copying() -> None:
    copied = pseudonymize_all(KEY, documents(), drop_geo=True)
    p = Pseudonymizer(KEY, drop_geo=True)
    p.learn_task(task())
    docs = documents()
    out = p.documents(docs, in_place=True)
    assert out == copied
    assert all(a is b for a, b in zip(out, docs))  # the given dicts, changed
