"""The Windows analyst: the investigation's steps in order, the verdict, and the response.

Verdict: the attacker's activity is what the process tree of the alert holds once Windows' own jobs are
told apart; it is malicious when one behaviour is damning (weight 5: an LSASS read, a credential hive
copy, a service run with an attacker's argument, an offensive tool, a logon script) or the behaviours
add up to 7.

Response (only the granted tools, only on a malicious verdict):
- an implant that talks to an address outside the estate: isolate its host, block the address (never
  an address that serves DNS, Kerberos or LDAP, or one of the estate's hosts);
- remote service creation: isolate the host the attacker came from and disable the account it used;
- an interactive account doing the damage with no implant (hands on keyboard): disable the account;
- something left listening (an ad-hoc web server behind a new firewall rule): isolate the host;
- a change that was reverted and left nothing behind: no action, a review;
- never wipe or delete: that destroys the evidence; built-in service accounts are never disabled.
"""

from __future__ import annotations

from typing import Any

from pytest_soclab.agents.analyst.store import Telemetry
from pytest_soclab.agents.analyst.windows import tradecraft as tc
from pytest_soclab.agents.analyst.windows.directory import replication_requests
from pytest_soclab.agents.analyst.windows.evidence import Finding
from pytest_soclab.agents.analyst.windows.identity import has_identity_data, investigate_identity
from pytest_soclab.agents.analyst.windows.investigator import Investigation
from pytest_soclab.agents.analyst.windows.report import write
from pytest_soclab.agents.analyst.windows.wmi import subscriptions
from pytest_soclab.errors import ToolError

DAMNING = 5
THRESHOLD = 7
_STEP_ERRORS = (KeyError, ValueError, TypeError, AttributeError, IndexError, ZeroDivisionError)


class WindowsAnalyst(Investigation):
    def __init__(self, trigger: dict[str, Any], tools: Any, tel: Telemetry) -> None:
        super().__init__(trigger, tel)
        self.tools = tools
        self.allowed = {s["name"] for s in tools.specs()}
        self.failed_steps: list[str] = []
        self.identity_ips: list[str] = []  # outside addresses that used the tenant (mail read from them)
        self.cloud_users: list[str] = []  # tenant accounts whose names the changes were made in

    def run(self) -> dict[str, Any]:
        for step in (self.orient, self.anchor, self.replication, self.locate, self.trace, self.lateral_in,
                     self.subscriptions, self.activity_events, self.classify, self.shadow_copies, self.outside,
                     self.lateral_out, self.housekeeping, self.identity):
            self.step_safely(step)
        self.decide()
        self.step_safely(self.respond)
        return write(self)

    def step_safely(self, step: Any) -> None:
        """A step failing on data it did not expect must not lose the investigation: the report says so."""
        try:
            step()
        except _STEP_ERRORS as exc:
            self.failed_steps.append(f"{getattr(step, '__name__', 'step')}: {type(exc).__name__}: {exc}"[:200])

    def replication(self) -> None:
        replication_requests(self)

    def subscriptions(self) -> None:
        subscriptions(self)

    def identity(self) -> None:
        if has_identity_data(self):
            investigate_identity(self)
            for f in self.case.findings:
                if f.technique == "T1552.004" and f.host and f.host not in self.case.hosts:
                    self.case.hosts.append(f.host)

    # -- the activity's processes as findings -----------------------------------------------------------
    def classify(self) -> None:
        c = self.case
        for eid in c.activity:
            p = c.procs.get(eid)
            if p is None:
                continue
            if p.host and p.host not in c.hosts and p.weight >= 1:
                c.hosts.insert(0 if p.host == self.pivot_host else len(c.hosts), p.host)
            if p.user and not tc.system_account(p.user) and p.user not in c.actors and (p.weight >= 1 or eid in c.roots):
                c.actors.append(p.user)
            acts = sorted(p.acts, key=lambda a: -a.weight)
            if not acts and eid not in c.roots:
                continue
            decoded = tc.decode_powershell(p.cmd)
            head = acts[0] if acts else None
            what = "; ".join(dict.fromkeys(a.what for a in acts)) if acts else "where the activity starts"
            parent = f", started by {p.parent_name}" if p.parent_name else ""
            text = (f"{p.name} on {p.host} as {p.user or 'an unknown account'}{parent}: `{p.quoted()}` ({what})"
                    if p.known else f"{p.name}{_where(p.exe)}{f' (pid {p.pid})' if p.pid else ''} on {p.host} as {p.user}: the process "
                    "the activity ran in (its own start predates the recording)")
            if decoded:
                text += f"; decoded: `{' '.join(decoded.split())[:160]}`"
            c.add(Finding(p.start, p.host, text + ".", head.technique if head else "", p.ref, head.weight if head else 1))
            for a in acts:
                if a.technique:
                    c.techniques.setdefault(a.technique, a.what)
                if a.tag == "firewall-revert" or (a.tag == "service" and tc.windows_binary(_binpath(p.cmd))):
                    c.reverted.append(p.quoted(90))
                if a.tag == "web-server":
                    c.exposures.append(f"{p.quoted(80)} on {p.host}")
                if a.tag in ("credential", "tool") and a.technique.startswith("T1003"):
                    if a.technique in ("T1003.002", "T1003.003"):  # hives or the AD database copied, not LSASS
                        c.copied.append((p.name, a.technique))
                    else:
                        c.dumped.append(p.name)
        if self.seed is not None and self.seed.host and self.seed.host not in c.hosts:
            c.hosts.insert(0, self.seed.host)

    # -- verdict ----------------------------------------------------------------------------------------
    def decide(self) -> None:
        c = self.case
        weights: dict[str, int] = {}
        # Each kind of behaviour counts once, at its strongest: the findings' and every act of the
        # attacker's processes (a process shows several).
        marks = [(f.technique or f.text[:20], f.weight) for f in c.findings]
        marks += [(a.technique or a.tag, a.weight) for e in c.activity if e in c.procs for a in c.procs[e].acts]
        for key, weight in marks:
            weights[key] = max(weights.get(key, 0), weight)
        score = sum(weights.values())
        top = max(weights.values(), default=0)
        only_reverted = c.reverted and top < DAMNING and not c.exposures
        if top >= DAMNING or score >= THRESHOLD or c.exposures:
            c.verdict = "malicious"
        elif c.findings and (only_reverted or score >= 3):
            c.verdict = "suspicious"
        elif c.findings:
            c.verdict = "undetermined"

    # -- response -----------------------------------------------------------------------------------------
    def plan(self) -> list[tuple[str, dict[str, Any], str]]:
        c = self.case
        out: list[tuple[str, dict[str, Any], str]] = []
        if c.verdict != "malicious":
            return out
        implants = [c.procs[e] for e in c.activity if e in c.procs and
                    any(a.tag in ("unusual-binary", "tool") for a in c.procs[e].acts)]
        outside = [p for p in c.peers.values() if p.role == "attacker"]
        hosts_to_isolate: list[str] = []
        if outside:
            hosts_to_isolate += [h for h in c.hosts if h not in hosts_to_isolate]
            for peer in outside:
                out.append(("block_ip", {"ip": peer.ip}, "the address the attacker's implant talked to"))
        if c.lateral_accounts:
            source = [p.host for p in implants] or [h for h in c.hosts if h != self.pivot_host]
            hosts_to_isolate += [h for h in dict.fromkeys(source) if h not in hosts_to_isolate]
            for u in c.lateral_accounts:
                out.append(("disable_user", {"user": u}, "the account the attacker used to log on to another host"))
        for _dc, user, src in c.replicated:
            # DCSync: the host that asked runs the attacker's code; the account's rights did the rest.
            hosts_to_isolate += [h for h in [src] if h and h not in hosts_to_isolate]
            if not tc.system_account(user) and not any(t == "disable_user" and x.get("user") == user for t, x, _ in out):
                out.append(("disable_user", {"user": user}, "the account whose rights replicated the directory's secrets"))
        # Code injected into a process that keeps running: the host holds the attacker's code in memory.
        hosts_to_isolate += [h for h in c.injected if h not in hosts_to_isolate]
        if c.exposures and not outside:
            hosts_to_isolate += [h for h in c.hosts[:1] if h not in hosts_to_isolate]
        for ip in self.identity_ips:
            if ip not in c.core_ips:
                out.append(("block_ip", {"ip": ip}, "the outside address that used the tenant's stolen access"))
        if not outside and not c.lateral_accounts and not c.exposures and not c.replicated:
            for u in c.actors:
                out.append(("disable_user", {"user": u}, "the account the attacker's commands ran as"))
        if "T1552.004" in c.techniques:
            c.recommended.append("Rotate the AD FS token-signing certificate twice and the DKM key: tokens signed with "
                                 "the stolen key stay valid until then.")
            hosts_to_isolate = []  # the AD FS and domain controllers are tier 0: their isolation is planned, not reflexive
        for upn in self.cloud_users:
            c.recommended.append(f"Revoke {upn}'s sessions and review the application changes made in that name "
                                 "(remove the added secret and permission grant).")
        core_hosts = {c.host_of(ip) for ip in c.core_ips}
        for h in hosts_to_isolate:
            if h in core_hosts:
                c.recommended.append(f"Isolate {h} only after review: it serves DNS / Kerberos / LDAP to the estate.")
                continue
            out.insert(0, ("isolate_host", {"host": h}, "a host the attacker ran code on"))
        return out

    def respond(self) -> None:
        for tool, args, why in self.plan():
            if tool not in self.allowed:
                self.case.recommended.append(f"{tool} {args}: {why} (not granted here)")
                continue
            try:
                self.tools.call(tool, **args, comment=why)
                self.case.executed.append((tool, args, why, True))
            except ToolError as err:
                self.case.notes.append(f"{tool} {args} refused: {(err.reason or '')[:160]}")
                self.case.executed.append((tool, args, why, False))


def _binpath(cmd: str) -> str:
    low = cmd.lower()
    i = low.find("binpath")
    if i < 0:
        return ""
    rest = cmd[i + len("binpath"):].lstrip(" =").strip().strip('"')
    return rest.split('"')[0].split(" ")[0]


def _where(exe: str) -> str:
    return f" ({exe})" if exe and not tc.windows_binary(exe) else ""
