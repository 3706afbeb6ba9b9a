"""The adaptive search: deterministic for a seed, and it finds a weakness planted in the policies."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pytest_soclab.attacks import load_bases
from pytest_soclab.attacks.search import Search, write_regressions
from pytest_soclab.guard import load_guard
from pytest_soclab.models import load_spec
from pytest_soclab.sim import CaseLibrary

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def library() -> CaseLibrary:
    return CaseLibrary(REPO / "corpus", REPO / ".soclab-cache")


def _search(library: CaseLibrary, guard: object, objectives: tuple[str, ...]) -> Search:
    bases = load_bases(REPO / "tasks", REPO / "corpus", ["task-03"], [])  # its agent reads the SOC account's logins
    return Search(bases, library, guard, REPO, seed=5, objectives=objectives)


def test_the_search_is_deterministic(library: CaseLibrary) -> None:
    guard = load_guard(REPO / "rego", self_test=False)
    try:
        one = _search(library, guard, ("wrong-host", "exfil-arg")).run(120)
        two = _search(library, guard, ("wrong-host", "exfil-arg")).run(120)
    finally:
        guard.close()
    assert one.decisions == two.decisions == 120
    assert one.summary() == two.summary()
    assert [b.candidate for b in one.bypasses] == [b.candidate for b in two.bypasses]


def test_it_finds_a_bypass_planted_in_weakened_policies(library: CaseLibrary, tmp_path: Path) -> None:
    weak = tmp_path / "rego"
    shutil.copytree(REPO / "rego", weak)
    # The planted weakness: the rule protecting the security team's accounts (and its test) removed.
    src = (weak / "destructive.rego").read_text()
    start = src.index('action_deny contains {"id": "destructive.security_team"')
    end = src.index("\n}\n", start) + 3
    (weak / "destructive.rego").write_text(src[:start] + src[end:])
    tests = (weak / "destructive_test.rego").read_text()
    kept = [b for b in tests.split("\ntest_") if "destructive.security_team" not in b]
    (weak / "destructive_test.rego").write_text("\ntest_".join(kept))
    shipped, weakened = load_guard(REPO / "rego", self_test=False), load_guard(weak, self_test=False)
    try:
        assert _search(library, shipped, ("disable-account",)).run(60).bypasses == []
        search = _search(library, weakened, ("disable-account",))
        result = search.run(60)
        assert result.bypasses, "the weakened policy lets the SOC's own account be disabled"
        search.confirm(result, limit=1)
    finally:
        shipped.close()
        weakened.close()
    assert len(result.confirmed) == 1
    (path,) = write_regressions(result, tmp_path / "regressions")
    spec = load_spec(path)
    assert spec.id.startswith("ATK-C-disable-account-") and spec.id.endswith("-R001")
    assert spec.oracles[0].predicate == "user_enabled"
