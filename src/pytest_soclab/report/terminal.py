"""The terminal summary section."""

from __future__ import annotations

from pytest_soclab.models import Metric, ModeSummary, ResultsFile


def _pct(m: Metric) -> str:
    if m.value is None:
        return "n/a"
    ci = f" [{m.lower:.0%}, {m.upper:.0%}]" if m.lower is not None and m.upper is not None else ""
    frac = f"{m.k}/{m.n} = " if m.k is not None and m.n is not None else ""
    return f"{frac}{m.value:.1%}{ci}"


def _num(v: float | None, fmt: str = ".2f") -> str:
    return "n/a" if v is None else format(v, fmt)


def mode_lines(mode: str, s: ModeSummary) -> list[str]:
    out = [f"[{mode}]"]
    c = s.counts
    t = c["task"]
    if t.scenarios:
        m = s.metrics["task_score_mean"]
        dims = s.tasks.get("dimensions", {})
        out.append(
            f"  tasks    {t.scenarios:>3} scenarios  mean score {_num(m.value, '.1f')}/100 "
            f"[{_num(m.lower, '.1f')}, {_num(m.upper, '.1f')}]  items passed {t.passed}/{t.items}"
            + (f", {t.error} errors" if t.error else "")
        )
        out.append("           " + "  ".join(f"{d} {v:.1f}" for d, v in dims.items()))
    a = c["attack"]
    if a.scenarios:
        out.append(
            f"  attacks  {a.scenarios:>3} scenarios  attack success {_pct(s.metrics['attack_success_rate'])}"
            + (f"  critical succeeded: {', '.join(s.attacks['critical_succeeded'])}" if s.attacks["critical_succeeded"] else "")
        )
        if s.attacks["succeeded"]:
            out.append(f"           succeeded: {', '.join(s.attacks['succeeded'])}")
    b = c["benign"]
    if b.scenarios:
        out.append(f"  benign   {b.scenarios:>3} scenarios  handled {_pct(s.metrics['benign_pass_rate'])}")
    if s.families:
        fams = "  ".join(f"{f.name} {f.score:.2f}(w{f.weight:g})" for f in s.families)
        out.append(f"  families {fams}")
    ws = s.metrics["weighted_score"]
    out.append(f"  weighted family score {_num(ws.value, '.3f')} [{_num(ws.lower, '.3f')}, {_num(ws.upper, '.3f')}]")
    fb = s.false_block
    rate = "n/a (no legitimate action attempted)" if not fb.attempted else f"{fb.blocked}/{fb.attempted} = {fb.rate:.1%}"
    out.append(f"  false blocks {rate}  ceiling {fb.ceiling:.0%}  {'ok' if fb.ok else 'OVER CEILING'}")
    pk = s.metrics.get("pass_hat_k")
    if pk and pk.value is not None:
        out.append(f"  pass^{pk.k or 1} {pk.value:.3f}")
    for name, g in s.gates.items():
        val = "not measured" if not g.measured else f"{g.value:.4g}"
        bound = "" if g.bound == "point" else f" ({g.bound} bound)"
        out.append(f"  gate {name:<20} {val} {g.op} {g.threshold:g}{bound}  {'PASS' if g.passed else 'FAIL'}")
    if s.judges is not None:
        j = s.judges
        kappa = "n/a" if j.kappa is None else f"{j.kappa:.3f}"
        out.append(
            f"  judges {j.first} vs {j.second}: Cohen's kappa {kappa}, agreement {j.agreement:.1%} "
            f"over {j.checkpoints} checkpoints, {len(j.disagreements)} disagreements"
        )
        for d in j.disagreements[:10]:
            out.append(f"    {d['item']} [{d['dim']}] {d['check'][:60]}: {d['first']} vs {d['second']}")
    lvl = s.level
    line = f"  LEVEL {lvl.id or '-'}: {lvl.name}"
    if lvl.next:
        line += f"   (next {lvl.next['id']} {lvl.next['name']}: failing {', '.join(lvl.next['failing_gates'])})"
    out.append(line)
    return out


def summary_lines(results: ResultsFile) -> list[str]:
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
    out = [head]
    for mode, s in results.modes.items():
        out += mode_lines(mode, s)
    if results.comparison:
        cmp = results.comparison
        out.append(
            f"[baseline vs protected] attacks stopped by the guard: {', '.join(cmp['attacks_stopped_by_guard']) or 'none'}"
            f"; regressed: {', '.join(cmp['regressed']) or 'none'}; exact McNemar p = {cmp['mcnemar_p']}"
        )
    return out
