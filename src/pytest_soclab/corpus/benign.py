"""Legit activity that looks suspicious: named behaviours scheduled across the window.

The security tooling's own cron (`zeekctl cron`), the nightly rsync backup, an
authenticated vulnerability scan, an admin's sudo session, unattended upgrades
replacing system binaries, configuration management over ssh. Each may carry a
detection alert (a false positive).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pytest_soclab.corpus import ids
from pytest_soclab.corpus.attack import PersistenceEntry
from pytest_soclab.corpus.emit import Emitter, Event
from pytest_soclab.corpus.recipe import AlertSpec, BenignSpec
from pytest_soclab.corpus.timeutil import iso_ms, parse_duration_ms
from pytest_soclab.corpus.world import HostCtx, World
from pytest_soclab.errors import SoclabError

DAY = 86_400_000


@dataclass
class BenignOut:
    alerts: list[tuple[AlertSpec, Event]] = field(default_factory=list)
    persistence: list[PersistenceEntry] = field(default_factory=list)


def _daily_times(world: World, spec: BenignSpec, default_at: str) -> list[int]:
    hh, mm = (int(x) for x in (spec.at or default_at).split(":"))
    first_day = world.start_ms - world.start_ms % DAY
    out = []
    day, idx = first_day, 0
    while day < world.end_ms:
        t = day + (hh * 60 + mm) * 60_000
        if world.start_ms <= t < world.end_ms:
            if not spec.days or idx in spec.days:
                out.append(t)
            idx += 1
        day += DAY
    return out


def _periodic_times(world: World, every_ms: int) -> list[int]:
    first = world.start_ms - world.start_ms % every_ms + every_ms
    return list(range(first, world.end_ms, every_ms))


class BenignCompiler:
    def __init__(self, world: World, emitter: Emitter):
        self.w = world
        self.em = emitter
        self.result = BenignOut()

    def _host(self, spec: BenignSpec, name: str) -> HostCtx:
        if name not in self.w.hosts:
            raise SoclabError(f"case {self.w.recipe.id}, benign {spec.kind}: unknown host {name!r}")
        return self.w.hosts[name]

    def _targets(self, spec: BenignSpec) -> list[HostCtx]:
        zones = {z.name for z in self.w.recipe.zones}
        out: list[HostCtx] = []
        for t in spec.targets:
            if t in zones:
                out += [h for h in self.w.hosts.values() if h.spec.zone == t and h.name != spec.host]
            else:
                out.append(self._host(spec, t))
        return out

    def _alert(self, spec: BenignSpec, ev: Event | None, once: bool = True) -> None:
        """The behaviour's detection rule fires on `ev` (on the first occurrence only, unless `once` is off:
        rules on per-host behaviours fire once per host and run)."""
        if spec.alert is None or ev is None:
            return
        if once and any(a is spec.alert for a, _ in self.result.alerts):
            return
        self.result.alerts.append((spec.alert, ev))

    def compile(self) -> BenignOut:
        for spec in self.w.recipe.benign:
            getattr(self, "_" + spec.kind.replace("-", "_"))(spec)
        self.result.persistence = benign_persistence(self.w.recipe.benign)
        return self.result

    # ------------------------------------------------------------ behaviours

    def _cron_chain(self, host: HostCtx, ts: int, shell_cmd: str, user: str = "root"):
        em = self.em
        c, _ = em.process(
            host,
            ts,
            "/usr/sbin/cron",
            ["/usr/sbin/CRON", "-f", "-P"],
            "root",
            host.daemons["cron"],
            lifetime_ms=4000,
            name="cron",
        )
        sh, ev = em.process(
            host, ts + 9, "/usr/bin/dash", ["/bin/sh", "-c", shell_cmd], user, c, lifetime_ms=3500, name="sh"
        )
        return sh, ev

    def _zeekctl_cron(self, spec: BenignSpec) -> None:
        host = self._host(spec, spec.host)
        em = self.em
        every = parse_duration_ms(spec.every or "5m")
        for i, ts in enumerate(_periodic_times(self.w, every)):
            sh, _ = self._cron_chain(host, ts, "[ -x /opt/zeek/bin/zeekctl ] && /opt/zeek/bin/zeekctl cron")
            zc, ev = em.process(
                host,
                ts + 30,
                "/usr/bin/python3.10",
                ["/usr/bin/python3", "/opt/zeek/bin/zeekctl", "cron"],
                "root",
                sh,
                lifetime_ms=2800,
                name="python3.10",
            )
            self._alert(spec, ev)
            if i % 12 == 0:  # hourly log rotation: archive-log and gzip
                a, _ = em.process(
                    host,
                    ts + 400,
                    "/opt/zeek/share/zeekctl/scripts/archive-log",
                    ["/opt/zeek/share/zeekctl/scripts/archive-log", "conn.log", "conn"],
                    "root",
                    zc,
                    lifetime_ms=1500,
                )
                em.process(
                    host,
                    ts + 480,
                    "/usr/bin/gzip",
                    ["gzip", "-9", "/opt/zeek/spool/tmp/conn.log"],
                    "root",
                    a,
                    lifetime_ms=900,
                )
                em.file(
                    host,
                    ts + 1400,
                    a,
                    f"/opt/zeek/logs/{_date(ts)}/conn.{_hh(ts)}.log.gz",
                    "creation",
                    size=3_000_000 + ts % 5_000_000,
                )

    def _backup_rsync(self, spec: BenignSpec) -> None:
        host = self._host(spec, spec.host)
        em = self.em
        for ts in _daily_times(self.w, spec, "02:30"):
            sh, _ = self._cron_chain(
                host, ts, "/usr/local/sbin/nightly-backup.sh >> /var/log/backup.log 2>&1"
            )
            script, _ = em.process(
                host,
                ts + 20,
                "/usr/bin/bash",
                ["/bin/bash", "/usr/local/sbin/nightly-backup.sh"],
                "root",
                sh,
                lifetime_ms=3_000_000,
                name="bash",
            )
            t = ts + 1000
            for target in self._targets(spec):
                dest = f"/srv/backup/{target.name}/"
                rs, ev = em.process(
                    host,
                    t,
                    "/usr/bin/rsync",
                    [
                        "rsync",
                        "-az",
                        "--delete",
                        "-e",
                        "ssh -i /root/.ssh/backup_ed25519",
                        f"{spec.user}@{target.name}:/etc",
                        f"{spec.user}@{target.name}:/var/www",
                        f"{spec.user}@{target.name}:/home",
                        dest,
                    ],
                    "root",
                    script,
                    lifetime_ms=240_000,
                )
                ssh, _ = em.process(
                    host,
                    t + 5,
                    "/usr/bin/ssh",
                    [
                        "ssh",
                        "-i",
                        "/root/.ssh/backup_ed25519",
                        "-l",
                        spec.user,
                        target.name,
                        "rsync",
                        "--server",
                        "--sender",
                        "-logDtprze.iLsfxCIvu",
                        ".",
                        "/",
                    ],
                    "root",
                    rs,
                    lifetime_ms=239_000,
                )
                size = 180_000_000 + ids.stable_int(self.w.recipe.id, target.name, ts, mod=900_000_000)
                shell, _auth, conn = em.ssh_session(
                    target,
                    t + 300,
                    spec.user,
                    host.ip,
                    "publickey",
                    src_host=host,
                    src_proc=ssh,
                    interactive=False,
                    duration_ms=238_000,
                )
                em.process(
                    target,
                    t + 700,
                    "/usr/bin/rsync",
                    ["rsync", "--server", "--sender", "-logDtprze.iLsfxCIvu", ".", "/"],
                    spec.user,
                    shell,
                    lifetime_ms=236_000,
                )
                if conn.zeek is not None:
                    z = conn.zeek[2]
                    z["destination"]["bytes"] = size
                    z["network"]["bytes"] = size + z["source"]["bytes"]
                    z["destination"]["packets"] = z["network"]["packets"] = size // 1400
                self._alert(spec, ev)
                t += 260_000 + int(em.rng.random() * 120_000)

    def _vuln_scan(self, spec: BenignSpec) -> None:
        host = self._host(spec, spec.host)
        em = self.em
        ospd = host.daemons.get("ospd-openvas") or host.daemons["systemd"]
        ports = [
            21,
            22,
            23,
            25,
            53,
            80,
            110,
            111,
            135,
            139,
            143,
            443,
            445,
            993,
            995,
            1433,
            1521,
            2049,
            3306,
            3389,
            5432,
            5900,
            6379,
            8000,
            8080,
            8443,
            9100,
            9200,
            11211,
            27017,
        ]
        for ts in _daily_times(self.w, spec, "01:00"):
            nmap, _ = em.process(
                host,
                ts,
                "/usr/bin/nmap",
                [
                    "nmap",
                    "-n",
                    "-Pn",
                    "-sS",
                    "-T3",
                    "--max-retries",
                    "1",
                    "-p",
                    ",".join(map(str, ports)),
                    "-oX",
                    "-",
                    *[t.ip for t in self._targets(spec)],
                ],
                "root",
                ospd,
                lifetime_ms=1_800_000,
            )
            t = ts + 2000
            sig = spec.suricata.model_dump() if spec.suricata else None
            for target in self._targets(spec):
                listening = {22, 9100} | {
                    {"web": 443, "app": 8000, "db": 5432, "domain-controller": 389}.get(target.spec.role, 22)
                }
                for port in ports:
                    state = "SF" if port in listening else "REJ"
                    res = em.connection(
                        t,
                        host.ip,
                        target.ip,
                        port,
                        src_host=host,
                        src_proc=nmap,
                        state=state,
                        duration_ms=3,
                        obytes=0,
                        rbytes=0,
                        suricata=sig,
                    )
                    if sig is not None and res.suricata is not None:
                        sig = None  # suricata thresholds the signature: once per target
                    t += 35
                # Authenticated checks: log in and read what a compliance scan reads.
                shell, _auth, _ = em.ssh_session(
                    target,
                    t + 4000,
                    spec.user,
                    host.ip,
                    "publickey",
                    src_host=host,
                    src_proc=ospd,
                    duration_ms=95_000,
                )
                tt = t + 7000
                for argv in (
                    ["uname", "-a"],
                    ["cat", "/etc/os-release"],
                    ["dpkg-query", "-W", "-f", "${Package} ${Version}\\n"],
                    ["cat", "/etc/passwd"],
                    ["ls", "-la", "/etc/cron.d"],
                    ["sshd", "-T"],
                ):
                    em.process(
                        target,
                        tt,
                        f"/usr/bin/{argv[0]}" if argv[0] != "sshd" else "/usr/sbin/sshd",
                        argv,
                        spec.user,
                        shell,
                        lifetime_ms=600,
                    )
                    tt += 900
                child, _ = em.sudo(target, tt, spec.user, "/usr/bin/cat /etc/shadow", shell)
                self._alert(spec, _last_proc_exec(em, child.pid, target.name), once=False)
                t = tt + 20_000

    def _admin_session(self, spec: BenignSpec) -> None:
        host = self._host(spec, spec.host)
        em = self.em
        cmds = spec.commands or ["/usr/bin/systemctl restart nginx"]
        for ts in _daily_times(self.w, spec, "10:15"):
            t = ts
            for target in self._targets(spec):
                shell, _, _ = em.ssh_session(
                    target, t, spec.user, host.ip, "publickey", duration_ms=1_500_000
                )
                tt = t + 15_000
                for cmd in cmds:
                    child, _ev = em.sudo(target, tt, spec.user, cmd, shell)
                    if spec.alert_on is None or spec.alert_on in cmd:
                        self._alert(spec, _last_proc_exec(em, child.pid, target.name), once=False)
                    tt += 40_000 + int(em.rng.random() * 90_000)
                t += 1_800_000

    def _package_update(self, spec: BenignSpec) -> None:
        em = self.em
        mirrors = [e for e in self.w.recipe.externals if e.kind == "mirror"]
        for ts in _daily_times(self.w, spec, "06:25"):
            t = ts
            targets = self._targets(spec) or [self._host(spec, spec.host)]
            for host in targets:
                systemd = host.daemons["systemd"]
                uu, _ = em.process(
                    host,
                    t,
                    "/usr/bin/python3.10",
                    ["/usr/bin/python3", "/usr/bin/unattended-upgrade"],
                    "root",
                    systemd,
                    lifetime_ms=200_000,
                    name="python3.10",
                )
                for m in mirrors:
                    em.dns(t + 200, host.ip, m.domain, "A", list(m.ips), src_host=host, src_proc=uu)
                    em.connection(
                        t + 300,
                        host.ip,
                        m.ips[0],
                        m.ports[0],
                        src_host=host,
                        src_proc=uu,
                        service="http" if m.ports[0] == 80 else "ssl",
                        duration_ms=9000,
                        obytes=9000,
                        rbytes=14_000_000,
                        http={
                            "method": "GET",
                            "host": m.domain,
                            "uri": "/ubuntu/pool/main/o/openssh/openssh-server_8.9p1-3ubuntu0.10_amd64.deb",
                            "status": 200,
                            "user_agent": "Debian APT-HTTP/1.3 (2.4.12)",
                            "mime": "application/vnd.debian.binary-package",
                        }
                        if m.ports[0] == 80
                        else None,
                        tls={"sni": m.domain} if m.ports[0] == 443 else None,
                    )
                dpkg, _ = em.process(
                    host,
                    t + 30_000,
                    "/usr/bin/dpkg",
                    [
                        "/usr/bin/dpkg",
                        "--status-fd",
                        "10",
                        "--no-triggers",
                        "--unpack",
                        "--auto-deconfigure",
                        "/var/cache/apt/archives/openssh-server_1%3a8.9p1-3ubuntu0.10_amd64.deb",
                    ],
                    "root",
                    uu,
                    lifetime_ms=8000,
                )
                ev = em.file(
                    host,
                    t + 31_000,
                    dpkg,
                    "/usr/sbin/sshd",
                    "overwrite",
                    size=921_480,
                    hashes=ids.file_hashes("pkg", "openssh-server 8.9p1-3ubuntu0.10"),
                )
                self._alert(spec, ev, once=False)
                em.process(
                    host,
                    t + 40_000,
                    "/usr/bin/systemctl",
                    ["systemctl", "try-restart", "ssh.service"],
                    "root",
                    dpkg,
                    lifetime_ms=900,
                )
                t += 45_000 + int(em.rng.random() * 240_000)

    def _config_management(self, spec: BenignSpec) -> None:
        host = self._host(spec, spec.host)
        em = self.em
        every = parse_duration_ms(spec.every) if spec.every else None
        times = _periodic_times(self.w, every) if every else _daily_times(self.w, spec, "11:00")
        for ts in times:
            ansible, _ = em.process(
                host,
                ts,
                "/usr/bin/python3",
                [
                    "/usr/bin/python3",
                    "/usr/bin/ansible-playbook",
                    "-i",
                    "inventory/prod",
                    "site.yml",
                    "--tags",
                    "baseline",
                ],
                spec.user,
                host.daemons["cron"],
                lifetime_ms=600_000,
            )
            t = ts + 3000
            for target in self._targets(spec):
                shell, _, _ = em.ssh_session(
                    target,
                    t,
                    spec.user,
                    host.ip,
                    "publickey",
                    src_host=host,
                    src_proc=ansible,
                    interactive=False,
                    duration_ms=30_000,
                )
                tmp = f"/home/{spec.user}/.ansible/tmp/ansible-tmp-{t // 1000}.{ids.stable_int(t, mod=99999)}-{t % 1000}"
                sh, ev = em.process(
                    target,
                    t + 600,
                    "/usr/bin/dash",
                    [
                        "/bin/sh",
                        "-c",
                        (
                            f"sudo -H -S -n  -u root /bin/sh -c 'echo BECOME-SUCCESS-"
                            f"{ids.hex_from(t, target.name, n=24)} ; /usr/bin/python3 {tmp}/AnsiballZ_apt.py'"
                            " && sleep 0"
                        ),
                    ],
                    spec.user,
                    shell,
                    lifetime_ms=9000,
                    name="sh",
                )
                em.file(target, t + 500, shell, f"{tmp}/AnsiballZ_apt.py", "creation", size=187_113)
                em.process(
                    target,
                    t + 900,
                    "/usr/bin/python3",
                    ["/usr/bin/python3", f"{tmp}/AnsiballZ_apt.py"],
                    "root",
                    sh,
                    lifetime_ms=7000,
                )
                self._alert(spec, ev, once=False)
                t += 4000 + int(em.rng.random() * 6000)


def benign_persistence(specs: list[BenignSpec]) -> list[PersistenceEntry]:
    """The legit persistence entries the behaviours rely on (cheap: no generation)."""
    out: list[PersistenceEntry] = []
    for spec in specs:
        if spec.kind == "zeekctl-cron":
            out.append(
                PersistenceEntry(
                    host=spec.host,
                    path="/etc/cron.d/zeekctl",
                    kind="cron",
                    command="/opt/zeek/bin/zeekctl cron",
                    schedule="*/5 * * * *",
                    user="root",
                    tags=["security-tooling"],
                )
            )
        elif spec.kind == "backup-rsync":
            hh, mm = (spec.at or "02:30").split(":")
            out.append(
                PersistenceEntry(
                    host=spec.host,
                    path="/etc/cron.d/nightly-backup",
                    kind="cron",
                    command="/usr/local/sbin/nightly-backup.sh",
                    schedule=f"{int(mm)} {int(hh)} * * *",
                    user="root",
                    tags=["backup"],
                )
            )
    return out


def _last_proc_exec(em: Emitter, pid: int, host: str) -> Event | None:
    for ev in reversed(em.out):
        d = ev[2]
        if (
            ev[1].endswith("process-default")
            and d["process"]["pid"] == pid
            and d["event"]["action"] == "exec"
            and d["host"]["name"] == host
        ):
            return ev
    return None


def _date(ts: int) -> str:
    return iso_ms(ts)[:10]


def _hh(ts: int) -> str:
    s = iso_ms(ts)
    return f"{s[11:13]}:00:00-{s[11:13]}:05:00"


def compile_benign(world: World, seed: int) -> tuple[list[Event], BenignOut]:
    em = Emitter(world, ids.rng_for(world.recipe.id, "benign", seed), pid_base=1_500_000)
    out = BenignCompiler(world, em).compile()
    return em.out, out
