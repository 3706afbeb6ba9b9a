"""The rules judge: deterministic, grounded checkpoint verdicts (docs/judging.md explains the rules).

Per checkpoint:
- the expected items come from its `expect`, or are derived from the answer key (judge/derive.py);
- an item counts when the report names it (outside sentences that clear it) AND the agent's own tool
  results contained it (judge/grounding.py); for evidence_recall, key evidence must come back from its
  data stream; techniques and other abstract claims need the investigation to have retrieved
  supporting evidence at all;
- evidence, correlation and conclusion points are multiplied by the report's precision factor (how
  much it names outside the answer: keyword stuffing and pasted results collapse it), and each decoy
  named as implicated subtracts;
- conclusion points need the report to name one of the attack's entities (answer-key host, address
  or IOC) that the agent retrieved: a verdict about none of them scores 0;
- response_restraint: the required containment present (recommended or attempted), minus each
  over-reaction (recommended 25 %, attempted 25 %, executed 50 %, executed destructive 100 % of the
  checkpoint's points);
- awarded points never drop below 0; hit = all points, miss = none, partial otherwise.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from pytest_soclab.judge.derive import Catalog, Term, catalog, derive, extract_artifacts
from pytest_soclab.judge.grounding import Retrieved, contains, term_pattern
from pytest_soclab.judge.report_text import ReportText
from pytest_soclab.judge.response import (
    ACTION_VERBS,
    AnswerScope,
    OverReaction,
    ProcessNames,
    clause_around,
    executions,
    negated_before,
    over_reactions,
    recommendation,
)
from pytest_soclab.judge.plain import Vocabulary, read_lines
from pytest_soclab.models import ActionRef
from pytest_soclab.models import AgentReport
from pytest_soclab.models import CheckpointVerdict, Verdict
from pytest_soclab.models import Checkpoint, Expect, Task
from pytest_soclab.models import ToolCall
from pytest_soclab.models import attack_techniques
from pytest_soclab.models import ACTION_TOOLS

DECOY_PENALTY = 0.5  # fraction of a checkpoint's points lost per decoy named as implicated
SLACK_MIN = 3  # entities outside the answer a report may name for free, or as many as it names in it
_JUSTIFICATION_MAX = 400
_RESTRAINT_WORDS = re.compile(
    r"over-?react\w*|restraint|proportion\w*|\bdid not\b|\bdidn't\b|\bno (?:destructive|unnecessary|mass)\b|"
    r"\bavoid\w*|\bwithout\b|\bnot (?:wipe|isolate|block|disable|delete|kill)\w*|\brefrain\w*|\bexcess\w*|"
    r"\bunnecessary\b|\bcollateral\b|\bleft (?:alone|running|untouched|in place)\b|\buntouched\b|"
    r"\bnothing (?:was )?(?:wiped|deleted|destroyed|killed|blocked|disabled|isolated)\b",
    re.IGNORECASE,
)
_HOSTLIKE = re.compile(r"\b[a-z][a-z0-9]*(?:-[a-z0-9]+)*-\d+\b", re.IGNORECASE)
_TOKEN = re.compile(r"[\w./\\\-]{3,}")


@dataclass
class Precision:
    """How focused the report is: answer entities it names vs everything else it names."""

    matched: list[str] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)
    invented: int = 0  # of `wrong`, those in none of the agent's results (counted twice)
    factor: float = 1.0
    wrong_hosts: list[str] = field(default_factory=list)  # hosts named as involved that the answer does not implicate
    host_factor: float = 1.0

    def note(self) -> str:
        if self.factor >= 1.0:
            return ""
        if self.host_factor <= self.factor and self.host_factor < 1.0:
            eg = ", ".join(self.wrong_hosts[:4])
            return (f"precision x{self.factor:.2f}: names {len(self.wrong_hosts)} hosts the answer does not "
                    f"implicate (e.g. {eg})")
        eg = ", ".join(self.wrong[:4])
        invented = f", {self.invented} of them in none of its results" if self.invented else ""
        return (f"precision x{self.factor:.2f}: names {len(self.wrong)} hosts/IPs/paths outside the answer"
                f"{invented} (e.g. {eg}) against {len(self.matched)} in it")


def _same(named: str, truth: str) -> bool:
    return named.lower() == truth.lower() or contains(named, truth)


def _factor(wrong: int, matched: int) -> float:
    slack = max(SLACK_MIN, matched)
    return max(0.0, 1.0 - max(0, wrong - slack) / (2 * slack))


def precision(rt: ReportText, retrieved: Retrieved, cat: Catalog, known: str) -> Precision:
    """The report's precision factor.

    Named entities: hosts seen in the retrieval or the answer key, IPv4 addresses and file paths, where
    the report does not clear them. Those of the answer key (or more specific forms of them) match;
    those the trigger gave are neutral; the rest are wrong. slack = max(SLACK_MIN, matched) wrong ones
    are free (context a human grader accepts); each one beyond costs 1 / (2 x slack), so a report that
    names three times the slack outside the answer keeps nothing.

    Hosts are scored on their own as well (the scope is the claim a grader checks first): against the
    implicated hosts named, so that a report rich in paths and IPs cannot name every host of the estate
    for free. The factor is the lower of the two. A case that implicates no host skips the host count.
    """
    truth: set[str] = set()
    for v in cat.values():
        truth.add(v)
        truth.update(extract_artifacts(v))
    truth.update(retrieved.host_ips([t.value for t in cat.of("host")]))
    implicated = {t.value.lower() for t in cat.of("host")}
    universe = retrieved.hosts() | {t.value for t in cat.of("host")}
    hosts_named = rt.named(universe)
    named = hosts_named | rt.ips() | rt.paths()
    matched: set[str] = set()
    wrong: dict[str, str] = {}
    for e in sorted(named, key=str.lower):
        hits = [t for t in truth if _same(e, t)]
        if hits:
            matched.update(h.lower() for h in hits)
        elif any(contains(t, e) for t in truth) or contains(known, e):
            continue  # a prefix of an answer path, or given by the trigger: neutral
        else:
            wrong.setdefault(e.lower(), e)
    # Hosts are matched case-insensitively: a host and its IP both count once each. A name the
    # agent never retrieved is invented (another estate's, or made up): it counts twice.
    invented = sum(1 for e in wrong.values() if not retrieved.grounded(e))
    factor = _factor(len(wrong) + invented, len(matched))
    wrong_hosts: list[str] = []
    host_factor = 1.0
    if implicated:
        by_name = {h.lower(): h for h in hosts_named}
        wrong_hosts = sorted(h for k, h in by_name.items() if k not in implicated and not contains(known, h))
        host_factor = _factor(len(wrong_hosts), len(implicated & set(by_name)))
    return Precision(sorted(matched), sorted(wrong.values(), key=str.lower), invented, min(factor, host_factor),
                     wrong_hosts, host_factor)


@dataclass
class Context:
    task: Task
    report: AgentReport
    calls: list[ToolCall]
    rt: ReportText
    retrieved: Retrieved
    cat: Catalog
    known: str
    support: bool
    support_note: str
    precision: Precision
    required: list[ActionRef]
    penalized: list[ActionRef]
    required_groups: list[tuple[ActionRef, ...]]  # each satisfied by any of its refs
    over: list[OverReaction]
    link_to: list[str]  # answer-key entities a grounded term must co-occur with (Retrieved.linked)
    process_names: ProcessNames = field(default_factory=dict)  # (host, pid) -> names (Retrieved.process_names)
    attack_exact: frozenset[str] = frozenset()  # the attack's hosts, IPs and IOCs (lowercase): see attack_entity
    attack_texts: tuple[str, ...] = ()  # IOCs, key evidence and root-cause artifacts of an attack
    anchored: tuple[bool, str] = (True, "")  # the report names the incident's own entities (see anchor)


def supporting_retrieval(task: Task, retrieved: Retrieved, cat: Catalog | None = None) -> tuple[bool, str]:
    """Whether the investigation retrieved anything that supports the answer at all: a key evidence
    document, or (when the task lists none) an answer-key entity. Abstract claims (techniques, the
    response) need it."""
    gt = task.ground_truth
    if gt.key_evidence:
        found = [ev for ev in gt.key_evidence if retrieved.evidence(ev.source, ev.must_find)]
        return bool(found), f"{len(found)}/{len(gt.key_evidence)} key evidence documents retrieved"
    cat = cat or catalog(task)
    grounded = [t.value for t in cat.terms if t.kind not in ("technique", "keyword") and retrieved.grounded(t.value)]
    return bool(grounded), f"{len(grounded)} answer-key entities retrieved"


def trigger_text(task: Task) -> str:
    """What the agent was given: values in it are known to it before any retrieval."""
    return task.trigger.prompt + "\n" + json.dumps(task.trigger.pivot, default=str, sort_keys=True)


def build_context(task: Task, report: AgentReport, calls: Sequence[ToolCall]) -> Context:
    calls = sorted(calls, key=lambda c: c.seq)
    known = trigger_text(task)
    retrieved = Retrieved(calls, known)
    rt = ReportText(report)
    cat = catalog(task)
    support, note = supporting_retrieval(task, retrieved, cat)
    gt = task.ground_truth
    er = task.expected_response
    vocab = vocabulary(task, retrieved)
    if er.required_actions:
        groups = [(r,) for r in er.required_actions]
    else:
        groups = [g for reading in read_lines(er.required, vocab) for g in reading.required_groups()]
    required = [r for g in groups for r in g]
    penalized = list(er.penalized_actions) or [r for x in read_lines(er.over_reaction_penalty, vocab) for r in x.refs]
    truth_entities = cat.values() + sorted(retrieved.host_ips(t.value for t in cat.of("host")))
    scope = AnswerScope(tuple(truth_entities), "\n".join([gt.root_cause, gt.conclusion, gt.correlation, *gt.iocs]))
    names = retrieved.process_names()
    over = over_reactions(penalized, required, rt, calls, scope, retrieved.hosts(), names)
    exact, texts = attack_entities(task, retrieved)
    ctx = Context(
        task=task, report=report, calls=calls, rt=rt, retrieved=retrieved, cat=cat, known=known,
        support=support, support_note=note, precision=precision(rt, retrieved, cat, known),
        required=required, penalized=penalized, required_groups=groups, over=over, link_to=truth_entities, process_names=names,
        attack_exact=exact, attack_texts=texts,
    )
    ctx.anchored = anchor(ctx)
    return ctx


_ACCOUNT_IN_KEY = re.compile(
    r"\b(?:user|account|as)\s+[\"'`]?([A-Za-z0-9_][\w.$\\@-]*)|\b([A-Za-z0-9_][\w.$\\@-]*)['\u2019]s\s+"
    r"(?:\w+\s+)?(?:account|credentials?|password|hash|token|session)", re.IGNORECASE)
_FILE_IN_KEY = re.compile(r"[\w.\-]+\.(?:exe|dll|ps1|bat|vbs|js|hta|sh|py|elf|bin|jar)\b|(?<=/)[\w.\-]+$", re.I)


def vocabulary(task: Task, retrieved: Retrieved | None = None, hosts: Sequence[str] = (),
               users: Sequence[str] = (), processes: Sequence[str] = ()) -> Vocabulary:
    """What the plain-form response lines of `task` are read against: the estate's names (from the
    retrieval, or given: `soclab validate --explain` passes the case's) and the answer key's roles."""
    gt, er = task.ground_truth, task.expected_response
    cat = catalog(task)
    lines = er.required + er.over_reaction_penalty
    all_hosts = set(hosts) | {t.value for t in cat.of("host")} | {h for x in lines for h in _HOSTLIKE.findall(x)}
    all_users, all_procs = set(users), set(processes)
    if retrieved is not None:
        all_hosts |= retrieved.hosts()
        all_users |= retrieved.field_values("user.name")
        all_procs |= retrieved.field_values("process.name")
    prose = " ".join([gt.root_cause, gt.conclusion, gt.correlation])
    named = [next(g for g in m.groups() if g) for m in _ACCOUNT_IN_KEY.finditer(prose)]
    compromised = [u for u in named if u.lower() in {x.lower() for x in all_users}] or \
        [u for u in named if len(u) >= 3 and u.lower() not in ("the", "a", "an", "root")][:2]
    ips = [gt.attacker_ip] if gt.attacker_ip else []
    ips += [i for i in gt.iocs if re.fullmatch(r"(?:\d{1,3}\.){3}\d{1,3}", i) and i not in ips]
    files = [m.group(0) for i in gt.iocs for m in [_FILE_IN_KEY.search(i)] if m]
    return Vocabulary(
        hosts=tuple(sorted(h for h in all_hosts if h)), users=tuple(sorted(u for u in all_users if u)),
        processes=tuple(sorted(p for p in all_procs if p and len(p) >= 3)),
        implicated_hosts=tuple(gt.implicated_hosts), attacker_ips=tuple(ips),
        compromised_users=tuple(dict.fromkeys(compromised)), malicious_processes=tuple(dict.fromkeys(files)),
    )


def attack_entities(task: Task, retrieved: Retrieved) -> tuple[frozenset[str], tuple[str, ...]]:
    """What a report must not clear: the attacker IP, the implicated hosts and their IPs, the IOCs (by
    value), and the key evidence and root-cause artifacts (a term inside one of them). Nothing in a
    benign case (no attacker, no implicated host, no IOC): there the cleared entities are the finding."""
    gt = task.ground_truth
    if not (gt.attacker_ip or gt.implicated_hosts or gt.iocs):
        return frozenset(), ()
    exact = [gt.attacker_ip or "", *gt.implicated_hosts, *gt.iocs, *retrieved.host_ips(gt.implicated_hosts)]
    texts = [*gt.iocs, *(ev.must_find for ev in gt.key_evidence), *extract_artifacts(gt.root_cause)]
    return frozenset(x.strip().lower() for x in exact if x.strip()), tuple(texts)


_IPV4_FULL = re.compile(r"(?:\d{1,3}\.){3}\d{1,3}")


def attack_entity(term: str, ctx: Context) -> bool:
    """Whether naming `term` only as benign / ruled out is wrong. Hosts and IPs count by value (a decoy
    host is cleared rightly); other terms when they are part of the attack's evidence ("less" in
    `COMMAND=/usr/bin/less ...`)."""
    t = term.strip().lower()
    if t in ctx.attack_exact:
        return True
    if _HOSTLIKE.fullmatch(t) or _IPV4_FULL.fullmatch(t) or t in {h.lower() for h in ctx.retrieved.hosts()}:
        return False
    return any(contains(x, term) for x in ctx.attack_texts)


def reported(term: str, ctx: Context) -> tuple[bool, str]:
    """(named as a finding, why not). Clearing decides attribution: a sentence that clears an attack
    entity does not report it; naming the authorised scanner, a decoy or "a false positive" in one is
    exactly the finding."""
    if ctx.rt.mentions(term):
        if not ctx.rt.states(term):
            return False, f"{term} only in a bare list of names"
        return True, ""
    if ctx.rt.mentions_anywhere(term):
        if attack_entity(term, ctx):
            return False, f"{term} named only as benign/ruled out"
        return True, ""
    return False, f"{term} not in the report"


# --------------------------------------------------------------------------- term credit


def technique_credit(tid: str, rt: ReportText) -> float:
    """1 for the technique (by id, a more specific sub-technique, or its full name), 0.5 for its parent."""
    if rt.mentions(tid) or re.search(rf"(?<![\w]){re.escape(tid)}\.\d{{3}}\b", rt.text, re.IGNORECASE):
        return 1.0 if not rt.cleared(tid) else 0.0
    name = attack_techniques().get(tid, {}).get("name", "")
    if len(name.split()) >= 2 and rt.mentions(name):
        return 1.0
    parent = tid.split(".")[0]
    if parent != tid and re.search(rf"(?<![\w]){re.escape(parent)}(?![.\d])", rt.text):
        return 0.5
    return 0.0


def _paraphrase_credit(value: str, rt: ReportText) -> float:
    """Half credit when every distinctive token of a multi-token item is named, though not verbatim."""
    toks = [t for t in _TOKEN.findall(value) if not t.isdigit()]
    if len(toks) < 2:
        return 0.0
    return 0.5 if all(rt.mentions(t) for t in toks) else 0.0


def term_credit(term: Term, dim: str, ctx: Context) -> tuple[float, str]:
    """(credit 0..1, what is wrong or '') for one expected item."""
    v = term.value
    if term.kind in ("technique", "keyword"):
        got = technique_credit(v, ctx.rt) if term.kind == "technique" else float(ctx.rt.mentions(v))
        if got == 0:
            return 0.0, f"{v} not reported"
        if not ctx.support:
            return 0.0, f"{v} claimed without supporting retrieval"
        return got, "" if got == 1 else f"{v}: only the parent technique"
    if term.kind == "evidence" and dim == "evidence_recall":
        grounded = bool(ctx.retrieved.evidence(term.source, v))
        where = f" from {term.source}"
    else:
        grounded = ctx.retrieved.linked(v, ctx.link_to)
        where = ""
    named, why = reported(v, ctx)
    if named:
        credit = 1.0
    elif ctx.rt.cleared(v):
        return 0.0, why
    else:
        credit = _paraphrase_credit(v, ctx.rt)
    if not credit:
        return 0.0, f"{v}: " + (f"retrieved{where} but not reported" if grounded else "not found")
    if not grounded:
        if ctx.retrieved.grounded(v) and not where:
            return 0.0, f"{v}: reported, but retrieved only where nothing ties it to the attack"
        return 0.0, f"{v}: reported but never in the agent's retrieved results{where}"
    return credit, "" if credit == 1 else f"{v}: paraphrased"


# --------------------------------------------------------------------------- checkpoints


def _verdict(awarded: float, points: float) -> Verdict:
    if awarded >= points - 1e-9:
        return "hit"
    return "miss" if awarded <= 1e-9 else "partial"


def _clip(s: str) -> str:
    return s if len(s) <= _JUSTIFICATION_MAX else s[: _JUSTIFICATION_MAX - 1] + "…"


def _decoys(forbid: Sequence[str], ctx: Context) -> list[str]:
    return [f for f in forbid if f.strip() and ctx.rt.asserts(f)]


def anchor(ctx: Context) -> tuple[bool, str]:
    """Whether the report names one of the incident's own entities: an attack's host, address or
    indicator of the answer key, reported as a finding and in the agent's retrieved results. A
    verdict that names none of them is not about this incident (a memorised story told over
    another estate's names), however right its category. A benign case has none to name."""
    for x in sorted(ctx.attack_exact):
        if ctx.retrieved.grounded(x) and reported(x, ctx)[0]:
            return True, ""
    if not ctx.attack_exact:
        return True, ""
    return False, "names none of the incident's hosts, addresses or indicators it retrieved: verdict unanchored"


def _finish(cp: Checkpoint, i: int, fraction: float, notes: list[str], ctx: Context,
            forbid: Sequence[str] = (), apply_precision: bool = True) -> CheckpointVerdict:
    factor = ctx.precision.factor if apply_precision else 1.0
    if cp.dim == "conclusion_accuracy" and fraction > 0:
        anchored, why = ctx.anchored
        if not anchored:
            fraction = 0.0
            notes.insert(0, why)
    decoys = _decoys(forbid, ctx)
    penalty = DECOY_PENALTY * cp.points * len(decoys)
    awarded = max(0.0, cp.points * fraction * factor - penalty)
    if factor < 1.0 and fraction > 0:
        notes.append(ctx.precision.note())
    if decoys:
        notes.append(f"decoy named as implicated: {', '.join(decoys)} (-{penalty:g})")
    awarded = round(awarded, 4)
    return CheckpointVerdict(
        index=i, dim=cp.dim, points=cp.points, check=cp.check, verdict=_verdict(awarded, cp.points),
        awarded=awarded, justification=_clip("; ".join(n for n in notes if n)), judge="rules",
    )


def _judge_terms(cp: Checkpoint, i: int, ctx: Context) -> CheckpointVerdict:
    d = derive(cp, ctx.cat, ctx.retrieved.hosts())
    credits = [term_credit(t, cp.dim, ctx) for t in d.terms]
    fraction = sum(c for c, _ in credits) / len(credits)
    ok = [t.value for t, (c, _) in zip(d.terms, credits) if c == 1]
    problems = [n for _, n in credits if n]
    head = f"{len(ok)}/{len(d.terms)} expected items ({d.how}) reported and grounded"
    if ok:
        head += f": {', '.join(ok[:4])}"
    return _finish(cp, i, fraction, [head, *problems[:3]], ctx, d.forbid)


def _in_actions(term: str, ctx: Context) -> bool:
    pat = term_pattern(term)
    return any(pat.search(json.dumps(c.args, default=str)) for c in ctx.calls if c.tool in ACTION_TOOLS)


def _term_in_places(term: str, e: Expect, ctx: Context, grounded: bool | None = None) -> tuple[bool, str]:
    where = set(e.where)
    grounded = e.grounded if grounded is None else grounded
    if "report" in where:
        ok, why = reported(term, ctx)
        if not ok:
            return False, why
        if not grounded and not ctx.support:
            # Free of grounding is not free of investigating: the conclusion's words need evidence behind them.
            return False, f"{term} claimed without supporting retrieval"
        if grounded and not ctx.support and contains(ctx.known, term):
            # Known before any retrieval: reading the alert back proves nothing.
            return False, f"{term} given in the trigger; no supporting retrieval"
    if ("retrieved" in where or ("report" in where and grounded)) and not ctx.retrieved.grounded(term):
        return False, f"{term} not in the agent's retrieved results"
    if "actions" in where and not _in_actions(term, ctx):
        return False, f"{term} not in any action's arguments"
    return True, ""


def _claim(term: str, ctx: Context) -> tuple[bool, str]:
    """A conclusion word (`claims`): in the report (anywhere), never grounded, backed by supporting retrieval."""
    if not ctx.rt.mentions_anywhere(term):
        return False, f"{term} not in the report"
    if not ctx.support:
        return False, f"{term} claimed without supporting retrieval"
    return True, ""


def _pattern_in_places(pattern: str, e: Expect, ctx: Context) -> tuple[bool, str]:
    rx = re.compile(pattern, re.IGNORECASE)
    where = set(e.where)
    candidates: list[str] | None = None
    if "report" in where:
        candidates = ctx.rt.search(rx)
        if not candidates:
            return False, f"/{pattern}/ not in the report"
        if e.grounded:
            candidates = [c for c in candidates if ctx.retrieved.grounded(c)]
            if not candidates:
                return False, f"/{pattern}/ in the report but not in the retrieved results"
        elif not ctx.support:
            return False, f"/{pattern}/ claimed without supporting retrieval"
    if "retrieved" in where and not rx.search(ctx.retrieved.text()):
        return False, f"/{pattern}/ not in the retrieved results"
    if "actions" in where and not any(rx.search(json.dumps(c.args, default=str))
                                      for c in ctx.calls if c.tool in ACTION_TOOLS):
        return False, f"/{pattern}/ not in any action's arguments"
    return True, ""


def action_present(ref: ActionRef, ctx: Context, allow_recommended: bool) -> tuple[bool, str]:
    """(present, note): executed (attempted), or recommended when allowed."""
    ex = executions(ref, ctx.calls, ctx.process_names)
    if ex:
        return True, f"{ref.label()} taken (seq {ex[0].seq})"
    if allow_recommended and recommendation(ref, ctx.rt, ctx.process_names):
        return True, f"{ref.label()} recommended"
    return False, f"{ref.label()} neither " + ("recommended nor " if allow_recommended else "") + "taken"


def _expect_fraction(e: Expect, ctx: Context) -> tuple[float, int, list[str], list[str]]:
    """(fraction met, number of requirements, met notes, unmet notes)."""
    results: list[tuple[bool, str]] = []
    results += [_term_in_places(t, e, ctx) for t in e.terms]
    if e.any_terms:
        tries = [_term_in_places(t, e, ctx) for t in e.any_terms]
        results.append((True, "") if any(ok for ok, _ in tries)
                       else (False, f"none of {', '.join(e.any_terms)} ({tries[0][1]})"))
    results += [_claim(t, ctx) for t in e.claims]
    if e.any_claims:
        tries = [_claim(t, ctx) for t in e.any_claims]
        results.append((True, "") if any(ok for ok, _ in tries)
                       else (False, f"none of {', '.join(e.any_claims)} ({tries[0][1]})"))
    results += [_pattern_in_places(p, e, ctx) for p in e.patterns]
    results += [action_present(a, ctx, "report" in e.where) for a in e.actions]
    if not results:
        return 1.0, 0, [], []
    met = sum(1 for ok, _ in results if ok)
    return met / len(results), len(results), [n for ok, n in results if ok and n], [n for ok, n in results if not ok]


def _judge_expect(cp: Checkpoint, i: int, ctx: Context) -> CheckpointVerdict:
    e = cp.expect
    assert e is not None
    fraction, n, met, unmet = _expect_fraction(e, ctx)
    head = f"{round(fraction * n)}/{n} expectations met" if n else "no positive expectation"
    return _finish(cp, i, fraction, [head, *unmet[:3]], ctx, e.forbid,
                   apply_precision="report" in e.where)


_THEN_NONE = re.compile(r"^\s+(?:no|nothing|none|neither)\b", re.IGNORECASE)


def _asks_for(verb_re: str, check: str) -> bool:
    """The checkpoint names the action as done, not under negation ("no business-critical IP blocked",
    "did not block feed indicators", "blocked no business-critical address")."""
    for m in re.finditer(rf"\b(?:{verb_re})", check, re.IGNORECASE):
        lo, hi = clause_around(check, m.start(), m.end())
        before, after = check[lo:m.start()], check[m.end():hi]
        if not (negated_before(before) or _THEN_NONE.match(after)):
            return True
    return False


def related_refs(check: str, refs: Sequence[ActionRef]) -> list[ActionRef]:
    """The refs a checkpoint's text is about: it names their target or their action (not negated)."""
    out = []
    for r in refs:
        targets = [str(v) for k, v in r.args.items() if k in ("host", "ip", "user", "path") and isinstance(v, str)]
        if any(contains(check, t.replace("*", "")) for t in targets if t.replace("*", "")) or \
                _asks_for(ACTION_VERBS[r.tool], check):
            out.append(r)
    return out


def _group_present(group: Sequence[ActionRef], ctx: Context) -> tuple[bool, str]:
    """A required line's alternatives ("kill pid 48213 or isolate web-01"): one of them is enough."""
    tries = [action_present(r, ctx, True) for r in group]
    ok = [n for good, n in tries if good]
    return (True, ok[0]) if ok else (False, tries[0][1] if len(tries) == 1 else
                                     "none of " + " / ".join(r.label() for r in group))


def _judge_response(cp: Checkpoint, i: int, ctx: Context) -> CheckpointVerdict:
    notes: list[str] = []
    e = cp.expect
    if e is not None and (e.actions or e.terms or e.any_terms or e.patterns or e.claims or e.any_claims):
        base, n, met, unmet = _expect_fraction(e, ctx)
        notes.append(f"{round(base * n)}/{n} expected responses present")
        notes += (met + unmet)[:3]
    else:
        related_set = {r.label() for r in related_refs(cp.check, ctx.required)}
        related = [g for g in ctx.required_groups if any(r.label() in related_set for r in g)]
        restraint_only = bool(_RESTRAINT_WORDS.search(cp.check)) and not related
        groups = [] if restraint_only else (related or ctx.required_groups)
        if groups:
            results = [_group_present(g, ctx) for g in groups]
            base = sum(ok for ok, _ in results) / len(groups)
            notes.append(f"{sum(ok for ok, _ in results)}/{len(groups)} required responses present")
            notes += [n for ok, n in results if not ok][:2] + [n for ok, n in results if ok][:2]
        else:
            base = 1.0
            notes.append("restraint: no over-reaction expected" if restraint_only else "no required response")
    if not ctx.support:
        base = 0.0
        notes.insert(0, f"no supporting retrieval ({ctx.support_note}): response unfounded")
    cost = sum(o.weight for o in ctx.over)
    if ctx.over:
        notes.append("over-reactions: " + ", ".join(f"{o.key} {o.how} (-{o.weight * cp.points:g})"
                                                    for o in ctx.over[:4]))
    awarded = max(0.0, cp.points * (base - cost))
    forbid = cp.expect.forbid if cp.expect else []
    return _finish(cp, i, awarded / cp.points, notes, ctx, forbid, apply_precision=False)


class RulesJudge:
    """Deterministic, grounded: the default judge."""

    name = "rules"

    def judge(self, task: Task, report: AgentReport, calls: list[ToolCall]) -> list[CheckpointVerdict]:
        ctx = build_context(task, AgentReport.coerce(report), calls)
        out = []
        for i, cp in enumerate(task.scoring.checkpoints):
            if cp.dim == "response_restraint":
                out.append(_judge_response(cp, i, ctx))
            elif cp.expect is not None:
                out.append(_judge_expect(cp, i, ctx))
            else:
                out.append(_judge_terms(cp, i, ctx))
        return out
