"""The Windows investigation: from the alert to the process tree, what it did, where it talked, and
what in the same window is Windows' (or the lab's) own work.

Data: the Elastic integrations' streams for Windows (Sysmon operational, Security, System or forwarded
events, PowerShell operational) and zeek. Sysmon's ProcessGuid is `process.entity_id` and its parent
`process.parent.entity_id`, so process trees are followed by entity id; Security events give logons,
named-pipe access and service installs; zeek gives what left the host.
"""

from __future__ import annotations

from typing import Any

from pytest_soclab.agents.analyst import clock
from pytest_soclab.agents.analyst.store import ALERTS, Telemetry, q, q_in
from pytest_soclab.agents.analyst.tradecraft import is_ip, subnet24
from pytest_soclab.agents.analyst.windows import tradecraft as tc
from pytest_soclab.agents.analyst.windows.streams import POWERSHELL, SECURITY, SYSMON, SYSTEM_STREAMS, ZCONN, ZHTTP
from pytest_soclab.agents.analyst.windows.evidence import PROC_FIELDS, Finding, Peer, WinCase, WinProc, ref_of
from pytest_soclab.agents.analyst.windows.remote import explicit_credentials, hosted_powershell, session_commands

MAX_DEPTH = 5  # levels of children followed below the activity's root
ENUMERATION = 15  # other programs a process opens beside lsass when it lists processes rather than dumps one
ALERT_FIELDS = ("@timestamp", "kibana.alert.original_time", "host.name", "process.entity_id", "process.name",
                "process.executable", "source.ip", "destination.ip", "destination.port", "user.name", "event.code",
                "winlog.event_id", "event.dataset", "kibana.alert.reason", "kibana.alert.rule.threat.technique.id",
                "kibana.alert.rule.threat.technique.subtechnique.id", "file.path", "service.name",
                "winlog.event_data.ServiceFileName", "registry.path", "kibana.alert.ancestors.id")


def keep(fields: tuple[str, ...] | list[str]) -> str:
    return "KEEP " + ", ".join(fields)


class Investigation:
    """The steps, in order; each one reads through `self.tel` and writes into `self.case`."""

    def __init__(self, trigger: dict[str, Any], tel: Telemetry) -> None:
        self.trigger = trigger
        self.tel = tel
        self.case = WinCase()
        pivot = trigger.get("pivot") or {}
        self.rule = str(pivot.get("alert_rule") or "")
        self.pivot_host = str(pivot.get("host.name") or "")
        self.pivot_time = str(pivot.get("time_utc") or "")
        self.seed: WinProc | None = None
        self.net_pair: tuple[str, str, int] | None = None  # (internal, outside, port) of a network alert
        self.service_alert: dict[str, Any] | None = None
        self.window: tuple[str, str] = ("", "")

    # -- helpers ------------------------------------------------------------------------------------------
    def esql(self, query: str) -> list[dict[str, Any]]:
        return self.tel.esql(query)

    def system_streams(self) -> str:
        return ", ".join(s for s in SYSTEM_STREAMS if self.tel.has(s))

    def procs_by_id(self, eids: set[str]) -> dict[str, WinProc]:
        """Sysmon 1 (process creation) of these entity ids (those already known are not asked again)."""
        want = {e for e in eids if e}
        missing = {e for e in want if e not in self.case.procs}
        if missing:
            rows = self.esql(f'FROM {SYSMON} METADATA _id, _index | WHERE event.code == "1" AND process.entity_id IN '
                             f'({q_in(missing)}) | {keep(PROC_FIELDS)} | LIMIT {len(missing) * 2 + 10}')
            for r in rows:
                p = WinProc.from_row(r)
                self.case.procs.setdefault(p.eid, p)
        return {e: self.case.procs[e] for e in want if e in self.case.procs}

    def in_window(self, lo: float = 0, hi: float = 0) -> str:
        a, b = self.window
        return f'@timestamp >= "{clock.shift(a, lo)}" AND @timestamp <= "{clock.shift(b, hi)}"'

    # -- 1. orient ----------------------------------------------------------------------------------------
    def orient(self) -> None:
        """Each host's own addresses (Sysmon 3 sources) and the addresses that serve DNS, Kerberos or
        LDAP to the estate (zeek): the core no response may touch."""
        rows = self.esql(f'FROM {SYSMON} | WHERE event.code == "3" | STATS n = COUNT(*) BY host.name, source.ip, '
                         "network.direction | SORT n DESC | LIMIT 300")
        for r in rows:
            ip, host = str(r.get("source.ip") or ""), str(r.get("host.name") or "")
            # An inbound connection's source is the other side: only outbound ones name the host's own address.
            if str(r.get("network.direction") or "egress") not in ("egress", "outbound"):
                continue
            if is_ip(ip) and tc.host_address(ip) and int(r.get("n") or 0) >= 2:
                self.case.host_ips.setdefault(host, set()).add(ip)
        self.case.core_ips |= self.core_servers(ZCONN, 1)
        self.case.core_ips |= self.core_servers(SYSMON, 1, 'event.code == "3" AND ')

    def core_servers(self, stream: str, min_clients: int, where: str = "") -> set[str]:
        """Addresses that serve DNS, Kerberos or LDAP to at least `min_clients` others."""
        ports = ", ".join(str(p) for p in sorted(tc.CORE_SERVICE_PORTS))
        rows = self.esql(f"FROM {stream} | WHERE {where}destination.port IN ({ports}) | STATS clients = "
                         f"COUNT_DISTINCT(source.ip) BY destination.ip | WHERE clients >= {min_clients} | LIMIT 50")
        return {str(r.get("destination.ip")) for r in rows if r.get("destination.ip")}

    # -- 2. anchor ----------------------------------------------------------------------------------------
    def anchor(self) -> None:
        """The alert behind the trigger: its process, its network pair, or its service install."""
        if not self.rule:
            return
        rows = self.esql(f"FROM {ALERTS} METADATA _id, _index | WHERE kibana.alert.rule.name == {q(self.rule)} "
                         f"| SORT @timestamp | {keep(('_id', '_index') + ALERT_FIELDS)} | LIMIT 200")
        if not rows:
            return

        def distance(r: dict[str, Any]) -> float:
            t = str(r.get("kibana.alert.original_time") or r.get("@timestamp") or "")
            off = abs(clock.delta(self.pivot_time, t)) if self.pivot_time else 0.0
            same = not self.pivot_host or str(r.get("host.name") or "").lower() == self.pivot_host.lower()
            return off + (0 if same else 1e9)

        alert = min(rows, key=distance)
        self.case.alert = alert
        t = str(alert.get("kibana.alert.original_time") or alert.get("@timestamp") or self.pivot_time)
        self.window = (t, t)
        for key in ("kibana.alert.rule.threat.technique.subtechnique.id", "kibana.alert.rule.threat.technique.id"):
            for tid in tc.listed(alert.get(key)):
                self.case.techniques.setdefault(tid, f"the alert's technique ({self.rule})")
                break
        if alert.get("process.entity_id"):
            seed = self.procs_by_id({str(alert["process.entity_id"])}).get(str(alert["process.entity_id"]))
            if seed is None:  # the alert's event is not a process start: the process as the alert shows it
                seed = WinProc.from_row(alert)
                seed.known = False
                self.case.procs.setdefault(seed.eid, seed)
            self.seed = seed
        elif alert.get("source.ip") and alert.get("destination.ip"):
            port = int(alert.get("destination.port") or 0)
            self.net_pair = (str(alert["source.ip"]), str(alert["destination.ip"]), port)
        if str(alert.get("event.code") or alert.get("winlog.event_id") or "") in tc.SERVICE_INSTALLED:
            self.service_alert = alert

    # -- 3. the host behind a network alert -----------------------------------------------------------------
    def locate(self) -> None:
        if self.seed is not None or self.net_pair is None:
            return
        src, dst, port = self.net_pair
        for inside, outside in ((src, dst), (dst, src)):
            where = f"destination.ip == {q(outside)}" + (f" AND destination.port == {port}" if port and inside == src else "")
            rows = self.esql(f'FROM {SYSMON} METADATA _id, _index | WHERE event.code == "3" AND {where} '
                             f"| SORT @timestamp | {keep(PROC_FIELDS + ('source.ip', 'destination.ip', 'destination.port'))} "
                             "| LIMIT 20")
            if rows:
                r = rows[0]
                host = str(r.get("host.name"))
                self.case.host_ips.setdefault(host, set()).add(str(r.get("source.ip") or inside))
                self.case.add(Finding(str(r.get("@timestamp")), host,
                                      f"Sysmon on {host} shows {r.get('process.name')} ({r.get('process.executable')}) "
                                      f"connecting from {r.get('source.ip')} to {outside}:{r.get('destination.port')}: "
                                      f"the zeek session's internal address {inside} is {host}.",
                                      "T1571" if port and port not in (80, 443) else "", ref_of(r), 3))
                eid = str(r.get("process.entity_id") or "")
                self.seed = self.procs_by_id({eid}).get(eid) or WinProc.from_row(r)
                self.case.procs.setdefault(self.seed.eid, self.seed)
                return

    # -- 4. the process tree --------------------------------------------------------------------------------
    def trace(self) -> None:
        if self.seed is None:
            return
        asked = self.requesters(self.seed) if self.seed.lname in tc.SESSION_BOUNDARIES else []
        # Windows did it on someone's request (the service manager writing a service's ImagePath, the
        # RPC host carrying a remote call): the activity is the request, in the moments before.
        for p in asked:
            self.take_activity(self.ancestry(p))
        if not asked:
            self.take_activity(self.ancestry(self.seed))
        self.window = self.activity_window()
        self.orphans()
        self.service_runs()

    def activity_window(self) -> tuple[str, str]:
        starts = [self.case.procs[e].start for e in self.case.activity if e in self.case.procs and self.case.procs[e].start]
        lo = min(starts + [self.window[0]]) if starts else self.window[0]
        hi = max(starts + [self.window[1]]) if starts else self.window[1]
        return lo, hi

    def orphans(self) -> None:
        """Process starts whose parent the recording lost (no parent fields) on the activity's host, by
        its account, in its time, that do something damning: part of the activity."""
        if self.seed is None or not self.window[0]:
            return
        users = {self.case.procs[e].user for e in self.case.activity if e in self.case.procs} - {""}
        rows = self.esql(f'FROM {SYSMON} METADATA _id, _index | WHERE event.code == "1" AND host.name == {q(self.seed.host)} '
                         f"AND process.parent.entity_id IS NULL AND {self.in_window(-60, 900)} | SORT @timestamp "
                         f"| {keep(PROC_FIELDS)} | LIMIT 200")
        for r in rows:
            p = WinProc.from_row(r)
            if p.user in users and p.weight >= 4 and p.eid not in self.case.activity:
                self.case.procs.setdefault(p.eid, p)
                self.take_activity(p)

    def requesters(self, p: WinProc) -> list[WinProc]:
        """Process starts on the host in the two minutes before whose command lines do something damning
        (change a service, a firewall rule, a registry key) and are not Windows' own."""
        t = p.start or self.window[0]
        rows = self.esql(f'FROM {SYSMON} METADATA _id, _index | WHERE event.code == "1" AND host.name == {q(p.host)} AND '
                         f'@timestamp >= "{clock.shift(t, -120)}" AND @timestamp <= "{clock.shift(t, 5)}" '
                         f"| SORT @timestamp | {keep(PROC_FIELDS)} | LIMIT 300")
        out = []
        for r in rows:
            c = WinProc.from_row(r)
            if c.weight >= 4 and tc.base(c.parent_name) not in {"services.exe"}:
                self.case.procs.setdefault(c.eid, c)
                out.append(c)
        return out

    def ancestry(self, p: WinProc) -> WinProc:
        """Up the parents to the session boundary (the desktop shell, the service manager, WMI): the
        topmost process below it is where the activity starts."""
        seen = {p.eid}
        while p.parent_eid and p.parent_eid not in seen and tc.base(p.parent_name or p.parent_exe) not in tc.SESSION_BOUNDARIES:
            seen.add(p.parent_eid)
            parent = self.procs_by_id({p.parent_eid}).get(p.parent_eid) or self.case.procs.get(p.parent_eid)
            if parent is None:  # the parent started before the recording: what its child says of it
                parent = WinProc(eid=p.parent_eid, host=p.host, name=tc.base(p.parent_exe or p.parent_name),
                                 exe=p.parent_exe, cmd="", parent_eid="", parent_name="", parent_exe="",
                                 user=p.user, start="", known=False, pid=p.parent_pid)
                parent.acts = tc.command_acts("", parent.exe or parent.name)  # what its image alone says
                self.case.procs[parent.eid] = parent
                p = parent
                break
            p = parent
        self.case.roots.append(p.eid)
        return p

    def take_activity(self, root: WinProc) -> None:
        """The root and all its descendants (Sysmon 1 by parent entity id). Windows' network diagnostics
        (`netsh trace` and the collection it runs) are told apart and not followed."""
        self.add_activity(root.eid)
        frontier = {root.eid}
        for _ in range(MAX_DEPTH):
            if not frontier or self.tel.exhausted:
                break
            rows = self.esql(f'FROM {SYSMON} METADATA _id, _index | WHERE event.code == "1" AND process.parent.entity_id IN '
                             f"({q_in(frontier)}) | SORT @timestamp | {keep(PROC_FIELDS)} | LIMIT 500")
            frontier = set()
            for r in rows:
                p = WinProc.from_row(r)
                if p.eid in self.case.activity:
                    continue
                self.case.procs.setdefault(p.eid, p)
                if p.lname == "conhost.exe":
                    continue
                if tc.diagnostics(p.cmd):
                    self.note_diagnostics(p)
                    continue
                self.add_activity(p.eid)
                frontier.add(p.eid)

    def add_activity(self, eid: str) -> None:
        if eid not in self.case.activity:
            self.case.activity.append(eid)

    def note_diagnostics(self, p: WinProc) -> None:
        text = (f"{p.quoted(60)} at {clock.hm(p.start)} on {p.host} (by {p.user}) is Windows' network diagnostics: "
                "netsh trace stop runs gatherNetworkInfo.vbs, whose reg export of the Credential Providers keys, "
                "wevtutil epl, gpresult and tasklist /svc collect the trace report")
        rows = self.esql(f'FROM {SYSMON} | WHERE event.code == "1" AND host.name == {q(p.host)} AND '
                         f'process.parent.entity_id == {q(p.eid)} | STATS n = COUNT(*) BY process.name, process.command_line '
                         "| LIMIT 5")
        script = next((str(r.get("process.command_line")) for r in rows if "gathernetworkinfo" in str(r.get("process.command_line")).lower()), "")
        if script:
            text += f" ({script.strip()})"
        if text not in self.case.told_apart:
            self.case.told_apart.append(text + ": not the attacker's.")

    def service_runs(self) -> None:
        """Programs the service manager started in the window with an attacker's argument (a DLL or pipe
        in a user folder: a privilege escalation such as getsystem), and what they started."""
        host = self.seed.host if self.seed else ""
        if not host or not self.window[0]:
            return
        rows = self.esql(f'FROM {SYSMON} METADATA _id, _index | WHERE event.code == "1" AND host.name == {q(host)} AND '
                         f'process.parent.name == "services.exe" AND {self.in_window(-60, 1800)} '
                         f"| SORT @timestamp | {keep(PROC_FIELDS)} | LIMIT 300")
        for r in rows:
            p = WinProc.from_row(r)
            if any(a.tag == "service-exec" for a in p.acts) or tc.user_writable(p.exe):
                self.case.procs.setdefault(p.eid, p)
                self.take_activity(p)

    # -- 5. what the activity did -----------------------------------------------------------------------
    def activity_events(self) -> None:
        if not self.case.activity:
            return
        host = self.seed.host if self.seed else ""
        self.lsass_access(host)  # may add the dumper's own tree to the activity
        eids = q_in(self.case.activity)
        fields = ("_id", "_index", "@timestamp", "event.code", "host.name", "process.entity_id", "process.name")
        # One query per kind: a chatty process's registry writes must not crowd out its connections.
        for codes, extra, handle, limit in (
                ('"3"', ("source.ip", "destination.ip", "destination.port"), self.connection, 300),
                ('"11", "15"', ("file.path", "winlog.event_data.Contents"), self.file_event, 300),
                ('"13"', ("registry.path", "registry.data.strings"), self.registry, 500),
                ('"8"', ("winlog.event_data.TargetImage", "winlog.event_data.TargetProcessGuid",
                         "winlog.event_data.TargetProcessId", "winlog.event_data.StartFunction",
                         "winlog.event_data.StartModule"), self.injection, 50)):
            rows = self.esql(f"FROM {SYSMON} METADATA _id, _index | WHERE event.code IN ({codes}) AND "
                             f"process.entity_id IN ({eids}) | SORT @timestamp | {keep(fields + extra)} | LIMIT {limit}")
            for r in rows:
                handle(r)
        self.script_blocks(host)
        hosted_powershell(self)
        self.firewall_store(host)

    def lsass_access(self, host: str) -> None:
        """Who opened lsass.exe in the window, with which rights: reading memory (0x10) is a dump;
        query-only handles (0x1000, 0x1400) are the many agents that watch processes."""
        if not host:
            return
        rows = self.esql(f'FROM {SYSMON} | WHERE event.code == "10" AND host.name == {q(host)} AND '
                         f'winlog.event_data.TargetImage LIKE "*{tc.LSASS}" AND {self.in_window(-600, 3600)} '
                         "| STATS n = COUNT(*), first = MIN(@timestamp), masks = VALUES(winlog.event_data.GrantedAccess) "
                         "BY process.executable, process.entity_id | SORT n DESC | LIMIT 100")
        for r in rows:
            exe, eid = str(r.get("process.executable") or ""), str(r.get("process.entity_id") or "")
            masks = tc.listed(r.get("masks"))
            reads = any(tc.reads_memory(m) for m in masks)
            ours = eid in self.case.activity
            tool = tc.offensive_tool(exe)
            suspicious = ours or tool or tc.user_writable(exe) or tc.base(exe) in {"rundll32.exe", "powershell.exe", "pwsh.exe"}
            # Windows' own programs (a remote session's Get-Process, a shell's task list) that open every
            # process, lsass among them, are listing processes; an implant doing the same still reads lsass.
            if reads and suspicious and tc.windows_binary(exe) and self.enumerates(host, eid):
                self.case.told_apart.append(
                    f"{_named(exe)} opened lsass.exe with {', '.join(masks)} among {ENUMERATION} or more other "
                    "processes in the same moments: listing processes (Get-Process, a task manager), not a dump "
                    "aimed at lsass.")
            elif reads and suspicious:
                self.dump_found(r, exe, eid, masks)
            elif not reads and not ours and len(self.case.told_apart) < 12:
                self.case.told_apart.append(
                    f"{_named(exe)} opened lsass.exe {r.get('n')} times with {', '.join(masks)} only "
                    "(query rights, no memory read): a monitoring handle, not a dump.")

    def enumerates(self, host: str, eid: str) -> bool:
        """Whether the process opened many other processes too: a dumper goes for lsass alone."""
        rows = self.esql(f'FROM {SYSMON} | WHERE event.code == "10" AND host.name == {q(host)} AND '
                         f"process.entity_id == {q(eid)} | STATS targets = COUNT_DISTINCT(winlog.event_data.TargetImage) "
                         "| LIMIT 1")
        return bool(rows) and int(rows[0].get("targets") or 0) > ENUMERATION

    def dump_found(self, r: dict[str, Any], exe: str, eid: str, masks: list[str]) -> None:
        rows = self.esql(f'FROM {SYSMON} METADATA _id, _index | WHERE event.code == "10" AND process.entity_id == {q(eid)} AND '
                         f'winlog.event_data.TargetImage LIKE "*{tc.LSASS}" | SORT @timestamp | '
                         "KEEP _id, _index, @timestamp, host.name, process.executable, winlog.event_data.TargetImage, "
                         "winlog.event_data.GrantedAccess, "
                         "winlog.event_data.SourceUser, winlog.event_data.CallTrace | LIMIT 3")
        first = rows[0] if rows else r
        p = self.case.procs.get(eid) or self.procs_by_id({eid}).get(eid)
        how = tc.base(exe)
        trace = str(first.get("winlog.event_data.CallTrace") or "")
        via = ""
        if "dbghelp" in trace.lower() or "dbgcore" in trace.lower():
            via = " through MiniDumpWriteDump (dbghelp/dbgcore in the call trace)"
        elif "unknown(" in trace.lower():
            via = " from code outside any module (UNKNOWN in the call trace: injected or reflectively loaded)"
        user = tc.account(first.get("winlog.event_data.SourceUser")) or (p.user if p else "")
        self.case.dumped.append(how)
        self.case.add(Finding(str(first.get("@timestamp") or r.get("first")), str(first.get("host.name") or ""),
                              f"{_named(exe)} opened lsass.exe with {', '.join(masks)} (memory read){via}, as {user}: "
                              "LSASS memory was read, the credentials cached there must be taken as stolen.",
                              "T1003.001", ref_of(first), 5))
        if eid not in self.case.activity:
            if p is not None:
                root = self.ancestry(p)
                self.take_activity(root)
            else:
                self.add_activity(eid)

    def connection(self, r: dict[str, Any]) -> None:
        ip = str(r.get("destination.ip") or "")
        if not is_ip(ip) or not tc.host_address(ip):
            return
        src = str(r.get("source.ip") or "")
        host = str(r.get("host.name") or "")
        if src and tc.host_address(src):
            self.case.host_ips.setdefault(host, set()).add(src)
        if src == ip or ip in self.case.host_ips.get(host, set()):
            return
        peer = self.case.peers.setdefault(ip, Peer(ip, first=str(r.get("@timestamp"))))
        peer.count += 1
        peer.processes.add(str(r.get("process.name")))
        try:
            peer.ports.add(int(r.get("destination.port")))  # type: ignore[arg-type]
        except (TypeError, ValueError):
            pass
        if peer.count == 1:
            self.case.add(Finding(str(r.get("@timestamp")), host,
                                  f"{r.get('process.name')} on {host} ({src}) connected to {ip}:{r.get('destination.port')} "
                                  "(Sysmon 3).", "", ref_of(r), 3))

    def injection(self, r: dict[str, Any]) -> None:
        """A thread the activity started in another process (Sysmon 8), and what that process then loaded
        from where users can write (Sysmon 7): the code injected."""
        target = str(r.get("winlog.event_data.TargetImage") or "")
        func = str(r.get("winlog.event_data.StartFunction") or "")
        host = str(r.get("host.name") or "")
        self.case.add(Finding(str(r.get("@timestamp")), host,
                              f"{r.get('process.name')} started a thread in {tc.base(target)} (pid "
                              f"{r.get('winlog.event_data.TargetProcessId')})"
                              + (f" at {func} of {tc.base(r.get('winlog.event_data.StartModule'))}" if func else "")
                              + " (Sysmon 8, CreateRemoteThread): code injected into another process (T1055"
                              + (".001, a DLL loaded by force)." if func.lower().startswith("loadlibrary") else ")."),
                              "T1055.001" if func.lower().startswith("loadlibrary") else "T1055", ref_of(r), 5))
        if host and host not in self.case.injected:
            self.case.injected.append(host)
        guid = str(r.get("winlog.event_data.TargetProcessGuid") or "")
        if not guid:
            return
        rows = self.esql(f'FROM {SYSMON} METADATA _id, _index | WHERE event.code == "7" AND process.entity_id == {q(guid)} AND '
                         f'@timestamp >= "{r.get("@timestamp")}" | SORT @timestamp | KEEP _id, _index, @timestamp, '
                         "process.name, process.pid, file.path, file.hash.sha256, file.code_signature.signed | LIMIT 200")
        for x in rows:
            path = str(x.get("file.path") or "")
            if tc.user_writable(path) or x.get("file.code_signature.signed") is False:
                digest = x.get("file.hash.sha256")
                self.case.add(Finding(str(x.get("@timestamp")), host,
                                      f"{x.get('process.name')} (pid {x.get('process.pid')}) then loaded {path}"
                                      + (" (unsigned)" if x.get("file.code_signature.signed") is False else "")
                                      + (f", SHA-256 {digest}" if digest else "") + " (Sysmon 7): the injected DLL.",
                                      "T1055.001", ref_of(x), 4))
                break

    def registry(self, r: dict[str, Any]) -> None:
        act = tc.registry_act(r.get("registry.path"))
        if act is None:
            return
        data = " ".join(tc.listed(r.get("registry.data.strings")))[:160]
        self.case.add(Finding(str(r.get("@timestamp")), str(r.get("host.name")),
                              f"{r.get('process.name')} wrote {r.get('registry.path')}" + (f" = {data}" if data else "")
                              + f": {act.what}.", act.technique, ref_of(r), act.weight))

    def file_event(self, r: dict[str, Any]) -> None:
        path = str(r.get("file.path") or "")
        name = tc.base(path)
        if not path or name.startswith("__psscriptpolicytest"):
            return
        if str(r.get("event.code")) == "15" and "zone.identifier" in path.lower():
            contents = " ".join(str(r.get("winlog.event_data.Contents") or "").split())[:160]
            self.case.add(Finding(str(r.get("@timestamp")), str(r.get("host.name")),
                                  f"{path} was written by {r.get('process.name')}: the file came from the internet "
                                  f"(Mark of the Web){': ' + contents if contents else ''}.", "",
                                  ref_of(r), 2))
            return
        interesting = (name.endswith((".dmp", ".exe", ".dll", ".ps1", ".bat", ".vbs", ".hta", ".zip", ".7z"))
                       or name in {"sam", "system", "security", "ntds.dit"})
        if not interesting:
            return
        what = ("a memory dump" if name.endswith(".dmp") else "a copy of the AD database" if name == "ntds.dit"
                else "a copy of a credential hive" if name in {"sam", "system", "security"} else "a file")
        technique = {"a memory dump": "T1003.001", "a copy of the AD database": "T1003.003",
                     "a copy of a credential hive": "T1003.002"}.get(what, "")
        if technique in ("T1003.002", "T1003.003") and path not in self.case.copies:
            self.case.copies.append(path)
        self.case.add(Finding(str(r.get("@timestamp")), str(r.get("host.name")),
                              f"{r.get('process.name')} created {path} ({what}).", technique,
                              ref_of(r), 4 if what != "a file" else 2))

    def shadow_copies(self) -> None:
        """Where a copied credential store was read from: a volume shadow copy (4663 reads of
        \\Device\\HarddiskVolumeShadowCopyN by the activity's program, VSS 8222 'shadow copy created').
        The VSS service and lsass reading the same snapshot serve the copy; they are not more attackers."""
        if not self.case.copied or self.seed is None or not self.tel.has(SECURITY):
            return
        host = self.seed.host
        rows = self.esql(f'FROM {SECURITY} METADATA _id, _index | WHERE event.code == "4663" AND host.name == {q(host)} AND '
                         f'winlog.event_data.ObjectName LIKE "*HarddiskVolumeShadowCopy*" AND {self.in_window(-300, 3600)} '
                         "| SORT @timestamp | KEEP _id, _index, @timestamp, event.code, process.name, "
                         "winlog.event_data.ObjectName | LIMIT 100")
        ours = {self.case.procs[e].lname for e in self.case.activity if e in self.case.procs}
        helpers: dict[str, int] = {}
        read = False  # the activity's first read from the snapshot is the evidence; the rest repeat it
        for r in rows:
            name = str(r.get("process.name") or "")
            if name.lower() in ours:
                if not read:
                    read = True
                    self.case.add(Finding(str(r.get("@timestamp")), host,
                                          f"{name} read {r.get('winlog.event_data.ObjectName')} (4663): the store was "
                                          "copied out of a volume shadow copy, past the lock on the live file.",
                                          "T1006", ref_of(r), 3))
            else:
                helpers[name] = helpers.get(name, 0) + 1
        if helpers:
            self.case.told_apart.append(
                ", ".join(f"{n} ({k} 4663)" for n, k in sorted(helpers.items())) + " read the same shadow copy: the "
                "volume shadow copy service and the directory service serving the copy, not more of the attacker.")
        streams = self.system_streams()
        vss = self.esql(f'FROM {streams} METADATA _id, _index | WHERE event.code == "8222" AND host.name == {q(host)} AND '
                        f"{self.in_window(-300, 3600)} | SORT @timestamp | KEEP _id, _index, @timestamp, event.code, message "
                        "| LIMIT 5") if streams else []
        for r in vss[:1]:
            msg = " ".join(str(r.get("message") or "").split())
            self.case.add(Finding(str(r.get("@timestamp")), host, f"VSS 8222 on {host}: a shadow copy was created "
                                  f"({msg[:140]}).", "", ref_of(r), 2))

    def firewall_store(self, host: str) -> None:
        """A firewall change by the activity is written by the firewall service (svchost), not by netsh:
        the rules it stored (FirewallRules) in the moments after, and whether they are still there."""
        acts = [a for e in self.case.activity if e in self.case.procs for a in self.case.procs[e].acts]
        if not any(a.tag == "firewall" for a in acts):
            return
        rows = self.esql(f'FROM {SYSMON} METADATA _id, _index | WHERE event.code IN ("12", "13", "14") AND host.name == '
                         f'{q(host)} AND registry.path LIKE "*FirewallRules*" AND {self.in_window(-10, 600)} | SORT @timestamp '
                         "| KEEP _id, _index, @timestamp, event.code, event.action, process.name, registry.path, "
                         "registry.data.strings | LIMIT 20")
        for r in rows[:6]:
            data = " ".join(tc.listed(r.get("registry.data.strings")))[:180]
            self.case.add(Finding(str(r.get("@timestamp")), host,
                                  f"{r.get('process.name')} ({r.get('event.action') or 'event ' + str(r.get('event.code'))}) "
                                  f"{r.get('registry.path')}" + (f" = {data}" if data else "")
                                  + ": the rule as the firewall stored it (FirewallRules).", "T1562.004", ref_of(r), 3))

    def script_blocks(self, host: str) -> None:
        """PowerShell the activity ran (4104 script blocks in its time): the functions a tool defines
        name it, and its calls show what it did. An implant can host PowerShell in its own process (no
        powershell.exe starts), so a memory read by the implant is a reason to look too."""
        shells = [self.case.procs[e] for e in self.case.activity
                  if e in self.case.procs and self.case.procs[e].lname in {"powershell.exe", "pwsh.exe"}]
        dumps = [f.time for f in self.case.findings if f.technique == "T1003.001" and f.time]
        if not (shells or dumps) or not self.tel.has(POWERSHELL):
            return
        starts = [p.start for p in shells if p.start] + [clock.shift(t, -300) for t in dumps]
        lo = min(starts) if starts else self.window[0]
        rows = self.esql(f'FROM {POWERSHELL} METADATA _id, _index | WHERE event.code == "4104" AND host.name == {q(host)} AND '
                         f'@timestamp >= "{lo}" AND @timestamp <= "{clock.shift(self.window[1], 3600)}" | SORT @timestamp '
                         "| KEEP _id, _index, @timestamp, powershell.file.script_block_text | LIMIT 300")
        for r in rows:
            text = str(r.get("powershell.file.script_block_text") or "")
            funcs = tc.script_functions(text)
            marks = tc.script_tradecraft(text)
            if not marks:
                continue
            named = f" defining {', '.join(funcs[:3])}" if funcs else ""
            dump = any(m.lower() in {"minidumpwritedump", "sekurlsa", "invoke-mimikatz"} for m in marks)
            self.case.add(Finding(str(r.get("@timestamp")), host,
                                  f"a PowerShell script block{named} uses {', '.join(marks[:4])}"
                                  + (": an LSASS memory dump from PowerShell." if dump else "."),
                                  "T1003.001" if dump else "T1059.001", ref_of(r), 5 if dump else 3))
            if dump:
                self.case.dumped.append(funcs[0] if funcs else "PowerShell")

    # -- 6. outside addresses -----------------------------------------------------------------------------
    def owner_of(self, ip: str, since: str = "") -> str:
        """The estate host that holds an address: the one other host whose Sysmon sees it as its own
        side of connections."""
        mine = self.seed.host if self.seed else ""
        rows = self.esql(f'FROM {SYSMON} | WHERE event.code == "3" AND source.ip == {q(ip)} AND host.name != {q(mine)} '
                         "| STATS n = COUNT(*) BY host.name | SORT n DESC | LIMIT 5")
        if not rows and mine and since:
            # No Sysmon of its own: the one host that logged our network logons at that time.
            # No Sysmon of its own: the host that logged our network logons then, and our use of its
            # administrative shares (5145) when the domain controller logged logons too.
            rows = self.esql(f'FROM {SECURITY} | WHERE event.code IN ("4624", "5145") AND source.ip == '
                             f'{q(self.case.ip_of(mine))} AND host.name != {q(mine)} AND @timestamp >= '
                             f'"{clock.shift(since, -60)}" AND @timestamp <= "{clock.shift(since, 600)}" '
                             "| STATS n = COUNT(*) BY host.name, event.code, winlog.event_data.RelativeTargetName | LIMIT 50")
            # Remote execution goes through the service or task scheduler pipes; samr / lsarpc are lookups.
            shares = [r for r in rows if str(r.get("event.code")) == "5145" and
                      str(r.get("winlog.event_data.RelativeTargetName") or "").lower() in tc.EXEC_PIPES]
            shares = list({str(r.get("host.name")): r for r in shares}.values())
            logons = {str(r.get("host.name")) for r in rows}
            rows = shares if len(shares) == 1 else [r for r in rows if len(logons) == 1][:1]
        if len(rows) == 1 or (rows and int(rows[0].get("n") or 0) >= 2):
            host = str(rows[0].get("host.name"))
            self.case.host_ips.setdefault(host, set()).add(ip)
            return host
        return ""

    def outside(self) -> None:
        nets = {subnet24(i) for ips in self.case.host_ips.values() for i in ips}
        for ip, peer in sorted(self.case.peers.items()):
            owner = self.case.host_of(ip) or (self.owner_of(ip, peer.first) if subnet24(ip) in nets else "")
            if owner:
                peer.internal_host = owner
                continue
            if ip in self.case.core_ips:
                peer.role = "core"
                continue
            if self.shared_platform(peer):
                continue
            rows = self.esql(f"FROM {ZCONN} | WHERE destination.ip == {q(ip)} OR source.ip == {q(ip)} "
                             "| STATS n = COUNT(*), sent = SUM(source.bytes), received = SUM(destination.bytes), "
                             "first = MIN(@timestamp), last = MAX(@timestamp) BY source.ip, destination.ip, destination.port "
                             "| SORT n DESC | LIMIT 20")
            for r in rows:
                peer.zeek.append(f"zeek conn: {r.get('source.ip')} -> {r.get('destination.ip')}:{r.get('destination.port')}, "
                                 f"{r.get('n')} connection(s) from {clock.hm(str(r.get('first')))} to "
                                 f"{clock.hm(str(r.get('last')))} UTC, {r.get('sent') or 0} bytes sent, "
                                 f"{r.get('received') or 0} received")
            rows = self.esql(f"FROM {ZHTTP} METADATA _id, _index | WHERE destination.ip == {q(ip)} | SORT @timestamp "
                             "| KEEP _id, _index, @timestamp, source.ip, destination.port, http.request.method, url.original, "
                             "http.response.mime_type, http.response.status_code, http.response.body.bytes | LIMIT 20")
            for r in rows:
                mime = str(r.get("http.response.mime_type") or "")
                if "dosexec" in mime or str(r.get("url.original") or "").lower().endswith((".exe", ".dll", ".ps1")):
                    peer.downloads.append(f"{r.get('source.ip')} downloaded a Windows executable ({mime}, "
                                          f"{r.get('http.response.body.bytes')} bytes) over cleartext HTTP from "
                                          f"{ip}:{r.get('destination.port')} at {clock.hm(str(r.get('@timestamp')))} UTC")
            peer.role = "attacker"

    def shared_platform(self, peer: Peer) -> bool:
        """Whether the address is a public platform's (code hosting, CDN, cloud storage), by the names the
        host resolved to it (Sysmon 22): the payload was fetched from there, and its addresses serve
        everyone, so the address is not blocked (the URL is, at the proxy)."""
        rows = self.esql(f'FROM {SYSMON} | WHERE event.code == "22" AND dns.resolved_ip == {q(peer.ip)} '
                         "| STATS n = COUNT(*) BY dns.question.name | SORT n DESC | LIMIT 5")
        peer.names = [str(r.get("dns.question.name")) for r in rows if r.get("dns.question.name")]
        shared = [n for n in peer.names if tc.shared_platform(n)]
        if not shared:
            return False
        peer.role = "hosting"
        host = next((h for h, ips in self.case.host_ips.items() if ips), "")
        self.case.add(Finding(peer.first, host, f"{', '.join(sorted(peer.processes))} fetched from {peer.ip} ({shared[0]}) "
                                                "over TLS: a public platform's address, where the payload was "
                                                "downloaded from (ingress tool transfer, T1105).", "T1105", None, 2))
        self.case.recommended.append(f"Block the payload's location on {shared[0]} at the web proxy; {peer.ip} is not "
                                     "blocked: a shared platform address serves many other sites.")
        return True

    # -- 7. lateral movement ------------------------------------------------------------------------------
    def lateral_out(self) -> None:
        """The activity connected to another host's RPC/SMB/WinRM: what happened there (logons from us,
        admin pipes, services installed)."""
        for ip, peer in sorted(self.case.peers.items()):
            target = self.case.host_of(ip)
            # A domain controller that answered a replication request was asked, not moved to.
            if not target or target in self.case.served or not peer.ports & set(tc.LATERAL_PORTS):
                continue
            src = self.case.ip_of(self.seed.host) if self.seed else ""
            self.remote_logons(target, src, peer.first)

    def remote_logons(self, target: str, src: str, since: str, how: str = "T1021.002") -> bool:
        if not src:
            return False
        rows = self.esql(f"FROM {SECURITY} METADATA _id, _index | WHERE host.name == {q(target)} AND source.ip == {q(src)} AND "
                         f'event.code IN ("4624", "5145", "5140", "4648") AND @timestamp >= "{clock.shift(since, -120)}" AND '
                         f'@timestamp <= "{clock.shift(since, 3600)}" | SORT @timestamp | KEEP _id, _index, @timestamp, '
                         "event.code, user.name, source.ip, winlog.event_data.LogonType, winlog.event_data.RelativeTargetName, "
                         "winlog.event_data.ShareName, winlog.event_data.AuthenticationPackageName | LIMIT 50")
        users = sorted({tc.account(r.get("user.name")) for r in rows if r.get("user.name")} - {""})
        pipes = sorted({str(r.get("winlog.event_data.RelativeTargetName")) for r in rows
                        if str(r.get("event.code")) == "5145" and str(r.get("winlog.event_data.RelativeTargetName")).lower() in tc.ADMIN_PIPES})
        logon = next((r for r in rows if str(r.get("event.code")) == "4624"), None)
        if logon is None:
            # Kerberos network logons (WinRM over HTTP among them) may record no source address: the
            # account's network logons at that moment.
            rows = self.esql(f"FROM {SECURITY} METADATA _id, _index | WHERE host.name == {q(target)} AND event.code == "
                             f'"4624" AND winlog.event_data.LogonType == "3" AND source.ip IS NULL AND @timestamp >= '
                             f'"{clock.shift(since, -60)}" AND @timestamp <= "{clock.shift(since, 60)}" | SORT @timestamp '
                             "| KEEP _id, _index, @timestamp, event.code, user.name, source.ip, winlog.event_data.LogonType, "
                             "winlog.event_data.AuthenticationPackageName, winlog.logon.id | LIMIT 20")
            rows = [r for r in rows if not tc.system_account(r.get("user.name"))]
            users = sorted({tc.account(r.get("user.name")) for r in rows} - {""})
            logon = rows[0] if rows else None
            if logon is None:
                return False
        for u in users:
            if not tc.system_account(u) and u not in self.case.lateral_accounts:
                self.case.lateral_accounts.append(u)
        self.case.add(Finding(str(logon.get("@timestamp")), target,
                              f"{target} logged a network logon (4624 type {logon.get('winlog.event_data.LogonType')}, "
                              f"{logon.get('winlog.event_data.AuthenticationPackageName')}) of {', '.join(users)} from {src}"
                              + (f", then access to the {', '.join(pipes)} named pipe over IPC$ (5145)" if pipes else "") + ".",
                              how, ref_of(logon), 4))
        svc = self.esql(f"FROM {SECURITY}{', ' + self.system_streams() if self.system_streams() else ''} METADATA _id, _index "
                        f'| WHERE host.name == {q(target)} AND event.code IN ("4697", "7045") AND '
                        f'@timestamp >= "{clock.shift(since, -120)}" AND @timestamp <= "{clock.shift(since, 3600)}" '
                        "| KEEP _id, _index, @timestamp, event.code, service.name, winlog.event_data.ServiceFileName, "
                        "winlog.event_data.ImagePath, user.name, winlog.event_data.ServiceAccount | LIMIT 10")
        for r in svc:
            binary = r.get("winlog.event_data.ServiceFileName") or r.get("winlog.event_data.ImagePath")
            self.case.add(Finding(str(r.get("@timestamp")), target,
                                  f"{target}: service {r.get('service.name')} installed (event {r.get('event.code')}) with "
                                  f"binary {binary}, by {tc.account(r.get('user.name'))} over that logon: remote service "
                                  "creation for lateral movement.", "T1543.003", ref_of(r), 5))
            self.case.techniques.setdefault("T1569.002", "service execution")
        if target not in self.case.hosts:
            self.case.hosts.append(target)
        return True

    def inbound_source(self, target: str, t: str) -> str:
        """The address that connected to the target's remote administration ports just before `t` (its
        Sysmon 3, inbound): Kerberos network logons over WinRM record no source address."""
        ports = ", ".join(str(p) for p in sorted(tc.LATERAL_PORTS))
        rows = self.esql(f'FROM {SYSMON} | WHERE event.code == "3" AND host.name == {q(target)} AND destination.port IN '
                         f'({ports}) AND @timestamp >= "{clock.shift(t, -300)}" AND @timestamp <= "{clock.shift(t, 5)}" '
                         "| STATS n = COUNT(*) BY source.ip, destination.ip | SORT n DESC | LIMIT 20")
        for r in rows:
            src, dst = str(r.get("source.ip") or ""), str(r.get("destination.ip") or "")
            if is_ip(src) and tc.host_address(src) and src != dst and src not in self.case.host_ips.get(target, set()):
                if is_ip(dst):
                    self.case.host_ips.setdefault(target, set()).add(dst)
                return src
        return ""

    def lateral_in(self) -> None:
        """A service installed on the pivot host over a network logon: back to the source host and the
        process there that connected to us."""
        a = self.service_alert
        session: WinProc | None = None  # a remote PowerShell session's host process
        if a is not None:
            target = str(a.get("host.name") or self.pivot_host)
            t = str(a.get("kibana.alert.original_time") or a.get("@timestamp"))
        else:
            # Or a root started by WMI or the service manager (remote execution lands there) that did harm.
            roots = [self.case.procs[e] for e in self.case.roots if e in self.case.procs]
            remote = [p for p in roots if (tc.base(p.parent_name) in tc.REMOTE_EXEC_PARENTS and p.weight >= 3)
                      or p.lname in tc.REMOTE_SESSION_HOSTS]
            if not remote:
                return
            target, t = remote[0].host, remote[0].start
            session = remote[0] if remote[0].lname in tc.REMOTE_SESSION_HOSTS else None
            if session is not None:
                session_commands(self, session)
        if not target or not t:
            return
        self.follow_source(target, t, "T1021.006" if session is not None else "T1021.002")

    def follow_source(self, target: str, t: str, how: str) -> bool:
        """Back from remote execution on `target` at `t` to where it came from: the network logon's source
        address (or the inbound connection's), the logon itself, and the process on the source host that
        connected to the target; that process becomes the seed and its tree is traced."""
        rows = self.esql(f'FROM {SECURITY} | WHERE host.name == {q(target)} AND event.code == "4624" AND '
                         f'winlog.event_data.LogonType == "3" AND @timestamp >= "{clock.shift(t, -300)}" AND '
                         f'@timestamp <= "{clock.shift(t, 5)}" | STATS n = COUNT(*) BY source.ip, user.name | LIMIT 20')
        sources = [r for r in rows if is_ip(str(r.get("source.ip"))) and not tc.system_account(r.get("user.name"))]
        src = str(sources[0].get("source.ip")) if sources else self.inbound_source(target, t)
        if not src:
            return False
        self.remote_logons(target, src, t, how)
        target_ips = self.case.host_ips.get(target, set())
        to_target = (f"destination.ip IN ({q_in(target_ips)})" if target_ips else
                     f"destination.port IN ({', '.join(str(p) for p in sorted(tc.LATERAL_PORTS))})")
        rows = self.esql(f'FROM {SYSMON} METADATA _id, _index | WHERE event.code == "3" AND source.ip == {q(src)} AND '
                         f'{to_target} AND @timestamp >= "{clock.shift(t, -900)}" AND @timestamp <= "{clock.shift(t, 60)}" '
                         f"| SORT @timestamp | {keep(PROC_FIELDS + ('source.ip', 'destination.ip', 'destination.port'))} | LIMIT 20")
        if not rows:
            return False
        # The service hosts (RPC's endpoint mapper in svchost) carry every remote call: the process
        # behind it is the one that is not Windows' own, when there is one.
        r = next((x for x in rows if tc.base(x.get("process.name")) not in tc.SESSION_BOUNDARIES), rows[0])
        if not target_ips and is_ip(str(r.get("destination.ip"))):
            self.case.host_ips.setdefault(target, set()).add(str(r.get("destination.ip")))
        eid = str(r.get("process.entity_id"))
        p = self.procs_by_id({eid}).get(eid) or WinProc.from_row(r)
        self.case.procs.setdefault(p.eid, p)
        self.case.add(Finding(str(r.get("@timestamp")), p.host,
                              f"the source {src} is {p.host}: {p.name} ({p.exe}) there connected to {target} "
                              f"{r.get('destination.ip')}:{r.get('destination.port')} (Sysmon 3).", how,
                              ref_of(r), 4))
        explicit_credentials(self, p, t)
        self.seed = p
        self.window = (t, t)
        self.trace()
        return True

    # -- 8. the host's own work -----------------------------------------------------------------------------
    def machine_logons(self, host: str) -> None:
        """Computer accounts (NAME$) logging on over the network to the hosts involved: servers doing their
        rounds (an event collector, a management server), not the attack, unless they come from a host
        the attacker holds."""
        held = {ip for h in self.case.hosts for ip in self.case.host_ips.get(h, set())}
        # and the servers the attacker's hosts logged on to (the domain controller's lookups)
        served = self.esql(f'FROM {SECURITY} | WHERE event.code == "4624" AND source.ip IN ({q_in(held or {"0.0.0.0"})}) '
                           f"AND {self.in_window(-600, 900)} | STATS n = COUNT(*) BY host.name | LIMIT 10")
        hosts = list(dict.fromkeys([host, *self.case.hosts, *(str(r.get("host.name")) for r in served)]))
        rows = self.esql(f'FROM {SECURITY} | WHERE event.code == "4624" AND host.name IN ({q_in(hosts)}) AND '
                         f'user.name LIKE "*$" AND {self.in_window(-600, 900)} | STATS n = COUNT(*) BY user.name, '
                         "source.ip, host.name | SORT n DESC | LIMIT 20")
        for r in rows:
            user, src, target = str(r.get("user.name")), str(r.get("source.ip") or ""), str(r.get("host.name"))
            own = user.rstrip("$").lower() == target.split(".")[0].lower()
            if own or not is_ip(src) or src in held or src in ("127.0.0.1", "::1"):
                continue
            self.case.told_apart.append(f"{user} from {src} logged on to {target} {r.get('n')} times: a computer "
                                        "account doing its rounds (event collection or management), not the attack.")

    def housekeeping(self) -> None:
        host = self.seed.host if self.seed else self.pivot_host
        if not host or not self.window[0]:
            return
        streams = self.system_streams()
        if streams:
            rows = self.esql(f"FROM {streams}, {SECURITY} METADATA _id, _index | WHERE host.name == {q(host)} AND event.code IN "
                             f'({q_in(tc.LOG_CLEARED + tc.SERVICE_ERRORS)}) AND {self.in_window(-7200, 3600)} '
                             "| SORT @timestamp | KEEP _id, _index, @timestamp, event.code, message, user.name, "
                             "winlog.event_data.SubjectUserName, winlog.event_data.param1 | LIMIT 30")
            first = self.window[0]
            cleared = [r for r in rows if str(r.get("event.code")) in tc.LOG_CLEARED and str(r.get("@timestamp")) <= first]
            if cleared:
                msgs = sorted({" ".join(str(r.get("message") or "").split())[:100] for r in cleared}, key=lambda m: ("/" in m, len(m)))
                codes = ", ".join(sorted({str(r.get("event.code")) for r in cleared}))
                self.case.told_apart.append(
                    f"event {codes} at {clock.hm(str(cleared[0].get('@timestamp')))} UTC: {len(cleared)} event log(s) "
                    f"cleared (\"{msgs[0] or 'log cleared'}\") before the activity began and by none of its processes: "
                    "a reset before the recording, not the attacker's log tampering.")
            for r in rows:
                code = str(r.get("event.code"))
                msg = " ".join(str(r.get("message") or "").split())[:120]
                when = str(r.get("@timestamp"))
                if code in tc.SERVICE_ERRORS:
                    self.case.told_apart.append(
                        f"event {code} at {clock.hm(when)} UTC ({msg}): the service control manager reporting a service "
                        "that did not answer it, a consequence of the change above, not a further attack.")
        rows = self.esql(f"FROM {SECURITY} | WHERE host.name == {q(host)} AND event.code IN (\"5447\", \"4690\", \"5156\", \"5158\") "
                         f"AND {self.in_window(-300, 600)} | STATS n = COUNT(*) BY event.code | LIMIT 10")
        codes = {str(r.get("event.code")): int(r.get("n") or 0) for r in rows}
        if codes:
            self.case.told_apart.append(
                "Windows Filtering Platform and handle events (" + ", ".join(f"{c}: {n}" for c, n in sorted(codes.items()))
                + ") follow every connection and rule change on the host: the platform doing its job, not more activity.")
        self.machine_logons(host)
        rows = self.esql(f'FROM {SYSMON} | WHERE host.name == {q(host)} AND process.name == "MsMpEng.exe" AND '
                         f"{self.in_window(-60, 900)} | STATS n = COUNT(*) BY process.name, event.code | LIMIT 10")
        if rows:
            n = sum(int(r.get("n") or 0) for r in rows)
            self.case.told_apart.append(f"Microsoft Defender (MsMpEng.exe) touched files and processes {n} times in the "
                                        "window: the defender scanning what was dropped, not the attacker.")
        rows = self.esql(f'FROM {SYSMON} | WHERE host.name == {q(host)} AND event.code == "22" AND process.name == "msedge.exe" '
                         f'AND {self.in_window(-600, 600)} AND NOT dns.question.name LIKE "*.*" | STATS n = COUNT(*) '
                         "BY process.name | LIMIT 5")
        if rows and int(rows[0].get("n") or 0) >= 3:
            self.case.told_apart.append(f"msedge.exe looked up {rows[0].get('n')} random single-label names: the "
                                        "browser's check for DNS hijacking, not a tunnel.")


def _named(exe: str) -> str:
    """A program as the report names it: by file name when Windows ships it, by its path otherwise."""
    name = exe.replace("/", "\\").rsplit("\\", 1)[-1]
    return name if tc.windows_binary(exe) or not exe else f"{name} ({exe})"


def _ref(r: dict[str, Any]) -> tuple[str, str] | None:
    return ref_of(r) if r.get("_id") else None
