"""The network side: how the attacker came in over the web, which outside addresses the attacker's
processes talked to, what zeek, suricata and threat intel say about them, and who else talked to them."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from pytest_soclab.agents.analyst import clock
from pytest_soclab.agents.analyst.state import Entry, Infra, Proc
from pytest_soclab.agents.analyst.store import (
    AUTH,
    FILE,
    NET,
    SURI,
    TI,
    ZCONN,
    ZDNS,
    ZHTTP,
    ZSSL,
    as_list,
    q,
    q_in,
)
from pytest_soclab.agents.analyst.tradecraft import (
    SCANNER_AGENTS,
    WEB_SERVER_PREFIXES,
    base,
    is_internal,
    mentions_any,
    name_stem,
    subnet24,
)

if TYPE_CHECKING:
    from pytest_soclab.agents.analyst.core import Analyst

_WEB_SCRIPT = re.compile(r"\.(?:php\d?|phtml|phar|jsp|jspx|aspx?|cgi|pl|py|twig|tpl)$", re.IGNORECASE)
_SENSITIVE_WEB = re.compile(r"/\.(?:git|svn|hg|env|htpasswd|aws|ssh|DS_Store)(?:/|$)|\.(?:bak|old|sql|zip|tar\.gz)$|/backup",
                            re.IGNORECASE)
POPULAR_CLIENTS = 3  # an outside address this many internal hosts use is a business service
ESTABLISHED_LEAD_S = 3600  # first seen this long before the attack: an address the business already used
BRUTE_FORCE_FAILURES = 10  # failed logins from one outside address before a success: password guessing
DB_PORTS = {5432: "PostgreSQL", 3306: "MySQL", 1433: "SQL Server", 27017: "MongoDB", 6379: "Redis", 1521: "Oracle"}



class Network:
    def infra(self: Analyst, ip: str) -> Infra:
        return self.case.infra.setdefault(ip, Infra(ip))

    # -- connections of the attacker's processes -----------------------------------------------------
    def process_connections(self: Analyst) -> None:
        pending, self.connections = self.connections, []
        for p, ip, r in pending:
            n = int(r.get("n") or 1)
            port = r.get("destination.port")
            key = (p.eid, ip, port)
            if key in self.conn_seen:
                continue
            self.conn_seen.add(key)
            if is_internal(ip):
                peer = self.case.ip_host.get(ip)
                if not peer:
                    continue
                if port == 22 and self.host_is_malicious(p.host):
                    self.lateral_logins_any(p, peer)
                elif port in DB_PORTS:
                    self.case.step(r["first"], p.host, f"{p.name} (pid {p.pid}) read the {DB_PORTS[port]} database on "
                                   f"{peer} ({ip}:{port}) with the application's credentials", NET, r.get("id"), "T1005")
                    self.db_reads.add(peer)
                continue
            parent = self.case.procs.get(p.parent_eid or "")
            tags = {b.tag for b in p.behaviours} | ({b.tag for b in parent.behaviours} & {"reverse_shell"} if parent else set())
            if "reverse_shell" in tags:
                role, what = "reverse-shell", "reverse shell"
            elif "exfil" in tags:
                role, what = "exfil", "upload"
            elif "download" in tags and p.weight >= 3:
                role, what = "download", "download"
            elif "unusual_exec" in tags or "miner" in tags:
                role, what = "c2", "connection"
            else:
                continue  # an ordinary tool talking to an ordinary service (a package index, an API)
            inf = self.infra(ip)
            inf.contacts[p.host] = inf.contacts.get(p.host, 0) + n
            inf.roles.add(role)
            if role == "exfil":
                inf.exfil_from.add(p.host)
            many = f" {n} times between {clock.short(r['first'])} and {clock.short(r['last'])}" if n > 1 else ""
            self.case.step(r["first"], p.host, f"{p.name} (pid {p.pid}) on {p.host} connected to {ip}:{port}{many} "
                           f"({what})", NET, r.get("id"), "T1071.001" if port in (80, 443) and role == "c2" else
                           "T1571" if role in ("c2", "reverse-shell") else "")

    def lateral_logins_any(self: Analyst, p: Proc, peer: str) -> None:
        """An ssh connection to an internal host without a user@host on the command line."""
        users = sorted({b.target.split("@")[0] for b in p.behaviours if b.tag == "lateral" and "@" in b.target})
        for user in users or [p.user]:
            self.lateral_logins(p.host, peer, user, p)

    # -- the way in over the web ---------------------------------------------------------------------------
    def web_entry(self: Analyst, host: str, roots: list[Proc]) -> None:
        ips = self.case.inventory.get(host, [])
        if not ips or not roots:
            return
        spans = " OR ".join(f"({clock.between(r.start, -15, 1)})" for r in roots[:12])
        rows = self.tel.esql(
            f"FROM {ZHTTP} METADATA _id | WHERE destination.ip IN ({q_in(ips)}) AND ({spans}) "
            "| KEEP @timestamp, _id, source.ip, http.request.method, url.original, url.path, http.response.status_code, "
            "user_agent.original | SORT @timestamp | LIMIT 200"
        )
        attackers: dict[str, str] = {}
        shells: dict[str, str] = {}  # url path -> first use
        for root in roots:
            before = [r for r in rows if -15 <= clock.delta(r["@timestamp"], root.start) <= 15
                      and clock.delta(r["@timestamp"], root.start) >= -1]
            if not before:
                continue
            r = before[-1]
            src = str(r.get("source.ip") or "")
            attackers.setdefault(src, r["@timestamp"])
            path = str(r.get("url.path") or "")
            shells.setdefault(path, r["@timestamp"])
            self.case.step(r["@timestamp"], host, f"{src} requested {r.get('http.request.method')} {r.get('url.original')} "
                           f"on {host}; php and the web server ({base(root.parent_name)}) then ran `{root.short(90)}` "
                           f"as {root.user}", ZHTTP, r.get("_id"), "T1505.003")
        ext = sorted(a for a in attackers if not is_internal(a))
        for a in ext:
            self.infra(a).roles.add("attacker")
            self.infra(a).contacts[host] = self.infra(a).contacts.get(host, 0) + 1
        if not ext:
            return
        reqs = self.tel.esql(
            f"FROM {ZHTTP} METADATA _id | WHERE source.ip IN ({q_in(ext)}) AND destination.ip IN ({q_in(ips)}) "
            "| KEEP @timestamp, _id, source.ip, http.request.method, url.original, url.path, http.response.status_code, "
            "user_agent.original | SORT @timestamp | LIMIT 300"
        )
        if not reqs:
            return
        first = reqs[0]["@timestamp"]
        last = max(r.start for r in roots)
        web_names = " OR ".join(f"process.name LIKE {q(p + '*')}" for p in WEB_SERVER_PREFIXES)
        files = self.tel.esql(
            f"FROM {FILE} METADATA _id | WHERE host.name == {q(host)} AND ({web_names}) AND "
            f"@timestamp >= {q(clock.shift(first, -5))} AND @timestamp <= {q(clock.shift(last, 5))} "
            "| KEEP @timestamp, _id, file.path, event.action, process.name, file.hash.sha256 | SORT @timestamp | LIMIT 300"
        )
        posts = [r for r in reqs if r.get("http.request.method") in ("POST", "PUT")]
        requested = {str(r.get("url.path") or "") for r in reqs}
        for f in files:
            path = str(f.get("file.path") or "")
            if "/cache/" in path or f.get("event.action") == "deletion":
                continue
            trig = [r for r in posts if 0 <= clock.delta(r["@timestamp"], f["@timestamp"]) <= 5]
            named = any(u and path.endswith(u) for u in requested)
            if not trig and not named:
                continue
            how = f" right after {trig[-1]['source.ip']} sent {trig[-1]['http.request.method']} " \
                  f"{trig[-1]['url.original']}" if trig else ""
            shell = any(u and path.endswith(u) for u in shells)
            role = "webshell" if shell or (_WEB_SCRIPT.search(path) and "upload" in path.lower()) else "modified"
            verb = "wrote" if f.get("event.action") == "creation" else "modified"
            what = "a web shell" if role == "webshell" else "a server-side template / script"
            self.case.artifact(path, host, role, f"{what} {verb} by {f.get('process.name')}{how}", f["@timestamp"],
                               "T1505.003")
            self.case.step(f["@timestamp"], host, f"{f.get('process.name')} {verb} {path} ({what}){how}", FILE,
                           f.get("_id"), "T1505.003" if role == "webshell" else "T1190")
        self.describe_web_attacker(host, reqs, shells)

    def describe_web_attacker(self: Analyst, host: str, reqs: list[dict[str, Any]], shells: dict[str, str]) -> None:
        by_src: dict[str, list[dict[str, Any]]] = {}
        for r in reqs:
            by_src.setdefault(str(r.get("source.ip")), []).append(r)
        for src, rs in sorted(by_src.items()):
            agents = sorted({str(r.get("user_agent.original") or "") for r in rs} - {""})
            first_shell = min((shells[p] for p in shells), default=None)
            before = [r for r in rs if first_shell is None or r["@timestamp"] < first_shell]
            probes = [r for r in before if r.get("http.request.method") == "GET"]
            posts = [r for r in before if r.get("http.request.method") in ("POST", "PUT")]
            if probes:
                paths = len({str(r.get('url.path')) for r in probes})
                self.case.step(probes[0]["@timestamp"], host, f"{src} probed {host} with {len(probes)} requests "
                               f"to {paths} paths", ZHTTP, probes[0].get("_id"), "T1595.002")
            for r in posts[:4]:
                self.case.step(r["@timestamp"], host, f"{src} sent {r.get('http.request.method')} {r.get('url.original')} "
                               f"(status {r.get('http.response.status_code')}, user agent {r.get('user_agent.original')})",
                               ZHTTP, r.get("_id"), "T1190")
            self.infra(src).why.append(f"{len(rs)} requests to {host}, user agents: {', '.join(agents[:3])}")

    # -- what zeek, suricata and threat intel know about the outside addresses ---------------------------------
    def enrich_infra(self: Analyst) -> None:
        ips = sorted(ip for ip, inf in self.case.infra.items() if inf.roles)
        if not ips:
            return
        conn = self.tel.esql(
            f"FROM {ZCONN} | WHERE destination.ip IN ({q_in(ips)}) OR source.ip IN ({q_in(ips)}) "
            "| STATS n = COUNT(*), first = MIN(@timestamp), last = MAX(@timestamp), out = SUM(source.bytes), "
            "inb = SUM(destination.bytes), big = MAX(source.bytes) BY source.ip, destination.ip, destination.port "
            "| SORT n DESC | LIMIT 200"
        )
        for r in conn:
            src, dst = str(r.get("source.ip")), str(r.get("destination.ip"))
            ext, internal = (dst, src) if dst in self.case.infra else (src, dst)
            inf = self.case.infra.get(ext)
            if inf is None or not is_internal(internal):
                continue
            n = int(r.get("n") or 0)
            inf.count += n
            host = self.case.ip_host.get(internal, internal)
            inf.contacts[host] = max(inf.contacts.get(host, 0), n)
            inf.first = min(filter(None, [inf.first, r.get("first")])) if inf.first else str(r.get("first"))
            inf.last = max(filter(None, [inf.last, r.get("last")])) if inf.last else str(r.get("last"))
            if internal == src:
                inf.bytes_out += int(r.get("out") or 0)
                span = clock.delta(str(r.get("first")), str(r.get("last")))
                if n >= 6 and span >= 1800:
                    interval = span / (n - 1) / 60
                    if inf.beacon_min is None or n > 6:
                        inf.beacon_min = interval
                        inf.why.append(f"{host} connected {n} times to port {r.get('destination.port')} over "
                                       f"{span / 3600:.1f} h: a beacon every ~{interval:.0f} minutes")
                big = int(r.get("big") or 0)
                if big >= 1_000_000:
                    inf.roles.add("exfil")
                    inf.exfil_from.add(host)
                    inf.why.append(f"{host} sent {big / 1e6:.1f} MB in one connection to port {r.get('destination.port')}")
        starts = sorted(self.case.procs[e].start for es in self.case.cluster.values() for e in es
                        if e in self.case.procs)
        for inf in self.case.infra.values():
            internal_clients = [h for h in inf.contacts if h in self.case.inventory]
            if len(internal_clients) >= POPULAR_CLIENTS and not inf.roles & {"attacker", "reverse-shell"}:
                inf.popular = True
            # An address the estate used well before the attacker's first move is a service the business
            # relies on, whatever a later process did with it: a human decides about blocking it.
            if starts and inf.first and clock.delta(inf.first, starts[0]) > ESTABLISHED_LEAD_S \
                    and not inf.roles & {"attacker", "reverse-shell"}:
                inf.established = True
        ips = [ip for ip in ips if not self.case.infra[ip].popular]
        if not ips:
            return
        names = self.tel.esql(
            f"FROM {ZSSL} METADATA _id | WHERE destination.ip IN ({q_in(ips)}) "
            "| STATS n = COUNT(*), first = MIN(@timestamp), id = MIN(_id) BY destination.ip, tls.client.server_name, source.ip "
            "| SORT n DESC | LIMIT 50"
        )
        for r in names:
            inf = self.case.infra.get(str(r.get("destination.ip")))
            sni = str(r.get("tls.client.server_name") or "")
            if inf is None or not sni:
                continue
            inf.names.add(sni)
            host = self.case.ip_host.get(str(r.get("source.ip")), str(r.get("source.ip")))
            if host in self.case.implicated:
                self.case.step(str(r.get("first")), host, f"zeek ssl: {host} opened {r.get('n')} TLS sessions to "
                           f"{inf.ip} with server name {sni}", ZSSL, r.get("id"), "T1071.001")
        dns = self.tel.esql(
            f"FROM {ZDNS} METADATA _id | WHERE dns.resolved_ip IN ({q_in(ips)}) "
            "| STATS n = COUNT(*), first = MIN(@timestamp), id = MIN(_id) BY dns.question.name, dns.resolved_ip, source.ip "
            "| SORT first | LIMIT 50"
        )
        for r in dns:
            name = str(r.get("dns.question.name") or "")
            inf = self.case.infra.get(str(r.get("dns.resolved_ip")))
            if inf is None or not name:
                continue
            inf.names.add(name)
            host = self.case.ip_host.get(str(r.get("source.ip")), str(r.get("source.ip")))
            if host in self.case.implicated:
                self.case.step(str(r.get("first")), host, f"zeek dns: {host} resolved {name} to {inf.ip}", ZDNS, r.get("id"))
        self.threat_intel(ips)

    def threat_intel(self: Analyst, ips: list[str]) -> None:
        doms = sorted({d for ip in ips for n in self.case.infra[ip].names for d in registered(n)})
        cond = f"threat.indicator.ip IN ({q_in(ips)})"
        if doms:
            cond += f" OR threat.indicator.url.domain IN ({q_in(doms)})"
        rows = self.tel.esql(
            f"FROM {TI} METADATA _id, _index | WHERE {cond} | KEEP _id, _index, threat.indicator.ip, "
            "threat.indicator.url.domain, threat.indicator.confidence, threat.feed.name, threat.indicator.description "
            "| LIMIT 50"
        )
        for r in rows:
            what = r.get("threat.indicator.ip") or r.get("threat.indicator.url.domain")
            for ip in ips:
                inf = self.case.infra[ip]
                if what == ip or any(what in registered(n) for n in inf.names):
                    inf.ti.append(f"{what}: {r.get('threat.feed.name')} ({r.get('threat.indicator.confidence')} "
                                  f"confidence) \"{r.get('threat.indicator.description')}\"")
                    self.ti_hits.append((str(r.get("_index")), str(r.get("_id")), str(what)))

    def scope_check(self: Analyst) -> None:
        """Did anyone else talk to the attacker's addresses? Peers of the implicated hosts, by name."""
        bad = sorted(ip for ip, inf in self.case.infra.items() if inf.roles and not inf.popular)
        if not bad:
            return
        talked = {h for ip in bad for h in self.case.infra[ip].contacts}
        implicated = set(self.case.implicated)
        peers = sorted(
            h for h in self.case.inventory
            if h not in implicated and h not in talked
            and any(name_stem(h) == name_stem(i) and h != i and
                    {subnet24(a) for a in self.case.inventory[h]} & {subnet24(a) for a in self.case.inventory.get(i, [])}
                    for i in implicated)
        )
        others = sorted(h for h in talked if h in self.case.inventory and h not in implicated)
        names = sorted({n for ip in bad for n in self.case.infra[ip].names})
        label = ", ".join(bad[:4]) + (f" / {', '.join(names[:3])}" if names else "")
        if others:
            self.case.scope_notes.append(f"{', '.join(others)} also contacted {label}.")
        only = ", ".join(sorted(talked & implicated)) or "the implicated hosts"
        peer_txt = f"; its peer {', '.join(peers)} made no connection to them" if peers else ""
        self.case.scope_notes.append(f"Scope: only {only} exchanged traffic with {label} in zeek{peer_txt}.")

    # -- an outside address as the starting point (scan alerts, exfil hunts, threat-intel matches) ---------------
    def investigate_external(self: Analyst, ip: str, why: str) -> None:
        if ip in self.externals_done:
            return
        self.externals_done.add(ip)
        inf = self.infra(ip)
        inf.why.append(why)
        rows = self.tel.esql(
            f"FROM {ZCONN} | WHERE source.ip == {q(ip)} | STATS n = COUNT(*), ports = COUNT_DISTINCT(destination.port), "
            "first = MIN(@timestamp), last = MAX(@timestamp) BY destination.ip | SORT n DESC | LIMIT 50"
        )
        targets = []
        for r in rows:
            dst = str(r.get("destination.ip"))
            host = self.case.ip_host.get(dst)
            if host:
                targets.append(host)
                inf.contacts[host] = inf.contacts.get(host, 0) + int(r.get("n") or 0)
            if int(r.get("ports") or 0) >= 10:
                inf.roles.add("scanner")
                self.case.step(str(r.get("first")), host or dst, f"zeek conn: {ip} probed {r.get('ports')} ports of "
                               f"{host or dst} ({dst}) with {r.get('n')} connections", ZCONN, None, "T1595.001")
        if rows:
            inf.roles.add("attacker")
        outbound = self.tel.esql(
            f"FROM {NET} METADATA _id | WHERE destination.ip == {q(ip)} "
            "| STATS n = COUNT(*), first = MIN(@timestamp), id = MIN(_id) BY host.name, process.entity_id, process.name "
            "| SORT first | LIMIT 20"
        )
        for r in outbound:
            p = self.fetch(r.get("process.entity_id"))
            if p is not None:
                inf.roles.add("c2")
                self.seeds_found.append(p)
        if targets:
            self.web_requests_from(ip, targets)
        self.logins_from(ip)
        self.suricata_for(ip)

    def logins_from(self: Analyst, ip: str) -> None:
        """ssh logins from an outside address: failures then a success is a brute force that worked."""
        rows = self.tel.esql(
            f"FROM {AUTH} METADATA _id | WHERE source.ip == {q(ip)} | STATS n = COUNT(*), first = MIN(@timestamp), "
            "last = MAX(@timestamp), id = MIN(_id) BY host.name, user.name, event.outcome | SORT first | LIMIT 100"
        )
        if not rows:
            return
        inf = self.infra(ip)
        fails = sum(int(r.get("n") or 0) for r in rows if r.get("event.outcome") == "failure")
        ok = [r for r in rows if r.get("event.outcome") == "success"]
        if fails:
            users = sorted({str(r.get("user.name")) for r in rows if r.get("event.outcome") == "failure"})
            first = min(str(r.get("first")) for r in rows)
            host = str(rows[0].get("host.name"))
            self.case.step(first, host, f"auth.log: {fails} failed ssh logins from {ip} ({len(users)} accounts"
                           f"{': ' + ', '.join(users[:4]) if len(users) <= 4 else ''})", AUTH, rows[0].get("id"),
                           "T1110.001" if len(users) <= 2 else "T1110.003")
            inf.roles.add("attacker")
        if fails >= BRUTE_FORCE_FAILURES:
            self.bruteforce_sources.add(ip)
        for r in ok:
            host = str(r.get("host.name"))
            if host not in self.case.inventory:
                continue
            inf.contacts[host] = inf.contacts.get(host, 0) + int(r.get("n") or 0)
            sessions = self.tel.esql(
                f"FROM {AUTH} METADATA _id | WHERE source.ip == {q(ip)} AND host.name == {q(host)} AND "
                "event.outcome == \"success\" | KEEP @timestamp, _id, user.name, process.pid, message "
                "| SORT @timestamp | LIMIT 5"
            )
            for s in sessions:
                if s.get("process.pid") is None:
                    continue
                priv = self.procs_where(f"host.name == {q(host)} AND process.pid == {int(s['process.pid'])} AND "
                                        f"{clock.between(str(s['@timestamp']), -60, 60)}", 3)
                if priv:
                    self.add_cluster(host, self.subtree(host, priv))
                    self.case.entries.setdefault(host, Entry(host, "ssh", f"ssh login as {s.get('user.name')} "
                                                             f"from {ip}", str(s["@timestamp"])))
                    self.session_roots.append((host, priv[0]))

    def web_requests_from(self: Analyst, ip: str, targets: list[str]) -> None:
        rows = self.tel.esql(
            f"FROM {ZHTTP} METADATA _id | WHERE source.ip == {q(ip)} | STATS n = COUNT(*), first = MIN(@timestamp), "
            "id = MIN(_id) BY destination.ip, http.request.method, url.original, http.response.status_code, "
            "user_agent.original | SORT first | LIMIT 300"
        )
        if not rows:
            return
        inf = self.infra(ip)
        agents = sorted({str(r.get("user_agent.original") or "") for r in rows} - {""})
        tool = next((t for a in agents for t in [mentions_any(a, SCANNER_AGENTS)] if t), None)
        per_host: dict[str, list[dict[str, Any]]] = {}
        for r in rows:
            per_host.setdefault(self.case.ip_host.get(str(r.get("destination.ip")), str(r.get("destination.ip"))),
                                []).append(r)
        for host, rs in sorted(per_host.items()):
            n = sum(int(r.get("n") or 1) for r in rs)
            ok = [r for r in rs if 200 <= int(r.get("http.response.status_code") or 0) < 300]
            self.case.step(str(rs[0].get("first")), host, f"zeek http: {ip} sent {n} requests to {host}"
                           + (f" with the {tool} scanner user agent" if tool else "")
                           + f"; {len(ok)} answered 2xx", ZHTTP, rs[0].get("id"), "T1595.003" if tool else "T1595.002")
            for r in ok:
                url = str(r.get("url.original") or "")
                if _SENSITIVE_WEB.search(url.split("?")[0]):
                    self.exposures.append((host, url, str(r.get("user_agent.original") or ""), str(r.get("first"))))
                    self.case.step(str(r.get("first")), host, f"{ip} downloaded {url} from {host} (HTTP "
                                   f"{r.get('http.response.status_code')}, user agent {r.get('user_agent.original')})",
                                   ZHTTP, r.get("id"), "T1213")
        if tool:
            inf.why.append(f"web scanner user agent: {tool}")
            self.scan_tools.add(tool)

    def suricata_for(self: Analyst, ip: str) -> None:
        rows = self.tel.esql(
            f"FROM {SURI} METADATA _id | WHERE source.ip == {q(ip)} OR destination.ip == {q(ip)} "
            "| STATS n = COUNT(*), first = MIN(@timestamp), id = MIN(_id) BY rule.name, source.ip, destination.ip "
            "| SORT first | LIMIT 20"
        )
        for r in rows:
            other = str(r.get("destination.ip")) if r.get("source.ip") == ip else str(r.get("source.ip"))
            host = self.case.ip_host.get(other, other)
            self.case.step(str(r.get("first")), host, f"suricata: \"{r.get('rule.name')}\" {r.get('source.ip')} -> "
                           f"{r.get('destination.ip')} ({r.get('n')}x)", SURI, r.get("id"))

    def exploitation_check(self: Analyst, hosts: list[str], since: str) -> list[Proc]:
        """After a scan: did any targeted web server start a shell? (that is what exploitation looks like)"""
        if not hosts:
            return []
        from pytest_soclab.agents.analyst.trace import shell_or_interp_cond, web_parent_cond

        return self.procs_where(f"host.name IN ({q_in(hosts)}) AND @timestamp >= {q(since)} AND {web_parent_cond()} "
                                f"AND {shell_or_interp_cond()}", 20)

    # -- DNS tunnelling ----------------------------------------------------------------------------------------
    def investigate_dns_client(self: Analyst, src_ip: str, when: str) -> None:
        rows = self.tel.esql(
            f"FROM {ZDNS} METADATA _id | WHERE source.ip == {q(src_ip)} AND LENGTH(dns.question.name) > 40 "
            "| STATS n = COUNT(*), first = MIN(@timestamp), last = MAX(@timestamp), id = MIN(_id), "
            "types = VALUES(dns.question.type), resolvers = VALUES(destination.ip) BY dns.question.registered_domain "
            "| SORT n DESC | LIMIT 5"
        )
        rows = [r for r in rows if int(r.get("n") or 0) >= 20 and r.get("dns.question.registered_domain")]
        if not rows:
            return
        r = rows[0]
        dom = str(r["dns.question.registered_domain"])
        client = self.case.ip_host.get(src_ip, src_ip)
        resolvers = [str(x) for x in as_list(r.get("resolvers"))]
        rnames = [f"{self.case.ip_host.get(x, x)} ({x})" for x in resolvers]
        types = ", ".join(str(t) for t in as_list(r.get("types")))
        samples = self.tel.esql(
            f"FROM {ZDNS} METADATA _id | WHERE source.ip == {q(src_ip)} AND dns.question.registered_domain == {q(dom)} "
            "| KEEP @timestamp, _id, source.ip, destination.ip, dns.question.name, dns.question.type, dns.answers.data "
            "| SORT @timestamp | LIMIT 3"
        )
        sub = ""
        if samples:
            labels = str(samples[0].get("dns.question.name") or "").split(".")
            parent = labels[-3:] if len(labels) > 3 else labels
            sub = ".".join(parent)
        self.tunnel = {"domain": dom, "zone": sub or dom, "client": client, "client_ip": src_ip, "count": int(r["n"]),
                       "first": str(r["first"]), "last": str(r["last"]), "types": types, "resolvers": rnames,
                       "resolver_hosts": [self.case.ip_host.get(x, "") for x in resolvers]}
        self.case.step(str(r["first"]), client, f"zeek dns: {client} ({src_ip}) sent {r['n']} queries with long encoded "
                       f"labels under {sub or dom} ({types}) between {clock.short(str(r['first']))} and "
                       f"{clock.short(str(r['last']))}, all through the resolver {', '.join(rnames)}: DNS tunnelling",
                       ZDNS, samples[0].get("_id") if samples else r.get("id"), "T1071.004")
        self.case.techniques.setdefault("T1048.003", "exfiltration over DNS")
        if client not in self.case.inventory:
            return
        procs = self.tel.esql(
            f"FROM {NET} METADATA _id | WHERE host.name == {q(client)} AND destination.port == 53 AND "
            f"@timestamp >= {q(r['first'])} AND @timestamp <= {q(r['last'])} "
            "| STATS n = COUNT(*), id = MIN(_id) BY process.entity_id, process.name, process.pid, destination.ip "
            "| SORT n DESC | LIMIT 5"
        )
        if procs:
            top = procs[0]
            p = self.fetch(top.get("process.entity_id"))
            if p is not None:
                self.case.step(str(r["first"]), client, f"{p.name} (pid {p.pid}) on {client} made {top.get('n')} of the "
                               f"DNS requests in that window", NET, top.get("id"), "T1071.004")
                self.tunnel["process"] = p
                self.seeds_found.append(p)


def registered(name: str) -> list[str]:
    """The name and its parent domains down to two labels: cdn.x.net -> [cdn.x.net, x.net]."""
    parts = name.lower().strip(".").split(".")
    return [".".join(parts[i:]) for i in range(max(1, len(parts) - 1))]
