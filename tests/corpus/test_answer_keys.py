"""Every task's answer key is provably in its case's generated data, and never in its trigger."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from corpus_testlib import CORPUS, generated_task_files, load_task, task_files

from pytest_soclab.corpus.docs import ALERTS

TASKS = task_files()
# Checked on generated data; tasks over recorded cases are checked on their recordings (test_recorded_cases.py).
GENERATED = generated_task_files()


def _streams(text: dict[str, list[str]], source: str) -> list[str]:
    """Streams a key_evidence source names: a data stream, or a dataset prefix of some."""
    src = source.removesuffix("-default")
    return [s for s in text if s == source or s.startswith((src, f"logs-{src}"))]


def _telemetry(text: dict[str, list[str]]) -> list[str]:
    """Documents other than threat-intel feeds: an IOC only a feed mentions was never seen in the estate."""
    return [d for s, docs in text.items() if not s.startswith("logs-ti_") for d in docs]


def test_there_are_tasks() -> None:
    assert len(TASKS) >= 1


@pytest.mark.parametrize("path", TASKS, ids=[p.stem for p in TASKS])
def test_task_validates_and_names_a_case(path: Path) -> None:
    task = load_task(path)
    assert task.id == path.stem
    assert (CORPUS / task.source_case / "case.yaml").is_file(), f"{task.id}: no case {task.source_case}"


@pytest.mark.parametrize("path", GENERATED, ids=[p.stem for p in GENERATED])
def test_key_evidence_is_in_its_stream(path: Path, corpus_text) -> None:
    task = load_task(path)
    text = corpus_text(task.source_case)
    for ev in task.ground_truth.key_evidence:
        streams = _streams(text, ev.source)
        assert streams, f"{task.id}: no data stream matches source {ev.source!r}; have {sorted(text)}"
        found = any(ev.must_find in d for s in streams for d in text[s])
        assert found, f"{task.id}: {ev.must_find!r} not found in {streams}"


@pytest.mark.parametrize("path", GENERATED, ids=[p.stem for p in GENERATED])
def test_iocs_attacker_and_hosts_are_in_the_telemetry(path: Path, corpus_text) -> None:
    task = load_task(path)
    docs = _telemetry(corpus_text(task.source_case))
    gt = task.ground_truth
    wanted = list(gt.iocs) + ([gt.attacker_ip] if gt.attacker_ip else [])
    for value in wanted:
        assert any(value in d for d in docs), f"{task.id}: IOC / attacker IP {value!r} appears in no document"
    for host in gt.implicated_hosts:
        needle = f'"name": "{host}"'
        assert any(needle in d for d in docs), f"{task.id}: implicated host {host!r} has no documents"


@pytest.mark.parametrize("path", GENERATED, ids=[p.stem for p in GENERATED])
def test_attacker_ip_is_linked_to_an_implicated_host(path: Path, corpus_text) -> None:
    """The attacker's address meets an implicated host's address in at least one document."""
    task = load_task(path)
    gt = task.ground_truth
    if not gt.attacker_ip or not gt.implicated_hosts:
        pytest.skip("no attacker ip or implicated hosts")
    from pytest_soclab.corpus.recipe import load_case

    recipe = load_case(CORPUS / task.source_case)
    ips = [ip for h in recipe.hosts if h.name in gt.implicated_hosts for ip in h.ips]
    docs = _telemetry(corpus_text(task.source_case))
    assert any(gt.attacker_ip in d and any(f'"{ip}"' in d for ip in ips) for d in docs)


def _answer_strings(task) -> list[str]:
    gt = task.ground_truth
    out = [e.must_find for e in gt.key_evidence] + list(gt.iocs)
    if gt.attacker_ip:
        out.append(gt.attacker_ip)
    return [s for s in out if s]


@pytest.mark.parametrize("path", TASKS, ids=[p.stem for p in TASKS])
def test_no_answer_key_in_the_trigger(path: Path) -> None:
    task = load_task(path)
    trigger = (task.trigger.prompt + " " + " ".join(map(str, task.trigger.pivot.values()))).lower()
    leaked = [s for s in _answer_strings(task) if s.lower() in trigger]
    assert not leaked, f"{task.id}: the trigger gives away {leaked}"
    # Nor a distinctive part of one (a file name without its directory, a domain without its host).
    for s in _answer_strings(task):
        for part in re.split(r"[/ ]", s):
            if len(part) >= 8 and "." in part and not re.fullmatch(r"[\d.]+", part):
                assert part.lower() not in trigger, f"{task.id}: the trigger names {part!r} (from {s!r})"


@pytest.mark.parametrize("path", GENERATED, ids=[p.stem for p in GENERATED])
def test_alert_trigger_names_an_alert_that_fired(path: Path, corpus_text) -> None:
    task = load_task(path)
    rule = task.trigger.pivot.get("alert_rule")
    if task.trigger.type != "alert" or not rule:
        pytest.skip("not an alert trigger")
    alerts = corpus_text(task.source_case).get(ALERTS, [])
    host = task.trigger.pivot.get("host.name")
    hits = [a for a in alerts if f'"name": "{rule}"' in a and (not host or f'"name": "{host}"' in a)]
    assert hits, f"{task.id}: no alert {rule!r} on {host} in the corpus"
