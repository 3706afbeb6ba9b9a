"""Attack chains: a recipe's ordered steps and their concrete artifacts -> documents and end-of-window state.

The chain depends on the recipe alone (not on the seed or the scale), so that the
pids, paths and addresses in the answer keys are the same in every build.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

from pytest_soclab.corpus import docs, docs_endpoint, ids
from pytest_soclab.corpus.emit import Emitter, Event
from pytest_soclab.corpus.recipe import (
    AlertSpec,
    AuthArt,
    DnsArt,
    FileArt,
    NetArt,
    ProcessArt,
    ScanArt,
    StepSpec,
)
from pytest_soclab.corpus.timeutil import parse_duration_ms, to_ms
from pytest_soclab.corpus.world import HostCtx, Proc, World
from pytest_soclab.errors import SoclabError


@dataclass
class PersistenceEntry:
    host: str
    path: str
    kind: str
    command: str
    schedule: str
    user: str
    tags: list[str]


@dataclass
class ChainState:
    """What the chain leaves behind at the end of the window."""

    running: list[Proc] = field(default_factory=list)
    files: dict[str, list[str]] = field(default_factory=dict)  # host -> paths
    persistence: list[PersistenceEntry] = field(default_factory=list)


@dataclass
class Compiled:
    events: list[Event]
    alerts: list[tuple[AlertSpec, Event]]  # alert spec + the event it fires on
    state: ChainState


def persistence_kind(path: str) -> str | None:
    if path.startswith(
        ("/etc/cron.d/", "/var/spool/cron/", "/etc/crontab", "/etc/cron.hourly/", "/etc/cron.daily/")
    ):
        return "cron"
    if path.startswith(("/etc/systemd/system/", "/lib/systemd/system/", "/usr/lib/systemd/system/")) or (
        "/.config/systemd/user/" in path
    ):
        return "systemd"
    if path.endswith("/authorized_keys"):
        return "ssh-key"
    if path in ("/etc/rc.local",) or path.startswith("/etc/init.d/"):
        return "rc"
    if path.endswith((".bashrc", ".profile", ".bash_profile")) or path.startswith("/etc/profile.d/"):
        return "shell-profile"
    return None


def _schedule_of(kind: str, content: str, path: str = "") -> tuple[str, str]:
    """(schedule, command) of a cron line or a systemd unit's content."""
    if kind == "cron" and path.startswith("/var/spool/cron/"):
        # A user crontab has no user field.
        line = next((ln for ln in content.splitlines() if ln.strip() and not ln.lstrip().startswith("#")), "")
        parts = line.split()
        if parts and parts[0].startswith("@"):
            return parts[0], " ".join(parts[1:])
        return " ".join(parts[:5]), " ".join(parts[5:])
    if kind == "cron":
        line = next(
            (
                ln
                for ln in content.splitlines()
                if ln.strip() and not ln.lstrip().startswith("#") and "=" not in ln.split()[0]
            ),
            "",
        )
        parts = line.split()
        if parts and parts[0].startswith(
            "@"
        ):  # @reboot CMD (a user crontab) or @reboot USER CMD (/etc/cron.d)
            rest = (
                parts[2:]
                if len(parts) > 2
                and not parts[1].startswith(("/", "."))
                and "=" not in parts[1]
                and parts[1] in ("root", "www-data")
                else parts[1:]
            )
            return parts[0], " ".join(rest)
        if len(parts) >= 7:
            return " ".join(parts[:5]), " ".join(parts[6:])  # /etc/cron.d lines carry a user field
        if len(parts) >= 6:
            return " ".join(parts[:5]), " ".join(parts[5:])
        return "", content.strip()
    if kind == "systemd":
        cmd = next((ln.split("=", 1)[1] for ln in content.splitlines() if ln.startswith("ExecStart=")), "")
        return "boot", cmd
    return "", content.strip()


class ChainCompiler:
    def __init__(self, world: World, emitter: Emitter):
        self.w = world
        self.em = emitter
        self.refs: dict[str, Proc] = {}
        self.state = ChainState()
        self.alerts: list[tuple[AlertSpec, Event]] = []
        self._n = 0

    # ------------------------------------------------------------ lookups

    def _err(self, step: StepSpec, msg: str) -> SoclabError:
        return SoclabError(f"case {self.w.recipe.id}, attack step {step.id!r}: {msg}")

    def _host(self, step: StepSpec, name: str | None) -> HostCtx:
        return self.w.hosts[name or step.host]

    def _proc(self, step: StepSpec, host: HostCtx | None, name: str | None) -> Proc | None:
        if name is None:
            return None
        if name in self.refs:
            return self.refs[name]
        if host is not None and name in host.daemons:
            return host.daemons[name]
        where = f" on {host.name}" if host else ""
        raise self._err(
            step, f"unknown process {name!r}{where} (not an earlier ref, nor a service of the host)"
        )

    def _addr(self, step: StepSpec, what: str) -> tuple[str, HostCtx | None]:
        try:
            ip, ctx, _ = self.w.resolve(what)
        except ValueError as exc:
            raise self._err(step, str(exc)) from None
        return ip, ctx

    # ------------------------------------------------------------ steps

    def compile(self) -> Compiled:
        prev = None
        for step in self.w.recipe.attack.steps:
            t = to_ms(step.at) if step.at is not None else (prev or 0) + parse_duration_ms(step.after)
            prev = t
            for art in step.artifacts:
                ts = t + parse_duration_ms(art.offset)
                primary = getattr(self, f"_do_{art.kind}")(step, art, ts)
                if art.alert is not None:
                    if primary is None:
                        raise self._err(step, f"{art.kind} artifact has an alert but no sensor sees it")
                    self.alerts.append((art.alert, primary))
        return Compiled(events=self.em.out, alerts=self.alerts, state=self.state)

    def _do_process(self, step: StepSpec, art: ProcessArt, ts: int) -> Event | None:
        host = self._host(step, art.host)
        parent = self._proc(step, host, art.parent)
        pid = (
            art.pid
            if art.pid is not None
            else 20_000 + ids.stable_int(self.w.recipe.id, step.id, art.ref or art.executable, ts, mod=40_000)
        )
        hashes = None
        if art.sha256:
            hashes = {**ids.file_hashes("atk", art.sha256), "sha256": art.sha256}
        proc, ev = self.em.process(
            host,
            ts,
            art.executable,
            list(art.args),
            art.user,
            parent,
            pid=pid,
            working_directory=art.working_directory,
            hashes=hashes,
            lifetime_ms=None if art.running else parse_duration_ms(art.lifetime),
        )
        host.reserved_pids.add(pid)
        if art.executable.endswith("/sudo") and len(art.args) > 1:
            # sudo writes its own auth.log line (system.auth) besides the process event.
            cmd = " ".join(a for a in art.args[1:] if not a.startswith("-") or a is not art.args[1])
            t = ts + 5
            self.em.emit(t, docs.AUTH, docs_endpoint.sudo_event(host, t, pid, art.user, cmd))
        if art.ref:
            self.refs[art.ref] = proc
        if art.running:
            proc.tags.append("malicious")
            self.state.running.append(proc)
        return ev

    def _do_file(self, step: StepSpec, art: FileArt, ts: int) -> Event | None:
        host = self._host(step, art.host)
        proc = self._proc(step, host, art.process) or host.daemons["systemd"]
        hashes = {**ids.file_hashes("atk-file", art.sha256), "sha256": art.sha256} if art.sha256 else None
        ev = self.em.file(host, ts, proc, art.path, art.action, art.size, hashes)
        files = self.state.files.setdefault(host.name, [])
        if art.action == "deletion":
            if art.path in files:
                files.remove(art.path)
        elif art.remains and art.path not in files:
            files.append(art.path)
        kind = persistence_kind(art.path)
        if kind and art.action != "deletion" and art.remains:
            schedule, cmd = _schedule_of(kind, art.content or "", art.path)
            self.state.persistence.append(
                PersistenceEntry(
                    host=host.name,
                    path=art.path,
                    kind=kind,
                    command=cmd,
                    schedule=schedule,
                    user=proc.user,
                    tags=["malicious"],
                )
            )
        return ev

    def _do_net(self, step: StepSpec, art: NetArt, ts: int) -> Event | None:
        src_ip, src_host = self._addr(step, art.src)
        dst_ip, dst_host = self._addr(step, art.dst)
        src_proc = self._proc(step, src_host, art.process)
        dst_proc = self._proc(step, dst_host, art.dst_process)
        times = [ts]
        if art.repeat is not None:
            every = parse_duration_ms(art.repeat.every)
            until = self.w.end_ms if art.repeat.until == "end" else to_ms(art.repeat.until)
            rng = ids.rng_for(self.w.recipe.id, "beacon", step.id, art.ref or art.dst)
            t = ts
            while len(times) < (art.repeat.count or 10**9):
                t += int(every * (1 + art.repeat.jitter * (2 * rng.random() - 1)))
                if t >= until or t >= self.w.end_ms:
                    break
                times.append(t)
        service = "http" if art.http else ("ssl" if art.tls else None)
        if service is None and art.dport == 22:
            service = "ssh"
        first = None
        for i, t in enumerate(times):
            res = self.em.connection(
                t,
                src_ip,
                dst_ip,
                art.dport,
                transport=art.transport,
                src_host=src_host,
                dst_host=dst_host,
                src_proc=src_proc,
                dst_proc=dst_proc,
                service=service,
                duration_ms=parse_duration_ms(art.duration),
                obytes=art.bytes_out,
                rbytes=art.bytes_in,
                state=art.state,
                sport=art.sport if i == 0 else None,
                http=art.http,
                tls=art.tls,
                suricata=art.suricata.model_dump() if art.suricata and i == 0 else None,
            )
            if first is None:
                first = res.primary()
        return first

    def _do_auth(self, step: StepSpec, art: AuthArt, ts: int) -> Event | None:
        host = self._host(step, art.host)
        src_ip, src_host = self._addr(step, art.source)
        src_proc = self._proc(step, src_host, art.process)
        if art.outcome == "failure":
            evs = self.em.ssh_failures(
                host,
                ts,
                art.user,
                src_ip,
                art.count,
                parse_duration_ms(art.interval),
                art.method,
                invalid=art.user not in self.w.users and art.user != "root",
            )
            return evs[0]
        if art.count > 1:
            self.em.ssh_failures(
                host,
                ts - art.count * parse_duration_ms(art.interval),
                art.user,
                src_ip,
                art.count - 1,
                parse_duration_ms(art.interval),
                art.method,
            )
        duration = parse_duration_ms(art.duration)
        shell, auth, _ = self.em.ssh_session(
            host, ts, art.user, src_ip, art.method, src_host=src_host, src_proc=src_proc, duration_ms=duration
        )
        if art.ref:
            self.refs[art.ref] = shell
        t = ts + 3000
        for argv in art.session:
            exe = argv[0] if argv[0].startswith("/") else f"/usr/bin/{argv[0]}"
            self.em.process(host, t, exe, list(argv), art.user, shell, lifetime_ms=1200)
            t += 4000 + int(self.em.rng.random() * 15000)
        for cmd in art.sudo:
            self.em.sudo(host, t, art.user, cmd, shell)
            t += 5000 + int(self.em.rng.random() * 15000)
        return auth

    def _do_dns(self, step: StepSpec, art: DnsArt, ts: int) -> Event | None:
        src_ip, src_host = self._addr(step, art.src)
        proc = self._proc(step, src_host, art.process)
        if art.query:
            return self.em.dns(ts, src_ip, art.query, art.qtype, list(art.answers), art.rcode, src_host, proc)
        # Tunnelling: each query carries a chunk of data, base32 in the leftmost labels.
        every = parse_duration_ms(art.every)
        rng = ids.rng_for(self.w.recipe.id, "tunnel", step.id, art.tunnel_domain)
        first = None
        for i in range(art.count):
            chunk = ids.digest(self.w.recipe.id, art.tunnel_domain, i)[:25]
            label = base64.b32encode(chunk).decode("ascii").rstrip("=").lower()
            q = f"{label[:30]}.{label[30:]}.{i:04x}.{art.tunnel_domain}"
            t = ts + i * every + int(rng.random() * every * 0.4)
            ev = self.em.dns(t, src_ip, q, art.qtype, list(art.answers), art.rcode, src_host, proc)
            first = first or ev
        return first

    def _do_scan(self, step: StepSpec, art: ScanArt, ts: int) -> Event | None:
        src_ip, src_host = self._addr(step, art.src)
        targets: list[tuple[str, HostCtx | None]] = []
        zones = {z.name for z in self.w.recipe.zones}
        for t in art.targets:
            if t in zones:
                targets += [(h.ip, h) for h in self.w.hosts.values() if h.spec.zone == t]
            else:
                targets.append(self._addr(step, t))
        gap = max(1, int(1000 / art.rate))
        t = ts
        first = None
        suricata: dict[str, Any] | None = art.suricata.model_dump() if art.suricata else None
        for ip, host in targets:
            open_ports = set(art.open_ports.get(host.name if host else ip, []))
            for port in art.ports:
                state = "SF" if port in open_ports else ("REJ" if host is not None else "S0")
                res = self.em.connection(
                    t,
                    src_ip,
                    ip,
                    port,
                    src_host=src_host,
                    dst_host=host,
                    state=state,
                    duration_ms=20,
                    obytes=0,
                    rbytes=0,
                    suricata=suricata,
                )
                if suricata is not None and res.suricata is not None:
                    suricata = None  # the signature fires once per scan, thresholded
                first = first or res.primary()
                t += gap
        # Web enumeration against the open http(s) ports.
        for ip, host in targets:
            ports = [
                p for p in art.open_ports.get(host.name if host else ip, []) if p in (80, 443, 8080, 8000)
            ]
            for port in ports[:1]:
                for path in art.http_paths:
                    uri, sep, status = path.rpartition("=")
                    if not sep or not status.isdigit():
                        uri, status = path, "404"
                    code = int(status)
                    size = 162 if code == 404 else 2400 + ids.stable_int(uri, mod=30000)
                    self.em.connection(
                        t,
                        src_ip,
                        ip,
                        port,
                        dst_host=host,
                        service="http",
                        duration_ms=40,
                        obytes=220,
                        rbytes=size + 200,
                        http={
                            "method": "GET",
                            "host": self.w.recipe.background.public_site,
                            "uri": uri,
                            "status": code,
                            "user_agent": art.user_agent,
                            "response_body_len": size,
                        },
                    )
                    t += gap * 3
        return first


def compile_chain(world: World) -> Compiled:
    em = Emitter(world, ids.rng_for(world.recipe.id, "attack"), pid_base=8_000)
    return ChainCompiler(world, em).compile()
