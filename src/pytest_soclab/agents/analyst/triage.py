"""Where to start: the alert behind the trigger (and how often its rule fires), or, for a hunt lead,
the sweeps that find something to pull on (threat-intel matches, outbound volume, DNS tunnels)."""

from __future__ import annotations

import re
import statistics
from typing import TYPE_CHECKING, Any

from pytest_soclab.agents.analyst import clock
from pytest_soclab.agents.analyst.store import (
    ALERTS,
    FILE,
    TI,
    ZCONN,
    ZDNS,
    ZHTTP,
    ZSSL,
    as_list,
    q,
    q_in,
)
from pytest_soclab.agents.analyst.tradecraft import is_internal, is_ip

if TYPE_CHECKING:
    from pytest_soclab.agents.analyst.core import Analyst

_SEVERITY = {"low": 1, "medium": 2, "high": 3, "critical": 4}
OUTLIER_BYTES = 1_000_000
_TI_WORDS = re.compile(r"threat.?intel|indicator|\biocs?\b|\bfeeds?\b|logs-ti", re.IGNORECASE)
_EXFIL_WORDS = re.compile(r"exfil|leak|\bleft\b|\bsent\b|upload|\d\s*[mg]b\b|megabyte|gigabyte|transfer|stolen|theft",
                          re.IGNORECASE)
_DNS_WORDS = re.compile(r"\bdns\b|tunnel", re.IGNORECASE)


def severity(a: dict[str, Any]) -> int:
    return _SEVERITY.get(str(a.get("kibana.alert.severity") or "").lower(), 0)


class Triage:
    # -- the alert ------------------------------------------------------------------------------------
    def triage(self: Analyst) -> None:
        pivot = self.trigger.get("pivot") or {}
        rule = pivot.get("alert_rule")
        if self.trigger.get("type") == "alert" or rule:
            self.triage_alert(rule, pivot.get("host.name"), pivot.get("time_utc"))
        if not self.seeds_found and not self.externals_done and not getattr(self, "tunnel", None):
            self.hunt(str(self.trigger.get("prompt") or ""), pivot.get("host.name"))

    def triage_alert(self: Analyst, rule: str | None, host: str | None, when: str | None) -> None:
        if rule:
            # The rule name is a keyword in Kibana's alerts index, text with a keyword subfield in some stores.
            body: dict[str, Any] = {"size": 300, "sort": [{"@timestamp": "asc"}], "query": {"bool": {"should": [
                {"term": {"kibana.alert.rule.name": rule}}, {"term": {"kibana.alert.rule.name.keyword": rule}},
                {"match_phrase": {"kibana.alert.rule.name": rule}}], "minimum_should_match": 1}}}
        elif host:
            body = {"size": 100, "sort": [{"@timestamp": "asc"}],
                    "query": {"bool": {"filter": [{"term": {"host.name": host}}]}}}
        else:
            return
        alerts = self.tel.search(ALERTS, body)
        if rule:  # match_phrase may also match longer names
            alerts = [a for a in alerts if a.get("kibana.alert.rule.name") == rule] or alerts
        self.case.alerts = alerts
        cands = [a for a in alerts if not host or a.get("host.name") == host] or alerts
        if not cands:
            return
        if when:
            cands = sorted(cands, key=lambda a: (abs(clock.delta(str(a.get("@timestamp")), when)), str(a.get("_id"))))
        trig = cands[0]
        self.case.trigger_alert = trig
        self.case.step(str(trig.get("@timestamp")), str(trig.get("host.name")),
                       f"alert \"{trig.get('kibana.alert.rule.name')}\" ({trig.get('kibana.alert.severity')}): "
                       f"{trig.get('kibana.alert.reason')}", ALERTS, trig.get("_id"))
        self.seed_from_alert(trig)

    def seed_from_alert(self: Analyst, a: dict[str, Any]) -> None:
        host = str(a.get("host.name") or "")
        dataset = str(a.get("kibana.alert.original_event.dataset") or a.get("event.dataset") or "")
        eid = a.get("process.entity_id")
        if a.get("file.path"):
            self.alert_file = str(a["file.path"])
        if eid and dataset.startswith("endpoint"):
            p = self.fetch(str(eid))
            if p is not None:
                self.seeds_found.append(p)
                return
        src, dst = str(a.get("source.ip") or ""), str(a.get("destination.ip") or "")
        port = a.get("destination.port")
        if (port == 53 or "dns" in dataset) and is_internal(src):
            self.investigate_dns_client(src, str(a.get("@timestamp")))
            return
        if src and not is_internal(src) and is_ip(src):
            self.investigate_external(src, f"source of the alert \"{a.get('kibana.alert.rule.name')}\"")
            return
        if dst and not is_internal(dst) and is_ip(dst):
            self.investigate_external(dst, f"destination of the alert \"{a.get('kibana.alert.rule.name')}\"")
            return
        if host in self.case.inventory:
            self.sweep_host(host, str(a.get("@timestamp")))

    # -- hunts ------------------------------------------------------------------------------------------------
    def hunt(self: Analyst, prompt: str, host: str | None) -> None:
        if _TI_WORDS.search(prompt):
            self.ti_sweep()
        if _EXFIL_WORDS.search(prompt):
            self.volume_hunt(host)
        if _DNS_WORDS.search(prompt):
            self.dns_hunt()
        if not self.seeds_found and not self.externals_done and host in self.case.inventory:
            self.sweep_host(host, None)
        if not self.seeds_found and not self.externals_done:
            self.sweep_estate()
        if not self.seeds_found and not self.externals_done:
            self.review_alerts()

    def review_alerts(self: Analyst) -> None:
        """A lead with nothing to pull on: work the alert queue, one alert of each rule, worst first."""
        alerts = self.tel.search(ALERTS, {"size": 300, "sort": [{"@timestamp": "asc"}], "query": {"match_all": {}}})
        by_rule: dict[str, list[dict[str, Any]]] = {}
        for a in alerts:
            by_rule.setdefault(str(a.get("kibana.alert.rule.name")), []).append(a)
        ranked = sorted(by_rule.items(), key=lambda kv: (-max(severity(a) for a in kv[1]), -len(kv[1]), kv[0]))
        for rule, group in ranked[:5]:
            self.reviewed_rules.append((rule, len(group), len({a.get("host.name") for a in group})))
            rep = next((a for a in group if a.get("process.entity_id")), None)
            p = self.fetch(str(rep.get("process.entity_id"))) if rep else None
            if p is not None:
                self.seeds_found.append(p)

    def ti_sweep(self: Analyst) -> None:
        """Join the threat-intel indicators against what the estate actually talked to."""
        ind = self.tel.esql(
            f"FROM {TI} METADATA _id, _index | KEEP _id, _index, threat.indicator.type, threat.indicator.ip, "
            "threat.indicator.url.domain, threat.indicator.file.hash.sha256, threat.indicator.confidence, "
            "threat.feed.name, threat.indicator.description | LIMIT 1000"
        )
        ips = sorted({str(r["threat.indicator.ip"]) for r in ind if r.get("threat.indicator.ip")})
        doms = sorted({str(r["threat.indicator.url.domain"]) for r in ind if r.get("threat.indicator.url.domain")})
        hashes = sorted({str(r["threat.indicator.file.hash.sha256"]) for r in ind
                         if r.get("threat.indicator.file.hash.sha256")})
        self.ti_total = len(ind)
        matched: dict[str, str] = {}
        if ips:
            rows = self.tel.esql(
                f"FROM {ZCONN} | WHERE destination.ip IN ({q_in(ips)}) OR source.ip IN ({q_in(ips)}) "
                "| STATS n = COUNT(*), first = MIN(@timestamp) BY source.ip, destination.ip | SORT first | LIMIT 100"
            )
            for r in rows:
                for side in ("destination.ip", "source.ip"):
                    v = str(r.get(side))
                    if v in ips:
                        matched.setdefault(v, f"{r.get('n')} zeek connections")
        if doms:
            rows = self.tel.esql(
                f"FROM {ZDNS} METADATA _id | WHERE dns.question.registered_domain IN ({q_in(doms)}) OR "
                f"dns.question.name IN ({q_in(doms)}) | STATS n = COUNT(*), id = MIN(_id), ips = VALUES(dns.resolved_ip) "
                "BY dns.question.name, dns.question.registered_domain, source.ip | LIMIT 50"
            )
            for r in rows:
                d = str(r.get("dns.question.registered_domain") or r.get("dns.question.name"))
                matched.setdefault(d, f"resolved {r.get('n')}x as {r.get('dns.question.name')}")
                for ip in as_list(r.get("ips")):
                    if ip and not is_internal(str(ip)):
                        matched.setdefault(str(ip), f"address of {r.get('dns.question.name')}")
        if doms:
            # The resolver's lookups may be invisible to the sensor; TLS server names and HTTP hosts are not.
            for stream, field in ((ZSSL, "tls.client.server_name"), (ZHTTP, "url.domain")):
                cond = " OR ".join(f"{field} == {q(d)} OR {field} LIKE {q('*.' + d)}" for d in doms[:60])
                rows = self.tel.esql(
                    f"FROM {stream} METADATA _id | WHERE {cond} | STATS n = COUNT(*), first = MIN(@timestamp), "
                    f"id = MIN(_id) BY {field}, destination.ip | SORT first | LIMIT 50"
                )
                for r in rows:
                    name = str(r.get(field) or "")
                    d = next((d for d in doms if name == d or name.endswith("." + d)), name)
                    matched.setdefault(d, f"{r.get('n')} connections to {name}")
                    ip = str(r.get("destination.ip") or "")
                    if ip and not is_internal(ip):
                        matched.setdefault(ip, f"address of {name}")
        if hashes:
            rows = self.tel.esql(
                f"FROM {FILE} METADATA _id | WHERE file.hash.sha256 IN ({q_in(hashes)}) "
                "| KEEP @timestamp, _id, host.name, file.path, process.entity_id, file.hash.sha256 | LIMIT 20"
            )
            for r in rows:
                matched.setdefault(str(r.get("file.hash.sha256")), f"file {r.get('file.path')} on {r.get('host.name')}")
                p = self.fetch(r.get("process.entity_id"))
                if p is not None:
                    self.seeds_found.append(p)
        self.ti_matches = matched
        hit = {str(r.get("threat.indicator.ip") or r.get("threat.indicator.url.domain")
                   or r.get("threat.indicator.file.hash.sha256")): r for r in ind}
        for value in sorted(matched):
            r = hit.get(value)
            if r is not None:
                self.ti_hits.append((str(r.get("_index")), str(r.get("_id")), value))
                self.case.step("", "", f"threat intel: {value} ({r.get('threat.feed.name')}, "
                               f"{r.get('threat.indicator.confidence')} confidence: \"{r.get('threat.indicator.description')}\") "
                               f"matches our telemetry: {matched[value]}", TI, r.get("_id"))
        for v in sorted(matched):
            if is_ip(v) and not is_internal(v):
                self.investigate_external(v, f"threat-intel match ({matched[v]})")

    def volume_hunt(self: Analyst, host: str | None) -> None:
        """The largest single outbound transfers to the internet; the outliers are the lead."""
        src = f"source.ip IN ({q_in(self.case.inventory.get(host, []))})" if host in self.case.inventory else \
            'CIDR_MATCH(source.ip, "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")'
        rows = self.tel.esql(
            f"FROM {ZCONN} | WHERE {src} AND NOT CIDR_MATCH(destination.ip, \"10.0.0.0/8\", \"172.16.0.0/12\", "
            "\"192.168.0.0/16\") | STATS n = COUNT(*), out = SUM(source.bytes), big = MAX(source.bytes), "
            "clients = COUNT_DISTINCT(source.ip), first = MIN(@timestamp) BY destination.ip | SORT big DESC | LIMIT 20"
        )
        if not rows:
            return
        bigs = [int(r.get("big") or 0) for r in rows]
        for i, r in enumerate(rows):
            others = bigs[:i] + bigs[i + 1:]
            base_line = statistics.median(others) if others else 0
            big = bigs[i]
            if big >= OUTLIER_BYTES and big >= 20 * max(base_line, 1):
                ip = str(r.get("destination.ip"))
                self.volume_leads.append((ip, big))
                self.investigate_external(ip, f"{big / 1e6:.1f} MB left in one connection (other destinations: "
                                              f"at most {max(others or [0]) / 1e3:.0f} kB)")

    def dns_hunt(self: Analyst) -> None:
        rows = self.tel.esql(
            f"FROM {ZDNS} | WHERE LENGTH(dns.question.name) > 40 | STATS n = COUNT(*) BY source.ip "
            "| WHERE n >= 20 | SORT n DESC | LIMIT 3"
        )
        for r in rows:
            self.investigate_dns_client(str(r.get("source.ip")), "")

    def sweep_host(self: Analyst, host: str, when: str | None) -> None:
        from pytest_soclab.agents.analyst.trace import shell_or_interp_cond, web_parent_cond

        dirs = " OR ".join(f"process.executable LIKE {q(d + '*')}" for d in ("/tmp/", "/dev/shm/", "/var/tmp/"))
        found = self.procs_where(f"host.name == {q(host)} AND (({web_parent_cond()} AND {shell_or_interp_cond()}) OR "
                                 f"{dirs} OR process.command_line LIKE \"*/dev/tcp/*\")", 20)
        self.seeds_found += found[:5]

    def sweep_estate(self: Analyst) -> None:
        from pytest_soclab.agents.analyst.trace import shell_or_interp_cond, web_parent_cond

        dirs = " OR ".join(f"process.executable LIKE {q(d + '*')}" for d in ("/tmp/", "/dev/shm/", "/var/tmp/"))
        found = self.procs_where(f"(({web_parent_cond()} AND {shell_or_interp_cond()}) OR {dirs} OR "
                                 "process.command_line LIKE \"*/dev/tcp/*\")", 20)
        self.seeds_found += found[:5]

    # -- how this alert's rule behaves, and what else fired ------------------------------------------------------
    def alert_context(self: Analyst) -> None:
        trig = self.case.trigger_alert
        if trig is None:
            return
        same = [a for a in self.case.alerts if a.get("_id") != trig.get("_id")]
        if not same:
            return
        groups = recurring_groups(self.case.alerts)
        mine = next((g for g in groups if trig.get("_id") in {a.get("_id") for a in g}), [])
        hosts = sorted({str(a.get("host.name")) for a in self.case.alerts})
        days = sorted({clock.day(str(a.get("@timestamp"))) for a in self.case.alerts})
        rule = trig.get("kibana.alert.rule.name")
        self.rule_summary = (f"\"{rule}\" fired {len(self.case.alerts)} times in the window on {len(hosts)} hosts "
                             f"({', '.join(hosts[:8])}) over {len(days)} day(s)")
        pattern = [g for g in groups if len({a.get('host.name') for a in g}) >= 3 or len(
            {clock.day(str(a.get('@timestamp'))) for a in g}) >= 2]
        self.rule_pattern = []
        for g in pattern[:2]:
            rep = next((a for a in g if a.get("host.name") == trig.get("host.name") and a.get("_id") != trig.get("_id")),
                       None) or next((a for a in g if a.get("_id") != trig.get("_id")), None)
            if rep is None:
                continue
            self.rule_pattern.append((g, rep, g is mine))
        self.trigger_in_pattern = bool(mine) and any(g is mine for g, _, _ in self.rule_pattern)

    def other_alerts(self: Analyst) -> None:
        """The other rules that fired around the trigger, at its severity or above: what are they?"""
        trig = self.case.trigger_alert
        if trig is None:
            return
        t = str(trig.get("@timestamp"))
        alerts = self.tel.search(ALERTS, {"size": 300, "sort": [{"@timestamp": "asc"}], "query": {"bool": {"filter": [
            {"range": {"@timestamp": {"gte": clock.shift(t, -12 * 3600), "lte": clock.shift(t, 12 * 3600)}}}]}}})
        rule = trig.get("kibana.alert.rule.name")
        mine = {e for es in self.case.cluster.values() for e in es}
        by_rule: dict[str, list[dict[str, Any]]] = {}
        for a in alerts:
            if a.get("kibana.alert.rule.name") == rule:
                continue
            if a.get("process.entity_id") in mine:
                self.related_alerts.append(a)
                continue
            by_rule.setdefault(str(a.get("kibana.alert.rule.name")), []).append(a)
        ranked = sorted(by_rule.items(), key=lambda kv: (-max(severity(a) for a in kv[1]), kv[0]))
        for name, group in ranked[:3]:
            if max(severity(a) for a in group) < severity(trig) or len(group) < 2:
                continue
            self.other_groups.append((name, group))


def recurring_groups(alerts: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Alerts of one rule grouped by time of day (within 30 minutes): a scheduled job fires the same
    rule at the same time on many hosts, night after night."""
    def minute(a: dict[str, Any]) -> int:
        d = clock.parse(str(a.get("@timestamp")))
        return d.hour * 60 + d.minute if d else 0

    groups: list[list[dict[str, Any]]] = []
    for a in sorted(alerts, key=lambda a: (minute(a), str(a.get("@timestamp")))):
        if groups and abs(minute(a) - minute(groups[-1][0])) <= 30:
            groups[-1].append(a)
        else:
            groups.append([a])
    return groups

