"""Carriers: the telemetry fields an attacker writes, and how a text is planted in each.

Each carrier turns one piece of attacker text into one planted document of its data stream, or
refuses a text the field cannot hold (a file name has no `/` and at most 255 bytes; a DNS name
is labels of `a-z0-9-`). On a generated estate the document is partial (`expand_planted` fills
the rest as the stream's documents have it); on a recorded one it is written as Windows or Zeek
logs it and mapped by the recording's importer (`recorded.py`). Text only goes where the
attacker really writes it: the arguments of a process they run, a file they create, a header or
URI they send, a name they resolve, an alert's copy of their command line, an indicator they
publish to a community feed, a registry value they set.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import quote_plus

from pytest_soclab.attacks import recorded
from pytest_soclab.attacks.bases import Base

KEYWORD_LIMIT = 1000  # under ignore_above (1,024): longer values are stored but never found


def _token(*parts: object, n: int = 18) -> str:
    digest = hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()
    return "C" + "".join(c for c in digest if c.isalnum())[: n - 1]


def _num(*parts: object, lo: int = 30000, hi: int = 60000) -> int:
    return lo + int(hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()[:8], 16) % (hi - lo)


def _ts(base: Base, n: int) -> str:
    """Shortly after the trigger, spaced per document, inside the case window."""
    t = datetime.fromisoformat(base.time.replace("Z", "+00:00")) + timedelta(minutes=3 + 2 * n, seconds=n * 7)
    hi = datetime.fromisoformat(base.window[1].replace("Z", "+00:00")) - timedelta(minutes=1)
    t = min(t, hi)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{(n * 137) % 1000:03d}Z"


def dns_name(text: str, domain: str) -> str | None:
    """Text as DNS labels under the attacker's domain; None when it does not fit (253 characters)."""
    words = re.sub(r"[^a-z0-9]+", "-", text.lower().replace(".", "-")).strip("-")
    labels, cur = [], ""
    for w in words.split("-"):
        if len(w) > 63:
            return None
        if cur and len(cur) + 1 + len(w) > 40:  # short labels read like a CDN's
            labels.append(cur)
            cur = w
        else:
            cur = f"{cur}-{w}" if cur else w
    if cur:
        labels.append(cur)
    name = ".".join([*labels, domain])
    return name if labels and len(name) <= 253 else None


Plant = Callable[[Base, str, int, str], dict[str, Any] | None]  # (base, text, n, attacker domain) -> doc


@dataclass(frozen=True)
class Carrier:
    name: str
    field: str  # where the text is (for the reader and the scenario's `vector`)
    # Generated estates: a partial document of `stream`, which `expand_planted` completes.
    stream: str | None
    plant: Plant | None
    # Recorded estates: a complete document of `recorded_stream`, as the recording's importer maps it.
    recorded_stream: str | None = None
    recorded: Plant | None = None
    short: bool = False  # holds only the short form of an order (a DNS name)
    needs_attacker: bool = False  # a record about the attacker's address: only where the case has one

    def stream_for(self, base: Base) -> str | None:
        return self.recorded_stream if base.recorded else self.stream

    def fits(self, base: Base) -> bool:
        stream = self.stream_for(base)
        return stream is not None and stream in base.streams and (base.known_attacker or not self.needs_attacker)

    def document(self, base: Base, text: str, n: int, domain: str) -> dict[str, Any] | None:
        plant = self.recorded if base.recorded else self.plant
        return plant(base, text, n, domain) if plant is not None else None


def _cmdline(base: Base, text: str, n: int, _d: str) -> dict[str, Any] | None:
    if len(text) > KEYWORD_LIMIT - 40:
        return None
    return {
        "@timestamp": _ts(base, n),
        "host.name": base.host,
        "user": {"id": "33", "name": "www-data"},
        "process": {
            "executable": "/usr/bin/logger",
            "working_directory": "/tmp",
            "args": ["logger", "-t", "ops-note", text],
            "parent": {"pid": _num(base.id, n, "ppid"), "name": "bash", "executable": "/usr/bin/bash"},
        },
    }


def _name_pieces(text: str, size: Callable[[str], int], limit: int = 200) -> list[str] | None:
    """The text cut at spaces into pieces a file name can hold (the last is the file's name, the
    others the folders the attacker creates for it); None when one word alone is too long."""
    parts, cur = [], ""
    for w in text.split(" "):
        if size(w) > limit:
            return None
        if cur and size(f"{cur} {w}") > limit:
            parts.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}" if cur else w
    parts.append(cur)
    return parts


def _file(base: Base, text: str, n: int, _d: str) -> dict[str, Any] | None:
    # A file name holds no slash (attackers write a lookalike) and at most 255 bytes; a longer text
    # becomes nested directories, each named by a piece of it, which the attacker creates too.
    parts = _name_pieces(text.replace("/", "\u2044"), lambda t: len(t.encode()))  # ext4: 255 bytes
    if parts is None:
        return None
    path = "/var/tmp/" + "/".join(parts)
    if len(path.encode()) > KEYWORD_LIMIT or "\n" in path:
        return None
    return {
        "@timestamp": _ts(base, n),
        "host.name": base.host,
        "user": {"id": "33", "name": "www-data"},
        "file": {"path": path, "directory": path.rsplit("/", 1)[0], "name": parts[-1], "size": 0},
        "process": {"pid": _num(base.id, n, "touch"), "name": "touch", "executable": "/usr/bin/touch"},
    }


def _http(base: Base, n: int, ua: str, uri: str, query: str | None) -> dict[str, Any]:
    sid = _token(base.id, n, uri, ua)
    url: dict[str, Any] = {"original": uri, "path": uri.split("?")[0]}
    if query is not None:
        url["query"] = query
    return {
        "@timestamp": _ts(base, n),
        "source": {"ip": base.attacker_ip, "port": _num(base.id, n, "sport")},
        "destination": {"ip": base.host_ip, "port": 80},
        "network": {"protocol": "http", "transport": "tcp"},
        "related": {"ip": [base.attacker_ip, base.host_ip]},
        "http": {
            "version": "1.1",
            "request": {"method": "GET", "body": {"bytes": 0}},
            "response": {"status_code": 404, "body": {"bytes": 162}},
        },
        "url": url,
        "user_agent": {"original": ua},
        "zeek": {"session_id": sid, "http": {"status_msg": "Not Found", "trans_depth": 1, "tags": []}},
        "event": {"id": sid, "outcome": "failure"},
    }


def _user_agent(base: Base, text: str, n: int, _d: str) -> dict[str, Any] | None:
    ua = f"Mozilla/5.0 (X11; Linux x86_64) {text}"
    if len(ua) > KEYWORD_LIMIT or "\n" in ua:
        return None
    return _http(base, n, ua, "/index.php", None)


def _url(base: Base, text: str, n: int, _d: str) -> dict[str, Any] | None:
    query = "q=" + quote_plus(text)
    uri = "/search?" + query
    if len(uri) > KEYWORD_LIMIT:
        return None
    return _http(base, n, "Mozilla/5.0 (Windows NT 10.0; Win64; x64)", uri, query)


def _dns(base: Base, text: str, n: int, domain: str) -> dict[str, Any] | None:
    name = dns_name(text, domain)
    resolver = base.roles.get("resolver_ip")
    if name is None or resolver is None:
        return None
    sid = _token(base.id, n, name)
    sub = name[: -len(domain) - 1]
    return {
        "@timestamp": _ts(base, n),
        "source": {"ip": base.host_ip, "port": _num(base.id, n, "dport")},
        "destination": {"ip": resolver, "port": 53},
        "network": {"protocol": "dns", "transport": "udp"},
        "related": {"ip": [base.host_ip, resolver]},
        "dns": {
            "id": str(_num(base.id, n, "dnsid", lo=1000, hi=65000)),
            "type": "answer",
            "response_code": "NXDOMAIN",
            "header_flags": ["RD", "RA"],
            "question": {
                "name": name,
                "registered_domain": domain,
                "top_level_domain": domain.rsplit(".", 1)[-1],
                "subdomain": sub,
                "type": "A",
                "class": "IN",
            },
        },
        "zeek": {
            "session_id": sid,
            "dns": {
                "query": name, "qclass": 1, "qclass_name": "C_INTERNET", "qtype_name": "A",
                "rcode_name": "NXDOMAIN", "trans_id": "1", "AA": False, "RA": True, "RD": True, "TC": False,
                "rejected": False,
            },
        },  # fmt: skip
        "event": {"id": sid, "outcome": "failure"},
    }


def _alert(base: Base, text: str, n: int, _d: str) -> dict[str, Any] | None:
    if len(text) > KEYWORD_LIMIT - 100:
        return None
    pid = _num(base.id, n, "alertpid")
    ts = _ts(base, n)
    rule = "Unusual Process Execution via Logger"
    return {
        "@timestamp": ts,
        "host.name": base.host,
        "agent": {"type": "endpoint", "version": "8.15.3"},
        "user": {"id": "33", "name": "www-data"},
        "process": {
            "pid": pid,
            "name": "logger",
            "executable": "/usr/bin/logger",
            "args": ["logger", "-t", "ops-note", "see alert reason"],
            "parent": {"pid": pid - 2, "name": "bash", "executable": "/usr/bin/bash"},
        },
        "event": {
            "action": "exec", "category": ["process"], "dataset": "endpoint.events.process", "module": "endpoint",
            "type": ["start"], "kind": "signal",
        },  # fmt: skip
        "kibana": {
            "space_ids": ["default"],
            "version": "8.15.3",
            "alert": {
                "depth": 1,
                "original_time": ts,
                "original_event": {
                    "action": "exec", "category": ["process"], "dataset": "endpoint.events.process", "kind": "event",
                    "module": "endpoint", "type": ["start"],
                },  # fmt: skip
                "reason": f"process event with process logger, by www-data on {base.host} created low alert {rule}. {text}",
                "risk_score": 21,
                "severity": "low",
                "status": "active",
                "workflow_status": "open",
                "uuid": hashlib.sha256(f"{base.id}|{n}|{text}".encode()).hexdigest(),
                "rule": {
                    "name": rule,
                    "description": "logger was run by a web server account.",
                    "severity": "low",
                    "risk_score": 21,
                    "type": "new_terms",
                    "category": "New Terms Rule",
                    "consumer": "siem",
                    "enabled": True,
                    "from": "now-6m",
                    "interval": "5m",
                    "version": "2",
                },
            },
        },
    }


def _ti(base: Base, n: int, indicator: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    ts = _ts(base, n)
    return {
        "@timestamp": ts,
        "agent": {"type": "filebeat", "name": "monitor-01"},
        "event": {"category": ["threat"], "kind": "enrichment", "module": "ti_otx", "type": ["indicator"]},
        "tags": ["community-feed"],
        "threat": {
            "feed": {"name": "AlienVault OTX"},
            "indicator": {
                "provider": "AlienVault OTX",
                "confidence": "Medium",
                "first_seen": base.window[0].replace("Z", ".000Z"),
                "last_seen": ts,
                "marking": {"tlp": "CLEAR"},
                "id": [hashlib.sha256(f"{base.id}|ti|{n}".encode()).hexdigest()[:24]],
                **indicator,
            },
        },
        **extra,
    }


def _ti_note(base: Base, text: str, n: int, _d: str) -> dict[str, Any] | None:
    if len(text) > 4000:
        return None
    return _ti(base, n, {"type": "ipv4-addr", "ip": base.attacker_ip, "description": text}, {})


def _ti_email(base: Base, text: str, n: int, domain: str) -> dict[str, Any] | None:
    if len(text) > KEYWORD_LIMIT or "\n" in text:
        return None
    indicator = {
        "type": "email-addr",
        "ip": base.attacker_ip,
        "email": {"address": f"billing@{domain}"},
        "description": "Phishing sender; the lure's subject is in email.subject.",
    }
    return _ti(base, n, indicator, {"email": {"subject": text}})


# -- recorded (Windows and Zeek) estates ----------------------------------------------------------
def _win_cmdline(base: Base, text: str, n: int, _d: str) -> dict[str, Any] | None:
    cmd = f'"{recorded.CMD}" /c rem {text}'
    if len(cmd) > KEYWORD_LIMIT or "\n" in text:
        return None
    return recorded.sysmon_process(base, n, _ts(base, n), cmd)


def _win_file(base: Base, text: str, n: int, _d: str) -> dict[str, Any] | None:
    parts = _name_pieces(recorded.file_name(text), len)  # NTFS: 255 characters
    if parts is None:
        return None
    path = "C:\\Users\\Public\\Documents\\" + "\\".join(parts)
    if len(path) > KEYWORD_LIMIT or "\n" in path:
        return None
    return recorded.sysmon_file(base, n, _ts(base, n), path)


def _win_event(base: Base, text: str, n: int, _d: str) -> dict[str, Any] | None:
    cmd = f'"{recorded.CMD}" /c echo {text}'
    if len(cmd) > KEYWORD_LIMIT or "\n" in text:
        return None
    return recorded.security_process(base, n, _ts(base, n), cmd)


def _registry(base: Base, text: str, n: int, _d: str) -> dict[str, Any] | None:
    if len(text) > KEYWORD_LIMIT or "\n" in text:
        return None
    key = rf"HKU\{recorded.user_sid(base)}\Software\Microsoft\Windows\CurrentVersion\Run\OpsNote"
    return recorded.sysmon_registry(base, n, _ts(base, n), key, text)


def _win_alert(base: Base, text: str, n: int, _d: str) -> dict[str, Any] | None:
    if len(text) > KEYWORD_LIMIT - 100:
        return None
    source = recorded.sysmon_process(base, n, _ts(base, n), f'"{recorded.CMD}" /c rem see alert reason')
    if source is None:
        return None
    return recorded.detection(base, n, source, "Unusual Command Interpreter Execution", text)


def _win_user_agent(base: Base, text: str, n: int, _d: str) -> dict[str, Any] | None:
    ua = f"Mozilla/5.0 (Windows NT 10.0; Win64; x64) {text}"
    if len(ua) > KEYWORD_LIMIT or "\n" in ua:
        return None
    return recorded.zeek_http(base, n, _ts(base, n), ua, "/index.html")


def _win_url(base: Base, text: str, n: int, _d: str) -> dict[str, Any] | None:
    uri = "/search?q=" + quote_plus(text)
    if len(uri) > KEYWORD_LIMIT:
        return None
    return recorded.zeek_http(base, n, _ts(base, n), "Mozilla/5.0 (Windows NT 10.0; Win64; x64)", uri)


def _win_dns(base: Base, text: str, n: int, domain: str) -> dict[str, Any] | None:
    name = dns_name(text, domain)
    return recorded.zeek_dns(base, n, _ts(base, n), name) if name is not None else None


CARRIERS: dict[str, Carrier] = {
    c.name: c
    for c in (
        Carrier("cmdline", "process.args / process.command_line", "logs-endpoint.events.process-default", _cmdline,
                recorded.SYSMON, _win_cmdline),
        Carrier("file-path", "file.path / file.name", "logs-endpoint.events.file-default", _file,
                recorded.SYSMON, _win_file),
        Carrier("user-agent", "user_agent.original", "logs-zeek.http-default", _user_agent,
                recorded.ZEEK_HTTP, _win_user_agent),
        Carrier("dns-name", "dns.question.name", "logs-zeek.dns-default", _dns, recorded.ZEEK_DNS, _win_dns,
                short=True),
        Carrier("http-url", "url.original / url.query", "logs-zeek.http-default", _url, recorded.ZEEK_HTTP, _win_url),
        Carrier("alert-reason", "kibana.alert.reason", ".alerts-security.alerts-default", _alert,
                recorded.ALERTS, _win_alert),
        Carrier("ti-note", "threat.indicator.description", "logs-ti_otx.threat-default", _ti_note,
                needs_attacker=True),
        Carrier("ti-email-subject", "email.subject of a phishing indicator", "logs-ti_otx.threat-default", _ti_email,
                needs_attacker=True),
        # Windows carriers: only recorded Windows estates have these streams.
        Carrier("win-event", "message / process.command_line of a Security 4688 event", None, None,
                recorded.SECURITY, _win_event),
        Carrier("registry-value", "registry.data.strings of a Sysmon 13 event", None, None,
                recorded.SYSMON, _registry),
    )
}  # fmt: skip
