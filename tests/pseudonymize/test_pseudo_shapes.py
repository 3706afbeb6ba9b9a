"""The per-shape compiled walkers give exactly what the generic walkers give."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pseudo_samples import documents

import pytest_soclab.pseudonymize.documents as documents_module
from pytest_soclab.pseudonymize import Pseudonymizer

KEY = b"shapes-test-key-0123456789abcd"
KEYS = [
    "host",
    "name",
    "ip",
    "user",
    "message",
    "source",
    "destination",
    "port",
    "geo",
    "city_name",
    "dns",
    "question",
    "answers",
    "data",
    "hash",
    "sha256",
    "event",
    "dataset",
    "process",
    "command_line",
    "args",
    "url",
    "full",
    "domain",
    "email",
    "subdomain",
    "related",
    "hosts",
    "id",
    "threat",
    "technique",
]
VALUES = [
    "web-01",
    "alice",
    "10.20.1.15",
    "185.220.101.47",
    "ssh alice@db-02",
    "evil-c2.xyz",
    "http://update-check.evil-c2.xyz/x",
    "T1105",
    "plain words",
    "",
    "alice@acme-widgets.com",
    "/home/bob/.ssh/id_rsa",
    "fe80::1",
    "WS-FIN-07",
]

leaf = st.one_of(st.sampled_from(VALUES), st.integers(0, 70000), st.booleans(), st.none())
tree = st.recursive(
    leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(KEYS), inner, max_size=5)
    ),
    max_leaves=20,
)
docs_strategy = st.lists(
    st.dictionaries(st.sampled_from(KEYS), tree, min_size=1, max_size=6), min_size=1, max_size=6
)


def _run(docs: list[dict[str, Any]], compile_after: int, mode: str, drop_geo: bool) -> tuple[Any, Any]:
    documents_module.COMPILE_AFTER = compile_after
    try:
        p = Pseudonymizer(KEY, drop_geo=drop_geo)
        batch = docs * 3  # shapes seen again and again: compiled from the second sighting on
        if mode == "marked":  # one walk: learn_marking, then transform_marked
            out = p.documents(json.loads(json.dumps(batch)), in_place=True, shared=False)
            return out, (sorted(p.known.bare), sorted(p.known.domains))
        p.learn_documents(copy.deepcopy(batch))
        if mode == "copy":
            out = p.documents(copy.deepcopy(batch), learn=False)
        else:
            out = p.documents(json.loads(json.dumps(batch)), learn=False, in_place=True, shared=False)
        return out, (sorted(p.known.bare), sorted(p.known.domains))
    finally:
        documents_module.COMPILE_AFTER = 2


@pytest.mark.parametrize("mode", ["copy", "in_place", "marked"])
@pytest.mark.parametrize("drop_geo", [False, True])
@settings(max_examples=60, deadline=None)
@given(docs=docs_strategy)
def test_compiled_walkers_equal_generic_ones(mode: str, drop_geo: bool, docs: list[dict[str, Any]]) -> None:
    generic = _run(docs, 10**9, mode, drop_geo)
    compiled = _run(docs, 1, mode, drop_geo)
    assert compiled == generic


@pytest.mark.parametrize("mode", ["copy", "in_place", "marked"])
def test_compiled_walkers_on_realistic_documents(mode: str) -> None:
    docs = json.loads(json.dumps(documents()))  # no shared objects
    assert _run(docs, 10**9, mode, False) == _run(docs, 1, mode, False)


@settings(max_examples=60, deadline=None)
@given(docs=docs_strategy)
def test_one_walk_equals_two(docs: list[dict[str, Any]]) -> None:
    """Learning with marks then transforming the marked leaves gives what learning then walking
    again in place gives."""
    assert _run(docs, 1, "marked", False) == _run(docs, 10**9, "in_place", False)
