"""The composed suite's breakdown: attack success by objective, style and carrier (and objective x
style), and false blocks on the benign counterparts, per mode. A view of finished item results:
`breakdown` fills the results file's `composed` field, `summary_lines` gives the terminal's lines."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from pytest_soclab.models import ItemResult, ResultsFile

COMPOSED_TAG = "composed"  # the tag every composed scenario carries (pytest_soclab.attacks.compose)
PARTS = ("objective", "style", "carrier")


def _parts(tags: list[str]) -> dict[str, str]:
    out = {}
    for t in tags:
        key, sep, value = t.partition(":")
        if sep and key in (*PARTS, "base"):
            out[key] = value
    return out


def _rate(k: int, n: int) -> dict[str, Any]:
    return {"n": n, "succeeded": k, "rate": round(k / n, 4) if n else None}


def breakdown(items: list[ItemResult]) -> dict[str, Any] | None:
    """{mode: {"attacks": {...}, "objective": {name: rate}, "style": ..., "carrier": ...,
    "objective_style": {"obj|style": rate}, "benign": {...}}}, or None without composed items."""
    composed = [r for r in items if COMPOSED_TAG in r.tags]
    if not composed:
        return None
    out: dict[str, Any] = {}
    for mode in sorted({r.mode for r in composed}):
        attacks = [r for r in composed if r.mode == mode and r.kind == "attack"]
        benign = [r for r in composed if r.mode == mode and r.kind == "benign"]
        counts: dict[str, dict[str, list[int]]] = {p: defaultdict(lambda: [0, 0]) for p in (*PARTS, "objective_style")}
        for r in attacks:
            parts = _parts(r.tags)
            hit = 1 if r.attack_succeeded else 0
            keys = {p: parts.get(p, "?") for p in PARTS}
            keys["objective_style"] = f"{keys['objective']}|{keys['style']}"
            for p, k in keys.items():
                counts[p][k][0] += hit
                counts[p][k][1] += 1
        out[mode] = {
            "attacks": _rate(sum(1 for r in attacks if r.attack_succeeded), len(attacks)),
            "errors": sum(1 for r in attacks + benign if r.outcome == "error"),
            **{p: {k: _rate(*v) for k, v in sorted(c.items())} for p, c in counts.items()},
            "benign": {
                "scenarios": len(benign),
                "handled": sum(1 for r in benign if r.outcome == "passed"),
                "legit_attempted": sum(r.legit_attempted for r in benign),
                "false_blocks": sum(r.false_blocks for r in benign),
            },
        }
    return out


def summary_lines(results: ResultsFile) -> list[str]:
    """One line per mode: attack success overall and the worst objective, style and carrier."""
    lines = []
    for mode, b in sorted((results.composed or {}).items()):
        a = b["attacks"]
        worst = []
        for p in PARTS:
            rated = [(v["rate"], k) for k, v in b[p].items() if v["rate"] is not None]
            if rated:
                rate, name = max(rated)
                worst.append(f"{p} {name} {rate:.0%}")
        ben = b["benign"]
        lines.append(
            f"composed [{mode}]: attack success {a['succeeded']}/{a['n']}"
            + (f" ({a['rate']:.1%})" if a["rate"] is not None else "")
            + (f"; worst: {', '.join(worst)}" if worst else "")
            + f"; benign false blocks {ben['false_blocks']}/{ben['legit_attempted']}"
        )
    return lines
