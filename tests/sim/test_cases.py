"""The case cache: built once per content hash, shared by concurrent builders, reused later."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

from pytest_soclab.sim.cases import CaseLibrary

REPO = Path(__file__).resolve().parents[2]
CASE = "case-02-web-implant"


def _build(cache: str) -> str:
    lib = CaseLibrary(REPO / "corpus", Path(cache), scale=0.02)
    return str(lib.get(CASE).db_path)


def test_concurrent_processes_build_once_and_share_the_file(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(3) as pool:
        paths = pool.map(_build, [str(tmp_path)] * 3)
    assert len(set(paths)) == 1
    built = list(tmp_path.glob(f"{CASE}-*.duckdb"))
    assert [str(p) for p in built] == paths[:1]  # one file, no leftovers
    mtime = built[0].stat().st_mtime_ns
    # A later session reuses it; another scale or seed is another entry.
    assert _build(str(tmp_path)) == paths[0] and built[0].stat().st_mtime_ns == mtime
    other = CaseLibrary(REPO / "corpus", tmp_path, scale=0.02, seed=7).get(CASE)
    assert str(other.db_path) != paths[0]


def test_progress_is_reported_once_per_build(tmp_path: Path) -> None:
    lines: list[str] = []
    lib = CaseLibrary(REPO / "corpus", tmp_path, scale=0.02, progress=lines.append)
    case = lib.get(CASE)
    lib.get(CASE)  # memoised: no second build, no second message
    assert len(lines) == 2 and "building case" in lines[0] and "built case" in lines[1]
    assert sum(case.manifest["streams"].values()) > 0
    assert case.scope()["time_range"] == {"gte": "2025-03-10T00:00:00Z", "lte": "2025-03-12T00:00:00Z"}


def test_unknown_case_is_a_clear_error(tmp_path: Path) -> None:
    import pytest

    from pytest_soclab.errors import SoclabError

    with pytest.raises(SoclabError, match="case-02-web-implant"):
        CaseLibrary(REPO / "corpus", tmp_path).get("case-99-nope")
