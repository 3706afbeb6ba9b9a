"""Attacker text planted into a recorded case, written as the source logs it and mapped to ECS by the
importer the recording itself went through.

A recorded case has no recipe to complete a partial document, and its documents are what Elastic's
integrations make of real Windows and Zeek logs. So a planted document starts one step earlier: a
Windows event (Sysmon 1, 11, 13; Security 4688) or a Zeek log record, with the fields the source
writes, and `importers.windows.to_doc` / `importers.zeek.to_doc` turn it into the document an
agent reads next to the recorded ones. `event.original` is dropped, as the recorded case drops it.
"""

from __future__ import annotations

import hashlib
from typing import Any

from pytest_soclab.attacks.bases import Base
from pytest_soclab.corpus.alerts import detection_alert
from pytest_soclab.corpus.recipe import AlertSpec
from pytest_soclab.corpus.recorded_build import to_epoch_ms
from pytest_soclab.importers import streams
from pytest_soclab.importers.windows import SECURITY_CHANNEL, SYSMON_CHANNEL, to_doc
from pytest_soclab.importers.winevent import WinEvent
from pytest_soclab.importers.zeek import to_doc as zeek_doc

SYSMON = streams.SYSMON
SECURITY = streams.SECURITY
ZEEK_HTTP = streams.zeek_stream("http")
ZEEK_DNS = streams.zeek_stream("dns")
ALERTS = ".alerts-security.alerts-default"

SYSMON_PROVIDER = ("Microsoft-Windows-Sysmon", "{5770385F-C22A-43E0-BF4C-06F5698FFBD9}")
SECURITY_PROVIDER = ("Microsoft-Windows-Security-Auditing", "{54849625-5478-4994-A5BA-3E3B0328C30D}")
CMD = r"C:\Windows\System32\cmd.exe"
EXPLORER = r"C:\Windows\explorer.exe"
# Characters a Windows file name cannot hold, and the lookalikes attackers write instead.
_NOT_IN_NAMES = str.maketrans({"\\": "\u29f5", "/": "\u2044", ":": "\ua789", "*": "\u204e", "?": "\uff1f",
                               '"': "\u201d", "<": "\u2039", ">": "\u203a", "|": "\u01c0"})  # fmt: skip

_SYSMON_TITLES = {1: "Process Create:", 11: "File created:", 13: "Registry value set:"}


def _num(*parts: object, lo: int = 2000, hi: int = 12000) -> int:
    return lo + int(hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()[:8], 16) % (hi - lo)


def _guid(*parts: object) -> str:
    h = hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()
    return "{" + f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}" + "}"


def _utc(ts: str) -> str:
    """2020-08-06T06:27:20.571Z -> Sysmon's UtcTime, 2020-08-06 06:27:20.571."""
    return ts[:10] + " " + ts[11:23]


def _short_host(base: Base) -> str:
    return base.host.split(".", 1)[0].upper()


def _finish(stream: str, doc: dict[str, Any], expected: str) -> dict[str, Any] | None:
    if stream != expected:
        return None  # the importer routed it elsewhere: not a document of the carrier's stream
    doc.get("event", {}).pop("original", None)
    return doc


def _sysmon(base: Base, n: int, event_id: int, ts: str, data: dict[str, str]) -> dict[str, Any] | None:
    fields = {"RuleName": "-", "UtcTime": _utc(ts), **data}
    message = _SYSMON_TITLES[event_id] + "\r\n" + "\r\n".join(f"{k}: {v}" for k, v in fields.items())
    ev = WinEvent(
        channel=SYSMON_CHANNEL, event_id=event_id, computer=base.host, event_data=fields, time_created=ts,
        record_id=str(_num(base.id, n, "record", lo=100000, hi=900000)), provider=SYSMON_PROVIDER[0],
        provider_guid=SYSMON_PROVIDER[1], message=message, level="info", task=event_id, version=5,
        pid=_num(base.id, "sysmon"), thread_id=_num(base.id, n, "thread"),
        user={"identifier": "S-1-5-18", "name": "SYSTEM", "domain": "NT AUTHORITY", "type": "User"},
    )  # fmt: skip
    stream, doc, _ = to_doc(ev, "")
    return _finish(stream, doc, SYSMON)


def user_sid(base: Base) -> str:
    """A domain account's SID for the account that runs the attacker's processes (made up per base)."""
    h = hashlib.sha256(f"{base.case}|sid".encode()).digest()
    return "S-1-5-21-" + "-".join(str(int.from_bytes(h[i : i + 4], "big")) for i in (0, 4, 8)) + "-1107"


def _user(base: Base) -> str:
    return f"{_short_host(base)}\\{base.roles.get('actor_user') or 'user'}"


def sysmon_process(base: Base, n: int, ts: str, command_line: str) -> dict[str, Any] | None:
    """Sysmon 1: the attacker runs `cmd.exe` with the text in its command line."""
    pid = _num(base.id, n, "pid")
    return _sysmon(base, n, 1, ts, {
        "ProcessGuid": _guid(base.id, n, "proc"), "ProcessId": str(pid), "Image": CMD,
        "FileVersion": "10.0.17763.1 (WinBuild.160101.0800)", "Description": "Windows Command Processor",
        "Product": "Microsoft\u00ae Windows\u00ae Operating System", "Company": "Microsoft Corporation",
        "OriginalFileName": "Cmd.Exe", "CommandLine": command_line, "CurrentDirectory": "C:\\Users\\Public\\",
        "User": _user(base), "LogonGuid": _guid(base.id, "logon"), "LogonId": "0x3e7", "TerminalSessionId": "1",
        "IntegrityLevel": "Medium", "ParentProcessGuid": _guid(base.id, n, "parent"),
        "ParentProcessId": str(pid - 4), "ParentImage": EXPLORER, "ParentCommandLine": EXPLORER,
    })  # fmt: skip


def sysmon_file(base: Base, n: int, ts: str, path: str) -> dict[str, Any] | None:
    """Sysmon 11: the attacker's process creates a file whose path holds the text."""
    return _sysmon(base, n, 11, ts, {
        "ProcessGuid": _guid(base.id, n, "proc"), "ProcessId": str(_num(base.id, n, "pid")), "Image": CMD,
        "TargetFilename": path, "CreationUtcTime": _utc(ts),
    })  # fmt: skip


def sysmon_registry(base: Base, n: int, ts: str, key: str, details: str) -> dict[str, Any] | None:
    """Sysmon 13: the attacker's process sets a registry value whose data is the text."""
    return _sysmon(base, n, 13, ts, {
        "EventType": "SetValue", "ProcessGuid": _guid(base.id, n, "proc"),
        "ProcessId": str(_num(base.id, n, "pid")), "Image": r"C:\Windows\System32\reg.exe",
        "TargetObject": key, "Details": details,
    })  # fmt: skip


def security_process(base: Base, n: int, ts: str, command_line: str) -> dict[str, Any] | None:
    """Security 4688 (process creation auditing with command lines): the text in the new process's command line."""
    short = _short_host(base)
    user = base.roles.get("actor_user") or "user"
    pid, ppid = _num(base.id, n, "pid"), _num(base.id, n, "ppid")
    data = {
        "SubjectUserSid": user_sid(base), "SubjectUserName": user,
        "SubjectDomainName": short, "SubjectLogonId": "0x3e7", "NewProcessId": hex(pid), "NewProcessName": CMD,
        "TokenElevationType": "%%1938", "ProcessId": hex(ppid), "CommandLine": command_line,
        "TargetUserSid": "S-1-0-0", "TargetUserName": "-", "TargetDomainName": "-", "TargetLogonId": "0x0",
        "ParentProcessName": EXPLORER, "MandatoryLabel": "S-1-16-8192",
    }  # fmt: skip
    message = (
        "A new process has been created.\r\n\r\nCreator Subject:\r\n"
        f"\tSecurity ID:\t\t{data['SubjectUserSid']}\r\n\tAccount Name:\t\t{user}\r\n\tAccount Domain:\t\t{short}\r\n"
        f"\tLogon ID:\t\t0x3E7\r\n\r\nProcess Information:\r\n\tNew Process ID:\t\t{hex(pid)}\r\n"
        f"\tNew Process Name:\t{CMD}\r\n\tToken Elevation Type:\t%%1938\r\n\tMandatory Label:\t\tS-1-16-8192\r\n"
        f"\tCreator Process ID:\t{hex(ppid)}\r\n\tCreator Process Name:\t{EXPLORER}\r\n"
        f"\tProcess Command Line:\t{command_line}"
    )
    ev = WinEvent(
        channel=SECURITY_CHANNEL, event_id=4688, computer=base.host, event_data=data, time_created=ts,
        record_id=str(_num(base.id, n, "record", lo=100000, hi=900000)), provider=SECURITY_PROVIDER[0],
        provider_guid=SECURITY_PROVIDER[1], message=message, level="information", keywords=["Audit Success"],
        task="Process Creation", opcode="Info", version=2, pid=4, thread_id=_num(base.id, n, "thread"),
    )  # fmt: skip
    stream, doc, _ = to_doc(ev, "")
    return _finish(stream, doc, SECURITY)


def detection(base: Base, n: int, source: dict[str, Any], rule: str, text: str) -> dict[str, Any]:
    """A low-severity alert on a planted process event whose reason quotes the attacker's text."""
    spec = AlertSpec(rule=rule, severity="low", risk_score=21, rule_type="new_terms",
                     description=f"{rule}: a command interpreter started with an unusual command line.")  # fmt: skip
    source_id = hashlib.sha256(f"{base.id}|{n}|alert-source".encode()).hexdigest()[:20]
    ts_ms = _epoch_ms(source["@timestamp"])
    _, doc = detection_alert(base.case, spec, (ts_ms, SYSMON, source), source_id)
    alert = doc["kibana"]["alert"]
    alert["reason"] = f"{alert['reason']} {text}"
    alert["uuid"] = hashlib.sha256(f"{base.id}|{n}|{text}".encode()).hexdigest()
    return doc


def _epoch_ms(ts: str) -> int:
    return to_epoch_ms(ts) or 0  # the carriers' own timestamps: always ISO


def zeek_http(base: Base, n: int, ts: str, user_agent: str, uri: str) -> dict[str, Any] | None:
    """A Zeek http.log record of the attacker's request to the base host."""
    if not base.host_ip:
        return None
    rec = {
        "ts": _epoch_ms(ts) / 1000, "uid": "C" + hashlib.sha256(f"{base.id}|{n}|{uri}".encode()).hexdigest()[:17],
        "id.orig_h": base.attacker_ip, "id.orig_p": _num(base.id, n, "sport", lo=30000, hi=60000),
        "id.resp_h": base.host_ip, "id.resp_p": 80, "trans_depth": 1, "method": "GET", "host": base.host_ip,
        "uri": uri, "version": "1.1", "user_agent": user_agent, "request_body_len": 0, "response_body_len": 162,
        "status_code": 404, "status_msg": "Not Found", "tags": [],
    }  # fmt: skip
    stream, doc = zeek_doc("http", rec, "")
    return _finish(stream, doc, ZEEK_HTTP)


def zeek_dns(base: Base, n: int, ts: str, name: str) -> dict[str, Any] | None:
    """A Zeek dns.log record of the base host resolving `name` (NXDOMAIN)."""
    resolver = base.roles.get("resolver_ip")
    if not base.host_ip or not resolver:
        return None
    rec = {
        "ts": _epoch_ms(ts) / 1000, "uid": "C" + hashlib.sha256(f"{base.id}|{n}|{name}".encode()).hexdigest()[:17],
        "id.orig_h": base.host_ip, "id.orig_p": _num(base.id, n, "dport", lo=30000, hi=60000),
        "id.resp_h": resolver, "id.resp_p": 53, "proto": "udp", "trans_id": _num(base.id, n, "dnsid", lo=1000, hi=65000),
        "query": name, "qclass": 1, "qclass_name": "C_INTERNET", "qtype": 1, "qtype_name": "A", "rcode": 3,
        "rcode_name": "NXDOMAIN", "AA": False, "TC": False, "RD": True, "RA": True, "Z": 0, "rejected": False,
    }  # fmt: skip
    stream, doc = zeek_doc("dns", rec, "")
    return _finish(stream, doc, ZEEK_DNS)


def file_name(text: str) -> str:
    """Text as a Windows file name: the characters a name cannot hold become their lookalikes."""
    return text.translate(_NOT_IN_NAMES)
