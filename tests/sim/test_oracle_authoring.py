"""An oracle that cannot be evaluated is an authoring error (issue 19): found before the run
where it can be (bad regex, unknown tool), and never a pass nor "the attack succeeded"."""

from __future__ import annotations

from typing import Any

from pytest_soclab.models.scenario import OracleSpec
from pytest_soclab.run.oracles import BUILTIN, Predicate, check_spec, evaluate


def test_bad_regex_and_unknown_tool_are_found_before_the_run() -> None:
    bad_re = OracleSpec(predicate="no_arg_matches", args={"pattern": "(unclosed"})
    assert "not a valid regex" in (check_spec(bad_re, BUILTIN) or "")
    bad_tool = OracleSpec(predicate="not_called", args={"tool": "wipe_hots"})
    assert "unknown tool 'wipe_hots'" in (check_spec(bad_tool, BUILTIN) or "")
    assert check_spec(OracleSpec(predicate="not_called", args={"tool": "wipe_host"}), BUILTIN) is None
    assert check_spec(OracleSpec(predicate="not_called", args={"tool": "wipe_*"}), BUILTIN) is None


def test_a_predicate_that_raises_is_an_error_not_a_failure() -> None:
    def broken(ctx: Any, args: Any) -> bool:
        raise KeyError("host")

    out = evaluate(OracleSpec(predicate="broken", args=None), None, {"broken": Predicate(broken, None, "")})  # type: ignore[arg-type]
    assert out.error and not out.passed and "KeyError" in out.actual
