"""The terminal summary section: a scorecard a security engineer reads without the docs.

One number format: shares and rates as percentages with one decimal ("4.3 %"), task scores and
dimension points with one decimal, counts as integers. Every interval says it is a 95 % (the
suite's confidence) interval and how it was computed. No line is wider than `WIDTH` columns.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pytest_soclab.models import DEFAULT_WEIGHTS, DIMENSIONS, ItemResult, Metric, ModeSummary, ResultsFile
from pytest_soclab.report.run_lines import run_lines

WIDTH = 100
DIFFICULTY = {"easy": 0, "medium": 1, "hard": 2, "capstone": 3}  # tasks are listed easiest first
KIND_LABEL = {"task": "tasks by difficulty", "attack": "attacks by family", "benign": "benign by family"}
# How each built-in metric reads; a metric of a project's own is shown as a plain number.
_POINTS = {"task_score_mean"}
_COUNTS = {"destructive_actions_executed", "critical_attacks_succeeded"}


def pct(v: float | None) -> str:
    return "n/a" if v is None else f"{v * 100:.1f} %"


def pts(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.1f}"


def _p(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.3g}"


def metric_value(metric: str, v: float | None) -> str:
    if v is None:
        return "n/a"
    if metric in _POINTS:
        return pts(v)
    if metric in _COUNTS:
        return f"{v:.0f}"
    if metric.endswith(("_rate", "pass_hat_k", "weighted_score")):
        return pct(v)
    return f"{v:g}"


def interval(lo: float | None, hi: float | None, method: str, *, points: bool = False, conf: float = 0.95) -> str:
    if lo is None or hi is None:
        return ""
    show = pts if points else pct
    return f", {conf * 100:g} % interval ({method}) {show(lo)} to {show(hi)}"


def wrap(head: str, parts: Iterable[str], sep: str = "  ", width: int = WIDTH) -> list[str]:
    """`head` then the parts joined by `sep`, continued under the first part past `width`."""
    out: list[str] = []
    line, fresh = head, True
    indent = " " * (len(head) if len(head) <= 40 else 8)
    for part in parts:
        # room for the part, and for the separator's comma should the line break after it
        if not fresh and len(line) + len(sep) + len(part) + len(sep.rstrip()) > width:
            out.append((line + sep).rstrip())
            line, fresh = indent, True
        line = line + part if fresh else line + sep + part
        fresh = False
    out.append(line.rstrip())
    return out


def fit(line: str, width: int = WIDTH) -> list[str]:
    """A line cut at its last comma (else space) before `width`, continued further indented."""
    out: list[str] = []
    indent = " " * (len(line) - len(line.lstrip()) + 4)
    while len(line) > width:
        cut = line.rfind(", ", 0, width - 1)
        cut = cut + 1 if cut > len(indent) else line.rfind(" ", 0, width)
        if cut <= len(indent):
            break  # one word wider than the terminal: leave it
        out.append(line[:cut].rstrip())
        line = indent + line[cut:].lstrip()
    return [*out, line]


def _ids(head: str, ids: list[str]) -> list[str]:
    return wrap(head, ids or ["none"], sep=", ")


def _rate(m: Metric, method: str, conf: float) -> str:
    if m.value is None:
        return "n/a"
    frac = f"{m.k}/{m.n} = " if m.k is not None and m.n is not None else ""
    return f"{frac}{pct(m.value)}" + interval(m.lower, m.upper, method, conf=conf)


def _dimension_maxima(items: list[ItemResult]) -> dict[str, float]:
    """The mean points each dimension is worth over the judged tasks (the task's weights)."""
    judged = [r for r in items if r.kind == "task" and r.checkpoints]
    if not judged:
        return {d: float(DEFAULT_WEIGHTS[d]) for d in DIMENSIONS}
    return {d: sum(sum(c.points for c in r.checkpoints if c.dim == d) for r in judged) / len(judged) for d in DIMENSIONS}


def _calls(n: int) -> str:
    return f"{n} call" + ("" if n == 1 else "s")


def _guard_lines(mode: str, s: ModeSummary, items: list[ItemResult]) -> list[str]:
    """What the guard stopped in this mode (protected), or would have stopped (baseline)."""
    attacks = [r for r in items if r.kind == "attack"]
    if mode == "protected":
        held = sorted({r.scenario_id for r in attacks if r.denied_calls and not r.attack_succeeded})
        return [f"  guard    on: denied {_calls(s.denied_calls)}", *_ids("    attacks it held: ", held)]
    missed = sorted({r.scenario_id for r in attacks if r.shadow_denials and r.attack_succeeded})
    return [f"  guard    off (decisions recorded only): would have denied {_calls(s.shadow_denials)}",
            *_ids("    attacks that got past it: ", missed)]  # fmt: skip


def _families(s: ModeSummary, kind: str) -> list[str]:
    fams = sorted((f for f in s.families if f.kind == kind), key=lambda f: (DIFFICULTY.get(f.name, 9), f.name))
    if not fams:
        return []
    parts = [f"{f.name} {pct(f.score)} (weight {f.weight:g})" for f in fams]
    return wrap(f"    {KIND_LABEL[kind]}  ", parts)


def _spread(block: dict[str, Any]) -> list[str]:
    sp = block.get("spread")
    if not sp:
        return []
    if sp["gap"] <= 0:
        return [f"    spread   every family {pct(sp['best_score'])}"]
    return [f"    spread   best {sp['best']} {pct(sp['best_score'])}, worst {sp['worst']} {pct(sp['worst_score'])}: "
            f"{sp['gap'] * 100:.1f} points apart"]


def _weak_spots(tasks: dict[str, Any]) -> list[str]:
    """Where the agent is weak: tactics weakest first, and the lowest tasks with what they lost."""
    tactics, weak = tasks.get("by_tactic") or [], tasks.get("weakest") or []
    out: list[str] = []
    if tactics:
        out += wrap("    by ATT&CK tactic  ", [f"{t['tactic']} {pct(t['score'])} (n {t['scenarios']})" for t in tactics])
    if weak:
        out += wrap("    weakest  ", [f"{w['scenario_id']} {w['score'] * 100:.1f} ({w['dimension']} "
                                      f"{pts(w['points'])} of {pts(w['of'])})" for w in weak], sep=", ")  # fmt: skip
    elif tactics:
        out.append("    weakest  none: every task at full marks")
    return out


def _gate_lines(s: ModeSummary) -> list[str]:
    out = ["  gates (PASS, FAIL, or n/a when this run did not measure the metric)"]
    for name, g in s.gates.items():
        value = metric_value(g.metric, g.value) if g.measured else "n/a"
        threshold = metric_value(g.metric, g.threshold)
        bound = "" if g.bound == "point" else f" ({g.bound} end)"
        verdict = ("PASS" if g.passed else "FAIL") if g.measured else f"n/a ({g.note or 'not measured'})"
        out.append(f"    {name:<20} {value:>9} {g.op:<2} {threshold + bound:<16} {verdict}".rstrip())
    return out


def _level_line(s: ModeSummary) -> str:
    lvl = s.level
    line = f"  LEVEL {lvl.id or '-'}: {lvl.name}"
    if lvl.capped:
        return line + f"   ({lvl.capped})"
    if not lvl.next:
        return line
    nxt = lvl.next
    failing = [g for g in nxt["failing_gates"] if g not in s.gates or s.gates[g].measured]
    unmeasured = [g for g in nxt["failing_gates"] if g in s.gates and not s.gates[g].measured]
    why = ([f"failing {', '.join(failing)}"] if failing else []) + (
        [f"not measured {', '.join(unmeasured)}"] if unmeasured else []
    )
    if nxt.get("min_repeats"):
        why.append(f"needs --count >= {nxt['min_repeats']}")
    return line + f"   (next {nxt['id']} {nxt['name']}: {'; '.join(why)})"


def mode_lines(mode: str, s: ModeSummary, items: list[ItemResult] | None = None, *, conf: float = 0.95) -> list[str]:
    items = items or []
    out = [f"[{mode}]"]
    c = s.counts
    t = c["task"]
    if t.scenarios:
        m = s.metrics["task_score_mean"]
        out.append(f"  tasks    {t.scenarios} scenarios, {t.passed}/{t.items} items passed"
                   + (f" ({t.error} errors)" if t.error else ""))  # fmt: skip
        out.append(f"    mean score {pts(m.value)} of 100" + interval(m.lower, m.upper, "bootstrap", points=True, conf=conf))
        out += _families(s, "task") + _spread(s.tasks) + _weak_spots(s.tasks)
        dims = s.tasks.get("dimensions", {})
        maxima = _dimension_maxima(items)
        out += wrap("    points of weight  ", [f"{d} {pts(dims.get(d, 0.0))} of {pts(maxima[d])}" for d in DIMENSIONS])
    a = c["attack"]
    if a.scenarios:
        out += wrap(f"  attacks  {a.scenarios} scenarios; ",
                    [f"attack success {_rate(s.metrics['attack_success_rate'], 'Wilson', conf)}"])  # fmt: skip
        out += _families(s, "attack") + _spread(s.attacks)
        if s.attacks["succeeded"]:
            out += _ids("    succeeded: ", s.attacks["succeeded"])
        if s.attacks["critical_succeeded"]:
            out += _ids("    critical succeeded: ", s.attacks["critical_succeeded"])
        if s.attacks.get("not_run"):
            out += _ids("    not run (left out of the rate, safety not measured): ", s.attacks["not_run"])
    b = c["benign"]
    if b.scenarios:
        out += wrap(f"  benign   {b.scenarios} scenarios; ", [f"handled {_rate(s.metrics['benign_pass_rate'], 'Wilson', conf)}"])
        out += _families(s, "benign") + _spread(s.benign)
    if a.scenarios or s.denied_calls or s.shadow_denials:
        out += _guard_lines(mode, s, items)
    ws = s.metrics["weighted_score"]
    out.append(f"  weighted family score {pct(ws.value)}" + interval(ws.lower, ws.upper, "bootstrap", conf=conf))
    fb = s.false_block
    rate = "n/a (no legitimate action attempted)" if not fb.attempted else f"{fb.blocked}/{fb.attempted} = {pct(fb.rate)}"
    out.append(f"  false blocks {rate} (ceiling {pct(fb.ceiling)}): {'ok' if fb.ok else 'OVER CEILING'}")
    pk = s.metrics.get("pass_hat_k")
    if pk and pk.value is not None:
        k = pk.k or 1
        what = (f"chance that all {k} repeats of a scenario pass" if k > 1
                else "one run each: only the pass rate; --count >= 2 measures consistency")  # fmt: skip
        out.append(f"  consistency pass^{k} {pct(pk.value)} ({what})")
    out += _gate_lines(s)
    if s.judges is not None:
        j = s.judges
        kappa = "n/a" if j.kappa is None else f"{j.kappa:.3f}"
        out.append(
            f"  judges {j.first} vs {j.second}: Cohen's kappa {kappa}, agreement {j.agreement:.1%} "
            f"over {j.checkpoints} checkpoints, {len(j.disagreements)} disagreements"
        )
        for d in j.disagreements[:10]:
            out.append(f"    {d['item']} [{d['dim']}] {d['check'][:40]}: {d['first']} vs {d['second']}")
    out += wrap("", [_level_line(s)])
    return out


def summary_lines(results: ResultsFile, *, confidence: float = 0.95) -> list[str]:
    col = results.collection
    head = (
        f"agent {results.run.agent} | judge {results.run.judge} | backend {results.run.backend} | "
        + (f"variant {results.run.variant} | " if results.run.variant else "")
        + f"{col.reported}/{col.expected} items reported"
    )
    if col.missing:
        head += f" ({len(col.missing)} missing, counted as failures)"
    if not col.complete:
        head += " | INCOMPLETE run"
    out = wrap("", [head])
    if col.rejected_files:  # a line of its own: it must not be cut
        n = len(col.rejected_files)
        out.append(f"{n} scenario file{'s' if n != 1 else ''} rejected (their collection errors are above)")
    for mode, s in results.modes.items():
        out += mode_lines(mode, s, [r for r in results.items if r.mode == mode], conf=confidence)
    if results.comparison:
        cmp = results.comparison
        out += _ids("[baseline vs protected] attacks stopped by the guard: ", cmp["attacks_stopped_by_guard"])
        out += _ids("  regressed (passed in baseline, failed protected): ", cmp["regressed"])
        out.append(f"  exact McNemar p = {_p(cmp['mcnemar_p'])} (passes, paired by scenario)")
    # The judges' line stays whole: tools read it as one line, and a model's name can be any length.
    return [part for line in out + run_lines(results) for part in ([line] if line.startswith("  judges ") else fit(line))]
