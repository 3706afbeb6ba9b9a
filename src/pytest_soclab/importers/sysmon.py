"""Sysmon event data -> ECS, as Elastic's `windows.sysmon_operational` pipeline maps it.

Shared with Sysmon for Linux (paths split on `/`, command lines on spaces). The event data itself
stays in `winlog.event_data` under its own names (written by the caller); this adds the ECS fields.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from pytest_soclab.importers.ecs import Doc, append_unique, basename, integer, ip, port, put, set_file

# event id -> (event.category, event.type, event.action), as Elastic's pipeline assigns them.
EVENTS: dict[int, tuple[list[str], list[str], str]] = {
    1: (["process"], ["start"], "Process creation"),
    2: (["file"], ["change"], "A process changed a file creation time"),
    3: (["network"], ["start", "connection", "protocol"], "Network connection"),
    4: (["process"], ["change"], "Sysmon service state changed"),
    5: (["process"], ["end"], "Process terminated"),
    6: (["driver"], ["start"], "Driver loaded"),
    7: (["process"], ["change"], "Image loaded"),
    8: (["process"], ["change"], "CreateRemoteThread"),
    9: (["process"], ["access"], "RawAccessRead"),
    10: (["process"], ["access"], "ProcessAccess"),
    11: (["file"], ["creation"], "FileCreate"),
    12: (["configuration", "registry"], ["change"], "RegistryEvent (Object create and delete)"),
    13: (["configuration", "registry"], ["change"], "RegistryEvent (Value Set)"),
    14: (["configuration", "registry"], ["change"], "RegistryEvent (Key and Value Rename)"),
    15: (["file"], ["access"], "FileCreateStreamHash"),
    16: (["configuration"], ["change"], "ServiceConfigurationChange"),
    17: (["file"], ["creation"], "PipeEvent (Pipe Created)"),
    18: (["file"], ["access"], "PipeEvent (Pipe Connected)"),
    19: (["process"], ["info"], "WmiEvent (WmiEventFilter activity detected)"),
    20: (["process"], ["change"], "WmiEvent (WmiEventConsumer activity detected)"),
    21: (["process"], ["access"], "WmiEvent (WmiEventConsumerToFilter activity detected)"),
    22: (["network"], ["connection", "protocol", "info"], "DNSEvent (DNS query)"),
    23: (["file"], ["deletion"], "FileDelete (File Delete archived)"),
    24: ([], ["change"], "ClipboardChange (New content in the clipboard)"),
    25: (["process"], ["change"], "ProcessTampering (Process image change)"),
    26: (["file"], ["deletion"], "FileDeleteDetected (File Delete logged)"),
    27: (["file"], ["creation"], "FileBlockExecutable"),
    28: (["file"], ["deletion"], "FileBlockShredding"),
    29: (["file"], ["creation"], "FileExecutableDetected"),
    255: (["process"], [], "Error"),
}
_FAILURES = {27, 255}
PROCESS_HASH_EVENTS = {1, 23, 24, 25}  # Elastic puts these events' Hashes under process.hash
FILE_HASH_EVENTS = {6, 7, 15, 26, 29}  # ... and these under file.hash

HIVES = {
    "HKEY_CLASSES_ROOT": "HKCR", "HKCR": "HKCR", "HKEY_CURRENT_CONFIG": "HKCC", "HKCC": "HKCC",
    "HKEY_CURRENT_USER": "HKCU", "HKCU": "HKCU", "HKEY_DYN_DATA": "HKDD", "HKDD": "HKDD",
    "HKEY_LOCAL_MACHINE": "HKLM", "HKLM": "HKLM", "HKEY_PERFORMANCE_DATA": "HKPD", "HKPD": "HKPD",
    "HKEY_USERS": "HKU", "HKU": "HKU",
}  # fmt: skip
DNS_TYPES = {
    "1": "A", "2": "NS", "5": "CNAME", "6": "SOA", "12": "PTR", "15": "MX", "16": "TXT", "28": "AAAA",
    "33": "SRV", "35": "NAPTR", "39": "DNAME", "255": "ANY",
}  # fmt: skip
DNS_STATUS = {"0": "SUCCESS", "5": "ERROR_ACCESS_DENIED", "1460": "ERROR_TIMEOUT", "9003": "DNS_ERROR_RCODE_NAME_ERROR",
              "9501": "DNS_INFO_NO_RECORDS", "9002": "DNS_ERROR_RCODE_SERVER_FAILURE", "9005": "DNS_ERROR_RCODE_REFUSED",
              "123": "ERROR_INVALID_NAME", "1214": "ERROR_INVALID_NETNAME", "1223": "ERROR_CANCELLED"}  # fmt: skip


def known(event_id: int) -> bool:
    return event_id in EVENTS


# A rendered Sysmon message: a description line, then one `Key: Value` line per field (a value such as
# a WMI consumer's script may run on over further lines).
_MESSAGE_FIELD = re.compile(r"^([A-Z][A-Za-z]*):(?: (.*))?$")


def fields_lost(data: dict[str, Any]) -> bool:
    """Whether the export lost some of the event's fields (they are then read back from its message):
    no UtcTime at all, or no ProcessId beside a ProcessGuid (NXLog, whose field names are
    case-insensitive, let its own ProcessID overwrite Sysmon's)."""
    return "UtcTime" not in data or ("ProcessGuid" in data and "ProcessId" not in data)


def message_fields(message: str | None) -> dict[str, str]:
    """The event's fields read back from its rendered message. Some exports (NXLog) keep a large event's
    fields only in the message: without this, the event would lose its UtcTime (its @timestamp would
    be the collector's local clock) and all its data."""
    out: dict[str, str] = {}
    key = ""
    for line in re.split(r"\r\n|\n", str(message or ""))[1:]:
        m = _MESSAGE_FIELD.match(line)
        if m and m.group(1) not in out:
            key = m.group(1)
            out[key] = m.group(2) or ""
        elif key:
            out[key] += "\n" + line
    return out


def _s(data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    text = str(value)
    return None if text in ("", "-", "{00000000-0000-0000-0000-000000000000}") else text


def hashes(text: str) -> dict[str, str]:
    """`SHA1=..,MD5=..,IMPHASH=..` -> {"sha1": .., ...}, lowercased, all-zero hashes dropped (as Elastic)."""
    out: dict[str, str] = {}
    for part in text.split(","):
        algo, eq, value = part.partition("=")
        value = value.strip().lower()
        if eq and value and value.strip("0"):
            out[algo.strip().lower()] = value
    return out


def categorize(doc: Doc, event_id: int) -> None:
    category, types, action = EVENTS[event_id]
    put(doc, "event.category", list(category))
    put(doc, "event.type", list(types))
    put(doc, "event.action", action)
    if event_id in _FAILURES:
        put(doc, "event.outcome", "failure")


_STR, _INT, _IP, _PORT = "str", "int", "ip", "port"
# event data key -> (ECS field, conversion): the one-to-one part of the mapping, applied by walking the
# keys an event has (a dozen) rather than probing every key the mapping knows (fifty).
DIRECT: dict[str, tuple[str, str]] = {
    "ProcessGuid": ("process.entity_id", _STR),
    "SourceProcessGuid": ("process.entity_id", _STR),
    "SourceProcessGUID": ("process.entity_id", _STR),
    "ProcessId": ("process.pid", _INT),
    "SourceProcessId": ("process.pid", _INT),
    "SourceThreadId": ("process.thread.id", _INT),
    "Image": ("process.executable", _STR),
    "SourceImage": ("process.executable", _STR),
    "CommandLine": ("process.command_line", _STR),
    "CurrentDirectory": ("process.working_directory", _STR),
    "ParentProcessGuid": ("process.parent.entity_id", _STR),
    "ParentProcessId": ("process.parent.pid", _INT),
    "ParentImage": ("process.parent.executable", _STR),
    "ParentCommandLine": ("process.parent.command_line", _STR),
    "Signature": ("file.code_signature.subject_name", _STR),
    "SignatureStatus": ("file.code_signature.status", _STR),
    "Protocol": ("network.transport", _STR),
    "SourceIp": ("source.ip", _IP),
    "SourceHostname": ("source.domain", _STR),
    "SourcePort": ("source.port", _PORT),
    "DestinationIp": ("destination.ip", _IP),
    "DestinationHostname": ("destination.domain", _STR),
    "DestinationPort": ("destination.port", _PORT),
    "QueryName": ("dns.question.name", _STR),
    "RuleName": ("rule.name", _STR),
}
_CONVERT: dict[str, Callable[[str], Any]] = {_STR: lambda v: v, _INT: integer, _IP: ip, _PORT: port}
_PE_KEYS = {"OriginalFileName": "original_file_name", "Company": "company", "Description": "description",
            "FileVersion": "file_version", "Product": "product"}  # fmt: skip


def map_event(
    doc: Doc, event_id: int, data: dict[str, Any], sep: str, split_args: Callable[[str], list[str]]
) -> None:
    """Add the ECS fields of one Sysmon event (categorization included) to doc."""
    categorize(doc, event_id)
    present: dict[str, str] = {}
    for key in data:
        value = _s(data, key)
        if value is None:
            continue
        present[key] = value
        direct = DIRECT.get(key)
        if direct:
            put(doc, direct[0], _CONVERT[direct[1]](value))
        elif key in _PE_KEYS:
            put(doc, f"{'file.pe' if event_id == 7 else 'process.pe'}.{_PE_KEYS[key]}", value)
    s = present.get
    if event_id == 255:
        put(doc, "error.code", s("ID"))
    if event_id == 25 and "executable" not in doc.get("process", {}):
        put(doc, "process.executable", s("Destination"))

    hash_text = s("Hashes") or s("Hash")
    if hash_text:
        digest = hashes(hash_text)
        append_unique(doc, "related.hash", *digest.values())
        prefix = "process" if event_id in PROCESS_HASH_EVENTS else "file" if event_id in FILE_HASH_EVENTS else None
        if prefix and digest:
            imphash = digest.pop("imphash", None)
            put(doc, f"{prefix}.hash", digest)
            put(doc, f"{prefix}.pe.imphash", imphash)

    proc = doc.get("process")
    if proc:
        cmd, parent = proc.get("command_line"), proc.get("parent", {})
        if cmd:
            args = split_args(cmd)
            put(doc, "process.args", args)
            put(doc, "process.args_count", len(args) if args else None)
        if parent.get("command_line"):
            pargs = split_args(parent["command_line"])
            put(doc, "process.parent.args", pargs)
            put(doc, "process.parent.args_count", len(pargs) if pargs else None)
        put(doc, "process.name", basename(proc.get("executable"), sep))
        put(doc, "process.parent.name", basename(parent.get("executable"), sep))

    set_file(doc, s("TargetFilename") or s("Device") or s("ImageLoaded"), sep)
    if event_id in (17, 18):
        put(doc, "file.name", s("PipeName"))
    signed = (s("Signed") or "").lower()
    if signed in ("true", "false"):  # a convert to boolean, both ways: an unsigned image is the point
        put(doc, "file.code_signature.signed", signed == "true")
    if s("SignatureStatus") == "Valid":
        put(doc, "file.code_signature.valid", True)
    _network(doc, event_id, s)
    _dns(doc, s)
    _user(doc, s("User"))
    _registry(doc, event_id, s("TargetObject"), s("Details"))
    if s("Archived"):
        put(doc, "sysmon.file.archived", s("Archived") == "true")
    if s("IsExecutable"):
        put(doc, "sysmon.file.is_executable", s("IsExecutable") == "true")


def _network(doc: Doc, event_id: int, s: Callable[[str], str | None]) -> None:
    if event_id == 22:
        put(doc, "network.protocol", "dns")
    else:
        put(doc, "network.protocol", s("DestinationPortName") or s("SourcePortName"))
    initiated = s("Initiated")
    if initiated in ("true", "false"):
        put(doc, "network.direction", "egress" if initiated == "true" else "ingress")
    v6 = s("SourceIsIpv6")
    if v6 in ("true", "false"):
        put(doc, "network.type", "ipv6" if v6 == "true" else "ipv4")


def _dns(doc: Doc, s: Callable[[str], str | None]) -> None:
    append_unique(doc, "related.hosts", s("QueryName"))
    status = s("QueryStatus")
    if status is not None:
        put(doc, "sysmon.dns.status", DNS_STATUS.get(status, status))
    results = s("QueryResults")
    if not results:
        return
    answers: list[dict[str, str]] = []
    ips: list[str] = []
    for item in results.split(";"):
        item = item.strip()
        if not item:
            continue
        if item.startswith("type:"):
            parts = item.split()
            if len(parts) >= 3:
                answers.append({"data": parts[2], "type": DNS_TYPES.get(parts[1], parts[1])})
                append_unique(doc, "related.hosts", parts[2])
        else:
            addr = ip(item)
            if addr:
                ips.append(addr)
                answers.append({"data": addr, "type": "AAAA" if ":" in addr else "A"})
    put(doc, "dns.answers", answers)
    put(doc, "dns.resolved_ip", ips)
    append_unique(doc, "related.ip", *ips)


def _user(doc: Doc, user: str | None) -> None:
    if not user:
        return
    domain, sep, name = user.partition("\\")
    if sep:
        put(doc, "user.domain", domain)
        put(doc, "user.name", name)
    else:
        put(doc, "user.name", user)  # Sysmon for Linux writes a bare user name


def _registry(doc: Doc, event_id: int, path: str | None, details: str | None) -> None:
    if event_id not in (12, 13, 14) or not path:
        return
    put(doc, "registry.path", path)
    tokens = path.split("\\")
    hive = HIVES.get(tokens[0])
    if hive:
        put(doc, "registry.hive", hive)
        put(doc, "registry.key", "\\".join(tokens[1:]))
    put(doc, "registry.value", tokens[-1])
    if details:
        put(doc, "registry.data", _registry_data(details))


def _registry_data(details: str) -> dict[str, Any]:
    low = details.lower()
    if low.startswith("dword (0x") and details.endswith(")"):
        n = integer(details[7:-1])
        if n is not None:
            return {"strings": [str(n)], "type": "SZ_DWORD"}
    if low.startswith("qword (0x") and details.endswith(")") and "-" in details:
        hi, _, lo = details[7:-1].partition("-")
        h, l_ = integer(hi), integer(lo)
        if h is not None and l_ is not None:
            return {"strings": [str((h << 32) + l_)], "type": "SZ_QWORD"}  # high and low 32-bit halves
    if details == "Binary Data":
        return {"strings": [details], "type": "REG_BINARY"}
    return {"strings": [details], "type": "REG_SZ"}
