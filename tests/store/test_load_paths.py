"""The fast load path (per-shape extractors, typed Arrow columns, IPs parsed once per address)
gives the same store as the reference path that flattens and coerces document by document."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from pytest_soclab.store import build as build_mod
from pytest_soclab.store.embedded import EmbeddedBackend, build_database
from pytest_soclab.store.shapes import ShapeExtractor, Unsupported

from store_testdata import DOCS

Doc = tuple[str, str, dict[str, Any]]


def _edge_docs(conflict: bool = False) -> list[Doc]:
    """Documents that test each way a shape, a column or a value can differ (`conflict`: also a
    field that is a list in some documents and a scalar in others, which only the reference
    path takes)."""
    ds = "logs-edge.events-default"
    out: list[Doc] = []
    for i in range(40):
        ts = f"2024-05-01T10:{i % 60:02d}:{(i * 7) % 60:02d}.{i:03d}Z"
        doc: dict[str, Any] = {"@timestamp": ts, "host": {"name": f"h{i % 3}"}, "event": {"category": ["network"]}}
        if i % 2:
            doc["tags"] = ["b", "a", "b"] if i % 4 == 1 else []  # duplicates sorted away; [] is no value
        if i % 3 == 0:
            doc["source"] = {"ip": ["10.0.0.1", "::ffff:10.0.0.1", "bad-ip"], "port": i}
        elif i % 3 == 1:
            doc["destination"] = {"ip": "fe80::1" if i % 2 else "2001:db8::5", "port": None}
        if i % 5 == 0:
            doc["dns"] = {"answers": [{"name": "a.example", "ttl": 30}, {"name": "b.example", "data": "1.2.3.4"}]}
        if i % 7 == 0:
            doc["labels"] = {"score": 1 if i % 2 else 2.5, "flag": True}  # int and float in one column
        if i % 11 == 0:
            doc["user"] = None  # a shape with None where others have an object
        elif i % 11 == 1:
            doc["user"] = {"name": "alice", "id": 7}  # a number in a keyword field
        if i == 13:
            doc["@timestamp"] = "not a date"
        if i == 17 and conflict:
            doc["event"] = {"category": "network"}  # a scalar where other documents have a list
        out.append((ds, f"e{i}", doc))
    out.append(("plain-index", "x1", {"title": "Quick fox", "n": 1, "when": "2024-01-01T00:00:00Z"}))
    out.append(("plain-index", "x2", {"title": "Lazy dog", "n": 2.5, "when": "2024-01-02T00:00:00Z", "extra": {"k": "v"}}))
    out.append(("plain-index", "x3", {"title": "c", "n": None, "tags": ["a", "b"]}))
    return out


def _generated_docs() -> list[Doc]:
    from pytest_soclab.corpus.generate import generate
    from pytest_soclab.corpus.recipe import find_case, load_case

    corpus = Path(__file__).resolve().parents[2] / "corpus"
    recipe = load_case(find_case(corpus, "case-01-recon"))
    docs = list(generate(recipe, scale=0.1))
    random.Random(3).shuffle(docs)  # out of time order: the sort at load must put them back
    return docs


def _dump(backend: EmbeddedBackend) -> str:
    """Every answer that depends on the stored rows, as bytes to compare."""
    out: list[Any] = []
    for row in backend.list_indices("*"):
        out.append({k: v for k, v in row.items() if k not in ("store.size", "pri.store.size", "dataset.size")})
    indices = sorted(r["index"] for r in backend.list_indices("*"))
    for index in indices:
        out.append(backend.get_mappings(index))
        hits = backend.es_search(index, {"size": 10000, "sort": ["_doc"], "track_total_hits": True})
        hits.pop("took", None)
        out.append(hits)
        res = backend.esql_query(f'FROM "{index}" METADATA _id | SORT _id | LIMIT 10000')
        res.pop("took", None)
        out.append(res)
    return json.dumps(out, sort_keys=True, default=str)


def _reference_chunk(self: build_mod.TableBuilder, seq0: int) -> build_mod.Chunk:
    raise build_mod._Fallback


def _build_both(docs: list[Doc], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, Any], dict[str, Any], str, str]:
    fast_info = build_database(docs, tmp_path / "fast.duckdb")
    with monkeypatch.context() as m:
        m.setattr(build_mod.TableBuilder, "_arrow_chunk", _reference_chunk)
        ref_info = build_database(docs, tmp_path / "ref.duckdb")
    with EmbeddedBackend.open(tmp_path / "fast.duckdb") as fast, EmbeddedBackend.open(tmp_path / "ref.duckdb") as ref:
        return fast_info, ref_info, _dump(fast), _dump(ref)


@pytest.mark.parametrize("name", ["testdata", "edge", "conflict", "corpus"])
def test_fast_path_answers_like_the_reference_path(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    docs = {"testdata": lambda: list(DOCS), "edge": _edge_docs, "conflict": lambda: _edge_docs(True),
            "corpus": _generated_docs}[name]()  # fmt: skip
    fast_info, ref_info, fast, ref = _build_both(docs, tmp_path, monkeypatch)
    assert fast == ref
    for index, info in fast_info["indices"].items():
        assert info["malformed"] == ref_info["indices"][index]["malformed"], index
        assert ref_info["indices"][index]["fast_chunks"] == 0
    fast_indices = {n for n, i in fast_info["indices"].items() if i["fast_chunks"]}
    if name == "conflict":
        assert "logs-edge.events-default" not in fast_indices
    elif name == "corpus":  # arrays of arrays (the alerts' threat.technique.subtechnique) are the reference path's
        assert fast_indices == set(fast_info["indices"]) - {".alerts-security.alerts-default"}
    else:
        assert fast_indices == set(fast_info["indices"])


def test_edge_values_are_stored_as_elasticsearch_keeps_them(tmp_path: Path) -> None:
    build_database(_edge_docs(), tmp_path / "e.duckdb")
    with EmbeddedBackend.open(tmp_path / "e.duckdb") as b:
        res = b.esql_query('FROM logs-edge.events-default METADATA _id | WHERE _id IN ("e0", "e1", "e3", "e5") '
                           "| SORT _id | KEEP _id, tags, source.ip, destination.ip, dns.answers.name")  # fmt: skip
        rows = {r[0]: r[1:] for r in res["values"]}
        assert rows["e0"] == [None, "10.0.0.1", None, ["a.example", "b.example"]]  # an IPv4 and its mapped form: one value
        assert rows["e1"] == [["a", "b"], None, "fe80::1", None]
        assert rows["e3"][0] is None  # an empty array is no value
        info = build_database(_edge_docs(), tmp_path / "f.duckdb")
        assert info["indices"]["logs-edge.events-default"]["malformed"] == {"@timestamp": 1, "source.ip": 14}


def test_inferred_path_is_the_fallback_for_unusual_shapes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """When the shape extractors give up, pyarrow's inference still takes the chunk."""

    def give_up(self: ShapeExtractor, docs: list[Any]) -> list[tuple[Any, ...]]:
        raise Unsupported

    docs = _edge_docs()
    monkeypatch.setattr(ShapeExtractor, "rows", give_up)
    build_database(docs, tmp_path / "inferred.duckdb")
    monkeypatch.setattr(build_mod.TableBuilder, "_arrow_chunk", _reference_chunk)
    build_database(docs, tmp_path / "ref.duckdb")
    with EmbeddedBackend.open(tmp_path / "inferred.duckdb") as a, EmbeddedBackend.open(tmp_path / "ref.duckdb") as b:
        assert _dump(a) == _dump(b)


def test_shape_extractor_rejects_what_it_cannot_read() -> None:
    ex = ShapeExtractor(frozenset({"threat.enrichments"}))
    rows = ex.rows([{"a": {"b": 1}, "c": "x"}, {"a": {"b": 2, "z": 3}, "c": "y"}, {"a": "flat", "c": "z"}])
    assert list(ex.columns) == ["a.b", "c", "a.z", "a"]
    assert [r for r in ex.columns_of(rows)] == [(1, 2, None), ("x", "y", "z"), (None, 3, None), (None, None, "flat")]
    for bad in ([1, 2], {"a.b": 1, "a": {"b": 2}}, {"threat": {"enrichments": [{"x": 1}]}}, {1: "x"}):
        with pytest.raises(Unsupported):
            ShapeExtractor(frozenset({"threat.enrichments"})).rows([bad])
