"""Telling the attack apart from the estate's own noisy work: who runs a recurring alert (a scanner, a
configuration-management run, a package update), what an abused account normally does, and whether
a host whose data was stolen was itself touched."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_soclab.agents.analyst import clock
from pytest_soclab.agents.analyst.state import Proc
from pytest_soclab.agents.analyst.store import AUTH, PROC, ZHTTP, q, q_in
from pytest_soclab.agents.analyst.tradecraft import (
    CONFIG_MANAGEMENT,
    SCANNER_TOOLS,
    all_mentions,
    base,
    is_package_manager,
    mentions_any,
)

if TYPE_CHECKING:
    from pytest_soclab.agents.analyst.core import Analyst


def _spread(group: list[dict[str, Any]]) -> tuple[list[str], list[str], list[str]]:
    """Where and when a group of alerts fired: its hosts, days and times of day (HH:MM), each sorted."""
    hosts = sorted({str(a.get("host.name")) for a in group})
    days = sorted({clock.day(str(a.get("@timestamp"))) for a in group})
    times = sorted({clock.hm(str(a.get("@timestamp"))) for a in group})
    return hosts, days, times


class Context:
    def explain_process(self: Analyst, p: Proc) -> dict[str, Any]:
        """Who is behind a process: its session, its user, where the session came from and what that
        source host is (a scanner, a configuration-management controller), or a package manager."""
        chain = self.ancestry(p)
        kind, root = self.entry_of(chain)
        out: dict[str, Any] = {"kind": kind, "root": root, "chain": chain, "user": root.user, "host": p.host}
        cmds = " ".join(c.cmd for c in chain)
        pm = next((c for c in chain if is_package_manager(c.name, c.cmd)), None)
        if pm is not None:
            out["label"] = "package"
            out["manager"] = next((c for c in reversed(chain) if is_package_manager(c.name, c.cmd)), pm)
        cm = mentions_any(cmds + " " + " ".join(c.user for c in chain), CONFIG_MANAGEMENT)
        if cm:
            out["label"] = "config-management"
            out["tool"] = cm
        if kind == "ssh":
            login = self.session_login(p.host, root)
            if login is not None:
                out["login"] = login
                if login.src_host:
                    out["source"] = self.profile_host(login.src_host)
                    tool = out["source"].get("tool")
                    if tool and "label" not in out:
                        out["label"] = "scanner" if mentions_any(tool, SCANNER_TOOLS) else "config-management"
                        out["tool"] = tool
        return out

    def profile_host(self: Analyst, host: str) -> dict[str, Any]:
        """What a host runs, to recognise the organisation's scanners and automation controllers."""
        if host in self.profiles:
            return self.profiles[host]
        rows = self.tel.esql(
            f"FROM {PROC} | WHERE host.name == {q(host)} AND event.action == \"exec\" "
            "| STATS n = COUNT(*) BY host.name, process.name, process.parent.command_line, user.name "
            "| SORT n DESC | LIMIT 60"
        )
        tool = None
        for r in rows:
            text = f"{r.get('process.name')} {r.get('process.parent.command_line')}"
            tool = mentions_any(text, SCANNER_TOOLS) or mentions_any(text, CONFIG_MANAGEMENT) or tool
            if tool and mentions_any(text, SCANNER_TOOLS):
                break
        tools = sorted({t for r in rows for t in all_mentions(f"{r.get('process.name')} "
                                                              f"{r.get('process.parent.command_line')}", SCANNER_TOOLS)})
        prof = {"host": host, "tool": tool, "tools": tools, "ips": self.case.inventory.get(host, [])}
        self.profiles[host] = prof
        return prof

    def describe(self: Analyst, info: dict[str, Any]) -> str:
        """One line on who ran it, for the report."""
        login = info.get("login")
        src = info.get("source") or {}
        label = info.get("label")
        if label == "package":
            m: Proc = info["manager"]
            return f"the package manager ({m.short(70)}, started by {base(m.parent_name)})"
        who = f"{info.get('user')}"
        if login is not None:
            how = "key-based (publickey) login" if login.method == "publickey" else f"{login.method} login"
            who = f"{login.user} in an ssh session from {login.src_host or login.src_ip} ({login.src_ip}, {how})"
        if label == "scanner":
            tools = ", ".join(src.get("tools") or [info.get("tool")])
            return f"{who}: the vulnerability scanner's scheduled scan ({tools} on {src.get('host')})"
        if label == "config-management":
            return f"{who}: configuration management ({info.get('tool')})"
        return who

    def explain_groups(self: Analyst) -> None:
        """The trigger rule's recurring pattern, and the other rules of the night at its severity or above."""
        trig = self.case.trigger_alert
        for group, rep, is_mine in getattr(self, "rule_pattern", []):
            info = self.explain_alert(rep)
            if info is None:
                continue
            hosts, days, times = _spread(group)
            when = f"around {times[0]} UTC" + clock.on_days(days, times[0])
            self.pattern_info.append({"group": group, "info": info, "hosts": hosts, "days": days, "when": when,
                                      "mine": is_mine, "rule": trig.get("kibana.alert.rule.name") if trig else ""})
        for name, group in self.other_groups:
            rep = group[0]
            info = self.explain_alert(rep)
            if info is None:
                continue
            hosts, days, times = _spread(group)
            self.other_info.append({"rule": name, "group": group, "info": info, "hosts": hosts, "days": days,
                                    "when": f"around {times[0]} UTC", "severity": rep.get("kibana.alert.severity")})

    def explain_alert(self: Analyst, a: dict[str, Any]) -> dict[str, Any] | None:
        p = self.fetch(a.get("process.entity_id"))
        if p is None:
            return None
        return self.explain_process(p)

    def package_download(self: Analyst, host: str, when: str) -> list[dict[str, Any]]:
        """The package downloads of an update: zeek http from the host to its mirrors just before."""
        ips = self.case.inventory.get(host, [])
        if not ips:
            return []
        return self.tel.esql(
            f"FROM {ZHTTP} METADATA _id | WHERE source.ip IN ({q_in(ips)}) AND {clock.between(when, -1800, 120)} "
            "AND url.original LIKE \"*.deb\" | KEEP @timestamp, _id, destination.ip, url.domain, url.original, "
            "http.response.status_code, user_agent.original | SORT @timestamp | LIMIT 10"
        )

    def profile_accounts(self: Analyst) -> None:
        """What each abused account normally does: an account that runs a scheduled job every night is
        rotated, not disabled (disabling it breaks the job)."""
        users = sorted(self.case.compromised_users)
        if not users:
            return
        rows = self.tel.esql(
            f"FROM {AUTH} | WHERE user.name IN ({q_in(users)}) AND event.outcome == \"success\" "
            "| KEEP @timestamp, user.name, source.ip, host.name | SORT @timestamp | LIMIT 1000"
        )
        bad_sources = {(lg.user, lg.src_ip) for lg in self.case.logins if lg.malicious}
        by: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for r in rows:
            key = (str(r.get("user.name")), str(r.get("source.ip")))
            if key not in bad_sources:
                by.setdefault(key, []).append(r)
        for (user, src), rs in sorted(by.items()):
            if scheduled(rs):
                hosts = len({r.get("host.name") for r in rs})
                at = min(clock.hm(str(r.get("@timestamp"))) for r in rs)
                self.scheduled_sources[user] = (src, len(rs), hosts, at)
        if not self.scheduled_sources:
            return
        what = self.tel.esql(
            f"FROM {PROC} | WHERE user.name IN ({q_in(self.scheduled_sources)}) AND event.action == \"exec\" "
            "| STATS n = COUNT(*), hosts = COUNT_DISTINCT(host.name), first = MIN(@timestamp), "
            "cmd = MIN(process.command_line) BY user.name, process.name | SORT n DESC | LIMIT 20"
        )
        for user, (src, n, hosts, at) in sorted(self.scheduled_sources.items()):
            runs = [r for r in what if r.get("user.name") == user and r.get("process.name") not in ("sshd", "bash", "sh")]
            top = runs[0] if runs else None
            src_host = self.case.ip_host.get(src, src)
            tool = f"{top.get('process.name')}" if top else "its job"
            self.case.scheduled_users.add(user)
            self.case.user_profiles[user] = (
                f"the {user} account's regular use is a nightly {tool} job from {src_host}: {n} logins to {hosts} "
                f"servers, each night at {at} UTC"
            )

    def exposed_host_check(self: Analyst) -> None:
        """Credentials of a host stolen from elsewhere (a backup copy): was that host itself touched?
        Logins to it from the attacker's hosts during the attack, other than an account's scheduled job."""
        starts = sorted(self.case.procs[e].start for es in self.case.cluster.values() for e in es if e in self.case.procs)
        if not starts:
            return
        lo, hi = starts[0], clock.shift(starts[-1], 3600)
        attacker_ips = sorted({ip for h in self.case.implicated for ip in self.case.inventory.get(h, [])}
                              | {ip for ip, inf in self.case.infra.items() if inf.roles and not inf.popular})
        for host in sorted(self.case.exposed_hosts):
            if host in self.case.implicated or not attacker_ips:
                continue
            rows = self.tel.esql(
                f"FROM {AUTH} | WHERE host.name == {q(host)} AND source.ip IN ({q_in(attacker_ips)}) "
                f"AND @timestamp >= {q(lo)} AND @timestamp <= {q(hi)} AND event.outcome == \"success\" "
                "| STATS n = COUNT(*) BY user.name, source.ip | LIMIT 20"
            )
            bad = [r for r in rows if self.scheduled_sources.get(str(r.get("user.name")), ("",))[0] != r.get("source.ip")]
            self.exposed_checked[host] = not bad


def scheduled(logins: list[dict[str, Any]]) -> bool:
    """A scheduled job: the same source logs in to several hosts at the same time of day, on several days."""
    days: dict[str, list[int]] = {}
    for r in logins:
        d = clock.parse(str(r.get("@timestamp")))
        if d is not None:
            days.setdefault(d.strftime("%Y-%m-%d"), []).append(d.hour * 60 + d.minute)
    if len(days) < 2 or len({r.get("host.name") for r in logins}) < 3:
        return False
    minutes = [m for ms in days.values() for m in ms]
    return max(minutes) - min(minutes) <= 60

