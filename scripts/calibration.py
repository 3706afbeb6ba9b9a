"""Regenerate the calibration tables of docs/scenarios.md.

    python scripts/calibration.py [--out calibration.md] [--workers 2]

Runs the scenario library (scenarios/, benign/) with both reference agents in both modes
(`pytest --soclab-mode=both --soclab-agent=gullible|playbook --soclab-json=...`), then
prints the claims table and the per-scenario tables as markdown.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
AGENTS = ("gullible", "playbook")


def run(agent: str, out: Path, workers: int) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "pytest", "scenarios", "benign", "-q", "-p", "no:cacheprovider",
           "--soclab-mode=both", f"--soclab-agent={agent}", f"--soclab-json={out}"]  # fmt: skip
    if workers > 1:
        cmd += ["-n", str(workers)]
    subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    if not out.is_file():
        raise SystemExit(f"no results from: {' '.join(cmd)}")
    return json.loads(out.read_text())


def by_scenario(data: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(i["scenario_id"], i["mode"]): i for i in data["items"]}


def denied_rules(item: dict[str, Any]) -> list[str]:
    return sorted({r for c in item["transcript"] for r in (c.get("guard") or {}).get("rule_ids", [])
                   if c.get("guard") and c["guard"]["enforced"] and not c["guard"]["allow"]})  # fmt: skip


def render(results: dict[str, dict[str, Any]]) -> str:
    g, p = by_scenario(results["gullible"]), by_scenario(results["playbook"])
    atks = sorted({sid for sid, _ in g if sid.startswith("ATK-")})
    bens = sorted({sid for sid, _ in g if sid.startswith("BEN-")})
    gm, pm = results["gullible"]["modes"], results["playbook"]["modes"]
    base_succ = gm["baseline"]["metrics"]["attack_success_rate"]
    crit = [s for s in atks if g[(s, "protected")]["severity"] == "critical"]
    crit_succ = [s for s in crit if g[(s, "protected")]["attack_succeeded"]]
    prot_succ = gm["protected"]["attacks"]["succeeded"]
    fb, gfb = pm["protected"]["false_block"], gm["protected"]["false_block"]
    items = sum(len(r["items"]) for r in results.values())
    errors = sum(1 for r in results.values() for i in r["items"] if i["outcome"] == "error")
    high = sorted({g[(s, "protected")]["severity"] for s in prot_succ})
    out = [
        "| claim | result |",
        "|---|---|",
        f"| every ATK is lost by at least one reference configuration | gullible, baseline: **{base_succ['k']} / {base_succ['n']}** attacks succeed |",
        f"| the shipped policies stop every critical ATK | gullible, protected: **{len(crit_succ)} / {len(crit)}** critical attacks succeed "
        f"({len(prot_succ)} / {len(atks)} overall{', ' + '/'.join(high) if high else ''}) |",
        f"| playbook in protected mode stays under the false-block ceiling ({fb['ceiling']:.0%}) | **{fb['blocked']} / {fb['attempted']}** legit "
        f"actions blocked; gullible protected: {gfb['blocked']} / {gfb['attempted']} |",
        f"| every scenario runs in both modes with both reference agents | {items} items, {errors} errors |",
        "",
        "| id | family | severity | gullible baseline | gullible protected | rules that denied (gullible, protected) | playbook baseline | playbook protected |",
        "|---|---|---|---|---|---|---|---|",
    ]

    def atk(item: dict[str, Any]) -> str:
        return "attack succeeded" if item["attack_succeeded"] else "stopped"

    def ben(item: dict[str, Any]) -> str:
        return "handled" if item["outcome"] == "passed" else "not handled"

    for s in atks:
        gp = g[(s, "protected")]
        out.append(f"| {s} | {gp['family']} | {gp['severity']} | {atk(g[(s, 'baseline')])} | {atk(gp)} | "
                   f"{', '.join(denied_rules(gp)) or '-'} | {atk(p[(s, 'baseline')])} | {atk(p[(s, 'protected')])} |")  # fmt: skip
    out += [
        "",
        "| id | family | gullible baseline | gullible protected | playbook baseline | playbook protected | false blocks (playbook, protected) |",
        "|---|---|---|---|---|---|---|",
    ]
    for s in bens:
        pp = p[(s, "protected")]
        out.append(f"| {s} | {pp['family']} | {ben(g[(s, 'baseline')])} | {ben(g[(s, 'protected')])} | "
                   f"{ben(p[(s, 'baseline')])} | {ben(pp)} | {pp['false_blocks']} / {pp['legit_attempted']} |")  # fmt: skip
    families: dict[str, int] = defaultdict(int)
    for s in atks + bens:
        families[g[(s, "protected")]["family"]] += 1
    out += ["", "Scenarios per family: " + ", ".join(f"{f} {n}" for f, n in sorted(families.items()))]
    return "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, help="also write the markdown here")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        results = {a: run(a, Path(tmp) / f"{a}.json", args.workers) for a in AGENTS}
    text = render(results)
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
