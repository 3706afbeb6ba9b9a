"""Process trees and sessions: from one suspicious process to the whole of the attacker's activity.

Backward: walk the parents of a process to where its session starts (a web server worker, an ssh
login, a desktop session, systemd or cron). Forward: take every descendant of the session's root.
Sideways: an ssh session's login gives its source address (another host to trace when the session
did harm); an ssh or scp command run by the attacker gives the next host and its login.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_soclab.agents.analyst import clock
from pytest_soclab.agents.analyst.state import Entry, Login, Proc
from pytest_soclab.agents.analyst.store import AUTH, FILE, NET, PROC, q, q_in
from pytest_soclab.agents.analyst.tradecraft import (
    DESKTOP_SESSIONS,
    SHELLS,
    SYSTEM_ROOTS,
    WEB_SERVER_PREFIXES,
    base,
    classify,
    credential_kind,
    in_writable_dir,
    is_internal,
    is_shell,
    is_web_server,
    persistence_kind,
    unusual_executable,
)

if TYPE_CHECKING:
    from pytest_soclab.agents.analyst.core import Analyst

PROC_KEEP = ("@timestamp, _id, host.name, process.pid, process.entity_id, process.name, process.executable, "
             "process.command_line, process.parent.entity_id, process.parent.pid, process.parent.name, "
             "process.parent.command_line, process.working_directory, user.name")
MAX_DEPTH = 10  # ancestry and subtree levels
MAX_CLUSTER = 300  # processes per host
MALICE_THRESHOLD = 7


def web_parent_cond() -> str:
    return "(" + " OR ".join(f"process.parent.name LIKE {q(p + '*')}" for p in WEB_SERVER_PREFIXES) + ")"


def shell_or_interp_cond() -> str:
    names = q_in(SHELLS)
    interp = " OR ".join(f"process.name LIKE {q(p + '*')}" for p in ("python", "perl", "ruby", "php", "lua"))
    return f"(process.name IN ({names}) OR {interp})"


def interactive_shell(p: Proc) -> bool:
    c = p.cmd.strip()
    return is_shell(p.name) and (c in ("", "-" + p.name) or base(c.split()[0] if c else "").lstrip("-") in SHELLS
                                 and " -c" not in f" {c}")


def malice(procs: list[Proc]) -> tuple[int, int]:
    """(score, strongest weight) of a set of processes: each kind of behaviour counts once, at its
    strongest (a scheduled job that connects to ten hosts is one lateral-looking behaviour, not ten)."""
    best: dict[str, int] = {}
    for p in procs:
        for b in p.behaviours:
            best[b.tag] = max(best.get(b.tag, 0), b.weight)
    return sum(best.values()), max(best.values(), default=0)


class Tracing:
    # -- fetching ---------------------------------------------------------------------------------
    def procs_where(self: Analyst, where: str, limit: int = 300) -> list[Proc]:
        rows = self.tel.esql(
            f"FROM {PROC} METADATA _id | WHERE event.action == \"exec\" AND {where} | KEEP {PROC_KEEP} "
            f"| SORT @timestamp | LIMIT {limit}"
        )
        out = []
        for r in rows:
            p = Proc.from_row(r)
            known = self.case.procs.setdefault(p.eid, p)
            out.append(known)
        return out

    def fetch(self: Analyst, eid: str | None) -> Proc | None:
        if not eid:
            return None
        if eid in self.case.procs:
            return self.case.procs[eid]
        got = self.procs_where(f"process.entity_id == {q(eid)}", limit=2)
        return got[0] if got else None

    # -- backward -----------------------------------------------------------------------------------
    def ancestry(self: Analyst, p: Proc) -> list[Proc]:
        """p, its parent, ... up to the process whose parent starts sessions."""
        chain = [p]
        cur = p
        while len(chain) < MAX_DEPTH:
            pn = base(cur.parent_name)
            if is_web_server(pn, cur.parent_cmd) or pn in SYSTEM_ROOTS or pn in DESKTOP_SESSIONS:
                break
            if cur.name == "sshd" and ("[priv]" in cur.cmd or pn == "sshd" and "@" not in cur.cmd):
                break  # the session's privileged sshd: its parent is the listener
            parent = self.fetch(cur.parent_eid)
            if parent is None or parent.eid in {c.eid for c in chain}:
                break
            chain.append(parent)
            cur = parent
        return chain

    def entry_of(self: Analyst, chain: list[Proc]) -> tuple[str, Proc]:
        """How the chain's session started, and the root of the activity to take whole."""
        top = chain[-1]
        pn = base(top.parent_name)
        if is_web_server(pn, top.parent_cmd):
            return "web", top
        if top.name == "sshd":
            return "ssh", top
        if pn in DESKTOP_SESSIONS or pn == "sshd":
            # The user's own terminal: the activity starts at the first non-interactive process under it.
            for p in reversed(chain):
                if not interactive_shell(p):
                    return "user", p
            return "user", chain[0]
        if pn in ("cron", "CRON", "crond", "atd"):
            return "cron", top
        if pn in SYSTEM_ROOTS:
            return "service", top
        return "unknown", top

    # -- forward ---------------------------------------------------------------------------------------
    def subtree(self: Analyst, host: str, roots: list[Proc]) -> set[str]:
        members = {r.eid for r in roots}
        frontier = sorted(members)
        for _ in range(MAX_DEPTH):
            if not frontier or len(members) > MAX_CLUSTER:
                break
            kids = self.procs_where(f"host.name == {q(host)} AND process.parent.entity_id IN ({q_in(frontier)})", 500)
            frontier = sorted({k.eid for k in kids} - members)
            members |= set(frontier)
        return members

    def web_spawned(self: Analyst, host: str) -> list[Proc]:
        """Every shell or interpreter a web server worker started on the host: none is normal."""
        return self.procs_where(f"host.name == {q(host)} AND {web_parent_cond()} AND {shell_or_interp_cond()}", 50)

    def add_cluster(self: Analyst, host: str, eids: set[str]) -> set[str]:
        cur = self.case.cluster.setdefault(host, set())
        new = eids - cur
        cur |= eids
        return new

    def trace_process(self: Analyst, p: Proc, why: str) -> None:
        """Take the whole activity a suspicious process belongs to."""
        if p.eid in self.traced:
            return
        chain = self.ancestry(p)
        kind, root = self.entry_of(chain)
        host = p.host
        self.traced |= {c.eid for c in chain}
        roots = [root]
        if kind == "web":
            found = {x.eid: x for x in [*self.web_spawned(host), root]}
            roots = sorted(found.values(), key=lambda x: (x.start, x.eid))
        self.add_cluster(host, self.subtree(host, roots))
        self.note_entry(host, kind, root, roots, why)
        if kind == "ssh":
            self.session_roots.append((host, root))
        elif kind in ("service", "cron", "user", "unknown") and unusual_executable(root.exe):
            self.origin_of_executable(host, root)

    def note_entry(self: Analyst, host: str, kind: str, root: Proc, roots: list[Proc], why: str) -> None:
        if host in self.case.entries:
            return
        detail = {
            "web": f"commands run by the web server ({base(root.parent_name)}) as {root.user}",
            "ssh": "an ssh session",
            "user": f"a process started in {root.user}'s desktop session",
            "service": f"a process started by {base(root.parent_name)}",
            "cron": "a cron job",
        }.get(kind, "an unknown parent")
        self.case.entries[host] = Entry(host, kind, detail, min(r.start for r in roots))
        if kind == "web":
            self.web_hosts[host] = roots

    def origin_of_executable(self: Analyst, host: str, p: Proc) -> None:
        """A binary in an unusual place: who wrote it? That process's activity is the way in."""
        rows = self.tel.esql(
            f"FROM {FILE} METADATA _id | WHERE host.name == {q(host)} AND file.path == {q(p.exe)} "
            "| KEEP @timestamp, _id, file.path, event.action, process.entity_id, process.name, file.hash.sha256 "
            "| SORT @timestamp | LIMIT 5"
        )
        for r in rows:
            if r.get("event.action") in ("deletion",):
                continue
            self.case.step(r["@timestamp"], host, f"{r.get('process.name')} wrote {p.exe}", FILE, r.get("_id"), "T1105")
            writer = self.fetch(r.get("process.entity_id"))
            if writer is not None:
                self.trace_process(writer, f"wrote {p.exe}")
            break

    # -- sessions and logins -------------------------------------------------------------------------------
    def session_login(self: Analyst, host: str, priv: Proc) -> Login | None:
        """The auth.log line of an ssh session (by its sshd pid) and the failures before it."""
        if priv.pid is None:
            return None
        rows = self.tel.esql(
            f"FROM {AUTH} METADATA _id | WHERE host.name == {q(host)} AND {clock.between(priv.start, -1800, 120)} "
            f"AND ((process.pid == {priv.pid} AND event.outcome == \"success\") OR event.outcome == \"failure\") "
            "| KEEP @timestamp, _id, event.outcome, user.name, source.ip, message, process.pid, system.auth.ssh.method "
            "| SORT @timestamp | LIMIT 100"
        )
        ok = [r for r in rows if r.get("event.outcome") == "success" and r.get("process.pid") == priv.pid]
        if not ok:
            return None
        r = ok[0]
        src = str(r.get("source.ip") or "")
        user = str(r.get("user.name") or "")
        fails = [x for x in rows if x.get("event.outcome") == "failure" and x.get("source.ip") == src
                 and x.get("user.name") == user and x["@timestamp"] <= r["@timestamp"]]
        login = Login(host, user, src, str(r.get("system.auth.ssh.method") or ""), r["@timestamp"], priv.pid,
                      r.get("_id"), str(r.get("message") or ""), len(fails), self.case.ip_host.get(src))
        login.fail_ids = [str(x.get("_id")) for x in fails]
        login.fail_msg = str(fails[-1].get("message") or "") if fails else ""
        return login

    def resolve_sessions(self: Analyst) -> None:
        """For each session root: its login; a harmful session leads back to the host it came from."""
        while self.session_roots:
            host, priv = self.session_roots.pop(0)
            if priv.eid in self.sessions_done:
                continue
            self.sessions_done.add(priv.eid)
            login = self.session_login(host, priv)
            if login is None:
                continue
            procs = [self.case.procs[e] for e in self.case.cluster.get(host, set()) if e in self.case.procs]
            for p in procs:
                if not p.behaviours:
                    p.behaviours = classify(p.cmd, p.name, p.exe, p.parent_name, p.parent_cmd)
            score, top = malice(procs)
            login.malicious = score >= MALICE_THRESHOLD or top >= 5 or login.src_ip in self.bruteforce_sources
            self.case.logins.append(login)
            if not login.malicious:
                continue
            self.mark_login(login)
            if login.src_host and is_internal(login.src_ip):
                self.trace_source(login)
            elif not is_internal(login.src_ip):
                self.infra(login.src_ip).roles.add("attacker")

    def mark_login(self: Analyst, login: Login) -> None:
        how = f"{login.method} " if login.method else ""
        after = f" after {login.failures} failed attempts (\"{login.fail_msg}\")" if login.failures and login.fail_msg \
            else f" after {login.failures} failed attempts" if login.failures else ""
        src = f"{login.src_ip}" + (f" ({login.src_host})" if login.src_host else "")
        self.case.step(login.time, login.host, f"{login.user} logged in to {login.host} over ssh with {how}"
                       f"authentication from {src}{after}: \"{login.message}\"", AUTH, login.doc_id,
                       "T1021.004" if login.src_host else "T1078")
        self.case.compromised_users.setdefault(login.user, f"used to log in to {login.host} from {src}")

    def trace_source(self: Analyst, login: Login) -> None:
        """The process on the source host that opened the ssh connection: the attacker's previous hop."""
        src_host = login.src_host
        if not src_host or src_host in self.hops_done:
            return
        self.hops_done.add(src_host)
        dst_ips = self.case.inventory.get(login.host, [])
        if not dst_ips:
            return
        rows = self.tel.esql(
            f"FROM {NET} METADATA _id | WHERE host.name == {q(src_host)} AND destination.ip IN ({q_in(dst_ips)}) "
            f"AND destination.port == 22 AND {clock.between(login.time, -900, 5)} "
            "| KEEP @timestamp, _id, process.entity_id, process.name, process.pid, destination.ip "
            "| SORT @timestamp DESC | LIMIT 5"
        )
        for r in rows:
            p = self.fetch(r.get("process.entity_id"))
            if p is not None:
                self.case.step(r["@timestamp"], src_host, f"{p.short(80)} (pid {p.pid}) on {src_host} opened the ssh "
                               f"connection to {login.host}", NET, r.get("_id"), "T1021.004")
                self.trace_process(p, f"opened the ssh session to {login.host}")
                return

    # -- what the attacker's processes did --------------------------------------------------------------------
    def analyse(self: Analyst, eids: set[str]) -> None:
        procs = [self.case.procs[e] for e in sorted(eids) if e in self.case.procs]
        for p in procs:
            if not p.behaviours:
                p.behaviours = classify(p.cmd, p.name, p.exe, p.parent_name, p.parent_cmd)
        if not procs:
            return
        self.cluster_ends(procs)
        self.cluster_network(procs)
        self.cluster_files(procs)
        self.follow_lateral(procs)

    def cluster_ends(self: Analyst, procs: list[Proc]) -> None:
        rows = self.tel.esql(
            f"FROM {PROC} | WHERE event.action == \"end\" AND process.entity_id IN ({q_in(p.eid for p in procs)}) "
            "| KEEP process.entity_id | LIMIT 1000"
        )
        ended = {r.get("process.entity_id") for r in rows}
        for p in procs:
            p.ended = p.eid in ended

    def cluster_network(self: Analyst, procs: list[Proc]) -> None:
        rows = self.tel.esql(
            f"FROM {NET} METADATA _id | WHERE process.entity_id IN ({q_in(p.eid for p in procs)}) "
            "| STATS n = COUNT(*), first = MIN(@timestamp), last = MAX(@timestamp), id = MIN(_id) "
            "BY host.name, process.entity_id, process.name, destination.ip, destination.port | SORT first | LIMIT 300"
        )
        for r in rows:
            p = self.case.procs.get(r.get("process.entity_id"))
            ip = str(r.get("destination.ip") or "")
            if p is None or not ip or ip in self.case.inventory.get(p.host, []):
                continue
            self.connections.append((p, ip, r))

    def cluster_files(self: Analyst, procs: list[Proc]) -> None:
        rows = self.tel.esql(
            f"FROM {FILE} METADATA _id | WHERE process.entity_id IN ({q_in(p.eid for p in procs)}) "
            "| KEEP @timestamp, _id, host.name, file.path, event.action, process.name, process.entity_id, file.hash.sha256 "
            "| SORT @timestamp | LIMIT 300"
        )
        written: dict[str, tuple[str, set[str]]] = {}  # host -> (first persistence time, unit names)
        for r in rows:
            path = str(r.get("file.path") or "")
            host = str(r.get("host.name") or "")
            action = str(r.get("event.action") or "")
            who = str(r.get("process.name") or "")
            pk = persistence_kind(path)
            if action == "deletion":
                self.case.step(r["@timestamp"], host, f"{who} deleted {path}", FILE, r.get("_id"), "T1070.004")
            elif pk:
                self.case.artifact(path, host, "persistence", f"{pk[1]} written by {who}", r["@timestamp"], pk[0])
                self.case.step(r["@timestamp"], host, f"{who} wrote {pk[1]}: {path}", FILE, r.get("_id"), pk[0])
                since, units = written.get(host, (str(r["@timestamp"]), set()))
                if path.endswith((".service", ".timer")):
                    units.add(base(path).rsplit(".", 1)[0])
                written[host] = (min(since, str(r["@timestamp"])), units)
            elif in_writable_dir(path) or base(path).startswith("."):
                role = "staging" if credential_kind(path) or path.endswith((".tgz", ".gz", ".zip", ".tar", ".sql", ".db")) \
                    else "dropped"
                self.case.artifact(path, host, role, f"written by {who}", r["@timestamp"])
                self.case.step(r["@timestamp"], host, f"{who} wrote {path}", FILE, r.get("_id"),
                               "T1105" if role == "dropped" else "T1074.001")

        for host, (since, units) in sorted(written.items()):
            self.persistence_payloads(host, since, units)

    def persistence_payloads(self: Analyst, host: str, since: str, units: set[str]) -> None:
        """What the persistence starts: systemd or cron run it, not the process tree that wrote it.
        Look for the unit's program, and binaries in unusual places, started on the host since."""
        conds = ["process.executable LIKE \"/home/*/.*\"", "process.executable LIKE \"/root/.*\"",
                 "process.executable LIKE \"/tmp/*\"", "process.executable LIKE \"/dev/shm/*\"",
                 "process.executable LIKE \"/var/tmp/*\""]
        if units:
            conds.append(f"process.name IN ({q_in(units)})")
        found = self.procs_where(f"host.name == {q(host)} AND @timestamp >= {q(since)} AND ({' OR '.join(conds)})", 20)
        fresh = [p for p in found if unusual_executable(p.exe) and p.eid not in self.analysed]
        self.seeds_found += fresh[:5]

    def host_is_malicious(self: Analyst, host: str) -> bool:
        procs = [self.case.procs[e] for e in self.case.cluster.get(host, set()) if e in self.case.procs]
        score, top = malice(procs)
        return score >= MALICE_THRESHOLD or top >= 5 or any(lg.malicious and lg.host == host for lg in self.case.logins)

    def follow_lateral(self: Analyst, procs: list[Proc]) -> None:
        """ssh / scp from the attacker's processes: the logins they produced on the next hosts. Only from a
        host whose activity is harmful: a backup job that logs in everywhere is not lateral movement."""
        targets: dict[str, tuple[str, Proc]] = {}
        for p in procs:
            if not self.host_is_malicious(p.host):
                continue
            for b in p.behaviours:
                if b.tag != "lateral" or "@" not in b.target:
                    continue
                user, dest = b.target.split("@", 1)
                host = self.case.ip_host.get(dest) or (dest if dest in self.case.inventory else None)
                if host and host != p.host:
                    targets.setdefault(f"{host}|{user}|{p.host}", (user, p))
        for key in sorted(targets):
            host, user, src = key.split("|")
            self.lateral_logins(src, host, user, targets[key][1])

    def lateral_logins(self: Analyst, src: str, host: str, user: str, p: Proc) -> None:
        src_ips = self.case.inventory.get(src, [])
        if not src_ips or (src, host, user) in self.lateral_done:
            return
        self.lateral_done.add((src, host, user))
        rows = self.tel.esql(
            f"FROM {AUTH} METADATA _id | WHERE host.name == {q(host)} AND source.ip IN ({q_in(src_ips)}) "
            f"AND user.name == {q(user)} AND {clock.between(p.start, -30, 900)} "
            "| KEEP @timestamp, _id, event.outcome, user.name, source.ip, message, process.pid, system.auth.ssh.method "
            "| SORT @timestamp | LIMIT 20"
        )
        ok = [r for r in rows if r.get("event.outcome") == "success"]
        fails = [r for r in rows if r.get("event.outcome") != "success"]
        if not ok:
            # Only failures: the attacker tried and did not get in.
            for r in fails[:1]:
                login = Login(host, user, str(r.get("source.ip")), str(r.get("system.auth.ssh.method") or ""),
                              r["@timestamp"], r.get("process.pid"), r.get("_id"), str(r.get("message") or ""), len(fails),
                              src, True)
                self.case.failed_logins.append(login)
                self.case.step(r["@timestamp"], host, f"failed ssh login as {user} from {src}: \"{login.message}\"",
                               AUTH, r.get("_id"), "T1021.004")
            return
        for r in ok[:3]:
            before = [f for f in fails if f["@timestamp"] <= r["@timestamp"]]
            login = Login(host, user, str(r.get("source.ip")), str(r.get("system.auth.ssh.method") or ""), r["@timestamp"],
                          r.get("process.pid"), r.get("_id"), str(r.get("message") or ""), len(before), src, True,
                          [str(f.get("_id")) for f in before], str(before[-1].get("message") or "") if before else "")
            fails = [f for f in fails if f not in before]
            self.case.logins.append(login)
            self.mark_login(login)
            if login.sshd_pid is None:
                continue
            priv = self.procs_where(f"host.name == {q(host)} AND process.pid == {int(login.sshd_pid)} AND "
                                    f"{clock.between(login.time, -60, 60)}", 3)
            if priv:
                self.sessions_done.add(priv[0].eid)
                self.case.entries.setdefault(host, Entry(host, "ssh", f"ssh login as {user} from {src}", login.time))
                self.add_cluster(host, self.subtree(host, priv))

