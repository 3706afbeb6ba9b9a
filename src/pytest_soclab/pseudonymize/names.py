"""Pseudonyms of names: host names, user names, domains (label by label, keeping the public suffix).

Every name token maps to `p` + 9 base32 characters, a keyed HMAC of the token in lower
case: one function for host names, user names, e-mail local parts and domain labels,
so that `web-01` is the same pseudonym in `host.name`, in `web-01.corp.example.com`,
in a command line and in a task's answer key. A pseudonym depends on the key and the
token only, never on the order in which things were seen.

What counts as a name in free text is what was *learned* from typed fields (host.name,
user.name, dns.question.name, e-mail addresses...) and from unambiguous patterns (URLs,
e-mail addresses, home directories); see `KnownNames`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from collections.abc import Iterable
from functools import cache

from pytest_soclab.models import ecs_fields

PSEUDONYM_PREFIX = "p"
PSEUDONYM_CHARS = 9  # 45 bits: collisions stay unlikely (~1e-4) up to ~100k distinct names

# Accounts that exist on every system of their kind: not personal, and keeping them keeps
# "ran as root" or "logged on as SYSTEM" readable. Lower case.
WELL_KNOWN_ACCOUNTS: frozenset[str] = frozenset(
    """
    root system administrator administrators guest defaultaccount wdagutilityaccount krbtgt nobody
    nogroup daemon bin sys sync games man lp mail news uucp proxy www-data backup list irc gnats _apt
    messagebus syslog sshd ntp postfix polkitd tss uuidd tcpdump landscape pollinate lxd dnsmasq avahi
    colord rtkit chrony _chrony sssd nfsnobody operator halt shutdown adm ftp postgres mysql redis
    systemd-network systemd-resolve systemd-timesync systemd-coredump dwm-1 dwm-2 dwm-3 umfd-0 umfd-1
    umfd-2 anonymous everyone users git ec2-user ubuntu centos debian fedora vagrant azureuser opc
    bitnami localsystem localservice networkservice
    """.split()
) | frozenset(
    {
        "local system",
        "local service",
        "network service",
        "nt authority",
        "nt service",
        "builtin",
        "window manager",
        "font driver host",
        "anonymous logon",
        "authenticated users",
        "domain admins",
        "domain users",
        "enterprise admins",
        "schema admins",
        "nt authority\\system",
        "nt authority\\local service",
        "nt authority\\network service",
    }
)
# Protocol and transport names are never names to hide, whatever a user happens to be called.
PROTOCOL_WORDS: frozenset[str] = frozenset(
    """
    tcp udp icmp icmpv6 ipv4 ipv6 ip dns http https http2 tls ssl ssh smb smb2 smb3 rdp ftp sftp ftps
    smtp smtps imap imaps pop3 ldap ldaps kerberos krb5 ntp snmp dhcp dhcpv6 mdns llmnr netbios nbns
    nbss quic sip rpc dcerpc msrpc winrm wsman mysql postgresql redis mqtt telnet vnc tor socks socks5
    grpc ws wss file gre esp ah sctp igmp arp
    """.split()
)
# Words that appear in name fields without naming anything.
NON_NAMES: frozenset[str] = frozenset(
    {
        "localhost",
        "localdomain",
        "unknown",
        "none",
        "null",
        "nil",
        "n/a",
        "na",
        "undefined",
        "-",
        "--",
        "*",
        "true",
        "false",
        "default",
        "public",
        "all users",
        "default user",
        # PowerShell's host programs, which its events call HostName (ConsoleHost, ServerRemoteHost)
        "consolehost",
        "serverremotehost",
    }
)
# Special-use names (RFC 6761, RFC 8375, ICANN name collision list, common internal zones): kept as a suffix.
SPECIAL_USE_SUFFIXES: frozenset[str] = frozenset(
    {
        "local",
        "localhost",
        "localdomain",
        "internal",
        "intranet",
        "lan",
        "home",
        "corp",
        "private",
        "test",
        "example",
        "invalid",
        "onion",
        "arpa",
    }
)
# Documentation domains (RFC 2606): kept whole, like --keep-domain.
RESERVED_DOMAINS: frozenset[str] = frozenset({"example.com", "example.net", "example.org"})
# Last labels that make a dotted word a file name or code, not a domain, unless it is a known domain.
# Several are also TLDs (.sh, .py, .zip, .md, .pl, .rs, .so, .cat, .pub, .app, .run, .name...).
NOT_A_DOMAIN_ENDING: frozenset[str] = frozenset(
    """
    sh bash zsh ksh csh fish py pyc pyw pyz pl pm rb js mjs cjs ts tsx jsx php jsp asp aspx go rs java
    class jar war ear c h cc cpp cxx hpp cs vb fs swift kt scala lua r sql so dll exe sys drv ocx cpl
    scr msi msp msu lnk bat cmd ps1 psm1 psd1 ps1xml vbs vbe wsf wsh hta reg inf cat ini cfg conf config
    cnf properties json xml yml yaml toml txt log md rst csv tsv doc docx docm dot dotm xls xlsx xlsm
    xlam ppt pptx pptm pdf rtf odt ods odp zip rar tar gz tgz bz bz2 tbz xz txz zst 7z cab iso img vhd
    vhdx vmdk ova ovf qcow2 dmg pkg deb rpm apk ipa app bin dat db sqlite sqlite3 bak tmp temp old orig
    swp lock pid sock pem crt cer key pub der p7b p12 pfx csr kdbx jpg jpeg png gif bmp ico svg webp tif
    tiff mp3 mp4 mov avi mkv wav flac html htm xhtml css scss map woff woff2 ttf otf eot service timer
    socket mount target desktop plist run out ml am in ac ai ps eps dylib ko elf o a la lib obj pdb wasm
    eml msg ost pst evtx etl pcap pcapng cap dmp mdmp chm url website iqy slk one onepkg gadget xll wll
    vsto appx msix hlp jnlp crx xpi vsix nupkg gem whl egg pyd name email domain id
    """.split()
)
_ECS_EXTRA_ROOTS = frozenset(
    """
    zeek suricata winlog kibana system endpoint powershell sysmon aws azure gcp okta o365 m365
    crowdstrike panw fortinet cisco netflow auditd elastic signal logstash filebeat winlogbeat
    packetbeat auditbeat osquery github google_workspace microsoft sentinel_one ti_abusech ti_otx
    ti_misp network_traffic
    """.split()
)

_HEX_ID = re.compile(r"[0-9a-f]{16,}")
_ATTACK_ID = re.compile(r"(?:ta?\d{4}(?:\.\d{3})?)|(?:[sgmc]\d{4})")
_AWS_IP_HOST = re.compile(r"(?i)(ip-)(\d{1,3})-(\d{1,3})-(\d{1,3})-(\d{1,3})")
_SEP = re.compile(r"([-_])")
_DNS_NAME = re.compile(r"[\w-]+(?:\.[\w-]+)*")


@cache
def ecs_names() -> frozenset[str]:
    """ECS field names and the object paths above them (lower case): `host.name` is a field, not a domain."""
    out: set[str] = set()
    for name in ecs_fields():
        parts = name.lower().split(".")
        for i in range(1, len(parts) + 1):
            out.add(".".join(parts[:i]))
    return frozenset(out)


@cache
def ecs_roots() -> frozenset[str]:
    return frozenset(n.split(".", 1)[0] for n in ecs_names()) | _ECS_EXTRA_ROOTS


# Data streams and indices (logs-zeek.dns-default, .ds-..., .alerts-...): names of the store, kept.
_INDEX_PREFIXES = (
    "logs-",
    "metrics-",
    "traces-",
    "synthetics-",
    "profiling-",
    ".ds-",
    ".alerts-",
    ".internal.",
)


def looks_like_field_name(low: str) -> bool:
    if low.startswith(_INDEX_PREFIXES):
        return True
    for multi in (".keyword", ".text", ".caseless"):
        low = low.removesuffix(multi)
    return low in ecs_names() or low.split(".", 1)[0] in ecs_roots()


@cache
def _tld_extractor():  # type: ignore[no-untyped-def]
    """tldextract on its bundled Public Suffix List snapshot: never fetched, never cached on disk."""
    import tldextract

    return tldextract.TLDExtract(
        suffix_list_urls=(), cache_dir=None, fallback_to_snapshot=True, include_psl_private_domains=True
    )


def public_suffix(low: str) -> str:
    """The public suffix (ICANN or private section of the PSL) of a lower-case name, or ''."""
    return _tld_extractor()(low).suffix


def learnable(low: str) -> bool:
    """Whether a lower-case token may be learned as a name (and then replaced wherever it appears)."""
    if len(low) < 2 or low in WELL_KNOWN_ACCOUNTS or low in PROTOCOL_WORDS or low in NON_NAMES:
        return False
    if low.isdigit() or _HEX_ID.fullmatch(low) or _ATTACK_ID.fullmatch(low):
        return False
    if low[0] in "%$*~{[(<" or "*" in low or "%" in low:
        return False  # variables ($USER, %USERNAME%), globs
    return any(ch.isalnum() for ch in low)


class KnownNames:
    """The names learned so far: bare tokens (hosts, users, NetBIOS domains) and domains.

    Learning only ever adds; `generation` changes whenever something is added, so that
    memoized transformations can be dropped.
    """

    def __init__(self, keep: Iterable[str] = (), digest_key: bytes | None = None) -> None:
        self.keep = frozenset(k.lower() for k in keep)  # extra account names never learned
        # Names remembered from earlier runs, as keyed digests (see remember / probe).
        self._digest_key = digest_key
        self.remembered_bare: set[str] = set()
        self.remembered_domains: set[str] = set()
        self._probed: set[str] = set()
        self.bare: set[str] = set()
        self.domains: set[str] = set()
        # First atom (split on - and _) of every bare name: a cheap filter before sub-token search.
        self.first_atoms: set[str] = set()
        # user@host seen in text where host was not (yet) known: resolved by `finalize`.
        self.pending_pairs: set[tuple[str, str]] = set()
        self.generation = 0

    def add_bare(self, low: str) -> bool:
        if low in self.bare or low in self.keep or not learnable(low):
            return False
        self.bare.add(low)
        self.first_atoms.add(_SEP.split(low, 1)[0])
        self.generation += 1
        return True

    def add_domain(self, low: str) -> None:
        if low not in self.domains:
            self.domains.add(low)
            self.generation += 1

    def finalize(self) -> None:
        """Resolve user@host pairs whose host became known. Order-independent fixpoint."""
        changed = True
        while changed and self.pending_pairs:
            changed = False
            for local, host in list(self.pending_pairs):
                if host in self.bare or host in self.domains:
                    self.pending_pairs.discard((local, host))
                    changed |= self.add_bare(local)

    # ---------------------------------------------------------------- memory across runs

    def digest(self, low: str) -> str:
        if self._digest_key is None:
            raise ValueError("no digest key")
        return hmac.new(self._digest_key, low.encode("utf-8"), hashlib.sha256).hexdigest()[:32]

    @property
    def remembers(self) -> bool:
        return bool(self.remembered_bare or self.remembered_domains)

    def remember(self, bare_digests: Iterable[str], domain_digests: Iterable[str]) -> None:
        """Names learned by earlier runs (keyed digests: the names themselves are not stored)."""
        self.remembered_bare.update(bare_digests)
        self.remembered_domains.update(domain_digests)
        self._probed.clear()

    def probe(self, low: str) -> None:
        """Learn `low` if an earlier run learned it (a word of free text that is, in fact, a name)."""
        if low in self._probed or low in self.bare or low in self.domains:
            return
        if len(self._probed) > 2_000_000:
            self._probed.clear()
        self._probed.add(low)
        d = self.digest(low)
        if d in self.remembered_bare:
            self.add_bare(low)
        if d in self.remembered_domains:
            self.add_domain(low)

    def digests(self) -> tuple[list[str], list[str]]:
        """Everything known, as keyed digests: this run's names and the ones remembered."""
        bare = {self.digest(b) for b in self.bare} | self.remembered_bare
        domains = {self.digest(d) for d in self.domains} | self.remembered_domains
        return sorted(bare), sorted(domains)

    def update(self, other: KnownNames) -> None:
        for b in other.bare:
            self.add_bare(b)
        for d in other.domains:
            self.add_domain(d)
        self.pending_pairs |= other.pending_pairs


# stem (ending in a letter) + an optional separator + digits, e.g. web-01, node_3, srv12
_NUMBERED = re.compile(r"^(.*[a-z])([-_]?\d{1,6})$")
# Accounts a product names for itself plus an installation's hex: Azure AD Connect (MSOL_, AAD_),
# Exchange (HealthMailbox). The prefix says what the account is, which analysts read; the hex is
# the installation, re-keyed as hex of the same length.
_PRODUCT_ACCOUNT = re.compile(r"^(msol_|aad_|healthmailbox)([0-9a-f]{6,})$")


class Names:
    """Name pseudonyms (transform) and name learning, under one key."""

    def __init__(self, key: bytes, known: KnownNames | None = None, keep_domains: Iterable[str] = ()):
        self._key = key
        self.known = known if known is not None else KnownNames()
        kept = {d.lower().strip(".") for d in keep_domains} | RESERVED_DOMAINS
        # Longest first, so that a.b.example.com matches b.example.com before example.com.
        self._keep_domains = sorted(kept, key=lambda d: -d.count("."))
        self._pseudo: dict[str, str] = {}
        self._suffix: dict[str, int] = {}
        self.word_memo: dict[str, str] = {}
        self._gen = -1
        self.ip_hook = None  # set by the Pseudonymizer: text -> pseudonym text or None

    # ---------------------------------------------------------------- primitives

    def pseudonym(self, low: str) -> str:
        """The pseudonym of a lower-case token.

        A numbered name keeps its number: `web-01` and `web-02` become `<p>-01` and `<p>-02`
        with one stem pseudonym, so hosts of a series stay recognisable as siblings (a
        correlation analysts rely on), while the stem says nothing.
        """
        p = self._pseudo.get(low)
        if p is None:
            product = _PRODUCT_ACCOUNT.match(low)
            m = _NUMBERED.match(low)
            if product:
                digest = hmac.new(self._key, low.encode("utf-8"), hashlib.sha256).hexdigest()
                p = product.group(1) + digest[: len(product.group(2))]
            elif m:
                p = self.pseudonym(m.group(1)) + m.group(2)
            else:
                digest = hmac.new(self._key, low.encode("utf-8"), hashlib.sha256).digest()
                p = PSEUDONYM_PREFIX + base64.b32encode(digest).decode("ascii")[:PSEUDONYM_CHARS].lower()
            self._pseudo[low] = p
        return p

    def shaped(self, token: str) -> str:
        """The pseudonym of a token, upper case when the token is (NetBIOS, Windows host names)."""
        p = self.pseudonym(token.lower())
        return p.upper() if token.isupper() else p

    def suffix_labels(self, low: str) -> int:
        """How many trailing labels of a lower-case name are kept: public suffix, special-use, kept domain."""
        n = self._suffix.get(low)
        if n is None:
            n = self._suffix[low] = self._suffix_labels(low)
        return n

    def _suffix_labels(self, low: str) -> int:
        for kd in self._keep_domains:
            if low == kd or low.endswith("." + kd):
                return kd.count(".") + 1
        suffix = public_suffix(low)
        if suffix:
            return suffix.count(".") + 1
        labels = low.rsplit(".", 2)
        if low.endswith(".home.arpa") or low == "home.arpa":
            return 2
        if labels[-1] in SPECIAL_USE_SUFFIXES:
            return 1
        return 0

    def _kept_domain(self, low: str) -> bool:
        return any(low == kd or low.endswith("." + kd) for kd in self._keep_domains)

    def registrable(self, low: str) -> str | None:
        """The registrable part of a lower-case name (one label above its kept suffix), or None."""
        n = self.suffix_labels(low)
        labels = low.split(".")
        if n == 0 or len(labels) <= n:
            return None
        return ".".join(labels[-n - 1 :])

    def is_known_domain(self, low: str) -> bool:
        domains = self.known.domains
        if low in domains:
            return True
        i = low.find(".")
        while i != -1:
            rest = low[i + 1 :]
            if "." in rest and rest in domains:
                return True
            i = low.find(".", i + 1)
        return False

    def looks_like_domain(self, token: str, low: str) -> bool:
        """A dotted word that is a domain name by its form: a real suffix, lower (or upper) case, not a file."""
        last = low.rsplit(".", 1)[-1]
        if not (last.isalpha() or last.startswith("xn--")) or last in NOT_A_DOMAIN_ENDING:
            return False
        if token != low and token != token.upper():
            return False  # CamelCase: System.Net.WebClient, Microsoft.PowerShell.Management
        if looks_like_field_name(low):
            return False
        n = self.suffix_labels(low)
        return 0 < n < low.count(".") + 1

    def is_domain(self, token: str, low: str) -> bool:
        return self.is_known_domain(low) or self.looks_like_domain(token, low)

    # ---------------------------------------------------------------- transform

    def sync(self) -> None:
        """Drop memoized words when names were learned since they were computed."""
        if self._gen != self.known.generation:
            self.known.finalize()
            self.word_memo.clear()
            self._gen = self.known.generation

    def word(self, token: str) -> str:
        """A word of free text (letters, digits, _ and -, possibly dotted): its pseudonym or itself."""
        if self._gen != self.known.generation:
            self.sync()
        out = self.word_memo.get(token)
        if out is None:
            out = self._word(token)
            if len(self.word_memo) > 500_000:
                self.word_memo.clear()
            self.word_memo[token] = out
        return out

    def _word(self, token: str) -> str:
        if "." in token:
            return self._dotted(token)
        return self._bare(token)

    def _bare(self, token: str) -> str:
        aws = _AWS_IP_HOST.fullmatch(token)
        if aws:
            return self._aws_host(aws)
        low = token.lower()
        known = self.known
        if low in known.bare:
            return self.shaped(token)
        if ("-" in token or "_" in token) and not known.first_atoms.isdisjoint(_SEP.split(low)[::2]):
            return self._subtokens(token)
        return token

    def _subtokens(self, token: str) -> str:
        """Known names inside a longer word: web-01 in web-01-backup, alice in alice_notes."""
        parts = _SEP.split(token)  # word, sep, word, sep, ...
        words = parts[::2]
        bare = self.known.bare
        out: list[str] = []
        i = 0
        n = len(words)
        while i < n:
            for j in range(n, i, -1):
                cand = "".join(parts[2 * i : 2 * j - 1])
                if j - i < n and cand.lower() in bare:
                    out.append(self.shaped(cand))
                    break
            else:
                j = i + 1
                out.append(words[i])
            if j < n:
                out.append(parts[2 * j - 1])
            i = j
        return "".join(out)

    def _aws_host(self, m: re.Match[str]) -> str:
        octets = [int(x) for x in m.groups()[1:]]
        if any(o > 255 for o in octets) or self.ip_hook is None:
            return m.group(0)
        mapped = self.ip_hook(".".join(map(str, octets)))
        if mapped is None:
            return m.group(0)
        return m.group(1) + mapped.replace(".", "-")

    def _dotted(self, token: str) -> str:
        low = token.lower()
        if low in self.known.bare:  # a dotted user name: john.doe
            return self.shaped(token)
        if low.endswith((".in-addr.arpa", ".ip6.arpa")):
            ptr = self._ptr(low)
            if ptr is not None:
                return ptr
        labels = token.split(".")
        if self.is_domain(token, low):
            keep = self.suffix_labels(low)
            cut = len(labels) - keep
            return ".".join([self._label(lab) for lab in labels[:cut]] + labels[cut:])
        return ".".join(self._embedded_addresses(labels))

    def _embedded_addresses(self, labels: list[str]) -> list[str]:
        """The labels of a dotted word that is not a domain, with any IPv4 address in it
        (x.10.0.0.1, 10.0.0.1.log) replaced as an address and the other labels as words."""
        out: list[str] = []
        i = 0
        n = len(labels)
        while i < n:
            quad = labels[i : i + 4]
            # Exactly four numbers, as in the text scan: not part of a longer version (1.2.3.4.5, v1.2.3.4.5).
            if (
                self.ip_hook is not None
                and len(quad) == 4
                and all(q.isdigit() and len(q) <= 3 for q in quad)
                and not (i > 0 and labels[i - 1][-1:].isdigit())
                and not (i + 4 < n and labels[i + 4][:1].isdigit())
            ):
                mapped = self.ip_hook(".".join(quad))
                if mapped is not None:
                    out += mapped.split(".")
                    i += 4
                    continue
            out.append(self._bare(labels[i]))
            i += 1
        return out

    def _label(self, label: str) -> str:
        if label.startswith("_") or not label:
            return label  # service labels of SRV names: _ldap._tcp
        aws = _AWS_IP_HOST.fullmatch(label)
        if aws:
            return self._aws_host(aws)
        return self.shaped(label)

    def labels(self, token: str) -> str:
        """Every label of a name replaced (dns.question.subdomain: a name without its suffix)."""
        return ".".join(self._label(lab) for lab in token.split("."))

    def _ptr(self, low: str) -> str | None:
        """A reverse-DNS name (5.0.0.10.in-addr.arpa): the pseudonym of the address it names."""
        if self.ip_hook is None:
            return None
        if low.endswith(".in-addr.arpa"):
            octets = low[: -len(".in-addr.arpa")].split(".")
            if len(octets) != 4 or not all(o.isdigit() for o in octets):
                return None
            mapped = self.ip_hook(".".join(reversed(octets)))
            if mapped is None:
                return None
            return ".".join(reversed(mapped.split("."))) + ".in-addr.arpa"
        nibbles = low[: -len(".ip6.arpa")].split(".")
        if len(nibbles) != 32 or not all(len(n) == 1 and n in "0123456789abcdef" for n in nibbles):
            return None
        hexstr = "".join(reversed(nibbles))
        addr = ":".join(hexstr[i : i + 4] for i in range(0, 32, 4))
        mapped = self.ip_hook(addr)
        if mapped is None:
            return None
        import ipaddress

        full = ipaddress.IPv6Address(mapped).exploded.replace(":", "")
        return ".".join(reversed(full)) + ".ip6.arpa"

    # ---------------------------------------------------------------- learning

    def learn_bare(self, token: str) -> None:
        token = token.strip()
        if token and " " not in token:
            self.known.add_bare(token.lower())

    def learn_domain(self, name: str, host: bool = False) -> None:
        """A domain (or host) name from a typed field. With host=True its first label is a host name too."""
        low = name.strip().strip(".").lower()
        if not _DNS_NAME.fullmatch(low):
            return  # not a name (a URL, a distinguished name, a glob): text learning handles those
        if self.ip_hook is not None and self.ip_hook(low) is not None:
            return
        if "." not in low:
            self.known.add_bare(low)
            return
        if low.endswith(".arpa") and self._ptr(low) is not None:
            return
        self.known.add_domain(low)
        reg = self.registrable(low)
        if reg is not None:
            self.known.add_domain(reg)
            if host and reg != low:
                self.known.add_bare(low.split(".", 1)[0])
            if not public_suffix(low) and not self._kept_domain(low):
                # An internal zone (brewline.internal, acme.local): its name is the organisation's,
                # which prose names too ("Brewline customer records").
                self.known.add_bare(reg.split(".", 1)[0])
        elif host or self.suffix_labels(low) == 0:
            # No public suffix (srv01.acme): its first label is the host's short name.
            self.known.add_bare(low.split(".", 1)[0])

    def learn_user(self, value: str) -> None:
        """A user name from a typed field: alice, CORP\\alice, alice@corp.example, WS01$, John Smith."""
        v = value.strip()
        if not v or v.lower() in WELL_KNOWN_ACCOUNTS or v.lower() in self.known.keep:
            return
        if "\\" in v:
            dom, _, user = v.rpartition("\\")
            self.learn_domain(dom)
            self.learn_user(user)
            return
        if "@" in v:
            self.learn_email(v)
            return
        if v.endswith("$") and len(v) > 1:  # a computer account is its host name
            self.learn_domain(v[:-1], host=True)
            return
        if " " in v:
            self.learn_full_name(v)
            return
        self.known.add_bare(v.lower())

    def learn_email(self, value: str) -> None:
        local, at, domain = value.strip().strip("<>").rpartition("@")
        if not at:
            self.learn_user(value)
            return
        if local:
            self.known.add_bare(local.lower())
        if domain:
            self.learn_domain(domain)

    def learn_full_name(self, value: str) -> None:
        for part in re.split(r"[\s,]+", value.strip()):
            part = part.strip(".'\"()")
            if len(part) >= 2 and part.replace("-", "").replace("'", "").isalpha():
                self.known.add_bare(part.lower())

    def learn_pair(self, local: str, host: str) -> None:
        """user@host seen in text: the user is learned once the host is known (see KnownNames.finalize)."""
        local, host = local.lower(), host.lower()
        if not learnable(local):
            return
        if host in self.known.bare or host in self.known.domains:
            self.known.add_bare(local)
        else:
            self.known.pending_pairs.add((local, host))
