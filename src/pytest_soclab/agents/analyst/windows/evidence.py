"""What the Windows investigation has established: processes, connections, findings, told-apart noise."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from pytest_soclab.agents.analyst.tradecraft import Behaviour
from pytest_soclab.agents.analyst.windows.tradecraft import account, base, command_acts, windows_binary

_PROGRAM = re.compile(r'^(?:"([^"]+)"|(\S+))')

# The process fields every process query keeps (Sysmon 1 and the other Sysmon events alike).
PROC_FIELDS = ("_id", "_index", "@timestamp", "host.name", "process.entity_id", "process.pid", "process.name",
               "process.executable", "process.command_line", "process.parent.entity_id", "process.parent.pid",
               "process.parent.name",
               "process.parent.executable", "process.parent.command_line", "user.name", "user.domain",
               "winlog.event_data.LogonId", "winlog.event_data.IntegrityLevel")


def ref_of(row: dict[str, Any]) -> tuple[str, str] | None:
    """(index, _id) of a retrieved row, when the query kept them."""
    return (str(row["_index"]), str(row["_id"])) if row.get("_id") else None


@dataclass
class WinProc:
    eid: str
    host: str
    name: str
    exe: str
    cmd: str
    parent_eid: str
    parent_name: str
    parent_exe: str
    user: str
    start: str
    pid: str = ""
    parent_pid: str = ""
    ref: tuple[str, str] | None = None  # (index, _id) of the event that shows it
    acts: list[Behaviour] = field(default_factory=list)
    known: bool = True  # False: only seen as another process's parent (no start event retrieved)

    @classmethod
    def from_row(cls, r: dict[str, Any]) -> WinProc:
        exe = str(r.get("process.executable") or "")
        p = cls(
            eid=str(r.get("process.entity_id") or ""), host=str(r.get("host.name") or ""),
            name=str(r.get("process.name") or base(exe)), exe=exe, cmd=str(r.get("process.command_line") or ""),
            parent_eid=str(r.get("process.parent.entity_id") or ""), parent_name=str(r.get("process.parent.name") or ""),
            parent_exe=str(r.get("process.parent.executable") or ""), user=account(r.get("user.name")),
            start=str(r.get("@timestamp") or ""), pid=str(r.get("process.pid") or ""),
            parent_pid=str(r.get("process.parent.pid") or ""),
            ref=ref_of(r),
        )
        p.acts = command_acts(p.cmd, p.exe or p.name, p.parent_exe or p.parent_name)
        return p

    @property
    def lname(self) -> str:
        return (self.name or base(self.exe)).lower()

    @property
    def weight(self) -> int:
        return max((a.weight for a in self.acts), default=0)

    def quoted(self, n: int = 220) -> str:
        """The command line as the report cites it: a program Windows ships by its file name (where it
        lives is not the point), anything else as it ran."""
        text = " ".join((self.cmd or self.exe or self.name).split())
        m = _PROGRAM.match(text)
        if m and windows_binary(m.group(1) or m.group(2)):
            text = base(m.group(1) or m.group(2)) + text[m.end():]
        return text if len(text) <= n else text[: n - 3] + "..."


@dataclass
class Finding:
    """One step of the evidence chain: what happened, where, when, and the document that shows it."""

    time: str
    host: str
    text: str
    technique: str = ""
    ref: tuple[str, str] | None = None
    weight: int = 1


@dataclass
class Peer:
    """An address the activity talked to (Sysmon 3), with what zeek saw of it."""

    ip: str
    ports: set[int] = field(default_factory=set)
    processes: set[str] = field(default_factory=set)
    first: str = ""
    count: int = 0
    internal_host: str = ""  # when the address is one of the estate's hosts
    zeek: list[str] = field(default_factory=list)  # sentences about it from zeek
    downloads: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)  # DNS names the hosts resolved to it
    role: str = ""  # attacker | core | hosting (a public platform the payload came from)


@dataclass
class WinCase:
    """The working memory of one investigation."""

    host_ips: dict[str, set[str]] = field(default_factory=dict)  # host -> its own addresses
    core_ips: set[str] = field(default_factory=set)  # addresses serving DNS/Kerberos/LDAP to the estate
    procs: dict[str, WinProc] = field(default_factory=dict)
    activity: list[str] = field(default_factory=list)  # entity ids of the attacker's processes, in order
    roots: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    told_apart: list[str] = field(default_factory=list)
    peers: dict[str, Peer] = field(default_factory=dict)
    hosts: list[str] = field(default_factory=list)  # compromised hosts, first the pivot's
    actors: list[str] = field(default_factory=list)  # accounts the attacker's processes ran as
    lateral_accounts: list[str] = field(default_factory=list)
    techniques: dict[str, str] = field(default_factory=dict)  # id -> why
    dumped: list[str] = field(default_factory=list)  # the programs that read LSASS memory
    copied: list[tuple[str, str]] = field(default_factory=list)  # (program, technique): hives or ntds.dit copied
    copies: list[str] = field(default_factory=list)  # the copies' paths
    reverted: list[str] = field(default_factory=list)
    exposures: list[str] = field(default_factory=list)  # something left listening
    served: set[str] = field(default_factory=set)  # domain controllers that served the attacker a request (DCSync)
    injected: list[str] = field(default_factory=list)  # hosts where the attacker's code runs inside another process
    replicated: list[tuple[str, str, str]] = field(default_factory=list)  # DCSync: (DC, account, requesting host)
    notes: list[str] = field(default_factory=list)
    verdict: str = "undetermined"
    executed: list[tuple[str, dict[str, Any], str, bool]] = field(default_factory=list)
    recommended: list[str] = field(default_factory=list)
    alert: dict[str, Any] = field(default_factory=dict)

    def add(self, f: Finding) -> None:
        if not any(g.text == f.text and g.host == f.host for g in self.findings):
            self.findings.append(f)
        if f.technique:
            self.techniques.setdefault(f.technique, f.text)

    def ip_of(self, host: str) -> str:
        ips = sorted(self.host_ips.get(host, ()))
        return ips[0] if ips else ""

    def host_of(self, ip: str) -> str:
        for h, ips in self.host_ips.items():
            if ip in ips:
                return h
        return ""
