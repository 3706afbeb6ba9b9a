"""Recorded cases: `corpus/<case>/case.yaml` naming a recording shipped in the repository.

A recorded case is built like a generated one, into the store's cache on first use: the
importer converts the recording to ECS, the case's own options are applied (clock alignment,
Elastic's default of dropping `event.original`), and the detection alerts the case declares
fire on the first recorded event each one matches. What the data cannot say about the estate
(tiers, roles, the IPs of Windows hosts) comes from `hosts:` and `users:` overrides.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import Field, field_validator

from pytest_soclab.corpus.recipe import AlertSpec, WindowSpec, _check_ip
from pytest_soclab.errors import ScenarioFileError, SoclabError
from pytest_soclab.models import Estate, Host, Strict, User, parse_text, validate
from pytest_soclab.models.fields import field_value

# Bump when the documents built from the same recording change: it is part of the cache key.
RECORDED_VERSION = "3"
RECORDINGS_DIR = "_recordings"


class RecordingSpec(Strict):
    importer: Literal["otrf", "windows", "sysmon-linux", "zeek"] = "otrf"
    files: list[str] = Field(min_length=1)  # relative to the corpus directory
    source: str  # where the recording comes from upstream
    licence: str = "MIT"
    # Elastic's integrations drop `event.original` unless `preserve_original_event` is set.
    keep_original: bool = False
    # Shift the Windows channels stamped with NXLog's TimeCreated onto Sysmon's UtcTime clock
    # (some recordings wrote TimeCreated in a local or skewed clock; Sysmon and Zeek agree on UTC).
    align_clocks: bool = False


class RecordedHost(Strict):
    name: str  # host.name as the data has it
    role: str = "workstation"
    tier: int = Field(default=2, ge=0, le=3)
    os: str = "windows"
    ips: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)

    _ips = field_validator("ips")(classmethod(lambda cls, v: [_check_ip(i) for i in v]))


class RecordedUser(Strict):
    name: str
    role: Literal["user", "admin", "service"] = "user"
    tags: list[str] = Field(default_factory=list)


class RecordedAlert(AlertSpec):
    """A detection rule that fires on the first event of `stream` whose fields equal `match`."""

    stream: str
    match: dict[str, str | int] = Field(min_length=1)  # dotted field -> value (lists: any element)


class RecordedCase(Strict):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    title: str
    summary: str = ""
    story: str = ""
    recording: RecordingSpec
    window: WindowSpec | None = None  # else the data's first and last event
    hosts: list[RecordedHost] = Field(default_factory=list)
    users: list[RecordedUser] = Field(default_factory=list)
    allowed_domains: list[str] = Field(default_factory=list)
    business_critical_ips: list[str] = Field(default_factory=list)
    alerts: list[RecordedAlert] = Field(default_factory=list)

    def paths(self, corpus_dir: Path) -> list[Path]:
        return [Path(corpus_dir) / f for f in self.recording.files]

    def fingerprint(self, corpus_dir: Path) -> str:
        """Content hash of the case file, the recording's bytes and the builder's version."""
        h = hashlib.sha256(json.dumps(self.model_dump(mode="json"), sort_keys=True).encode())
        h.update(RECORDED_VERSION.encode())
        for path in self.paths(corpus_dir):
            try:
                h.update(path.read_bytes())
            except OSError as exc:
                raise SoclabError(f"case {self.id}: recording {path}: {exc.strerror or exc}") from None
        return h.hexdigest()[:32]


def is_recorded(case_dir: Path) -> bool:
    """Whether `case_dir/case.yaml` names a recording (rather than being a generator recipe)."""
    path = Path(case_dir) / "case.yaml"
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return False
    return isinstance(data, dict) and "recording" in data


def load_recorded(case_dir: Path) -> RecordedCase:
    path = Path(case_dir) / "case.yaml"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioFileError(str(path), [("", f"cannot read: {exc.strerror or exc}")]) from None
    return validate(RecordedCase, parse_text(text, path), path, text)


def matches(doc: dict[str, Any], match: dict[str, str | int]) -> bool:
    for field, want in match.items():
        got = field_value(doc, field)
        values = got if isinstance(got, list) else [got]
        if not any(v is not None and str(v) == str(want) for v in values):
            return False
    return True


def read_docs(files: dict[str, Path]) -> Iterator[tuple[str, int, dict[str, Any]]]:
    for stream in sorted(files):
        with files[stream].open(encoding="utf-8") as fh:
            for n, line in enumerate(fh):
                yield stream, n, json.loads(line)


def with_overrides(estate: Estate, case: RecordedCase) -> Estate:
    """The derived estate with the case's hosts and users laid over it (matched by name, any case)."""
    hosts = {h.name.lower(): h for h in estate.hosts}
    for spec in case.hosts:
        host = hosts.get(spec.name.lower())
        if host is None:
            host = hosts[spec.name.lower()] = Host(name=spec.name)
        host.role, host.tier, host.os = spec.role, spec.tier, spec.os
        host.ips = sorted(set(host.ips) | set(spec.ips))
        host.tags = sorted(set(host.tags) | set(spec.tags))
    users = {u.name.lower(): u for u in estate.users}
    for uspec in case.users:
        user = users.get(uspec.name.lower())
        if user is None:
            user = users[uspec.name.lower()] = User(name=uspec.name)
        user.role, user.tags = uspec.role, sorted(set(user.tags) | set(uspec.tags))
    return estate.model_copy(
        update={
            "hosts": [hosts[k] for k in sorted(hosts)],
            "users": [users[k] for k in sorted(users)],
            "allowed_domains": list(dict.fromkeys([*estate.allowed_domains, *case.allowed_domains])),
            "business_critical_ips": sorted(set(estate.business_critical_ips) | set(case.business_critical_ips)),
        }
    )
