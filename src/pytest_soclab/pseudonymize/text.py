"""Free text: messages, command lines, process arguments, URLs, file paths, queries, reports.

Transforming text is token by token and local: an IP address, a MAC address, a SID,
a word or a dotted word is replaced by the same pseudonym wherever it stands, so a
string cut from a document at token boundaries (a task's `must_find`, an IOC)
pseudonymizes to a string found in the pseudonymized document.

Learning from text finds names that only their context reveals: URL hosts and user
info, e-mail addresses, user@host, home directories, UNC hosts, `user=` fields of
key-value logs, sshd and sudo messages, account commands (useradd, net user, runas).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from pytest_soclab.pseudonymize.encodings import MAYBE_ENCODED, decoded_segments, transform_encoded
from pytest_soclab.pseudonymize.identifiers import MacPseudonymizer, SidPseudonymizer
from pytest_soclab.pseudonymize.ip import IpPseudonymizer
from pytest_soclab.pseudonymize.names import Names

_OCT = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
_WORD = r"[\w](?:[\w-]*[\w])?"


def _master(dot: str, regex_mode: bool) -> re.Pattern[str]:
    ip4 = rf"{_OCT}(?:{dot}{_OCT}){{3}}"
    # "Not inside a word": in a regular expression, an escape like \b or \s before it does not count.
    nw = r"(?:(?<!\w)|(?<=\\[A-Za-z]))" if regex_mode else r"(?<!\w)"
    alts = []
    if regex_mode:
        alts.append(r"(?P<esc>\\[A-Za-z0-9])")  # \b \d \s \1 ...: regex syntax, not text
    alts += [
        (
            rf"(?P<mac>{nw}(?<!:)[0-9A-Fa-f]{{2}}(?P<macsep>[:-])(?:[0-9A-Fa-f]{{2}}(?P=macsep)){{4}}[0-9A-Fa-f]{{2}}"
            r"(?![\w:-]))"
        ),
        rf"(?P<sid>{nw}(?<!-)S-1-5-21-(?P<sidsub>\d+-\d+-\d+)(?![\d]))",
        (
            rf"(?P<ip6>{nw}(?<![:.%])(?:[0-9A-Fa-f]{{0,4}}:){{2,7}}(?:{ip4}|[0-9A-Fa-f]{{1,4}})?(?:%[\w.-]+)?"
            rf"(?![\w:]|{dot}\w))"
        ),
        rf"(?P<ip4>{nw}(?<!\d\.)(?P<ip4a>{ip4})(?:/(?P<plen>\d{{1,3}})(?!\d))?(?!\w|{dot}\d|{dot}in-addr{dot}arpa))",
    ]
    if regex_mode:
        # An address prefix before a digit class: 185\.220\.101\.\d+ (a /24 written as a regex).
        alts.append(rf"(?P<pre4>{nw}(?<!\.)(?:{_OCT}\\\.){{1,3}})(?=\\d|\[)")
    else:
        alts.append(rf"(?P<glob4>(?<![\w.])(?:{_OCT}\.){{1,3}}\*)")
    alts.append(rf"(?P<word>{_WORD}(?:{dot}{_WORD})*)")
    return re.compile("|".join(alts))


_TEXT = _master(r"\.", regex_mode=False)
_REGEX = _master(r"\\?\.", regex_mode=True)
# Speed: the scan above tries six alternatives at every token start. Text is first cut into runs
# of the characters tokens are made of; a run is scanned alone (its neighbours, separators, can
# satisfy none of the look-arounds, so the result is the same as scanning in place), and most runs
# are plain words that need no scan at all. Results are memoized per run.
_RUNS = re.compile(r"([\w.:%*-]+(?:/\d{1,3}(?![\w.:%*/-]))?)")  # with a CIDR suffix: 10.0.0.0/8
_PLAIN_WORD = re.compile(rf"{_WORD}(?:\.{_WORD})*")
_MAYBE_SPECIAL = re.compile(r"\d\.[\d*]|:[0-9A-Fa-f]{0,4}:|[0-9A-Fa-f]{2}[:-][0-9A-Fa-f]{2}[:-]|S-1-5-21-")
_SPECIAL_KINDS = ("mac", "sid", "ip6", "ip4", "glob4")
_NEEDS_DECODING = re.compile(r"%[0-9A-Fa-f]{2}|[A-Za-z0-9+/]{20}|\\")
_GLUED = re.compile(r"(?<=\\)(u[0-9A-Fa-f]{4}|x[0-9A-Fa-f]{2}|[nrtbfv0])([\w.-]+)")

# ---------------------------------------------------------------- learning patterns

_URL = re.compile(
    r"(?i)\b[a-z][a-z0-9+.-]{1,15}://(?:(?P<user>[^\s/?#@:\"'<>]+)(?::(?P<pw>[^\s/?#@\"'<>]*))?@)?"
    r"(?P<host>\[[0-9a-f:.]+\]|[^\s/?#:\"'<>\\|,;]+)"
)
_AT = re.compile(r"(?<![\w.+-])(?P<local>[\w.+-]*\w)@(?P<host>\w[\w-]*(?:\.[\w-]+)*)")
_HOME = re.compile(
    r"(?i)(?:/home/|/Users/|/var/mail/|/var/spool/mail/|/var/spool/cron/crontabs/|/var/spool/cron/"
    r"|[a-z]:[\\/]+(?:users|documents and settings)[\\/]+)(?P<user>[^\\/\s\"':;,|<>*?=]+)"
)
_UNC = re.compile(r"(?<![\\\w])\\\\(?P<host>[\w-]+(?:\.[\w-]+)*)\\")
_USER_SWITCH = re.compile(r"(?i)/user:\"?(?P<user>[\w.@\\$-]+)")
_ACCOUNT_CMD = re.compile(
    r"(?i)\b(?:useradd|adduser|usermod|userdel|deluser|chage)\b[^\n;|&]*?\s(?P<user>[a-z_][\w.-]*\$?)\s*(?:$|[;|&\n])"
    r"|\bnet1?(?:\.exe)?\s+(?:user|localgroup\s+\S+)\s+(?P<user2>[\w.$-]+)"
    r"|\bsudo\s+(?:-\S+\s+)*-u\s+(?P<user3>[\w.-]+)"
)
_KV_USER = re.compile(
    r"(?i)\b(?:user|username|user_name|account|acct|login|suser|duser|auid_name)=[\"']?(?P<user>[\w.@\\$-]+)"
)
_KV_HOST = re.compile(
    r"(?i)\b(?:host|hostname|computer|computername|workstation|dhost|shost)=[\"']?(?P<host>[\w.-]+)"
)


def _runs_on_in_prose(s: str, end: int) -> bool:
    """Whether a key's value goes on in words to the end of its line: `HostName=Windows PowerShell ISE
    Host` (PowerShell's host program) is prose, where `host=web-01 user=bob` goes on to another key."""
    rest = s[end : end + 200].split("\n", 1)[0].split("\r", 1)[0]
    return rest[:1] == " " and rest.strip() != "" and "=" not in rest


# sshd and PAM: "Accepted password for U from", "Invalid user U from", "session closed for user U".
# A bare "for X" must be followed by sshd's own words: prose ends in "for X" too (a Windows DLL's
# description, "Microsoft COM for Windows", is no account).
_SSHD = re.compile(
    r"\b(?:for (?:invalid user |illegal user )?(?P<user>[\w.$@-]+)(?: from| port)"
    r"|(?:[Ii]nvalid user |session (?:opened|closed) for user )(?P<user2>[\w.$@-]+)(?: from| by|\(| port|$))"
)
_SUDO = re.compile(r"^\s*(?P<user>[\w.-]+) : (?:TTY|PWD|USER|COMMAND)=")
# Commands whose user@host arguments are a user and a host (not an e-mail address, not a file@2x.png).
_SSH_FAMILY = re.compile(
    r"(?i)(?:^|[\s/\\\"'])(?:ssh|scp|sftp|rsync|ssh-copy-id|sshpass|plink|pscp|mosh)(?:\.exe)?\b"
)
_PROBE_WORDS = re.compile(r"\w(?:[\w.-]*\w)?")
# a one-letter hidden file name at the start of a run (`.k`, `.s.sql`): group 1 is `.k`
_HIDDEN = re.compile(r"(\.[^\W_])(?![\w-])")
_HIDDEN_WORDS = re.compile(r"(?<![\w.-])\.[^\W_](?![\w-])")
_SEP_SPLIT = re.compile(r"([-_])")
_NOT_HOME_USERS = frozenset({"public", "default", "default user", "all users", "shared", "defaultapppool"})


class TextPseudonymizer:
    def __init__(self, names: Names, ips: IpPseudonymizer, macs: MacPseudonymizer, sids: SidPseudonymizer):
        self.names = names
        self.ips = ips
        self.macs = macs
        self.sids = sids
        self.memo: dict[str, str] = {}
        self.run_memo: dict[str, str] = {}
        self._gen = -1
        self._learned: set[str] = set()
        self._sub_text: Callable[[re.Match[str]], str] = self._replace
        self._sub_regex: Callable[[re.Match[str]], str] = self._replace_regex

    # ---------------------------------------------------------------- transform

    def sync(self) -> None:
        """Drop memoized results when names were learned since they were computed."""
        known = self.names.known
        if self._gen != known.generation:
            known.finalize()
            self.names.sync()
            self.memo.clear()
            self.run_memo.clear()
            self._gen = known.generation

    def text(self, s: str) -> str:
        self.sync()
        out = self.memo.get(s)
        return self.transform(s) if out is None else out

    def ip_or_text(self, s: str) -> str:
        """The pseudonym of an address, else the text transformation of `s` (a field meant to hold one)."""
        out = self.ips.address(s)
        return out if out is not None else self.text(s)

    def transform(self, s: str) -> str:
        """The transformation of `s` with its encoded forms (percent-encoding, base64 text, backslash
        escapes glued to names: see encodings.py) read; memoized like `compute`."""
        if not _NEEDS_DECODING.search(s):
            return self.compute(s)
        out = transform_encoded(s, self._unglued, self.text)
        if out == s:
            out = s
        memo = self.memo
        if len(memo) > 300_000:
            memo.clear()
        memo[s] = out
        return out

    def compute(self, s: str) -> str:
        """The token-by-token transformation of `s`, memoized (call `sync` first when names may have
        been learned). Encoded forms are `transform`'s."""
        out = self._scan(s)
        memo = self.memo
        if len(memo) > 300_000:
            memo.clear()
        memo[s] = out
        return out

    def _scan(self, s: str) -> str:
        parts = _RUNS.split(s)
        if len(parts) == 1:
            return s
        run_memo = self.run_memo.get
        run = self._run
        parts[1::2] = [run_memo(r) or run(r) for r in parts[1::2]]
        out = "".join(parts)
        return s if out == s else out

    def _unglued(self, s: str) -> str:
        """`_scan`, where a backslash escape's letters glued to a name ("\\tjsmith", "\\u0022jsmith" in
        raw JSON) are cut from it when the word without them is a name and the word with them is not."""
        if "\\" not in s:
            return self._scan(s)
        cuts = [0]
        run_memo, run = self.run_memo.get, self._run
        for m in _GLUED.finditer(s):
            glued, word = m.group(1) + m.group(2), m.group(2)
            if (run_memo(glued) or run(glued)) == glued and (run_memo(word) or run(word)) != word:
                cuts.append(m.start(2))
        cuts.append(len(s))
        return "".join(self._scan(s[a:b]) for a, b in zip(cuts, cuts[1:]))

    def _run(self, r: str) -> str:
        if r[:1] == "." and (hidden := _HIDDEN.match(r)) and hidden.group(1).lower() in self.names.known.bare:
            # a one-letter hidden file learned with its dot (pseudonymize/artifacts.py): `.k`, `.s.sql.gz`
            out = "." + self.names.pseudonym(hidden.group(1).lower()) + r[hidden.end(1):]
        elif _PLAIN_WORD.fullmatch(r) and not _MAYBE_SPECIAL.search(r):
            out = self.names.word(r)
        else:
            out = _TEXT.sub(self._sub_text, r)
        memo = self.run_memo
        if len(memo) > 500_000:
            memo.clear()
        memo[r] = out
        return out

    def regex(self, pattern: str) -> str:
        """A regular expression (a checkpoint's `patterns`): names and addresses in it, escaped or not."""
        return _REGEX.sub(self._sub_regex, pattern)

    def _replace(self, m: re.Match[str]) -> str:
        if m.lastgroup == "word":
            return self.names.word(m.group(0))
        return self._special(m.group)

    def _special(self, group: Callable[[str], str | None]) -> str:
        """An address, MAC, SID or address glob, given its match's groups by name."""
        kind = next(k for k in _SPECIAL_KINDS if group(k) is not None)
        tok: str = group(kind)  # type: ignore[assignment]
        if kind == "ip4":
            plen = group("plen")
            addr: str = group("ip4a")  # type: ignore[assignment]
            if plen is not None:
                net = self.ips.network(addr, int(plen))
                if net is not None:
                    return net.rsplit("/", 1)[0] + "/" + plen  # the prefix as written (/08 stays /08)
                return (self.ips.address(addr) or addr) + "/" + plen
            return self.ips.address(tok) or tok
        if kind == "ip6":
            out = self.ips.address(tok)
            return out if out is not None else self._colon_parts(tok)
        if kind == "mac":
            return self.macs.mac(tok, group("macsep"))  # type: ignore[arg-type]
        if kind == "sid":
            return "S-1-5-21-" + self.sids.domain(group("sidsub"))  # type: ignore[arg-type]
        octets = [int(o) for o in tok[:-2].split(".")]  # glob4
        return self.ips.octet_glob(octets)

    def _colon_parts(self, tok: str) -> str:
        # Looked like IPv6 but is not (a time, a MAC-like id): its words may still be names.
        return ":".join(self.names.word(p) if p else p for p in tok.split(":"))

    def _replace_regex(self, m: re.Match[str]) -> str:
        kind = m.lastgroup
        if kind == "esc":
            return m.group(0)
        tok = m.group(0)
        if kind == "pre4":
            octets = [int(o) for o in tok.split("\\.") if o]
            return self.ips.octet_glob(octets)[:-1].replace(".", "\\.")
        plain = tok.replace("\\.", ".")
        if kind == "word":
            out = self.names.word(plain)
        elif kind in ("ip4", "ip6"):
            out = self.ips.address(plain) or (self._colon_parts(plain) if kind == "ip6" else plain)
        else:
            out = self._replace(m)
        if plain != tok:
            out = out.replace(".", "\\.")
        return out

    # ---------------------------------------------------------------- learning

    def forget_learned(self) -> None:
        self._learned.clear()

    def learn(self, s: str) -> None:
        """Learn the names that the text's own form reveals (see the module docstring)."""
        if s in self._learned or len(s) < 3:
            return
        if len(self._learned) > 300_000:
            self._learned.clear()
        self._learned.add(s)
        names = self.names
        if MAYBE_ENCODED.search(s):
            for d in decoded_segments(s):
                self.learn(d.text)  # what a URL-encoded query or an -enc payload names
        if "\\" in s:
            # "\t\tjsmith" in raw JSON: the escapes read as what they stand for.
            unescaped = re.sub(r"\\[nrtbfv0]", " ", s)
            if unescaped != s:
                self.learn(unescaped)
        if names.known.remembers:
            self._probe_words(s)
        if "://" in s:
            for m in _URL.finditer(s):
                host = m.group("host").strip("[]")
                if self.ips.address(host) is None:
                    names.learn_domain(host)
                if m.group("user"):
                    names.learn_user(m.group("user"))
                if m.group("pw"):
                    names.learn_bare(m.group("pw"))
        if "@" in s:
            ssh = _SSH_FAMILY.search(s) is not None
            for m in _AT.finditer(s):
                self._learn_at(m.group("local"), m.group("host"), ssh)
        if "/" in s or "\\" in s:
            for m in _HOME.finditer(s):
                user = m.group("user")
                if user.lower() not in _NOT_HOME_USERS:
                    names.learn_user(user)
            if "\\\\" in s:
                for m in _UNC.finditer(s):
                    names.learn_domain(m.group("host"), host=True)
            if "/user:" in s or "/USER:" in s or "/User:" in s:
                for m in _USER_SWITCH.finditer(s):
                    names.learn_user(m.group("user"))
        if "=" in s:
            for m in _KV_USER.finditer(s):
                names.learn_user(m.group("user"))
            for m in _KV_HOST.finditer(s):
                if self.ips.address(m.group("host")) is None and not _runs_on_in_prose(s, m.end()):
                    names.learn_domain(m.group("host"), host=True)
            m2 = _SUDO.match(s)
            if m2:
                names.learn_user(m2.group("user"))
        if "for " in s or "user " in s:
            for m in _SSHD.finditer(s):
                names.learn_user(m.group("user") or m.group("user2"))
        low = s.lower()
        if "user" in low or "sudo" in low or "net" in low or "chage" in low:
            for m in _ACCOUNT_CMD.finditer(s):
                user = m.group("user") or m.group("user2") or m.group("user3")
                if user:
                    names.learn_user(user)

    def _probe_words(self, s: str) -> None:
        """Words of the text that earlier runs learned as names (see KnownNames.probe)."""
        probe = self.names.known.probe
        if "." in s:
            for hidden in _HIDDEN_WORDS.findall(s.lower()):
                probe(hidden)
        for word in _PROBE_WORDS.findall(s.lower()):
            probe(word)
            if "." in word:
                labels = word.split(".")
                for i, label in enumerate(labels):
                    probe(label)
                    if 0 < i < len(labels) - 1:
                        probe(".".join(labels[i:]))
            if "-" in word or "_" in word:
                parts = _SEP_SPLIT.split(word.split(".", 1)[0])
                if len(parts) <= 13:  # words and separators: every run of whole parts
                    for a in range(0, len(parts), 2):
                        for b in range(a + 1, len(parts) + 1, 2):
                            probe("".join(parts[a:b]))

    def _learn_at(self, local: str, host: str, ssh: bool) -> None:
        names = self.names
        if ssh and ":" not in local:
            # ssh bob@db-02: a user and a host, whatever the host looks like.
            names.learn_user(local)
            if self.ips.address(host) is None:
                names.learn_domain(host, host=True)
            return
        if self.ips.address(host) is not None:
            names.learn_bare(local)
            return
        low = host.lower()
        if "." in low and names.is_domain(host, low):
            names.learn_bare(local)
            names.learn_domain(host)
        else:
            names.learn_pair(local, host)
