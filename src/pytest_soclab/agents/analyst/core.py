"""The analyst: the order of the investigation, and the working memory the steps share."""

from __future__ import annotations

from typing import Any

from pytest_soclab.agents.analyst import clock
from pytest_soclab.agents.analyst.context import Context
from pytest_soclab.agents.analyst.network import Network
from pytest_soclab.agents.analyst.report import Report
from pytest_soclab.agents.analyst.response import Response
from pytest_soclab.agents.analyst.state import CaseState, Proc
from pytest_soclab.agents.analyst.store import PROC, Telemetry
from pytest_soclab.agents.analyst.trace import Tracing
from pytest_soclab.agents.analyst.triage import Triage
from pytest_soclab.agents.analyst.untrusted import looks_like_instruction, strings
from pytest_soclab.agents.analyst.verdict import Verdict

MAX_ROUNDS = 8  # trace -> analyse -> follow rounds; each round reaches at most one more hop


class Analyst(Triage, Tracing, Network, Context, Verdict, Response, Report):
    """A tier-2 SOC analyst working only through the tools it was given."""

    def __init__(self, trigger: dict[str, Any], tools: Any) -> None:
        self.trigger = trigger
        self.tools = tools
        self.allowed = {s["name"] for s in tools.specs()}
        self.case = CaseState()
        self.tel = Telemetry(tools, self.allowed, self.case.notes.append, self._scan_text)
        # working memory of the steps
        self.seeds_found: list[Proc] = []
        self.traced: set[str] = set()
        self.session_roots: list[tuple[str, Proc]] = []
        self.sessions_done: set[str] = set()
        self.hops_done: set[str] = set()
        self.lateral_done: set[tuple[str, str, str]] = set()
        self.connections: list[tuple[Proc, str, dict[str, Any]]] = []
        self.conn_seen: set[tuple[Any, ...]] = set()
        self.analysed: set[str] = set()
        self.web_hosts: dict[str, list[Proc]] = {}
        self.externals_done: set[str] = set()
        self.exposures: list[tuple[str, str, str, str]] = []
        self.scan_tools: set[str] = set()
        self.ti_hits: list[tuple[str, str, str]] = []
        self.ti_matches: dict[str, str] = {}
        self.ti_total = 0
        self.volume_leads: list[tuple[str, int]] = []
        self.related_alerts: list[dict[str, Any]] = []
        self.other_groups: list[tuple[str, list[dict[str, Any]]]] = []
        self.rule_pattern: list[tuple[list[dict[str, Any]], dict[str, Any], bool]] = []
        self.trigger_in_pattern = False
        self.rule_summary = ""
        self.pattern_info: list[dict[str, Any]] = []
        self.other_info: list[dict[str, Any]] = []
        self.profiles: dict[str, dict[str, Any]] = {}
        self.scheduled_sources: dict[str, tuple[str, int, int, str]] = {}
        self.exposed_checked: dict[str, bool] = {}
        self.exposed_files: dict[str, list[str]] = {}
        self.stolen: dict[str, set[str]] = {}
        self.db_reads: set[str] = set()
        self.tunnel: dict[str, Any] | None = None
        self.seed_info: dict[str, Any] | None = None
        self.seed_proc: Proc | None = None
        self.benign_members: set[str] = set()
        self.follow_on = False
        self.downloads: list[dict[str, Any]] = []
        self.origin_package: tuple[str, Proc] | None = None
        self.alert_file: str | None = None
        self.executed: list[tuple[str, dict[str, Any], str, bool]] = []
        self.bruteforce_sources: set[str] = set()
        self.review: list[str] = []
        self.failed_steps: list[str] = []
        self.reviewed_rules: list[tuple[str, int, int]] = []
        self.internal_scanners: list[tuple[str, str, int, int, str, str]] = []

    # -- compatibility with the agents built on this one --------------------------------------------------
    def _scan_text(self, obj: Any) -> None:
        """Note instruction-like text in the data: a careful analyst flags it as untrusted content."""
        for text in strings(obj):
            if looks_like_instruction(text) and text not in self.case.instructions:
                self.case.instructions.append(text)

    @property
    def streams(self) -> set[str]:
        return self.tel.streams

    # -- the investigation ----------------------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        self.discover()
        self.step_safely(self.triage)
        first = self.seeds_found[0] if self.seeds_found else None
        self.seed_proc = first
        self.step_safely(self.investigate)
        self.step_safely(self.alert_context)
        self.benign_members = {e for es in self.case.cluster.values() for e in es}
        self.decide()
        if self.case.verdict == "malicious":
            self.step_safely(self.compile_steps)
            for host, roots in sorted(self.web_hosts.items()):
                if host in self.case.implicated:
                    self.step_safely(lambda h=host, r=roots: self.web_entry(h, r))
            for step in (self.enrich_infra, self.scope_check, self.profile_accounts, self.exposed_host_check,
                         self.other_alerts, self.explain_groups):
                self.step_safely(step)
        elif self.case.verdict == "reconnaissance":
            self.step_safely(self.recon_checks)
        else:
            self.step_safely(lambda: self.explain_benign(first))
        self.respond()
        return self.report()

    def step_safely(self, step: Any) -> None:
        """One step failing on data it did not expect must not lose the whole investigation: the report
        still comes out, and says which step failed."""
        try:
            step()
        except (KeyError, ValueError, TypeError, AttributeError, IndexError, ZeroDivisionError) as exc:
            name = getattr(step, "__name__", "step")
            self.failed_steps.append(f"{name}: {type(exc).__name__}: {exc}"[:200])

    def discover(self) -> None:
        self.tel.discover_streams()
        rows = self.tel.esql(f"FROM {PROC} | STATS ips = VALUES(host.ip) BY host.name | LIMIT 1000")
        for r in rows:
            ips = r.get("ips") or []
            ips = [str(i) for i in (ips if isinstance(ips, list) else [ips])]
            name = str(r.get("host.name"))
            self.case.inventory[name] = sorted(ips)
            for ip in ips:
                self.case.ip_host[ip] = name

    def investigate(self) -> None:
        for _ in range(MAX_ROUNDS):
            seeds, self.seeds_found = self.seeds_found, []
            for p in seeds:
                self.trace_process(p, "seed")
            self.resolve_sessions()
            new = {e for es in self.case.cluster.values() for e in es} - self.analysed
            if not new and not self.seeds_found and not self.session_roots:
                break
            self.analysed |= new
            self.analyse(new)
            self.process_connections()
            self.resolve_sessions()
            if self.tel.exhausted:
                break

    def recon_checks(self) -> None:
        """After a scan: was anything exploited? And which other sources scan, and why."""
        for ip, inf in sorted(self.case.infra.items()):
            if not inf.roles & {"scanner", "attacker"}:
                continue
            targets = sorted(h for h in inf.contacts if h in self.case.inventory)
            since = min((s.time for s in self.case.steps if s.time), default="")
            shells = self.exploitation_check(targets, since) if since else []
            if shells:
                self.seeds_found += shells
        if self.seeds_found:
            self.investigate()
            self.decide()
            if self.case.verdict == "malicious":
                self.compile_steps()
                self.enrich_infra()
                return
        self.threat_intel(sorted(ip for ip, inf in self.case.infra.items() if inf.roles))
        self.other_scanners()

    def other_scanners(self) -> None:
        """Other sources that swept many ports in the window: internal ones are the estate's own scanner."""
        from pytest_soclab.agents.analyst.store import ZCONN

        rows = self.tel.esql(
            f"FROM {ZCONN} | STATS ports = COUNT_DISTINCT(destination.port), targets = COUNT_DISTINCT(destination.ip), "
            "first = MIN(@timestamp) BY source.ip | WHERE ports >= 15 | SORT ports DESC | LIMIT 10"
        )
        for r in rows:
            src = str(r.get("source.ip"))
            if src in self.case.infra:
                continue
            host = self.case.ip_host.get(src)
            if not host:
                continue
            prof = self.profile_host(host)
            tools = ", ".join(prof.get("tools") or []) or "no scanner software seen"
            self.internal_scanners.append((host, src, int(r.get("ports") or 0), int(r.get("targets") or 0),
                                           str(r.get("first")), tools))

    def explain_benign(self, seed: Proc | None) -> None:
        if seed is None:
            return
        self.seed_info = self.explain_process(seed)
        self.follow_on = self.follow_on or bool(self.case.infra)
        for group, _rep, mine in self.rule_pattern:
            if not mine:
                continue
            hosts = sorted({str(a.get("host.name")) for a in group})
            days = sorted({clock.day(str(a.get("@timestamp"))) for a in group})
            times = sorted({clock.hm(str(a.get("@timestamp"))) for a in group})
            span = f"at {times[0]} UTC" if times[0] == times[-1] else f"between {times[0]} and {times[-1]} UTC"
            when = span + clock.on_days(days, times[0])
            self.pattern_info.append({"group": group, "info": self.seed_info, "hosts": hosts, "days": days,
                                      "when": when, "mine": True, "rule": group[0].get("kibana.alert.rule.name")})
        if self.seed_info.get("label") == "package":
            t = str((self.case.trigger_alert or {}).get("@timestamp") or seed.start)
            self.downloads = self.package_download(seed.host, t)
