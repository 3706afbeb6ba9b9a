"""Compare two results files: per-family and per-scenario differences with their significance.

Scenarios are paired by id within a mode. Family differences are paired mean
differences of scenario scores with a bootstrap interval and a sign-flip
permutation p-value; pass/fail changes get an exact McNemar test.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from pytest_soclab import stats
from pytest_soclab.errors import SoclabError
from pytest_soclab.models import ResultsFile
from pytest_soclab.scoring import ScenarioOutcome, reduce_repeats


def load_results(path: Path) -> ResultsFile:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise SoclabError(f"{path}: cannot read a results file: {exc}") from None
    if data.get("schema") != "pytest-soclab/results":
        raise SoclabError(f"{path}: not a pytest-soclab results file (no schema 'pytest-soclab/results')")
    try:
        return ResultsFile.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        raise SoclabError(
            f"{path}: invalid results file at {'.'.join(map(str, first['loc']))}: {first['msg']}"
        ) from None


def _outcomes(results: ResultsFile, mode: str) -> dict[str, ScenarioOutcome]:
    return {s.scenario_id: s for s in reduce_repeats([r for r in results.items if r.mode == mode])}


def compare(a: ResultsFile, b: ResultsFile, *, confidence: float = 0.95, seed: int = 0) -> dict[str, Any]:
    modes = [m for m in a.modes if m in b.modes]
    if not modes:
        raise SoclabError(f"no mode in common: A has {sorted(a.modes)}, B has {sorted(b.modes)}")
    out: dict[str, Any] = {"a": a.run.model_dump(), "b": b.run.model_dump(), "modes": {}}
    for mode in modes:
        oa, ob = _outcomes(a, mode), _outcomes(b, mode)
        common = sorted(set(oa) & set(ob))
        fams: list[dict[str, Any]] = []
        for kind, fam in sorted({(oa[s].kind, oa[s].family) for s in common}):
            ids = [s for s in common if oa[s].family == fam and oa[s].kind == kind]
            xa = [oa[s].score for s in ids]
            xb = [ob[s].score for s in ids]
            lo, hi = stats.bootstrap_diff_interval(xb, xa, confidence, 2000, seed)
            fams.append(
                {
                    "kind": kind,
                    "family": fam,
                    "n": len(ids),
                    "a": sum(xa) / len(xa),
                    "b": sum(xb) / len(xb),
                    "diff": (sum(xb) - sum(xa)) / len(ids),
                    "lower": lo,
                    "upper": hi,
                    "p": stats.paired_permutation_test(xb, xa, seed=seed),
                }
            )
        items = [
            {
                "scenario": s,
                "kind": oa[s].kind,
                "family": oa[s].family,
                "a": oa[s].score,
                "b": ob[s].score,
                "a_passed": oa[s].passed,
                "b_passed": ob[s].passed,
            }
            for s in common
        ]
        worse = sum(1 for i in items if i["a_passed"] and not i["b_passed"])
        better = sum(1 for i in items if not i["a_passed"] and i["b_passed"])
        sa, sb = a.modes[mode], b.modes[mode]
        out["modes"][mode] = {
            "paired": len(common),
            "only_in_a": sorted(set(oa) - set(ob)),
            "only_in_b": sorted(set(ob) - set(oa)),
            "level": {"a": sa.level.id, "b": sb.level.id},
            "weighted_score": {"a": sa.metrics["weighted_score"].value, "b": sb.metrics["weighted_score"].value},
            "passes": {"regressed": worse, "improved": better, "mcnemar_p": stats.mcnemar_exact(worse, better)},
            "families": fams,
            "items": items,
        }
    return out


def _sig(p: float, alpha: float = 0.05) -> str:
    return "*" if p < alpha else ""


def render_text(cmp: dict[str, Any]) -> str:
    lines = [f"A: agent {cmp['a']['agent']} ({', '.join(cmp['a']['modes'])})   B: agent {cmp['b']['agent']} ({', '.join(cmp['b']['modes'])})"]
    for mode, m in cmp["modes"].items():
        ws = m["weighted_score"]
        lines.append(
            f"[{mode}] level {m['level']['a']} -> {m['level']['b']}; weighted score {_f(ws['a'])} -> {_f(ws['b'])}; "
            f"{m['paired']} paired scenarios; passes: {m['passes']['improved']} improved, "
            f"{m['passes']['regressed']} regressed (exact McNemar p = {m['passes']['mcnemar_p']:.3g})"
        )
        lines.append(f"  {'family':<22}{'kind':<8}{'n':>3}  {'A':>6}  {'B':>6}  {'B-A':>7}  {'95% interval':>17}  {'p':>6}")
        for f in m["families"]:
            lines.append(
                f"  {f['family']:<22}{f['kind']:<8}{f['n']:>3}  {f['a']:6.3f}  {f['b']:6.3f}  {f['diff']:+7.3f}  "
                f"[{f['lower']:+.3f}, {f['upper']:+.3f}]  {f['p']:6.3f}{_sig(f['p'])}"
            )
        changed = [i for i in m["items"] if abs(i["a"] - i["b"]) > 1e-9 or i["a_passed"] != i["b_passed"]]
        if changed:
            lines.append(f"  {'scenario':<22}{'A':>6}  {'B':>6}  pass")
            for i in changed:
                lines.append(
                    f"  {i['scenario']:<22}{i['a']:6.3f}  {i['b']:6.3f}  {_pass(i['a_passed'])} -> {_pass(i['b_passed'])}"
                )
        for side in ("a", "b"):
            only = m[f"only_in_{side}"]
            if only:
                lines.append(f"  only in {side.upper()}: {', '.join(only)}")
    return "\n".join(lines)


def render_markdown(cmp: dict[str, Any]) -> str:
    out = [f"# soclab compare\n\nA: `{cmp['a']['agent']}` · B: `{cmp['b']['agent']}`\n"]
    for mode, m in cmp["modes"].items():
        ws = m["weighted_score"]
        out.append(
            f"## {mode}\n\nLevel **{m['level']['a']} → {m['level']['b']}**, weighted score {_f(ws['a'])} → {_f(ws['b'])}; "
            f"{m['passes']['improved']} improved, {m['passes']['regressed']} regressed "
            f"(exact McNemar p = {m['passes']['mcnemar_p']:.3g}).\n"
        )
        out.append("| family | kind | n | A | B | B−A | 95% interval | p |\n|---|---|---:|---:|---:|---:|---|---:|")
        for f in m["families"]:
            out.append(
                f"| {f['family']} | {f['kind']} | {f['n']} | {f['a']:.3f} | {f['b']:.3f} | {f['diff']:+.3f} | "
                f"[{f['lower']:+.3f}, {f['upper']:+.3f}] | {f['p']:.3f}{_sig(f['p'])} |"
            )
        changed = [i for i in m["items"] if abs(i["a"] - i["b"]) > 1e-9 or i["a_passed"] != i["b_passed"]]
        if changed:
            out.append("\n| scenario | A | B | pass |\n|---|---:|---:|---|")
            for i in changed:
                out.append(f"| {i['scenario']} | {i['a']:.3f} | {i['b']:.3f} | {_pass(i['a_passed'])} → {_pass(i['b_passed'])} |")
        out.append("")
    out.append("`*`: p < 0.05. Family differences: paired scenario scores, bootstrap interval, sign-flip permutation test.")
    return "\n".join(out) + "\n"


def _f(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.3f}"


def _pass(ok: bool) -> str:
    return "pass" if ok else "fail"
