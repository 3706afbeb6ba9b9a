"""What the rules judge will look for in a task, before any run (`soclab validate --explain`).

Per checkpoint: the items it is judged on and how they were found (named in it, tied to its words,
asked for by kind, the dimension's default), or its `expect`. Per response line: the actions with
their targets the judge reads from it, or that it reads none (then the line is neither required nor
penalised).
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_soclab.judge.derive import catalog, derive
from pytest_soclab.judge.grounding import Retrieved
from pytest_soclab.judge.plain import read_line, short_label
from pytest_soclab.judge.rules import _RESTRAINT_WORDS, attack_entities, related_refs, vocabulary
from pytest_soclab.models import Expect, Task


def _expect_text(e: Expect) -> str:
    parts = []
    for name in ("terms", "any_terms", "claims", "any_claims", "patterns", "forbid"):
        vals = getattr(e, name)
        if vals:
            parts.append(f"{name}={', '.join(map(str, vals))}")
    if e.actions:
        parts.append("actions=" + ", ".join(short_label(a) for a in e.actions))
    return f"expect ({'/'.join(e.where)}{', grounded' if e.grounded else ''}): " + "; ".join(parts)


def explain_task(task: Task, hosts: Sequence[str] = (), users: Sequence[str] = (),
                 processes: Sequence[str] = ()) -> list[str]:
    """Lines describing what the judge checks, checkpoint by checkpoint and line by line."""
    cat = catalog(task)
    vocab = vocabulary(task, None, hosts, users, processes)
    er = task.expected_response
    out = [f"{task.id} ({task.source_case}): {task.title}"]
    required = list(er.required_actions) or [r for x in er.required for r in read_line(x, vocab).refs]
    # the verdict's anchors (rules.anchor); an implicated host's IPs, known from a retrieval, count too
    anchors = sorted(attack_entities(task, Retrieved([], ""))[0])
    for i, cp in enumerate(task.scoring.checkpoints):
        out.append(f"  checkpoint {i} [{cp.dim}, {cp.points:g}]: {cp.check}")
        if cp.expect is not None and cp.dim != "response_restraint":
            out.append(f"    -> {_expect_text(cp.expect)}")
        elif cp.dim == "response_restraint":
            if cp.expect is not None and (cp.expect.actions or cp.expect.terms or cp.expect.patterns):
                out.append(f"    -> {_expect_text(cp.expect)}; minus over-reactions")
                continue
            related = related_refs(cp.check, required)
            if _RESTRAINT_WORDS.search(cp.check) and not related:
                out.append("    -> restraint: full points minus each over-reaction (penalty lines, out-of-scope actions)")
            else:
                refs = related or required
                shown = ", ".join(short_label(r) for r in refs) or "nothing (no required action)"
                out.append(f"    -> required actions present: {shown}; minus over-reactions")
        else:
            d = derive(cp, cat, hosts)
            items = ", ".join(f"{t.value} ({t.kind}{', from ' + t.source if t.source else ''})" for t in d.terms)
            out.append(f"    -> {d.how}: {items}")
            if d.forbid:
                out.append(f"    -> decoys (named as implicated: -50 % each): {', '.join(d.forbid)}")
        if cp.dim == "conclusion_accuracy" and anchors:
            out.append(f"    -> only when the report names one of, as retrieved: {', '.join(anchors)}")
    for name, lines, machine in (("required", er.required, er.required_actions),
                                 ("over_reaction_penalty", er.over_reaction_penalty, er.penalized_actions)):
        if machine:
            out.append(f"  {name}: machine-checkable actions given, the lines are not read: "
                       + ", ".join(short_label(a) for a in machine))
            continue
        for line in lines:
            out.append(f"  {name}: {line}")
            out.append(f"    -> {read_line(line, vocab).explain()}")
    return out
