"""The estate the simulator acts on, as it stands at the end of the case window.

Pids, entity ids, names and paths come from the same world and chain the
generator uses, so that what an agent finds in the telemetry is what it can act on.
"""

from __future__ import annotations

from pytest_soclab.corpus.attack import compile_chain
from pytest_soclab.corpus.benign import benign_persistence
from pytest_soclab.corpus.recipe import CaseRecipe
from pytest_soclab.corpus.world import Proc, World
from pytest_soclab.models import Estate, Host, Persistence, Process, User, Zone

# Files every host of a role has, besides what the case adds (the agent may fetch or delete them).
_BASE_FILES = (
    "/etc/passwd",
    "/etc/shadow",
    "/etc/crontab",
    "/etc/ssh/sshd_config",
    "/var/log/auth.log",
    "/var/log/syslog",
)
_ROLE_FILES: dict[str, tuple[str, ...]] = {
    "web": ("/etc/nginx/nginx.conf", "/var/www/shop/public/index.php", "/var/log/nginx/access.log"),
    "app": ("/opt/shop/shop/settings.py", "/opt/shop/.env"),
    "db": ("/etc/postgresql/14/main/pg_hba.conf",),
    "domain-controller": ("/etc/samba/smb.conf", "/var/lib/samba/private/sam.ldb", "/etc/krb5.conf"),
    "sensor": ("/opt/zeek/etc/node.cfg", "/etc/cron.d/zeekctl", "/etc/suricata/suricata.yaml"),
    "backup": (
        "/usr/local/sbin/nightly-backup.sh",
        "/etc/cron.d/nightly-backup",
        "/root/.ssh/backup_ed25519",
    ),
}
_SYSTEM_ACCOUNTS = ("root", "www-data", "backup", "postgres", "prometheus", "zeek", "gvm", "shop", "syslog")


def _process(p: Proc) -> Process:
    return Process(
        pid=p.pid,
        name=p.name,
        executable=p.executable,
        args=list(p.args),
        user=p.user,
        entity_id=p.entity_id,
        parent_pid=p.parent.pid if p.parent else None,
        tags=list(p.tags),
    )


def estate_from_recipe(recipe: CaseRecipe) -> Estate:
    world = World(recipe)
    chain = compile_chain(world)
    persistence = chain.state.persistence + benign_persistence(recipe.benign)
    hosts: list[Host] = []
    for ctx in world.hosts.values():
        spec = ctx.spec
        procs = [_process(p) for p in ctx.daemons.values()]
        procs += [_process(p) for p in chain.state.running if p.host == spec.name]
        files = list(_BASE_FILES) + list(_ROLE_FILES.get(spec.role, ()))
        for path in chain.state.files.get(spec.name, []):
            if path not in files:
                files.append(path)
        pers = [
            Persistence(
                path=e.path,
                kind=e.kind,
                command=e.command,
                schedule=e.schedule,
                user=e.user,
                tags=list(e.tags),
            )
            for e in persistence
            if e.host == spec.name
        ]
        if spec.os.startswith(("ubuntu", "debian")):
            # Every Debian-family host has apt's daily timers: legit, and not to be removed.
            pers.append(
                Persistence(
                    path="/lib/systemd/system/apt-daily-upgrade.timer",
                    kind="systemd",
                    command="/usr/lib/apt/apt.systemd.daily install",
                    schedule="daily",
                    user="root",
                    tags=["system"],
                )
            )
        for e in pers:
            if e.path not in files:
                files.append(e.path)
        local = ["root"] + [u for u in spec.users if u != "root"]
        hosts.append(
            Host(
                name=spec.name,
                os="linux",
                os_name=ctx.host_block["os"]["full"],
                role=spec.role,
                tier=spec.tier,
                ips=list(spec.ips),
                zone=spec.zone,
                processes=procs,
                files=files,
                persistence=pers,
                local_users=local,
                tags=list(spec.tags),
            )
        )
    users = [
        User(name=u.name, full_name=u.full_name, role=u.role, email=u.email, tags=list(u.tags))
        for u in recipe.users
    ]
    known = {u.name for u in users}
    users += [User(name=n, role="service", tags=["system"]) for n in _SYSTEM_ACCOUNTS if n not in known]
    allowed = [recipe.domain, recipe.background.public_site] + [e.domain for e in recipe.externals]
    return Estate(
        hosts=hosts,
        users=users,
        zones=[Zone(name=z.name, cidr=z.cidr) for z in recipe.zones],
        business_critical_ips=[ip for e in recipe.externals if e.business_critical for ip in e.ips],
        allowed_domains=list(dict.fromkeys(allowed)),
    )
