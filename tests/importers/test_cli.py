"""`soclab import`: counts on stderr, and last on stdout the NAME=PATH list `soclab serve --index` takes."""

from __future__ import annotations

from pathlib import Path

import pytest
from importers_testlib import SYSMON, ZEEK_CONN_TSV, jl, nxlog, write

from pytest_soclab.cli import main
from pytest_soclab.store.embedded import open_sources, parse_source_spec


def test_import_prints_index_specs_last(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    win = write(tmp_path / "w.json", jl([nxlog(SYSMON, 1, ProcessId="1"), nxlog("Security", 4624), "garbage"]))
    zeek = write(tmp_path / "conn.log", ZEEK_CONN_TSV)
    out = tmp_path / "out"
    assert main(["import", "otrf", "--out", str(out), "--summary", str(tmp_path / "s.json"), str(win), str(zeek)]) == 0
    captured = capsys.readouterr()
    last = captured.out.strip().splitlines()[-1]
    specs = last.split(" ")
    names = [parse_source_spec(s)[0] for s in specs]
    assert names == ["logs-system.security-default", "logs-windows.sysmon_operational-default",
                     "logs-zeek.connection-default"]  # fmt: skip
    assert all(parse_source_spec(s)[1].is_file() for s in specs)
    assert "malformed: " in captured.err and "w.json:3" in captured.err
    assert "logs-zeek.connection-default: 2 documents" in captured.err
    backend = open_sources(specs)
    try:
        res = backend.esql_query("FROM logs-zeek.connection-default | STATS n = COUNT(*)")
        assert res["values"] == [[2]]
    finally:
        backend.close()
    assert (tmp_path / "s.json").read_text().startswith("{")


def test_missing_input_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["import", "zeek", "--out", str(tmp_path), str(tmp_path / "nope.log")]) == 2
    assert "no such file" in capsys.readouterr().err
