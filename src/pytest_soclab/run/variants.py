"""Variant K of a case and its tasks (`--soclab-variant=K`): see pseudonymize/variant.py.

The case library builds and caches the variant's store from these documents (sim/cases.py); a task
is transformed with what that build learned, so that its trigger and answer key name the variant's
entities and dates. An attack or benign scenario is transformed the same way: its planted documents
are completed as the case as it is would have them, then re-keyed and time-shifted whole, and its
oracles and action references name the variant's entities.
"""

from __future__ import annotations

import dataclasses
import time
from functools import cache
from pathlib import Path
from typing import Any

from pytest_soclab.corpus import (
    RecordedCase, estate_from_recipe, expand_planted, find_case, is_recorded, load_case, load_recorded, with_overrides,
)
from pytest_soclab.errors import SoclabError
from pytest_soclab.models import AttackScenario, BenignScenario, Estate, Spec, Task
from pytest_soclab.pseudonymize import Variant
from pytest_soclab.pseudonymize.variant import shift_json
from pytest_soclab.sim import BuiltCase

Triple = tuple[str, str, dict[str, Any]]


def variant_docs(k: int, triples: list[Triple]) -> tuple[list[Triple], dict[str, Any]]:
    """Variant K of a case's documents, and the names it learned (keyed digests) for its tasks."""
    v = Variant(k)
    v.learn(doc for _, _, doc in triples)
    return list(v.documents(triples)), v.export_known()


@cache
def recipe_of(corpus_dir: Path, case_id: str) -> Any:
    """The recipe of a generated case (None for a prebuilt or recorded one), loaded once."""
    case_dir = Path(corpus_dir) / case_id
    if not (case_dir / "case.yaml").is_file() or is_recorded(case_dir):
        return None
    return load_case(find_case(corpus_dir, case_id))


@cache
def recorded_of(corpus_dir: Path, case_id: str) -> RecordedCase | None:
    """The case file of a recorded case (None for a generated or prebuilt one), loaded once."""
    case_dir = Path(corpus_dir) / case_id
    return load_recorded(case_dir) if is_recorded(case_dir) else None


def _variant(case: BuiltCase) -> Variant:
    v = Variant(case.variant)
    v.load_known(case.known)
    return v


def variant_case(case: BuiltCase, recipe: Any, recorded: RecordedCase | None = None) -> BuiltCase:
    """Variant K of a generated case with the estate the recipe says (tiers, roles, tags, the
    business-critical addresses the guard protects), or of a recorded case with what its case file
    says, re-keyed like the variant's data: derived from the data alone, every host would be tier 2
    and the guard would protect nothing. A recorded case's declared window moves with its dates."""
    if case.variant == 0:
        return case
    v = _variant(case)
    if recipe is not None:
        estate = Estate.model_validate(v.estate(estate_from_recipe(recipe).model_dump(mode="json")))
        return dataclasses.replace(case, estate=estate)
    if recorded is None:
        return case
    names = v.estate({
        "hosts": [h.model_dump() for h in recorded.hosts], "users": [u.model_dump() for u in recorded.users],
        "allowed_domains": recorded.allowed_domains, "business_critical_ips": recorded.business_critical_ips,
    })  # fmt: skip
    keyed = recorded.model_validate({**recorded.model_dump(), **names})
    window = case.window
    if recorded.window is not None:
        window = shift_json({"gte": _iso(recorded.window.start), "lte": _iso(recorded.window.end)}, v.days)
    return dataclasses.replace(case, estate=with_overrides(case.estate, keyed), window=window)


def _iso(value: Any) -> str:
    return value.isoformat().replace("+00:00", "Z")


def variant_spec(spec: Spec, case: BuiltCase, recipe: Any = None) -> Spec:
    """The task or scenario as variant `case.variant` of it: entities re-keyed, dates shifted like
    the case's. `recipe` (the case's, as it is) completes a scenario's planted documents."""
    if case.variant == 0:
        return spec
    v = _variant(case)
    if isinstance(spec, Task):
        return Task.model_validate(v.task(spec.model_dump(mode="json", exclude_none=True)))
    if isinstance(spec, (AttackScenario, BenignScenario)):
        data = spec.model_dump(mode="json", exclude_none=True)
        if spec.planted:
            if recipe is None:
                raise SoclabError(f"{spec.id}: variant {case.variant} of case {case.id} needs its recipe to complete "
                                  "the planted documents")  # fmt: skip
            full = expand_planted(recipe, [(p.index, p.doc) for p in spec.planted])
            data["planted"] = [{**({"id": p.id} if p.id else {}), "index": index, "doc": doc}
                               for (index, _, doc), p in zip(full, spec.planted)]  # fmt: skip
        return type(spec).model_validate(v.scenario(data))
    return spec


def time_variant_build(k: int, triples: list[Triple]) -> tuple[float, int]:
    """(seconds, documents) to transform one case's documents into variant K (bench/variant_bench.py)."""
    started = time.perf_counter()
    docs, _ = variant_docs(k, triples)
    return time.perf_counter() - started, len(docs)
