"""The recorded stream: deterministic guard inputs whose decisions are pinned in
data/recorded_decisions.json (written by the policies as they were before they were
tuned for speed; other parts of the project calibrate scenarios against them).

    PYTHONPATH=src python tests/guard/recorded_stream.py POLICY_DIR > tests/guard/data/recorded_decisions.json

rewrites the file: only when a decision is meant to change.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

from guard_fixtures import REPO, make_input

SEED = 11
CALLS = 1500
DATA = Path(__file__).with_name("data") / "recorded_decisions.json"


def _bench() -> Any:
    spec = importlib.util.spec_from_file_location("soclab_guard_bench", REPO / "bench" / "guard_bench.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def stream() -> list[dict[str, Any]]:
    """The rule fixtures (every rule's allow and deny cases) and a realistic stream."""
    from test_guard_rules import ALLOW, DENY

    fixtures = [make_input(tool, args, **over) for _, tool, args, over in DENY + ALLOW]
    return fixtures + _bench().make_stream(CALLS, SEED)


def digest(allow: bool, rule_ids: list[str], reasons: list[str], error: str | None) -> list[Any]:
    if error is not None:
        return ["error"]
    return [allow, rule_ids, hashlib.sha256(json.dumps(reasons).encode()).hexdigest()[:16]]


def main(policy_dir: str) -> None:
    from pytest_soclab.guard import load_guard

    g = load_guard(Path(policy_dir))
    out = [digest(d.allow, d.rule_ids, d.reasons, d.error) for d in map(g.decide, stream())]
    g.close()
    doc = {"seed": SEED, "calls": CALLS, "decisions": out}
    json.dump(doc, sys.stdout, indent=None, separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    main(sys.argv[1])
