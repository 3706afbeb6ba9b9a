"""The estate matches the telemetry: what an agent finds is what it can act on."""

from __future__ import annotations

import itertools

import pytest
from corpus_testlib import case_ids

from pytest_soclab.corpus.estate import estate_from_recipe


@pytest.mark.parametrize("case_id", case_ids())
def test_running_processes_match_the_telemetry(case_id: str, recipes, corpus_docs) -> None:
    estate = estate_from_recipe(recipes[case_id])
    seen: dict[tuple[str, int], tuple[str, str]] = {}
    for stream, _id, doc in corpus_docs(case_id):
        if stream != "logs-endpoint.events.process-default":
            continue
        host = doc["host"]["name"]
        for p in (doc["process"], doc["process"].get("parent")):
            if p:
                seen[(host, p["pid"])] = (p["name"], p["entity_id"])
    malicious = [(h.name, p) for h in estate.hosts for p in h.processes if "malicious" in p.tags]
    for host, proc in malicious:
        assert (host, proc.pid) in seen, (
            f"{host} pid {proc.pid} ({proc.name}) never appears in process events"
        )
        assert seen[(host, proc.pid)] == (proc.name, proc.entity_id)
    # Daemons that parent activity appear with the same pid, name and entity id.
    for h in estate.hosts:
        for p in h.processes:
            if (h.name, p.pid) in seen:
                assert seen[(h.name, p.pid)] == (p.name, p.entity_id), (h.name, p)


@pytest.mark.parametrize("case_id", case_ids())
def test_security_tooling_and_criticality(case_id: str, recipes) -> None:
    recipe = recipes[case_id]
    estate = estate_from_recipe(recipe)
    tooling = [(h.name, p.name) for h in estate.hosts for p in h.processes if "security-tooling" in p.tags]
    assert any(n == "elastic-endpoint" for _h, n in tooling)
    if recipe.sensors.zeek:
        assert (recipe.sensors.zeek, "zeek") in tooling
    cron = [(h.name, p) for h in estate.hosts for p in h.persistence if p.path == "/etc/cron.d/zeekctl"]
    if any(b.kind == "zeekctl-cron" for b in recipe.benign):
        assert cron and "security-tooling" in cron[0][1].tags and "malicious" not in cron[0][1].tags
    assert any(h.tier == 0 for h in estate.hosts), "a crown-jewel host (tier 0) is expected"
    assert estate.business_critical_ips
    assert not set(estate.business_critical_ips) & set(recipe.attack.actor_ips)
    for h in estate.hosts:
        assert h.zone in {z.name for z in estate.zones}


def test_implant_case_estate(recipes) -> None:
    estate = estate_from_recipe(recipes["case-02-web-implant"])
    web = estate.host("web-01")
    implant = next(p for p in web.processes if p.pid == 48213)
    assert implant.executable == "/tmp/.sysupdate" and implant.user == "www-data"
    assert "malicious" in implant.tags
    assert "/tmp/.sysupdate" in web.files
    assert estate.host("dc-01").tier == 0
    assert "198.51.100.20" in estate.business_critical_ips
    assert not any("malicious" in p.tags for p in estate.host("web-02").processes)


@pytest.mark.parametrize("case_id", case_ids())
def test_no_two_live_processes_share_a_pid(case_id: str, corpus_docs) -> None:
    """A pid names one process at a time on a host: the kill_process target is unambiguous."""
    spans: dict[tuple[str, int], dict[str, list[str]]] = {}
    for stream, _id, doc in corpus_docs(case_id):
        if stream != "logs-endpoint.events.process-default":
            continue
        p = doc["process"]
        key = (doc["host"]["name"], p["pid"])
        span = spans.setdefault(key, {}).setdefault(p["entity_id"], [p["start"], "9999"])
        if doc["event"]["action"] == "end":
            span[1] = p["end"]
    for (host, pid), by_entity in spans.items():
        ordered = sorted(by_entity.values())
        for (_s1, e1), (s2, _e2) in itertools.pairwise(ordered):
            assert e1 <= s2, f"{case_id}: {host} pid {pid} used by two live processes at {s2}"
