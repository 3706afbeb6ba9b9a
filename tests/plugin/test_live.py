"""The live backend end to end: a "cluster" (soclab's own ES-compatible endpoint, reached through the
official client) whose data has no recipe here: the estate is derived from the data."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from project import ATK, BEN, make_project

from pytest_soclab.sim.cases import CaseLibrary
from pytest_soclab.store.embedded import EmbeddedBackend
from pytest_soclab.store.http import serve_in_thread

REPO = Path(__file__).resolve().parents[2]
PLANTED = "planted:\n  - index: logs-endpoint.events.process-default\n    doc: {host.name: web-01, process.command_line: x}\n"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    cache = tmp_path_factory.mktemp("live-cache")
    case = CaseLibrary(REPO / "corpus", cache, scale=0.05).get("case-02-web-implant")
    server, _ = serve_in_thread(EmbeddedBackend.open(case.db_path))
    host, port = server.server_address[:2]
    yield f"http://{host}:{port}"
    server.shutdown()
    server.server_close()


def test_live_cluster_without_recipe(pytester: pytest.Pytester, soclab_cache: Path, cluster: str) -> None:
    # The scenarios name a case that has no recipe in this project: an unknown estate.
    atk = ATK.replace("case-02-web-implant", "prod-estate")
    ben = BEN.replace("case-02-web-implant", "prod-estate")
    make_project(pytester, soclab_cache, agent="scripted_agents:isolator", atk=atk, ben=ben)
    pytester.mkdir("empty-corpus")
    out = pytester.path / "results.json"
    result = pytester.runpytest(
        f"--soclab-es-url={cluster}", f"--soclab-corpus-dir={pytester.path / 'empty-corpus'}",
        f"--soclab-json={out}", "-p", "no:cacheprovider", "-rs",
    )  # fmt: skip
    # The benign item runs against the cluster; isolating web-01 works on the derived estate.
    result.assert_outcomes(passed=2)  # the isolator ignores the ATK's wipe bait
    data = json.loads(out.read_text())
    assert data["run"]["backend"] == "live"
    ben_item = next(i for i in data["items"] if i["kind"] == "benign")
    assert ben_item["outcome"] == "passed"
    isolate = next(c for c in ben_item["transcript"] if c["tool"] == "isolate_host")
    assert isolate["ok"] and isolate["guard"]["allow"]


def test_planted_documents_are_skipped_on_a_live_cluster(pytester: pytest.Pytester, soclab_cache: Path, cluster: str) -> None:
    atk = ATK + PLANTED
    make_project(pytester, soclab_cache, agent="scripted_agents:noop", atk=atk, ben=None)
    result = pytester.runpytest(f"--soclab-es-url={cluster}", "-p", "no:cacheprovider", "-rs")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*ATK-901 plants documents, and a live cluster is only ever read*"])


def test_unreachable_cluster_is_one_clear_error_per_item(pytester: pytest.Pytester, soclab_cache: Path) -> None:
    make_project(pytester, soclab_cache, agent="scripted_agents:looker", atk=None)
    result = pytester.runpytest("--soclab-es-url=http://127.0.0.1:9", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*cannot reach Elasticsearch at http://127.0.0.1:9*"])
    assert result.stdout.str().count("cannot reach Elasticsearch") <= 3


def test_elastic_url_alone_switches_to_the_live_cluster(
    pytester: pytest.Pytester, soclab_cache: Path, cluster: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No --soclab-es-url: the documented variable is enough (planting is skipped only on a live cluster).
    monkeypatch.setenv("ELASTIC_URL", cluster)
    atk = ATK + PLANTED
    make_project(pytester, soclab_cache, agent="scripted_agents:noop", atk=atk, ben=None)
    result = pytester.runpytest("-p", "no:cacheprovider", "-rs")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*ATK-901 plants documents, and a live cluster is only ever read*"])


def test_inconsistent_credentials_are_a_usage_error(
    pytester: pytest.Pytester, soclab_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ELASTIC_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("ELASTIC_USERNAME", "elastic")
    monkeypatch.delenv("ELASTIC_PASSWORD", raising=False)
    make_project(pytester, soclab_cache, agent="scripted_agents:noop", atk=None)
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*soclab: a username needs a password (ELASTIC_PASSWORD)*"])
    assert "Traceback" not in result.stderr.str()
