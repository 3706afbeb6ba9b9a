"""`soclab validate --explain`: what the judge will look for, per checkpoint and per response line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from plain_keys import LNX_TASK, WIN_TASK, lnx_task, win_task

from pytest_soclab.cli import main
from pytest_soclab.judge import explain_task

CORPUS = Path(__file__).resolve().parents[2] / "corpus"


def test_explain_names_each_checkpoint_and_line() -> None:
    lines = explain_task(lnx_task())
    text = "\n".join(lines)
    t = lnx_task()
    assert all(f"checkpoint {i} " in text for i in range(len(t.scoring.checkpoints)))
    assert "named in the checkpoint: /var/tmp/kworkerd (evidence, from logs-endpoint.events.process)" in text
    got = dict(zip(lines, lines[1:]))
    assert got["  over_reaction_penalty: Kill or remove mdatp / wdavdaemon"].strip() == (
        "-> kill_process(process=['mdatp*', 'wdavdaemon*']) or delete_file(path=['*mdatp*', '*wdavdaemon*'])")
    assert "neither required nor penalised" in got["  required: Patch or upgrade log4j / disable JNDI lookups"]
    # a conclusion checkpoint counts only with one of the attack's own entities named (rules.anchor)
    starts = [n for n, line in enumerate(lines) if line.startswith("  ") and not line.startswith("    ")]
    for i, cp in enumerate(t.scoring.checkpoints):
        at = lines.index(next(line for line in lines if line.startswith(f"  checkpoint {i} ")))
        shown = lines[at + 1:min(n for n in starts if n > at)]
        anchored = any("only when the report names one of, as retrieved:" in line for line in shown)
        assert anchored == (cp.dim == "conclusion_accuracy"), (lines[at], shown)
    assert any(cp.dim == "conclusion_accuracy" for cp in t.scoring.checkpoints)


def test_explain_uses_the_estate_names_it_is_given() -> None:
    lines = explain_task(win_task(), hosts=["FIN-WS07", "HQ-DC01", "HR-WS02", "FILESRV"], users=["jdoe"])
    got = dict(zip(lines, lines[1:]))
    shown = got["  over_reaction_penalty: Isolating HR-WS02 or FILESRV, which were not touched"]
    assert "isolate_host(host='HR-WS02')" in shown and "isolate_host(host='FILESRV')" in shown


def test_cli_explain(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for key in (WIN_TASK, LNX_TASK):
        (tmp_path / f"{key['id']}.json").write_text(json.dumps(key))
    main(["validate", "--explain", "--corpus-dir", str(CORPUS), str(tmp_path)])
    out = capsys.readouterr().out
    assert "task-plain-win (case-plain-win)" in out and "task-plain-lnx (case-plain-lnx)" in out
    assert "-> block_ip(ip='203.0.113.77')" in out
