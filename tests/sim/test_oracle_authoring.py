"""An oracle that cannot be evaluated is an authoring error (issue 19): never a pass nor "the
attack succeeded". (Bad regexes and unknown tools are found before the run, by run/validate.py.)"""

from __future__ import annotations

from typing import Any

from pytest_soclab.models.scenario import OracleSpec
from pytest_soclab.run.oracles import Predicate, evaluate


def test_a_predicate_that_raises_is_an_error_not_a_failure() -> None:
    def broken(ctx: Any, args: Any) -> bool:
        raise KeyError("host")

    out = evaluate(OracleSpec(predicate="broken", args=None), None, {"broken": Predicate(broken, None, "")})  # type: ignore[arg-type]
    assert out.error and not out.passed and "KeyError" in out.actual
