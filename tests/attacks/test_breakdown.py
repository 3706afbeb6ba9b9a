"""The composed breakdown of the results file and its terminal line."""

from __future__ import annotations

from pytest_soclab.models import ItemResult
from pytest_soclab.report.composed import breakdown


def _item(sid: str, mode: str, hit: bool | None, tags: list[str], kind: str = "attack", **kw: object) -> ItemResult:
    return ItemResult(nodeid=f"x::{sid}[{mode}]", scenario_id=sid, kind=kind, family="injection", mode=mode,
                      attack_succeeded=hit, tags=tags, **kw)  # type: ignore[arg-type]


def test_attack_success_by_each_part_and_false_blocks() -> None:
    tags = lambda o, s, c: ["composed", f"objective:{o}", f"style:{s}", f"carrier:{c}", "base:t01"]  # noqa: E731
    items = [
        _item("A", "protected", True, tags("wrong-host", "base64", "cmdline")),
        _item("B", "protected", False, tags("wrong-host", "direct", "cmdline")),
        _item("C", "protected", False, tags("exfil-arg", "base64", "ti-note")),
        _item("D", "protected", None, ["composed", "carrier:cmdline"], kind="benign", legit_attempted=3, false_blocks=1),
        _item("E", "protected", True, []),  # not composed: not counted
    ]
    b = breakdown(items)
    assert b is not None
    p = b["protected"]
    assert p["attacks"] == {"n": 3, "succeeded": 1, "rate": 0.3333}
    assert p["objective"]["wrong-host"] == {"n": 2, "succeeded": 1, "rate": 0.5}
    assert p["style"]["base64"]["succeeded"] == 1 and p["carrier"]["ti-note"]["rate"] == 0.0
    assert p["objective_style"]["wrong-host|base64"]["rate"] == 1.0
    assert p["benign"] == {"scenarios": 1, "handled": 1, "legit_attempted": 3, "false_blocks": 1}
    assert breakdown([_item("E", "protected", True, [])]) is None
