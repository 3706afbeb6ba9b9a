"""`soclab --version`, a closed pipe, and `soclab query --format table`."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from pytest_soclab import __version__
from pytest_soclab.cli import EXIT_BROKEN_PIPE, main

REPO = Path(__file__).resolve().parents[2]
CASE = "case-02-web-implant"


@pytest.fixture
def case_args(soclab_cache: Path) -> list[str]:
    return ["--case", CASE, "--corpus-dir", str(REPO / "corpus"), "--cache-dir", str(soclab_cache),
            "--policy-dir", str(REPO / "rego"), "--scale", "0.05"]  # fmt: skip


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0 and capsys.readouterr().out == f"soclab {__version__}\n"


class _ClosedPipe(io.StringIO):
    def write(self, s: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


def test_a_closed_pipe_ends_quietly(case_args: list[str], monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("sys.stdout", _ClosedPipe())  # as `soclab query ... | head` after head exits
    assert main(["query", "indices", "logs-*", *case_args]) == EXIT_BROKEN_PIPE
    monkeypatch.undo()
    assert "Traceback" not in capsys.readouterr().err


def test_query_table_esql(case_args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    query = ('FROM logs-endpoint.events.process-default | WHERE process.executable LIKE "/tmp/*" '
             "| STATS n = COUNT(*) BY host.name | LIMIT 5")  # fmt: skip
    assert main(["query", "esql", query, "--format", "table", *case_args]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["n", "host.name"] and set(lines[1]) == {"-", " "}
    assert lines[2].split()[1] == "web-01" and lines[-1] == "(1 row)"
    assert main(["query", "esql", query, "--columnar", "--format", "table", *case_args]) == 0
    assert capsys.readouterr().out.splitlines() == lines  # the same table from the columnar answer


def test_query_table_search_indices_mappings(case_args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    body = '{"size": 2, "query": {"term": {"host.name": "web-01"}}}'
    assert main(["query", "search", "logs-endpoint.events.process-default", "--body", body, "--format", "table",
                 *case_args]) == 0  # fmt: skip
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:2] == ["_index", "_id"] and "host.name" in lines[0] and lines[-1] == "(2 rows)"
    assert main(["query", "indices", "logs-zeek*", "--format", "table", *case_args]) == 0
    assert "index" in capsys.readouterr().out.splitlines()[0].split()
    assert main(["query", "mappings", "logs-system.auth-default", "--format", "table", *case_args]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == ["index", "field", "type"] and "source.ip" in out


def test_query_help_explains_columnar_and_format(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["query", "esql", "--help"])
    out = capsys.readouterr().out
    assert "one list of values per column" in out and "table" in out


def test_corpus_build_of_a_recorded_case_says_how_to_get_its_documents(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["corpus", "build", "rec-atomic-seatbelt", "--corpus-dir", str(REPO / "corpus")]) == 2
    err = capsys.readouterr().err
    assert "is a recorded case" in err and "soclab import otrf --out DIR" in err and "Traceback" not in err
