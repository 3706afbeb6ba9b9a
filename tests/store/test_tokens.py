"""The token tables (store/tokens.py) answer full-text queries as the regular expressions do.

Each query runs twice on one store: through the token tables, and with them hidden from the
engine (the regular expression over the text, the path overlaid documents take).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_soclab.store import EmbeddedBackend, build_database, tokens
from pytest_soclab.store.dsl import text
from pytest_soclab.store.engine import Engine

WORDS = ["lsass.exe", "process", "accessed", "logged", "on", "a", "b", "c:", "10.0.0.1", "don't", "Über", "x_y"]
SEPS = [" ", "  ", ".", ". ", ", ", ":", "\\", "-", "\n", "'", "(", ")"]


def _texts() -> st.SearchStrategy[str]:
    return st.lists(st.tuples(st.sampled_from(WORDS), st.sampled_from(SEPS)), max_size=8).map(
        lambda parts: "".join(w + s for w, s in parts)
    )


def _ids(res: dict[str, Any]) -> list[str]:
    return sorted(h["_id"] for h in res["hits"]["hits"])


def _both(backend: EmbeddedBackend, index: str, query: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    body = {"size": 100, "query": query}
    indexed = backend.es_search(index, body)
    with monkeypatch.context() as m:
        m.setattr(Engine, "token_relations", lambda self, info: {})
        plain = backend.es_search(index, body)
    return indexed, plain


@pytest.fixture(scope="module", params=["aggregated", "bitmaps"])
def corpus(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[EmbeddedBackend, list[str]]:
    """The same documents twice: every term's bitmap aggregated from its postings when a query
    runs, and every term's bitmap made at load (a real store's frequent terms)."""
    import random

    rng = random.Random(7)
    docs, texts = [], []
    for i in range(300):
        words = [rng.choice(WORDS) + rng.choice(SEPS) for _ in range(rng.randint(0, 12))]
        t = "".join(words)
        texts.append(t)
        many = [t, "".join(rng.choice(WORDS) + " " for _ in range(3))]
        docs.append(("logs-t", str(i), {"@timestamp": "2024-01-01T00:00:00Z", "message": t,
                                         "notes": {"text": many}}))  # fmt: skip
    path = tmp_path_factory.mktemp("tok") / "s.duckdb"
    with pytest.MonkeyPatch.context() as m:
        m.setattr(tokens, "BITMAP_MIN_POSTINGS", 1 if request.param == "bitmaps" else 1 << 16)
        build_database(docs, path, mappings={"logs-t": {"properties": {"notes.text": {"type": "text"}}}})
    backend = EmbeddedBackend.open(path)
    (info,) = [i for i in backend.engine.catalog.indices.values() if i.name == "logs-t"]
    assert bool(info.tokens["message"].frequent) == (request.param == "bitmaps")
    return backend, texts


def test_the_store_has_token_tables_for_its_text_fields(corpus: tuple[EmbeddedBackend, list[str]]) -> None:
    backend, _ = corpus
    (info,) = [i for i in backend.engine.catalog.indices.values() if i.name == "logs-t"]
    assert set(backend.engine.token_relations(info)) == {"message", "notes.text"}


@pytest.mark.parametrize("field", ["message", "notes.text"])
@pytest.mark.parametrize("query", ["lsass.exe", "process accessed", "on", "c", "10.0.0.1", "don't", "über", "x_y b"])
def test_match_is_answered_alike(corpus, field: str, query: str, monkeypatch: pytest.MonkeyPatch) -> None:
    backend, _ = corpus
    for op in ("or", "and"):
        indexed, plain = _both(backend, "logs-t", {"match": {field: {"query": query, "operator": op}}}, monkeypatch)
        assert indexed["hits"]["total"] == plain["hits"]["total"]
        assert [(h["_id"], h["_score"]) for h in indexed["hits"]["hits"]] == [
            (h["_id"], h["_score"]) for h in plain["hits"]["hits"]
        ]


@pytest.mark.parametrize("field", ["message", "notes.text"])
@pytest.mark.parametrize("phrase", ["process accessed", "logged on", "a b", "on on", "accessed lsass.exe process"])
@pytest.mark.parametrize("slop", [0, 1, 3])
def test_match_phrase_is_answered_alike(corpus, field: str, phrase: str, slop: int, monkeypatch: pytest.MonkeyPatch) -> None:
    backend, _ = corpus
    indexed, plain = _both(backend, "logs-t", {"match_phrase": {field: {"query": phrase, "slop": slop}}}, monkeypatch)
    assert _ids(indexed) == _ids(plain) and indexed["hits"]["total"] == plain["hits"]["total"]


def test_a_phrase_never_spans_two_values(corpus, monkeypatch: pytest.MonkeyPatch) -> None:
    backend, _ = corpus
    # "b" ends some first values and "a" starts no second value by construction only by chance:
    # what matters is that both paths agree, and that no hit joins the end of one value to the next
    indexed, plain = _both(backend, "logs-t", {"match_phrase": {"notes.text": {"query": "x_y lsass.exe", "slop": 2}}},
                           monkeypatch)  # fmt: skip
    assert _ids(indexed) == _ids(plain)


def test_query_string_is_answered_alike(corpus, monkeypatch: pytest.MonkeyPatch) -> None:
    backend, _ = corpus
    for q in ["message:(logged AND on)", 'message:"process accessed"', "message:lsass.exe OR message:b",
              "NOT message:process", 'NOT message:"logged on"', "message:absentword OR NOT message:absentword"]:
        indexed, plain = _both(backend, "logs-t", {"query_string": {"query": q}}, monkeypatch)
        assert _ids(indexed) == _ids(plain), q


def test_esql_match_uses_the_same_answers(corpus) -> None:
    backend, texts = corpus
    got = backend.esql_query('FROM logs-t | WHERE MATCH(message, "lsass.exe") | STATS n = COUNT(*)')
    assert got["values"] == [[sum(1 for t in texts if "lsass.exe" in text.tokenize(t))]]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(docs=st.lists(_texts(), min_size=1, max_size=12), query=_texts(), slop=st.integers(0, 2),
       at_load=st.booleans())
def test_random_texts_are_answered_alike(tmp_path: Path, docs: list[str], query: str, slop: int, at_load: bool,
                                         monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    path = tmp_path / f"h{abs(hash((tuple(docs), query, at_load)))}.duckdb"
    with monkeypatch.context() as m:  # at_load: every term's bitmap made at load, else at query time
        m.setattr(tokens, "BITMAP_MIN_POSTINGS", 1 if at_load else 1 << 16)
        build_database([("logs-h", str(i), {"message": t}) for i, t in enumerate(docs)], path)
    with EmbeddedBackend.open(path) as backend:
        for q in ({"match": {"message": query}}, {"match_phrase": {"message": {"query": query, "slop": slop}}},
                  {"bool": {"must_not": {"match_phrase": {"message": {"query": query, "slop": slop}}}}}):
            indexed, plain = _both(backend, "logs-h", q, monkeypatch)
            assert _ids(indexed) == _ids(plain), (q, docs)
        # and the tokens are the Python tokenizer's: a document matches a token it holds
        for i, t in enumerate(docs):
            for tok in text.tokenize(t)[:2]:
                res = backend.es_search("logs-h", {"size": 100, "query": {"match": {"message": tok}}})
                assert str(i) in _ids(res)


def test_a_store_of_the_older_format_tests_its_text_as_text() -> None:
    from pytest_soclab.store.catalog import IndexInfo

    # format 4 named one token table per column, without `nxt`: the phrase SQL of today would
    # fail on it, so its text columns go to the regular expressions instead
    old = {"name": "logs-t", "kind": "index", "backing": None, "table": "t0", "count": 3, "fields": {},
           "tokens": {"message": "t0__tok0"}}  # fmt: skip
    assert IndexInfo.from_json(old).tokens == {}
    new = IndexInfo.from_json({**old, "tokens": {"message": {"postings": "t0__tok0", "bitmaps": "t0__tok0__bits",
                                                              "frequent": ["a"]}}})  # fmt: skip
    assert new.tokens["message"].frequent == ["a"]


def test_bitmaps_are_fetched_once_and_the_cache_is_bounded(corpus, monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_soclab.store import engine as engine_mod

    backend, _ = corpus
    eng = backend.engine
    eng.memo.pop("bitmaps", None)
    calls: list[str] = []
    real = Engine.query

    def counting(self: Engine, sql: str, params: Any = None) -> Any:
        calls.append(sql)
        return real(self, sql, params)

    monkeypatch.setattr(Engine, "query", counting)
    body = {"size": 5, "query": {"match": {"message": "process"}}}
    first = backend.es_search("logs-t", body)
    fetched = [s for s in calls if "::BLOB" in s]
    assert len(fetched) == 1
    calls.clear()
    assert backend.es_search("logs-t", body)["hits"] == first["hits"]
    assert not [s for s in calls if "::BLOB" in s]
    # over the bound, the cache starts again rather than grow
    monkeypatch.setattr(engine_mod, "BITMAP_CACHE_BYTES", 1)
    backend.es_search("logs-t", {"size": 5, "query": {"match": {"message": "accessed"}}})
    assert len(eng.memo["bitmaps"]) == 1


@given(docs=st.integers(1, 70), chosen=st.sets(st.integers(0, 69)), n=st.integers(0, 80))
def test_a_bitmap_lists_counts_and_negates_its_documents(docs: int, chosen: set[int], n: int) -> None:
    import duckdb

    chosen = {d for d in chosen if d < docs}
    con = duckdb.connect()
    # the bytes DuckDB gives for a BIT of `docs` bits, left-padded to whole bytes
    blob = con.execute(f"SELECT bitstring_agg(d, 0, {docs - 1})::BLOB FROM unnest(?::INTEGER[]) AS t(d)",
                       [sorted(chosen)]).fetchone()[0] if chosen else None  # fmt: skip
    bits = tokens.Bits.from_blob(docs, blob)
    assert bits.count() == len(chosen)
    assert bits.first(n) == sorted(chosen)[:n]
    assert (~bits).first(docs) == sorted(set(range(docs)) - chosen)
    assert (bits & ~bits).count() == 0 and (bits | ~bits).count() == docs
