"""The investigation when only the network sensor saw it: zeek's conn, dns, ssl, http, files, pe, notice
and kerberos logs, no host telemetry.

- The estate is the /16 around the alerted client; addresses outside it are the outside.
- Hosts are named from the wire: a NetBIOS name registration (a single-label query to a broadcast
  address) names its sender, a DNS answer names its address.
- Outside servers that matter: the alert's, those with self-signed certificates (subject = issuer, or
  zeek's SSL::Invalid_Server_Cert notice), those that took uploads (HTTP PUT, WebDAV) or served
  executables. For each: who talked to it, how often and how regularly (a beacon), how much left.
- Internal hosts reaching each other's WinRM, SMB, RPC or RDP (not the domain controller's services)
  is lateral movement; the servers of DNS, Kerberos and LDAP and the operating system vendor's update
  and telemetry hosts are the estate's own traffic.
"""

from __future__ import annotations

import ipaddress
import re
import statistics
from typing import Any

from pytest_soclab.agents.analyst import clock
from pytest_soclab.agents.analyst.store import q, q_in
from pytest_soclab.agents.analyst.tradecraft import is_ip
from pytest_soclab.agents.analyst.windows import tradecraft as tc
from pytest_soclab.agents.analyst.windows.analyst import WindowsAnalyst
from pytest_soclab.agents.analyst.windows.evidence import Finding, Peer, ref_of
from pytest_soclab.agents.analyst.windows.report import write
from pytest_soclab.agents.analyst.windows.streams import ZCONN, ZDNS, ZHTTP, ZNOTICE, ZPE, ZSSL

# The vendor's update, telemetry and search hosts every Windows machine talks to.
VENDOR_DOMAINS = ("windowsupdate.com", "microsoft.com", "msn.com", "bing.com", "live.com", "msftncsi.com",
                  "office.com", "office365.com", "windows.com", "azureedge.net", "akamaitech.net", "digicert.com")
BEACON_MIN = 6  # connections before a regular interval counts as a beacon
_CN = re.compile(r"CN=([^,/]+)")


def sensor_only(streams: set[str]) -> bool:
    """zeek data and nothing from the hosts themselves."""
    zeek = any(s.startswith("logs-zeek.") for s in streams)
    host = any(s.startswith(("logs-endpoint.", "logs-windows.", "logs-system.", "logs-auditd")) for s in streams)
    return zeek and not host


class SensorAnalyst(WindowsAnalyst):
    net: ipaddress.IPv4Network | ipaddress.IPv6Network | None = None

    def run(self) -> dict[str, Any]:
        for step in (self.anchor, self.estate, self.names, self.servers, self.lateral_wire, self.estate_traffic):
            self.step_safely(step)
        self.decide_wire()
        self.step_safely(self.respond)
        return write(self)

    # -- the estate -----------------------------------------------------------------------------------------
    def estate(self) -> None:
        inside = self.net_pair[0] if self.net_pair else ""
        self.net = ipaddress.ip_network(f"{inside}/16", strict=False) if is_ip(inside) else None
        self.case.core_ips |= {ip for ip in self.core_servers(ZCONN, 2) if self.inside(ip)}

    def inside(self, ip: str) -> bool:
        try:
            return self.net is not None and ipaddress.ip_address(ip) in self.net
        except ValueError:
            return False

    def names(self) -> None:
        """NetBIOS name registrations (single-label names sent to a broadcast address) name their
        senders; DNS answers name their addresses."""
        # LIKE takes strings: the typed address is compared as text.
        rows = self.esql(f"FROM {ZDNS} | EVAL dst = TO_STRING(destination.ip) | WHERE dst LIKE \"*.255\" AND NOT "
                         'dns.question.name LIKE "*.*" | STATS n = COUNT(*) BY source.ip, dns.question.name | LIMIT 100')
        for r in rows:
            ip, name = str(r.get("source.ip") or ""), str(r.get("dns.question.name") or "")
            if self.inside(ip) and name and not name.startswith(("_", "WPAD", "wpad")):
                self.case.host_ips.setdefault(name.upper(), set()).add(ip)
        rows = self.esql(f"FROM {ZDNS} | WHERE dns.answers.data IS NOT NULL | STATS n = COUNT(*) BY dns.question.name, "
                         "dns.answers.data | LIMIT 300")
        for r in rows:
            name = str(r.get("dns.question.name") or "")
            for ip in tc.listed(r.get("dns.answers.data")):
                if is_ip(ip) and self.inside(ip) and not self.case.host_of(ip):
                    self.case.host_ips.setdefault(name, set()).add(ip)

    def label(self, ip: str) -> str:
        host = self.case.host_of(ip)
        return f"{host} ({ip})" if host else ip

    # -- outside servers ----------------------------------------------------------------------------------
    def servers(self) -> None:
        suspects: dict[str, set[str]] = {}
        if self.net_pair:
            src, dst, _ = self.net_pair
            outside = dst if not self.inside(dst) else src
            suspects.setdefault(outside, set()).add(f"the alert ({self.rule})")
        for r in self.esql(f"FROM {ZNOTICE} METADATA _id, _index | SORT @timestamp | KEEP _id, _index, @timestamp, source.ip, "
                           "destination.ip, destination.port, rule.name, zeek.notice.msg, zeek.notice.sub | LIMIT 100"):
            dst = str(r.get("destination.ip") or "")
            if is_ip(dst) and not self.inside(dst):
                note = f"{r.get('rule.name')}: {r.get('zeek.notice.msg')}"
                if note not in suspects.setdefault(dst, set()):
                    suspects[dst].add(note)
                    self.case.add(Finding(str(r.get("@timestamp")), self.case.host_of(str(r.get("source.ip"))),
                                          f"zeek notice {r.get('rule.name')} for {self.label(str(r.get('source.ip')))} -> "
                                          f"{dst}:{r.get('destination.port')}: {r.get('zeek.notice.msg')} "
                                          f"({_cn(r.get('zeek.notice.sub'))})", "T1573.002", ref_of(r), 3))
        for r in self.esql(f'FROM {ZHTTP} | WHERE http.request.method IN ("PUT", "POST", "PROPPATCH", "MKCOL") OR '
                           'http.response.mime_type == "application/x-dosexec" | STATS n = COUNT(*) BY destination.ip, '
                           "http.request.method | LIMIT 50"):
            dst = str(r.get("destination.ip") or "")
            if is_ip(dst) and not self.inside(dst):
                suspects.setdefault(dst, set()).add(f"HTTP {r.get('http.request.method')}")
        for ip in sorted(suspects):
            self.server(ip, sorted(suspects[ip]))

    def server(self, ip: str, why: list[str]) -> None:
        peer = self.case.peers.setdefault(ip, Peer(ip, role="attacker"))
        rows = self.esql(f"FROM {ZCONN} | WHERE destination.ip == {q(ip)} | STATS n = COUNT(*), sent = SUM(source.bytes), "
                         "received = SUM(destination.bytes), first = MIN(@timestamp), last = MAX(@timestamp) BY source.ip, "
                         "destination.port | SORT n DESC | LIMIT 20")
        for r in rows:
            src, port, n = str(r.get("source.ip")), int(r.get("destination.port") or 0), int(r.get("n") or 0)
            peer.ports.add(port)
            peer.processes.add(self.label(src))
            peer.first = min(filter(None, [peer.first, str(r.get("first"))]))
            host = self.case.host_of(src)
            if host and host not in self.case.hosts:
                self.case.hosts.append(host)
            beat = self.beacon(src, ip, port) if n >= BEACON_MIN else ""
            peer.zeek.append(f"zeek conn: {self.label(src)} -> {ip}:{port}, {n} connection(s) from "
                             f"{clock.hm(str(r.get('first')))} to {clock.hm(str(r.get('last')))} UTC, "
                             f"{r.get('sent') or 0} bytes sent, {r.get('received') or 0} received{beat}")
            if beat:
                self.case.techniques.setdefault("T1071.001", "a regular beacon")
        for r in self.esql(f"FROM {ZSSL} | WHERE destination.ip == {q(ip)} | STATS n = COUNT(*) BY tls.server.subject, "
                           "tls.server.issuer, destination.port | LIMIT 10"):
            subject, issuer = str(r.get("tls.server.subject") or ""), str(r.get("tls.server.issuer") or "")
            if subject and subject == issuer:
                peer.zeek.append(f"zeek ssl: {r.get('n')} TLS session(s) on port {r.get('destination.port')} with a self "
                                 f"signed certificate for {_cn(subject)} (subject = issuer)")
                self.case.techniques.setdefault("T1573.002", "TLS with a self-signed certificate")
        rows = self.esql(f"FROM {ZHTTP} METADATA _id, _index | WHERE destination.ip == {q(ip)} AND http.request.method IN "
                         '("PUT", "GET", "POST") | SORT @timestamp | KEEP _id, _index, @timestamp, source.ip, destination.port, '
                         "http.request.method, url.original, http.response.mime_type, user_agent.original | LIMIT 60")
        seen: set[tuple[str, str]] = set()
        for r in rows:
            method, url = str(r.get("http.request.method")), str(r.get("url.original") or "")
            if (method, url) in seen:
                continue
            seen.add((method, url))
            agent = str(r.get("user_agent.original") or "")
            src = self.label(str(r.get("source.ip")))
            if method in ("PUT", "POST"):
                dav = " over WebDAV" if "webdav" in (agent + url).lower() else ""
                self.case.add(Finding(str(r.get("@timestamp")), self.case.host_of(str(r.get("source.ip"))),
                                      f"{src} uploaded {url} to {ip}:{r.get('destination.port')} (HTTP {method}{dav}, "
                                      f"{agent}): data leaving the estate (exfiltration).", "T1048.003", ref_of(r), 5))
            elif "dosexec" in str(r.get("http.response.mime_type") or "") or url.lower().endswith((".exe", ".dll", ".ps1")):
                self.case.add(Finding(str(r.get("@timestamp")), self.case.host_of(str(r.get("source.ip"))),
                                      f"{src} downloaded {url} from {ip}:{r.get('destination.port')} "
                                      f"({r.get('http.response.mime_type')}, {agent}): a tool brought in.", "T1105", ref_of(r), 4))
        if any(f.technique == "T1105" for f in self.case.findings):
            for r in self.esql(f"FROM {ZPE} | KEEP @timestamp, zeek.pe.section_names, zeek.pe.machine, zeek.pe.is_exe | LIMIT 10"):
                sections = tc.listed(r.get("zeek.pe.section_names"))
                if any(s.upper().startswith("UPX") for s in sections):
                    peer.downloads.append(f"zeek pe: the executable is packed with UPX (sections {', '.join(sections)})")
        self.case.notes.append(f"{ip}: {'; '.join(why)}")

    def beacon(self, src: str, dst: str, port: int) -> str:
        rows = self.esql(f"FROM {ZCONN} | WHERE source.ip == {q(src)} AND destination.ip == {q(dst)} AND "
                         f"destination.port == {port} | SORT @timestamp | KEEP @timestamp | LIMIT 500")
        times = [clock.parse(str(r.get("@timestamp"))) for r in rows]
        gaps = [(b - a).total_seconds() for a, b in zip(times, times[1:]) if a and b]
        if len(gaps) < BEACON_MIN - 1:
            return ""
        med = statistics.median(gaps)
        regular = sum(1 for g in gaps if abs(g - med) <= max(2.0, 0.25 * med)) / len(gaps)
        return f", a beacon every {med:.0f} s ({regular:.0%} of the gaps)" if med >= 1 and regular >= 0.6 else ""

    # -- inside ---------------------------------------------------------------------------------------------
    def lateral_wire(self) -> None:
        """Compromised hosts reaching other internal hosts' remote administration."""
        infected = {ip for h in self.case.hosts for ip in self.case.host_ips.get(h, set())}
        if not infected:
            return
        ports = ", ".join(str(p) for p in sorted(tc.LATERAL_PORTS))
        rows = self.esql(f"FROM {ZCONN} | WHERE destination.port IN ({ports}) AND (source.ip IN ({q_in(infected)}) OR "
                         f"destination.ip IN ({q_in(infected)})) | STATS n = COUNT(*), first = MIN(@timestamp) BY source.ip, "
                         "destination.ip, destination.port | SORT first | LIMIT 50")
        pairs: dict[tuple[str, str], list[str]] = {}
        for r in rows:
            src, dst = str(r.get("source.ip")), str(r.get("destination.ip"))
            if dst in self.case.core_ips or src in self.case.core_ips or not self.inside(dst) or src == dst:
                continue
            port = int(r.get("destination.port") or 0)
            pairs.setdefault((src, dst), []).append(f"{tc.LATERAL_PORTS.get(port, port)} {port} ({r.get('n')}x)")
        for (src, dst), how in pairs.items():
            self.case.add(Finding("", self.case.host_of(dst), f"{self.label(src)} reached {self.label(dst)} over "
                                  f"{', '.join(how)} (zeek conn): lateral movement between the hosts.", "T1021.006", None, 4))
            for ip in (src, dst):
                host = self.case.host_of(ip)
                if host and host not in self.case.hosts:
                    self.case.hosts.append(host)

    def estate_traffic(self) -> None:
        for ip in sorted(self.case.core_ips):
            self.case.told_apart.append(f"{self.label(ip)} serves DNS, Kerberos and LDAP to the estate: the domain "
                                        "controller's traffic (lookups, SYSVOL, tickets) is every host's, not the attack.")
        rows = self.esql(f"FROM {ZDNS} | STATS n = COUNT(*) BY dns.question.name | SORT n DESC | LIMIT 200")
        vendor = sorted({str(r.get("dns.question.name")) for r in rows
                         if str(r.get("dns.question.name") or "").lower().endswith(VENDOR_DOMAINS)})
        if vendor:
            self.case.told_apart.append(f"lookups of {', '.join(vendor[:4])}: Windows update and telemetry, the vendor's hosts.")
        wpad = [str(r.get("dns.question.name")) for r in rows if str(r.get("dns.question.name") or "").lower().startswith("wpad")]
        if wpad:
            self.case.told_apart.append(f"{wpad[0]} lookups: Windows' proxy auto-discovery, routine.")

    # -- verdict --------------------------------------------------------------------------------------------
    def decide_wire(self) -> None:
        c = self.case
        top = max((f.weight for f in c.findings), default=0)
        selfsigned = "T1573.002" in c.techniques
        c.verdict = "malicious" if top >= 5 or (selfsigned and c.peers) else "suspicious" if c.findings else "undetermined"
        # Only the servers the evidence names as the attacker's stay: the alert's, self-signed, uploads, tools.
        for peer in c.peers.values():
            if not peer.zeek and not peer.downloads:
                peer.role = ""
        if c.verdict == "malicious":
            c.techniques.setdefault("T1041" if not any(f.technique == "T1048.003" for f in c.findings) else "T1048.003",
                                    "exfiltration")

    def plan(self) -> list[tuple[str, dict[str, Any], str]]:
        c = self.case
        if c.verdict != "malicious":
            return []
        out: list[tuple[str, dict[str, Any], str]] = []
        for peer in c.peers.values():
            if peer.role == "attacker" and peer.ip not in c.core_ips:
                out.append(("block_ip", {"ip": peer.ip}, "the attacker's server (C2, upload or tool download)"))
        for h in c.hosts:
            if not any(ip in c.core_ips for ip in c.host_ips.get(h, set())):
                out.insert(0, ("isolate_host", {"host": h}, "a host that talked to the attacker's servers"))
        return out


def _cn(subject: Any) -> str:
    m = _CN.search(str(subject or ""))
    return m.group(1) if m else str(subject or "")
