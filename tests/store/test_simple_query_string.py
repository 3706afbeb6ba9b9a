"""simple_query_string as Lucene's SimpleQueryParser reads it: binary, left-associative operators.

The documents hold the words their ids name, so each expected set can be read off the query.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_soclab.store import EmbeddedBackend, build_database
from pytest_soclab.store.dsl.querystring import _simple_parse

DOCS = {"a": "alpha", "b": "bravo", "ab": "alpha bravo", "ac": "alpha charlie", "bc": "bravo charlie",
        "abc": "alpha bravo charlie", "c": "charlie", "ph": "audit policy failure", "rev": "policy audit failure",
        "hy": "foo-bar", "f": "foo"}  # fmt: skip
EVERY = set(DOCS)


@pytest.fixture(scope="module")
def backend(tmp_path_factory: pytest.TempPathFactory) -> EmbeddedBackend:
    path: Path = tmp_path_factory.mktemp("sqs") / "s.duckdb"
    build_database([("logs-sqs", i, {"@timestamp": "2024-01-01T00:00:00Z", "message": t}) for i, t in DOCS.items()], path)
    return EmbeddedBackend.open(path)


def hits(backend: EmbeddedBackend, query: str, **opts: str) -> set[str]:
    body = {"size": 100, "query": {"simple_query_string": {"query": query, "fields": ["message"], **opts}}}
    return {h["_id"] for h in backend.es_search("logs-sqs", body)["hits"]["hits"]}


def having(*words: str) -> set[str]:
    return {i for i, t in DOCS.items() if all(w in t.replace("-", " ").split() for w in words)}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("alpha bravo", having("alpha") | having("bravo")),  # the default operator, OR
        ("alpha +bravo", having("alpha", "bravo")),  # `+` is AND between what is left and right of it
        ("alpha bravo +charlie", (having("alpha") | having("bravo")) & having("charlie")),  # left-associative
        ("alpha +bravo | charlie", having("alpha", "bravo") | having("charlie")),
        ("alpha -bravo", having("alpha") | (EVERY - having("bravo"))),  # the documented surprise of OR
        ("alpha +-bravo", having("alpha") - having("bravo")),
        ("-alpha", EVERY - having("alpha")),
        ("--alpha", having("alpha")),  # two negations cancel
        ("alpha + | bravo", having("alpha", "bravo")),  # the first operator written counts
        ("+alpha", having("alpha")),  # an operator before any term is dropped
        ("alpha +(bravo | charlie)", having("alpha") & (having("bravo") | having("charlie"))),
        ('"audit policy" +failure', {"ph"}),
        ('"audit policy" failure', {"ph", "rev"}),
        ("foo-bar", {"hy", "f"}),  # analysed into two tokens, joined by the default operator
        ("()", set()),
        ("", set()),
    ],
)
def test_operators(backend: EmbeddedBackend, query: str, expected: set[str]) -> None:
    assert hits(backend, query) == expected


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("alpha bravo", having("alpha", "bravo")),
        ("alpha | bravo", having("alpha") | having("bravo")),
        ("alpha -bravo", having("alpha") - having("bravo")),
        ("alpha bravo | charlie", having("alpha", "bravo") | having("charlie")),
        ("foo-bar", {"hy"}),
    ],
)
def test_operators_with_and_as_the_default(backend: EmbeddedBackend, query: str, expected: set[str]) -> None:
    assert hits(backend, query, default_operator="and") == expected


def test_required_clauses_add_up_to_one_score_for_every_match(backend: EmbeddedBackend) -> None:
    body = {"size": 100, "query": {"simple_query_string": {"query": "alpha +bravo", "fields": ["message"]}}}
    res = backend.es_search("logs-sqs", body)["hits"]["hits"]
    assert {h["_score"] for h in res} == {2.0}


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(["alpha", "bravo", "+", "|", "-", "(", ")", '"', " ", "foo-bar", "~2", "al*"]),
                max_size=12).map("".join))
def test_any_string_is_a_query(backend: EmbeddedBackend, query: str) -> None:
    # simple_query_string never fails; and with AND, `(x) -zulu` matches what `x` does (zulu is in no
    # document), or every document when `x` holds no term at all (x without parentheses of its own,
    # which could close the group early)
    assert hits(backend, query) <= EVERY
    got = hits(backend, query, default_operator="and")
    if "(" not in query and ")" not in query:
        empty = not _simple_parse(query, True).clauses
        assert hits(backend, f"({query}) -zulu", default_operator="and") == (EVERY if empty else got)
