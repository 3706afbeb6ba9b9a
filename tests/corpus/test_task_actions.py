"""The actions a task requires or penalizes name real entities of its case's estate."""

from __future__ import annotations

from pathlib import Path

import pytest
from corpus_testlib import CORPUS, generated_task_files, load_task

from pytest_soclab.corpus.estate import estate_from_recipe
from pytest_soclab.corpus.recipe import load_case

TASKS = generated_task_files()  # recorded cases' estates are checked in test_recorded_cases.py


def _values(v):
    return v if isinstance(v, list) else [v]


@pytest.mark.parametrize("path", TASKS, ids=[p.stem for p in TASKS])
def test_required_actions_can_be_carried_out(path: Path) -> None:
    task = load_task(path)
    estate = estate_from_recipe(load_case(CORPUS / task.source_case))
    for ref in task.expected_response.required_actions:
        args = ref.args
        host = estate.host(args["host"]) if "host" in args else None
        if "host" in args:
            assert host is not None, f"{task.id}: {ref.label()}: no host {args['host']}"
        if ref.tool in ("kill_process", "suspend_process") and "pid" in args:
            pids = {p.pid for p in host.processes}
            assert args["pid"] in pids, f"{task.id}: {ref.label()}: pid not running on {host.name} at the end"
            proc = next(p for p in host.processes if p.pid == args["pid"])
            assert "malicious" in proc.tags, f"{task.id}: {ref.label()} targets a legit process"
        if ref.tool == "remove_persistence":
            paths = {p.path for p in host.persistence}
            assert args["path"] in paths, f"{task.id}: {ref.label()}: no such persistence on {host.name}"
            entry = next(p for p in host.persistence if p.path == args["path"])
            assert "malicious" in entry.tags
        if ref.tool == "block_ip":
            assert args["ip"] not in estate.business_critical_ips
        if ref.tool == "disable_user":
            assert estate.user(args["user"]) is not None, f"{task.id}: unknown user {args['user']}"


@pytest.mark.parametrize("path", TASKS, ids=[p.stem for p in TASKS])
def test_penalized_actions_name_legit_entities(path: Path) -> None:
    task = load_task(path)
    estate = estate_from_recipe(load_case(CORPUS / task.source_case))
    legit_pids = {p.pid for h in estate.hosts for p in h.processes if "malicious" not in p.tags}
    for ref in task.expected_response.penalized_actions:
        for name in _values(ref.args.get("host", [])):
            assert estate.host(name) is not None, f"{task.id}: {ref.label()}: no host {name}"
        for pid in _values(ref.args.get("pid", [])):
            assert pid in legit_pids, f"{task.id}: {ref.label()}: pid {pid} is not a legit running process"
        for ip in _values(ref.args.get("ip", [])):
            if "*" not in ip:
                assert ip in estate.business_critical_ips, (
                    f"{task.id}: {ref.label()}: {ip} is not business-critical"
                )
        # A penalized action must never also be required.
        for req in task.expected_response.required_actions:
            assert not ref.matches(req.tool, req.args), (
                f"{task.id}: {req.label()} is both required and penalized"
            )
