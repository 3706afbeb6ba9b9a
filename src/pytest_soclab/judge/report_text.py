"""The agent's report as a grader reads it: sentences, what it names, and what it clears.

A name counts as an attribution only where the report does not clear it: "db-01 shows no sign of
compromise" names db-01 without implicating it, and a section headed "Ruled out" clears its list.
Structured findings are read field by field (each list element its own sentence).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass

from pytest_soclab.judge.grounding import contains, term_pattern
from pytest_soclab.models import AgentReport

_CLEARING = re.compile(
    r"\b(?:benign|legitimate|legit|false[- ]positives?|ruled[- ]out|rule[sd]? out|uninvolved|unrelated|"
    r"unaffected|clean|exonerated|excluded|decoys?|red herrings?|expected (?:behaviou?r|activity)|"
    r"not (?:involved|compromised|malicious|implicated|affected|related|suspicious|the (?:source|attacker))|"
    r"no (?:signs?|evidence|indications?|traces?) (?:of|that)|nothing (?:malicious|suspicious)|"
    # indicators a threat-intel sweep did not find
    r"matched nothing|no (?:match(?:es)?|hits?|sightings?)|(?:did not|didn't|never) match\w*|unmatched|"
    r"(?:(?:was|were) )?(?:never|not) (?:seen|appeared|observed) in (?:the|our|any) (?:telemetry|logs?|data|estate))\b",
    re.IGNORECASE,
)
# "not benign", "isn't legitimate", "no longer clean": the clearing word is negated.
_NEGATED = re.compile(r"\b(?:not|never|isn't|wasn't|aren't|weren't|no longer|hardly)\s+(?:a\s+|an\s+|the\s+)?$",
                      re.IGNORECASE)
_BULLET = re.compile(r"^(?:[-*+]\s|\d+[.)]\s|\|)")
_SPLIT = re.compile(r"(?<=[.!?;])\s+")
_HEADING = re.compile(r"^\s*(?:#{1,6}\s+.*|\*\*[^*]+\*\*:?\s*|[^|]*:\s*)$")
_IPV4 = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w.]*\d)(?!/\d)")
_PATH = re.compile(r"(?<![\w/:.\-~])(/(?:[^\s/\"'`|,;:()<>\[\]{}*]+/)*[^\s/\"'`|,;:()<>\[\]{}*]+)")
_WINPATH = re.compile(r"(?<![\w])([A-Za-z]:\\(?:[^\s\\\"'`|,;:()<>\[\]{}*]+\\)*[^\s\\\"'`|,;:()<>\[\]{}*]+)")
_ROOT_DIRS = frozenset({"bin", "boot", "dev", "etc", "home", "lib", "lib64", "media", "mnt", "opt", "proc", "root",
                        "run", "sbin", "srv", "sys", "tmp", "usr", "var"})
_BORING_IPS = {"0.0.0.0", "255.255.255.255"}
# Before a phrase in its clause: the phrase is denied, doubted or asked about, not asserted
# ("nothing suggests db-01 is compromised", "whether db-01 is compromised", "do not isolate dc-01").
_HEDGE = re.compile(
    r"(?:\b(?:not|no|never|nothing|none|neither|nor|without|whether|if|unless|unlikely|doubt\w*|rather than|"
    r"instead of|avoid\w*|refrain\w*|against)\b|n't)",
    re.IGNORECASE,
)
_CLAUSE_START = re.compile(r"[:;,(]|\b(?:but|and|while|whereas|although)\b", re.IGNORECASE)


def is_clearing(sentence: str) -> bool:
    for m in _CLEARING.finditer(sentence):
        if m.group(0).lower().startswith(("not ", "no ", "nothing")) or not _NEGATED.search(sentence[: m.start()]):
            return True
    return False


@dataclass(frozen=True)
class Sentence:
    text: str
    clearing: bool
    origin: str  # "markdown" or "findings.<field>"
    section: str = ""  # the heading the sentence sits under (lowercased)
    bare: bool = False  # a bare list of names under no heading that gives them a role: states nothing


# Labels and headings that give a list no role ("Entities: a, b, c"): its names are not findings.
_NEUTRAL_LABEL = re.compile(
    r"^\W*(?:the\s+)?(?:entit(?:y|ies)|observables?|observed|artifacts?|objects?|values?|strings?|names?|list|"
    r"data|items?|keywords?|terms?|misc\w*|notes?|other|seen|raw|dump|output|results?)\W*$",
    re.IGNORECASE,
)
_LABEL = re.compile(r"^\s*(?:[-*+]\s+|\d+[.)]\s+)?(?:\*\*)?([^:*]{1,40}?)(?:\*\*)?\s*:\s+(?=\S)")
_LIST_ITEM = re.compile(r"^[`'\"]?[^\s`'\"]+[`'\"]?$")


def is_bare(text: str, section: str) -> bool:
    """A bare list of names ("FIN-WS07, HQ-DC01, 203.0.113.77", "- jdoe") that neither the sentence nor
    its heading gives a role: naming things is not reporting them."""
    body = re.sub(r"^\s*(?:[-*+]\s+|\d+[.)]\s+)", "", text.strip()).rstrip(".")
    m = _LABEL.match(body)
    if m:
        if not _NEUTRAL_LABEL.match(m.group(1)):
            return False
        body = body[m.end():]
    elif section and not _NEUTRAL_LABEL.match(section):
        return False
    items = [x.strip() for x in re.split(r"[,;|]|\s+and\s+|\s+or\s+", body) if x.strip()]
    return bool(items) and all(_LIST_ITEM.match(x) for x in items)


def _markdown_sentences(md: str) -> list[Sentence]:
    out: list[Sentence] = []
    section_clears = False  # a heading that clears applies to its section
    in_list_intro = False
    section = ""
    for raw in md.splitlines():
        line = raw.strip()
        if not line:
            in_list_intro = False
            continue
        if line.startswith("#") or (_HEADING.match(line) and not _BULLET.match(line)):
            clears = is_clearing(line)
            if line.startswith("#"):
                section_clears = clears
                in_list_intro = False
                section = line.lstrip("#").strip().lower()
            else:
                in_list_intro = clears
            out.append(Sentence(line, clears, "markdown", section))
            continue
        inherited = section_clears or in_list_intro
        for part in _SPLIT.split(line):
            if part.strip():
                out.append(Sentence(part, inherited or is_clearing(part), "markdown", section,
                                    is_bare(part, section)))
    return out


def report_sentences(report: AgentReport) -> list[Sentence]:
    out = _markdown_sentences(report.markdown)
    f = report.findings
    if f is None:
        return out
    for part in _SPLIT.split(f.root_cause or ""):
        if part.strip():
            out.append(Sentence(part, is_clearing(part), "findings.root_cause"))
    for name in ("attacker_ips", "implicated_hosts", "techniques", "iocs"):
        for v in getattr(f, name):
            out.append(Sentence(str(v), False, f"findings.{name}"))
    for e in f.evidence:
        text = " ".join(x for x in (e.index, e.id, e.why) if x)
        out.append(Sentence(text, is_clearing(e.why), "findings.evidence"))
    for r in f.response:
        text = " ".join(x for x in (r.action, r.target, r.rationale) if x)
        out.append(Sentence(text, False, "findings.response"))
    return out


def _valid_ip(s: str) -> bool:
    try:
        ip = ipaddress.ip_address(s)
    except ValueError:
        return False
    return s not in _BORING_IPS and not ip.is_loopback


class ReportText:
    """The report's sentences with mention checks that honour clearing."""

    def __init__(self, report: AgentReport) -> None:
        self.report = report
        self.sentences = report_sentences(report)
        self._asserting = "\n".join(s.text for s in self.sentences if not s.clearing)
        self._stated = "\n".join(s.text for s in self.sentences if not s.clearing and not s.bare)
        self._all = "\n".join(s.text for s in self.sentences)

    @property
    def text(self) -> str:
        return self._all

    def mentions(self, term: str) -> bool:
        """Named where the report does not clear it."""
        return contains(self._asserting, term)

    def states(self, term: str) -> bool:
        """Named where the report does not clear it, outside bare lists of names."""
        return contains(self._stated, term)

    def mentions_anywhere(self, term: str) -> bool:
        return contains(self._all, term)

    def cleared(self, term: str) -> bool:
        """Named only in clearing sentences."""
        return self.mentions_anywhere(term) and not self.mentions(term)

    def asserts(self, phrase: str) -> bool:
        """The report states `phrase` (a wrong attribution, a decoy): outside clearing sentences, and not
        denied, doubted or asked about in its clause."""
        if not phrase.strip() or not self.mentions(phrase):
            return False
        pat = term_pattern(phrase)
        for s in self.sentences:
            if s.clearing:
                continue
            for m in pat.finditer(s.text):
                before = s.text[: m.start()]
                cut = max((x.end() for x in _CLAUSE_START.finditer(before)), default=0)
                if not _HEDGE.search(before[cut:]):
                    return True
        return False

    def search(self, pattern: re.Pattern[str]) -> list[str]:
        return [m.group(0) for m in pattern.finditer(self._asserting)]

    def ips(self) -> set[str]:
        return {m for m in _IPV4.findall(self._asserting) if _valid_ip(m)}

    def paths(self) -> set[str]:
        found = {p.rstrip(".") for p in _PATH.findall(self._asserting)}
        # A one-component "path" is a Windows command-line switch (`/Create`, `/fi`, `/node`) unless it
        # names a filesystem root directory.
        found = {p for p in found if "/" in p[1:] or p[1:].lower() in _ROOT_DIRS}
        found |= {p.rstrip(".") for p in _WINPATH.findall(self._asserting)}
        # Trailing sentence punctuation is not part of a path.
        return {p for p in found if len(p) > 1}

    def named(self, universe: Iterable[str]) -> set[str]:
        """The members of `universe` the report names (outside clearing sentences)."""
        return {u for u in universe if u.strip() and term_pattern(u).search(self._asserting)}
