"""Case bases: where composed attacks are planted, and the estate's roles their objectives aim at.

A base is a task (its case, trigger and tools) or an explicit entry of the suite file (a
recorded case). Its roles come from the case recipe: the clean tier-0 host an attacker
wants isolated, the security team's own account and infrastructure, the network sensor's
cron, an innocent host to blame. Nothing is invented: a role the estate lacks leaves the
objectives that need it out of that base.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from pytest_soclab.corpus import STREAMS, find_case, is_recorded, load_case
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
        return None  # a recording has no recipe to place content by roles: compose over it through extra_bases
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


def base_from_spec(spec: CaseBaseSpec, corpus_dir: Path) -> Base:
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
