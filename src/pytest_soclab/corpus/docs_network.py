"""Network sensors' documents: Zeek's connection, DNS, HTTP and TLS logs, Suricata's alerts.

Fresh top-level dicts sharing their static blocks: read-only (see docs.py).
"""

from __future__ import annotations

from typing import Any

from pytest_soclab.corpus.docs import (
    CATEGORY_NETWORK,
    DS,
    ECS,
    SURICATA,
    ZEEK_CONN,
    ZEEK_DNS,
    ZEEK_HTTP,
    ZEEK_SSL,
)
from pytest_soclab.corpus.timeutil import iso_ms
from pytest_soclab.corpus.world import HostCtx

_ZEEK_CONN_TYPE = ["connection", "end"]
_ZEEK_PROTO_TYPE = ["connection", "protocol"]
_ZEEK_HTTP_CAT = ["network", "web"]
_ZEEK_HTTP_TYPE = ["connection", "info", "protocol"]
_IDS_CAT = ["network", "intrusion_detection"]


# -------------------------------------------------------------- zeek


def zeek_conn(
    sensor: HostCtx,
    ts: int,
    uid: str,
    src: str,
    sport: int,
    dst: str,
    dport: int,
    transport: str,
    service: str | None,
    duration_ms: int,
    obytes: int,
    rbytes: int,
    state: str,
    history: str,
    direction: str,
    community: str,
    local_orig: bool,
    local_resp: bool,
) -> dict[str, Any]:
    opk = 1 + obytes // 1200
    rpk = (1 + rbytes // 1200) if rbytes else 0
    net: dict[str, Any] = {
        "bytes": obytes + rbytes,
        "community_id": community,
        "direction": direction,
        "packets": opk + rpk,
        "transport": transport,
    }
    if service:
        net["protocol"] = service
    conn: dict[str, Any] = {
        "history": history,
        "local_orig": local_orig,
        "local_resp": local_resp,
        "missed_bytes": 0,
        "state": state,
    }
    return {
        "@timestamp": iso_ms(ts),
        "agent": sensor.filebeat_agent,
        "data_stream": DS[ZEEK_CONN],
        "destination": {"bytes": rbytes, "ip": dst, "packets": rpk, "port": dport},
        "ecs": ECS,
        "event": {
            "category": CATEGORY_NETWORK,
            "dataset": "zeek.connection",
            "duration": duration_ms * 1_000_000,
            "id": uid,
            "kind": "event",
            "module": "zeek",
            "type": _ZEEK_CONN_TYPE,
        },
        "host": sensor.host_block,
        "network": net,
        "related": {"ip": [src, dst]},
        "source": {"bytes": obytes, "ip": src, "packets": opk, "port": sport},
        "zeek": {"connection": conn, "session_id": uid},
    }


def _split_domain(name: str) -> tuple[str, str, str]:
    parts = name.rstrip(".").split(".")
    if len(parts) >= 3 and parts[-2] in ("co", "com", "org", "net", "ac") and len(parts[-1]) == 2:
        reg = ".".join(parts[-3:])
        tld = ".".join(parts[-2:])
        sub = ".".join(parts[:-3])
    else:
        reg = ".".join(parts[-2:])
        tld = parts[-1]
        sub = ".".join(parts[:-2])
    return reg, tld, sub


def zeek_dns(
    sensor: HostCtx,
    ts: int,
    uid: str,
    src: str,
    sport: int,
    dst: str,
    query: str,
    qtype: str,
    answers: list[str],
    rcode: str,
    trans_id: int,
    ttl: int = 300,
) -> dict[str, Any]:
    reg, tld, sub = _split_domain(query)
    question: dict[str, Any] = {
        "class": "IN",
        "name": query,
        "registered_domain": reg,
        "top_level_domain": tld,
        "type": qtype,
    }
    if sub:
        question["subdomain"] = sub
    dns: dict[str, Any] = {
        "header_flags": ["RD", "RA"],
        "id": str(trans_id),
        "question": question,
        "response_code": rcode,
        "type": "answer",
    }
    if answers:
        atype = (
            "CNAME"
            if qtype == "CNAME"
            else ("TXT" if qtype == "TXT" else ("AAAA" if qtype == "AAAA" else "A"))
        )
        dns["answers"] = [
            {"class": "IN", "data": a, "name": query, "ttl": ttl, "type": atype} for a in answers
        ]
        ips = [a for a in answers if a[:1].isdigit() or ":" in a]
        if ips:
            dns["resolved_ip"] = ips
    return {
        "@timestamp": iso_ms(ts),
        "agent": sensor.filebeat_agent,
        "data_stream": DS[ZEEK_DNS],
        "destination": {"ip": dst, "port": 53},
        "dns": dns,
        "ecs": ECS,
        "event": {
            "category": CATEGORY_NETWORK,
            "dataset": "zeek.dns",
            "id": uid,
            "kind": "event",
            "module": "zeek",
            "outcome": "success" if rcode == "NOERROR" else "failure",
            "type": _ZEEK_PROTO_TYPE,
        },
        "host": sensor.host_block,
        "network": {"protocol": "dns", "transport": "udp"},
        "related": {"ip": [src, dst]},
        "source": {"ip": src, "port": sport},
        "zeek": {
            "dns": {
                "AA": False,
                "RA": True,
                "RD": True,
                "TC": False,
                "answers": answers,
                "qclass": 1,
                "qclass_name": "C_INTERNET",
                "qtype_name": qtype,
                "query": query,
                "rcode_name": rcode,
                "rejected": False,
                "trans_id": str(trans_id),
            },
            "session_id": uid,
        },
    }


def zeek_http(
    sensor: HostCtx,
    ts: int,
    uid: str,
    src: str,
    sport: int,
    dst: str,
    dport: int,
    method: str,
    host: str,
    uri: str,
    status: int,
    user_agent: str,
    req_len: int,
    resp_len: int,
    mime: str | None = None,
) -> dict[str, Any]:
    path, _, query = uri.partition("?")
    url: dict[str, Any] = {"domain": host, "original": uri, "path": path, "port": dport}
    if query:
        url["query"] = query
    http: dict[str, Any] = {
        "request": {"body": {"bytes": req_len}, "method": method},
        "response": {"body": {"bytes": resp_len}, "status_code": status},
        "version": "1.1",
    }
    zh: dict[str, Any] = {"status_msg": _STATUS_MSG.get(status, ""), "tags": [], "trans_depth": 1}
    if mime:
        zh["resp_mime_types"] = [mime]
    doc = {
        "@timestamp": iso_ms(ts),
        "agent": sensor.filebeat_agent,
        "data_stream": DS[ZEEK_HTTP],
        "destination": {"ip": dst, "port": dport},
        "ecs": ECS,
        "event": {
            "category": _ZEEK_HTTP_CAT,
            "dataset": "zeek.http",
            "id": uid,
            "kind": "event",
            "module": "zeek",
            "outcome": "success" if status < 400 else "failure",
            "type": _ZEEK_HTTP_TYPE,
        },
        "host": sensor.host_block,
        "http": http,
        "network": {"protocol": "http", "transport": "tcp"},
        "related": {"ip": [src, dst]},
        "source": {"ip": src, "port": sport},
        "url": url,
        "zeek": {"http": zh, "session_id": uid},
    }
    if user_agent:
        doc["user_agent"] = {"original": user_agent}
    return doc


_STATUS_MSG = {
    200: "OK",
    201: "Created",
    204: "No Content",
    301: "Moved Permanently",
    302: "Found",
    304: "Not Modified",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    500: "Internal Server Error",
    502: "Bad Gateway",
}


def zeek_ssl(
    sensor: HostCtx,
    ts: int,
    uid: str,
    src: str,
    sport: int,
    dst: str,
    dport: int,
    sni: str,
    ja3: str,
    ja3s: str,
    version: str = "1.3",
    subject: str | None = None,
    issuer: str | None = None,
    established: bool = True,
) -> dict[str, Any]:
    tls: dict[str, Any] = {
        "cipher": "TLS_AES_256_GCM_SHA384" if version == "1.3" else "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
        "client": {"ja3": ja3, "server_name": sni},
        "curve": "x25519",
        "established": established,
        "resumed": False,
        "server": {"ja3s": ja3s},
        "version": version,
        "version_protocol": "tls",
    }
    if subject:
        tls["server"]["subject"] = subject
    if issuer:
        tls["server"]["issuer"] = issuer
    return {
        "@timestamp": iso_ms(ts),
        "agent": sensor.filebeat_agent,
        "data_stream": DS[ZEEK_SSL],
        "destination": {"ip": dst, "port": dport},
        "ecs": ECS,
        "event": {
            "category": CATEGORY_NETWORK,
            "dataset": "zeek.ssl",
            "id": uid,
            "kind": "event",
            "module": "zeek",
            "type": _ZEEK_PROTO_TYPE,
        },
        "host": sensor.host_block,
        "network": {"protocol": "ssl", "transport": "tcp"},
        "related": {"ip": [src, dst]},
        "source": {"ip": src, "port": sport},
        "tls": tls,
        "zeek": {
            "session_id": uid,
            "ssl": {
                "established": established,
                "resumed": False,
                "server": {"name": sni},
                "version": f"TLSv{version.replace('.', '')}",
            },
        },
    }


# -------------------------------------------------------------- suricata


def suricata_alert(
    sensor: HostCtx,
    ts: int,
    flow_id: int,
    src: str,
    sport: int,
    dst: str,
    dport: int,
    transport: str,
    community: str,
    sid: int,
    signature: str,
    category: str,
    severity: int,
    action: str = "allowed",
    app_proto: str | None = None,
) -> dict[str, Any]:
    eve: dict[str, Any] = {
        "alert": {
            "action": action,
            "category": category,
            "gid": 1,
            "rev": 3,
            "severity": severity,
            "signature": signature,
            "signature_id": sid,
        },
        "event_type": "alert",
        "flow_id": str(flow_id),
        "in_iface": "ens5",
    }
    if app_proto:
        eve["app_proto"] = app_proto
    return {
        "@timestamp": iso_ms(ts),
        "agent": sensor.filebeat_agent,
        "data_stream": DS[SURICATA],
        "destination": {"address": dst, "ip": dst, "port": dport},
        "ecs": ECS,
        "event": {
            "category": _IDS_CAT,
            "created": iso_ms(ts + 40),
            "dataset": "suricata.eve",
            "kind": "alert",
            "module": "suricata",
            "severity": severity,
            "type": ["allowed"] if action == "allowed" else ["denied"],
        },
        "host": sensor.host_block,
        "message": signature,
        "network": {"community_id": community, "protocol": app_proto or transport, "transport": transport},
        "related": {"ip": [src, dst]},
        "rule": {"category": category, "id": str(sid), "name": signature},
        "source": {"address": src, "ip": src, "port": sport},
        "suricata": {"eve": eve},
    }
