"""Case bases: where composed attacks are planted, and the estate's roles their objectives aim at.

A base is a task (its case, trigger and tools) or an explicit entry of the suite file. Its
roles come from the case recipe, or from a recorded case's file (its hosts' roles and tiers,
its users, its business-critical addresses): the clean tier-0 host an attacker wants
isolated, the security team's own account and infrastructure, the network sensor's cron, an
innocent host to blame. Nothing is invented: a role the estate lacks leaves the objectives
that need it out of that base. A recorded base is built without importing its recording: its
streams are those its alerts and its answer key name, which the recording surely has.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any

from pytest_soclab.corpus import STREAMS, find_case, is_recorded, load_case, load_recorded
from pytest_soclab.models import ActionRef, Task, load_spec
from pytest_soclab.models.composed import CaseBaseSpec

DEFAULT_ATTACKER_IP = "203.0.113.250"  # a documentation address: an internet peer no case uses


@dataclass(frozen=True)
class Base:
    id: str  # the task id (or the explicit base's id), short: it is part of every case id
    case: str
    trigger: dict[str, Any]
    allowed_tools: tuple[str, ...]
    host: str  # where endpoint content lands; its address carries the network content
    host_ip: str
    attacker_ip: str
    known_attacker: bool  # the attacker's address is in the case (threat intel on it gets read)
    implicated: tuple[str, ...]
    streams: frozenset[str]
    window: tuple[str, str]  # the case window (ISO), for planted timestamps
    time: str  # a timestamp near the trigger, for the planted documents
    legit: tuple[ActionRef, ...] = ()  # the containment the work needs (benign counterparts)
    roles: dict[str, str] = field(default_factory=dict)  # role -> host, user, ip or path
    recorded: bool = False  # planted documents are written as the recording's source logs them


@cache
def _recipe(corpus_dir: Path, case: str) -> Any:
    # Several tasks share a case; a recipe costs most of a second to load and validate.
    return load_case(find_case(corpus_dir, case))


def _short(task_id: str) -> str:
    return task_id.replace("task-", "t")


def _roles(recipe: Any, implicated: set[str], legit: tuple[ActionRef, ...]) -> dict[str, str]:
    roles: dict[str, str] = {}
    hosts = [h for h in recipe.hosts if h.name not in implicated]
    tier0 = [h for h in hosts if h.tier == 0]
    if tier0:
        roles["tier0_host"] = tier0[0].name
    legit_users = {str(a.args.get("user")) for a in legit if a.tool == "disable_user"}
    secops = [u for u in recipe.users if "secops" in u.tags and u.name not in legit_users]
    admins = [u for u in recipe.users if u.role == "admin" and u.name not in legit_users]
    if secops or admins:
        roles["soc_user"] = (secops or admins)[0].name
    infra = [e for e in recipe.externals if e.business_critical and (e.client == "elastic-agent" or e.kind == "saas")]
    if infra:
        roles["soc_ip"] = infra[0].ips[0]
    if recipe.resolver:
        roles["resolver_ip"] = recipe.host(recipe.resolver).ips[0]
    sensor = recipe.sensors.zeek
    if sensor and any(b.kind == "zeekctl-cron" for b in recipe.benign):
        roles["sensor_host"] = sensor
        roles["sensor_cron"] = "/etc/cron.d/zeekctl"
    innocent = [h for h in hosts if h.role == "workstation"]
    if innocent:
        roles["innocent_host"] = innocent[-1].name
        owner = next((u for u in recipe.users if u.name in innocent[-1].users), None)
        if owner is not None:
            roles["innocent_user"] = owner.name
            roles["innocent_name"] = owner.full_name or owner.name
    return roles


def _time(trigger: dict[str, Any], window: tuple[str, str]) -> str:
    pivot = trigger.get("pivot") or {}
    t = str(pivot.get("time_utc") or "")
    return t if window[0] <= t <= window[1] else window[0]


def base_from_task(task: Task, corpus_dir: Path) -> Base | None:
    case_dir = find_case(corpus_dir, task.source_case)
    if is_recorded(case_dir):
        return _recorded_base(task, case_dir)
    recipe = _recipe(corpus_dir, task.source_case)
    trigger = task.trigger.model_dump()
    gt = task.ground_truth
    host = str((trigger.get("pivot") or {}).get("host.name") or next(iter(gt.implicated_hosts), ""))
    if not host:
        return None
    spec = recipe.host(host)
    legit = tuple(task.expected_response.required_actions)
    window = (recipe.window.start.strftime("%Y-%m-%dT%H:%M:%SZ"), recipe.window.end.strftime("%Y-%m-%dT%H:%M:%SZ"))
    return Base(
        id=_short(task.id),
        case=task.source_case,
        trigger=trigger,
        allowed_tools=tuple(task.allowed_tools),
        host=host,
        host_ip=spec.ips[0],
        attacker_ip=gt.attacker_ip or DEFAULT_ATTACKER_IP,
        known_attacker=gt.attacker_ip is not None,
        implicated=tuple(gt.implicated_hosts),
        streams=frozenset(STREAMS),
        window=window,
        time=_time(trigger, window),
        legit=legit,
        roles=_roles(recipe, set(gt.implicated_hosts) | {host}, legit),
    )


# -- recorded cases ---------------------------------------------------------------------------------
RECORDED_HALF_WINDOW = timedelta(hours=6)  # around the trigger, when the case file declares no window
_COLLECTOR_ROLES = ("log-collector", "siem", "wec")


def _same_host(a: str, b: str) -> bool:
    return a.lower() == b.lower() or a.split(".", 1)[0].lower() == b.split(".", 1)[0].lower()


def _recorded_streams(case: Any, sources: list[str]) -> frozenset[str]:
    named = {a.stream for a in case.alerts} | {s if s.endswith("-default") else f"{s}-default" for s in sources}
    if case.alerts:
        named.add(".alerts-security.alerts-default")
    return frozenset(named)


def _values(args: dict[str, Any]) -> list[Any]:
    return [x for v in args.values() for x in (v if isinstance(v, list) else [v])]


def _recorded_roles(case: Any, implicated: list[str], acted: set[str], accused: str,
                    attacker: str | None) -> dict[str, str]:  # fmt: skip
    """Roles from the case file, never what the task acts on or accuses: hosts it implicates or asks to
    contain (`acted`: its required actions' targets and its indicators), accounts its answer key or
    response names (`accused`: their text). What its penalty lines protect (a domain controller, the
    event collector) is exactly what an attacker aims at."""
    clean = [h for h in case.hosts if not any(_same_host(h.name, i) for i in [*implicated, *acted])]
    roles: dict[str, str] = {}
    tier0 = [h for h in clean if h.tier == 0]
    if tier0:
        roles["tier0_host"] = tier0[0].name
    admins = [u for u in case.users if u.role == "admin" and "system" not in u.tags and u.name.lower() not in accused]
    if admins:
        roles["soc_user"] = admins[0].name
    involved = {attacker, *acted} | {ip for h in case.hosts if h not in clean for ip in h.ips}
    collectors = [ip for h in clean if h.role in _COLLECTOR_ROLES for ip in h.ips]
    critical = [ip for ip in [*collectors, *case.business_critical_ips] if ip not in involved]
    if critical:
        roles["soc_ip"] = critical[0]
    dcs = [ip for h in case.hosts if h.role == "domain-controller" for ip in h.ips]
    if dcs:
        roles["resolver_ip"] = dcs[0]  # a Windows domain's DNS server
    workstations = [h for h in clean if h.role == "workstation"]
    people = [u for u in case.users if u.role == "user" and u.name.lower() not in accused]
    if workstations and people:
        roles["innocent_host"] = workstations[-1].name
        roles["innocent_user"] = roles["innocent_name"] = people[0].name
    actors = [u.name for u in case.users if "system" not in u.tags and u.name.lower() in accused]
    if actors:
        roles["actor_user"] = actors[0]  # who runs the attacker's processes in the planted events
    return roles


def _recorded_window(case: Any, when: str) -> tuple[str, str]:
    if case.window is not None:
        lo, hi = case.window.start, case.window.end
    else:
        t = datetime.fromisoformat(when.replace("Z", "+00:00"))
        lo, hi = t - RECORDED_HALF_WINDOW, t + RECORDED_HALF_WINDOW
    return lo.strftime("%Y-%m-%dT%H:%M:%SZ"), hi.strftime("%Y-%m-%dT%H:%M:%SZ")


def _recorded_base(task: Task, case_dir: Path) -> Base | None:
    case = load_recorded(case_dir)
    trigger = task.trigger.model_dump()
    gt = task.ground_truth
    pivot = trigger.get("pivot") or {}
    name = str(pivot.get("host.name") or next(iter(gt.implicated_hosts), ""))
    spec = next((h for h in case.hosts if _same_host(h.name, name)), None)
    when = str(pivot.get("time_utc") or "")
    if spec is None or not when:
        return None
    window = _recorded_window(case, when)
    return Base(
        id=_short(task.id),
        case=task.source_case,
        trigger=trigger,
        allowed_tools=tuple(task.allowed_tools),
        host=spec.name,  # as the case file spells it: Windows logs the computer name as configured
        host_ip=spec.ips[0] if spec.ips else "",
        attacker_ip=gt.attacker_ip or DEFAULT_ATTACKER_IP,
        known_attacker=gt.attacker_ip is not None,
        implicated=tuple(gt.implicated_hosts),
        streams=_recorded_streams(case, [ev.source for ev in gt.key_evidence]),
        window=window,
        time=_time(trigger, window),
        legit=tuple(task.expected_response.required_actions),
        roles=_recorded_roles(case, [*gt.implicated_hosts, spec.name], _acted(task), _accused(task), gt.attacker_ip),
        recorded=True,
    )


def _acted(task: Task) -> set[str]:
    er = task.expected_response
    return {str(v).lower() for a in er.required_actions for v in _values(a.args)} | {
        i.lower() for i in task.ground_truth.iocs
    }


def _accused(task: Task) -> str:
    er = task.expected_response
    return json.dumps([task.ground_truth.model_dump(mode="json"), er.required,
                       [a.args for a in er.required_actions]]).lower()  # fmt: skip


def _recorded_spec_base(spec: CaseBaseSpec, case: Any) -> Base:
    host = next((h for h in case.hosts if _same_host(h.name, spec.host)), None)
    when = str((spec.trigger.get("pivot") or {}).get("time_utc") or "")
    if host is None or (case.window is None and not when):
        raise ValueError(f"extra base {spec.id}: host {spec.host!r} is not in {spec.case}'s case file, or the "
                         "trigger has no pivot.time_utc and the case file no window")  # fmt: skip
    window = _recorded_window(case, when)
    return Base(
        id=spec.id, case=spec.case, trigger=spec.trigger, allowed_tools=tuple(spec.allowed_tools), host=host.name,
        host_ip=host.ips[0] if host.ips else "", attacker_ip=spec.attacker_ip or DEFAULT_ATTACKER_IP,
        known_attacker=spec.attacker_ip is not None, implicated=tuple(spec.implicated),
        streams=_recorded_streams(case, spec.streams), window=window,
        time=_time(spec.trigger, window), recorded=True,
        roles=_recorded_roles(case, [*spec.implicated, host.name], set(), "", spec.attacker_ip),
    )  # fmt: skip


def base_from_spec(spec: CaseBaseSpec, corpus_dir: Path) -> Base:
    case_dir = find_case(corpus_dir, spec.case)
    if is_recorded(case_dir):
        return _recorded_spec_base(spec, load_recorded(case_dir))
    recipe = _recipe(corpus_dir, spec.case)
    window = (recipe.window.start.strftime("%Y-%m-%dT%H:%M:%SZ"), recipe.window.end.strftime("%Y-%m-%dT%H:%M:%SZ"))
    return Base(
        id=spec.id,
        case=spec.case,
        trigger=spec.trigger,
        allowed_tools=tuple(spec.allowed_tools),
        host=spec.host,
        host_ip=recipe.host(spec.host).ips[0],
        attacker_ip=spec.attacker_ip or DEFAULT_ATTACKER_IP,
        known_attacker=spec.attacker_ip is not None,
        implicated=tuple(spec.implicated),
        streams=frozenset(spec.streams or STREAMS),
        window=window,
        time=_time(spec.trigger, window),
        roles=_roles(recipe, set(spec.implicated) | {spec.host}, ()),
    )


def load_bases(tasks_dir: Path, corpus_dir: Path, wanted: list[str], extra: list[CaseBaseSpec]) -> list[Base]:
    """The bases of a suite: every task (or the wanted ones, by task id), then the explicit ones."""
    out: list[Base] = []
    for path in sorted(tasks_dir.glob("task-*.json")):
        task = load_spec(path)
        if not isinstance(task, Task) or (wanted and task.id not in wanted):
            continue
        base = base_from_task(task, corpus_dir)
        if base is not None:
            out.append(base)
    out += [base_from_spec(s, corpus_dir) for s in extra]
    return out
