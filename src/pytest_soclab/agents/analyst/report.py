"""The report: a verdict first, then the chain of evidence, the scope, what was told apart from the
attack, and the response. Focused: it names the attack's hosts, addresses and files, not everything
the investigation looked at, and each claim points at the document that shows it."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from pytest_soclab.agents.analyst import clock
from pytest_soclab.agents.analyst.state import Proc
from pytest_soclab.agents.analyst.trace import interactive_shell
from pytest_soclab.agents.analyst.tradecraft import base
from pytest_soclab.agents.analyst.untrusted import looks_like_instruction
from pytest_soclab.models import attack_techniques
from pytest_soclab.agents.analyst.response import NEVER_EXECUTED

if TYPE_CHECKING:
    from pytest_soclab.agents.analyst.core import Analyst

MAX_STEPS = 40
_CRITICAL_ROLES = {"exfil", "c2", "reverse-shell"}
# Action tools in the words a report uses for what was done (past tense, not a recommendation).
_DONE = {
    "kill_process": "Stopped process {pid} on {host}",
    "remove_persistence": "Removed the persistence {path} on {host}",
    "block_ip": "Blocked {ip} at the perimeter",
    "isolate_host": "Isolated {host} from the network",
    "disable_user": "Disabled the account {user}",
}


_RECOMMEND = {
    "remove_persistence": "Remove the persistence {path} on {host}",
    "disable_user": "Disable the account {user}",
    "delete_file": "Delete {path} on {host}",
}


def done_text(tool: str, args: dict[str, Any]) -> str:
    """An executed action in the words a report uses (past tense)."""
    return _DONE.get(tool, tool + " {args}").format(args=args, **{k: args.get(k, "") for k in
                                                                   ("pid", "host", "path", "ip", "user")})


class Report:
    def report(self: Analyst) -> dict[str, Any]:
        c = self.case
        lines: list[str] = []
        title = (self.trigger.get("pivot") or {}).get("alert_rule") or "hunt lead"
        lines += [f"# Investigation: {title}", ""]
        lines += ["## Verdict", ""] + self.verdict_text() + [""]
        chain = self.chain_lines()
        if chain:
            lines += ["## Evidence chain", ""] + chain + [""]
        scope = self.scope_lines()
        if scope:
            lines += ["## Scope", ""] + scope + [""]
        told = self.context_lines()
        if told:
            lines += ["## Activity told apart from the attack", ""] + told + [""]
        if c.techniques and c.verdict == "malicious":
            lines += ["## ATT&CK techniques", ""]
            names = attack_techniques()
            lines += [f"- {t} {names.get(t, {}).get('name', '')}".rstrip() for t in sorted(c.techniques) if t][:16] + [""]
        iocs = self.iocs()
        if iocs:
            lines += ["## Indicators", ""] + [f"- {i}" for i in iocs] + [""]
        if c.instructions:
            lines += ["## Untrusted content", "",
                      (f"{len(c.instructions)} record(s) in the telemetry contain text addressed to an analyst or an "
                       "AI (possible prompt injection); they were treated as attacker-controlled data, not as "
                       "instructions."), ""]
        lines += ["## Response", ""] + self.response_lines()
        if self.failed_steps:
            lines += ["", "## Investigation notes", ""] + [f"- step failed: {f}" for f in self.failed_steps]
        findings = {
            "root_cause": self.root_cause(),
            "attacker_ips": sorted(ip for ip, inf in c.infra.items() if inf.roles and not inf.popular)
            if c.verdict in ("malicious", "reconnaissance") else [],
            "implicated_hosts": c.implicated if c.verdict == "malicious" else [],
            "techniques": sorted(t for t in c.techniques if t) if c.verdict == "malicious" else [],
            "iocs": iocs,
            "evidence": self.evidence_refs(),
        }
        lines = [redact(x) for x in lines]
        findings["root_cause"] = redact(str(findings["root_cause"]))
        return {"markdown": "\n".join(lines).rstrip() + "\n", "findings": findings}

    # -- verdict -----------------------------------------------------------------------------------------
    def verdict_text(self: Analyst) -> list[str]:
        c = self.case
        if c.verdict == "malicious":
            return self.malicious_verdict()
        if c.verdict == "reconnaissance":
            return self.recon_verdict()
        if c.verdict == "benign":
            return self.benign_verdict()
        out = [("The evidence retrieved does not show an intrusion; the lead stays open for more data. "
                "No response action was taken.")]
        if self.reviewed_rules:
            out.append("Alerts reviewed (one of each rule, traced to its session): " + "; ".join(
                f"\"{r}\" ({n} alerts on {h} hosts)" for r, n, h in self.reviewed_rules) + ".")
        return out

    def root_cause(self: Analyst) -> str:
        text = self.verdict_text()
        return text[0] if text else ""

    def critical(self: Analyst) -> bool:
        c = self.case
        running = any(p.ended is False and p.weight >= 4 for h in c.implicated for e in c.cluster[h]
                      for p in [c.procs.get(e)] if p is not None)
        return running or any(inf.roles & _CRITICAL_ROLES for inf in c.infra.values() if not inf.popular) or \
            bool(self.stolen) or len(c.implicated) > 1

    def malicious_verdict(self: Analyst) -> list[str]:
        c = self.case
        trig = c.trigger_alert
        hosts = c.implicated
        bad = {ip: inf for ip, inf in sorted(c.infra.items()) if inf.roles and not inf.popular}
        out = []
        sev = str(trig.get("kibana.alert.severity") or "") if trig else ""
        head = "**Verdict: malicious, a critical and active compromise**" if self.critical() else "**Verdict: malicious**"
        if trig is not None and sev in ("low", "medium") and self.critical():
            head += f" (the alert's {sev} severity understates it)"
        out.append(head + f". Compromised: {', '.join(hosts)}.")
        story = self.story()
        if story:
            out.append(" ".join(story))
        out += self.ti_lines()
        for ip, inf in bad.items():
            roles = ", ".join(sorted(inf.roles))
            names = f" ({', '.join(sorted(inf.names)[:3])})" if inf.names else ""
            extra = []
            if inf.beacon_min:
                extra.append(f"a periodic beacon every ~{inf.beacon_min:.0f} minutes")
            if inf.ti:
                extra.append("listed in threat intel: " + "; ".join(inf.ti[:2]))
            out.append(f"- {ip}{names}: {roles}" + (f"; {'; '.join(extra)}" if extra else "") + ".")
        return out

    def ti_lines(self: Analyst) -> list[str]:
        if not self.ti_total:
            return []
        hits = sorted(self.ti_matches)
        rest = self.ti_total - len({v for _, _, v in self.ti_hits})
        return [(f"Threat-intel sweep: the {self.ti_total} indicators in logs-ti_* were joined against zeek "
                 f"connection addresses and DNS, TLS and HTTP names; only {', '.join(hits) or 'none'} matched our telemetry. The "
                 f"other {rest} indicators did not match any activity (no other match), so nothing else is blocked.")]

    def story(self: Analyst) -> list[str]:
        """The attack in a few sentences, from the structured findings."""
        c = self.case
        s: list[str] = []
        for host in self.hops():
            e = c.entries.get(host)
            if e is None:
                continue
            arts = [a for (h, _), a in sorted(c.artifacts.items()) if h == host]
            shell = [a.path for a in arts if a.role == "webshell"]
            mod = [a.path for a in arts if a.role == "modified"]
            attackers = sorted(ip for ip, inf in c.infra.items() if "attacker" in inf.roles and host in inf.contacts)
            if e.kind == "web":
                via = f"a web shell ({', '.join(base(x) for x in shell)}) planted through an upload" if shell else \
                    f"a modified server-side template ({', '.join(base(x) for x in mod)})" if mod else \
                    "a remote code execution request"
                s.append(f"On {host}, {', '.join(attackers) or 'the attacker'} exploited the public web application "
                         f"(T1190) with {via}; the web server ({self.web_parent(host)}) then ran the attacker's commands"
                         + ("." if attackers else " (the request that started them is not in zeek http: the sensor "
                            "may not see that traffic)."))
            elif e.kind == "ssh":
                lg = next((lg for lg in c.logins if lg.host == host and lg.malicious), None)
                if lg is not None:
                    after = f" after {lg.failures} failed attempts" if lg.failures else ""
                    if lg.src_host:
                        s.append(f"On {host}, the attacker logged in as {lg.user} over ssh ({lg.method}) from "
                                 f"{lg.src_host} ({lg.src_ip}){after} (lateral movement, T1021.004).")
                    else:
                        how = " by guessing the password (T1110.001)" if lg.failures >= 5 else " with valid credentials " \
                            "(T1078)"
                        s.append(f"On {host}, {lg.src_ip} logged in over ssh as {lg.user}{how}{after}.")
            elif getattr(self, "origin_package", None) and self.origin_package[0] == host:
                p: Proc = self.origin_package[1]
                pkg = next((b.target for b in p.behaviours if b.tag == "package_install"), "")
                s.append(f"On {host}, {p.user} installed the malicious package {pkg} (`{p.short(80)}`): a supply-chain "
                         "compromise whose install hook dropped and started the attacker's code.")
            else:
                s.append(f"On {host}, the attacker's code ran from {e.detail}.")
            for a in arts:
                if a.role == "implant":
                    s.append(f"Implant {a.path} on {host} ({a.why}).")
            for p in self.live_shells(host):
                s.append(f"A reverse shell is still open on {host}: `{p.short(90)}` (pid {p.pid}, {p.user}).")
            pers = [a.path for a in arts if a.role == "persistence"]
            if pers:
                s.append(f"Persistence on {host}: {', '.join(pers)}.")
            if self.stolen.get(host):
                s.append(f"Credential access on {host}: {', '.join(sorted(self.stolen[host]))}.")
        exfil = [(ip, inf) for ip, inf in sorted(c.infra.items()) if "exfil" in inf.roles and not inf.popular]
        if exfil:
            s.append("Data exfiltration to " + ", ".join(
                f"{ip} from {', '.join(sorted(inf.exfil_from & set(c.implicated)) or sorted(inf.contacts))}"
                for ip, inf in exfil) + ".")
        tunnel = getattr(self, "tunnel", None)
        if tunnel and tunnel.get("process") is not None:
            s.append(f"The stolen data left through DNS tunnelling: {tunnel['count']} {tunnel['types']} queries under "
                     f"{tunnel['zone']} from {tunnel['client']} ({tunnel['client_ip']}).")
        if len(self.hops()) > 1:
            s.append("Path of the intrusion: " + " -> ".join(self.hops()) + ".")
        return s

    def live_shells(self: Analyst, host: str) -> list[Proc]:
        c = self.case
        return sorted((p for e in c.cluster.get(host, set()) for p in [c.procs.get(e)]
                       if p is not None and p.ended is False and any(b.tag == "reverse_shell" for b in p.behaviours)),
                      key=lambda p: (p.start, p.eid))

    def web_parent(self: Analyst, host: str) -> str:
        roots = self.web_hosts.get(host) or []
        parent = next((r.parent_cmd or r.parent_name for r in roots), "")
        return parent.split(":")[0] if parent else "web server"

    def hops(self: Analyst) -> list[str]:
        """Implicated hosts in the order the attacker reached them."""
        c = self.case
        def first(h: str) -> str:
            e = c.entries.get(h)
            starts = [c.procs[x].start for x in c.cluster.get(h, set()) if x in c.procs]
            return min([e.time] if e and e.time else [] + starts or ["~"])
        return sorted(c.implicated, key=lambda h: (first(h), h))

    def recon_verdict(self: Analyst) -> list[str]:
        c = self.case
        out = []
        scanners = [(ip, inf) for ip, inf in sorted(c.infra.items()) if inf.roles & {"scanner", "attacker"}]
        for ip, inf in scanners:
            targets = sorted(h for h in inf.contacts if h in c.inventory)
            tool = f" and brute-forced web paths with {', '.join(sorted(self.scan_tools))}" if self.scan_tools else ""
            out.append(f"**Verdict: reconnaissance without exploitation.** {ip} scanned {', '.join(targets)}{tool}. "
                       "No web server started a shell and no host connected back to it: no compromise, "
                       "no code execution on the scanned servers.")
        for host, ip, ports, targets, _first, tools in self.internal_scanners[:3]:
            out.append(f"Told apart: {host} ({ip}) also swept {ports} ports on {targets} hosts; it is an internal host "
                       f"running {tools}, the organisation's own authorised vulnerability scanner, a different source "
                       "from this scan.")
        by_host: dict[str, list[tuple[str, str, str]]] = {}
        for host, url, ua, when in self.exposures:
            by_host.setdefault(host, []).append((url, ua, when))
        for host, items in sorted(by_host.items()):
            urls = ", ".join(u for u, _, _ in items[:6])
            agents = ", ".join(sorted({a for _, a, _ in items}))
            kind = "an exposed .git repository (source-code exposure)" if any("/.git" in u for u, _, _ in items) \
                else "exposed sensitive files"
            out.append(f"Finding to fix: {host} served {urls} to the scanner (from {clock.short(items[0][2])}, user "
                       f"agents {agents}): {kind} on {host}; remove it from the document root and rotate any secret "
                       "it holds.")
        return out

    def benign_verdict(self: Analyst) -> list[str]:
        c = self.case
        trig = c.trigger_alert or {}
        seed = self.seed_info or {}
        label = seed.get("label")
        host = str(trig.get("host.name") or "")
        rule = trig.get("kibana.alert.rule.name")
        out = []
        if label == "package":
            out.append(f"**Verdict: a scheduled package update (a security update), not a backdoor.** The alert "
                       f"\"{rule}\" on {host} is dpkg installing a package: {self.describe(seed)}"
                       + (f"; dpkg overwrote {self.alert_file}" if self.alert_file else "")
                       + ". No response action is needed.")
            out += self.benign_chain(seed)
            dl = getattr(self, "downloads", [])
            if dl:
                d = dl[0]
                pkg = base(str(d.get("url.original") or "")).split("_")[0]
                out.append(f"The package came from {d.get('url.domain')} ({d.get('destination.ip')}): zeek http shows "
                           f"{d.get('user_agent.original')} downloading the {pkg} package at "
                           f"{clock.short(str(d.get('@timestamp')))}, just before dpkg ran.")
        else:
            who = self.describe(seed) if seed else "the estate's own automation"
            kind = {
                "scanner": "authorised vulnerability scan",
                "config-management": f"authorised configuration management ({seed.get('tool')})",
            }.get(str(label), "")
            if not kind:
                kind = "a scheduled job of the host (cron)" if seed.get("kind") == "cron" else \
                    f"routine administrative work by {who.split(' ')[0]}" if seed.get("login") is not None else \
                    "the estate's own software at work"
            out.append(f"**Verdict: {kind}, not an intrusion.** The alert \"{rule}\" on {host} ran as {who}.")
            out += self.benign_chain(seed)
        pats = [p for p in self.pattern_info if p["mine"]]
        for p in pats[:1]:
            others = [h for h in p["hosts"] if h != host]
            if others:
                named = f" ({', '.join(others)})" if len(others) <= 4 else ""
                out.append(f"The same alert fired on the {len(others)} other servers{named} {p['when']}: the same "
                           "scheduled job on every server.")
            elif len(p["days"]) > 1:
                out.append(f"The same alert fires on {host} at the same time of day {p['when']}: a recurring job.")
        if not self.follow_on:
            out.append("Nothing followed on the host: no outbound connection, no staging and no persistence from that "
                       "activity (no follow-on).")
        out.append("Recommendation: close as authorised activity and add a tuning exception for it "
                   f"({self.exception_text(seed)}); no response action.")
        return out

    def exception_text(self: Analyst, seed: dict[str, Any]) -> str:
        login = seed.get("login")
        if seed.get("label") == "package":
            return "package-manager writes by dpkg under unattended-upgrade"
        if login is not None:
            return f"{login.user} from {login.src_host or login.src_ip}"
        return "this scheduled job"

    def benign_chain(self: Analyst, seed: dict[str, Any]) -> list[str]:
        out = []
        chain: list[Proc] = seed.get("chain") or []
        if chain:
            out.append("Process chain: " + " <- ".join(f"`{p.short(200 if i == 0 else 90)}` ({p.user})"
                                                       for i, p in enumerate(chain[:6])) + ".")
        login = seed.get("login")
        if login is not None:
            out.append(f"Login: \"{login.message}\" at {clock.short(login.time)}.")
        sess = self.session_commands(seed)
        if sess:
            out.append("The session's other commands: " + ", ".join(f"`{c}`" for c in sess[:8]) + ".")
        src = seed.get("source") or {}
        if src.get("tools"):
            out.append(f"{src['host']} runs {', '.join(src['tools'])}: it is the organisation's vulnerability scanner.")
        return out

    def session_commands(self: Analyst, seed: dict[str, Any]) -> list[str]:
        root = seed.get("root")
        host = seed.get("host")
        if root is None or not host:
            return []
        eids = self.benign_members
        cmds = []
        for e in sorted(eids, key=lambda x: self.case.procs[x].start if x in self.case.procs else ""):
            p = self.case.procs.get(e)
            if p and not p.cmd.startswith("sshd:") and not interactive_shell(p) and p.bare() not in cmds:
                cmds.append(p.bare())
        return cmds

    # -- chain and scope ---------------------------------------------------------------------------------------
    def chain_lines(self: Analyst) -> list[str]:
        c = self.case
        if c.verdict not in ("malicious", "reconnaissance"):
            return []
        keep = [s for s in c.steps if s.host in c.implicated or not s.host or s.index.startswith(("logs-zeek",
                "logs-suricata", "logs-ti", ".alerts")) or c.verdict == "reconnaissance"]
        keep = sorted(keep, key=lambda s: (s.time or "~", s.host, s.text))[:MAX_STEPS]
        out = []
        for s in keep:
            ref = f" [{s.index} {s.doc_id}]" if s.doc_id else ""
            tech = f" ({s.technique})" if s.technique else ""
            when = clock.short(s.time) + " " if s.time else ""
            out.append(f"- {when}{s.text}{tech}{ref}")
        return out

    def scope_lines(self: Analyst) -> list[str]:
        c = self.case
        out = []
        if c.verdict == "malicious":
            for h in self.hops():
                e = c.entries.get(h)
                ips = ", ".join(c.inventory.get(h, []))
                out.append(f"- {h} ({ips}): compromised" + (f", entry: {e.detail}" if e else "") + ".")
            for lg in c.failed_logins:
                out.append(f"- {lg.host}: one failed ssh attempt as {lg.user} from {lg.src_host}; no session opened "
                           "there.")
            for h in sorted(self.db_reads - set(c.implicated)):
                out.append(f"- {h}: its database was read over the network with the application's credentials; "
                           "no attacker process ran on it.")
            for h, what in sorted(c.exposed_hosts.items()):
                untouched = self.exposed_checked.get(h)
                files = ", ".join(base(x) for x in sorted(set(self.exposed_files.get(h, []))))
                out.append(f"- {h}: its credential store ({files}) left in the stolen archive; "
                           + ("the attacker never logged in to or ran anything on " + h if untouched else
                              "check it for attacker logins")
                           + f"; reset and rotate every credential {h} holds.")
            tunnel = getattr(self, "tunnel", None)
            if tunnel:
                res = ", ".join(x for x in tunnel["resolver_hosts"] if x)
                if res:
                    out.append(f"- {res}: the estate's DNS resolver; it relayed {tunnel['client']}'s tunnel queries "
                               f"({', '.join(tunnel['resolvers'])}) and ran none of the attacker's code.")
        out += [f"- {n}" for n in c.scope_notes]
        return out

    def context_lines(self: Analyst) -> list[str]:
        c = self.case
        out = []
        trig = c.trigger_alert or {}
        if c.verdict == "malicious":
            for p in self.pattern_info:
                if p["mine"]:
                    continue
                out.append(f"- \"{p['rule']}\" also fired on {len(p['hosts'])} servers {p['when']}: "
                           f"{self.describe(p['info'])}. The alert under investigation "
                           f"({clock.hm(str(trig.get('@timestamp')))} UTC on {trig.get('host.name')}) is outside that "
                           "pattern.")
            for o in self.other_info:
                out.append(f"- The same night's \"{o['rule']}\" ({o['severity']}) on {len(o['hosts'])} hosts {o['when']}"
                           + (" on both nights" if len(o["days"]) == 2 else "")
                           + f": {self.describe(o['info'])}.")
            for user, prof in sorted(c.user_profiles.items()):
                out.append(f"- {prof[0].upper() + prof[1:]}; the attacker's {user} login "
                           + ", ".join(f"to {lg.host} from {lg.src_host or lg.src_ip}" for lg in c.logins
                                       if lg.user == user and lg.malicious) + " is outside that schedule.")
        return out

    def iocs(self: Analyst) -> list[str]:
        c = self.case
        if c.verdict not in ("malicious", "reconnaissance"):
            return []
        out = [ip for ip, inf in sorted(c.infra.items()) if inf.roles and not inf.popular]
        out += sorted({n for inf in c.infra.values() if inf.roles and not inf.popular for n in inf.names})
        tunnel = getattr(self, "tunnel", None)
        if tunnel:
            out.append(tunnel["domain"])
        out += sorted({a.path for a in c.artifacts.values() if a.role in ("implant", "webshell", "modified")})
        return list(dict.fromkeys(out))

    def evidence_refs(self: Analyst) -> list[dict[str, str]]:
        return [{"index": s.index, "id": str(s.doc_id), "why": ""} for s in self.case.steps if s.doc_id][:60]

    # -- response ------------------------------------------------------------------------------------------------
    def response_lines(self: Analyst) -> list[str]:
        out = []
        done = getattr(self, "executed", [])
        for tool, args, why, ok in done:
            out.append(f"- {done_text(tool, args)}: {why}" + ("" if ok else " (refused by the guard; to be done by hand)")
                       + ".")
        planned = {(t, tuple(sorted(a.items()))) for t, a, _, _ in done}
        for tool, args, why in self.response_plan():
            if (tool, tuple(sorted(args.items()))) in planned or tool == "kill_process":
                continue
            if tool in NEVER_EXECUTED:
                keep = ", after a copy is preserved" if "path" in args else ""
                out.append(f"- {_RECOMMEND.get(tool, tool).format(**args)} ({why}); left for a human to approve{keep}.")
            else:
                out.append(f"- Recommended: {done_text(tool, args).lower()}: {why}.")
        out += [f"- {r}" for r in dict.fromkeys(getattr(self, "review", []))]
        out += [f"- {r}" for r in self.follow_ups()]
        if not out:
            out.append("- No response action taken: the evidence shows no compromise.")
        return out

    def follow_ups(self: Analyst) -> list[str]:
        c = self.case
        out = []
        if c.verdict != "malicious":
            return out
        for user in sorted(c.scheduled_users & set(c.compromised_users)):
            out.append(f"Rotate the {user} account's password and keys rather than disabling it (its nightly job "
                       "depends on it).")
        for host, what in sorted(self.stolen.items()):
            out.append(f"Rotate the credentials exposed on {host}: {', '.join(sorted(what))}.")
        for h in sorted(c.exposed_hosts):
            out.append(f"Reset the credentials of {h} (its credential database was stolen from a backup).")
        for host in c.implicated:
            e = c.entries.get(host)
            if e and e.kind == "web":
                out.append(f"Fix the exploited web application on {host} and preserve the web root and the implant "
                           "for forensics before cleaning up.")
        return out


_QUOTED = re.compile(r"`[^`]*`|\"[^\"]*\"")
_REDACTED = "[attacker-supplied text addressed to an analyst or AI, not reproduced]"


def redact(line: str) -> str:
    """Telemetry text that addresses the reader is evidence of an injection attempt, not content to repeat."""
    if not looks_like_instruction(line):
        return line
    line = _QUOTED.sub(lambda m: m.group(0) if not looks_like_instruction(m.group(0)) else _REDACTED, line)
    if looks_like_instruction(line):
        head = re.match(r"^(\s*-\s*(?:\d{4}-\d\d-\d\d \d\d:\d\d:\d\d )?)", line)
        line = (head.group(1) if head else "") + _REDACTED
    return line

