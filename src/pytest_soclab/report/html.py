"""pytest-html: the scorecard in the summary (each item's extra is `report/html_item.py`).

Everything that came from an agent or a scenario file is escaped.
"""

from __future__ import annotations

from html import escape

from pytest_soclab.models import ModeSummary, ResultsFile
from pytest_soclab.models import DEFAULT_WEIGHTS
from pytest_soclab.report.cost import cost_html
from pytest_soclab.report.svg import badge, interval_bar

LEVEL_COLOURS = {"L0": "#c62828", "L1": "#ef6c00", "L2": "#1565c0", "L3": "#2e7d32"}

CSS = """
<style>
.soclab h3{margin:.6em 0 .3em} .soclab table{border-collapse:collapse;margin:.3em 0 1em}
.soclab td,.soclab th{border:1px solid #ddd;padding:3px 8px;text-align:left;font-size:13px}
.soclab .pass{color:#2e7d32;font-weight:bold} .soclab .fail{color:#c62828;font-weight:bold}
.soclab-modes{display:flex;gap:2em;flex-wrap:wrap} .soclab-mode{flex:1;min-width:420px}
</style>
"""


def _pf(ok: bool) -> str:
    return '<span class="pass">PASS</span>' if ok else '<span class="fail">FAIL</span>'


def _fmt(v: float | None, fmt: str = ".3g") -> str:
    return "n/a" if v is None else format(v, fmt)


def mode_html(mode: str, s: ModeSummary) -> str:
    lvl = s.level
    parts = [f'<div class="soclab-mode"><h3>{escape(mode)}</h3>']
    parts.append(badge("level", f"{lvl.id or '-'} {lvl.name}", LEVEL_COLOURS.get(lvl.id or "", "#757575")))
    if lvl.next:
        parts.append(
            f"<p>next: {escape(lvl.next['id'])} {escape(lvl.next['name'])}, failing "
            f"{escape(', '.join(lvl.next['failing_gates']))}</p>"
        )
    parts.append("<table><tr><th>gate</th><th>value</th><th>threshold</th><th></th></tr>")
    for name, g in s.gates.items():
        val = "not measured" if not g.measured else _fmt(g.value, ".4g")
        bound = "" if g.bound == "point" else f" ({escape(g.bound)} bound)"
        parts.append(
            f"<tr><td title=\"{escape(g.description)}\">{escape(name)}</td><td>{val}{bound}</td>"
            f"<td>{escape(g.op)} {g.threshold:g}</td><td>{_pf(g.passed)}</td></tr>"
        )
    fb = s.false_block
    rate = "n/a" if not fb.attempted else f"{fb.blocked}/{fb.attempted} = {fb.rate:.1%}"
    parts.append(
        f"<tr><td>false-block ceiling</td><td>{rate}</td><td>&lt;= {fb.ceiling:.0%}</td><td>{_pf(fb.ok)}</td></tr></table>"
    )
    ws = s.metrics["weighted_score"]
    if ws.value is not None:
        parts.append(
            f"<p>weighted family score <b>{ws.value:.3f}</b> [{_fmt(ws.lower)}, {_fmt(ws.upper)}] "
            f"{interval_bar(ws.value, ws.lower or 0, ws.upper or 0)}</p>"
        )
    parts.append("<table><tr><th>family</th><th>kind</th><th>weight</th><th>n</th><th>score</th><th>interval</th></tr>")
    for f in s.families:
        parts.append(
            f"<tr><td>{escape(f.name)}</td><td>{escape(f.kind)}</td><td>{f.weight:g}</td><td>{f.scenarios}</td>"
            f"<td>{f.score:.2f}</td><td>{interval_bar(f.score, f.lower, f.upper)}</td></tr>"
        )
    parts.append("</table>")
    parts.append(_weak_spots_html(s))
    dims = s.tasks.get("dimensions")
    if dims:
        parts.append("<table><tr><th>task dimension</th><th>mean points</th><th></th></tr>")
        for d, v in dims.items():
            frac = v / DEFAULT_WEIGHTS[d] if DEFAULT_WEIGHTS.get(d) else 0
            parts.append(f"<tr><td>{escape(d)}</td><td>{v:.1f}</td><td>{interval_bar(frac, frac, frac)}</td></tr>")
        parts.append("</table>")
    if s.judges is not None:
        j = s.judges
        kappa = "n/a" if j.kappa is None else f"{j.kappa:.3f}"
        parts.append(
            f"<p>judges {escape(j.first)} vs {escape(j.second)}: Cohen's kappa <b>{kappa}</b>, agreement "
            f"{j.agreement:.1%} over {j.checkpoints} checkpoints</p>"
        )
        if j.disagreements:
            parts.append("<table><tr><th>item</th><th>check</th><th>first</th><th>second</th><th>second's reason</th></tr>")
            for d in j.disagreements:
                parts.append(
                    f"<tr><td>{escape(d['item'])}</td><td>{escape(d['check'])}</td><td>{escape(d['first'])}</td>"
                    f"<td>{escape(d['second'])}</td><td>{escape(d['second_justification'])}</td></tr>"
                )
            parts.append("</table>")
    parts.append("</div>")
    return "".join(parts)


def _weak_spots_html(s: ModeSummary) -> str:
    """Where the agent is weak: each kind's best and worst family, tactics weakest first, the lowest tasks."""
    parts = []
    for kind, block in (("tasks", s.tasks), ("attacks", s.attacks), ("benign", s.benign)):
        sp = block.get("spread")
        if sp:
            parts.append(
                f"<p>{kind}: best family {escape(sp['best'])} {sp['best_score']:.2f}, worst "
                f"{escape(sp['worst'])} {sp['worst_score']:.2f} (gap <b>{sp['gap']:.2f}</b>)</p>"
            )
    tactics = s.tasks.get("by_tactic") or []
    if tactics:
        parts.append("<table><tr><th>ATT&amp;CK tactic</th><th>tasks</th><th>score</th><th></th></tr>")
        for t in tactics:
            v = t["score"]
            parts.append(f"<tr><td>{escape(t['tactic'])}</td><td>{t['scenarios']}</td><td>{v:.2f}</td>"
                         f"<td>{interval_bar(v, v, v)}</td></tr>")  # fmt: skip
        parts.append("</table>")
    weak = s.tasks.get("weakest") or []
    if weak:
        parts.append("<table><tr><th>weakest task</th><th>family</th><th>score</th><th>lost most in</th></tr>")
        for w in weak:
            parts.append(
                f"<tr><td>{escape(w['scenario_id'])}</td><td>{escape(w['family'])}</td><td>{w['score'] * 100:.1f}</td>"
                f"<td>{escape(w['dimension'])} {w['points']:.1f} of {w['of']:.1f}</td></tr>"
            )
        parts.append("</table>")
    return "".join(parts)


def scorecard_html(results: ResultsFile) -> str:
    col = results.collection
    head = (
        f"<p>agent <b>{escape(results.run.agent)}</b> · judge {escape(results.run.judge)} · backend "
        f"{escape(results.run.backend)} · {col.reported}/{col.expected} items reported"
        + (f" · <span class='fail'>{len(col.missing)} missing</span>" if col.missing else "")
        + (" · <span class='fail'>INCOMPLETE</span>" if not col.complete else "")
        + "</p>"
    )
    modes = "".join(mode_html(m, s) for m, s in results.modes.items())
    cmp = ""
    if results.comparison:
        c = results.comparison
        cmp = (
            "<h3>baseline vs protected</h3><p>attacks stopped by the guard: "
            f"{escape(', '.join(c['attacks_stopped_by_guard']) or 'none')}; regressed: "
            f"{escape(', '.join(c['regressed']) or 'none')}; exact McNemar p = {c['mcnemar_p']}</p>"
        )
    cmp += cost_html(results)
    return f'{CSS}<div class="soclab"><h2>soclab scorecard</h2>{head}<div class="soclab-modes">{modes}</div>{cmp}</div>'
