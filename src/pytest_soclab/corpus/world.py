"""The static world derived from a recipe: per-host ECS blocks, daemons with stable pids, address lookups.

Both the generator and `estate_from_recipe` build on this, so that a pid or a name
in the telemetry is the same pid and name the simulator's action surface knows.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import Any

from pytest_soclab.corpus import ids
from pytest_soclab.corpus.recipe import CaseRecipe, ExternalSpec, HostSpec
from pytest_soclab.corpus.timeutil import to_ms

AGENT_VERSION = "8.15.3"
ECS_VERSION = "8.11.0"

_OS: dict[str, dict[str, str]] = {
    "ubuntu-22.04": {
        "family": "debian",
        "full": "Ubuntu 22.04.4 LTS",
        "kernel": "5.15.0-105-generic",
        "name": "Ubuntu",
        "platform": "ubuntu",
        "type": "linux",
        "version": "22.04.4 LTS (Jammy Jellyfish)",
    },
    "ubuntu-24.04": {
        "family": "debian",
        "full": "Ubuntu 24.04.1 LTS",
        "kernel": "6.8.0-45-generic",
        "name": "Ubuntu",
        "platform": "ubuntu",
        "type": "linux",
        "version": "24.04.1 LTS (Noble Numbat)",
    },
    "debian-12": {
        "family": "debian",
        "full": "Debian GNU/Linux 12 (bookworm)",
        "kernel": "6.1.0-25-amd64",
        "name": "Debian GNU/Linux",
        "platform": "debian",
        "type": "linux",
        "version": "12 (bookworm)",
    },
    "rhel-9": {
        "family": "redhat",
        "full": "Red Hat Enterprise Linux 9.4 (Plow)",
        "kernel": "5.14.0-427.13.1.el9_4.x86_64",
        "name": "Red Hat Enterprise Linux",
        "platform": "rhel",
        "type": "linux",
        "version": "9.4 (Plow)",
    },
}


@dataclass(frozen=True)
class ServiceDef:
    executable: str
    args: tuple[str, ...]
    user: str = "root"
    tags: tuple[str, ...] = ()
    parent: str | None = "systemd"  # parent daemon name


# Daemons every host runs, then those a host's `services` may name.
BASE_SERVICES = ("systemd", "systemd-journald", "rsyslogd", "cron", "sshd", "node_exporter")
SERVICES: dict[str, ServiceDef] = {
    "systemd": ServiceDef("/usr/lib/systemd/systemd", ("/sbin/init",), parent=None),
    "systemd-journald": ServiceDef("/usr/lib/systemd/systemd-journald", ("/lib/systemd/systemd-journald",)),
    "rsyslogd": ServiceDef("/usr/sbin/rsyslogd", ("/usr/sbin/rsyslogd", "-n", "-iNONE"), user="syslog"),
    "cron": ServiceDef("/usr/sbin/cron", ("/usr/sbin/cron", "-f", "-P")),
    "sshd": ServiceDef("/usr/sbin/sshd", ("sshd: /usr/sbin/sshd -D [listener] 0 of 10-100 startups",)),
    "node_exporter": ServiceDef(
        "/usr/local/bin/node_exporter",
        ("/usr/local/bin/node_exporter", "--web.listen-address=:9100"),
        user="prometheus",
        tags=("monitoring",),
    ),
    "elastic-agent": ServiceDef(
        "/opt/Elastic/Agent/elastic-agent", ("/opt/Elastic/Agent/elastic-agent",), tags=("security-tooling",)
    ),
    "elastic-endpoint": ServiceDef(
        "/opt/Elastic/Endpoint/elastic-endpoint",
        ("/opt/Elastic/Endpoint/elastic-endpoint", "run"),
        tags=("security-tooling",),
    ),
    "nginx": ServiceDef(
        "/usr/sbin/nginx", ("nginx: master process /usr/sbin/nginx -g daemon on; master_process on;",)
    ),
    "php-fpm": ServiceDef("/usr/sbin/php-fpm8.1", ("php-fpm: pool www",), user="www-data"),
    "gunicorn": ServiceDef(
        "/opt/shop/venv/bin/python3",
        (
            "/opt/shop/venv/bin/python3",
            "/opt/shop/venv/bin/gunicorn",
            "shop.wsgi:application",
            "-w",
            "4",
            "-b",
            "0.0.0.0:8000",
        ),
        user="shop",
    ),
    "postgres": ServiceDef(
        "/usr/lib/postgresql/14/bin/postgres",
        (
            "/usr/lib/postgresql/14/bin/postgres",
            "-D",
            "/var/lib/postgresql/14/main",
            "-c",
            "config_file=/etc/postgresql/14/main/postgresql.conf",
        ),
        user="postgres",
    ),
    "redis-server": ServiceDef(
        "/usr/bin/redis-server", ("/usr/bin/redis-server", "127.0.0.1:6379"), user="redis"
    ),
    "samba": ServiceDef("/usr/sbin/samba", ("/usr/sbin/samba", "--foreground", "--no-process-group")),
    "krb5kdc": ServiceDef("/usr/sbin/krb5kdc", ("/usr/sbin/krb5kdc", "-P", "/var/run/krb5kdc.pid")),
    "slapd": ServiceDef(
        "/usr/sbin/slapd",
        ("/usr/sbin/slapd", "-h", "ldap:/// ldapi:/// ldaps:///", "-g", "openldap", "-u", "openldap"),
        user="openldap",
    ),
    "zeek": ServiceDef(
        "/opt/zeek/bin/zeek",
        (
            "/opt/zeek/bin/zeek",
            "-i",
            "af_packet::ens5",
            "-U",
            ".status",
            "-p",
            "zeekctl",
            "-p",
            "zeekctl-live",
            "local",
            "zeekctl/auto",
        ),
        tags=("security-tooling",),
    ),
    "suricata": ServiceDef(
        "/usr/bin/suricata",
        ("/usr/bin/suricata", "-c", "/etc/suricata/suricata.yaml", "--af-packet", "-D"),
        tags=("security-tooling",),
    ),
    "prometheus": ServiceDef(
        "/usr/local/bin/prometheus",
        ("/usr/local/bin/prometheus", "--config.file=/etc/prometheus/prometheus.yml"),
        user="prometheus",
        tags=("monitoring",),
    ),
    "grafana-server": ServiceDef(
        "/usr/share/grafana/bin/grafana",
        ("/usr/share/grafana/bin/grafana", "server", "--config=/etc/grafana/grafana.ini"),
        user="grafana",
        tags=("monitoring",),
    ),
    "ospd-openvas": ServiceDef(
        "/usr/bin/python3",
        ("/usr/bin/python3", "/usr/local/bin/ospd-openvas", "--unix-socket", "/run/ospd/ospd.sock"),
        user="gvm",
        tags=("security-tooling",),
    ),
    "gvmd": ServiceDef(
        "/usr/sbin/gvmd", ("gvmd: Waiting for incoming connections",), user="gvm", tags=("security-tooling",)
    ),
    "rsnapshot-agent": ServiceDef(
        "/usr/bin/rsync", ("/usr/bin/rsync", "--daemon", "--no-detach"), tags=("backup",)
    ),
    "gnome-shell": ServiceDef("/usr/bin/gnome-shell", ("/usr/bin/gnome-shell",), user="gdm"),
}


@dataclass(slots=True)
class Proc:
    """A process as the telemetry shows it."""

    host: str
    pid: int
    entity_id: str
    name: str
    executable: str
    args: list[str]
    user: str
    start_ms: int
    parent: Proc | None = None
    tags: list[str] = field(default_factory=list)
    working_directory: str = "/"
    hashes: dict[str, str] | None = None

    _parent_block: dict[str, Any] | None = None
    command_line: str = ""

    def __post_init__(self) -> None:
        self.command_line = " ".join(self.args)

    def parent_block(self) -> dict[str, Any]:
        """The `process.parent` block of its children (built once; shared, read-only)."""
        if self._parent_block is None:
            self._parent_block = {
                "args": self.args,
                "args_count": len(self.args),
                "command_line": self.command_line,
                "entity_id": self.entity_id,
                "executable": self.executable,
                "name": self.name,
                "pid": self.pid,
            }
        return self._parent_block


@dataclass
class HostCtx:
    spec: HostSpec
    agent_id: str
    host_block: dict[str, Any]
    endpoint_agent: dict[str, Any]
    filebeat_agent: dict[str, Any]
    daemons: dict[str, Proc]
    has_endpoint: bool
    boot_ms: int
    reserved_pids: set[int] = field(default_factory=set)

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def ip(self) -> str:
        return self.spec.ips[0]


class World:
    def __init__(self, recipe: CaseRecipe):
        self.recipe = recipe
        self.start_ms = to_ms(recipe.window.start)
        self.end_ms = to_ms(recipe.window.end)
        self.users = {u.name: u for u in recipe.users}
        self.zones = [(z.name, ipaddress.ip_network(z.cidr)) for z in recipe.zones]
        self.hosts: dict[str, HostCtx] = {}
        self.ip_host: dict[str, str] = {}
        for h in recipe.hosts:
            self.hosts[h.name] = self._host_ctx(h)
            for ip in h.ips:
                self.ip_host[ip] = h.name
        self.externals: dict[str, ExternalSpec] = {e.name: e for e in recipe.externals}
        self.external_by_ip: dict[str, ExternalSpec] = {ip: e for e in recipe.externals for ip in e.ips}
        self.external_by_domain: dict[str, ExternalSpec] = {e.domain: e for e in recipe.externals}
        self.monitored = set(recipe.sensors.monitored_zones)
        self.zeek = self.hosts.get(recipe.sensors.zeek) if recipe.sensors.zeek else None
        self.suricata = self.hosts.get(recipe.sensors.suricata) if recipe.sensors.suricata else None
        self._zone_cache: dict[str, str] = {}
        self._uids: dict[str, str] = {}
        self._path_cache: dict[tuple[str, str], tuple[bool, str, bool, bool]] = {}
        self.resolver_ip: str | None = self.hosts[recipe.resolver].ip if recipe.resolver else None

    # -------------------------------------------------------------- hosts

    def _host_ctx(self, h: HostSpec) -> HostCtx:
        rid = self.recipe.id
        agent_id = ids.uuid_from(rid, "agent", h.name)
        mac = [
            "-".join(f"{b:02X}" for b in bytes([0x02]) + ids.digest(rid, "mac", h.name, ip)[:5])
            for ip in h.ips
        ]
        host_block = {
            "architecture": "x86_64",
            "hostname": h.name,
            "id": ids.hex_from(rid, "machine-id", h.name),
            "ip": list(h.ips),
            "mac": mac,
            "name": h.name,
            "os": dict(_OS[h.os]),
        }
        endpoint_agent = {"id": agent_id, "type": "endpoint", "version": AGENT_VERSION}
        filebeat_agent = {
            "ephemeral_id": ids.uuid_from(rid, "ephemeral", h.name),
            "id": agent_id,
            "name": h.name,
            "type": "filebeat",
            "version": AGENT_VERSION,
        }
        # Booted some days before the window: daemons started then.
        boot_ms = (
            self.start_ms
            - 86_400_000 * (3 + ids.stable_int(rid, "boot", h.name, mod=20))
            - ids.stable_int(rid, "boot-ms", h.name, mod=86_400_000)
        )
        ctx = HostCtx(
            spec=h,
            agent_id=agent_id,
            host_block=host_block,
            endpoint_agent=endpoint_agent,
            filebeat_agent=filebeat_agent,
            daemons={},
            has_endpoint="endpoint" in h.sensors,
            boot_ms=boot_ms,
        )
        names = list(BASE_SERVICES)
        names += ["elastic-agent"] + (["elastic-endpoint"] if ctx.has_endpoint else [])
        if self.recipe.sensors.zeek == h.name:
            names.append("zeek")
        if self.recipe.sensors.suricata == h.name:
            names.append("suricata")
        names += [s for s in h.services if s not in names]
        used: set[int] = set()
        for n, name in enumerate(names):
            sdef = SERVICES.get(name) or ServiceDef(f"/usr/sbin/{name}", (f"/usr/sbin/{name}",))
            if name == "systemd":
                pid = 1
            else:
                pid = (
                    300 + n * 97 + ids.stable_int("pid", h.name, name, mod=90)
                )  # same across cases sharing an estate
            while pid in used:
                pid += 1
            used.add(pid)
            start = boot_ms + (0 if pid == 1 else 1500 + n * 700)
            parent = ctx.daemons.get(sdef.parent) if sdef.parent else None
            exe = sdef.executable
            ctx.daemons[name] = Proc(
                host=h.name,
                pid=pid,
                entity_id=ids.entity_id(agent_id, pid, start),
                name=exe.rsplit("/", 1)[-1],
                executable=exe,
                args=list(sdef.args),
                user=sdef.user,
                start_ms=start,
                parent=parent,
                tags=list(sdef.tags),
            )
        ctx.reserved_pids = used
        return ctx

    # -------------------------------------------------------------- addresses

    def zone_of(self, ip: str) -> str:
        """The zone of an address; 'internet' when it is in none of the estate's zones."""
        z = self._zone_cache.get(ip)
        if z is None:
            z = "internet"
            addr = ipaddress.ip_address(ip)
            for name, net in self.zones:
                if addr.version == net.version and addr in net:
                    z = name
                    break
            self._zone_cache[ip] = z
        return z

    def zeek_sees(self, src_ip: str, dst_ip: str) -> bool:
        return self.path(src_ip, dst_ip)[0]

    def path(self, src_ip: str, dst_ip: str) -> tuple[bool, str, bool, bool]:
        """(zeek sees it, network.direction, source is local, destination is local), cached per pair."""
        key = (src_ip, dst_ip)
        hit = self._path_cache.get(key)
        if hit is None:
            a, b = self.zone_of(src_ip), self.zone_of(dst_ip)
            sees = self.zeek is not None and a != b and (a in self.monitored or b in self.monitored)
            hit = (sees, self.direction(src_ip, dst_ip), a != "internet", b != "internet")
            if len(self._path_cache) < 500_000:
                self._path_cache[key] = hit
        return hit

    def resolve(self, what: str) -> tuple[str, HostCtx | None, ExternalSpec | None]:
        """A host name, external service name, domain or IP -> (ip, host ctx or None, external or None)."""
        if what in self.hosts:
            ctx = self.hosts[what]
            return ctx.ip, ctx, None
        if what in self.externals:
            ext = self.externals[what]
            return ext.ips[0], None, ext
        if what in self.external_by_domain:
            ext = self.external_by_domain[what]
            return ext.ips[0], None, ext
        try:
            ipaddress.ip_address(what)
        except ValueError:
            raise ValueError(f"{what!r} is neither a host, an external service nor an IP address") from None
        host = self.ip_host.get(what)
        return what, (self.hosts[host] if host else None), self.external_by_ip.get(what)

    def direction(self, src_ip: str, dst_ip: str) -> str:
        a, b = self.zone_of(src_ip) == "internet", self.zone_of(dst_ip) == "internet"
        if a and not b:
            return "inbound"
        if b and not a:
            return "outbound"
        return "internal" if not a else "external"

    def uid_of(self, user: str) -> str:
        uid = self._uids.get(user)
        if uid is None:
            uid = self._uids[user] = self._uid_of(user)
        return uid

    def _uid_of(self, user: str) -> str:
        spec = self.users.get(user)
        if spec and spec.uid is not None:
            return str(spec.uid)
        fixed = {
            "root": "0",
            "www-data": "33",
            "backup": "34",
            "nobody": "65534",
            "postgres": "114",
            "syslog": "104",
            "prometheus": "998",
            "zeek": "997",
            "gvm": "996",
            "shop": "1500",
        }
        if user in fixed:
            return fixed[user]
        return str(1001 + ids.stable_int("uid", user, mod=400))
