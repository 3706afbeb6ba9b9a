"""Entities in tool results (the guard's `seen`): a DNS lookup of one of the estate's hosts shows it."""

from __future__ import annotations

from pytest_soclab.sim.entities import extract

KNOWN = {"hosts": {"NASHUA", "web-01"}, "users": set()}


def esql(cols: list[str], *rows: list[object]) -> dict[str, object]:
    return {"columns": [{"name": c, "type": "keyword"} for c in cols], "values": [list(r) for r in rows]}


def test_a_dns_lookup_of_a_known_host_shows_the_host() -> None:
    found, _ = extract("esql_query", {"query": "FROM logs-zeek.dns-default"},
                       esql(["source.ip", "dns.question.name"], ["10.0.1.6", "NASHUA"]), KNOWN)
    assert "NASHUA" in found.hosts and "NASHUA" in found.domains and "10.0.1.6" in found.ips


def test_a_dns_lookup_of_any_other_name_stays_a_domain() -> None:
    found, _ = extract("es_search", {"index": "logs-zeek.dns-default"},
                       {"hits": {"hits": [{"_index": "x", "_source": {"dns": {"question": {"name": "evil.example"}}}}]}},
                       KNOWN)
    assert found.domains == {"evil.example"} and not found.hosts
