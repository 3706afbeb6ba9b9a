"""Security (and System) channel events -> ECS, as Elastic's `system.security` pipeline maps them.

Categorization comes from Elastic's table (EVENTS). A few ids the issue asks for are not in the
versions of Elastic's pipeline consulted (object access 4656-4663, filtering platform 5156/5158,
System's 7045); OWN_EVENTS gives them categories in the same scheme, and docs/importing.md says so.
"""

from __future__ import annotations

from typing import Any

from pytest_soclab.importers.cmdline import split_windows
from pytest_soclab.importers.ecs import Doc, append_unique, basename, integer, ip, port, put, set_file

_AUTH_START = (["authentication"], ["start"])
EVENTS: dict[int, tuple[list[str], list[str], str]] = {
    1100: (["process"], ["end"], "logging-service-shutdown"),
    1102: (["iam"], ["admin", "change"], "audit-log-cleared"),
    1104: (["iam"], ["admin"], "logging-full"),
    1105: (["iam"], ["admin"], "auditlog-archieved"),  # sic: Elastic's spelling
    1108: (["iam"], ["admin"], "logging-processing-error"),
    4610: (["configuration"], ["access"], "authentication-package-loaded"),
    4611: (["configuration"], ["change"], "trusted-logon-process-registered"),
    4614: (["configuration"], ["access"], "notification-package-loaded"),
    4616: (["configuration"], ["change"], "system-time-changed"),
    4622: (["configuration"], ["access"], "security-package-loaded"),
    4624: (*_AUTH_START, "logged-in"),
    4625: (*_AUTH_START, "logon-failed"),
    4634: (["authentication"], ["end"], "logged-out"),
    4647: (["authentication"], ["end"], "logged-out"),
    4648: (*_AUTH_START, "logged-in-explicit"),
    4657: (["registry", "configuration"], ["change"], "registry-value-modified"),
    4670: (["iam", "configuration"], ["admin", "change"], "permissions-changed"),
    4672: (["iam"], ["admin"], "logged-in-special"),
    4673: (["iam"], ["admin"], "privileged-service-called"),
    4674: (["iam"], ["admin"], "privileged-operation"),
    4688: (["process"], ["start"], "created-process"),
    4689: (["process"], ["end"], "exited-process"),
    4697: (["iam", "configuration"], ["admin", "change"], "service-installed"),
    4698: (["iam", "configuration"], ["creation", "admin"], "scheduled-task-created"),
    4699: (["iam", "configuration"], ["deletion", "admin"], "scheduled-task-deleted"),
    4700: (["iam", "configuration"], ["change", "admin"], "scheduled-task-enabled"),
    4701: (["iam", "configuration"], ["change", "admin"], "scheduled-task-disabled"),
    4702: (["iam", "configuration"], ["change", "admin"], "scheduled-task-updated"),
    4719: (["iam", "configuration"], ["admin", "change"], "changed-audit-config"),
    4720: (["iam"], ["user", "creation"], "added-user-account"),
    4722: (["iam"], ["user", "change"], "enabled-user-account"),
    4723: (["iam"], ["user", "change"], "changed-password"),
    4724: (["iam"], ["user", "change"], "reset-password"),
    4725: (["iam"], ["user", "deletion"], "disabled-user-account"),
    4726: (["iam"], ["user", "deletion"], "deleted-user-account"),
    4727: (["iam"], ["group", "creation"], "added-group-account"),
    4728: (["iam"], ["group", "change"], "added-member-to-group"),
    4729: (["iam"], ["group", "change"], "removed-member-from-group"),
    4730: (["iam"], ["group", "deletion"], "deleted-group-account"),
    4731: (["iam"], ["group", "creation"], "added-group-account"),
    4732: (["iam"], ["group", "change"], "added-member-to-group"),
    4733: (["iam"], ["group", "change"], "removed-member-from-group"),
    4734: (["iam"], ["group", "deletion"], "deleted-group-account"),
    4735: (["iam"], ["group", "change"], "modified-group-account"),
    4737: (["iam"], ["group", "change"], "modified-group-account"),
    4738: (["iam"], ["user", "change"], "modified-user-account"),
    4740: (["iam"], ["user", "change"], "locked-out-user-account"),
    4741: (["iam"], ["creation", "admin"], "added-computer-account"),
    4742: (["iam"], ["change", "admin"], "changed-computer-account"),
    4743: (["iam"], ["deletion", "admin"], "deleted-computer-account"),
    4754: (["iam"], ["group", "creation"], "added-group-account"),
    4755: (["iam"], ["group", "change"], "modified-group-account"),
    4756: (["iam"], ["group", "change"], "added-member-to-group"),
    4757: (["iam"], ["group", "change"], "removed-member-from-group"),
    4758: (["iam"], ["group", "deletion"], "deleted-group-account"),
    4767: (["iam"], ["user", "change"], "unlocked-user-account"),
    4768: (*_AUTH_START, "kerberos-authentication-ticket-requested"),
    4769: (*_AUTH_START, "kerberos-service-ticket-requested"),
    4770: (*_AUTH_START, "kerberos-service-ticket-renewed"),
    4771: (*_AUTH_START, "kerberos-preauth-failed"),
    4776: (*_AUTH_START, "credential-validated"),
    4778: (["authentication", "session"], ["start"], "session-reconnected"),
    4779: (["authentication", "session"], ["end"], "session-disconnected"),
    4781: (["iam"], ["user", "change"], "renamed-user-account"),
    4798: (["iam"], ["user", "info"], "group-membership-enumerated"),
    4799: (["iam"], ["group", "info"], "user-member-enumerated"),
    4964: (["iam"], ["admin", "group"], "logged-in-special"),
    5024: (["process"], ["start"], "windows-firewall-service-started"),
    5025: (["process"], ["end"], "windows-firewall-service-stopped"),
    5140: (["network", "file"], ["info", "access"], "network-share-object-accessed"),
    5145: (["network", "file"], ["info", "access"], "network-share-object-access-checked"),
}
OWN_EVENTS: dict[int, tuple[list[str], list[str], str]] = {
    4656: (["file"], ["access"], "object-handle-requested"),
    4658: (["file"], ["access"], "object-handle-closed"),
    4660: (["file"], ["deletion"], "object-deleted"),
    4661: (["iam"], ["access"], "object-handle-requested"),
    4662: (["iam"], ["access"], "object-operation-performed"),
    4663: (["file"], ["access"], "object-access-attempted"),
    5156: (["network"], ["connection", "start", "allowed"], "windows-filtering-platform-connection-permitted"),
    5158: (["network"], ["start", "allowed"], "windows-filtering-platform-bind-permitted"),
    7045: (["iam", "configuration"], ["admin", "change"], "service-installed"),
}
LOGON_TYPES = {
    "2": "Interactive", "3": "Network", "4": "Batch", "5": "Service", "7": "Unlock", "8": "NetworkCleartext",
    "9": "NewCredentials", "10": "RemoteInteractive", "11": "CachedInteractive",
}  # fmt: skip
SERVICE_TYPES = {"0x1": "Kernel Driver", "0x2": "File System Driver", "0x8": "Recognizer Driver",
                 "0x10": "Win32 Own Process", "0x20": "Win32 Share Process", "0x110": "Interactive Own Process",
                 "0x120": "Interactive Share Process"}  # fmt: skip
IANA_TRANSPORTS = {"1": "icmp", "6": "tcp", "17": "udp", "58": "ipv6-icmp"}
DIRECTIONS = {"%%14592": "ingress", "%%14593": "egress", "Inbound": "ingress", "Outbound": "egress"}

# whose account `user.*` is: the logged-on (target) account for these, the subject for the rest.
_TARGET_IS_USER = {4624, 4625, 4634, 4647, 4768, 4769, 4770, 4771, 4776, 4778, 4779, 4964}
_TARGET_USER = {4720, 4722, 4723, 4724, 4725, 4726, 4738, 4740, 4767, 4781, 4798}  # -> user.target.*
_GROUP = {4727, 4728, 4729, 4730, 4731, 4732, 4733, 4734, 4735, 4737, 4754, 4755, 4756, 4757, 4758, 4799}
_FAILED = {4625, 4771}


def categories(event_id: int) -> tuple[list[str], list[str], str] | None:
    return EVENTS.get(event_id) or OWN_EVENTS.get(event_id)


def known(event_id: int) -> bool:
    return categories(event_id) is not None


def _s(data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    text = str(value).strip() if isinstance(value, str) else str(value)
    return None if text in ("", "-", "S-1-0-0", "{00000000-0000-0000-0000-000000000000}") else text


def map_event(doc: Doc, event_id: int, data: dict[str, Any], keywords: list[str]) -> None:
    cats = categories(event_id)
    if cats:
        put(doc, "event.category", list(cats[0]))
        put(doc, "event.type", list(cats[1]))
        put(doc, "event.action", cats[2])
    s = lambda key: _s(data, key)  # noqa: E731 - a local shorthand
    _outcome(doc, event_id, s, keywords)
    _users(doc, event_id, s)
    _logon(doc, event_id, s)
    _process(doc, event_id, s)
    _network(doc, event_id, s)
    _objects(doc, event_id, s)
    put(doc, "service.name", s("ServiceName"))
    stype = s("ServiceType")
    put(doc, "service.type", SERVICE_TYPES.get(stype or "", stype))
    if event_id in (4697, 7045):
        set_file(doc, s("ServiceFileName") or s("ImagePath"))


def _outcome(doc: Doc, event_id: int, s: Any, keywords: list[str]) -> None:
    if event_id in _FAILED or "Audit Failure" in keywords:
        put(doc, "event.outcome", "failure")
    elif event_id == 4776 and s("Status") not in (None, "0x0"):
        put(doc, "event.outcome", "failure")
    elif "Audit Success" in keywords:
        put(doc, "event.outcome", "success")


def _account(doc: Doc, prefix: str, s: Any, side: str) -> None:
    put(doc, f"{prefix}.name", s(f"{side}UserName"))
    put(doc, f"{prefix}.domain", s(f"{side}DomainName"))
    put(doc, f"{prefix}.id", s(f"{side}UserSid") or s(f"{side}Sid"))


def _users(doc: Doc, event_id: int, s: Any) -> None:
    if event_id in _TARGET_IS_USER:
        _account(doc, "user", s, "Target")
        if event_id == 4776:
            put(doc, "source.domain", s("Workstation"))
    else:
        _account(doc, "user", s, "Subject")
        if not doc.get("user"):
            put(doc, "user.name", s("AccountName"))
            put(doc, "user.domain", s("AccountDomain"))
    if event_id in _TARGET_USER:
        _account(doc, "user.target", s, "Target")
    elif event_id in _GROUP:
        put(doc, "group.name", s("TargetUserName"))
        put(doc, "group.domain", s("TargetDomainName"))
        put(doc, "group.id", s("TargetSid") or s("TargetUserSid"))
        member = s("MemberName")
        if member and member.upper().startswith("CN="):  # a distinguished name: its first RDN is the account
            member = member[3:].split(",", 1)[0]
        put(doc, "user.target.name", member)
        put(doc, "user.target.id", s("MemberSid"))
    elif event_id == 4648:
        put(doc, "user.effective.name", s("TargetUserName"))
        put(doc, "user.effective.domain", s("TargetDomainName"))
        append_unique(doc, "related.user", s("TargetUserName"))


def _logon(doc: Doc, event_id: int, s: Any) -> None:
    ltype = s("LogonType")
    if ltype is not None and ltype in LOGON_TYPES:
        put(doc, "winlog.logon.type", LOGON_TYPES[ltype])
    put(doc, "winlog.logon.id", s("TargetLogonId") if event_id in _TARGET_IS_USER else s("SubjectLogonId"))
    if event_id == 4625:
        put(doc, "winlog.logon.failure.status", s("Status"))
        put(doc, "winlog.logon.failure.sub_status", s("SubStatus"))
        put(doc, "winlog.logon.failure.reason", s("FailureReason"))


def _process(doc: Doc, event_id: int, s: Any) -> None:
    if event_id == 4688:
        put(doc, "process.pid", integer(s("NewProcessId")))
        put(doc, "process.executable", s("NewProcessName"))
        put(doc, "process.parent.pid", integer(s("ProcessId")))
        put(doc, "process.parent.executable", s("ParentProcessName"))
        cmd = s("CommandLine")
        put(doc, "process.command_line", cmd)
        if cmd:
            args = split_windows(cmd)
            put(doc, "process.args", args)
            put(doc, "process.args_count", len(args) if args else None)
    elif event_id in (5156, 5158):
        put(doc, "process.pid", integer(s("ProcessID")))
        put(doc, "process.executable", s("Application"))
    else:
        put(doc, "process.pid", integer(s("ProcessId")))
        put(doc, "process.executable", s("ProcessName"))
    proc = doc.get("process", {})
    put(doc, "process.name", basename(proc.get("executable")))
    put(doc, "process.parent.name", basename(proc.get("parent", {}).get("executable")))


def _network(doc: Doc, event_id: int, s: Any) -> None:
    if event_id in (5156, 5158):
        put(doc, "source.ip", ip(s("SourceAddress")))
        put(doc, "source.port", port(s("SourcePort")))
        put(doc, "destination.ip", ip(s("DestAddress")))
        put(doc, "destination.port", port(s("DestPort")))
        proto = s("Protocol")
        put(doc, "network.iana_number", proto)
        put(doc, "network.transport", IANA_TRANSPORTS.get(proto or ""))
        put(doc, "network.direction", DIRECTIONS.get(s("Direction") or ""))
        return
    put(doc, "source.ip", ip(s("IpAddress")))
    src_port = port(s("IpPort"))
    put(doc, "source.port", src_port or None)  # Windows writes 0 when there is no port
    if event_id in (4624, 4625):
        put(doc, "source.domain", s("WorkstationName"))


def _objects(doc: Doc, event_id: int, s: Any) -> None:
    if event_id in (4656, 4658, 4660, 4663):
        otype = (s("ObjectType") or "").lower()
        name = s("ObjectName")
        if otype == "key" and name:
            put(doc, "registry.path", name)
            put(doc, "registry.key", name)
        elif otype == "file":
            set_file(doc, name)
    elif event_id in (5140, 5145):
        put(doc, "file.path", s("RelativeTargetName"))
        put(doc, "file.name", basename(s("RelativeTargetName")))
        put(doc, "file.directory", s("ShareLocalPath"))
