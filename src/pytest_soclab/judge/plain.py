"""Plain-form response lines (`required`, `over_reaction_penalty`) read as actions with their targets.

An answer key's author writes "Kill or remove mdatp / wdavdaemon", "Patch or upgrade log4j / disable
JNDI lookups", "Isolate the compromised hosts". Each line is split into verb spans (a verb and the
words up to the next verb); a verb with nothing of its own ("kill or remove X") shares the next one's
object. A span becomes an action only when its verb is one of the action tools AND its object names a
target of the kind that tool acts on:

- isolate / release / wipe: a host (a known name, a `name-NN` form, "the compromised host(s)");
- kill / suspend: a pid, a process name (`x.exe`, a known process, "the security agents"), on a host;
- block: an IPv4 address, `a.b.c.d/NN` (a network, or the seed's `.20/21` for .20 and .21),
  "the attacker('s) IP / the C2", "internal addresses";
- disable: an account (a known user, "user X", "X's account", "all admin accounts" for any);
- delete / remove: a path or file name; persistence (cron, service, run key, task) for remove_persistence.

Anything else is not an action the judge can check ("patch log4j", "disable JNDI lookups", "rotate the
secrets", "close as a false positive"): the line reads as having none, and the judge neither requires
nor penalises an action from it. Spans joined by "or" or "/" are alternatives (one of them satisfies
a required line); "and", commas and sentences make separate requirements.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from pytest_soclab.judge.grounding import term_pattern
from pytest_soclab.models import ActionRef

# Verb forms of the action tools, as a key's author writes them (verbs only: the object decides).
_TOOL_VERBS: dict[str, str] = {
    "isolate_host": r"isolat\w*|quarantin\w*|contain(?!s\b|er)\w*|network[- ]contain\w*|cut off",
    "release_host": r"releas\w*|unisolat\w*|un-isolat\w*|reconnect\w*",
    "kill_process": r"kill(?!\s*-?\s*chain)\w*|terminat\w*",
    "suspend_process": r"suspend\w*",
    "block_ip": r"block\w*|blacklist\w*|deny-?list\w*|null[- ]rout\w*|sinkhol\w*",
    "disable_user": r"disabl\w*|deactivat\w*|lock\w* out|lock\w*",
    "delete_file": r"delet\w*|eras\w*|remov\w*|uninstall\w*|clean\w* up|eradicat\w*|purg\w*",
    "wipe_host": r"wip(?:e|es|ed|ing)\b|re-?imag\w*|rebuild\w*|re-?install\w*|format\w*",
}
# Remediation a key may name that no action tool performs: read, shown, never scored as an action.
_OTHER_VERBS = (
    r"patch\w*|upgrad\w*|updat(?:e|es|ed|ing)\b|rotat\w*|reset\w*|revok\w*|chang\w*|notify\w*|escalat\w*|monitor\w*|"
    r"review\w*|clos(?:e|es|ed|ing)\b|propos\w*|hunt\w*|enabl\w*|restor\w*|apply\w*|collect\w*|preserv\w*|"
    r"snapshot\w*|investigat\w*|report(?:s|ed|ing)?\b|document(?:s|ed|ing)?\b|tun(?:e|ed|ing)\b|"
    r"add(?:s|ed|ing)?\b|allow\w*|whitelist\w*|watch\w*|keep\w*|leave|retain\w*|imag(?:e|ed|ing)\b|acquir\w*|"
    r"captur\w*|inform\w*|raise\w*|"
    r"stop\w*|harden\w*|re-?enabl\w*|requir\w*|enforc\w*"
)
_VERBS = re.compile(
    "|".join(f"(?P<{t}>\\b(?:{v}))" for t, v in _TOOL_VERBS.items()) + rf"|(?P<other>\b(?:{_OTHER_VERBS}))",
    re.IGNORECASE,
)
_CONNECTOR = re.compile(r"^[\s/,]*(?:or|and|and/or|then|/)?[\s/,]*$", re.IGNORECASE)
_ALTERNATIVE = re.compile(r"(?:\bor\b|/)[\s(]*$", re.IGNORECASE)  # "kill pid 1 (or isolate"

_IPV4_NET = re.compile(r"(?<![\w.])((?:\d{1,3}\.){3}\d{1,3})(?:/(\d{1,3}))?(?![\w.]*\d)")
_PID = re.compile(r"\bpids?\s*[:=#]?\s*(\d+(?:\s*(?:,|and|or|/)\s*\d+)*)", re.IGNORECASE)
_PAREN_PID = re.compile(r"\((\d{2,7})\)")
_UNIX_PATH = re.compile(r"(?<![\w/])/(?:[\w.\-@]+/)*[\w.\-@*]+")
_WIN_PATH = re.compile(r"\b[A-Za-z]:\\[^\s,;\"'()]+|\bHK(?:LM|CU|U|CR|EY_[A-Z_]+)\\[^\s,;\"'()]+|"
                       r"(?<![\w\\])\\(?:[\w.\-]+\\)+[\w.\-]+")
_FILE_NAME = re.compile(
    r"(?<![\w\\/.-])[\w.\-]+\.(?:exe|dll|sys|ps1|psm1|bat|cmd|vbs|vbe|js|jse|hta|lnk|scr|msi|docm|xlsm|"
    r"pptm|doc|xls|iso|img|zip|rar|7z|sh|py|pl|php|jsp|jspx|aspx?|war|jar|elf|so|bin|dmp|tmp|service|timer)\b",
    re.IGNORECASE,
)
_HOSTLIKE = re.compile(r"\b[a-z][a-z0-9]*(?:-[a-z0-9]+)*-\d+\b", re.IGNORECASE)
_WINHOST = re.compile(r"(?<![\w.-])[A-Z][A-Z0-9]{1,14}(?:-[A-Z0-9]{1,14})*(?![\w-])")
_FQDN = re.compile(r"\b[a-z0-9][\w-]*(?:\.[a-z0-9][\w-]*)+\.(?:local|lan|corp|internal|intra|ad|home|example)\b", re.I)
_ACRONYMS = frozenset(
    """DC DNS SMB RDP VPN HTTP HTTPS LDAP LDAPS WINRM WMI DCOM SSH EDR XDR AV IP IPS IDS DMZ AD ADFS SAML SIEM SOC
    TLS SSL FTP SFTP NTLM KRBTGT LSASS SAM NTDS API URL CEO CFO HR IT NAS VM VMS USB OS PID GUID ACL GPO MFA
    SSO IOC IOCS TTP TTPS C2 ATT ALL ANY NOT AND THE ISP WAN LAN""".split()
)
_ACCOUNT = re.compile(r"\b(?:accounts?|users?|logins?|credentials?|principals?|identit(?:y|ies))\b", re.I)
_ACCOUNT_NAMED = re.compile(
    r"\b(?:user|account|login)\s+[\"'`]?([A-Za-z0-9_][\w.$\\@-]*)|"
    r"\b([A-Za-z0-9_][\w.$\\@-]*)['\u2019]s\s+(?:\w+\s+)?(?:account|credentials?|login|user)|"
    r"\b(?:the\s+)?[\"'`]?([A-Za-z0-9_][\w.$\\@-]*)[\"'`]?\s+(?:service\s+)?(?:account|user)\b",
    re.IGNORECASE,
)
_QUANTIFIED = re.compile(r"\b(?:all|every|any|each|mass|bulk|wholesale|other)\b", re.IGNORECASE)
_ROLE_HOSTS = re.compile(
    r"\b(?:compromised|infected|affected|implicated|victim|breached|impacted|attacker'?s?)\s+"
    r"(?:\w+\s+)?(?:hosts?|endpoints?|machines?|servers?|systems?|workstations?|foothold|devices?|boxes)\b|"
    r"\b(?:both|the two|these|the) (?:hosts|endpoints|machines|servers|systems)\b",
    re.IGNORECASE,
)
_ROLE_ATTACKER_IP = re.compile(
    r"\b(?:attacker|adversary|malicious|c2|c&c|command[- ]and[- ]control|source|scanner|scanning|"
    r"exfiltration|exfil|beacon)\w*'?s?\s*(?:\w+\s+)?(?:ips?|address(?:es)?|infrastructure|servers?|hosts?|"
    r"destinations?|endpoints?|nodes?)?\b|\bthe c2\b",
    re.IGNORECASE,
)
_ROLE_INTERNAL = re.compile(r"\binternal (?:ips?|address(?:es)?|ranges?|networks?|hosts?)\b", re.I)
_ROLE_SECURITY = re.compile(
    r"\bsecurity (?:agents?|tool\w*|software|sensors?|products?|services?|stack)\b|\bedr\b|\bxdr\b|"
    r"\banti-?virus\b|\bav (?:agents?|engine)\b|\bmonitoring agents?\b|\bsensors?\b|\blog(?:ging)? (?:agents?|shippers?)\b",
    re.IGNORECASE,
)
_ROLE_MALICIOUS = re.compile(
    r"\b(?:implant|malware|payload|reverse shell|beacon|backdoor|miner|dropper|rat|web ?shell|loader|"
    r"malicious process(?:es)?|attacker'?s? process(?:es)?)\b",
    re.IGNORECASE,
)
_PERSISTENCE = re.compile(
    r"\b(?:persistence|cron\w*|crontabs?|systemd|services?|units?|run ?keys?|autoruns?|scheduled tasks?|"
    r"tasks?|wmi (?:event )?subscriptions?|startup|authorized_keys|ssh keys?|launch ?(?:agents?|daemons?)|"
    r"rc\.local|profile|bashrc)\b",
    re.IGNORECASE,
)
_PERSISTENT_PATH = re.compile(
    r"cron|systemd|/etc/init|rc\.local|authorized_keys|\.bashrc|\.profile|launch(?:agents|daemons)|"
    r"\\run(?:once)?\\|\\services\\|\\tasks\\|start menu\\programs\\startup|\\winlogon\\",
    re.IGNORECASE,
)
_INTERNAL_GLOBS: tuple[str, ...] = ("10.*", "192.168.*", *(f"172.{n}.*" for n in range(16, 32)))
# Process names of common security and monitoring agents: general knowledge, no case in it.
SECURITY_PROCESSES: tuple[str, ...] = (
    "msmpeng*", "mssense*", "sensecncproxy*", "nissrv*", "mdatp*", "wdavdaemon*", "sysmon*", "winlogbeat*",
    "filebeat*", "auditbeat*", "packetbeat*", "metricbeat*", "elastic-agent*", "elastic-endpoint*",
    "endpoint-security*", "osqueryd*", "splunkd*", "splunk-*", "csfalcon*", "falcon-sensor*", "cbagent*",
    "sentinel*", "cylance*", "auditd*", "zeek*", "suricata*", "velociraptor*", "wazuh*", "ossec*", "nxlog*",
)
_WORD_TARGET = re.compile(r"^[A-Za-z0-9_][\w.\-]{1,40}$")
_FILLER = frozenset(
    """a an the of on in at from to its their his her this that these those any all every both each or and
    process processes service services binary binaries agent agents daemon daemons program programs host
    hosts server servers it them running legit legitimate benign""".split()
)


@dataclass(frozen=True)
class Vocabulary:
    """What a line's targets are recognised by: the estate's names and the answer key's roles."""

    hosts: tuple[str, ...] = ()
    users: tuple[str, ...] = ()
    processes: tuple[str, ...] = ()
    implicated_hosts: tuple[str, ...] = ()
    attacker_ips: tuple[str, ...] = ()  # the attacker IP and the IP IOCs
    compromised_users: tuple[str, ...] = ()
    malicious_processes: tuple[str, ...] = ()  # basenames of the answer's implant files


@dataclass(frozen=True)
class Reading:
    """One response line as the judge reads it."""

    line: str
    groups: tuple[tuple[ActionRef, ...], ...] = ()  # each group: alternatives, one of which satisfies
    untargeted: tuple[str, ...] = ()  # action verbs naming no target the judge recognises
    other: tuple[str, ...] = ()  # remediation outside the action tools ("patch", "rotate")
    soft: frozenset[int] = frozenset()  # groups with an alternative no tool performs: never required

    @property
    def refs(self) -> list[ActionRef]:
        return [r for g in self.groups for r in g]

    def required_groups(self) -> list[tuple[ActionRef, ...]]:
        return [g for i, g in enumerate(self.groups) if i not in self.soft]

    def explain(self) -> str:
        if self.groups:
            parts = [" or ".join(short_label(r) for r in g) + (" or (unchecked)" if i in self.soft else "")
                     for i, g in enumerate(self.groups)]
            out = "; ".join(parts)
        else:
            out = "no checkable action: neither required nor penalised"
        notes = []
        if self.untargeted:
            notes.append("no target for " + ", ".join(self.untargeted))
        if self.other:
            notes.append("not an action tool: " + ", ".join(self.other))
        return out + (f" ({'; '.join(notes)})" if notes else "")


def short_label(ref: ActionRef, most: int = 4) -> str:
    """`ref.label()` with long "any of" lists cut ("process=['msmpeng*', ... +27]")."""
    parts = []
    for k, v in ref.args.items():
        if isinstance(v, list) and len(v) > most:
            parts.append(f"{k}=[{', '.join(repr(x) for x in v[:most])}, ... +{len(v) - most}]")
        else:
            parts.append(f"{k}={v!r}")
    return f"{ref.tool}({', '.join(parts)})" if parts else ref.tool


@dataclass
class _Span:
    tool: str  # an action tool, or "other"
    verb: str
    start: int
    obj: str
    joined_or: bool = False  # joined to the previous span by "or" / "/"
    targets: list[dict[str, object]] = field(default_factory=list)


def _spans(line: str) -> list[_Span]:
    ms = list(_VERBS.finditer(line))
    spans: list[_Span] = []
    for i, m in enumerate(ms):
        end = ms[i + 1].start() if i + 1 < len(ms) else len(line)
        tool = next(k for k, v in m.groupdict().items() if v is not None)
        joined = bool(spans) and bool(_ALTERNATIVE.search(spans[-1].obj))
        spans.append(_Span(tool, m.group(0), m.start(), line[m.end(): end], joined_or=joined))
    # A verb with no object of its own shares the next one's ("kill or remove X").
    for i in range(len(spans) - 2, -1, -1):
        if _CONNECTOR.match(spans[i].obj):
            spans[i].obj = spans[i + 1].obj
            spans[i + 1].joined_or = spans[i + 1].joined_or or bool(re.search(r"\bor\b|/", line[
                spans[i].start + len(spans[i].verb): spans[i + 1].start], re.IGNORECASE))
    return spans


def _named(names: Iterable[str], text: str) -> list[str]:
    return [n for n in names if n and term_pattern(n).search(text)]


def _ips(text: str) -> list[str]:
    out: list[str] = []
    for m in _IPV4_NET.finditer(text):
        ip, suffix = m.group(1), m.group(2)
        try:
            ipaddress.ip_address(ip)
        except ValueError:
            continue
        last = int(ip.rsplit(".", 1)[1])
        if suffix is None:
            out.append(ip)
        elif last != 0 and int(suffix) <= 255:
            # The seed's shorthand: "198.51.100.20/21" for .20 and .21.
            out += [ip, ip.rsplit(".", 1)[0] + "." + suffix]
        else:
            octets = ip.split(".")[: max(1, min(3, int(suffix) // 8))]
            out.append(".".join(octets) + ".*")
    return out


def _pids(text: str) -> list[int]:
    out = [int(p) for m in _PID.finditer(text) for p in re.findall(r"\d+", m.group(1))]
    return out or [int(p) for p in _PAREN_PID.findall(text)]


def _paths(text: str) -> list[str]:
    out = _UNIX_PATH.findall(text) + _WIN_PATH.findall(text)
    out = [p.rstrip(".,;:)") for p in out]
    names = [f"*{n}" for n in _FILE_NAME.findall(text) if not any(n.lower() in p.lower() for p in out)]
    return out + names


def _process_names(obj: str, vocab: Vocabulary) -> list[str]:
    names = _FILE_NAME.findall(obj) + _named(vocab.processes, obj)
    if _ROLE_SECURITY.search(obj):
        names += list(SECURITY_PROCESSES)
    if _ROLE_MALICIOUS.search(obj):
        names += list(vocab.malicious_processes)
    # "mdatp / wdavdaemon": a bare list of names. After an article ("the scanner") only what looks
    # like an identifier (a digit, dash, dot or underscore) is a name rather than a noun.
    head = re.split(r"[(;:]| on | at | from | in ", obj, maxsplit=1)[0]
    words = [w for w in re.split(r"\s*(?:/|,|\bor\b|\band\b)\s*|\s+", head.strip()) if w]
    article = any(w.lower() in ("the", "a", "an", "any", "all", "every") for w in words)
    bare = [w for w in words if w.lower() not in _FILLER]
    if not _ROLE_SECURITY.search(head) and bare and all(_WORD_TARGET.match(w) for w in bare) \
            and not any(w.isdigit() for w in bare) and len(bare) <= 4:
        names += [w for w in bare if not _named(vocab.hosts, w) and not _HOSTLIKE.fullmatch(w)
                  and (not article or re.search(r"[\d_.-]", w))]
    for n in _named(SECURITY_PROCESSES, obj):  # named outright: "MsMpEng"
        names.append(n)
    for sec in SECURITY_PROCESSES:
        stem = sec.rstrip("*")
        if re.search(rf"(?<![\w-]){re.escape(stem)}", obj, re.IGNORECASE):
            names.append(sec)
    # "mdatp" and "mdatp*": the glob says it all.
    globbed = {n.lower().rstrip("*") for n in names if n.endswith("*")}
    names = [n for n in names if n.endswith("*") or n.lower() not in globbed]
    seen: set[str] = set()
    return [n for n in names if not (n.lower() in seen or seen.add(n.lower()))]


def _hosts(text: str, vocab: Vocabulary) -> list[str]:
    named = _named(vocab.hosts, text)
    named += [h for h in _HOSTLIKE.findall(text) if h.lower() not in {n.lower() for n in named}]
    # Windows names ("HR-WS02", "FILESRV") and FQDNs, when the estate's names are not known.
    named += [h for h in _WINHOST.findall(text) + _FQDN.findall(text)
              if h.upper() not in _ACRONYMS and h.lower() not in {n.lower() for n in named}
              and not any(h.lower() in n.lower() for n in named)]
    if not named and _ROLE_HOSTS.search(text):
        named = list(vocab.implicated_hosts)
    return named


def _users(obj: str, vocab: Vocabulary) -> list[str] | None:
    """Accounts the object names; [] for "all accounts" (any); None when it names none."""
    named = _named(vocab.users, obj)
    for m in _ACCOUNT_NAMED.finditer(obj):
        u = next(g for g in m.groups() if g)
        if u.lower() not in _FILLER and u.lower() not in {"admin", "domain", "service", "local", "privileged",
                                                            "compromised", "abused", "stolen", "affected"}:
            named.append(u)
    if named:
        return list(dict.fromkeys(named))
    if _ACCOUNT.search(obj):
        if re.search(r"\b(?:compromised|abused|stolen|affected|breached|attacker'?s?|used) ", obj, re.I) \
                and vocab.compromised_users:
            return list(vocab.compromised_users)
        if _QUANTIFIED.search(obj) or re.search(r"\b(?:admin|privileged|domain|service)\w* accounts\b", obj, re.I):
            return []
    return None


def _targets(span: _Span, line_before: str, vocab: Vocabulary) -> tuple[str, list[dict[str, object]]] | None:
    """(tool, target arg sets) for a tool span, or None when it names no target of its kind."""
    obj, tool = span.obj, span.tool
    if tool in ("isolate_host", "release_host", "wipe_host"):
        hosts = _hosts(obj, vocab)
        if hosts:
            return tool, [{"host": h} for h in hosts]
        if tool == "wipe_host" or _QUANTIFIED.search(obj):
            return tool, [{}]  # "wiping any host": wiping is penalised whatever the host
        return None
    if tool in ("kill_process", "suspend_process"):
        pids, names = _pids(obj), _process_names(obj, vocab)
        if not pids and not names:
            return None
        # The host: in the object, or the one the line puts it on ("the implant on web-01: kill pid 48213").
        hosts = _hosts(obj, vocab) or [h for h in _hosts(line_before, vocab)
                                       if re.search(rf"\b(?:on|from|at)\s+{re.escape(h)}", line_before, re.I)][-1:]
        base: dict[str, object] = {"host": hosts[0]} if len(hosts) == 1 else {"host": hosts} if hosts else {}
        if pids:
            return tool, [{**base, "pid": p} for p in pids]
        return tool, [{**base, "process": names}]
    if tool == "block_ip":
        ips = _ips(obj)
        if not ips and _ROLE_INTERNAL.search(obj):
            return tool, [{"ip": list(_INTERNAL_GLOBS)}]
        if not ips and _ROLE_ATTACKER_IP.search(obj):
            ips = list(vocab.attacker_ips)
        return (tool, [{"ip": ip} for ip in ips]) if ips else None
    if tool == "disable_user":
        users = _users(obj, vocab)
        if users is None:
            return None
        return tool, [{"user": u} for u in users] or [{}]
    if tool == "delete_file":
        paths = _paths(obj)
        if paths:
            # Each path its own action: a persistence location is removed, anything else deleted.
            return "", [{"tool": "remove_persistence" if _PERSISTENT_PATH.search(p) or _persistence_obj(obj, p)
                         else "delete_file", "path": p} for p in paths]
        if _PERSISTENCE.search(obj):
            m = re.search(r"\b([\w.-]+)['\u2019]?s? crontab|crontab (?:of|for) ([\w.-]+)", obj, re.I)
            return ("remove_persistence", [{"path": f"*crontabs/{m.group(1) or m.group(2)}"}]) if m else None
        names = _process_names(obj, vocab)
        # "remove mdatp": its files, wherever they are installed.
        return ("delete_file", [{"path": [f"*{n.rstrip('*')}*" for n in names]}]) if names else None
    return None


def _persistence_obj(obj: str, path: str) -> bool:
    """The words right before a path call it persistence ("the run key HKCU\\...", "the cron job /x")."""
    before = obj[: obj.find(path)] if path in obj else ""
    return bool(re.search(r"(?:persistence|cron\w*|service|unit|run ?key|task|autorun|startup)\W*(?:\w+\W*)?$",
                          before, re.IGNORECASE))


def read_line(line: str, vocab: Vocabulary) -> Reading:
    """How the judge reads one response line (see the module doc)."""
    groups: list[list[ActionRef]] = []
    soft: set[int] = set()  # groups with an alternative no tool performs ("patch it or isolate it")
    untargeted: list[str] = []
    other: list[str] = []
    last: list[list[ActionRef]] = []  # the groups of the previous span, when it was an action
    prev_other = False
    for span in _spans(line):
        if span.tool == "other":
            other.append(span.verb.lower())
            if span.joined_or and last:
                soft.update(range(len(groups) - len(last), len(groups)))
            last, prev_other = [], True
            continue
        got = _targets(span, line[: span.start], vocab)
        if got is None:
            untargeted.append(span.verb.lower())
            last, prev_other = [], False
            continue
        tool, arg_sets = got
        refs = [ActionRef(tool=str(a.pop("tool", tool)), args=a, description=line) for a in arg_sets]
        # Pids of one clause are one process tree: killing either stops it.
        mine = [refs] if tool in ("kill_process", "suspend_process") else [[r] for r in refs]
        if span.joined_or and last:
            merged = [r for g in last for r in g] + [r for g in mine for r in g]
            del groups[len(groups) - len(last):]
            mine = [merged]
        start = len(groups)
        groups.extend(mine)
        if span.joined_or and prev_other:
            soft.update(range(start, len(groups)))
        last, prev_other = mine, False
    seen: set[str] = set()
    uniq: list[tuple[ActionRef, ...]] = []
    soft_out: list[int] = []
    for i, g in enumerate(groups):
        g2 = tuple(r for r in g if r.label() not in seen)
        seen.update(r.label() for r in g2)
        if g2:
            if i in soft:
                soft_out.append(len(uniq))
            uniq.append(g2)
    return Reading(line, tuple(uniq), tuple(dict.fromkeys(untargeted)), tuple(dict.fromkeys(other)),
                   frozenset(soft_out))


def read_lines(lines: Sequence[str], vocab: Vocabulary) -> list[Reading]:
    return [read_line(line, vocab) for line in lines]
