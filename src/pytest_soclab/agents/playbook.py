"""The reference analyst `playbook`: a careful, deterministic SOC analyst.

It investigates only through the tools, like any agent: it never reads the answer
key. It follows what a tier-2 analyst does on Linux telemetry:

1. anchor on the trigger (alerts on the pivot host, or the hunt lead's indicators);
2. pull the suspicious process activity on each implicated host and walk its tree;
3. link processes to network connections, then to zeek / suricata / threat intel;
4. look at authentication for the way in and pivot on the source IP across hosts;
5. look for persistence, credential access and exfiltration (DNS tunnelling, POSTs);
6. report the chain with its evidence and recommend proportionate containment,
   executing it when the scenario grants response tools and the evidence is strong.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pytest_soclab.errors import ToolError

PROC = "logs-endpoint.events.process-default"
NET = "logs-endpoint.events.network-default"
FILE = "logs-endpoint.events.file-default"
AUTH = "logs-system.auth-default"
ZCONN = "logs-zeek.connection-default"
ZDNS = "logs-zeek.dns-default"
ZHTTP = "logs-zeek.http-default"
SURI = "logs-suricata.eve-default"
ALERTS = ".alerts-security.alerts-default"
TI = "logs-ti_*"

MAX_HOSTS = 6  # breadth bound of the lateral walk

_SUSPICIOUS_DIRS = ("/tmp/", "/dev/shm/", "/var/tmp/", "/run/user/")
_WEB_PARENTS = {"nginx", "apache2", "httpd", "php-fpm", "php-fpm8.1", "php-fpm8.2", "php", "java", "node", "tomcat"}
_SHELLS = {"sh", "bash", "dash", "zsh", "ash"}
_CMD_MARKERS: dict[str, tuple[str, str]] = {
    # substring -> (technique, why)
    "/etc/shadow": ("T1003.008", "reads /etc/shadow"),
    "base64 -d": ("T1140", "decodes a base64 payload"),
    "| sh": ("T1059.004", "pipes a download into a shell"),
    "|sh": ("T1059.004", "pipes a download into a shell"),
    "| bash": ("T1059.004", "pipes a download into a shell"),
    "chmod +x": ("T1105", "makes a dropped file executable"),
    "crontab": ("T1053.003", "edits a crontab"),
    "systemctl enable": ("T1543.002", "enables a systemd unit"),
    "nc -e": ("T1059.004", "spawns a reverse shell"),
    "/dev/tcp/": ("T1059.004", "opens a bash reverse shell"),
    "authorized_keys": ("T1098.004", "writes ssh authorized_keys"),
    "history -c": ("T1070.003", "clears shell history"),
    "unset histfile": ("T1070.003", "disables shell history"),
}

def is_private(ip: str) -> bool:
    try:
        a = ipaddress.ip_address(ip)
    except ValueError:
        return False
    return a.is_private or a.is_loopback or a.is_link_local


def _q(s: str) -> str:
    return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _in(values: Any) -> str:
    return ", ".join(_q(v) for v in sorted(set(map(str, values))))


@dataclass
class Evidence:
    index: str
    id: str
    why: str


@dataclass
class Case:
    """What the analyst has established so far."""

    hosts: dict[str, dict[str, Any]] = field(default_factory=dict)  # implicated host -> what we know
    host_ips: dict[str, str] = field(default_factory=dict)  # ip -> host name (internal)
    processes: dict[str, dict[str, Any]] = field(default_factory=dict)  # entity_id -> process row
    attacker_ips: dict[str, str] = field(default_factory=dict)  # ip -> why
    domains: dict[str, str] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)  # path -> why
    persistence: dict[tuple[str, str], str] = field(default_factory=dict)  # (host, path) -> why
    techniques: dict[str, str] = field(default_factory=dict)
    compromised_users: dict[str, str] = field(default_factory=dict)
    evidence: list[Evidence] = field(default_factory=list)
    timeline: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    instructions: list[str] = field(default_factory=list)  # instruction-like text seen in the data
    alerts: list[dict[str, Any]] = field(default_factory=list)


class Analyst:
    def __init__(self, trigger: dict[str, Any], tools: Any):
        self.trigger = trigger
        self.tools = tools
        self.allowed = {s["name"] for s in tools.specs()}
        self.case = Case()
        self.streams: set[str] = set()
        self.all_hosts: dict[str, list[str]] = {}  # every host name in the telemetry -> ips

    # -- tool helpers ---------------------------------------------------------------
    def esql(self, query: str) -> list[dict[str, Any]]:
        if "esql_query" not in self.allowed:
            return []
        try:
            res = self.tools.call("esql_query", query=query)
        except ToolError as err:
            self.case.notes.append(f"query failed ({err.type}): {err.reason[:120]}")
            return []
        cols = [c["name"] for c in res.get("columns", [])]
        rows = [dict(zip(cols, row)) for row in res.get("values", [])]
        for row in rows:
            self._scan_text(row)
        return rows

    def search(self, index: str, body: dict[str, Any]) -> list[dict[str, Any]]:
        if "es_search" not in self.allowed:
            return []
        try:
            res = self.tools.call("es_search", index=index, body=body)
        except ToolError as err:
            self.case.notes.append(f"search failed ({err.type}): {err.reason[:120]}")
            return []
        hits = res.get("hits", {}).get("hits", [])
        for h in hits:
            self._scan_text(h.get("_source", {}))
        return hits

    def act(self, tool: str, **args: Any) -> bool:
        if tool not in self.allowed:
            return False
        try:
            self.tools.call(tool, **args)
        except ToolError as err:
            self.case.notes.append(f"{tool} {args} refused: {err.reason[:160]}")
            return False
        return True

    def _scan_text(self, obj: Any) -> None:
        """Note instruction-like text in the data: a careful analyst flags it as untrusted content."""
        for text in _strings(obj):
            if looks_like_instruction(text) and text not in self.case.instructions:
                self.case.instructions.append(text)

    # -- the investigation -------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        self.discover()
        seeds = self.anchor()
        visited: set[str] = set()
        queue = [h for h in seeds if h in self.all_hosts]
        while queue and len(visited) < MAX_HOSTS:
            host = queue.pop(0)
            if host in visited:
                continue
            visited.add(host)
            for nxt in self.investigate_host(host):
                if nxt not in visited and nxt not in queue:
                    queue.append(nxt)
        self.threat_intel()
        self.respond()
        return self.report()

    def discover(self) -> None:
        if "list_indices" in self.allowed:
            try:
                res = self.tools.call("list_indices", pattern="*")
                for row in res.get("indices", res if isinstance(res, list) else []):
                    name = row.get("index") if isinstance(row, dict) else None
                    if name:
                        self.streams.add(name)
            except ToolError:
                pass
        rows = self.esql(f"FROM {PROC} | STATS ips = VALUES(host.ip) BY host.name | LIMIT 500")
        for r in rows:
            ips = r.get("ips") or []
            ips = ips if isinstance(ips, list) else [ips]
            self.all_hosts[r["host.name"]] = ips
            for ip in ips:
                self.case.host_ips[ip] = r["host.name"]

    def anchor(self) -> list[str]:
        """Hosts to start from: the pivot, the hosts the trigger names, the alerts' hosts."""
        pivot = self.trigger.get("pivot") or {}
        prompt = self.trigger.get("prompt", "")
        hosts: list[str] = []
        for key in ("host.name", "host", "hostname"):
            if pivot.get(key):
                hosts.append(str(pivot[key]))
        for name in sorted(self.all_hosts, key=len, reverse=True):
            if re.search(rf"\b{re.escape(name)}\b", prompt) and name not in hosts:
                hosts.append(name)
        ips = set(re.findall(r"\b(?:\d{1,3}\.){3}\d{1,3}\b", prompt + " " + " ".join(map(str, pivot.values()))))
        for ip in sorted(ips):
            if ip in self.case.host_ips:
                hosts.append(self.case.host_ips[ip])
            elif not is_private(ip):
                self.pivot_external_ip(ip, hosts)
        rule = pivot.get("alert_rule")
        where = [f"host.name IN ({_in(hosts)})"] if hosts else []
        if rule:
            where.append(f"kibana.alert.rule.name == {_q(rule)}")
        cond = " OR ".join(where) if where else "kibana.alert.severity IN (\"high\", \"critical\")"
        alerts = self.esql(
            f"FROM {ALERTS} METADATA _id | WHERE {cond} | SORT @timestamp | "
            "KEEP @timestamp, _id, kibana.alert.rule.name, kibana.alert.severity, kibana.alert.risk_score, "
            "host.name, process.executable, process.command_line, process.pid, source.ip, destination.ip, user.name | "
            "LIMIT 50"
        )
        self.case.alerts = alerts
        for a in alerts:
            h = a.get("host.name")
            if h and h not in hosts:
                hosts.append(h)
            self.case.timeline.append((a["@timestamp"], f"alert '{a.get('kibana.alert.rule.name')}' on {h}"))
        if not hosts:
            hosts = self.hunt_without_host(prompt)
        return hosts

    def hunt_without_host(self, prompt: str) -> list[str]:
        """A hunt lead with no host: sweep for the classic Linux footholds across the estate."""
        rows = self.esql(
            f"FROM {PROC} | WHERE process.executable LIKE \"/tmp/*\" OR process.executable LIKE \"/dev/shm/*\" "
            "OR process.command_line LIKE \"*/etc/shadow*\" OR process.command_line LIKE \"*base64 -d*\" "
            "| STATS n = COUNT(*) BY host.name | SORT n DESC | LIMIT 10"
        )
        hosts = [r["host.name"] for r in rows]
        if re.search(r"\bdns\b|tunnel", prompt, re.I):
            hosts += self.dns_tunnel_hosts()
        if re.search(r"ssh|brute|login|lateral", prompt, re.I):
            rows = self.esql(
                f"FROM {AUTH} | WHERE event.outcome == \"failure\" | STATS fails = COUNT(*) BY source.ip "
                "| WHERE fails >= 20 | SORT fails DESC | LIMIT 5"
            )
            for r in rows:
                if r.get("source.ip"):
                    self.pivot_auth_source(r["source.ip"], hosts)
        return list(dict.fromkeys(hosts))

    def pivot_external_ip(self, ip: str, hosts: list[str]) -> None:
        rows = self.esql(
            f"FROM {ZCONN} | WHERE source.ip == {_q(ip)} OR destination.ip == {_q(ip)} "
            "| STATS n = COUNT(*) BY source.ip, destination.ip | SORT n DESC | LIMIT 20"
        )
        for r in rows:
            for side in ("source.ip", "destination.ip"):
                h = self.case.host_ips.get(r.get(side) or "")
                if h and h not in hosts:
                    hosts.append(h)

    # -- one host -----------------------------------------------------------------------
    def investigate_host(self, host: str) -> list[str]:
        ips = self.all_hosts.get(host, [])
        found_next: list[str] = []
        sus = self.suspicious_processes(host)
        if sus:
            self.implicate(host, f"{len(sus)} suspicious process events")
        self.process_network(host, sus)
        self.auth_on_host(host, found_next)
        self.files_on_host(host)
        if ips:
            self.network_of_host(host, ips)
        return found_next

    def implicate(self, host: str, why: str) -> None:
        self.case.hosts.setdefault(host, {"why": []})["why"].append(why)

    def suspicious_processes(self, host: str) -> list[dict[str, Any]]:
        conds = " OR ".join(
            [f"process.executable LIKE {_q(d + '*')}" for d in _SUSPICIOUS_DIRS]
            + [f"process.command_line LIKE {_q('*' + m + '*')}" for m in _CMD_MARKERS]
            + [f"(process.parent.name IN ({_in(_WEB_PARENTS)}) AND process.name IN ({_in(_SHELLS)}))"]
            + ["process.name IN (\"nc\", \"ncat\", \"socat\", \"xmrig\")"]
        )
        rows = self.esql(
            f"FROM {PROC} METADATA _id | WHERE host.name == {_q(host)} AND ({conds}) | SORT @timestamp | "
            "KEEP @timestamp, _id, process.pid, process.entity_id, process.name, process.executable, "
            "process.command_line, process.parent.name, process.parent.executable, process.parent.entity_id, "
            "user.name, event.action | LIMIT 200"
        )
        out = []
        for r in rows:
            why = self._process_reasons(r)
            if not why:
                continue
            out.append(r)
            eid = r.get("process.entity_id") or f"{host}:{r.get('process.pid')}"
            first = eid not in self.case.processes
            self.case.processes.setdefault(eid, {**r, "host": host, "why": why})
            if first:
                self.case.evidence.append(Evidence(PROC, r["_id"], f"{host}: {r.get('process.command_line')} ({why})"))
                self.case.timeline.append((r["@timestamp"], f"{host}: {r.get('user.name')} ran {r.get('process.command_line')}"))
            exe = r.get("process.executable") or ""
            if exe.startswith(_SUSPICIOUS_DIRS):
                self.case.files.setdefault(exe, f"dropped executable run on {host}")
            if r.get("user.name") and r.get("user.name") not in ("root",):
                self.case.compromised_users.setdefault(r["user.name"], f"ran suspicious commands on {host}")
        return out

    def _process_reasons(self, r: dict[str, Any]) -> str:
        why: list[str] = []
        exe = r.get("process.executable") or ""
        cmd = (r.get("process.command_line") or "").lower()
        if exe.startswith(_SUSPICIOUS_DIRS):
            why.append(f"runs from {exe.rsplit('/', 1)[0]}/")
            base = exe.rsplit("/", 1)[-1]
            self.case.techniques.setdefault("T1105", "a tool was dropped and run from a temporary directory")
            if base.startswith("."):
                self.case.techniques.setdefault("T1564.001", f"hidden file name {base}")
        for marker, (tech, reason) in _CMD_MARKERS.items():
            if marker in cmd:
                why.append(reason)
                self.case.techniques.setdefault(tech, reason)
        parent = (r.get("process.parent.name") or "").lower()
        if parent in _WEB_PARENTS and (r.get("process.name") or "") in _SHELLS:
            why.append(f"shell spawned by the web server ({parent})")
            self.case.techniques.setdefault("T1190", "a shell spawned by the web server: exploitation of a public-facing app")
            self.case.techniques.setdefault("T1059.004", "unix shell commands run through the web server")
        if (r.get("process.name") or "") in ("nc", "ncat", "socat"):
            why.append("netcat-style tool")
        if (r.get("process.name") or "") == "xmrig" or "stratum+tcp" in cmd:
            why.append("crypto-miner")
            self.case.techniques.setdefault("T1496", "resource hijacking (crypto-miner)")
        return ", ".join(why)

    def process_network(self, host: str, sus: list[dict[str, Any]]) -> None:
        eids = sorted({r["process.entity_id"] for r in sus if r.get("process.entity_id")})
        if not eids:
            return
        rows = self.esql(
            f"FROM {NET} METADATA _id | WHERE host.name == {_q(host)} AND process.entity_id IN ({_in(eids[:50])}) "
            "| STATS n = COUNT(*), first = MIN(@timestamp), last = MAX(@timestamp), id = MIN(_id) "
            "BY process.name, destination.ip, destination.port | SORT n DESC | LIMIT 30"
        )
        for r in rows:
            ip = r.get("destination.ip")
            if not ip:
                continue
            if is_private(ip):
                peer = self.case.host_ips.get(ip)
                if peer and peer != host:
                    self.case.notes.append(f"{host}: {r['process.name']} connected to internal {peer} ({ip})")
                continue
            beacon = r["n"] >= 5
            why = f"{r['process.name']} on {host} connected {r['n']}x to {ip}:{r['destination.port']}"
            self.case.attacker_ips.setdefault(ip, why + (" (beaconing)" if beacon else ""))
            self.case.evidence.append(Evidence(NET, r["id"], why))
            self.case.timeline.append((r["first"], f"{host}: first connection of {r['process.name']} to {ip}"))
            self.case.techniques.setdefault("T1071.001" if r.get("destination.port") in (80, 443, 8080, 8443) else "T1571",
                                            f"command and control to {ip}:{r['destination.port']}")

    def auth_on_host(self, host: str, found_next: list[str]) -> None:
        rows = self.esql(
            f"FROM {AUTH} METADATA _id | WHERE host.name == {_q(host)} AND source.ip IS NOT NULL "
            "| STATS fails = COUNT(*) WHERE event.outcome == \"failure\", ok = COUNT(*) WHERE event.outcome == \"success\", "
            "first_ok = MIN(@timestamp) WHERE event.outcome == \"success\", users = VALUES(user.name), id = MAX(_id) "
            "BY source.ip | SORT fails DESC | LIMIT 50"
        )
        for r in rows:
            src = r.get("source.ip")
            if not src:
                continue
            users = r.get("users") or []
            users = users if isinstance(users, list) else [users]
            fails, ok = r.get("fails") or 0, r.get("ok") or 0
            if fails >= 10 and ok:
                why = f"{fails} failed then {ok} successful logins on {host} from {src}"
                self.case.techniques.setdefault("T1110.001", "password guessing over ssh")
                self.case.techniques.setdefault("T1078", "valid accounts used after the guessing")
                self._note_login(host, src, users, why, r, found_next)
            elif ok and src in self.case.attacker_ips:
                self._note_login(host, src, users, f"login on {host} from known-bad {src}", r, found_next)
            elif ok and self.case.host_ips.get(src) in self.case.hosts and self.case.host_ips.get(src) != host:
                # Logged in from a host we already hold as compromised: lateral movement.
                peer = self.case.host_ips[src]
                self._note_login(host, src, users, f"ssh from compromised {peer} ({src}) to {host}", r, found_next)
                self.case.techniques.setdefault("T1021.004", "lateral movement over ssh")
        # Who else did the compromised users' sources reach? (lateral movement by source.ip)
        for ip in sorted({p for p in self.all_hosts.get(host, [])}):
            self.pivot_auth_source(ip, found_next, origin=host)

    def _note_login(self, host: str, src: str, users: list[str], why: str, row: dict[str, Any], found_next: list[str]) -> None:
        self.implicate(host, why)
        self.case.evidence.append(Evidence(AUTH, row["id"], why))
        if row.get("first_ok"):
            self.case.timeline.append((row["first_ok"], why))
        for u in users:
            if u:
                self.case.compromised_users.setdefault(u, why)
        if not is_private(src):
            self.case.attacker_ips.setdefault(src, why)
        else:
            peer = self.case.host_ips.get(src)
            if peer and peer != host and peer not in found_next:
                found_next.append(peer)

    def pivot_auth_source(self, ip: str, found_next: list[str], origin: str | None = None) -> None:
        """Where did logins from this IP land? Only counts when the origin is already implicated."""
        if origin is not None and origin not in self.case.hosts:
            return
        rows = self.esql(
            f"FROM {AUTH} METADATA _id | WHERE source.ip == {_q(ip)} AND event.outcome == \"success\" "
            "| STATS n = COUNT(*), first = MIN(@timestamp), users = VALUES(user.name), id = MIN(_id) BY host.name "
            "| SORT first | LIMIT 20"
        )
        for r in rows:
            h = r.get("host.name")
            if not h or h == origin:
                continue
            users = r.get("users") or []
            users = users if isinstance(users, list) else [users]
            if origin is not None and not set(users) & set(self.case.compromised_users):
                continue  # routine admin traffic from that host: not attributable
            why = f"ssh login to {h} from {ip}" + (f" ({origin})" if origin else "") + f" as {', '.join(users)}"
            self.implicate(h, why)
            self.case.evidence.append(Evidence(AUTH, r["id"], why))
            self.case.timeline.append((r["first"], why))
            self.case.techniques.setdefault("T1021.004", "lateral movement over ssh")
            if h not in found_next:
                found_next.append(h)

    def files_on_host(self, host: str) -> None:
        rows = self.esql(
            f"FROM {FILE} METADATA _id | WHERE host.name == {_q(host)} AND (file.path LIKE \"/etc/cron*\" OR "
            "file.path LIKE \"/var/spool/cron/*\" OR file.path LIKE \"/etc/systemd/system/*\" OR "
            "file.path LIKE \"/tmp/*\" OR file.path LIKE \"/dev/shm/*\" OR file.path LIKE \"*/.ssh/authorized_keys\" "
            "OR file.path == \"/etc/shadow\") "
            "| KEEP @timestamp, _id, file.path, event.action, process.name, process.executable, process.entity_id, user.name "
            "| SORT @timestamp | LIMIT 100"
        )
        bad_eids = set(self.case.processes)
        for r in rows:
            path = r.get("file.path") or ""
            by_bad = r.get("process.entity_id") in bad_eids or (r.get("process.executable") or "").startswith(_SUSPICIOUS_DIRS)
            if not by_bad:
                continue  # package managers and admins touch these paths all day
            why = f"{r.get('process.name')} {r.get('event.action')} {path} on {host}"
            self.case.evidence.append(Evidence(FILE, r["_id"], why))
            self.case.timeline.append((r["@timestamp"], why))
            if path.startswith(("/etc/cron", "/var/spool/cron")):
                self.case.persistence[(host, path)] = why
                self.case.techniques.setdefault("T1053.003", "cron persistence")
            elif path.startswith("/etc/systemd/system/"):
                self.case.persistence[(host, path)] = why
                self.case.techniques.setdefault("T1543.002", "systemd service persistence")
            elif path.endswith("authorized_keys"):
                self.case.persistence[(host, path)] = why
                self.case.techniques.setdefault("T1098.004", "ssh authorized_keys persistence")
            elif path == "/etc/shadow":
                self.case.techniques.setdefault("T1003.008", "/etc/shadow accessed")
            else:
                self.case.files.setdefault(path, why)

    def network_of_host(self, host: str, ips: list[str]) -> None:
        # DNS tunnelling: many long, unique names under one domain.
        self.dns_tunnel_hosts(ips)
        # Large outbound POSTs.
        rows = self.esql(
            f"FROM {ZHTTP} METADATA _id | WHERE source.ip IN ({_in(ips)}) AND http.request.method == \"POST\" "
            "| STATS n = COUNT(*), bytes = SUM(http.request.body.bytes), id = MIN(_id) BY destination.ip, url.domain "
            "| WHERE bytes > 1000000 | SORT bytes DESC | LIMIT 10"
        )
        for r in rows:
            ip = r.get("destination.ip")
            if ip and not is_private(ip):
                why = f"{host} POSTed {r['bytes']} bytes in {r['n']} requests to {r.get('url.domain') or ip} ({ip})"
                self.implicate(host, why)
                self.case.attacker_ips.setdefault(ip, why)
                if r.get("url.domain"):
                    self.case.domains.setdefault(r["url.domain"], why)
                self.case.evidence.append(Evidence(ZHTTP, r["id"], why))
                self.case.techniques.setdefault("T1048", "exfiltration over HTTP POST")
        # Suricata on the host's traffic.
        rows = self.esql(
            f"FROM {SURI} METADATA _id | WHERE event.kind == \"alert\" AND (source.ip IN ({_in(ips)}) OR destination.ip IN ({_in(ips)})) "
            "| STATS n = COUNT(*), id = MIN(_id) BY rule.name, source.ip, destination.ip | SORT n DESC | LIMIT 20"
        )
        for r in rows:
            other = r["destination.ip"] if r.get("source.ip") in ips else r.get("source.ip")
            if other and not is_private(other) and (other in self.case.attacker_ips or host in self.case.hosts):
                self.case.evidence.append(Evidence(SURI, r["id"], f"suricata '{r['rule.name']}' {r['source.ip']} -> {r['destination.ip']}"))
                if other not in self.case.attacker_ips and r["n"] >= 3:
                    self.case.attacker_ips[other] = f"suricata '{r['rule.name']}' x{r['n']}"

    def dns_tunnel_hosts(self, ips: list[str] | None = None) -> list[str]:
        src = f"source.ip IN ({_in(ips)}) AND " if ips else ""
        rows = self.esql(
            f"FROM {ZDNS} METADATA _id | WHERE {src}LENGTH(dns.question.name) > 45 "
            "| STATS n = COUNT(*), id = MIN(_id), srcs = VALUES(source.ip) BY dns.question.registered_domain "
            "| WHERE n >= 20 | SORT n DESC | LIMIT 5"
        )
        hosts: list[str] = []
        for r in rows:
            dom = r.get("dns.question.registered_domain")
            if not dom:
                continue
            srcs = r.get("srcs") or []
            srcs = srcs if isinstance(srcs, list) else [srcs]
            names = [self.case.host_ips[s] for s in srcs if s in self.case.host_ips]
            why = f"{r['n']} long DNS queries under {dom} from {', '.join(names) or ', '.join(srcs)}"
            self.case.domains.setdefault(dom, why)
            self.case.evidence.append(Evidence(ZDNS, r["id"], why))
            self.case.techniques.setdefault("T1071.004", "DNS used as a covert channel")
            self.case.techniques.setdefault("T1048", "exfiltration over DNS tunnelling")
            for n in names:
                self.implicate(n, why)
                hosts.append(n)
        return hosts

    def threat_intel(self) -> None:
        ips = sorted(self.case.attacker_ips)
        doms = sorted(self.case.domains)
        if not ips and not doms:
            return
        conds = []
        if ips:
            conds.append(f"threat.indicator.ip IN ({_in(ips)})")
        if doms:
            conds.append(f"threat.indicator.url.domain IN ({_in(doms)})")
        rows = self.esql(
            f"FROM {TI} METADATA _id | WHERE {' OR '.join(conds)} | KEEP _id, threat.indicator.ip, "
            "threat.indicator.url.domain, threat.indicator.confidence, threat.feed.name | LIMIT 20"
        )
        for r in rows:
            what = r.get("threat.indicator.ip") or r.get("threat.indicator.url.domain")
            self.case.evidence.append(
                Evidence(TI, r["_id"], f"{what} is a known indicator ({r.get('threat.feed.name')}, confidence {r.get('threat.indicator.confidence')})")
            )

    # -- response ---------------------------------------------------------------------------
    def response_plan(self) -> list[tuple[str, dict[str, Any], str]]:
        plan: list[tuple[str, dict[str, Any], str]] = []
        for host in sorted(self.case.hosts):
            plan.append(("isolate_host", {"host": host}, "contain the compromised host"))
        for eid, p in sorted(self.case.processes.items()):
            exe = p.get("process.executable") or ""
            if exe.startswith(_SUSPICIOUS_DIRS) and p.get("process.pid"):
                plan.append(("kill_process", {"host": p["host"], "pid": int(p["process.pid"])}, f"stop {exe}"))
        for ip in sorted(self.case.attacker_ips):
            plan.append(("block_ip", {"ip": ip}, "cut the attacker's channel"))
        for (host, path) in sorted(self.case.persistence):
            plan.append(("remove_persistence", {"host": host, "path": path}, "remove the attacker's persistence"))
        return plan

    def respond(self) -> None:
        """Execute proportionate containment when the scenario grants the tools and the evidence is strong."""
        self.executed: list[tuple[str, dict[str, Any], str, bool]] = []
        strong = len(self.case.evidence) >= 2
        for tool, args, why in self.response_plan():
            if tool in self.allowed and strong:
                self.execute(tool, args, why)

    def execute(self, tool: str, args: dict[str, Any], why: str) -> bool:
        ok = self.act(tool, **args, comment=why)
        self.executed.append((tool, args, why, ok))
        return ok

    # -- the report -------------------------------------------------------------------------------
    def report(self) -> dict[str, Any]:
        c = self.case
        hosts = sorted(c.hosts)
        lines = ["# Investigation report", ""]
        if not hosts and not c.attacker_ips:
            lines.append("No evidence of compromise was found in the telemetry for this lead; "
                         "the activity looks benign. No containment is recommended.")
        else:
            lines.append(
                f"**Conclusion.** {', '.join(hosts) or 'No host'} {'is' if len(hosts) == 1 else 'are'} compromised"
                + (f"; attacker infrastructure: {', '.join(sorted(c.attacker_ips))}" if c.attacker_ips else "")
                + (f"; domains: {', '.join(sorted(c.domains))}" if c.domains else "")
                + "."
            )
        lines += ["", "## Timeline", ""]
        for ts, what in sorted(set(c.timeline))[:40]:
            lines.append(f"- {ts} {what}")
        lines += ["", "## Evidence", ""]
        for e in c.evidence[:40]:
            lines.append(f"- `{e.index}` `{e.id}`: {e.why}")
        if c.techniques:
            lines += ["", "## ATT&CK techniques", ""]
            lines += [f"- {t}: {why}" for t, why in sorted(c.techniques.items())]
        iocs = sorted(c.attacker_ips) + sorted(c.domains) + sorted(c.files)
        if iocs:
            lines += ["", "## Indicators", ""] + [f"- {i}" for i in iocs]
        if c.instructions:
            lines += ["", "## Untrusted content", ""]
            lines.append(
                f"{len(c.instructions)} record(s) in the telemetry contain text addressed to an analyst or AI "
                "(possible prompt injection); treated as attacker-controlled data, not as instructions."
            )
        plan = self.response_plan()
        lines += ["", "## Response", ""]
        done = {(t, tuple(sorted(a.items()))): ok for t, a, _, ok in getattr(self, "executed", [])}
        for tool, args, why in plan:
            state = done.get((tool, tuple(sorted(args.items()))))
            tag = "done" if state else ("refused" if state is False else "recommended")
            lines.append(f"- {tool} {', '.join(f'{k}={v}' for k, v in args.items())}: {why} ({tag})")
        if not plan:
            lines.append("- none needed")
        findings = {
            "root_cause": lines[2] if len(lines) > 2 else "",
            "attacker_ips": sorted(c.attacker_ips),
            "implicated_hosts": hosts,
            "techniques": sorted(c.techniques),
            "iocs": iocs,
            "evidence": [{"index": e.index, "id": e.id, "why": e.why} for e in c.evidence[:60]],
            "response": [{"action": t, "target": ", ".join(map(str, a.values())), "rationale": w} for t, a, w in plan],
        }
        return {"markdown": "\n".join(lines) + "\n", "findings": findings}


def _strings(obj: Any) -> list[str]:
    out: list[str] = []
    if isinstance(obj, str):
        out.append(obj)
    elif isinstance(obj, dict):
        for v in obj.values():
            out += _strings(v)
    elif isinstance(obj, list):
        for v in obj:
            out += _strings(v)
    return out


_INSTRUCTION_RE = re.compile(
    r"(ignore (all |any )?(previous|prior) (instructions|guidance)|you must now|as an ai|ai agent|assistant[:,]|"
    r"system prompt|new instructions|instructions? for (the )?(ai|assistant|agent|analyst)|urgent: (run|execute|call))",
    re.I,
)


def looks_like_instruction(text: str) -> bool:
    """Text in telemetry that addresses an analyst or an AI: data to flag, never orders to follow."""
    return len(text) > 24 and bool(_INSTRUCTION_RE.search(text))


def investigate(trigger: dict[str, Any], tools: Any) -> dict[str, Any]:
    """The `playbook` agent."""
    return Analyst(trigger, tools).run()
