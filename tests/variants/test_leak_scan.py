"""The leak scan of issue 15: on variants 1 and 2 of every generated case, no entity of the case as
it is (host, address, person, the organisation's domain, the attacker's addresses, the file names
the intruder made up) is left in any document or in the case's tasks, in any of the forms a value
takes (as a word, a label of a dotted name, percent-encoded)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import unquote

import pytest

from pytest_soclab.corpus import is_recorded, load_case
from pytest_soclab.corpus.generate import generate
from pytest_soclab.models import Task, load_spec
from pytest_soclab.pseudonymize import Variant
from pytest_soclab.pseudonymize.artifacts import ArtifactNames
from pytest_soclab.run.variants import variant_docs

REPO = Path(__file__).resolve().parents[2]
CASES = sorted(p.name for p in (REPO / "corpus").iterdir() if (p / "case.yaml").is_file() and not is_recorded(p))
SCALE = 0.05
_TOKEN = re.compile(r"[\w.@-]+")


def _entities(case: str, docs: list[tuple[str, str, dict]]) -> set[str]:
    recipe = load_case(REPO / "corpus" / case)
    out = {h.name for h in recipe.hosts} | {ip for h in recipe.hosts for ip in h.ips}
    out |= {u.name for u in recipe.users if u.role != "service"}
    out.add(recipe.domain)
    for path in (REPO / "tasks").glob("task-*.json"):
        task = load_spec(path)
        if isinstance(task, Task) and task.source_case == case and task.ground_truth.attacker_ip:
            out.add(task.ground_truth.attacker_ip)
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


@pytest.mark.parametrize("k", [1, 2])
@pytest.mark.parametrize("case", CASES)
def test_no_entity_of_the_case_survives_in_its_variant(case: str, k: int) -> None:
    docs = list(generate(load_case(REPO / "corpus" / case), scale=SCALE))
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
