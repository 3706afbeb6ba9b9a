"""From a task's ground truth to what each checkpoint expects, when the checkpoint has no `expect`.

The answer key is turned into a catalog of terms (the attacker IP, implicated hosts, techniques, key
evidence strings, IOCs, and the artifacts named in the root cause, conclusion and correlation:
IPs, paths, hashes, domains, quoted commands). Each term keeps the words around it in the answer key
("brute force" next to the attacker IP, "implant" next to /tmp/.sysupdate), so that a checkpoint
written in prose finds its terms:

1. terms the checkpoint text names outright ("identified /tmp/.sysupdate ...");
2. terms whose value or answer-key context shares a word with the checkpoint ("the cron persistence"
   finds /etc/cron.d/sysupdate; "the brute force" finds the attacker IP);
3. terms the checkpoint asks for by kind ("the attacker IP", "the implicated hosts", "ATT&CK
   techniques", "IOCs", "root cause");
4. failing all that, the dimension's default (evidence_recall: the key evidence; correlation: hosts
   and attacker IP; conclusion_accuracy: root-cause artifacts and attacker IP).

Hosts or IPs the checkpoint names that are not in the answer key are taken as decoys to avoid
("scoped to web-01 and app-02 (db-01 is a decoy)").
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from pytest_soclab.judge.grounding import contains, term_pattern
from pytest_soclab.models import Checkpoint, Task
from pytest_soclab.models import attack_techniques

TermKind = Literal["evidence", "ip", "host", "ioc", "artifact", "technique", "keyword"]
_PRIORITY: dict[str, int] = {"evidence": 0, "ip": 1, "host": 2, "ioc": 3, "artifact": 4, "technique": 5, "keyword": 6}

_IPV4 = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w.]*\d)")
_PATH = re.compile(r"(?<![\w/:])(?:/[\w.\-]+)+/?|[A-Za-z]:\\[\w.\\\- ]+")
_HASH = re.compile(r"\b[a-fA-F0-9]{32}\b|\b[a-fA-F0-9]{40}\b|\b[a-fA-F0-9]{64}\b")
_DOMAIN = re.compile(r"\b(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+(?:com|net|org|io|ru|cn|xyz|top|info|biz|co|cc|"
                     r"me|tk|su|onion|local|lan|corp|internal)\b", re.IGNORECASE)
_QUOTED = re.compile(r"`([^`]{3,120})`|\"([^\"]{3,120})\"")
_CHECK_ITEM = re.compile(
    r"(?<![\w\\/.-])[\w.\-]+\.(?:exe|dll|sys|ps1|bat|cmd|vbs|js|hta|lnk|docm|xlsm|doc|xls|sh|py|php|jsp|aspx?|"
    r"jar|dmp|ldb|dit|evtx)\b|\b0x[0-9a-f]{4,}\b|(?<![\w/:])/(?:[\w.\-]+/)+[\w.\-]+|\b[A-Za-z]:\\[^\s,;\"'()]+",
    re.IGNORECASE,
)
_TECH = re.compile(r"\bT\d{4}(?:\.\d{3})?\b")
_WORD = re.compile(r"[a-z][a-z0-9]+")

# Words too common in rubric prose to tie a checkpoint to a term.
STOPWORDS: frozenset[str] = frozenset(
    """about above after again against agent alert alerts also among analysis another answer any attack
    attacker attackers been before being between both chain could data detected determined did does during
    each event events evidence fact find finding findings first found from full have host hosts identified
    identify into investigation itself just later linked links logs made many more most named naming noted
    only other over part process processes recognized report reported same server servers should show showed
    shows since some such than that their them then there these they this those through time under used user
    users using very were what when where which while with within without would correctly correct
    including included explains explained whole proper properly clear clearly single every""".split()
)
_KIND_RULES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\b(?:attacker|source|external|c2|adversary|malicious|remote|origin)\b[^.]*\bip\b|\bip(?:s| address)?\b",
                re.I), "ip"),
    (re.compile(r"\bhosts?\b|\blateral\b|\bpivot\w*|\bimplicated\b|\bscop\w*|\bblast radius\b|\bcompromised "
                r"(?:machines|systems|servers|hosts)\b", re.I), "host"),
    (re.compile(r"\bT\d{4}\b|\btechniques?\b|\bmitre\b|\batt&ck\b|\btactics?\b", re.I), "technique"),
    (re.compile(r"\biocs?\b|\bindicators?\b", re.I), "ioc"),
    (re.compile(r"\broot[- ]cause\b|\binitial (?:access|vector)\b|\bentry point\b", re.I), "artifact"),
]
_CONTEXT_WORDS = 5  # plain words either side of a term in the answer key that describe it
_ARTIFACT_TOKEN = re.compile(r"[\d/\\.\-_]")
_EXCLUDING = re.compile(r"\b(?:decoys?|not|benign|exclud\w*|red herrings?|framed|innocent|uninvolved|without|"
                        r"rather than|instead of|ruled out)\b", re.IGNORECASE)
_HOSTLIKE = re.compile(r"\b[a-z][a-z0-9]*(?:-[a-z0-9]+)*-\d+\b", re.IGNORECASE)


def stem(word: str) -> str:
    """A crude stem, enough to match "download" with "downloaded" and "persistence" with "persisted"."""
    w = word.lower()
    for suf in ("ations", "ation", "ences", "ence", "ings", "ing", "ed", "es", "s"):
        if len(w) - len(suf) >= 4 and w.endswith(suf):
            return w[: -len(suf)]
    return w


def content_words(text: str) -> set[str]:
    return {stem(w) for w in _WORD.findall(text.lower()) if len(w) >= 4 and w not in STOPWORDS}


@dataclass(frozen=True)
class Term:
    value: str
    kind: TermKind
    source: str = ""  # for evidence: the data stream it must come from
    context: frozenset[str] = field(default=frozenset(), compare=False)  # stems of the answer-key words around it


def _plain(words: list[str]) -> list[str]:
    # Other artifacts (paths, IPs, hosts) are not words that describe this term.
    return [w for w in words if not _ARTIFACT_TOKEN.search(w.strip("(),;:"))]


def _context(value: str, texts: Iterable[str]) -> frozenset[str]:
    words: set[str] = set()
    for text in texts:
        for m in term_pattern(value).finditer(text):
            before = _plain(text[: m.start()].split())[-_CONTEXT_WORDS:]
            after = _plain(text[m.end():].split())[:_CONTEXT_WORDS]
            words |= content_words(" ".join(before + after))
    return frozenset(words)


def extract_artifacts(text: str) -> list[str]:
    """IPs, paths, hashes, domains and quoted strings named in a piece of answer-key prose."""
    out: list[str] = []
    for rx in (_IPV4, _PATH, _HASH, _DOMAIN):
        out += [m.group(0).rstrip(".,") for m in rx.finditer(text)]
    for m in _QUOTED.finditer(text):
        out.append((m.group(1) or m.group(2)).strip())
    seen: set[str] = set()
    uniq = []
    for a in out:
        if len(a) > 2 and a.lower() not in seen:
            seen.add(a.lower())
            uniq.append(a)
    return uniq


@dataclass
class Catalog:
    """The answer key as terms."""

    terms: list[Term]
    root_artifacts: list[Term]  # terms named in the root cause (for conclusion checkpoints)

    def of(self, *kinds: str) -> list[Term]:
        return [t for t in self.terms if t.kind in kinds]

    def values(self) -> list[str]:
        return [t.value for t in self.terms if t.kind != "technique"]


def catalog(task: Task) -> Catalog:
    gt = task.ground_truth
    prose = [gt.root_cause, gt.conclusion, gt.correlation]
    raw: list[Term] = []
    for ev in gt.key_evidence:
        raw.append(Term(ev.must_find, "evidence", ev.source))
    if gt.attacker_ip:
        raw.append(Term(gt.attacker_ip, "ip"))
    raw += [Term(h, "host") for h in gt.implicated_hosts]
    raw += [Term(i, "ioc") for i in gt.iocs]
    for text in prose:
        raw += [Term(a, "artifact") for a in extract_artifacts(text)]
    raw += [Term(t, "technique") for t in gt.techniques]
    # One term per value (case-insensitive), keeping the strictest kind.
    best: dict[str, Term] = {}
    for t in raw:
        k = t.value.strip().lower()
        if not k:
            continue
        if k not in best or _PRIORITY[t.kind] < _PRIORITY[best[k].kind]:
            best[k] = t
    terms = [
        Term(t.value, t.kind, t.source, _context(t.value, prose + [ev.must_find for ev in gt.key_evidence]))
        for t in best.values()
    ]
    root = [t for t in terms if t.kind != "technique" and contains(gt.root_cause, t.value)]
    return Catalog(terms=terms, root_artifacts=root)


MAX_TIED = 3  # a checkpoint that names nothing is judged on at most this many answer-key items


def tied_terms(words: set[str], cat: Catalog, dim: str = "") -> list[Term]:
    """The answer-key items a checkpoint's words point to when it names none: items whose own value
    shares a word with it ("the miner" -> a miner path), else those whose answer-key context shares the
    most words with it, at most MAX_TIED. An evidence checkpoint points to evidence, not to hosts."""
    if not words:
        return []
    kinds = ("evidence", "ioc", "artifact") if dim == "evidence_recall" else ("evidence", "ip", "host", "ioc", "artifact")
    cands = [t for t in cat.terms if t.kind in kinds]
    by_value = [t for t in cands if words & content_words(re.sub(r"[/.\\_,-]", " ", t.value))]
    if by_value:
        return sorted(by_value, key=lambda t: _PRIORITY[t.kind])[:MAX_TIED]
    scored = sorted(((len(words & t.context), t) for t in cands), key=lambda x: (-x[0], _PRIORITY[x[1].kind]))
    best = scored[0][0] if scored else 0
    # A single shared word ties an item in only when nothing shares more.
    floor = 1 if best == 1 else 2
    return [t for n, t in scored if n >= floor][:MAX_TIED]


@dataclass
class Derived:
    terms: list[Term]
    forbid: list[str]
    how: str  # how the terms were found (for the justification)


def derive(cp: Checkpoint, cat: Catalog, known_hosts: Iterable[str] = ()) -> Derived:
    """The terms a checkpoint without `expect` is judged on (see the module doc for the order)."""
    check = cp.check
    named = [t for t in cat.terms if contains(check, t.value)]
    # Technique ids the rubric names but the ground truth lacks still count as expected.
    for tid in _TECH.findall(check):
        if tid in attack_techniques() and not any(t.value.lower() == tid.lower() for t in named):
            named.append(Term(tid, "technique"))
    # Concrete items the checkpoint names that the answer key lists nowhere ("WINWORD.EXE", "0x1fffff").
    for m in _CHECK_ITEM.finditer(check):
        v = m.group(0).rstrip(".,;:)")
        if not any(contains(t.value, v) or contains(v, t.value) for t in named + cat.terms):
            named.append(Term(v, "artifact"))
    # The words of the named terms themselves ("sysupdate" in /tmp/.sysupdate) tie nothing else in.
    rest = check
    for t in named:
        rest = term_pattern(t.value).sub(" ", rest)
    words = content_words(rest)

    kinds = {kind for rx, kind in _KIND_RULES if rx.search(check)}
    if named:
        # The checkpoint names its items: those, and (for evidence) the key evidence that quotes two of
        # its words ("the accepted password login for deploy" -> "Accepted password for deploy from ...").
        quoted = [t for t in cat.terms if t not in named and cp.dim == "evidence_recall" and t.kind == "evidence"
                  and len(words & content_words(re.sub(r"[/.\\_,-]", " ", t.value))) >= 2]
        # "... from the attacker IP": a kind asked for beside the named items.
        by_kind = [t for t in cat.of("ip") if "ip" in kinds and t not in named]
        terms: list[Term] = named + quoted + by_kind
        how = "named in the checkpoint" + (" (and its quoted evidence)" if quoted else "")
    else:
        # An explicit ask by kind ("the attacker IP", "the hosts", "ATT&CK techniques") first, then the
        # items the words point to, then the root cause's artifacts when that is what it asks for.
        strong = kinds - {"artifact"}
        terms, how = ([], "") if strong else (tied_terms(words, cat, cp.dim), "tied to the checkpoint's words")
        if not terms:
            how = ""
            for kind in sorted(kinds, key=lambda k: _PRIORITY[k]):
                if kind == "artifact":
                    add = cat.root_artifacts
                elif kind == "ip":
                    add = [t for t in cat.terms if t.kind == "ip" or (t.kind == "evidence" and _IPV4.fullmatch(t.value))]
                else:
                    add = cat.of(kind)
                terms += [t for t in add if t not in terms]
            if kinds:
                how = "asked for by kind"
    if not terms:
        if cp.dim == "evidence_recall":
            terms = cat.of("evidence") or cat.of("ioc", "artifact")
        elif cp.dim == "correlation":
            terms = cat.of("host", "ip") or [t for t in cat.terms if t.kind != "technique"]
        else:
            terms = cat.root_artifacts + [t for t in cat.of("ip") if t not in cat.root_artifacts]
            terms = terms or [t for t in cat.terms if t.kind != "technique"]
        how = f"the {cp.dim} default"
    if not terms:
        kw = sorted({w for w in _WORD.findall(check.lower()) if len(w) >= 5 and w not in STOPWORDS})
        terms = [Term(w, "keyword") for w in kw[:6]]
        how = "the checkpoint's own words (the answer key names nothing checkable)"
    truth = {t.value.lower() for t in cat.terms}
    forbid = [ip for ip in _IPV4.findall(check) if ip.lower() not in truth]
    forbid += [h for h in known_hosts if h and h.lower() not in truth and contains(check, h)]
    if _EXCLUDING.search(check):
        forbid += [h for h in _HOSTLIKE.findall(check) if h.lower() not in truth]
    return Derived(terms=terms, forbid=sorted(set(forbid)), how=how)
