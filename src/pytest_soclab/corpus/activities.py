"""The kinds of benign background activity, one builder each, in the order the generator draws them.

A builder looks at one host (its role, its users, the estate around it) and returns the
activity template it runs there, or None when the kind does not apply to that host. A template
is a closure over precomputed values: `run(ts)` emits one occurrence through the emitter,
drawing from the emitter's rng (set per hour by background.py). The order of ACTIVITIES fixes
the order of the draws: changing it changes the generated documents.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pytest_soclab.corpus import ids
from pytest_soclab.corpus.emit import Emitter
from pytest_soclab.corpus.recipe import ExternalSpec
from pytest_soclab.corpus.world import HostCtx, Proc, World

Template = Callable[[int], None]


@dataclass
class Activity:
    weight: float
    human: bool  # follows office hours (else flat: machines)
    run: Template
    docs: float = 3.0  # documents one run emits on average (so that documents, not runs, follow the rate)


@dataclass(frozen=True)
class Setting:
    """What the builders read besides the host: the estate, the emitter, the public site's clients."""

    world: World
    em: Emitter
    clients: list[str]


Builder = Callable[[Setting, HostCtx], Activity | None]

_INTERNAL_NAMES = ("ldap", "kerberos", "ntp", "repo", "metrics", "logs")
_USER_CMDS: list[list[str]] = [
    ["ls", "-la"],
    ["df", "-h"],
    ["uptime"],
    ["ps", "aux"],
    ["top", "-b", "-n", "1"],
    ["free", "-m"],
    ["tail", "-n", "200", "/var/log/syslog"],
    ["journalctl", "-u", "nginx", "--since", "-1h"],
    ["grep", "-i", "error", "/var/log/syslog"],
    ["vim", "notes.md"],
    ["git", "status"],
    ["git", "pull"],
    ["less", "/var/log/dpkg.log"],
    ["systemctl", "status", "cron"],
    ["ss", "-tlnp"],
    ["du", "-sh", "."],
    ["htop"],
    ["cat", "/etc/os-release"],
    ["python3", "--version"],
    ["curl", "-sI", "http://localhost/health"],
]
_CRON_JOBS: list[tuple[str, list[str], str]] = [
    ("/usr/lib/sysstat/debian-sa1", ["/usr/lib/sysstat/debian-sa1", "1", "1"], "root"),
    ("/usr/bin/run-parts", ["run-parts", "--report", "/etc/cron.hourly"], "root"),
    ("/usr/sbin/logrotate", ["/usr/sbin/logrotate", "/etc/logrotate.conf"], "root"),
    ("/usr/bin/find", ["find", "/tmp", "-type", "f", "-atime", "+10", "-delete"], "root"),
]
_ROLE_CRON: dict[str, list[tuple[str, list[str], str]]] = {
    "web": [
        ("/usr/bin/php8.1", ["php", "/var/www/shop/bin/console", "cache:prune"], "www-data"),
        ("/usr/bin/certbot", ["certbot", "-q", "renew"], "root"),
    ],
    "app": [
        ("/opt/shop/venv/bin/python3", ["/opt/shop/venv/bin/python3", "manage.py", "clearsessions"], "shop")
    ],
    "db": [("/usr/bin/vacuumdb", ["vacuumdb", "--all", "--analyze-in-stages"], "postgres")],
    "domain-controller": [("/usr/bin/samba-tool", ["samba-tool", "dbcheck", "--cross-ncs"], "root")],
    "monitoring": [
        (
            "/usr/local/bin/promtool",
            ["promtool", "check", "config", "/etc/prometheus/prometheus.yml"],
            "prometheus",
        )
    ],
}
_WS_APPS: list[tuple[str, list[str]]] = [
    ("/usr/lib/firefox/firefox", ["/usr/lib/firefox/firefox", "-contentproc", "-childID", "7", "tab"]),
    ("/usr/share/code/code", ["/usr/share/code/code", "--type=renderer"]),
    ("/usr/bin/slack", ["/usr/bin/slack", "--enable-crashpad"]),
    ("/usr/bin/git", ["git", "fetch", "origin"]),
    ("/usr/bin/ssh", ["ssh", "bastion-01"]),
    ("/usr/bin/python3", ["python3", "-m", "pytest", "-q"]),
]
_UAS = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148",
    "Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0",
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile",
)
_SHOP_PATHS = (
    ("/", 200, 18_400),
    ("/products", 200, 42_100),
    ("/products/espresso-grinder", 200, 23_800),
    ("/cart", 200, 9_800),
    ("/static/app.js", 200, 181_000),
    ("/static/site.css", 304, 0),
    ("/api/v1/cart/items", 200, 1_200),
    ("/checkout", 200, 12_300),
    ("/favicon.ico", 200, 4_286),
    ("/search?q=filter+papers", 200, 31_000),
    ("/login", 200, 7_100),
    ("/account/orders", 302, 0),
)
_IDS_NOISE = (
    (2013028, "ET POLICY curl User-Agent Outbound", "Attempted Information Leak"),
    (
        2013504,
        "ET POLICY GNU/Linux APT User-Agent Outbound likely related to package management",
        "Not Suspicious Traffic",
    ),
    (2027865, "ET INFO Observed DNS Query to .cloud TLD", "Potentially Bad Traffic"),
    (2210045, "SURICATA STREAM Packet with invalid ack", "Generic Protocol Command Decode"),
    (2210020, "SURICATA STREAM ESTABLISHED packet out of window", "Generic Protocol Command Decode"),
    (2019401, "ET POLICY Vulnerable Java Version 1.8.x Detected", "Potential Corporate Privacy Violation"),
)
_CLIENT_JA3 = (
    "cd08e31494f9531f560d64c695473da9",
    "773906b0efdefa24a7f2b8eb6985bf37",
    "b32309a26951912be7dba376398abc3b",
    "579ccef312d18482fc42e2b822ca2430",
)


def _users(w: World, ctx: HostCtx) -> list[str]:
    """The host's people who exist in the estate."""
    return [u for u in ctx.spec.users if u in w.users]


def cron_jobs(s: Setting, ctx: HostCtx) -> Activity | None:
    """cron running its jobs: the everyday ones and the role's own."""
    em = s.em
    cron = ctx.daemons["cron"]
    jobs = _CRON_JOBS + _ROLE_CRON.get(ctx.spec.role, [])

    def cron_job(ts: int) -> None:
        exe, argv, user = jobs[int(em.rng.random() * len(jobs))]
        c, _ = em.process(
            ctx,
            ts,
            "/usr/sbin/cron",
            ["/usr/sbin/CRON", "-f", "-P"],
            "root",
            cron,
            lifetime_ms=2500,
            name="cron",
        )
        sh, _ = em.process(
            ctx,
            ts + 8,
            "/usr/bin/dash",
            ["/bin/sh", "-c", " ".join(argv)],
            user,
            c,
            lifetime_ms=2200,
            name="sh",
        )
        em.process(ctx, ts + 15, exe, argv, user, sh, lifetime_ms=1800)

    return Activity(1.0, False, cron_job, 6)


def outbound_https(s: Setting, ctx: HostCtx) -> Activity | None:
    """DNS and outbound HTTPS to the externals this role uses."""
    w, em = s.world, s.em
    role = ctx.spec.role
    exts = [e for e in w.recipe.externals if "*" in e.used_by or role in e.used_by]
    if not exts:
        return None
    users = _users(w, ctx)
    ip = ctx.ip
    systemd = ctx.daemons["systemd"]
    weights = [e.weight for e in exts]
    cum = [sum(weights[: i + 1]) for i in range(len(weights))]
    role_client = {
        "app": ("/opt/shop/venv/bin/python3", ["/opt/shop/venv/bin/python3", "-m", "shop.worker"], "shop"),
        "workstation": ("/usr/lib/firefox/firefox", ["/usr/lib/firefox/firefox"], ""),
    }
    exe, argv, puser = role_client.get(role, ("", [], "_apt"))
    if not puser:
        puser = users[0] if users else "root"
    client_procs: dict[str, Proc] = {}

    def client_for(e: ExternalSpec, ts: int) -> Proc:
        if e.client and e.client in ctx.daemons:
            return ctx.daemons[e.client]  # a long-running service (the Elastic agent, gunicorn...)
        key = "role" if exe else ("apt-http" if e.ports[0] == 80 else "apt-https")
        proc = client_procs.get(key)
        if proc is None or em.rng.random() < 0.05:
            if exe:
                path, args = exe, argv
            else:
                path = "/usr/lib/apt/methods/" + ("http" if e.ports[0] == 80 else "https")
                args = [path]
            proc, _ = em.process(ctx, ts - 50, path, args, puser, systemd, lifetime_ms=None)
            client_procs[key] = proc
        return proc

    def outbound(ts: int) -> None:
        r = em.rng.random() * cum[-1]
        e = exts[next(i for i, c in enumerate(cum) if c >= r)]
        dst = e.ips[int(em.rng.random() * len(e.ips))]
        client = client_for(e, ts)
        em.dns(ts - 20, ip, e.domain, "A", list(e.ips), src_host=ctx, src_proc=client)
        port = e.ports[0]
        em.connection(
            ts,
            ip,
            dst,
            port,
            src_host=ctx,
            src_proc=client,
            service="ssl" if port == 443 else "http",
            duration_ms=200 + int(em.rng.random() * 3000),
            obytes=700 + int(em.rng.random() * 4000),
            rbytes=2000 + int(em.rng.random() * 60000),
            tls={"sni": e.domain} if port == 443 else None,
            http={
                "method": "GET",
                "host": e.domain,
                "uri": "/",
                "status": 200,
                "user_agent": "Debian APT-HTTP/1.3 (2.4.12)",
            }
            if port != 443
            else None,
        )

    return Activity(1.2 if role == "workstation" else 0.6, role == "workstation", outbound, 5)


def directory_lookups(s: Setting, ctx: HostCtx) -> Activity | None:
    """Internal lookups and directory traffic to the domain controller / resolver."""
    w, em = s.world, s.em
    dcs = [h for h in w.hosts.values() if h.spec.role == "domain-controller" and h is not ctx]
    if not dcs:
        return None
    dc = dcs[0]
    dom = w.recipe.domain
    ip = ctx.ip

    def directory(ts: int) -> None:
        name = _INTERNAL_NAMES[int(em.rng.random() * len(_INTERNAL_NAMES))]
        em.dns(ts - 5, ip, f"{name}.{dom}", "A", [dc.ip])
        port = (389, 636, 88)[int(em.rng.random() * 3)]
        em.connection(
            ts,
            ip,
            dc.ip,
            port,
            transport="udp" if port == 88 and em.rng.random() < 0.3 else "tcp",
            dst_host=dc,
            service={389: "ldap", 636: "ssl", 88: "krb"}[port],
            duration_ms=30 + int(em.rng.random() * 400),
            obytes=400 + int(em.rng.random() * 900),
            rbytes=900 + int(em.rng.random() * 3000),
        )

    return Activity(0.8, False, directory, 2)


def metrics_scrapes(s: Setting, ctx: HostCtx) -> Activity | None:
    """Prometheus scrapes every host's node_exporter."""
    w, em = s.world, s.em
    mons = [h for h in w.hosts.values() if h.spec.role == "monitoring" and h is not ctx]
    if not mons:
        return None
    mon = mons[0]
    prom = mon.daemons.get("prometheus") or mon.daemons["systemd"]
    exporter = ctx.daemons["node_exporter"]
    ip = ctx.ip

    def scrape(ts: int) -> None:
        em.connection(
            ts,
            mon.ip,
            ip,
            9100,
            src_host=mon,
            src_proc=prom,
            dst_host=ctx,
            dst_proc=exporter,
            service="http",
            duration_ms=40,
            obytes=310,
            rbytes=48_000 + int(em.rng.random() * 9000),
            http={
                "method": "GET",
                "host": f"{ip}:9100",
                "uri": "/metrics",
                "status": 200,
                "user_agent": "Prometheus/2.53.0",
            },
        )

    return Activity(0.7, False, scrape, 3)


def ssh_sessions(s: Setting, ctx: HostCtx) -> Activity | None:
    """People logging in and working."""
    w, em = s.world, s.em
    users = _users(w, ctx)
    if not users:
        return None
    ip = ctx.ip
    # People come from their own workstation or through the bastion; service accounts from the bastion.
    bastions = [h.ip for h in w.hosts.values() if h.spec.role == "bastion" and h is not ctx]
    sources = {
        u: [
            h.ip
            for h in w.hosts.values()
            if h.spec.role == "workstation" and u in h.spec.users and h is not ctx
        ]
        + bastions
        or [ip]
        for u in users
    }

    def human_session(ts: int) -> None:
        user = users[int(em.rng.random() * len(users))]
        srcs = sources[user]
        src_ip = srcs[int(em.rng.random() * len(srcs))]
        dur = 120_000 + int(em.rng.random() * 1_500_000)
        shell, _, _ = em.ssh_session(ctx, ts, user, src_ip, "publickey", duration_ms=dur)
        t = ts + 4000
        for _ in range(1 + int(em.rng.random() * 4)):
            argv = _USER_CMDS[int(em.rng.random() * len(_USER_CMDS))]
            exe = argv[0] if argv[0].startswith("/") else f"/usr/bin/{argv[0]}"
            em.process(
                ctx,
                t,
                exe,
                argv,
                user,
                shell,
                working_directory=shell.working_directory,
                lifetime_ms=900 + int(em.rng.random() * 20000),
            )
            t += 3000 + int(em.rng.random() * 40000)
        if em.rng.random() < 0.2:
            em.file(ctx, t, shell, f"/home/{user}/.bash_history", "modification")

    return Activity(0.5 if ctx.spec.role != "workstation" else 0.2, True, human_session, 14)


def shop_requests(s: Setting, ctx: HostCtx) -> Activity | None:
    """A web server: internet clients browsing the shop, nginx passing requests to the app servers."""
    w, em = s.world, s.em
    if ctx.spec.role != "web":
        return None
    ip = ctx.ip
    nginx = ctx.daemons.get("nginx")
    site = w.recipe.background.public_site
    apps = [h for h in w.hosts.values() if h.spec.role == "app"]
    clients = s.clients

    def web_request(ts: int) -> None:
        cip = clients[int(em.rng.random() * len(clients))]
        path, status, size = _SHOP_PATHS[int(em.rng.random() * len(_SHOP_PATHS))]
        ua = _UAS[int(em.rng.random() * len(_UAS))]
        if em.rng.random() < 0.85:
            em.connection(
                ts,
                cip,
                ip,
                443,
                dst_host=ctx,
                dst_proc=nginx,
                service="ssl",
                duration_ms=80 + int(em.rng.random() * 3000),
                obytes=900 + size // 40,
                rbytes=size + 3500,
                tls={"sni": site, "ja3": _CLIENT_JA3[int(em.rng.random() * 4)]},
            )
        else:
            em.connection(
                ts,
                cip,
                ip,
                80,
                dst_host=ctx,
                dst_proc=nginx,
                service="http",
                duration_ms=60,
                obytes=420,
                rbytes=size + 300,
                http={
                    "method": "GET",
                    "host": site,
                    "uri": path,
                    "status": status,
                    "user_agent": ua,
                    "response_body_len": size,
                },
            )
        if apps and em.rng.random() < 0.5:
            app = apps[int(em.rng.random() * len(apps))]
            em.connection(
                ts + 12,
                ip,
                app.ip,
                8000,
                src_host=ctx,
                src_proc=nginx,
                dst_host=app,
                dst_proc=app.daemons.get("gunicorn"),
                service="http",
                duration_ms=45,
                obytes=800,
                rbytes=size + 400,
                http={
                    "method": "GET",
                    "host": "app.internal",
                    "uri": path,
                    "status": status,
                    "user_agent": "nginx/1.18.0",
                    "response_body_len": size,
                },
            )

    return Activity(2.2, True, web_request, 5)


def php_template_cache(s: Setting, ctx: HostCtx) -> Activity | None:
    """A web server with php-fpm: compiled templates written to the cache."""
    em = s.em
    php = ctx.daemons.get("php-fpm")
    if ctx.spec.role != "web" or php is None:
        return None

    def php_cache(ts: int) -> None:
        n = ids.hex_from(ts, n=12)
        em.file(
            ctx,
            ts,
            php,
            f"/var/www/shop/var/cache/prod/twig/{n[:2]}/{n}.php",
            "creation",
            size=2000 + ts % 9000,
        )

    return Activity(0.5, True, php_cache, 1)


def database_queries(s: Setting, ctx: HostCtx) -> Activity | None:
    """An app server: gunicorn querying the databases."""
    w, em = s.world, s.em
    if ctx.spec.role != "app":
        return None
    dbs = [h for h in w.hosts.values() if h.spec.role == "db"]
    gun = ctx.daemons.get("gunicorn")
    if not dbs or gun is None:
        return None
    ip = ctx.ip

    def db_query(ts: int) -> None:
        db = dbs[int(em.rng.random() * len(dbs))]
        em.connection(
            ts,
            ip,
            db.ip,
            5432,
            src_host=ctx,
            src_proc=gun,
            dst_host=db,
            dst_proc=db.daemons.get("postgres"),
            service="postgresql",
            duration_ms=5 + int(em.rng.random() * 200),
            obytes=300 + int(em.rng.random() * 2000),
            rbytes=500 + int(em.rng.random() * 40000),
        )

    return Activity(1.6, True, db_query, 3)


def desktop_apps(s: Setting, ctx: HostCtx) -> Activity | None:
    """A workstation: its owner's desktop session, the apps they start, the files they download."""
    w, em = s.world, s.em
    if ctx.spec.role != "workstation":
        return None
    users = _users(w, ctx)
    systemd = ctx.daemons["systemd"]
    owner = users[0] if users else "root"
    session: Proc | None = None

    def desktop(ts: int) -> None:
        nonlocal session
        if session is None:
            gs = ctx.daemons.get("gnome-shell") or systemd
            session, _ = em.process(
                ctx,
                ts - 60_000,
                "/usr/bin/gnome-session-binary",
                ["/usr/libexec/gnome-session-binary", "--session=ubuntu"],
                owner,
                gs,
                lifetime_ms=None,
            )
        exe, argv = _WS_APPS[int(em.rng.random() * len(_WS_APPS))]
        p, _ = em.process(
            ctx,
            ts,
            exe,
            argv,
            owner,
            session,
            working_directory=f"/home/{owner}",
            lifetime_ms=30_000 + int(em.rng.random() * 600_000),
        )
        if em.rng.random() < 0.4:
            em.file(
                ctx,
                ts + 500,
                p,
                f"/home/{owner}/Downloads/report-{ts % 997}.pdf",
                "creation",
                size=40_000 + ts % 300_000,
            )

    return Activity(1.0, True, desktop, 2.4)


def ids_chatter(s: Setting, ctx: HostCtx) -> Activity | None:
    """The IDS's everyday chatter: policy and info signatures on ordinary traffic."""
    w, em = s.world, s.em
    if w.suricata is not ctx or not w.recipe.externals:
        return None
    talkers = [h for h in w.hosts.values() if h.spec.zone in w.monitored and h is not ctx]
    exts_all = w.recipe.externals

    def ids_noise(ts: int) -> None:
        sig = _IDS_NOISE[int(em.rng.random() * len(_IDS_NOISE))]
        h = talkers[int(em.rng.random() * len(talkers))]
        e = exts_all[int(em.rng.random() * len(exts_all))]
        em.connection(
            ts,
            h.ip,
            e.ips[0],
            e.ports[0],
            service="ssl" if e.ports[0] == 443 else "http",
            duration_ms=300,
            obytes=900,
            rbytes=4000,
            suricata={"sid": sig[0], "signature": sig[1], "category": sig[2], "severity": 3},
        )

    return Activity(0.4, True, ids_noise, 2)


def directory_maintenance(s: Setting, ctx: HostCtx) -> Activity | None:
    """A domain controller: samba writing its directory database."""
    em = s.em
    if ctx.spec.role != "domain-controller":
        return None
    samba = ctx.daemons.get("samba") or ctx.daemons["systemd"]

    def dc_maint(ts: int) -> None:
        em.file(ctx, ts, samba, "/var/lib/samba/private/sam.ldb.d/DC=CORP,DC=INTERNAL.ldb", "modification")

    return Activity(0.3, False, dc_maint, 1)


# Walked in this order for every host: the order of the draws (see the module docstring).
ACTIVITIES: tuple[tuple[str, Builder], ...] = (
    ("cron", cron_jobs),
    ("outbound", outbound_https),
    ("directory", directory_lookups),
    ("scrape", metrics_scrapes),
    ("ssh_session", ssh_sessions),
    ("web_request", shop_requests),
    ("php_cache", php_template_cache),
    ("db_query", database_queries),
    ("desktop", desktop_apps),
    ("ids_noise", ids_chatter),
    ("dc_maintenance", directory_maintenance),
)


def host_activities(s: Setting, ctx: HostCtx) -> list[Activity]:
    """The activities of one host, in ACTIVITIES order."""
    acts = (build(s, ctx) for _name, build in ACTIVITIES)
    return [act for act in acts if act is not None]
