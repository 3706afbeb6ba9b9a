"""Pseudonymization throughput on realistic ECS documents.

    PYTHONPATH=src python bench/pseudonymize_bench.py [--docs 100000] [--seed 1] [--repeat 3]

Generates a SOC-like corpus in memory (Elastic Defend process/network/file events, system.auth,
zeek conn/dns/http/ssl, suricata alerts, Windows logons, security alerts) over an estate of
hosts, users, internal and external addresses and domains with long-tailed popularity; then
measures, in one process on one core:

- learn: reading every document for names (pass 1),
- transform: pseudonymizing every document once everything is learned (pass 2),
- end to end: both passes (what `Pseudonymizer.documents` does),
- file: NDJSON in, NDJSON out through `soclab pseudonymize` (adds JSON parsing and writing),
- cold address cost: Crypto-PAn per distinct IPv4 / IPv6 address.

Prints one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pytest_soclab.agents.analyst.untrusted import strings as _strings  # every string in a JSON value
from pytest_soclab.pseudonymize import Pseudonymizer
from pytest_soclab.pseudonymize.files import pseudonymize_paths

KEY = b"benchmark-key-not-a-secret-0123456789"

ROLES = ["web", "db", "app", "build", "mail", "proxy", "files", "ci", "vpn", "k8s-node"]
WORDS = [
    "update",
    "cdn",
    "api",
    "static",
    "login",
    "portal",
    "files",
    "metrics",
    "telemetry",
    "news",
    "shop",
    "img",
    "mail",
    "auth",
    "sync",
    "edge",
    "data",
    "assets",
    "download",
    "status",
]
TLDS = ["com", "net", "org", "io", "co.uk", "de", "ru", "xyz", "top", "info", "cloud", "app"]
FIRST = [
    "alice",
    "bob",
    "carol",
    "dave",
    "erin",
    "frank",
    "grace",
    "heidi",
    "ivan",
    "judy",
    "mallory",
    "niaj",
    "olivia",
    "peggy",
    "rupert",
    "sybil",
    "trent",
    "victor",
    "walter",
    "yusuf",
    "zoe",
    "liam",
    "mia",
    "noah",
]
LAST = ["smith", "jones", "martin", "garcia", "muller", "rossi", "dubois", "kowalski", "tanaka", "silva"]
LINUX_CMDS = [
    "/usr/sbin/cron -f",
    "/usr/bin/python3 /opt/app/worker.py --queue default",
    "/bin/bash /etc/cron.daily/logrotate",
    "/usr/bin/rsync -a /var/www/ backup@{host}:/srv/backup/{host}/",
    "sshd: {user} [priv]",
    "/usr/bin/curl -s https://{domain}/health",
    "/usr/bin/git -C /home/{user}/src pull",
    "/usr/bin/sudo -u postgres psql -c 'select 1'",
    "/usr/bin/ssh {user}@{host} uptime",
    "/usr/bin/tar czf /tmp/backup-{n}.tgz /home/{user}/docs",
    "/usr/bin/wget -q http://{domain}/pkg/{n}.deb",
    "/usr/local/bin/node /srv/app/server.js --port {port}",
    "/usr/bin/zeekctl cron",
    "/usr/bin/vim /home/{user}/notes-{n}.md",
    "/usr/bin/python3 -m pip install requests",
]
WIN_CMDS = [
    "C:\\Windows\\System32\\svchost.exe -k netsvcs -p",
    '"C:\\Program Files\\Google\\Chrome\\chrome.exe" --type=renderer',
    "powershell.exe -NoProfile -File C:\\Users\\{user}\\Documents\\report-{n}.ps1",
    "C:\\Windows\\System32\\cmd.exe /c net use \\\\{host}\\share /user:ACME\\{user}",
    '"C:\\Program Files\\Microsoft Office\\root\\Office16\\OUTLOOK.EXE"',
    "C:\\Windows\\explorer.exe",
    "C:\\Windows\\System32\\wbem\\WmiPrvSE.exe -secured -Embedding",
]
UA = [
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/124.0",
    "curl/7.81.0",
    "python-requests/2.31.0",
    "Go-http-client/1.1",
]
SHA = [f"{random.Random(i).getrandbits(256):064x}" for i in range(400)]


class Estate:
    def __init__(self, rng: random.Random):
        self.rng = rng
        self.linux = [f"{r}-{i:02d}" for r in ROLES for i in range(1, 5)]
        self.windows = [f"WS-{d}-{i:02d}" for d in ("FIN", "HR", "ENG", "OPS", "SAL") for i in range(1, 9)]
        self.hosts = self.linux + self.windows
        self.ip = {h: f"10.{20 + i // 250}.{(i // 50) % 5}.{10 + i % 200}" for i, h in enumerate(self.hosts)}
        self.users = [
            f"{first}.{last}" if rng.random() < 0.5 else f"{first}{last[0]}" for first in FIRST for last in LAST
        ][:150]
        self.external = [
            f"{rng.randint(1, 223)}.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"
            for _ in range(3000)
        ]
        self.external6 = [
            f"2a0{rng.randint(1, 9)}:{rng.getrandbits(16):x}:{rng.getrandbits(16):x}::{rng.getrandbits(16):x}"
            for _ in range(300)
        ]
        self.domains = [
            f"{rng.choice(WORDS)}.{rng.choice(WORDS)}{rng.randint(1, 99)}.{rng.choice(TLDS)}"
            for _ in range(800)
        ]

    def pick(self, items: list[str]) -> str:
        # Long tail: a few very common values, many rare ones.
        i = min(int(self.rng.paretovariate(1.2)) - 1, len(items) - 1)
        return items[i] if self.rng.random() < 0.7 else self.rng.choice(items)


def _ts(rng: random.Random) -> str:
    return (
        f"2024-05-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:"
        f"{rng.randint(0, 59):02d}.{rng.randint(0, 999):03d}Z"
    )


def _host_block(e: Estate, h: str) -> dict[str, Any]:
    win = h.startswith("WS-")
    return {
        "name": h,
        "hostname": h,
        "ip": [e.ip[h]],
        "mac": [f"00-50-56-{hash(h) & 0xFF:02X}-{(hash(h) >> 8) & 0xFF:02X}-01"],
        "os": {
            "type": "windows" if win else "linux",
            "name": "Windows 11" if win else "Ubuntu",
            "family": "windows" if win else "debian",
        },
        "id": f"{abs(hash(h)):032x}"[:32],
        "architecture": "x86_64",
    }


def make_doc(e: Estate, n: int) -> dict[str, Any]:
    rng = e.rng
    kind = rng.random()
    host = e.pick(e.hosts)
    user = e.pick(e.users)
    ts = _ts(rng)
    base: dict[str, Any] = {"@timestamp": ts, "ecs": {"version": "8.11.0"}}
    if kind < 0.35:  # Elastic Defend process
        win = host.startswith("WS-")
        tpl = rng.choice(WIN_CMDS if win else LINUX_CMDS)
        cmd = tpl.format(
            user=user,
            host=e.pick(e.hosts),
            domain=e.pick(e.domains),
            n=rng.randint(1, 500),
            port=rng.choice([3000, 8080, 8443]),
        )
        exe = cmd.split(" ")[0].strip('"')
        base.update(
            {
                "agent": {
                    "name": host,
                    "type": "endpoint",
                    "version": "8.15.0",
                    "id": f"{abs(hash(host)):032x}"[:32],
                },
                "data_stream": {"dataset": "endpoint.events.process", "namespace": "default", "type": "logs"},
                "event": {
                    "action": "exec",
                    "category": ["process"],
                    "dataset": "endpoint.events.process",
                    "kind": "event",
                    "module": "endpoint",
                    "type": ["start"],
                },
                "host": _host_block(e, host),
                "message": "Endpoint process event",
                "process": {
                    "args": cmd.split(" "),
                    "args_count": cmd.count(" ") + 1,
                    "command_line": cmd,
                    "entity_id": f"{rng.getrandbits(128):032x}",
                    "executable": exe,
                    "name": exe.replace("\\", "/").rsplit("/", 1)[-1],
                    "pid": rng.randint(1000, 60000),
                    "working_directory": f"/home/{user}" if not win else f"C:\\Users\\{user}",
                    "hash": {"sha256": rng.choice(SHA)},
                    "parent": {
                        "name": "bash" if not win else "explorer.exe",
                        "pid": rng.randint(500, 999),
                        "entity_id": f"{rng.getrandbits(64):016x}",
                    },
                },
                "user": {"id": str(1000 + e.users.index(user)), "name": user},
            }
        )
    elif kind < 0.50:  # Defend network
        dst = e.pick(e.external) if rng.random() < 0.6 else e.ip[e.pick(e.hosts)]
        base.update(
            {
                "agent": {"name": host, "type": "endpoint"},
                "event": {
                    "action": "connection_attempted",
                    "category": ["network"],
                    "dataset": "endpoint.events.network",
                    "type": ["start"],
                },
                "host": _host_block(e, host),
                "destination": {"address": dst, "ip": dst, "port": rng.choice([443, 80, 22, 53, 8443, 3389])},
                "source": {"address": e.ip[host], "ip": e.ip[host], "port": rng.randint(32768, 60999)},
                "network": {
                    "direction": "egress",
                    "transport": "tcp",
                    "type": "ipv4",
                    "community_id": f"1:{rng.getrandbits(120):030x}=",
                },
                "process": {
                    "name": "curl",
                    "pid": rng.randint(1000, 60000),
                    "entity_id": f"{rng.getrandbits(64):016x}",
                },
                "user": {"name": user},
            }
        )
    elif kind < 0.60:  # Defend file
        path = f"/home/{user}/{rng.choice(['docs', 'src', '.cache', 'tmp'])}/{rng.choice(WORDS)}-{rng.randint(1, 300)}.txt"
        base.update(
            {
                "event": {"action": "creation", "category": ["file"], "dataset": "endpoint.events.file"},
                "host": _host_block(e, host),
                "file": {
                    "path": path,
                    "name": path.rsplit("/", 1)[1],
                    "directory": path.rsplit("/", 1)[0],
                    "extension": "txt",
                    "size": rng.randint(10, 10**6),
                },
                "process": {"name": "vim", "pid": rng.randint(1000, 60000)},
                "user": {"name": user},
            }
        )
    elif kind < 0.65:  # system.auth
        src = e.pick(e.external) if rng.random() < 0.3 else e.ip[e.pick(e.hosts)]
        ok = rng.random() < 0.8
        port = rng.randint(32768, 60999)
        base.update(
            {
                "event": {
                    "action": "ssh_login",
                    "category": ["authentication"],
                    "dataset": "system.auth",
                    "outcome": "success" if ok else "failure",
                },
                "host": {"name": host, "hostname": host},
                "message": f"{'Accepted' if ok else 'Failed'} publickey for {user} from {src} port {port} ssh2",
                "process": {"name": "sshd", "pid": rng.randint(500, 5000)},
                "related": {"ip": [src], "user": [user]},
                "source": {"ip": src, "port": port},
                "user": {"name": user},
            }
        )
    elif kind < 0.80:  # zeek conn
        dst = e.pick(e.external) if rng.random() < 0.7 else e.pick(e.external6)
        src = e.ip[host] if ":" not in dst else f"fd12:3456::{rng.randint(1, 400):x}"
        base.update(
            {
                "destination": {
                    "bytes": rng.randint(0, 10**6),
                    "ip": dst,
                    "port": rng.choice([443, 80, 53, 123]),
                },
                "event": {
                    "category": ["network"],
                    "dataset": "zeek.connection",
                    "id": f"C{rng.getrandbits(60):x}",
                },
                "host": {"name": "sensor-01"},
                "network": {
                    "bytes": rng.randint(100, 10**6),
                    "community_id": f"1:{rng.getrandbits(120):030x}=",
                    "direction": "outbound",
                    "protocol": "ssl",
                    "transport": "tcp",
                },
                "related": {"ip": [src, dst]},
                "source": {"bytes": rng.randint(0, 10**5), "ip": src, "port": rng.randint(32768, 60999)},
                "zeek": {
                    "connection": {"history": "ShADadFf", "local_orig": True, "state": "SF"},
                    "session_id": f"C{rng.getrandbits(60):x}",
                },
            }
        )
    elif kind < 0.90:  # zeek dns
        name = e.pick(e.domains)
        ans = e.pick(e.external)
        base.update(
            {
                "destination": {"ip": "10.20.0.10", "port": 53},
                "dns": {
                    "answers": [{"class": "IN", "data": ans, "name": name, "ttl": 300, "type": "A"}],
                    "question": {
                        "class": "IN",
                        "name": name,
                        "registered_domain": name.split(".", 1)[1],
                        "subdomain": name.split(".", 1)[0],
                        "top_level_domain": name.rsplit(".", 1)[1],
                        "type": "A",
                    },
                    "resolved_ip": [ans],
                    "response_code": "NOERROR",
                    "type": "answer",
                },
                "event": {"category": ["network"], "dataset": "zeek.dns"},
                "network": {"protocol": "dns", "transport": "udp"},
                "source": {"ip": e.ip[host], "port": rng.randint(32768, 60999)},
                "zeek": {
                    "dns": {"answers": [ans], "query": name, "qtype_name": "A", "rcode_name": "NOERROR"},
                    "session_id": f"C{rng.getrandbits(60):x}",
                },
            }
        )
    elif kind < 0.96:  # zeek http / ssl
        name = e.pick(e.domains)
        dst = e.pick(e.external)
        uri = f"/{rng.choice(WORDS)}/{rng.randint(1, 5000)}?id={rng.randint(1, 99999)}"
        base.update(
            {
                "destination": {"ip": dst, "port": 80},
                "event": {"category": ["network", "web"], "dataset": "zeek.http"},
                "http": {"request": {"method": "GET"}, "response": {"status_code": 200}, "version": "1.1"},
                "network": {"protocol": "http", "transport": "tcp"},
                "source": {"ip": e.ip[host], "port": rng.randint(32768, 60999)},
                "url": {
                    "domain": name,
                    "original": uri,
                    "path": uri.split("?")[0],
                    "query": uri.split("?")[1],
                },
                "user_agent": {"original": rng.choice(UA)},
                "tls": {"client": {"server_name": name}, "version": "1.3"},
            }
        )
    elif kind < 0.98:  # suricata
        src, dst = e.ip[host], e.pick(e.external)
        sig = f"ET POLICY Suspicious connection to {e.pick(e.domains)}"
        base.update(
            {
                "destination": {"address": dst, "ip": dst, "port": 443},
                "event": {
                    "category": ["network", "intrusion_detection"],
                    "dataset": "suricata.eve",
                    "kind": "alert",
                },
                "message": f"{sig} from {src}",
                "rule": {"id": str(rng.randint(2000000, 2999999)), "name": sig},
                "source": {"address": src, "ip": src, "port": rng.randint(32768, 60999)},
                "suricata": {
                    "eve": {
                        "alert": {"signature": sig, "signature_id": 2030001},
                        "flow_id": rng.getrandbits(48),
                    }
                },
            }
        )
    else:  # Windows logon
        ws = e.pick(e.windows)
        base.update(
            {
                "event": {
                    "action": "logged-in",
                    "code": "4624",
                    "dataset": "system.security",
                    "outcome": "success",
                },
                "host": {"name": f"{ws.lower()}.corp.acme-widgets.com", "hostname": ws, "ip": [e.ip[ws]]},
                "message": f"An account was successfully logged on.\n\tAccount Name:\t\t{user}\n\tAccount Domain:\t\tACME"
                f"\n\tWorkstation Name:\t{ws}\n\tSource Network Address:\t{e.ip[ws]}",
                "source": {"ip": e.ip[ws]},
                "user": {
                    "name": user,
                    "domain": "ACME",
                    "id": f"S-1-5-21-3623811015-3361044348-30300820-{1000 + n % 500}",
                },
                "winlog": {
                    "computer_name": f"{ws.lower()}.corp.acme-widgets.com",
                    "event_data": {
                        "TargetUserName": user,
                        "TargetDomainName": "ACME",
                        "WorkstationName": ws,
                        "IpAddress": e.ip[ws],
                        "LogonType": "3",
                    },
                },
            }
        )
    return base


def generate(n: int, seed: int) -> list[dict[str, Any]]:
    e = Estate(random.Random(seed))
    return [make_doc(e, i) for i in range(n)]


def _best(fn, repeat: int, setup=None) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """Best (CPU seconds, wall seconds) of `fn(setup())` over `repeat` runs (setup is not timed).
    CPU time is what this process used: on a shared machine it is the steadier figure; wall time
    is reported next to it."""
    cpu, wall = [], []
    for _ in range(repeat):
        arg = setup() if setup is not None else None
        c0, w0 = time.process_time(), time.perf_counter()
        fn(arg)
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    return min(cpu), min(wall)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--file-docs", type=int, default=50_000, help="documents for the NDJSON file measurement")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    docs = generate(args.docs, args.seed)
    gen_s = time.perf_counter() - t0
    size = sum(len(json.dumps(d)) for d in docs[:2000]) / 2000

    raw = [json.dumps(d) for d in docs]

    def parsed() -> list[dict[str, Any]]:
        return [json.loads(line) for line in raw]  # documents of our own, as read from a file

    def learned() -> Pseudonymizer:
        p = Pseudonymizer(KEY)
        p.learn_documents(docs)
        return p

    p = learned()

    def fresh() -> Pseudonymizer:
        # Everything learned, nothing transformed yet: every distinct value is computed once.
        q = Pseudonymizer(KEY)
        q.known.update(p.known)
        return q

    figures = {
        # pass 1 alone, from a cold start as in a real run
        "learn": _best(lambda _: learned(), args.repeat),
        # pass 2 alone: copies (the default API) and in place (parsed documents, what the CLI does)
        "transform_copy": _best(lambda q: q.documents(docs, learn=False), args.repeat, fresh),
        "transform_in_place": _best(
            lambda a: a[0].documents(a[1], learn=False, in_place=True, shared=False),
            args.repeat,
            lambda: (fresh(), parsed()),
        ),
        # both passes: Pseudonymizer(key).documents(docs)
        "end_to_end_copy": _best(lambda _: Pseudonymizer(KEY).documents(docs), args.repeat),
        "end_to_end_in_place": _best(
            lambda d: Pseudonymizer(KEY).documents(d, in_place=True, shared=False), args.repeat, parsed
        ),
    }
    p.documents(docs, learn=False)
    figures["transform_copy_warm"] = _best(lambda _: p.documents(docs, learn=False), args.repeat)

    # distinct-address cost (Crypto-PAn, no memo)
    rng = random.Random(5)
    v4 = [rng.getrandbits(32) for _ in range(20_000)]
    v6 = [rng.getrandbits(128) for _ in range(5_000)]
    ip_p = Pseudonymizer(KEY)
    t = time.process_time()
    for a in v4:
        ip_p.ips._map(a, 4)
    v4_us = (time.process_time() - t) / len(v4) * 1e6
    t = time.process_time()
    for a in v6:
        ip_p.ips._map(a, 6)
    v6_us = (time.process_time() - t) / len(v6) * 1e6

    # files: NDJSON through pseudonymize_paths (parse + learn, transform + write; parsed once while it fits)
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "in" / "case"
        src.mkdir(parents=True)
        fdocs = docs[: args.file_docs]
        (src / "events.ndjson").write_text("".join(json.dumps(d) + "\n" for d in fdocs), encoding="utf-8")
        runs = iter(range(args.repeat))
        file_s = _best(
            lambda _: pseudonymize_paths([src], Path(tmp) / f"out{next(runs)}", Pseudonymizer(KEY)),
            args.repeat,
        )

    n = len(docs)
    stats = {
        "docs": n,
        "avg_doc_bytes": round(size),
        "distinct_text_values": len({v for d in docs for v in _strings(d)}),
        "distinct_names_learned": len(p.known.bare),
        "distinct_domains_learned": len(p.known.domains),
        "generate_s": round(gen_s, 2),
        "docs_per_s_cpu": {k: round(n / v[0]) for k, v in figures.items()},
        "docs_per_s_wall": {k: round(n / v[1]) for k, v in figures.items()},
        "file_ndjson_docs_per_s_cpu": round(len(fdocs) / file_s[0]),
        "file_ndjson_docs_per_s_wall": round(len(fdocs) / file_s[1]),
        "crypto_pan_ipv4_us": round(v4_us, 1),
        "crypto_pan_ipv6_us": round(v6_us, 1),
        "python": platform.python_version(),
        "repeat": args.repeat,
        "load_average_1m": round(os.getloadavg()[0], 2),
    }
    json.dump(stats, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
