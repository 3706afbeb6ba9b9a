"""--soclab-concurrency: agents of upcoming items run ahead; pytest still reports each item, in order."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from project import make_project

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

# Times, and what holds the store's `took` (milliseconds) of each search: the result digests and
# excerpts, and the recorded evidence.
TIMES = ("duration_s", "duration_ms", "result_sha256", "result_excerpt", "evidence")


def _timeless(value: object) -> object:
    if isinstance(value, dict):
        return {k: _timeless(v) for k, v in value.items() if k not in TIMES}
    if isinstance(value, list):
        return [_timeless(v) for v in value]
    return value


def _diff(a: object, b: object, path: str = "") -> list[str]:
    """Where two JSON values differ (for a readable failure)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in sorted(set(a) | set(b)) for d in _diff(a.get(k), b.get(k), f"{path}.{k}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in _diff(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path}: {str(a)[:120]} != {str(b)[:120]}"]


def _run(pytester: pytest.Pytester, name: str, *args: str) -> tuple[pytest.RunResult, dict]:
    out = pytester.path / f"{name}.json"
    result = pytester.runpytest_subprocess("--soclab-mode=both", f"--soclab-json={out}", "-p", "no:cacheprovider",
                                           "-v", *args)  # fmt: skip
    assert out.is_file(), result.stdout.str()[-3000:]
    return result, json.loads(out.read_text())


def _order(result: pytest.RunResult) -> list[str]:
    return [line.split(" ")[0] for line in result.outlines if "::" in line and (" PASSED" in line or " FAILED" in line)]


def test_concurrent_run_equals_serial_run_and_reports_in_collection_order(pytester: pytest.Pytester,
                                                                         soclab_cache: Path) -> None:
    make_project(pytester, soclab_cache, agent="scripted_agents:wiper", tasks=True)
    serial, one = _run(pytester, "one")
    parallel, four = _run(pytester, "four", "--soclab-concurrency=4")
    assert _order(parallel) == _order(serial) and len(_order(serial)) == 6
    parallel.assert_outcomes(passed=1, failed=5)
    assert _diff(_timeless(four), _timeless(one)) == []


def test_concurrency_under_xdist_and_with_exitfirst(pytester: pytest.Pytester, soclab_cache: Path) -> None:
    make_project(pytester, soclab_cache, agent="scripted_agents:wiper", tasks=True)
    _, serial = _run(pytester, "serial")
    _, xdist = _run(pytester, "xdist", "-n", "2", "--soclab-concurrency=3")
    assert _timeless(xdist["modes"]) == _timeless(serial["modes"])
    assert _timeless(sorted(xdist["items"], key=lambda i: i["nodeid"])) == _timeless(
        sorted(serial["items"], key=lambda i: i["nodeid"]))
    first, data = _run(pytester, "x", "-x", "--soclab-concurrency=4")
    first.assert_outcomes(failed=1)
    assert data["collection"]["interrupted"] is True and data["collection"]["reported"] == 1


def test_concurrency_must_be_positive(pytester: pytest.Pytester, soclab_cache: Path) -> None:
    make_project(pytester, soclab_cache, agent="scripted_agents:noop", ben=None)
    result = pytester.runpytest("--soclab-concurrency=0", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
