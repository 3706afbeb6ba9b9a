"""Proportionate containment.

Policy (the order a responder follows):
- stop the attacker's processes that are still running (implant, reverse shell, beacon) rather than
  taking a host off the network;
- remove the persistence the attacker wrote, so that stopping the process holds;
- isolate a host only when it was the attacker's foothold and nothing running can be stopped there
  (the way in may still be open), or when the foothold is a workstation (isolating it costs one
  user an afternoon, and a workstation's way in, the user's session, stays open otherwise); never a
  host the attacker did not run anything on;
- block the outside addresses that served the attack (C2, download, exfiltration, the source of the
  exploitation or of a scan); never an address many internal hosts use (a business service);
- disable accounts whose credentials the attacker logged in with, except accounts that run a scheduled
  job (rotate their credentials instead: disabling them breaks the job);
- act only on strong evidence; a benign verdict takes no action;
- execute containment: stop a process, remove the attacker's persistence (its content is already in
  the telemetry), isolate a host, block an address, disable an account (re-enabled in a click); never
  delete files or wipe hosts: that destroys evidence, and is left for a human after preservation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_soclab.agents.analyst.store import PROC, ZCONN, q, q_in
from pytest_soclab.agents.analyst.tradecraft import DESKTOP_SESSIONS, is_internal, is_web_server

if TYPE_CHECKING:
    from pytest_soclab.agents.analyst.core import Analyst

_KILL_TAGS = {"unusual_exec", "reverse_shell", "web_spawn", "miner"}
NEVER_EXECUTED = frozenset({"wipe_host", "delete_file"})  # evidence is destroyed: a human decides
INFRA_CLIENTS = 3  # internal clients of a host's DNS / Kerberos / LDAP service that make it core infrastructure
_BLOCK_ROLES = {"c2", "exfil", "download", "reverse-shell", "attacker", "scanner"}


class Response:
    def response_plan(self: Analyst) -> list[tuple[str, dict[str, Any], str]]:
        c = self.case
        plan: list[tuple[str, dict[str, Any], str]] = []
        self.review: list[str] = []
        if c.verdict not in ("malicious", "reconnaissance"):
            return plan
        for host in c.implicated:
            running = running_targets([c.procs[e] for e in c.cluster[host] if e in c.procs])
            for p in running:
                what = max(p.behaviours, key=lambda b: b.weight).what if p.behaviours else \
                    f"the attacker's {p.name} held open by its parent"
                plan.append(("kill_process", {"host": host, "pid": int(p.pid or 0)},
                             f"{p.short(60)} (pid {p.pid}) is still running: {what}"))
            for (h, path), art in sorted(c.artifacts.items()):
                if h == host and art.role == "persistence":
                    plan.append(("remove_persistence", {"host": host, "path": path}, f"remove {art.why}"))
            entry = c.entries.get(host)
            if running and self.used_as_foothold(host) and self.is_workstation(host):
                plan.append(("isolate_host", {"host": host},
                             "a compromised workstation the attacker worked from: off the network while it is examined"))
            elif not running and entry is not None and entry.kind == "web" and self.used_as_foothold(host):
                if self.serves_infrastructure(host):
                    self.review.append(f"Isolate {host} only after review: it serves the estate's core network "
                                       "services (DNS / Kerberos / LDAP) to other hosts.")
                else:
                    plan.append(("isolate_host", {"host": host},
                                 "the attacker's foothold: nothing left running to stop, and the way in is still open"))
        for ip, inf in sorted(c.infra.items()):
            if inf.popular or is_internal(ip) or not inf.roles & _BLOCK_ROLES:
                continue
            if c.verdict == "reconnaissance" and not inf.roles & {"scanner", "attacker"}:
                continue
            if inf.established:
                self.review.append(f"Review {ip} before blocking it: the estate used it long before the attack.")
                continue
            plan.append(("block_ip", {"ip": ip}, f"{', '.join(sorted(inf.roles))} address"))
        for user in sorted(c.compromised_users):
            if user in c.scheduled_users or user in ("root",):
                continue
            plan.append(("disable_user", {"user": user}, "its credentials are in the attacker's hands"))
        return plan

    def serves_infrastructure(self: Analyst, host: str) -> bool:
        """A DNS resolver, domain controller or directory: taking it off the network takes the estate down."""
        ips = self.case.inventory.get(host, [])
        if not ips:
            return False
        rows = self.tel.esql(
            f"FROM {ZCONN} | WHERE destination.ip IN ({q_in(ips)}) AND destination.port IN (53, 88, 389, 636) "
            "| STATS clients = COUNT_DISTINCT(source.ip) | LIMIT 1"
        )
        return bool(rows) and int(rows[0].get("clients") or 0) >= INFRA_CLIENTS

    def is_workstation(self: Analyst, host: str) -> bool:
        """A desktop session runs there: a person's machine, not a server."""
        rows = self.tel.esql(
            f"FROM {PROC} | WHERE host.name == {q(host)} AND process.name IN ({q_in(DESKTOP_SESSIONS)}) "
            "| STATS n = COUNT(*) | LIMIT 1"
        )
        return bool(rows) and int(rows[0].get("n") or 0) > 0

    def used_as_foothold(self: Analyst, host: str) -> bool:
        """The attacker worked from this host: logins from it, credentials taken on it, or data sent."""
        ips = set(self.case.inventory.get(host, []))
        return any(lg.src_ip in ips for lg in self.case.logins + self.case.failed_logins) or bool(self.stolen.get(host)) \
            or any(host in inf.contacts and inf.roles & {"reverse-shell", "exfil"} for inf in self.case.infra.values())

    def respond(self: Analyst) -> None:
        """Execute the plan when the scenario grants the tools and the evidence is strong."""
        self.executed: list[tuple[str, dict[str, Any], str, bool]] = []
        strong = self.case.verdict in ("malicious", "reconnaissance") and len(self.case.steps) >= 3
        if not strong:
            return
        for tool, args, why in self.response_plan():
            if tool in self.allowed and tool not in NEVER_EXECUTED:
                self.execute(tool, args, why)

    def execute(self: Analyst, tool: str, args: dict[str, Any], why: str) -> bool:
        ok = self.act(tool, **args, comment=why)
        self.executed.append((tool, args, why, ok))
        return ok

    def act(self: Analyst, tool: str, **args: Any) -> bool:
        from pytest_soclab.errors import ToolError

        if tool not in self.allowed:
            return False
        try:
            self.tools.call(tool, **args)
        except ToolError as err:
            self.case.notes.append(f"{tool} {args} refused: {(err.reason or '')[:160]}")
            return False
        return True


def running_targets(procs: list[Any]) -> list[Any]:
    """The attacker's processes still alive: implants, reverse shells, shells started by the web server,
    and the interactive shells they hold open."""
    alive = [p for p in procs if p.ended is False and p.pid and p.name != "sshd" and not is_web_server(p.name, p.cmd)]
    core = {p.eid for p in alive if {b.tag for b in p.behaviours} & _KILL_TAGS}
    out = [p for p in alive if p.eid in core or p.parent_eid in core]
    return sorted(out, key=lambda p: (p.start, p.pid or 0))

