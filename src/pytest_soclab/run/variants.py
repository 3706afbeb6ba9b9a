"""Variant K of a case and its tasks (`--soclab-variant=K`): see pseudonymize/variant.py.

The case library builds and caches the variant's store from these documents (sim/cases.py); a task
is transformed with what that build learned, so that its trigger and answer key name the variant's
entities and dates. Attack and benign scenarios run on the case as it is (variant 0).
"""

from __future__ import annotations

import time
from typing import Any

from pytest_soclab.models import Spec, Task
from pytest_soclab.pseudonymize import Variant
from pytest_soclab.sim import BuiltCase

Triple = tuple[str, str, dict[str, Any]]


def variant_docs(k: int, triples: list[Triple]) -> tuple[list[Triple], dict[str, Any]]:
    """Variant K of a case's documents, and the names it learned (keyed digests) for its tasks."""
    v = Variant(k)
    v.learn(doc for _, _, doc in triples)
    return list(v.documents(triples)), v.export_known()


def variant_spec(spec: Spec, case: BuiltCase) -> Spec:
    """The task as variant `case.variant` of it: entities re-keyed, dates shifted like the case's."""
    if case.variant == 0 or not isinstance(spec, Task):
        return spec
    v = Variant(case.variant)
    v.load_known(case.known)
    return Task.model_validate(v.task(spec.model_dump(mode="json", exclude_none=True)))


def time_variant_build(k: int, triples: list[Triple]) -> tuple[float, int]:
    """(seconds, documents) to transform one case's documents into variant K (bench/variant_bench.py)."""
    started = time.perf_counter()
    docs, _ = variant_docs(k, triples)
    return time.perf_counter() - started, len(docs)
