"""Recorded cases: each builds from the recording it names, and every answer key of its tasks is in the
converted data (must_find in its stream, IOCs, attacker IP and hosts in the telemetry, every grounded rubric
term retrievable), its trigger's alert fires, and what the case declares about the estate is in the data.

One import per case (the cost of a case's first build without the store): the documents are streamed once
and every check of every task of the case is answered from that pass.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pytest
from corpus_testlib import CORPUS, load_task, recorded_case_ids, recorded_task_files

from pytest_soclab.corpus.docs import ALERTS
from pytest_soclab.corpus.recorded import load_recorded
from pytest_soclab.corpus.recorded_build import recorded_docs
from pytest_soclab.judge.grounding import flatten, term_pattern
from pytest_soclab.models.task import Task

CASES = recorded_case_ids()
RECORDINGS = CORPUS / "_recordings"
FOOTPRINT_MB = 60


def _grounded_terms(task: Task) -> list[str]:
    out: list[str] = []
    for cp in task.scoring.checkpoints:
        e = cp.expect
        if e is not None and ("retrieved" in e.where or ("report" in e.where and e.grounded)):
            out += [*e.terms, *e.any_terms]
    return out


def _streams_of(streams: set[str], source: str) -> list[str]:
    src = source.removesuffix("-default")
    return [s for s in streams if s == source or s.startswith((src, f"logs-{src}"))]


@dataclass
class CaseData:
    streams: dict[str, int] = field(default_factory=dict)
    found: set[tuple[str, str]] = field(default_factory=set)  # (kind, needle) seen
    alerts: list[dict] = field(default_factory=list)


@cache
def case_data(case_id: str) -> CaseData:
    """Import the case once and answer every needle its tasks ask for."""
    tasks = [load_task(p) for p in recorded_task_files() if load_task(p).source_case == case_id]
    must: dict[str, set[str]] = {}  # must_find -> sources
    tele: set[str] = set()  # IOCs, attacker IPs, hosts: in any telemetry document
    terms: set[str] = set()
    for t in tasks:
        gt = t.ground_truth
        for ev in gt.key_evidence:
            must.setdefault(ev.must_find, set()).add(ev.source)
        tele |= set(gt.iocs) | ({gt.attacker_ip} if gt.attacker_ip else set()) | set(gt.implicated_hosts)
        terms |= set(_grounded_terms(t))
    patterns = {t: term_pattern(t) for t in terms}
    data = CaseData()
    case = load_recorded(CORPUS / case_id)
    for stream, _id, doc in recorded_docs(case, CORPUS):
        data.streams[stream] = data.streams.get(stream, 0) + 1
        if stream == ALERTS:
            data.alerts.append(doc)
        values = "\n".join(v for vs in flatten(doc).values() for v in vs)
        low = values.lower()
        for needle, sources in must.items():
            if ("must", needle) not in data.found and needle in values and any(_streams_of({stream}, s) for s in sources):
                data.found.add(("must", needle))
        for needle in tele:
            if ("tele", needle) not in data.found and needle.lower() in low:
                data.found.add(("tele", needle))
        for term, pat in patterns.items():
            if ("term", term) not in data.found and pat.search(values):
                data.found.add(("term", term))
    return data


def test_there_are_recorded_cases_and_tasks() -> None:
    assert len(CASES) >= 12
    assert len(recorded_task_files()) >= 24
    assert len({load_task(p).source_case for p in recorded_task_files()}) == len(CASES)


def test_the_recordings_stay_small_and_keep_their_licence() -> None:
    size = sum(p.stat().st_size for p in RECORDINGS.rglob("*") if p.is_file())
    assert size <= FOOTPRINT_MB * 1e6, f"{size / 1e6:.1f} MB of recordings"
    assert "MIT License" in (RECORDINGS / "LICENSE").read_text()
    assert (RECORDINGS / "NOTICE").is_file()


@pytest.mark.parametrize("case_id", CASES)
def test_case_file_names_shipped_recordings(case_id: str) -> None:
    case = load_recorded(CORPUS / case_id)
    assert case.id == case_id
    for path in case.paths(CORPUS):
        assert path.is_file(), path
        assert RECORDINGS in path.resolve().parents


@pytest.mark.parametrize("case_id", CASES)
def test_answer_keys_are_in_the_converted_data(case_id: str) -> None:
    data = case_data(case_id)
    problems: list[str] = []
    for path in recorded_task_files():
        task = load_task(path)
        if task.source_case != case_id:
            continue
        gt = task.ground_truth
        for ev in gt.key_evidence:
            if not _streams_of(set(data.streams), ev.source):
                problems.append(f"{task.id}: no stream matches {ev.source!r} (have {sorted(data.streams)})")
            elif ("must", ev.must_find) not in data.found:
                problems.append(f"{task.id}: {ev.must_find!r} is in no document of {ev.source}")
        for value in [*gt.iocs, *([gt.attacker_ip] if gt.attacker_ip else []), *gt.implicated_hosts]:
            if ("tele", value) not in data.found:
                problems.append(f"{task.id}: IOC / attacker IP / host {value!r} appears in no document")
        for term in _grounded_terms(task):
            if ("term", term) not in data.found:
                problems.append(f"{task.id}: grounded rubric term {term!r} is in no document's values")
        rule, host = task.trigger.pivot.get("alert_rule"), task.trigger.pivot.get("host.name")
        if task.trigger.type == "alert" and rule:
            named = [a for a in data.alerts if a["kibana"]["alert"]["rule"]["name"] == rule]
            if not named or (host and not any(a.get("host", {}).get("name") == host for a in named)):
                problems.append(f"{task.id}: no alert {rule!r} on {host} in the built case")
    assert not problems, "\n".join(problems)
