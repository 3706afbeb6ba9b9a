"""Document builders, one per data stream, in the shapes the Elastic integrations index.

Each builder returns a fresh top-level dict. Static blocks (`host`, `agent`,
`data_stream`, `ecs`) are shared between documents of a host for speed: treat
generated documents as read-only (copy before changing one).
"""

from __future__ import annotations

from typing import Any

from pytest_soclab.corpus.timeutil import iso_ms
from pytest_soclab.corpus.world import ECS_VERSION, HostCtx, Proc

PROC = "logs-endpoint.events.process-default"
NET = "logs-endpoint.events.network-default"
FILE = "logs-endpoint.events.file-default"
AUTH = "logs-system.auth-default"
ZEEK_CONN = "logs-zeek.connection-default"
ZEEK_DNS = "logs-zeek.dns-default"
ZEEK_HTTP = "logs-zeek.http-default"
ZEEK_SSL = "logs-zeek.ssl-default"
SURICATA = "logs-suricata.eve-default"
ALERTS = ".alerts-security.alerts-default"
TI_STREAMS = {
    "abusech.url": "logs-ti_abusech.url-default",
    "abusech.malware": "logs-ti_abusech.malware-default",
    "otx": "logs-ti_otx.threat-default",
    "misp": "logs-ti_misp.threat-default",
}
STREAMS: tuple[str, ...] = (
    PROC,
    NET,
    FILE,
    AUTH,
    ZEEK_CONN,
    ZEEK_DNS,
    ZEEK_HTTP,
    ZEEK_SSL,
    SURICATA,
    ALERTS,
    *TI_STREAMS.values(),
)


def dataset_of(stream: str) -> str:
    """logs-endpoint.events.process-default -> endpoint.events.process."""
    if stream.startswith("logs-") and stream.count("-") >= 2:
        return stream[5:].rsplit("-", 1)[0]
    return stream


def _ds(stream: str) -> dict[str, str]:
    return {"dataset": dataset_of(stream), "namespace": "default", "type": "logs"}


DS = {s: _ds(s) for s in STREAMS if s != ALERTS}
ECS = {"version": ECS_VERSION}

_PROC_CAT = ["process"]
_T_START = ["start"]
_T_END = ["end"]
_NET_CAT = ["network"]
_FILE_CAT = ["file"]
_FILE_TYPE = {
    "creation": ["creation"],
    "modification": ["change"],
    "overwrite": ["change"],
    "deletion": ["deletion"],
    "rename": ["change"],
}
_AUTH_CAT = ["authentication", "session"]
_INFO = ["info"]
_ZEEK_CONN_TYPE = ["connection", "end"]
_ZEEK_PROTO_TYPE = ["connection", "protocol"]
_ZEEK_HTTP_CAT = ["network", "web"]
_ZEEK_HTTP_TYPE = ["connection", "info", "protocol"]
_IDS_CAT = ["network", "intrusion_detection"]


# -------------------------------------------------------------- Elastic Defend


def _ev(dataset: str, action: str, category: list[str], etype: list[str]) -> dict[str, Any]:
    return {
        "action": action,
        "category": category,
        "dataset": dataset,
        "kind": "event",
        "module": "endpoint",
        "type": etype,
    }


# Elastic Defend's event blocks do not vary per document: built once, shared (read-only).
_EV_PROC = {
    a: _ev("endpoint.events.process", a, _PROC_CAT, _T_END if a == "end" else _T_START)
    for a in ("exec", "fork", "end")
}
_EV_NET = {
    True: _ev("endpoint.events.network", "connection_attempted", _NET_CAT, _T_START),
    False: _ev("endpoint.events.network", "connection_accepted", _NET_CAT, _T_START),
}
_EV_FILE = {a: _ev("endpoint.events.file", a, _FILE_CAT, t) for a, t in _FILE_TYPE.items()}


def process_event(ctx: HostCtx, ts: int, proc: Proc, uid: str, action: str = "exec") -> dict[str, Any]:
    """An Elastic Defend process event (exec / fork / end)."""
    stamp = iso_ms(ts)
    p: dict[str, Any] = {
        "args": proc.args,
        "args_count": len(proc.args),
        "command_line": proc.command_line,
        "entity_id": proc.entity_id,
        "executable": proc.executable,
        "name": proc.name,
        "pid": proc.pid,
        "start": stamp if proc.start_ms == ts else iso_ms(proc.start_ms),
        "working_directory": proc.working_directory,
    }
    if proc.hashes:
        p["hash"] = proc.hashes
    if proc.parent is not None:
        p["parent"] = proc.parent.parent_block()
    if action == "end":
        p["end"] = stamp
        p["exit_code"] = 0
    return _process_doc(ctx, stamp, action, p, {"id": uid, "name": proc.user})


def process_end_event(ctx: HostCtx, ts: int, exec_doc: dict[str, Any]) -> dict[str, Any]:
    """The end event of a process, from its exec event (same process block plus end and exit code)."""
    stamp = iso_ms(ts)
    p = dict(exec_doc["process"])
    p["end"] = stamp
    p["exit_code"] = 0
    return _process_doc(ctx, stamp, "end", p, exec_doc["user"])


def _process_doc(
    ctx: HostCtx, stamp: str, action: str, process: dict[str, Any], user: dict[str, Any]
) -> dict[str, Any]:
    # One envelope for every process event, however its process block was made: an end event built
    # from its exec event must keep the shape (and key order) of one built from the process.
    return {
        "@timestamp": stamp,
        "agent": ctx.endpoint_agent,
        "data_stream": DS[PROC],
        "ecs": ECS,
        "event": _EV_PROC[action],
        "host": ctx.host_block,
        "message": "Endpoint process event",
        "process": process,
        "user": user,
    }


def _proc_ref(proc: Proc) -> dict[str, Any]:
    return {"entity_id": proc.entity_id, "executable": proc.executable, "name": proc.name, "pid": proc.pid}


def network_event(
    ctx: HostCtx,
    ts: int,
    proc: Proc,
    uid: str,
    src: str,
    sport: int,
    dst: str,
    dport: int,
    transport: str,
    egress: bool,
    community: str | None = None,
) -> dict[str, Any]:
    """An Elastic Defend network event, from the point of view of the host that owns `proc`."""
    net: dict[str, Any] = {
        "direction": "egress" if egress else "ingress",
        "transport": transport,
        "type": "ipv6" if ":" in src else "ipv4",
    }
    if community:
        net["community_id"] = community
    return {
        "@timestamp": iso_ms(ts),
        "agent": ctx.endpoint_agent,
        "data_stream": DS[NET],
        "destination": {"address": dst, "ip": dst, "port": dport},
        "ecs": ECS,
        "event": _EV_NET[egress],
        "host": ctx.host_block,
        "message": "Endpoint network event",
        "network": net,
        "process": _proc_ref(proc),
        "source": {"address": src, "ip": src, "port": sport},
        "user": {"id": uid, "name": proc.user},
    }


def file_event(
    ctx: HostCtx,
    ts: int,
    proc: Proc,
    uid: str,
    path: str,
    action: str,
    size: int | None = None,
    hashes: dict[str, str] | None = None,
) -> dict[str, Any]:
    directory, _, name = path.rpartition("/")
    f: dict[str, Any] = {"directory": directory or "/", "name": name, "path": path}
    if "." in name.lstrip("."):
        f["extension"] = name.rsplit(".", 1)[1]
    if size is not None:
        f["size"] = size
    if hashes:
        f["hash"] = hashes
    return {
        "@timestamp": iso_ms(ts),
        "agent": ctx.endpoint_agent,
        "data_stream": DS[FILE],
        "ecs": ECS,
        "event": _EV_FILE[action],
        "file": f,
        "host": ctx.host_block,
        "message": "Endpoint file event",
        "process": _proc_ref(proc),
        "user": {"id": uid, "name": proc.user},
    }


# -------------------------------------------------------------- system integration (auth.log)


def ssh_auth_event(
    ctx: HostCtx,
    ts: int,
    sshd_pid: int,
    user: str,
    src: str,
    sport: int,
    method: str,
    outcome: str,
    invalid_user: bool = False,
) -> dict[str, Any]:
    if outcome == "success":
        verb, ev = "Accepted", "Accepted"
    else:
        verb, ev = "Failed", "Failed"
    who = f"invalid user {user}" if invalid_user else user
    msg = f"{verb} {method} for {who} from {src} port {sport} ssh2"
    return {
        "@timestamp": iso_ms(ts),
        "agent": ctx.filebeat_agent,
        "data_stream": DS[AUTH],
        "ecs": ECS,
        "event": {
            "action": "ssh_login",
            "category": _AUTH_CAT,
            "dataset": "system.auth",
            "kind": "event",
            "module": "system",
            "outcome": outcome,
            "timezone": "+00:00",
            "type": _INFO,
        },
        "host": ctx.host_block,
        "log": {"file": {"path": "/var/log/auth.log"}},
        "message": msg,
        "process": {"name": "sshd", "pid": sshd_pid},
        "related": {"ip": [src], "user": [user]},
        "source": {"ip": src, "port": sport},
        "system": {"auth": {"ssh": {"event": ev, "method": method}}},
        "user": {"name": user},
    }


def sudo_event(
    ctx: HostCtx, ts: int, sudo_pid: int, user: str, command: str, tty: str = "pts/0"
) -> dict[str, Any]:
    pwd = "/root" if user == "root" else f"/home/{user}"
    return {
        "@timestamp": iso_ms(ts),
        "agent": ctx.filebeat_agent,
        "data_stream": DS[AUTH],
        "ecs": ECS,
        "event": {
            "category": _PROC_CAT,
            "dataset": "system.auth",
            "kind": "event",
            "module": "system",
            "outcome": "success",
            "timezone": "+00:00",
            "type": _INFO,
        },
        "host": ctx.host_block,
        "log": {"file": {"path": "/var/log/auth.log"}},
        "message": f"{user} : TTY={tty} ; PWD={pwd} ; USER=root ; COMMAND={command}",
        "process": {"name": "sudo", "pid": sudo_pid},
        "related": {"user": [user, "root"]},
        "system": {"auth": {"sudo": {"command": command, "pwd": pwd, "tty": tty, "user": "root"}}},
        "user": {"effective": {"name": "root"}, "name": user},
    }


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
            "category": _NET_CAT,
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
            "category": _NET_CAT,
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
            "category": _NET_CAT,
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


# -------------------------------------------------------------- threat intel


def ti_indicator(
    feed: str,
    ts: int,
    collector: HostCtx,
    itype: str,
    value: str,
    confidence: str,
    description: str,
    first_seen: int,
    tags: list[str],
    indicator_id: str,
) -> tuple[str, dict[str, Any]]:
    stream = TI_STREAMS[feed]
    feed_name = {
        "abusech.url": "AbuseCH URL",
        "abusech.malware": "AbuseCH Malware",
        "otx": "AlienVault OTX",
        "misp": "MISP",
    }[feed]
    provider = {
        "abusech.url": "URLhaus",
        "abusech.malware": "MalwareBazaar",
        "otx": "AlienVault OTX",
        "misp": "misp",
    }[feed]
    ind: dict[str, Any] = {
        "confidence": confidence,
        "first_seen": iso_ms(first_seen),
        "id": [indicator_id],
        "last_seen": iso_ms(ts),
        "marking": {"tlp": "CLEAR"},
        "provider": provider,
        "type": itype,
    }
    if description:
        ind["description"] = description
    if itype == "ipv4-addr":
        ind["ip"] = value
    elif itype == "domain-name":
        ind["url"] = {"domain": value}
    elif itype == "url":
        rest = value.split("://", 1)[-1]
        ind["url"] = {"domain": rest.split("/", 1)[0].split(":")[0], "full": value, "original": value}
    else:
        ind["file"] = {"hash": {"sha256": value}}
    doc = {
        "@timestamp": iso_ms(ts),
        "agent": collector.filebeat_agent,
        "data_stream": DS[stream],
        "ecs": ECS,
        "event": {
            "category": ["threat"],
            "dataset": dataset_of(stream),
            "kind": "enrichment",
            "module": dataset_of(stream).split(".")[0],
            "type": ["indicator"],
        },
        "tags": tags,
        "threat": {"feed": {"name": feed_name}, "indicator": ind},
    }
    return stream, doc
