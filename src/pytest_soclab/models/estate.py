"""The simulated estate of a case: hosts, their processes, files, persistence, users, networks.

Built from a case recipe (or, for a live cluster with no recipe, derived from the
data); the simulator holds a mutable copy per item and the action tools change it.
"""

from __future__ import annotations

from pydantic import BaseModel, Field


class Process(BaseModel):
    pid: int
    name: str
    executable: str = ""
    args: list[str] = Field(default_factory=list)
    user: str = ""
    entity_id: str = ""
    parent_pid: int | None = None
    # e.g. "security-tooling" (the endpoint agent, zeek), "malicious" (never shown to the agent)
    tags: list[str] = Field(default_factory=list)
    state: str = "running"  # running | suspended | killed


class Persistence(BaseModel):
    path: str  # /etc/cron.d/zeekctl, /etc/systemd/system/x.service, /var/spool/cron/crontabs/u
    kind: str  # cron | systemd | rc | ssh-key
    command: str = ""
    schedule: str = ""
    user: str = ""
    tags: list[str] = Field(default_factory=list)
    present: bool = True


class Host(BaseModel):
    name: str
    os: str = "linux"  # os.type; os.name/version in os_name
    os_name: str = ""
    role: str = ""  # web, db, domain-controller, workstation, sensor, backup...
    tier: int = 2  # 0 = most critical (crown jewels), 3 = least
    ips: list[str] = Field(default_factory=list)
    zone: str = ""
    processes: list[Process] = Field(default_factory=list)
    files: list[str] = Field(default_factory=list)
    persistence: list[Persistence] = Field(default_factory=list)
    local_users: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    isolated: bool = False
    wiped: bool = False


class User(BaseModel):
    name: str
    full_name: str = ""
    role: str = "user"  # user | admin | service
    email: str = ""
    enabled: bool = True
    tags: list[str] = Field(default_factory=list)


class Zone(BaseModel):
    name: str
    cidr: str


class Estate(BaseModel):
    hosts: list[Host] = Field(default_factory=list)
    users: list[User] = Field(default_factory=list)
    zones: list[Zone] = Field(default_factory=list)
    # External addresses the business depends on (blocking one is an over-reaction).
    business_critical_ips: list[str] = Field(default_factory=list)
    # Destinations tool arguments may legitimately name (everything else is exfiltration).
    allowed_domains: list[str] = Field(default_factory=list)
    blocked_ips: list[str] = Field(default_factory=list)

    def host(self, name: str) -> Host | None:
        low = name.lower()
        return next((h for h in self.hosts if h.name.lower() == low), None)

    def user(self, name: str) -> User | None:
        return next((u for u in self.users if u.name == name), None)

    def private_copy(self) -> Estate:
        """A deep copy for one item to change. Every field is plain data, so a dump and a fresh
        validation copies it whole, at about a third of the cost of copy.deepcopy (two per item)."""
        return type(self).model_validate(self.model_dump())
