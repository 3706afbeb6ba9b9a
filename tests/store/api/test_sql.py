"""POST /_sql (Elasticsearch SQL) through the official client: SELECT, WHERE, GROUP BY, HAVING,
ORDER BY, LIMIT, MATCH, QUERY, CIDR_MATCH, HISTOGRAM, date and string functions, formats and cursors."""

from __future__ import annotations

import pytest
from elasticsearch import ApiError, Elasticsearch, NotFoundError
from store_testdata import CONN, PROC

pytest.importorskip("sqlglot", reason="the SQL endpoint needs sqlglot (a dependency of the package)")


def test_select_where_order_limit(es: Elasticsearch) -> None:
    res = es.sql.query(query=f'SELECT "@timestamp", process.name FROM {PROC} WHERE host.name = \'web-01\' '
                             'AND process.pid > 100 ORDER BY "@timestamp" LIMIT 2')  # fmt: skip
    assert res["columns"] == [{"name": "@timestamp", "type": "datetime"}, {"name": "process.name", "type": "keyword"}]
    assert res["rows"] == [["2024-05-01T10:05:00.000Z", "curl"], ["2024-05-01T10:06:00.000Z", "sh"]]
    assert "cursor" not in res


def test_group_by_having_and_aggregates(es: Elasticsearch) -> None:
    res = es.sql.query(query=f"SELECT host.name, COUNT(*) AS c FROM {PROC} GROUP BY host.name ORDER BY c DESC, host.name")
    assert res["rows"] == [["web-01", 4], ["db-01", 2], ["ws-07", 2]]
    res = es.sql.query(query=f"SELECT user.name AS u, COUNT(*) FROM {PROC} GROUP BY u HAVING COUNT(*) > 2")
    assert res["columns"][1] == {"name": "COUNT(*)", "type": "long"} and res["rows"] == [["www-data", 4]]
    res = es.sql.query(query=f"SELECT COUNT(DISTINCT host.name) AS n, MAX(process.pid) AS m, AVG(process.pid) AS a FROM {PROC}")
    assert res["rows"] == [[3, 301, 176.0]]


def test_full_text_and_ip_functions(es: Elasticsearch) -> None:
    assert es.sql.query(query="SELECT title FROM notes WHERE MATCH(body, 'fox')")["rows"] == [["Quick brown fox"]]
    assert len(es.sql.query(query="SELECT title FROM notes WHERE QUERY('lazy')")["rows"]) == 2
    res = es.sql.query(query=f"SELECT destination.ip, SUM(network.bytes) AS b FROM {CONN} "
                             "WHERE CIDR_MATCH(destination.ip, '198.51.100.0/24') GROUP BY destination.ip")  # fmt: skip
    assert res["rows"] == [["198.51.100.7", 95420]]


def test_histogram_dates_and_numbers(es: Elasticsearch) -> None:
    res = es.sql.query(query=f'SELECT HISTOGRAM("@timestamp", INTERVAL 1 DAY) AS d, COUNT(*) AS c FROM {PROC} GROUP BY d ORDER BY d')
    assert res["rows"] == [["2024-05-01T00:00:00.000Z", 5], ["2024-05-02T00:00:00.000Z", 3]]
    res = es.sql.query(query=f"SELECT HISTOGRAM(network.bytes, 1000) AS h, COUNT(*) AS c FROM {CONN} GROUP BY h ORDER BY h")
    assert res["rows"][0] == [0.0, 2]


def test_date_and_string_functions(es: Elasticsearch) -> None:
    res = es.sql.query(query=f'SELECT YEAR("@timestamp") AS y, UPPER(host.name) AS h, LENGTH(process.name) AS l, '
                             f"SUBSTRING(process.name, 1, 2) AS s, CONCAT(host.name, '!') AS c FROM {PROC} "
                             'ORDER BY "@timestamp" LIMIT 1')  # fmt: skip
    assert res["rows"] == [[2024, "WEB-01", 4, "ba", "web-01!"]]
    res = es.sql.query(query=f"SELECT process.name FROM {PROC} WHERE process.name LIKE 'b%' AND "
                             "\"@timestamp\" > CAST('2024-05-02T12:30:00Z' AS DATETIME) - INTERVAL 1 DAY")  # fmt: skip
    assert res["rows"] == [["bash"], ["bash"]]


def test_formats(es: Elasticsearch) -> None:
    text = es.sql.query(query="SELECT title, views FROM notes ORDER BY views", format="txt")
    lines = text.splitlines()
    assert lines[0].split("|")[0].strip() == "title" and set(lines[1]) <= {"-", "+"}
    assert lines[2].startswith("Quick brown fox") and lines[2].split("|")[1].strip() == "3"
    assert es.sql.query(query="SELECT title, views FROM notes ORDER BY views", format="csv") == \
        "title,views\r\nQuick brown fox,3\r\nLazy dogs,10\r\n"  # fmt: skip
    assert es.sql.query(query="SELECT views FROM notes ORDER BY views", format="tsv") == "views\n3\n10\n"


def test_cursors_page_through_the_rows(es: Elasticsearch) -> None:
    res = es.sql.query(query=f'SELECT process.pid FROM {PROC} ORDER BY process.pid', fetch_size=3)
    rows = list(res["rows"])
    assert len(rows) == 3 and res["cursor"]
    while "cursor" in res:
        res = es.sql.query(cursor=res["cursor"])
        assert "columns" not in res
        rows += res["rows"]
    assert [r[0] for r in rows] == [100, 101, 102, 103, 200, 201, 300, 301]
    res = es.sql.query(query=f"SELECT process.pid FROM {PROC}", fetch_size=2)
    assert es.sql.clear_cursor(cursor=res["cursor"])["succeeded"] is True
    with pytest.raises(NotFoundError):
        es.sql.query(cursor=res["cursor"])


def test_params_and_multi_values(es: Elasticsearch) -> None:
    res = es.sql.query(query="SELECT title FROM notes WHERE views > ?", params=[5])
    assert res["rows"] == [["Lazy dogs"]]
    with pytest.raises(ApiError) as err:
        es.sql.query(query=f"SELECT process.args FROM {PROC} LIMIT 1")
    assert err.value.meta.status == 400 and "Arrays" in str(err.value.body)
    res = es.sql.query(query=f"SELECT process.args FROM {PROC} LIMIT 1", field_multi_value_leniency=True)
    assert len(res["rows"]) == 1 and isinstance(res["rows"][0][0], str)


@pytest.mark.parametrize(("query", "kind"), [
    ("DELETE FROM notes", "parsing_exception"), ("SELECT FROM", "parsing_exception"),
    ("SELECT nope FROM notes", "verification_exception"), ("SELECT title FROM nope", "verification_exception"),
    ("SELECT a FROM notes x JOIN notes y ON x.a = y.a", "parsing_exception"),
])  # fmt: skip
def test_errors_come_in_elasticsearch_shape(es: Elasticsearch, query: str, kind: str) -> None:
    with pytest.raises(ApiError) as err:
        es.sql.query(query=query)
    assert err.value.meta.status == 400 and err.value.error == kind
