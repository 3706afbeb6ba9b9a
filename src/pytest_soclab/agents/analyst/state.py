"""What the analyst has established: processes, logins, infrastructure, artifacts and the evidence chain."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from pytest_soclab.agents.analyst.tradecraft import Behaviour, credential_kind, unusual_executable


@dataclass
class Proc:
    eid: str
    host: str
    pid: int | None
    name: str
    exe: str
    cmd: str
    parent_eid: str | None
    parent_pid: int | None
    parent_name: str
    parent_cmd: str
    user: str
    start: str
    cwd: str = ""
    doc_id: str | None = None
    ended: bool | None = None
    behaviours: list[Behaviour] = field(default_factory=list)

    @classmethod
    def from_row(cls, r: dict[str, Any]) -> Proc:
        pid = r.get("process.pid")
        ppid = r.get("process.parent.pid")
        return cls(
            eid=str(r.get("process.entity_id") or f"{r.get('host.name')}:{pid}:{r.get('@timestamp')}"),
            host=str(r.get("host.name") or ""),
            pid=int(pid) if pid is not None else None,
            name=str(r.get("process.name") or ""),
            exe=str(r.get("process.executable") or ""),
            cmd=str(r.get("process.command_line") or ""),
            parent_eid=r.get("process.parent.entity_id"),
            parent_pid=int(ppid) if ppid is not None else None,
            parent_name=str(r.get("process.parent.name") or ""),
            parent_cmd=str(r.get("process.parent.command_line") or ""),
            user=str(r.get("user.name") or ""),
            start=str(r.get("@timestamp") or ""),
            cwd=str(r.get("process.working_directory") or ""),
            doc_id=r.get("_id"),
        )

    @property
    def weight(self) -> int:
        return max((b.weight for b in self.behaviours), default=0)

    def short(self, n: int = 110) -> str:
        """The command line as a report quotes it: redirections to /dev/null and backgrounding dropped,
        and the program named by its file name unless where it lives is the point (an implant)."""
        c = re.sub(r"\s*(?:[12&]?>>?\s*/dev/null|2>&1)", "", self.cmd or self.exe or self.name).rstrip(" &")
        if not unusual_executable(self.exe):
            c = re.sub(r"^/(?:[\w.+-]+/)+([\w.+-]+)", r"\1", c)
        return c if len(c) <= n else c[: n - 1] + "…"

    def bare(self) -> str:
        """Program and options only: for routine commands whose file arguments are not the point."""
        toks = self.short(200).split()
        toks = [re.sub(r"^/(?:usr/)?s?bin/", "", t) for t in toks]
        keep = [t if not t.startswith("/") or credential_kind(t) else "…" for t in toks[1:]]
        return " ".join([toks[0], *keep]) if toks else self.name


@dataclass
class Login:
    host: str
    user: str
    src_ip: str
    method: str
    time: str
    sshd_pid: int | None
    doc_id: str | None
    message: str = ""
    failures: int = 0
    src_host: str | None = None
    malicious: bool = False
    fail_ids: list[str] = field(default_factory=list)
    fail_msg: str = ""


@dataclass
class Infra:
    """An external address the investigation touched."""

    ip: str
    roles: set[str] = field(default_factory=set)  # attacker, c2, download, exfil, reverse-shell, scanner
    names: set[str] = field(default_factory=set)
    contacts: dict[str, int] = field(default_factory=dict)  # internal host -> connections
    first: str = ""
    last: str = ""
    count: int = 0
    bytes_out: int = 0
    beacon_min: float | None = None
    ti: list[str] = field(default_factory=list)
    popular: bool = False  # many internal clients: a business service, never blocked
    exfil_from: set[str] = field(default_factory=set)  # hosts that sent data to it
    established: bool = False  # the estate talked to it long before the attack: review before blocking
    why: list[str] = field(default_factory=list)


@dataclass
class Artifact:
    path: str
    host: str
    role: str  # dropped, implant, webshell, persistence, staging, modified, credential
    why: str
    time: str = ""
    technique: str = ""


@dataclass
class Step:
    """One link of the evidence chain."""

    time: str
    host: str
    text: str
    index: str = ""
    doc_id: str | None = None
    technique: str = ""


@dataclass
class Entry:
    host: str
    kind: str  # web, ssh, service, user, cron, unknown
    detail: str = ""
    time: str = ""


@dataclass
class CaseState:
    inventory: dict[str, list[str]] = field(default_factory=dict)  # every host in the telemetry -> its ips
    ip_host: dict[str, str] = field(default_factory=dict)
    procs: dict[str, Proc] = field(default_factory=dict)
    cluster: dict[str, set[str]] = field(default_factory=dict)  # host -> attacker process entity ids
    entries: dict[str, Entry] = field(default_factory=dict)
    logins: list[Login] = field(default_factory=list)
    failed_logins: list[Login] = field(default_factory=list)
    infra: dict[str, Infra] = field(default_factory=dict)
    artifacts: dict[tuple[str, str], Artifact] = field(default_factory=dict)
    steps: list[Step] = field(default_factory=list)
    techniques: dict[str, str] = field(default_factory=dict)
    compromised_users: dict[str, str] = field(default_factory=dict)
    user_profiles: dict[str, str] = field(default_factory=dict)  # account -> its regular use
    scheduled_users: set[str] = field(default_factory=set)
    exposed_hosts: dict[str, str] = field(default_factory=dict)  # host -> whose credentials left, and how
    context: list[str] = field(default_factory=list)  # activity told apart from the attack
    scope_notes: list[str] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)  # exposures and other findings to fix
    alerts: list[dict[str, Any]] = field(default_factory=list)
    trigger_alert: dict[str, Any] | None = None
    instructions: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    verdict: str = "undetermined"  # malicious, reconnaissance, benign, undetermined
    verdict_why: list[str] = field(default_factory=list)

    @property
    def implicated(self) -> list[str]:
        return sorted(h for h, eids in self.cluster.items() if eids)

    @property
    def hosts(self) -> dict[str, list[str]]:
        """The compromised hosts and their addresses (what agents built on this one act on)."""
        return {h: self.inventory.get(h, []) for h in self.implicated}

    def step(self, time: str, host: str, text: str, index: str = "", doc_id: str | None = None,
             technique: str = "") -> None:
        key = (host, text)
        if any((s.host, s.text) == key for s in self.steps):
            return
        self.steps.append(Step(time, host, text, index, doc_id, technique))
        if technique:
            self.techniques.setdefault(technique, "")

    def artifact(self, path: str, host: str, role: str, why: str, time: str = "", technique: str = "") -> None:
        """Record a file; a file seen again in a weightier role (dropped, then run as an implant) is upgraded."""
        old = self.artifacts.get((host, path))
        if old is None or _ROLE_RANK.get(role, 0) > _ROLE_RANK.get(old.role, 0):
            self.artifacts[(host, path)] = Artifact(path, host, role, why, time or (old.time if old else ""),
                                                    technique or (old.technique if old else ""))


_ROLE_RANK = {"modified": 1, "dropped": 2, "staging": 3, "credential": 3, "persistence": 4, "webshell": 5, "implant": 6}
