"""The emitter: turns activity (a process runs, a connection is made, a user logs in) into the documents
every sensor that would see it writes. Background, benign behaviours and attack chains all use it,
so that the same act looks the same whoever performs it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from pytest_soclab.corpus import docs, docs_endpoint, docs_network, ids
from pytest_soclab.corpus.world import HostCtx, Proc, World

# (timestamp ms, data stream, document)
Event = tuple[int, str, dict[str, Any]]

_PID_MAX = 4_194_304


@dataclass
class ConnResult:
    """What one connection produced: the documents by role, for alerts to point at."""

    sport: int
    community: str
    endpoint_src: Event | None = None
    endpoint_dst: Event | None = None
    zeek: Event | None = None
    http: Event | None = None
    ssl: Event | None = None
    suricata: Event | None = None
    extra: list[Event] = field(default_factory=list)

    def primary(self) -> Event | None:
        return self.suricata or self.endpoint_src or self.endpoint_dst or self.http or self.ssl or self.zeek


class Emitter:
    """Each emitter allocates pids from its own range (attack sessions from 8,000, attack processes with
    fixed pids in 20,000-60,000, background from 100,000, benign behaviours from 1,500,000; pid_max is
    4,194,304), so that two live processes of a host never share a pid."""

    def __init__(self, world: World, rng: random.Random, pid_base: int = 100_000):
        self.w = world
        self.rng = rng
        self.out: list[Event] = []
        self.next_pid: dict[str, int] = {
            h: pid_base + ids.stable_int(world.recipe.id, "pidbase", h, mod=5000) for h in world.hosts
        }

    def emit(self, ts: int, stream: str, doc: dict[str, Any]) -> Event:
        """Record one document and return its event. Documents are recorded in call order: that order is
        part of the output (ties in time keep it), so every document goes through here as it is made."""
        ev = (ts, stream, doc)
        self.out.append(ev)
        return ev

    # ------------------------------------------------------------ processes

    def alloc_pid(self, host: HostCtx) -> int:
        pid = self.next_pid[host.name]
        reserved = host.reserved_pids
        while True:
            pid += 1 + (self.rng.random() < 0.3)  # forks in between
            if pid >= _PID_MAX:
                pid = 1000
            if pid not in reserved:
                break
        self.next_pid[host.name] = pid
        return pid

    def process(
        self,
        host: HostCtx,
        ts: int,
        executable: str,
        args: list[str],
        user: str,
        parent: Proc | None,
        pid: int | None = None,
        working_directory: str = "/",
        hashes: dict[str, str] | None = None,
        lifetime_ms: int | None = 1500,
        name: str | None = None,
    ) -> tuple[Proc, Event | None]:
        """A process starts (and, with a lifetime, ends). Returns it and its exec event."""
        if pid is None:
            pid = self.alloc_pid(host)
        proc = Proc(
            host=host.name,
            pid=pid,
            entity_id=ids.entity_id(host.agent_id, pid, ts),
            name=name or executable.rsplit("/", 1)[-1],
            executable=executable,
            args=args,
            user=user,
            start_ms=ts,
            parent=parent,
            working_directory=working_directory,
            hashes=hashes if hashes is not None else _exe_hashes(executable),
        )
        ev: Event | None = None
        if host.has_endpoint:
            uid = self.w.uid_of(user)
            doc = docs_endpoint.process_event(host, ts, proc, uid, "exec")
            ev = self.emit(ts, docs.PROC, doc)
            if lifetime_ms is not None:
                end = ts + lifetime_ms
                self.emit(end, docs.PROC, docs_endpoint.process_end_event(host, end, doc))
        return proc, ev

    def file(
        self,
        host: HostCtx,
        ts: int,
        proc: Proc,
        path: str,
        action: str,
        size: int | None = None,
        hashes: dict[str, str] | None = None,
    ) -> Event | None:
        if not host.has_endpoint:
            return None
        uid = self.w.uid_of(proc.user)
        doc = docs_endpoint.file_event(host, ts, proc, uid, path, action, size, hashes)
        return self.emit(ts, docs.FILE, doc)

    # ------------------------------------------------------------ network

    def ephemeral_port(self) -> int:
        return 32768 + int(self.rng.random() * 28000)

    def _endpoint_net(
        self,
        host: HostCtx,
        ts: int,
        proc: Proc,
        src_ip: str,
        sport: int,
        dst_ip: str,
        dport: int,
        transport: str,
        egress: bool,
        community: str,
    ) -> Event:
        # Elastic Defend's view of a flow from one of its ends: the client and server sides of a
        # connection and a DNS lookup's query all write it alike.
        uid = self.w.uid_of(proc.user)
        doc = docs_endpoint.network_event(
            host, ts, proc, uid, src_ip, sport, dst_ip, dport, transport, egress, community
        )
        return self.emit(ts, docs.NET, doc)

    def connection(
        self,
        ts: int,
        src_ip: str,
        dst_ip: str,
        dport: int,
        *,
        transport: str = "tcp",
        src_host: HostCtx | None = None,
        dst_host: HostCtx | None = None,
        src_proc: Proc | None = None,
        dst_proc: Proc | None = None,
        service: str | None = None,
        duration_ms: int = 800,
        obytes: int = 600,
        rbytes: int = 1500,
        state: str = "SF",
        sport: int | None = None,
        http: dict[str, Any] | None = None,
        tls: dict[str, Any] | None = None,
        suricata: dict[str, Any] | None = None,
    ) -> ConnResult:
        w = self.w
        if sport is None:
            sport = self.ephemeral_port()
        community = ids.community_id(src_ip, sport, dst_ip, dport, transport)
        res = ConnResult(sport=sport, community=community)
        if src_host is not None and src_proc is not None and src_host.has_endpoint:
            res.endpoint_src = self._endpoint_net(
                src_host, ts, src_proc, src_ip, sport, dst_ip, dport, transport, True, community
            )
        if (
            dst_host is not None
            and dst_proc is not None
            and dst_host.has_endpoint
            and state in ("SF", "S1", "RSTO")
        ):
            res.endpoint_dst = self._endpoint_net(
                dst_host, ts + 1, dst_proc, src_ip, sport, dst_ip, dport, transport, False, community
            )
        sees, direction, zo, zr = w.path(src_ip, dst_ip)
        sensor = w.zeek
        if sees and sensor is not None:
            uid = ids.zeek_uid(self.rng)
            if state == "SF":
                history = "ShADadFf" if transport == "tcp" else "Dd"
            elif state == "REJ":
                history, obytes, rbytes, duration_ms = "Sr", 0, 0, 0
            elif state == "S0":
                history, obytes, rbytes, duration_ms = "S", 0, 0, 0
            else:
                history = "ShADadR"
            # Every zeek record of one connection names it alike: its uid and its 4-tuple.
            flow = (uid, src_ip, sport, dst_ip, dport)
            res.zeek = self.emit(
                ts,
                docs.ZEEK_CONN,
                docs_network.zeek_conn(
                    sensor,
                    ts,
                    *flow,
                    transport,
                    service if state == "SF" else None,
                    duration_ms,
                    obytes,
                    rbytes,
                    state,
                    history,
                    direction,
                    community,
                    zo,
                    zr,
                ),
            )
            if http is not None and state == "SF":
                t = ts + 30
                res.http = self.emit(
                    t,
                    docs.ZEEK_HTTP,
                    docs_network.zeek_http(
                        sensor,
                        t,
                        *flow,
                        http.get("method", "GET"),
                        http.get("host", dst_ip),
                        http.get("uri", "/"),
                        int(http.get("status", 200)),
                        http.get("user_agent", ""),
                        int(http.get("request_body_len", 0)),
                        int(http.get("response_body_len", rbytes)),
                        http.get("mime"),
                    ),
                )
            if tls is not None and state == "SF":
                t = ts + 25
                res.ssl = self.emit(
                    t,
                    docs.ZEEK_SSL,
                    docs_network.zeek_ssl(
                        sensor,
                        t,
                        *flow,
                        tls.get("sni", ""),
                        tls.get("ja3", _JA3_DEFAULT),
                        tls.get("ja3s", _JA3S_DEFAULT),
                        tls.get("version", "1.3"),
                        tls.get("subject"),
                        tls.get("issuer"),
                    ),
                )
        if suricata is not None and w.suricata is not None and sees:
            t = ts + 60
            res.suricata = self.emit(
                t,
                docs.SURICATA,
                docs_network.suricata_alert(
                    w.suricata,
                    t,
                    self.rng.getrandbits(50),
                    src_ip,
                    sport,
                    dst_ip,
                    dport,
                    transport,
                    community,
                    suricata["sid"],
                    suricata["signature"],
                    suricata.get("category", "Potentially Bad Traffic"),
                    int(suricata.get("severity", 2)),
                    suricata.get("action", "allowed"),
                    service,
                ),
            )
        return res

    def dns(
        self,
        ts: int,
        src_ip: str,
        query: str,
        qtype: str = "A",
        answers: list[str] | None = None,
        rcode: str = "NOERROR",
        src_host: HostCtx | None = None,
        src_proc: Proc | None = None,
    ) -> Event | None:
        w = self.w
        resolver = w.resolver_ip
        if resolver is None or resolver == src_ip:
            return None
        sport = self.ephemeral_port()
        if src_host is not None and src_proc is not None and src_host.has_endpoint:
            community = ids.community_id(src_ip, sport, resolver, 53, "udp")
            self._endpoint_net(src_host, ts, src_proc, src_ip, sport, resolver, 53, "udp", True, community)
        if w.zeek is None or not w.zeek_sees(src_ip, resolver):
            return None
        return self.emit(
            ts,
            docs.ZEEK_DNS,
            docs_network.zeek_dns(
                w.zeek,
                ts,
                ids.zeek_uid(self.rng),
                src_ip,
                sport,
                resolver,
                query,
                qtype,
                answers or [],
                rcode,
                self.rng.getrandbits(16),
            ),
        )

    # ------------------------------------------------------------ logins

    def ssh_session(
        self,
        host: HostCtx,
        ts: int,
        user: str,
        src_ip: str,
        method: str = "publickey",
        src_host: HostCtx | None = None,
        src_proc: Proc | None = None,
        interactive: bool = True,
        duration_ms: int = 600_000,
    ) -> tuple[Proc, Event, ConnResult]:
        """A successful ssh login: zeek sees the connection, sshd logs it, a session and a shell start."""
        sshd = host.daemons["sshd"]
        conn = self.connection(
            ts - 400,
            src_ip,
            host.ip,
            22,
            src_host=src_host,
            dst_host=host,
            src_proc=src_proc,
            dst_proc=sshd,
            service="ssh",
            duration_ms=duration_ms,
            obytes=4200 + int(self.rng.random() * 40000),
            rbytes=5200 + int(self.rng.random() * 90000),
        )
        priv, _ = self.process(
            host, ts - 150, "/usr/sbin/sshd", [f"sshd: {user} [priv]"], "root", sshd, lifetime_ms=duration_ms
        )
        doc = docs_endpoint.ssh_auth_event(host, ts, priv.pid, user, src_ip, conn.sport, method, "success")
        auth = self.emit(ts, docs.AUTH, doc)
        sess, _ = self.process(
            host,
            ts + 40,
            "/usr/sbin/sshd",
            [f"sshd: {user}@pts/{self.rng.randrange(0, 4)}"],
            user,
            priv,
            lifetime_ms=duration_ms - 200,
        )
        home = "/root" if user == "root" else f"/home/{user}"
        if interactive:
            shell, _ = self.process(
                host,
                ts + 90,
                "/usr/bin/bash",
                ["-bash"],
                user,
                sess,
                working_directory=home,
                lifetime_ms=duration_ms - 400,
                name="bash",
            )
        else:
            shell = sess
        return shell, auth, conn

    def ssh_failures(
        self,
        host: HostCtx,
        ts: int,
        user: str,
        src_ip: str,
        count: int,
        interval_ms: int,
        method: str = "password",
        invalid: bool = False,
    ) -> list[Event]:
        sshd = host.daemons["sshd"]
        evs = []
        for i in range(count):
            t = ts + i * interval_ms + int(self.rng.random() * interval_ms * 0.3)
            res = self.connection(
                t - 300,
                src_ip,
                host.ip,
                22,
                service="ssh",
                duration_ms=2500,
                obytes=1600,
                rbytes=2100,
                state="RSTO",
            )
            ev = self.emit(
                t,
                docs.AUTH,
                docs_endpoint.ssh_auth_event(
                    host, t, sshd.pid + 1 + i, user, src_ip, res.sport, method, "failure", invalid
                ),
            )
            evs.append(ev)
        return evs

    def sudo(self, host: HostCtx, ts: int, user: str, command: str, shell: Proc) -> tuple[Proc, Event]:
        argv = command.split()
        sudo_proc, _ = self.process(host, ts, "/usr/bin/sudo", ["sudo", *argv], user, shell, lifetime_ms=4000)
        doc = docs_endpoint.sudo_event(host, ts + 5, sudo_proc.pid, user, command)
        ev = self.emit(ts + 5, docs.AUTH, doc)
        child, _ = self.process(
            host,
            ts + 20,
            argv[0] if argv[0].startswith("/") else f"/usr/bin/{argv[0]}",
            argv,
            "root",
            sudo_proc,
            lifetime_ms=3000,
        )
        return child, ev


_JA3_DEFAULT = "473cd7cb9faa642487833865d516e578"
_JA3S_DEFAULT = "15af977ce25de452b96affa2addb1036"

_hash_cache: dict[str, dict[str, str]] = {}


def _exe_hashes(executable: str) -> dict[str, str]:
    h = _hash_cache.get(executable)
    if h is None:
        h = ids.file_hashes("exe", executable)
        _hash_cache[executable] = h
    return h
