"""Zeek records -> (data stream, ECS document), as Elastic's `zeek` integration maps them.

Every record gets @timestamp from `ts`, `zeek.session_id`/`event.id` from `uid`, source/destination
from `id.orig_h/p` and `id.resp_h/p`, `network.transport` from `proto`, `event.duration` (ns) from
`duration`, `network.community_id`; then per-log ECS fields (dns.*, http.*, url.*, tls.*, file.*,
x509.*, user.*, ...). All of the record's own fields also stay under `zeek.<dataset>.*` with Zeek's
names, so nothing a Zeek user knows is missing. Any log without a mapping of its own still lands
in `logs-zeek.<log>-default`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from pytest_soclab.importers import streams
from pytest_soclab.importers.community_id import community_id
from pytest_soclab.importers.ecs import (
    ECS_VERSION, Doc, append_unique, epoch_iso, get, integer, ip, nest, parse_time, port, put,
)  # fmt: skip

DATASETS = {"conn": "connection"}  # Zeek's log name -> Elastic's data set name, where they differ
KNOWN_LOGS = frozenset({
    "conn", "dns", "http", "ssl", "x509", "files", "smb_files", "smb_mapping", "smb_cmd", "dce_rpc", "kerberos",
    "ntlm", "rdp", "ssh", "notice", "weird", "pe", "software", "known_hosts", "known_services", "known_certs",
    "dpd", "dhcp", "ftp", "smtp", "snmp", "sip", "socks", "tunnel", "intel", "signatures", "capture_loss",
    "stats", "syslog", "radius", "mysql", "irc", "ocsp", "modbus", "dnp3", "traceroute", "packet_filter",
    "reporter", "loaded_scripts", "analyzer", "ntp", "quic", "websocket",
})  # fmt: skip
_NET = ["network"]
_PROTO_TYPE = ["connection", "protocol"]
_SKIP = {"ts", "uid", "id.orig_h", "id.orig_p", "id.resp_h", "id.resp_p", "_path", "@stream", "@system", "@proc",
         "_write_ts"}  # fmt: skip
_SAFE_NAME = re.compile(r"[^a-z0-9_]+")


def log_name_from_file(name: str) -> str:
    """`conn.log`, `conn.00:00:00-01:00:00.log.gz`, `SENSOR_smb_files.log` -> the Zeek log name."""
    stem = name.rsplit("/", 1)[-1]
    for suffix in (".gz", ".json", ".log"):
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
    stem = stem.split(".", 1)[0].lower()
    parts = stem.split("_")
    for i in range(len(parts)):  # a sensor-name prefix: drop leading parts until a known log name is left
        if "_".join(parts[i:]) in KNOWN_LOGS:
            return "_".join(parts[i:])
    return _SAFE_NAME.sub("_", stem).strip("_") or "unknown"


def dataset_of(log: str) -> str:
    log = _SAFE_NAME.sub("_", log.lower()).strip("_") or "unknown"
    return DATASETS.get(log, log)


def _time(value: Any) -> str | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return epoch_iso(float(value))
    return parse_time(value)


def _first(value: Any) -> Any:
    return value[0] if isinstance(value, list) and value else (None if isinstance(value, list) else value)


def to_doc(log: str, rec: dict[str, Any], original: str) -> tuple[str, Doc]:
    """(stream, document) for one record of Zeek log `log`; ValueError when it has no usable `ts`."""
    dataset = dataset_of(log)
    when = _time(rec.get("ts"))
    if when is None:
        raise ValueError("no valid ts")
    doc: Doc = {
        "@timestamp": when,
        "data_stream": streams.data_stream(f"zeek.{dataset}"),
        "ecs": {"version": ECS_VERSION},
        "event": {"dataset": f"zeek.{dataset}", "kind": "event", "module": "zeek", "original": original},
    }
    uid = rec.get("uid")
    put(doc, "zeek.session_id", uid)
    put(doc, "event.id", uid)
    put(doc, "host.name", rec.get("@system"))
    src, dst = ip(rec.get("id.orig_h")), ip(rec.get("id.resp_h"))
    sport, dport = port(rec.get("id.orig_p")), port(rec.get("id.resp_p"))
    put(doc, "source.ip", src)
    put(doc, "source.address", rec.get("id.orig_h"))
    put(doc, "source.port", sport)
    put(doc, "destination.ip", dst)
    put(doc, "destination.address", rec.get("id.resp_h"))
    put(doc, "destination.port", dport)
    transport = rec.get("proto")
    if isinstance(transport, str):
        put(doc, "network.transport", transport.lower())
        if src and dst and sport is not None and dport is not None:
            put(doc, "network.community_id", community_id(src, sport, dst, dport, transport))
    duration = rec.get("duration")
    if isinstance(duration, (int, float)) and not isinstance(duration, bool):
        put(doc, "event.duration", round(duration * 1_000_000_000))
    rest: Doc = {}
    for key, value in rec.items():
        if key not in _SKIP and value is not None:
            nest(rest, key, _time(value) if _is_time_field(key) else value)
    if rest:
        doc["zeek"] = {**doc.get("zeek", {}), dataset: rest}
    append_unique(doc, "related.ip", src, dst)  # the endpoints first, then what the log adds
    handler = _HANDLERS.get(log)
    if handler:
        handler(doc, rec)
    else:
        put(doc, "event.category", list(_NET))
        put(doc, "event.type", ["info"])
    append_unique(doc, "related.ip", get(doc, "source.ip"), get(doc, "destination.ip"))
    append_unique(doc, "related.user", get(doc, "user.name"))
    return streams.zeek_stream(dataset), doc


def _is_time_field(key: str) -> bool:
    return key in ("certificate.not_valid_before", "certificate.not_valid_after", "compile_ts") or key.startswith("times.")


def _cat(doc: Doc, category: list[str], types: list[str], protocol: str | None = None) -> None:
    put(doc, "event.category", category)
    put(doc, "event.type", types)
    put(doc, "network.protocol", protocol)


def _conn(doc: Doc, r: dict[str, Any]) -> None:
    _cat(doc, list(_NET), ["connection", "end"], r.get("service"))
    ob, rb, op, rp = (integer(r.get(k)) for k in ("orig_bytes", "resp_bytes", "orig_pkts", "resp_pkts"))
    put(doc, "source.bytes", ob)
    put(doc, "destination.bytes", rb)
    put(doc, "source.packets", op)
    put(doc, "destination.packets", rp)
    if ob is not None or rb is not None:
        put(doc, "network.bytes", (ob or 0) + (rb or 0))
    if op is not None or rp is not None:
        put(doc, "network.packets", (op or 0) + (rp or 0))
    put(doc, "source.mac", r.get("orig_l2_addr"))
    put(doc, "destination.mac", r.get("resp_l2_addr"))
    put(doc, "zeek.connection.state", r.get("conn_state"))
    lo, lr = r.get("local_orig"), r.get("local_resp")
    if isinstance(lo, bool) and isinstance(lr, bool):
        put(doc, "network.direction", {(True, True): "internal", (True, False): "outbound",
                                       (False, True): "inbound", (False, False): "external"}[(lo, lr)])  # fmt: skip


def _dns(doc: Doc, r: dict[str, Any]) -> None:
    _cat(doc, list(_NET), ["connection", "protocol", "info"], "dns")
    put(doc, "dns.question.name", r.get("query"))
    put(doc, "dns.question.type", r.get("qtype_name"))
    put(doc, "dns.question.class", r.get("qclass_name"))
    if r.get("trans_id") is not None:
        put(doc, "dns.id", str(r["trans_id"]))
    put(doc, "dns.response_code", r.get("rcode_name"))
    answers = r.get("answers") if isinstance(r.get("answers"), list) else []
    ttls = r.get("TTLs") if isinstance(r.get("TTLs"), list) else []
    out = []
    for i, data in enumerate(answers):
        if data is None:
            continue
        entry: dict[str, Any] = {"data": data}
        if i < len(ttls) and isinstance(ttls[i], (int, float)):
            entry["ttl"] = int(ttls[i])
        out.append(entry)
    put(doc, "dns.answers", out)
    resolved = [a for a in (ip(x) for x in answers) if a]
    put(doc, "dns.resolved_ip", resolved)
    flags = [f for f in ("AA", "TC", "RD", "RA") if r.get(f) is True]
    put(doc, "dns.header_flags", flags)
    put(doc, "dns.type", "answer" if answers or r.get("rcode_name") else "query")
    append_unique(doc, "related.ip", *resolved)
    append_unique(doc, "related.hosts", r.get("query"))


def _http(doc: Doc, r: dict[str, Any]) -> None:
    _cat(doc, ["network", "web"], ["connection", "info", "protocol"], "http")
    put(doc, "http.request.method", r.get("method"))
    put(doc, "http.request.referrer", r.get("referrer"))
    put(doc, "http.request.body.bytes", integer(r.get("request_body_len")))
    put(doc, "http.response.body.bytes", integer(r.get("response_body_len")))
    status = integer(r.get("status_code"))
    put(doc, "http.response.status_code", status)
    put(doc, "http.response.mime_type", _first(r.get("resp_mime_types")))
    put(doc, "http.version", r.get("version"))
    put(doc, "user_agent.original", r.get("user_agent"))
    put(doc, "user.name", r.get("username"))
    host, uri = r.get("host"), r.get("uri")
    put(doc, "url.domain", host)
    if isinstance(uri, str) and uri:
        put(doc, "url.original", uri)
        path, _, query = uri.partition("?")
        put(doc, "url.path", path)
        put(doc, "url.query", query)
    put(doc, "url.port", get(doc, "destination.port"))
    if status is not None:
        put(doc, "event.outcome", "success" if status < 400 else "failure")


_TLS_VERSIONS = {"TLSv10": ("tls", "1.0"), "TLSv11": ("tls", "1.1"), "TLSv12": ("tls", "1.2"),
                 "TLSv13": ("tls", "1.3"), "SSLv2": ("ssl", "2.0"), "SSLv3": ("ssl", "3.0"),
                 "DTLSv10": ("dtls", "1.0"), "DTLSv12": ("dtls", "1.2")}  # fmt: skip


def _ssl(doc: Doc, r: dict[str, Any]) -> None:
    _cat(doc, list(_NET), list(_PROTO_TYPE), "ssl")
    version = _TLS_VERSIONS.get(str(r.get("version")))
    if version:
        put(doc, "tls.version_protocol", version[0])
        put(doc, "tls.version", version[1])
    put(doc, "tls.cipher", r.get("cipher"))
    put(doc, "tls.curve", r.get("curve"))
    put(doc, "tls.client.server_name", r.get("server_name"))
    put(doc, "destination.domain", r.get("server_name"))
    for key in ("resumed", "established"):
        if isinstance(r.get(key), bool):
            put(doc, f"tls.{key}", r[key])
    put(doc, "tls.next_protocol", r.get("next_protocol"))
    put(doc, "tls.server.subject", r.get("subject"))
    put(doc, "tls.server.issuer", r.get("issuer"))
    put(doc, "tls.client.subject", r.get("client_subject"))
    put(doc, "tls.client.issuer", r.get("client_issuer"))
    put(doc, "tls.client.ja3", r.get("ja3"))
    put(doc, "tls.server.ja3s", r.get("ja3s"))


def _x509(doc: Doc, r: dict[str, Any]) -> None:
    _cat(doc, list(_NET), ["info"])
    c = lambda k: r.get(f"certificate.{k}")  # noqa: E731 - a local shorthand
    put(doc, "x509.version_number", None if c("version") is None else str(c("version")))
    put(doc, "x509.serial_number", c("serial"))
    put(doc, "x509.subject.distinguished_name", c("subject"))
    put(doc, "x509.issuer.distinguished_name", c("issuer"))
    put(doc, "x509.not_before", _time(c("not_valid_before")))
    put(doc, "x509.not_after", _time(c("not_valid_after")))
    put(doc, "x509.public_key_algorithm", c("key_alg"))
    put(doc, "x509.signature_algorithm", c("sig_alg"))
    put(doc, "x509.public_key_size", integer(c("key_length")))
    put(doc, "x509.public_key_exponent", integer(c("exponent")))
    put(doc, "x509.alternative_names", r.get("san.dns"))


def _files(doc: Doc, r: dict[str, Any]) -> None:
    _cat(doc, ["file"], ["info"])
    for algo in ("md5", "sha1", "sha256"):
        put(doc, f"file.hash.{algo}", r.get(algo))
        append_unique(doc, "related.hash", r.get(algo))
    put(doc, "file.mime_type", r.get("mime_type"))
    put(doc, "file.name", r.get("filename"))
    put(doc, "file.size", integer(r.get("total_bytes")) if r.get("total_bytes") is not None else integer(r.get("seen_bytes")))
    tx, rx = r.get("tx_hosts"), r.get("rx_hosts")
    if get(doc, "source.ip") is None and isinstance(tx, list) and len(tx) == 1:
        put(doc, "source.ip", ip(tx[0]))
    if get(doc, "destination.ip") is None and isinstance(rx, list) and len(rx) == 1:
        put(doc, "destination.ip", ip(rx[0]))
    for host in (tx if isinstance(tx, list) else []) + (rx if isinstance(rx, list) else []):
        append_unique(doc, "related.ip", ip(host))


def _smb_files(doc: Doc, r: dict[str, Any]) -> None:
    _cat(doc, ["network", "file"], ["info"], "smb")
    name, path = r.get("name"), r.get("path")
    put(doc, "file.name", name)
    if isinstance(path, str) and isinstance(name, str):
        put(doc, "file.path", f"{path.rstrip(chr(92))}\\{name}")
    put(doc, "file.directory", path)
    put(doc, "file.size", integer(r.get("size")))
    for zname, ecs in (("modified", "mtime"), ("accessed", "accessed"), ("created", "created"), ("changed", "ctime")):
        put(doc, f"file.{ecs}", _time(r.get(f"times.{zname}")))
    put(doc, "event.action", r.get("action"))


def _smb_mapping(doc: Doc, r: dict[str, Any]) -> None:
    _cat(doc, list(_NET), list(_PROTO_TYPE), "smb")


def _dce_rpc(doc: Doc, r: dict[str, Any]) -> None:
    _cat(doc, list(_NET), list(_PROTO_TYPE), "dce_rpc")
    put(doc, "event.action", r.get("operation"))


def _kerberos(doc: Doc, r: dict[str, Any]) -> None:
    _cat(doc, ["network", "authentication"], ["connection", "protocol", "info"], "kerberos")
    client = r.get("client")
    if isinstance(client, str) and client:
        name, _, realm = client.partition("/")
        put(doc, "user.name", name)
        put(doc, "user.domain", realm)
    _success(doc, r.get("success"))


def _ntlm(doc: Doc, r: dict[str, Any]) -> None:
    _cat(doc, ["network", "authentication"], ["connection", "protocol", "info"], "ntlm")
    put(doc, "user.name", r.get("username"))
    put(doc, "user.domain", r.get("domainname"))
    put(doc, "source.domain", r.get("hostname"))
    _success(doc, r.get("success"))


def _rdp(doc: Doc, r: dict[str, Any]) -> None:
    _cat(doc, list(_NET), list(_PROTO_TYPE), "rdp")


def _ssh(doc: Doc, r: dict[str, Any]) -> None:
    _cat(doc, list(_NET), list(_PROTO_TYPE), "ssh")
    _success(doc, r.get("auth_success"))


def _notice(doc: Doc, r: dict[str, Any]) -> None:
    put(doc, "event.kind", "alert")
    _cat(doc, ["intrusion_detection"], ["info"])
    put(doc, "rule.name", r.get("note"))
    put(doc, "rule.description", r.get("sub"))
    put(doc, "message", r.get("msg"))
    if get(doc, "source.ip") is None:
        put(doc, "source.ip", ip(r.get("src")))
    if get(doc, "destination.ip") is None:
        put(doc, "destination.ip", ip(r.get("dst")))
        put(doc, "destination.port", port(r.get("p")))


def _weird(doc: Doc, r: dict[str, Any]) -> None:
    _cat(doc, list(_NET), ["info"])
    put(doc, "rule.name", r.get("name"))


def _pe(doc: Doc, r: dict[str, Any]) -> None:
    _cat(doc, ["file"], ["info"])


def _software(doc: Doc, r: dict[str, Any]) -> None:
    _cat(doc, list(_NET), ["info"])
    put(doc, "source.ip", get(doc, "source.ip") or ip(r.get("host")))


def _known(doc: Doc, r: dict[str, Any]) -> None:
    _cat(doc, list(_NET), ["info"])
    append_unique(doc, "related.ip", ip(r.get("host")))


def _success(doc: Doc, value: Any) -> None:
    if isinstance(value, bool):
        put(doc, "event.outcome", "success" if value else "failure")


_HANDLERS: dict[str, Callable[[Doc, dict[str, Any]], None]] = {
    "conn": _conn, "dns": _dns, "http": _http, "ssl": _ssl, "x509": _x509, "files": _files,
    "smb_files": _smb_files, "smb_mapping": _smb_mapping, "dce_rpc": _dce_rpc, "kerberos": _kerberos,
    "ntlm": _ntlm, "rdp": _rdp, "ssh": _ssh, "notice": _notice, "weird": _weird, "pe": _pe,
    "software": _software, "known_hosts": _known, "known_services": _known, "known_certs": _known,
}  # fmt: skip
