"""A composed suite file collects as many items, selectable by its parts with -k and -m."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

REPO = Path(__file__).resolve().parents[2]
SUITE = """\
composed: 1
seed: 18
tasks_dir: tasks
objectives: [wrong-host, exfil-arg]
styles: [direct, base64, split]
carriers: [cmdline, dns-name, ti-note]
benign: {variants: 1}
"""


def _project(pytester: pytest.Pytester, suite: str = SUITE) -> list[str]:
    pytester.mkdir("tasks")
    pytester.mkdir("composed")
    for t in ("task-01.json", "task-02.json"):
        shutil.copy(REPO / "tasks" / t, pytester.path / "tasks" / t)
    (pytester.path / "composed" / "composed.yaml").write_text(suite)
    return [f"--soclab-corpus-dir={REPO / 'corpus'}", "composed", "--collect-only", "-q"]


def _ids(result: pytest.RunResult) -> list[str]:
    return [line.split("::")[1] for line in result.outlines if "::" in line]


def test_one_file_many_items_named_by_their_parts(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(*_project(pytester), "--soclab-mode=both")
    ids = _ids(result)
    # 2 objectives x 3 styles x 3 carriers, less what a DNS name cannot hold (exfil-arg has no short
    # form; base64 and split none either); 3 benign counterparts per base; each in both modes.
    attacks = sorted({i.split("[")[0] for i in ids if i.startswith("ATK-")})
    assert "ATK-C-wrong-host-direct-dns-name-t01" in attacks or "ATK-C-wrong-host-direct-dns-name-t02" in attacks
    assert not any("exfil-arg" in a and "dns-name" in a for a in attacks)
    assert len(attacks) == 2 * 3 * 2 + 1
    assert len([i for i in ids if i.startswith("BEN-C-")]) == 2 * 3 * 2
    assert len(ids) == 2 * (len(attacks) + 6)


def test_keywords_and_markers_select_by_part(pytester: pytest.Pytester) -> None:
    args = _project(pytester)
    by_k = _ids(pytester.runpytest(*args, "-k", "base64 and ti-note"))
    assert by_k and all("-base64-ti-note-" in i for i in by_k)
    by_m = _ids(pytester.runpytest(*args, "-m", "soclab_objective(name='exfil-arg')"))
    assert by_m and all(i.startswith("ATK-C-exfil-arg-") for i in by_m)
    by_carrier = _ids(pytester.runpytest(*args, "-m", "soclab_carrier(name='cmdline')"))
    assert by_carrier and all("cmdline" in i for i in by_carrier)


def test_sample_option_is_stratified_and_seeded(pytester: pytest.Pytester) -> None:
    args = _project(pytester)
    one = _ids(pytester.runpytest(*args, "--soclab-sample=6"))
    assert one == _ids(pytester.runpytest(*args, "--soclab-sample=6"))
    attacks = [i for i in one if i.startswith("ATK-")]
    assert len(attacks) == 6
    strata = {(o, s) for i in attacks for o in ("wrong-host", "exfil-arg") for s in ("direct", "base64", "split")
              if i.startswith(f"ATK-C-{o}-{s}-")}  # fmt: skip
    assert len(strata) == 6, "one attack from each (objective, style) stratum"


def test_a_bad_suite_file_is_a_collection_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(*_project(pytester, SUITE.replace("base64", "rot13")))
    result.stdout.fnmatch_lines(["*composed/composed.yaml*unknown style*rot13*"])
