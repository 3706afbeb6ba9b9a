"""NDJSON files read by DuckDB's JSON reader (store/native.py) give the same store as the same
files read line by line in Python, and every file the native reader cannot take exactly goes
to the Python path."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_soclab.errors import ScenarioFileError
from pytest_soclab.store import native
from pytest_soclab.store.embedded import EmbeddedBackend, build_database, read_ndjson

from store_testdata import DOCS
from test_load_paths import _dump, _edge_docs, _generated_docs

Doc = tuple[str, str, dict[str, Any]]


def _write_hits(docs: list[Doc], folder: Path) -> dict[str, Path]:
    """One `{"_id", "_source"}` file per index, as `soclab corpus build` writes them."""
    folder.mkdir(parents=True, exist_ok=True)
    lines: dict[str, list[str]] = defaultdict(list)
    for index, doc_id, source in docs:
        lines[index].append(json.dumps({"_id": doc_id, "_source": source}))
    files = {}
    for n, (index, text) in enumerate(sorted(lines.items())):
        files[index] = folder / f"i{n}.ndjson"
        files[index].write_text("\n".join(text) + "\n", encoding="utf-8")
    return files


def _python_only(*args: Any, **kwargs: Any) -> bool:
    return False


def _both(files: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, Any], dict[str, Any]]:
    """Build the files natively where possible and in Python only; the stores answer alike."""
    got = build_database((), tmp_path / "native.duckdb", files=files)
    with monkeypatch.context() as m:
        m.setattr(native, "read_native", _python_only)
        ref = build_database((), tmp_path / "python.duckdb", files=files)
    with EmbeddedBackend.open(tmp_path / "native.duckdb") as a, EmbeddedBackend.open(tmp_path / "python.duckdb") as b:
        assert _dump(a) == _dump(b)
    for index, info in got["indices"].items():
        assert info["malformed"] == ref["indices"][index]["malformed"], index
        assert info["docs"] == ref["indices"][index]["docs"], index
        assert not ref["indices"][index]["native"]
    return got, ref


def _native_indices(info: dict[str, Any]) -> set[str]:
    return {name for name, i in info["indices"].items() if i["native"]}


@pytest.mark.parametrize("name", ["testdata", "edge", "conflict", "corpus"])
def test_native_reader_answers_like_the_python_reader(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    docs = {"testdata": lambda: list(DOCS), "edge": _edge_docs, "conflict": lambda: _edge_docs(True),
            "corpus": _generated_docs}[name]()  # fmt: skip
    files = _write_hits(docs, tmp_path / "files")
    got, _ = _both(files, tmp_path, monkeypatch)
    taken = _native_indices(got)
    # plain-index's `n` is 1 in one document and 2.5 in another (dynamic mapping goes by the
    # first, which a float column no longer tells); the conflict case adds a field that is a
    # list in some documents and a scalar in others
    if name == "testdata":
        assert taken == set(files)
    elif name == "edge":
        assert taken == {"logs-edge.events-default"}
    elif name == "conflict":
        assert taken == set()
    else:  # the alerts hold arrays of arrays
        assert taken == set(files) - {".alerts-security.alerts-default"}
        assert len(taken) >= 5


def test_native_store_equals_the_store_built_from_documents(tmp_path: Path) -> None:
    files = _write_hits(list(DOCS), tmp_path / "files")
    build_database((), tmp_path / "n.duckdb", files=files)
    build_database(list(DOCS), tmp_path / "d.duckdb")
    with EmbeddedBackend.open(tmp_path / "n.duckdb") as a, EmbeddedBackend.open(tmp_path / "d.duckdb") as b:
        assert _dump(a) == _dump(b)


GIVE_UP = {
    "mixed types": ['{"_id": "a", "_source": {"x": "1"}}', '{"_id": "b", "_source": {"x": 2}}'],
    "int then float": ['{"_id": "a", "_source": {"n": 1}}', '{"_id": "b", "_source": {"n": 1.5}}'],
    "int then bool": ['{"_id": "a", "_source": {"x": 1}}', '{"_id": "b", "_source": {"x": true}}'],
    "keys differing in case": ['{"_id": "a", "_source": {"user": {"name": "x", "Name": "y"}}}'],
    "integer beyond 64 bits": ['{"_id": "a", "_source": {"n": 18446744073709551616}}', '{"_id": "b", "_source": {"n": 1.5}}'],
    "big integer alone": ['{"_id": "a", "_source": {"n": 9223372036854775808}}'],
    "bulk format": ['{"index": {"_id": "a"}}', '{"x": 1}'],
    "bare sources": ['{"x": 1}', '{"x": 2}'],
    "a line without _source": ['{"_id": "a", "_source": {"x": 1}}', '{"_id": "b", "x": 2}'],
    "an empty id": ['{"_id": "", "_source": {"x": 1}}'],
    "a numeric id": ['{"_id": 5, "_source": {"x": 1}}'],
    "list and scalar": ['{"_id": "a", "_source": {"t": ["x"]}}', '{"_id": "b", "_source": {"t": "y"}}'],
    "array of arrays": ['{"_id": "a", "_source": {"t": [[1, 2]]}}'],
    "dotted and nested": ['{"_id": "a", "_source": {"a.b": 1, "a": {"b": 2}}}'],
}


@pytest.mark.parametrize("case", sorted(GIVE_UP))
def test_what_the_native_reader_does_not_take_goes_to_python(case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "docs.ndjson"
    path.write_text("\n".join(GIVE_UP[case]) + "\n", encoding="utf-8")
    got, _ = _both({"idx": path}, tmp_path, monkeypatch)
    assert not _native_indices(got)
    assert got["indices"]["idx"]["docs"] == len(list(read_ndjson("idx", path)))


def test_native_reader_takes_timestamps_and_numbers_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """DuckDB would parse date-like strings: the mapping decides, as for the Python reader."""
    lines = [
        {"_id": "a", "_source": {"@timestamp": "2024-05-01T10:00:00Z", "when": "2024-05-01", "code": "4624",
                                 "n": 1.5e-3, "f": 0.1, "ok": True, "tags": [], "msg": "x\u0000y \u00e9"}},
        {"_id": "b", "_source": {"@timestamp": "2024-05-01T10:00:01.5+02:00", "when": "2024-05-02", "code": "4625",
                                 "n": 2.5, "f": -3.25, "ok": False, "tags": ["b", "a", "a"], "msg": None}},
    ]  # fmt: skip
    path = tmp_path / "docs.ndjson"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    got, _ = _both({"logs-x-default": path}, tmp_path, monkeypatch)
    assert _native_indices(got) == {"logs-x-default"}


def test_a_malformed_line_is_reported_by_the_python_reader(tmp_path: Path) -> None:
    path = tmp_path / "docs.ndjson"
    path.write_text('{"_id": "a", "_source": {"x": 1}}\n{"_id": "b", "_source": {"x": \n', encoding="utf-8")
    with pytest.raises(ScenarioFileError) as err:
        build_database((), tmp_path / "s.duckdb", files={"idx": path})
    assert "line 2" in str(err.value)


def test_a_missing_file_is_a_file_error(tmp_path: Path) -> None:
    with pytest.raises(ScenarioFileError, match="nope.ndjson"):
        build_database((), tmp_path / "s.duckdb", files={"idx": tmp_path / "nope.ndjson"})


def test_an_empty_file_is_an_empty_index(tmp_path: Path) -> None:
    path = tmp_path / "empty.ndjson"
    path.write_text("", encoding="utf-8")
    info = build_database((), tmp_path / "s.duckdb", files={"idx": path})
    assert info["indices"]["idx"]["docs"] == 0


# Values of every JSON type, so that fields mix types across documents.
_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**65), 2**65), st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["a", "B", "10.0.0.1", "::1", "2024-05-01T10:00:00Z", "1", "0.5", "true", ""]),
)  # fmt: skip
_values = st.one_of(_scalars, st.lists(_scalars, max_size=3), st.dictionaries(st.sampled_from(["a", "b"]), _scalars, max_size=2))
_fields = st.sampled_from(["@timestamp", "host.name", "source.ip", "process.pid", "event.code", "labels.x", "custom", "n"])


def _nest(flat: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for path, value in flat.items():
        head, _, tail = path.partition(".")
        if tail:
            sub = out.setdefault(head, {})
            if isinstance(sub, dict):
                sub[tail] = value
        else:
            out.setdefault(head, value)
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(sources=st.lists(st.dictionaries(_fields, _values, max_size=5), min_size=1, max_size=6))
def test_any_documents_load_alike_through_either_reader(
    sources: list[dict[str, Any]], tmp_path_factory: pytest.TempPathFactory
) -> None:
    tmp = tmp_path_factory.mktemp("prop")
    docs = [("logs-prop-default", f"d{i}", _nest(s)) for i, s in enumerate(sources)]
    files = _write_hits(docs, tmp / "files")
    with pytest.MonkeyPatch.context() as mp:
        _both(files, tmp, mp)


# One JSON type per field (values still vary, nulls and missing fields included): the
# documents the native reader takes.
_TYPED = {
    "str": st.sampled_from(["a", "B", "10.0.0.1", "::1", "not-an-ip", "2024-05-01T10:00:00Z", "1", "0.5", ""]),
    "int": st.integers(-(2**53), 2**53),
    "float": st.floats(allow_nan=False, allow_infinity=False, min_value=-1e15, max_value=1e15).filter(lambda x: not x.is_integer()),
    "bool": st.booleans(),
}
_KINDS = st.sampled_from([*_TYPED, "list", "obj"])


def _typed_value(kind: str, item: str) -> st.SearchStrategy[Any]:
    if kind == "list":
        return st.lists(_TYPED[item], max_size=3)
    if kind == "obj":
        return st.fixed_dictionaries({}, optional={"a": _TYPED[item], "b": _TYPED["str"]})
    return _TYPED[kind]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(kinds=st.dictionaries(_fields, st.tuples(_KINDS, st.sampled_from(sorted(_TYPED))), min_size=1, max_size=5), data=st.data())
def test_consistently_typed_documents_load_natively_and_alike(
    kinds: dict[str, tuple[str, str]], data: st.DataObject, tmp_path_factory: pytest.TempPathFactory
) -> None:
    sources = data.draw(st.lists(
        st.fixed_dictionaries({}, optional={f: st.one_of(st.none(), _typed_value(k, i)) for f, (k, i) in kinds.items()}),
        min_size=1, max_size=6,
    ))  # fmt: skip
    tmp = tmp_path_factory.mktemp("typed")
    docs = [("logs-prop-default", f"d{i}", _nest(s)) for i, s in enumerate(sources)]
    files = _write_hits(docs, tmp / "files")
    with pytest.MonkeyPatch.context() as mp:
        _both(files, tmp, mp)


@pytest.mark.parametrize("ms", [-62_135_596_800_001, 253_402_300_800_000])
def test_a_date_outside_years_1_to_9999_is_malformed_on_both_paths(ms: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by the property test above: DuckDB held epoch millis before year 1, Python cannot."""
    path = tmp_path / "docs.ndjson"
    path.write_text(json.dumps({"_id": "a", "_source": {"@timestamp": ms, "n": 1}}) + "\n", encoding="utf-8")
    got, _ = _both({"logs-x-default": path}, tmp_path, monkeypatch)
    assert _native_indices(got) == {"logs-x-default"}
