"""LOOKUP JOIN against an index: a left outer join on the key, the index's fields appended."""

from __future__ import annotations


def test_match_appends_the_lookup_fields(esql) -> None:  # type: ignore[no-untyped-def]
    cols, rows = esql('ROW title = "Lazy dogs" | LOOKUP JOIN notes ON title | KEEP title, views, created')
    assert cols == [("title", "keyword"), ("views", "long"), ("created", "date")]
    assert rows == [["Lazy dogs", 10, "2024-04-02T00:00:00.000Z"]]


def test_no_match_keeps_the_row_with_nulls(esql) -> None:  # type: ignore[no-untyped-def]
    _, rows = esql('ROW title = "nothing", n = 1 | LOOKUP JOIN notes ON title | KEEP title, n, views')
    assert rows == [["nothing", 1, None]]


def test_a_lookup_field_replaces_a_column_of_the_same_name(esql) -> None:  # type: ignore[no-untyped-def]
    cols, rows = esql('ROW title = "Lazy dogs", views = 1 | LOOKUP JOIN notes ON title | KEEP title, views')
    assert cols == [("title", "keyword"), ("views", "long")] and rows == [["Lazy dogs", 10]]


def test_every_row_joins_and_feeds_later_commands(esql) -> None:  # type: ignore[no-untyped-def]
    _, rows = esql("FROM notes | KEEP title | LOOKUP JOIN notes ON title | STATS c = COUNT(*) BY views | SORT views")
    assert rows == [[1, 3], [1, 10]]


def test_multi_valued_key_matches_nothing(esql, esql_warnings) -> None:  # type: ignore[no-untyped-def]
    q = 'ROW title = ["Lazy dogs", "x"] | LOOKUP JOIN notes ON title | KEEP views'
    assert esql(q)[1] == [[None]]
    assert esql_warnings(q)


def test_errors(esql_error) -> None:  # type: ignore[no-untyped-def]
    assert "Unknown column [t] in right side of join" in esql_error('ROW t = "x" | LOOKUP JOIN notes ON t').reason
    assert "Unknown column [zz] in left side of join" in esql_error('ROW t = "x" | LOOKUP JOIN notes ON zz').reason
    assert "is incompatible with right field" in esql_error("ROW title = 1 | LOOKUP JOIN notes ON title").reason
    assert "lookup mode" in esql_error('ROW title = "x" | LOOKUP JOIN logs-zeek.conn-default ON title').reason
    assert "Unknown index [nope]" in esql_error('ROW title = "x" | LOOKUP JOIN nope ON title').reason
    assert "without wildcards" in esql_error('ROW title = "x" | LOOKUP JOIN not* ON title').reason
