"""Generic Linux / SOC tradecraft: what a tier-2 analyst knows before reading any case.

Pure functions and constants only: process roles (web servers, shells, session boundaries, package
managers, scanners, configuration management), risky locations, and a classifier that turns one
command line into behaviours (download, reverse shell, persistence, credential access, staging,
exfiltration, lateral movement...) with a weight and an ATT&CK technique. Nothing here names a host,
an address or a file of any particular estate.
"""

from __future__ import annotations

import ipaddress
import re
import shlex
from dataclasses import dataclass

# --------------------------------------------------------------------------- process roles

WEB_SERVER_PREFIXES = ("php-fpm", "nginx", "apache2", "httpd", "lighttpd", "tomcat", "catalina", "java",
                       "node", "gunicorn", "uwsgi", "puma", "unicorn", "caddy", "php-cgi")
SHELLS = frozenset({"sh", "dash", "bash", "zsh", "ksh", "ash", "busybox", "fish", "tcsh", "csh"})
INTERPRETER_PREFIXES = ("python", "perl", "ruby", "php", "lua", "node")
DESKTOP_SESSIONS = frozenset({"gnome-shell", "gnome-session-binary", "gnome-session", "plasmashell", "kdeinit5",
                              "xfce4-session", "lxsession", "mate-session", "cinnamon-session", "gnome-terminal-server",
                              "konsole", "xterm", "tmux: server", "screen"})
SYSTEM_ROOTS = frozenset({"systemd", "init", "cron", "CRON", "crond", "atd", "containerd-shim", "runc"})
PAGERS_EDITORS = frozenset({"less", "more", "man", "vi", "vim", "view", "nano", "find", "awk", "gawk", "nmap",
                            "ed", "git", "ftp", "gdb", "tar", "zip", "env", "flock", "journalctl", "systemctl"})
PACKAGE_MANAGERS = ("dpkg", "apt", "apt-get", "aptitude", "unattended-upgrade", "unattended-upgrades", "yum", "dnf",
                    "rpm", "zypper", "snapd", "packagekitd", "apk")
# Vulnerability scanners and discovery tools run by the organisation's own scanner.
SCANNER_TOOLS = ("nmap", "masscan", "openvas", "ospd-openvas", "gvmd", "nessus", "nessusd", "nasl", "qualys",
                 "zmap", "nuclei", "rapid7", "insightvm", "greenbone")
# User agents of web scanners and brute-forcers.
SCANNER_AGENTS = ("gobuster", "dirbuster", "dirb", "nikto", "sqlmap", "wpscan", "ffuf", "feroxbuster", "nuclei",
                  "masscan", "nmap", "zgrab", "wfuzz", "hydra", "acunetix", "nessus", "openvas", "whatweb")
CONFIG_MANAGEMENT = ("ansible", "ansiballz", "salt-minion", "salt-call", "puppet", "chef-client", "cfengine")
DUMP_TOOLS = ("pg_dump", "pg_dumpall", "mysqldump", "mariadb-dump", "mongodump", "redis-cli --rdb", "sqlite3")
DISCOVERY_TOOLS = frozenset({"id", "whoami", "uname", "hostname", "ps", "ip", "ifconfig", "netstat", "ss", "w",
                             "who", "last", "lsb_release", "groups", "getent", "arp", "route", "df", "mount"})
SECURITY_AGENTS = ("elastic-agent", "elastic-endpoint", "endpoint-security", "filebeat", "auditbeat", "osqueryd",
                   "zeek", "suricata", "falco", "wazuh", "ossec", "crowdstrike", "falcon-sensor")

# World-writable or volatile places implants like to live in.
WRITABLE_DIRS = ("/tmp/", "/dev/shm/", "/var/tmp/", "/run/user/", "/run/shm/")
# A user's hidden data directories: no binary there is installed by a package manager.
_HOME_HIDDEN = re.compile(r"^/(?:home/[^/]+|root)/\.[^/]+/")

# Credential material on Linux (and Samba AD databases kept on Linux).
CREDENTIAL_PATTERNS: tuple[tuple[str, str], ...] = (
    (r"/etc/(?:g)?shadow\b", "the local password hashes"),
    (r"(?:^|/)(?:id_rsa|id_dsa|id_ecdsa|id_ed25519)\b", "an ssh private key"),
    (r"(?:^|/)\.ssh(?:/|\b)", "ssh keys"),
    (r"(?:^|/)\.aws(?:/|\b)", "cloud (AWS) credentials"),
    (r"(?:^|/)\.git-credentials\b", "git credentials"),
    (r"(?:^|/)\.env(?:\.[\w-]+)?\b", "application secrets (.env)"),
    (r"(?:^|/)\.pgpass\b|(?:^|/)\.my\.cnf\b", "database credentials"),
    (r"(?:^|/)\.netrc\b", "netrc credentials"),
    (r"(?:^|/)\.kube/config\b|(?:^|/)\.docker/config\.json\b", "cluster / registry credentials"),
    (r"\bsam\.ldb\b|\bsecrets\.ldb\b|\bntds\.dit\b", "the domain controller's credential database"),
    (r"(?:^|/)wp-config\.php\b|(?:^|/)config\.php\b|(?:^|/)settings\.py\b", "application configuration secrets"),
)
_CRED_RES = [(re.compile(p, re.IGNORECASE), what) for p, what in CREDENTIAL_PATTERNS]

PERSISTENCE_PATTERNS: tuple[tuple[str, str, str], ...] = (
    (r"^/var/spool/cron/", "T1053.003", "a user crontab"),
    (r"^/etc/cron", "T1053.003", "a system cron entry"),
    (r"^/etc/systemd/system/|^/lib/systemd/system/|^/usr/lib/systemd/system/", "T1543.002", "a systemd service"),
    (r"/\.config/systemd/user/", "T1543.002", "a systemd user service"),
    (r"/\.ssh/authorized_keys2?$", "T1098.004", "an ssh authorized key"),
    (r"^/etc/rc\.local$|^/etc/init\.d/", "T1037.004", "an init script"),
    (r"^/etc/profile\.d/|/\.bashrc$|/\.profile$|/\.bash_profile$", "T1546.004", "a shell profile hook"),
    (r"^/etc/ld\.so\.preload$", "T1574.006", "a dynamic linker preload"),
    (r"/\.config/autostart/", "T1547.013", "an XDG autostart entry"),
)
_PERSIST_RES = [(re.compile(p), t, what) for p, t, what in PERSISTENCE_PATTERNS]


def base(name: str | None) -> str:
    return (name or "").rsplit("/", 1)[-1]


def is_web_server(name: str | None, cmd: str | None = None) -> bool:
    n = base(name).lower()
    return n.startswith(WEB_SERVER_PREFIXES) or (cmd or "").lower().startswith(("php-fpm", "nginx: worker"))


def is_shell(name: str | None) -> bool:
    return base(name).lower() in SHELLS


def is_interpreter(name: str | None) -> bool:
    return base(name).lower().startswith(INTERPRETER_PREFIXES)


def is_package_manager(name: str | None, cmd: str | None = None) -> bool:
    n = base(name).lower()
    c = (cmd or "").lower()
    return n in PACKAGE_MANAGERS or any(f"/{p}" in c or c.startswith(p) for p in ("unattended-upgrade", "apt-get", "dpkg"))


def mentions_any(text: str | None, words: tuple[str, ...]) -> str | None:
    t = (text or "").lower()
    for w in words:
        if re.search(rf"(?<![\w-]){re.escape(w)}(?![\w-])", t):
            return w
    return None


def all_mentions(text: str | None, words: tuple[str, ...]) -> list[str]:
    t = (text or "").lower()
    return [w for w in words if re.search(rf"(?<![\w-]){re.escape(w)}(?![\w-])", t)]


def in_writable_dir(path: str | None) -> bool:
    return bool(path) and str(path).startswith(WRITABLE_DIRS)


def in_hidden_home_dir(path: str | None) -> bool:
    return bool(path) and bool(_HOME_HIDDEN.match(str(path)))


def unusual_executable(path: str | None) -> bool:
    """A binary no package installs: in a world-writable dir, hidden, or in a user's hidden directory."""
    if not path or not str(path).startswith("/"):
        return False
    p = str(path)
    return in_writable_dir(p) or in_hidden_home_dir(p) or base(p).startswith(".")


def credential_kind(text: str | None) -> str | None:
    for rx, what in _CRED_RES:
        if rx.search(text or ""):
            return what
    return None


def persistence_kind(path: str | None) -> tuple[str, str] | None:
    for rx, tech, what in _PERSIST_RES:
        if rx.search(path or ""):
            return tech, what
    return None


# --------------------------------------------------------------------------- addresses

# RFC 1918 and the IPv6 unique-local range: the estate's own addresses. (Python's is_private also
# counts the documentation ranges, which are "the internet" in lab data.)
_INTERNAL_NETS = tuple(ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"))


def is_internal(ip: str | None) -> bool:
    try:
        a = ipaddress.ip_address(str(ip))
    except ValueError:
        return False
    return a.is_loopback or a.is_link_local or any(a in n for n in _INTERNAL_NETS if n.version == a.version)


def is_ip(s: str | None) -> bool:
    try:
        ipaddress.ip_address(str(s))
    except ValueError:
        return False
    return True


def subnet24(ip: str) -> str:
    return ".".join(str(ip).split(".")[:3])


def name_stem(host: str) -> str:
    """node-3 -> node: hosts named alike usually share a role."""
    return re.sub(r"[-_]?\d+$", "", host)


# --------------------------------------------------------------------------- command lines

_URL = re.compile(r"(?:https?|ftp)://([^/\s:'\"]+)(?::(\d+))?(/[^\s'\"]*)?", re.IGNORECASE)
_DEV_TCP = re.compile(r"/dev/(?:tcp|udp)/([\w.-]+)/(\d+)")
_PY_CONNECT = re.compile(r"connect\(\(\s*['\"]([\w.-]+)['\"]\s*,\s*(\d+)\s*\)\)")
_USER_AT = re.compile(r"(?<![\w.-])([a-z_][\w.-]*)@((?:\d{1,3}\.){3}\d{1,3}|[a-z][\w.-]*)(?::\S*)?", re.IGNORECASE)


_KEY_USERS = frozenset({"ssh", "scp", "sftp", "rsync", "sshpass", "git"})


@dataclass(frozen=True)
class Behaviour:
    tag: str  # short key: download, reverse_shell, persistence, credential, staging, exfil, lateral, ...
    weight: int  # how much it says about malice (0 context .. 5 damning)
    technique: str
    what: str  # one plain phrase for the report
    target: str = ""  # the address, path or account it is about, when there is one


def urls(cmd: str) -> list[tuple[str, int | None, str]]:
    """(host, port, path) of every URL in a command line."""
    out = []
    for m in _URL.finditer(cmd or ""):
        out.append((m.group(1), int(m.group(2)) if m.group(2) else None, m.group(3) or ""))
    return out


def ssh_targets(cmd: str) -> list[tuple[str, str]]:
    """(user, host-or-ip) targets of ssh / scp / sshpass / rsync command lines."""
    if not re.search(r"(?:^|[\s/])(?:ssh|scp|sshpass|rsync|sftp)\b", cmd or ""):
        return []
    return [(m.group(1), m.group(2)) for m in _USER_AT.finditer(cmd or "") if not m.group(2).startswith("pts")]


def tokens(cmd: str) -> list[str]:
    try:
        return shlex.split(cmd or "", posix=True)
    except ValueError:
        return (cmd or "").split()


def _written_path(tok: list[str]) -> str | None:
    for flag in ("-o", "-O", "--output", "--output-document"):
        if flag in tok:
            i = tok.index(flag)
            if i + 1 < len(tok):
                return re.split(r"[;&|]", tok[i + 1])[0]
    return None


def classify(cmd: str | None, name: str | None, exe: str | None, parent: str | None = None,
             parent_cmd: str | None = None) -> list[Behaviour]:
    """What one process did, read from its command line, name and parent."""
    c = cmd or ""
    low = c.lower()
    n = base(name or exe).lower()
    out: list[Behaviour] = []
    tok = tokens(c)
    add = out.append

    if is_web_server(parent, parent_cmd) and (is_shell(n) or is_interpreter(n)):
        add(Behaviour("web_spawn", 5, "T1505.003", f"{n} started by the web server ({base(parent)})"))
    m = _DEV_TCP.search(c) or _PY_CONNECT.search(c)
    if m or re.search(r"\b(?:nc|ncat|netcat)\b.*\s-[ec]\s|socat\b.*exec:|mkfifo\b.*\bnc\b|pty\.spawn", low):
        tgt = m.group(1) if m else ""
        add(Behaviour("reverse_shell", 5, "T1059.004" if "/dev/" in c else "T1059.006",
                      f"reverse shell to {tgt}:{m.group(2)}" if m else "reverse shell", tgt))
    if n in ("curl", "wget") or re.search(r"\b(?:curl|wget)\b", low):
        for host, port, path in urls(c):
            upload = bool(re.search(r"\s(?:-T|--upload-file|-F|--form|--data-binary|-d|--data)\s", f" {c} ")) or \
                "-x post" in low or "--method=post" in low
            if upload:
                src = re.findall(r"@([^\s'\"]+)|-T\s+(\S+)|--upload-file\s+(\S+)", c)
                files = [x for grp in src for x in grp if x]
                add(Behaviour("exfil", 5, "T1048", f"upload of {', '.join(files) or 'data'} to {host}", host))
            else:
                dest = _written_path(tok)
                piped = bool(re.search(r"\|\s*(?:ba|da|z)?sh\b", c))
                add(Behaviour("download", 4 if (dest and in_writable_dir(dest)) or piped else 2, "T1105",
                              f"download from {host}" + (f" to {dest}" if dest else "") + (" piped to a shell" if piped else ""),
                              host))
    if unusual_executable(exe):
        add(Behaviour("unusual_exec", 4, "T1036.005" if in_hidden_home_dir(exe) else "T1105",
                      f"runs {exe} from an unusual location", str(exe)))
    if re.search(r"\bchmod\b.*(?:\+x|\b7[0-7][0-7]\b)", low) and any(in_writable_dir(t) for t in tok):
        add(Behaviour("chmod_exec", 3, "T1222.002", "makes a dropped file executable"))
    if n == "crontab" and not re.search(r"\s-l\b", c):
        add(Behaviour("persistence", 4, "T1053.003", "installs a crontab"))
    if re.search(r"\bsystemctl\b.*\benable\b", low):
        unit = next((t for t in tok if t.endswith((".service", ".timer"))), "")
        add(Behaviour("persistence", 3, "T1543.002", f"enables the systemd unit {unit}".strip(), unit))
    if "authorized_keys" in low and re.search(r">>|\btee\b|\bcp\b|\becho\b", low):
        add(Behaviour("persistence", 4, "T1098.004", "adds an ssh authorized key"))
    # A key passed to ssh/scp/rsync with -i is being used, not stolen: judge the rest of the line.
    key_use = re.sub(r"\s-i\s+\S+", " ", c) if n in _KEY_USERS or re.search(r"\s-e\s+['\"]?ssh\b", c) else c
    cred = credential_kind(key_use) if n not in ("sshd",) and not is_package_manager(n, c) else None
    if cred:
        heavy = n in ("cp", "tar", "zip", "scp", "curl", "base64", "xxd", "gzip", "7z", "rsync") or \
            bool(re.search(r"\s(?:>|>>)\s*/", c))
        tech = "T1003.008" if "shadow" in low else "T1003.003" if re.search(r"sam\.ldb|ntds\.dit|secrets\.ldb", low) \
            else "T1552.004" if "private key" in cred or "ssh keys" in cred else "T1552.001"
        add(Behaviour("credential", 4 if heavy else 3, tech, f"accesses {cred}", cred))
    if n == "sudo" and "../" in c:
        add(Behaviour("privesc", 5, "T1548.003", "abuses a sudo rule with a path traversal"))
    if (is_shell(n) or is_interpreter(n)) and base(parent) in PAGERS_EDITORS:
        add(Behaviour("privesc", 5, "T1548.003", f"shell escape from {base(parent)}"))
    if n in ("tar", "zip", "7z", "rar", "gzip", "bzip2", "xz") and (
            any(in_writable_dir(t) or base(t).startswith(".") for t in tok[1:]) or credential_kind(c)):
        add(Behaviour("staging", 3, "T1560.001", "packs data into an archive"))
    dump = mentions_any(c, DUMP_TOOLS) if n != "sshd" else None
    if dump and n not in ("cron", "sh", "dash", "bash"):
        add(Behaviour("db_dump", 3, "T1005", f"dumps a database with {dump}"))
    for user, host in ssh_targets(c):
        add(Behaviour("lateral", 3, "T1021.004", f"connects over ssh as {user} to {host}", f"{user}@{host}"))
    if "sshpass" in n or "sshpass" in low or "stricthostkeychecking=no" in low:
        add(Behaviour("lateral_tool", 2, "T1021.004", "scripted ssh (no host key check / sshpass)"))
    if re.search(r"\b(?:base64\s+-d|b64decode|zlib\.decompress|exec\(|eval\()", c):
        add(Behaviour("obfuscated", 4, "T1027", "runs obfuscated inline code"))
    if re.search(r"\b(?:pip3?|python3?\s+-m\s+pip)\s+install\b|\bnpm\s+install\b|\bgem\s+install\b", low):
        pkg = next((t for t in reversed(tok) if not t.startswith("-") and t not in ("install", "pip", "pip3", "-m")), "")
        add(Behaviour("package_install", 1, "T1195.002", f"installs the package {pkg}", pkg))
    if n == "rm" and any(in_writable_dir(t) or base(t).startswith(".") for t in tok[1:]):
        add(Behaviour("cleanup", 2, "T1070.004", "deletes its staging files"))
    if re.search(r"history\s+-c|unset\s+histfile|>\s*~?/?\.bash_history", low):
        add(Behaviour("cleanup", 3, "T1070.003", "clears shell history"))
    if n in DISCOVERY_TOOLS or (n == "cat" and "/etc/os-release" in c) or (n == "sudo" and " -l" in f" {c}") or \
            (n == "ls" and not out):
        add(Behaviour("discovery", 0, "T1082", f"discovery ({c[:40]})"))
    if mentions_any(c, ("xmrig", "stratum+tcp", "minerd", "cpuminer")):
        add(Behaviour("miner", 5, "T1496", "crypto-miner"))
    return out

