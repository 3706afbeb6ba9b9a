"""Derive the reference data the package ships from the ECS and ATT&CK sources.

Run by a maintainer when the sources change (not at run time):

    python scripts/derive_reference_data.py --ecs ecs_flat.yml --attack enterprise-techniques.json

Writes src/pytest_soclab/data/ecs_fields.json and attack.json, each with its
source and licence notice inside.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import yaml

OUT = Path(__file__).resolve().parent.parent / "src" / "pytest_soclab" / "data"

ECS_NOTICE = (
    "Derived from the Elastic Common Schema (ECS) 9.3.0, generated/ecs/ecs_flat.yml, "
    "Copyright Elasticsearch B.V., licensed under the Apache License, Version 2.0 "
    "(https://www.apache.org/licenses/LICENSE-2.0). Only name, type, array normalisation, "
    "ignore_above and multi-fields are kept."
)


def derive_ecs(src: Path) -> dict:
    flat = yaml.safe_load(src.read_text())
    fields: dict[str, dict] = {}
    for name in sorted(flat):
        spec = flat[name]
        entry: dict = {"type": spec["type"]}
        if "array" in (spec.get("normalize") or []):
            entry["array"] = True
        if spec.get("ignore_above"):
            entry["ignore_above"] = spec["ignore_above"]
        if spec.get("multi_fields"):
            entry["multi_fields"] = {mf["name"]: mf["type"] for mf in spec["multi_fields"]}
        if spec.get("scaling_factor"):
            entry["scaling_factor"] = spec["scaling_factor"]
        fields[name] = entry
    return {"source": "ECS 9.3.0 (elastic/ecs generated/ecs/ecs_flat.yml)", "notice": ECS_NOTICE, "fields": fields}


def derive_attack(src: Path) -> dict:
    data = json.loads(src.read_text())
    techniques = {
        t["id"]: {"name": t["name"], "tactics": sorted(t["tactics"]), "platforms": sorted(t.get("platforms", []))}
        for t in sorted(data["techniques"], key=lambda t: t["id"])
    }
    return {
        "source": data["source"],
        "notice": data["notice"],
        "tactics": sorted(data["tactics"]),
        "techniques": techniques,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ecs", type=Path, required=True, help="path to ecs_flat.yml")
    ap.add_argument("--attack", type=Path, required=True, help="path to enterprise-techniques.json")
    args = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "ecs_fields.json").write_text(json.dumps(derive_ecs(args.ecs), indent=0, sort_keys=True) + "\n")
    (OUT / "attack.json").write_text(json.dumps(derive_attack(args.attack), indent=0, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
