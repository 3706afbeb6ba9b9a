"""Shared fixtures: each case is generated once per session at a small scale."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from corpus_testlib import CORPUS, SMALL, Docs, case_ids

from pytest_soclab.corpus.generate import generate
from pytest_soclab.corpus.recipe import CaseRecipe, load_case


@pytest.fixture(scope="session")
def recipes() -> dict[str, CaseRecipe]:
    return {c: load_case(CORPUS / c) for c in case_ids()}


@pytest.fixture(scope="session")
def corpus_docs(recipes: dict[str, CaseRecipe]) -> Callable[[str], Docs]:
    cache: dict[str, Docs] = {}

    def get(case_id: str) -> Docs:
        if case_id not in cache:
            cache[case_id] = list(generate(recipes[case_id], scale=SMALL))
        return cache[case_id]

    return get


@pytest.fixture(scope="session")
def corpus_text(corpus_docs: Callable[[str], Docs]) -> Callable[[str], dict[str, list[str]]]:
    """Per case: data stream -> the JSON text of its documents."""
    cache: dict[str, dict[str, list[str]]] = {}

    def get(case_id: str) -> dict[str, list[str]]:
        if case_id not in cache:
            by_stream: dict[str, list[str]] = {}
            for stream, _id, doc in corpus_docs(case_id):
                by_stream.setdefault(stream, []).append(json.dumps(doc, ensure_ascii=False))
            cache[case_id] = by_stream
        return cache[case_id]

    return get
