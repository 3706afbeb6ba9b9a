"""FROM leaves out the columns a pipeline ended by STATS or KEEP never names (esql/sources.py:
needed_columns). Every answer, and every error, must be what the whole column set gives."""

from __future__ import annotations

from typing import Any

import pytest
from store_testdata import CONN, PROC

from pytest_soclab.errors import EsError
from pytest_soclab.store.esql import sources

QUERIES = [
    f"FROM {PROC} | STATS n = COUNT(*) BY host.name | SORT host.name",
    f"FROM {PROC} | WHERE process.name == \"cmd.exe\" | STATS n = COUNT(*), u = COUNT_DISTINCT(user.name)",
    f"FROM {PROC} | EVAL h = TO_UPPER(host.name) | STATS n = COUNT(*) BY h | SORT h",
    f"FROM {PROC} | KEEP host.*, @timestamp | SORT @timestamp | LIMIT 3",
    f"FROM {PROC} | KEEP process.* | LIMIT 2",
    f"FROM {PROC} | RENAME host.name AS h | KEEP h | SORT h | LIMIT 2",
    f"FROM {PROC} | DROP host.* | KEEP user.name | LIMIT 1",
    f"FROM {PROC} | DROP nomatch* | STATS n = COUNT(*)",
    f"FROM {PROC} | DROP host.* | STATS n = COUNT(*) BY host.name",
    f"FROM {PROC} | STATS n = COUNT(*) BY nosuchfield",
    f"FROM {PROC} | KEEP nosuchfield",
    f"FROM {PROC} | MV_EXPAND tags | STATS n = COUNT(*) BY tags | SORT tags",
    f"FROM {PROC} | DISSECT process.command_line \"%{{a}} %{{b}}\" | STATS n = COUNT(*) BY a | SORT a",
    f"FROM {PROC}, {CONN} | STATS n = COUNT(*) BY event.dataset | SORT event.dataset",
    f"FROM {PROC} | INLINE STATS n = COUNT(*) BY host.name | KEEP host.name, n | SORT host.name | LIMIT 2",
    f"FROM {PROC} METADATA _index | STATS n = COUNT(*) BY _index",
    f"FROM {PROC} | WHERE MATCH(process.command_line, \"powershell\") | STATS n = COUNT(*)",
]


def _answer(backend: Any, query: str) -> Any:
    try:
        res = dict(backend.esql_query(query))
        res.pop("took", None)
        return res
    except EsError as exc:
        return ("error", exc.status, exc.type, exc.reason)


@pytest.mark.parametrize("query", QUERIES)
def test_pruned_from_answers_as_the_whole_column_set(backend: Any, query: str, monkeypatch: pytest.MonkeyPatch) -> None:
    pruned = _answer(backend, query)
    monkeypatch.setattr(sources, "needed_columns", lambda commands: None)
    assert pruned == _answer(backend, query)


def test_a_stats_pipeline_reads_only_the_columns_it_names(backend: Any) -> None:
    from pytest_soclab.store.esql.parser import parse

    query = parse(f"FROM {PROC} | WHERE process.name == \"cmd.exe\" | STATS n = COUNT(*) BY host.name")
    needed = sources.needed_columns(query.commands)
    assert needed is not None and needed("host.name") and needed("process.name") and not needed("user.name")
    assert sources.needed_columns(parse(f"FROM {PROC} | WHERE process.name == \"x\" | LIMIT 5").commands) is None
