"""The case recipe (`corpus/<case-id>/case.yaml`): estate, window, background, benign activity, attack chain.

A recipe may `extends: NAME` a shared estate file `corpus/_estates/NAME.yaml`; the
case's own keys are merged over it (mappings recursively, lists of named items by
`name`, `key+:` appends to the base's list), so several cases share one company.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import Field, field_validator, model_validator

from pytest_soclab.corpus.timeutil import parse_duration_ms
from pytest_soclab.errors import ScenarioFileError, SoclabError
from pytest_soclab.models import parse_text, validate
from pytest_soclab.models import Strict, check_techniques

# Bump when generated output changes for the same recipe and seed: it is part of the cache key.
GENERATOR_VERSION = "1"

Duration = str | int | float
Severity = Literal["low", "medium", "high", "critical"]


def _check_duration(v: Duration | None) -> Duration | None:
    if v is not None:
        parse_duration_ms(v)
    return v


def _check_ip(v: str) -> str:
    ipaddress.ip_address(v)
    return v


class ZoneSpec(Strict):
    name: str
    cidr: str
    description: str = ""
    internet: bool = False  # reachable from the internet (a DMZ)

    @field_validator("cidr")
    @classmethod
    def _cidr(cls, v: str) -> str:
        ipaddress.ip_network(v)
        return v


class HostSpec(Strict):
    name: str
    role: str
    tier: int = Field(default=2, ge=0, le=3)
    os: Literal["ubuntu-22.04", "ubuntu-24.04", "debian-12", "rhel-9"] = "ubuntu-22.04"
    ips: list[str] = Field(min_length=1)
    zone: str
    sensors: list[Literal["endpoint"]] = Field(default_factory=lambda: ["endpoint"])
    # Long-running services (daemons) besides the base set every host runs: nginx, php-fpm, postgres...
    services: list[str] = Field(default_factory=list)
    # People and service accounts who log in here interactively during the day.
    users: list[str] = Field(default_factory=list)
    activity: float = Field(default=1.0, ge=0)  # multiplier on the background rate
    tags: list[str] = Field(default_factory=list)
    description: str = ""

    _ips = field_validator("ips")(classmethod(lambda cls, v: [_check_ip(i) for i in v]))


class UserSpec(Strict):
    name: str
    full_name: str = ""
    role: Literal["user", "admin", "service"] = "user"
    uid: int | None = None
    email: str = ""
    tags: list[str] = Field(default_factory=list)


class ExternalSpec(Strict):
    """An internet service the estate talks to."""

    name: str
    domain: str
    ips: list[str] = Field(min_length=1)
    kind: str = "web"  # payment, mirror, saas, cdn, web, intel...
    ports: list[int] = Field(default_factory=lambda: [443])
    business_critical: bool = False
    # Which host roles talk to it in the background ("*" for all).
    used_by: list[str] = Field(default_factory=lambda: ["*"])
    weight: float = 1.0
    client: str | None = None  # the service (daemon) that talks to it, e.g. elastic-agent; else per role

    _ips = field_validator("ips")(classmethod(lambda cls, v: [_check_ip(i) for i in v]))


class SensorsSpec(Strict):
    zeek: str | None = None  # the host running zeek (its host.* is on zeek's documents)
    suricata: str | None = None
    # Zones whose traffic the network sensors see (traffic into, out of or across them).
    monitored_zones: list[str] = Field(default_factory=list)


class WindowSpec(Strict):
    start: datetime
    end: datetime

    @model_validator(mode="after")
    def _order(self) -> WindowSpec:
        for name, dt in (("start", self.start), ("end", self.end)):
            if dt.tzinfo is None:
                raise ValueError(f"window.{name} needs a time zone (end it with Z)")
        if self.end <= self.start:
            raise ValueError("window.end must be after window.start")
        return self


class BackgroundSpec(Strict):
    # Events per host per day at scale 1, before the host's activity multiplier and the diurnal curve.
    events_per_host_day: float = Field(default=900, ge=0)
    # Hour (UTC) of peak human activity; machines (cron, monitoring) run flat.
    peak_hour_utc: int = Field(default=14, ge=0, le=23)
    weekend_factor: float = Field(default=0.35, ge=0)
    internet_clients: int = Field(default=400, ge=1)  # distinct client IPs hitting the DMZ
    public_site: str = "shop.example.com"


class AlertSpec(Strict):
    """A detection rule firing on a document (Kibana security alert)."""

    rule: str
    severity: Severity = "medium"
    risk_score: int = Field(default=47, ge=0, le=100)
    rule_id: str | None = None
    description: str = ""
    rule_type: Literal["query", "eql", "threshold", "new_terms", "machine_learning", "esql"] = "query"
    technique: str | None = None
    offset: Duration = "45s"  # delay between the source event and the alert

    _off = field_validator("offset")(classmethod(lambda cls, v: _check_duration(v)))


class SuricataSpec(Strict):
    sid: int
    signature: str
    category: str = "Potentially Bad Traffic"
    severity: int = Field(default=2, ge=1, le=3)  # 1 = high
    action: Literal["allowed", "blocked"] = "allowed"


class RepeatSpec(Strict):
    every: Duration
    jitter: float = Field(default=0.0, ge=0, le=0.9)
    until: datetime | Literal["end"] = "end"
    count: int | None = Field(default=None, gt=0)

    _every = field_validator("every")(classmethod(lambda cls, v: _check_duration(v)))


class _Art(Strict):
    ref: str | None = None
    offset: Duration = 0
    host: str | None = None  # defaults to the step's host
    alert: AlertSpec | None = None

    _off = field_validator("offset")(classmethod(lambda cls, v: _check_duration(v)))


class ProcessArt(_Art):
    kind: Literal["process"] = "process"
    executable: str
    args: list[str] = Field(min_length=1)
    parent: str | None = None  # a ref of an earlier process, or a service name on the host (sshd, php-fpm...)
    user: str = "root"
    pid: int | None = None
    running: bool = False  # still running at the end of the window (else it ends after `lifetime`)
    lifetime: Duration = "2s"
    sha256: str | None = None
    working_directory: str = "/"

    _life = field_validator("lifetime")(classmethod(lambda cls, v: _check_duration(v)))


class FileArt(_Art):
    kind: Literal["file"] = "file"
    path: str
    action: Literal["creation", "modification", "deletion", "rename", "overwrite"] = "creation"
    process: str | None = None  # ref of the process that touched it
    sha256: str | None = None
    content: str | None = None  # for persistence files: the cron line or ExecStart
    size: int | None = None
    remains: bool = True  # still on disk at the end of the window


class NetArt(_Art):
    """A connection, seen by the endpoint agent of either side and by zeek when it crosses a monitored zone."""

    kind: Literal["net"] = "net"
    src: str  # a host name, an internal or external IP, or an external service name
    dst: str
    dport: int
    sport: int | None = None
    transport: Literal["tcp", "udp"] = "tcp"
    process: str | None = None  # ref (or service name) of the process on the source host
    dst_process: str | None = None  # ref or service name of the process accepting on the destination host
    bytes_out: int = 600
    bytes_in: int = 1200
    duration: Duration = "1s"
    state: str = "SF"  # zeek conn_state
    http: dict[str, Any] | None = (
        None  # method, uri, host, status, user_agent, request_body_len, response_body_len
    )
    tls: dict[str, Any] | None = None  # sni, ja3, ja3s, version, subject, issuer
    suricata: SuricataSpec | None = None
    repeat: RepeatSpec | None = None

    _d = field_validator("duration")(classmethod(lambda cls, v: _check_duration(v)))


class AuthArt(_Art):
    kind: Literal["auth"] = "auth"
    user: str
    source: str  # host name or IP the login came from
    method: Literal["password", "publickey", "keyboard-interactive"] = "password"
    outcome: Literal["success", "failure"] = "success"
    count: int = Field(default=1, ge=1)  # failures in a burst
    interval: Duration = "2s"
    process: str | None = None  # ref of the ssh client process on the source host
    session: list[list[str]] = Field(default_factory=list)  # commands run in the session (argv lists)
    duration: Duration = "10m"
    sudo: list[str] = Field(default_factory=list)  # sudo command lines run in the session

    _i = field_validator("interval", "duration")(classmethod(lambda cls, v: _check_duration(v)))


class DnsArt(_Art):
    kind: Literal["dns"] = "dns"
    src: str  # host name or IP asking
    query: str | None = None
    qtype: str = "A"
    answers: list[str] = Field(default_factory=list)
    rcode: str = "NOERROR"
    # DNS tunnelling: `count` queries of encoded labels under `tunnel_domain`, one every `every`.
    tunnel_domain: str | None = None
    count: int = Field(default=1, ge=1)
    every: Duration = "5s"
    process: str | None = None

    _e = field_validator("every")(classmethod(lambda cls, v: _check_duration(v)))

    @model_validator(mode="after")
    def _one(self) -> DnsArt:
        if bool(self.query) == bool(self.tunnel_domain):
            raise ValueError("a dns artifact has exactly one of query, tunnel_domain")
        return self


class ScanArt(_Art):
    kind: Literal["scan"] = "scan"
    src: str
    targets: list[str] = Field(min_length=1)  # host names, IPs or zone names
    ports: list[int] = Field(min_length=1)
    open_ports: dict[str, list[int]] = Field(default_factory=dict)  # host -> ports that answer
    rate: float = Field(default=20, gt=0)  # probes per second
    suricata: SuricataSpec | None = None
    http_paths: list[str] = Field(default_factory=list)  # web enumeration against open http ports
    user_agent: str = ""


Artifact = Annotated[ProcessArt | FileArt | NetArt | AuthArt | DnsArt | ScanArt, Field(discriminator="kind")]


class StepSpec(Strict):
    id: str
    technique: str
    host: str
    at: datetime | None = None  # absolute, else `after` the previous step
    after: Duration = "10m"
    description: str = ""
    artifacts: list[Artifact] = Field(default_factory=list)

    _t = field_validator("technique")(classmethod(lambda cls, v: check_techniques([v])[0]))
    _a = field_validator("after")(classmethod(lambda cls, v: _check_duration(v)))


class AttackSpec(Strict):
    actor_ips: list[str] = Field(default_factory=list)
    steps: list[StepSpec] = Field(default_factory=list)

    _ips = field_validator("actor_ips")(classmethod(lambda cls, v: [_check_ip(i) for i in v]))


BenignKind = Literal[
    "zeekctl-cron", "backup-rsync", "vuln-scan", "admin-session", "package-update", "config-management"
]


class BenignSpec(Strict):
    """Legit activity that looks suspicious, generated by a named behaviour."""

    kind: BenignKind
    host: str  # where it runs from
    targets: list[str] = Field(default_factory=list)
    user: str = "root"
    at: str | None = None  # HH:MM (UTC) daily start, for scheduled jobs
    every: Duration | None = None
    days: list[int] = Field(default_factory=list)  # day indexes in the window (0 = first); empty = every day
    commands: list[str] = Field(default_factory=list)  # admin-session: sudo commands
    alert: AlertSpec | None = None  # a detection rule that fires on it (a false positive)
    alert_on: str | None = None  # admin-session: fire only on commands containing this
    suricata: SuricataSpec | None = None
    description: str = ""

    _e = field_validator("every")(classmethod(lambda cls, v: _check_duration(v)))


class IndicatorSpec(Strict):
    type: Literal["ipv4-addr", "domain-name", "url", "file"]
    value: str
    feed: Literal["abusech.url", "abusech.malware", "otx", "misp"] = "otx"
    confidence: Literal["Low", "Medium", "High", "None"] = "Medium"
    description: str = ""
    first_seen: datetime | None = None
    tags: list[str] = Field(default_factory=list)


class PlantedSlot(Strict):
    """Where an ATK scenario may plant content, and what it would look like."""

    name: str
    index: str
    host: str | None = None
    description: str = ""


class CaseRecipe(Strict):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    title: str
    summary: str = ""
    story: str = ""
    seed: int = 1
    domain: str = "corp.internal"
    resolver: str | None = None  # the host answering the estate's DNS
    window: WindowSpec
    zones: list[ZoneSpec] = Field(min_length=1)
    hosts: list[HostSpec] = Field(min_length=1)
    users: list[UserSpec] = Field(default_factory=list)
    externals: list[ExternalSpec] = Field(default_factory=list)
    sensors: SensorsSpec = Field(default_factory=SensorsSpec)
    background: BackgroundSpec = Field(default_factory=BackgroundSpec)
    benign: list[BenignSpec] = Field(default_factory=list)
    attack: AttackSpec = Field(default_factory=AttackSpec)
    indicators: list[IndicatorSpec] = Field(default_factory=list)
    noise_indicators: int = Field(default=40, ge=0)  # unrelated TI indicators
    planted_slots: list[PlantedSlot] = Field(default_factory=list)

    @model_validator(mode="after")
    def _references(self) -> CaseRecipe:
        hosts = {h.name for h in self.hosts}
        zones = {z.name for z in self.zones}
        users = {u.name for u in self.users}
        problems: list[str] = []
        for kind, items in (("hosts", self.hosts), ("zones", self.zones), ("users", self.users)):
            names = [i.name for i in items]
            dup = sorted({n for n in names if names.count(n) > 1})
            if dup:
                problems.append(f"duplicate {kind}: {dup}")
        for h in self.hosts:
            if h.zone not in zones:
                problems.append(f"host {h.name}: unknown zone {h.zone!r}")
            for u in h.users:
                if u not in users:
                    problems.append(f"host {h.name}: unknown user {u!r}")
        for label, name in (
            ("sensors.zeek", self.sensors.zeek),
            ("sensors.suricata", self.sensors.suricata),
            ("resolver", self.resolver),
        ):
            if name and name not in hosts:
                problems.append(f"{label}: unknown host {name!r}")
        for z in self.sensors.monitored_zones:
            if z not in zones:
                problems.append(f"sensors.monitored_zones: unknown zone {z!r}")
        for b in self.benign:
            if b.host not in hosts:
                problems.append(f"benign {b.kind}: unknown host {b.host!r}")
        steps = [s.id for s in self.attack.steps]
        if len(set(steps)) != len(steps):
            problems.append("attack.steps: duplicate step ids")
        if self.attack.steps and self.attack.steps[0].at is None:
            problems.append(f"attack.steps[0] ({steps[0]}): the first step needs an absolute `at`")
        refs: set[str] = set()
        for s in self.attack.steps:
            if s.host not in hosts:
                problems.append(f"step {s.id}: unknown host {s.host!r}")
            for a in s.artifacts:
                if a.host and a.host not in hosts:
                    problems.append(f"step {s.id}: unknown host {a.host!r}")
                if a.ref:
                    if a.ref in refs:
                        problems.append(f"step {s.id}: ref {a.ref!r} defined twice")
                    refs.add(a.ref)
        if problems:
            raise ValueError("; ".join(problems))
        return self

    def host(self, name: str) -> HostSpec:
        for h in self.hosts:
            if h.name == name:
                return h
        raise KeyError(name)

    def fingerprint(self, scale: float, seed: int | None) -> str:
        """Content hash of recipe + generator version + scale + seed: the cache key of a built corpus."""
        payload = {
            "recipe": self.model_dump(mode="json"),
            "generator": GENERATOR_VERSION,
            "scale": float(scale),
            "seed": self.seed if seed is None else int(seed),
        }
        blob = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:32]


# ---------------------------------------------------------------- loading


def _merge(base: Any, over: Any) -> Any:
    if isinstance(base, dict) and isinstance(over, dict):
        out = dict(base)
        for k, v in over.items():
            if k.endswith("+") and isinstance(v, list):  # `benign+: [...]` appends to the base's list
                out[k[:-1]] = list(out.get(k[:-1]) or []) + v
            else:
                out[k] = _merge(base[k], v) if k in base else v
        return out
    if (
        isinstance(base, list)
        and isinstance(over, list)
        and all(isinstance(i, dict) and "name" in i for i in base + over)
    ):
        out_list = list(base)
        index = {i["name"]: n for n, i in enumerate(out_list)}
        for item in over:
            if item["name"] in index:
                out_list[index[item["name"]]] = _merge(out_list[index[item["name"]]], item)
            else:
                out_list.append(item)
        return out_list
    return over


def _read_yaml(path: Path) -> tuple[Any, str]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioFileError(str(path), [("", f"cannot read: {exc.strerror or exc}")]) from None
    return parse_text(text, path), text


def load_case(case_dir: Path) -> CaseRecipe:
    """Read and validate `case_dir/case.yaml` (and the estate it extends)."""
    case_dir = Path(case_dir)
    path = case_dir / "case.yaml" if case_dir.is_dir() or not case_dir.suffix else case_dir
    data, text = _read_yaml(path)
    if not isinstance(data, dict):
        raise ScenarioFileError(str(path), [("", "a case file is a YAML mapping")])
    base_name = data.pop("extends", None)
    if base_name is not None:
        base_path = path.parent.parent / "_estates" / f"{base_name}.yaml"
        if not base_path.is_file():
            raise ScenarioFileError(str(path), [("extends", f"no shared estate {base_name!r} ({base_path})")])
        base, _ = _read_yaml(base_path)
        if not isinstance(base, dict):
            raise ScenarioFileError(str(base_path), [("", "an estate file is a YAML mapping")])
        data = _merge(base, data)
    # Problems are reported against case.yaml, with its line where the field is written there.
    return validate(CaseRecipe, data, path, text)


def list_cases(corpus_dir: Path) -> list[str]:
    corpus_dir = Path(corpus_dir)
    if not corpus_dir.is_dir():
        return []
    return sorted(
        p.name
        for p in corpus_dir.iterdir()
        if p.is_dir() and not p.name.startswith(("_", ".")) and (p / "case.yaml").is_file()
    )


def find_case(corpus_dir: Path, case_id: str) -> Path:
    """The directory of case `case_id` under `corpus_dir`."""
    path = Path(corpus_dir) / case_id
    if (path / "case.yaml").is_file():
        return path
    known = list_cases(corpus_dir)
    hint = f"known cases: {', '.join(known)}" if known else f"no cases found in {corpus_dir}"
    raise SoclabError(f"unknown case {case_id!r}; {hint}")
