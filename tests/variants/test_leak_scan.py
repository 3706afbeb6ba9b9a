"""The leak scan of issue 15: on variants 1 and 2 of every generated case and variant 1 of every
recorded one, no entity of the case as it is (host, address, person, the organisation's domain,
the attacker's addresses, the file names the intruder made up) is left in any document or in the
case's tasks, in any of the forms a value takes (as a word, a label of a dotted name,
percent-encoded)."""

from __future__ import annotations

import functools
import json
import re
import tempfile
from pathlib import Path
from urllib.parse import unquote

import pytest

from pytest_soclab.corpus import is_recorded, load_case, load_recorded, recorded_docs
from pytest_soclab.corpus.generate import generate
from pytest_soclab.models import Task, load_spec
from pytest_soclab.pseudonymize import Variant
from pytest_soclab.pseudonymize.artifacts import ArtifactNames
from pytest_soclab.pseudonymize.names import WELL_KNOWN_ACCOUNTS
from pytest_soclab.run.variants import variant_docs

REPO = Path(__file__).resolve().parents[2]
CASES = sorted(p.name for p in (REPO / "corpus").iterdir() if (p / "case.yaml").is_file() and not is_recorded(p))
RECORDED = sorted(p.name for p in (REPO / "corpus").iterdir() if is_recorded(p))
SCALE = 0.05
_TOKEN = re.compile(r"[\w.@-]+")


def _entities(case: str, docs: list[tuple[str, str, dict]]) -> set[str]:
    if is_recorded(REPO / "corpus" / case):
        rec = load_recorded(REPO / "corpus" / case)
        out = {ip for h in rec.hosts for ip in h.ips}
        # a recorded host is an FQDN as often as not: its short name and its organisation's labels too
        out |= {label for h in rec.hosts for label in [h.name, *h.name.split(".")[:-1]]}
        out |= {u.name for u in rec.users if u.name.lower() not in WELL_KNOWN_ACCOUNTS}
    else:
        recipe = load_case(REPO / "corpus" / case)
        out = {h.name for h in recipe.hosts} | {ip for h in recipe.hosts for ip in h.ips}
        out |= {u.name for u in recipe.users if u.role != "service"}
        out.add(recipe.domain)
    for path in (REPO / "tasks").glob("task-*.json"):
        task = load_spec(path)
        if isinstance(task, Task) and task.source_case == case:
            out |= {task.ground_truth.attacker_ip or "", *task.ground_truth.implicated_hosts}
    names = ArtifactNames()
    for _, _, doc in docs:
        names.learn(doc)
    return {e.lower() for e in out | names.names if e}


def _words(text: str) -> set[str]:
    out: set[str] = set()
    for tok in _TOKEN.findall(unquote(text).lower()):
        tok = tok.strip("._-@")
        out.add(tok)
        out.update(p.strip("_-") for p in re.split(r"[.@]", tok))  # labels of dotted names, e-mail parts
    return out


@functools.lru_cache(maxsize=1)  # both variants of a case in a row: its documents are made once
def _documents(case: str) -> list[tuple[str, str, dict]]:
    if is_recorded(REPO / "corpus" / case):
        with tempfile.TemporaryDirectory() as tmp:
            return list(recorded_docs(load_recorded(REPO / "corpus" / case), REPO / "corpus", work_dir=Path(tmp)))
    return list(generate(load_case(REPO / "corpus" / case), scale=SCALE))


# Which names a variant learns does not depend on K, only their pseudonyms do: the recorded cases
# (40-60k events for the LSASS campaigns, ~40 s of re-keying each) are scanned on variant 1 only.
@pytest.mark.parametrize(("case", "k"), [(c, k) for c in CASES for k in (1, 2)] + [(c, 1) for c in RECORDED])
def test_no_entity_of_the_case_survives_in_its_variant(case: str, k: int) -> None:
    docs = _documents(case)
    entities = _entities(case, docs)
    transformed, known = variant_docs(k, docs)
    leaks: dict[str, str] = {}
    for _, doc_id, doc in transformed:
        text = json.dumps(doc, ensure_ascii=False)
        for word in _words(text) & entities:
            leaks.setdefault(word, f"{doc_id}: {text[:200]}")
    v = Variant(k)
    v.load_known(known)
    for path in sorted((REPO / "tasks").glob("task-*.json")):
        task = json.loads(path.read_text(encoding="utf-8"))
        if task["source_case"] == case:
            text = json.dumps(v.task(task), ensure_ascii=False)
            for word in _words(text) & entities:
                leaks.setdefault(word, f"{path.name}")
    assert not leaks, leaks
