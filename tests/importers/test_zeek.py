"""Zeek logs, TSV with headers and JSON lines -> logs-zeek.<log>-default with ECS fields and zeek.<log>.*."""

from __future__ import annotations

from pathlib import Path

from importers_testlib import ZEEK_CONN_TSV, docs, jl, run, write

from pytest_soclab.importers import import_files
from pytest_soclab.importers.community_id import community_id
from pytest_soclab.importers.zeek import log_name_from_file


def test_conn_tsv_headers_and_types(tmp_path: Path) -> None:
    summary = run(tmp_path, "zeek", "conn.log", ZEEK_CONN_TSV)
    assert summary.malformed == [] and summary.events == 2
    a, b = docs(summary, "logs-zeek.connection-default")
    assert a["@timestamp"] == "2024-03-01T10:00:00.250Z"
    assert a["source"] == {"ip": "10.0.0.5", "address": "10.0.0.5", "port": 50000, "bytes": 100, "packets": 3}
    assert a["destination"] == {"ip": "10.0.0.9", "address": "10.0.0.9", "port": 445, "bytes": 200, "packets": 4}
    assert a["network"]["transport"] == "tcp" and a["network"]["protocol"] == "smb"
    assert a["network"]["bytes"] == 300 and a["network"]["packets"] == 7 and a["network"]["direction"] == "internal"
    assert a["network"]["community_id"] == community_id("10.0.0.5", 50000, "10.0.0.9", 445, "tcp")
    assert a["event"]["duration"] == 1_500_000_000 and a["event"]["dataset"] == "zeek.connection"
    assert a["zeek"]["session_id"] == "Cabc1" and a["event"]["id"] == "Cabc1"
    z = a["zeek"]["connection"]
    assert z["state"] == "SF" and z["local_orig"] is True and z["tunnel_parents"] == []  # (empty) is an empty set
    assert z["orig_bytes"] == 100 and isinstance(z["duration"], float)
    assert a["data_stream"]["dataset"] == "zeek.connection"
    assert "duration" not in b["event"] and "bytes" not in b["source"]  # `-` is unset: no field at all
    assert "protocol" not in b["network"] and b["network"]["direction"] == "outbound"
    assert b["zeek"]["connection"]["tunnel_parents"] == ["Cx1", "Cx2"]
    assert a["event"]["original"].startswith("1709287200.250000\tCabc1")


def test_custom_separators_and_escapes(tmp_path: Path) -> None:
    text = ("#separator |\n#set_separator|;\n#empty_field|EMPTY\n#unset_field|NONE\n#path|dns\n"
            "#fields|ts|uid|id.orig_h|id.orig_p|id.resp_h|id.resp_p|proto|trans_id|query|qtype_name|rcode_name|AA|RD|answers|TTLs\n"
            "#types|time|string|addr|port|addr|port|enum|count|string|string|string|bool|bool|vector[string]|vector[interval]\n"
            "1709287200.0|D1|10.0.0.5|5353|10.0.0.2|53|udp|4660|evil\\x2eexample.test|A|NOERROR|F|T|198.51.100.1;alias.test|60.0;30.0\n"
            "1709287201.0|D2|10.0.0.5|5354|10.0.0.2|53|udp|1|q.test|NONE|NONE|F|T|EMPTY|EMPTY\n")  # fmt: skip
    summary = run(tmp_path, "zeek", "dns.log", text)
    assert summary.malformed == []
    a, b = docs(summary, "logs-zeek.dns-default")
    assert a["dns"]["question"] == {"name": "evil.example.test", "type": "A"}  # \x2e unescaped
    assert a["dns"]["id"] == "4660" and a["dns"]["response_code"] == "NOERROR"
    assert a["dns"]["answers"] == [{"data": "198.51.100.1", "ttl": 60}, {"data": "alias.test", "ttl": 30}]
    assert a["dns"]["resolved_ip"] == ["198.51.100.1"] and a["dns"]["header_flags"] == ["RD"]
    assert a["related"]["ip"] == ["10.0.0.5", "10.0.0.2", "198.51.100.1"]
    assert a["network"]["protocol"] == "dns" and a["zeek"]["dns"]["AA"] is False
    assert b["dns"]["type"] == "query" and b["zeek"]["dns"]["answers"] == []
    assert "qtype_name" not in b["zeek"]["dns"]


def test_json_lines_http_ssl_x509_and_unknown_logs(tmp_path: Path) -> None:
    recs = [
        {"_path": "http", "ts": 1709287200.5, "uid": "H1", "id.orig_h": "10.0.0.5", "id.orig_p": 50010,
         "id.resp_h": "203.0.113.80", "id.resp_p": 80, "method": "POST", "host": "upd.example.test",
         "uri": "/gate.php?id=7", "user_agent": "Mozilla/5.0 (bad)", "status_code": 200, "request_body_len": 120,
         "response_body_len": 0, "resp_mime_types": ["text/html"], "version": "1.1"},
        {"@stream": "ssl", "ts": 1709287201.0, "uid": "S1", "id_orig_h": "10.0.0.5", "id_orig_p": 50011,
         "id_resp_h": "203.0.113.44", "id_resp_p": 443, "version": "TLSv12", "cipher": "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
         "server_name": "c2.example.test", "established": True, "resumed": False},
        {"_path": "x509", "ts": "2024-03-01T10:00:02.000000Z", "id": "F1", "certificate_version": 3,
         "certificate_serial": "0A1B", "certificate_subject": "CN=c2.example.test", "certificate_issuer": "CN=c2.example.test",
         "certificate_not_valid_before": 1700000000.0, "certificate_not_valid_after": 1800000000.0,
         "certificate_key_alg": "rsaEncryption", "certificate_key_length": 2048, "san_dns": ["c2.example.test"]},
        {"_path": "known_hosts", "ts": 1709287203.0, "host": "10.0.0.5"},
        {"_path": "mystery", "ts": 1709287204.0, "uid": "M1", "thing": "value", "nested.name": "n"},
    ]  # fmt: skip
    summary = run(tmp_path, "zeek", "mixed.log", jl(recs))
    assert summary.malformed == []
    (h,) = docs(summary, "logs-zeek.http-default")
    assert h["http"]["request"]["method"] == "POST" and h["http"]["response"]["status_code"] == 200
    assert h["url"] == {"domain": "upd.example.test", "original": "/gate.php?id=7", "path": "/gate.php", "query": "id=7",
                        "port": 80}  # fmt: skip
    assert h["user_agent"]["original"] == "Mozilla/5.0 (bad)" and h["event"]["outcome"] == "success"
    (s,) = docs(summary, "logs-zeek.ssl-default")
    assert s["source"]["ip"] == "10.0.0.5" and s["destination"]["port"] == 443  # id_orig_h read as id.orig_h
    assert s["tls"] == {"version_protocol": "tls", "version": "1.2", "cipher": "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
                        "client": {"server_name": "c2.example.test"}, "established": True, "resumed": False}  # fmt: skip
    (x,) = docs(summary, "logs-zeek.x509-default")
    assert x["x509"]["serial_number"] == "0A1B" and x["x509"]["version_number"] == "3"
    assert x["x509"]["not_before"] == "2023-11-14T22:13:20.000Z" and x["x509"]["alternative_names"] == ["c2.example.test"]
    assert x["zeek"]["x509"]["certificate"]["key_length"] == 2048 and x["@timestamp"] == "2024-03-01T10:00:02.000Z"
    (k,) = docs(summary, "logs-zeek.known_hosts-default")
    assert k["related"]["ip"] == ["10.0.0.5"] and k["zeek"]["known_hosts"]["host"] == "10.0.0.5"
    (m,) = docs(summary, "logs-zeek.mystery-default")
    assert m["zeek"]["mystery"] == {"thing": "value", "nested": {"name": "n"}} and m["event"]["dataset"] == "zeek.mystery"


def test_auth_and_file_logs(tmp_path: Path) -> None:
    base = {"ts": 1709287200.0, "uid": "K1", "id.orig_h": "10.0.0.5", "id.orig_p": 1, "id.resp_h": "10.0.0.2", "id.resp_p": 88}
    recs = [
        {**base, "_path": "kerberos", "client": "alice/CORP.TEST", "service": "krbtgt/CORP.TEST", "success": True},
        {**base, "_path": "ntlm", "username": "bob", "domainname": "CORP", "hostname": "WKS9", "success": False},
        {**base, "_path": "files", "fuid": "F9", "tx_hosts": ["10.0.0.2"], "rx_hosts": ["10.0.0.5"], "md5": "aa",
         "sha1": "bb", "mime_type": "application/x-dosexec", "filename": "a.exe", "total_bytes": 1024},
        {**base, "_path": "smb_files", "action": "SMB::FILE_OPEN", "path": "\\\\DC\\C$", "name": "x.dll", "size": 5},
        {**base, "_path": "notice", "note": "Scan::Port_Scan", "msg": "10.0.0.5 scanned 50 ports", "src": "10.0.0.5"},
        {**base, "_path": "ssh", "auth_success": True, "client": "SSH-2.0-OpenSSH_9.6"},
    ]  # fmt: skip
    summary = run(tmp_path, "zeek", "auth.log", jl(recs))
    (krb,) = docs(summary, "logs-zeek.kerberos-default")
    assert krb["user"] == {"name": "alice", "domain": "CORP.TEST"} and krb["event"]["outcome"] == "success"
    (ntlm,) = docs(summary, "logs-zeek.ntlm-default")
    assert ntlm["user"] == {"name": "bob", "domain": "CORP"} and ntlm["event"]["outcome"] == "failure"
    assert ntlm["source"]["domain"] == "WKS9" and ntlm["related"]["user"] == ["bob"]
    (f,) = docs(summary, "logs-zeek.files-default")
    assert f["file"]["hash"] == {"md5": "aa", "sha1": "bb"} and f["file"]["size"] == 1024 and f["file"]["name"] == "a.exe"
    (smb,) = docs(summary, "logs-zeek.smb_files-default")
    assert smb["file"]["path"] == "\\\\DC\\C$\\x.dll" and smb["event"]["action"] == "SMB::FILE_OPEN"
    (n,) = docs(summary, "logs-zeek.notice-default")
    assert n["event"]["kind"] == "alert" and n["rule"]["name"] == "Scan::Port_Scan" and n["message"].startswith("10.0.0.5")
    (ssh,) = docs(summary, "logs-zeek.ssh-default")
    assert ssh["event"]["outcome"] == "success" and ssh["network"]["protocol"] == "ssh"


def test_tsv_malformed_lines(tmp_path: Path) -> None:
    header_less = write(tmp_path / "in" / "weird.log", "1709287200.0\tW1\n")
    broken = ZEEK_CONN_TSV.replace("\t3\t4\t(empty)\n", "\t3\n").replace("\tT\tF\tS\t", "\tmaybe\tF\tS\t")
    summary = import_files("zeek", [header_less, write(tmp_path / "in" / "conn.log", broken)], tmp_path / "out")
    reasons = [(m.file.rsplit("/", 1)[-1], m.line, m.reason) for m in summary.malformed]
    assert reasons == [
        ("conn.log", 9, "16 values for 18 fields"),
        ("conn.log", 10, "field local_orig (bool): bad value 'maybe'"),
        ("weird.log", 1, "data line before the #fields header"),
    ]
    assert summary.events == 0 and summary.malformed_count == 3


def test_log_names_from_file_names() -> None:
    assert log_name_from_file("conn.log") == "conn"
    assert log_name_from_file("conn.00:00:00-01:00:00.log.gz") == "conn"
    assert log_name_from_file("SENSOR1_smb_files.log") == "smb_files"
    assert log_name_from_file("custom_thing.log") == "custom_thing"
