"""ES|QL against the fixed data set: commands, functions, semantics, response and error shapes."""

from __future__ import annotations

from typing import Any

import pytest
from store_testdata import CONN, PROC

from pytest_soclab.errors import EsError
from pytest_soclab.store.embedded import EmbeddedBackend


def run(backend: EmbeddedBackend, query: str, **kw: Any) -> dict[str, Any]:
    return backend.esql_query(query, **kw)


def values(backend: EmbeddedBackend, query: str, **kw: Any) -> list[list[Any]]:
    return run(backend, query, **kw)["values"]


def test_response_shape(backend: EmbeddedBackend) -> None:
    res = run(backend, f"FROM {PROC} | KEEP @timestamp, host.name, process.pid | SORT @timestamp | LIMIT 1")
    assert set(res) == {"took", "is_partial", "columns", "values"}
    assert res["is_partial"] is False
    assert res["columns"] == [{"name": "@timestamp", "type": "date"}, {"name": "host.name", "type": "keyword"},
                              {"name": "process.pid", "type": "long"}]  # fmt: skip
    assert res["values"] == [["2024-05-01T10:00:00.000Z", "web-01", 100]]


def test_columnar(backend: EmbeddedBackend) -> None:
    res = run(backend, f"FROM {PROC} | SORT process.pid | KEEP process.pid, user.name | LIMIT 2", columnar=True)
    assert res["values"] == [[100, 101], ["www-data", "www-data"]]


def test_from_without_keep_lists_fields_and_multi_fields(backend: EmbeddedBackend) -> None:
    res = run(backend, f"FROM {PROC} | LIMIT 1")
    names = [c["name"] for c in res["columns"]]
    assert names == sorted(names)
    types = {c["name"]: c["type"] for c in res["columns"]}
    assert types["process.name"] == "keyword" and types["process.name.text"] == "text"
    assert types["message"] == "text" and types["host.ip"] == "ip" and types["process.command_line"] == "keyword"


def test_implicit_limit_is_1000(backend: EmbeddedBackend) -> None:
    assert len(values(backend, "ROW a = 1 | MV_EXPAND a")) == 1
    res = values(backend, f"FROM {PROC} | EVAL x = [1,2,3,4,5,6,7,8,9,10] | MV_EXPAND x | EVAL y = [1,2,3,4,5,6,7,8,9,10,11,12,13] | MV_EXPAND y | KEEP x")
    assert len(res) == 1000


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (f"FROM {PROC} | WHERE host.name == \"db-01\" | SORT process.pid | KEEP process.name", [["sshd"], ["cat"]]),
        (f"FROM {PROC} | WHERE process.pid > 200 AND process.pid <= 300 | SORT process.pid | KEEP process.pid", [[201], [300]]),
        (f"FROM {PROC} | WHERE user.name IN (\"root\", \"alice\") | STATS c = COUNT(*)", [[4]]),
        (f"FROM {PROC} | WHERE user.name NOT IN (\"root\", \"alice\") | STATS c = COUNT(*)", [[4]]),
        (f"FROM {PROC} | WHERE tags IS NULL | STATS c = COUNT(*)", [[6]]),
        (f"FROM {PROC} | WHERE tags IS NOT NULL | STATS c = COUNT(*)", [[2]]),
        # LIKE is whole-value and case-sensitive
        (f"FROM {PROC} | WHERE process.command_line LIKE \"curl*\" | KEEP process.pid", [[101]]),
        (f"FROM {PROC} | WHERE process.command_line LIKE \"CURL*\" | KEEP process.pid", []),
        (f"FROM {PROC} | WHERE process.command_line LIKE \"x.sh\" | KEEP process.pid", []),
        (f"FROM {PROC} | WHERE process.command_line LIKE (\"cat *\", \"sh ?tmp*\") | SORT process.pid | KEEP process.pid", [[102], [201]]),
        (f"FROM {PROC} | WHERE process.command_line RLIKE \"(sh|cat) .*\" | SORT process.pid | KEEP process.pid", [[102], [201]]),
        (f"FROM {PROC} | WHERE user.name =~ \"ROOT\" | STATS c = COUNT(*)", [[2]]),
        # WHERE drops nulls (three-valued logic)
        (f"FROM {PROC} | WHERE NOT (tags == \"x\") | STATS c = COUNT(*)", [[1]]),
        (f"FROM {CONN} | WHERE CIDR_MATCH(destination.ip, \"198.51.100.0/24\", \"2001:db8::/32\") | STATS c = COUNT(*)", [[4]]),
        (f"FROM {CONN} | WHERE destination.ip == \"203.0.113.9\" | KEEP source.ip", [["10.0.0.2"]]),
        (f"FROM {CONN} | WHERE @timestamp >= \"2024-05-02\" | STATS c = COUNT(*)", [[2]]),
        (f"FROM {CONN} | WHERE @timestamp > NOW() - 1 day | STATS c = COUNT(*)", [[2]]),
        (f"FROM {PROC} | STATS c = COUNT(*) BY host.name | SORT c DESC, host.name", [[4, "web-01"], [2, "db-01"], [2, "ws-07"]]),
        (f"FROM {PROC} | STATS c = COUNT(*) WHERE user.name == \"root\", t = COUNT(*)", [[2, 8]]),
        (f"FROM {PROC} | STATS n = COUNT_DISTINCT(user.name), a = COUNT(process.args)", [[3, 20]]),
        (f"FROM {PROC} | STATS c = COUNT(*) BY tags | SORT tags NULLS FIRST",
         [[6, None], [1, "credential-access"], [2, "suspicious"]]),
        (f"FROM {CONN} | STATS b = SUM(network.bytes), m = MAX(network.bytes), a = AVG(zeek.conn.duration) BY source.ip | SORT source.ip",
         [[95120, 90000, 2.25, "10.0.0.1"], [1200, 1200, 4.5, "10.0.0.2"], [380, 300, 6.75, "10.0.0.3"]]),
        (f"FROM {CONN} | STATS c = COUNT(*) BY h = BUCKET(@timestamp, 1 day) | SORT h",
         [[3, "2024-05-01T00:00:00.000Z"], [2, "2024-05-02T00:00:00.000Z"]]),
        (f"FROM {CONN} | STATS c = COUNT(*) BY b = BUCKET(network.bytes, 1000.0) | SORT b | LIMIT 2", [[2, 0.0], [1, 1000.0]]),
        (f"FROM {CONN} | STATS x = MEDIAN(destination.port), p = PERCENTILE(destination.port, 100)", [[443.0, 4444.0]]),
        (f"FROM {CONN} | STATS t = TOP(destination.port, 2, \"desc\"), v = VALUES(destination.port)", [[[4444, 443], [53, 80, 443, 4444]]]),
        (f"FROM {PROC} | STATS total = COUNT(*) * 10 + 1", [[81]]),
        (f"FROM {PROC} | SORT process.pid DESC | LIMIT 2 | KEEP process.pid", [[301], [300]]),
        (f"FROM {PROC} | SORT tags DESC NULLS LAST, process.pid | LIMIT 2 | KEEP process.pid", [[201], [300]]),
        (f"FROM {PROC} | KEEP user.*, host.name | LIMIT 1", [["www-data", "www-data", "web-01"]]),
        (f"FROM {PROC} | DROP process.*, message*, event.*, host.ip, @timestamp, tags, user.name.text | LIMIT 1", [["web-01", "www-data"]]),
        (f"FROM {PROC} | RENAME user.name AS who | KEEP who | LIMIT 1", [["www-data"]]),
        (f"FROM {PROC} | WHERE process.pid == 100 | MV_EXPAND process.args | KEEP process.args", [["-c"], ["bash"], ["whoami"]]),
        (f"FROM {PROC} | WHERE process.pid == 101 | DISSECT process.command_line \"%{{cmd}} -s %{{url}}\" | KEEP cmd, url",
         [["curl", "http://198.51.100.7/x.sh"]]),
        (f"FROM {PROC} | WHERE process.pid == 101 | GROK process.command_line \"%{{WORD:tool}} -s http://%{{IP:ip}}/%{{NOTSPACE:file}}\" | KEEP tool, ip, file",
         [["curl", "198.51.100.7", "x.sh"]]),
        (f"FROM {PROC} METADATA _id, _index | WHERE process.pid == 100 | KEEP _id, _index",
         [["p1", f".ds-{PROC}-2024.05.01-000001"]]),
        (f"FROM {PROC} | WHERE MATCH(message, \"alice\") | SORT process.pid | KEEP process.pid", [[300], [301]]),
        (f"FROM {PROC} | WHERE QSTR(\"user.name:root AND process.name:cat\") | KEEP process.pid", [[201]]),
        (f"FROM logs-*, -{CONN} | STATS c = COUNT(*)", [[8]]),
        (f"FROM {PROC}, {CONN} | STATS c = COUNT(*) BY event.category | SORT c", [[5, "network"], [8, "process"]]),
    ],
)
def test_queries(backend: EmbeddedBackend, query: str, expected: list[list[Any]]) -> None:
    assert values(backend, query) == expected


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("LENGTH(\"héllo\")", 5), ("CONCAT(\"a\", \"b\", \"c\")", "abc"), ("LEFT(\"abcdef\", 2)", "ab"),
        ("RIGHT(\"abcdef\", 2)", "ef"), ("SUBSTRING(\"abcdef\", 2, 3)", "bcd"), ("SUBSTRING(\"abcdef\", -2)", "ef"),
        ("LOCATE(\"abcabc\", \"c\", 4)", 6), ("STARTS_WITH(\"abc\", \"ab\")", True), ("ENDS_WITH(\"abc\", \"x\")", False),
        ("TO_LOWER(\"AbC\")", "abc"), ("TO_UPPER(\"AbC\")", "ABC"), ("TRIM(\"  a  \")", "a"), ("LTRIM(\"  a\")", "a"),
        ("REPLACE(\"a1b22\", \"[0-9]+\", \"#\")", "a#b#"), ("SPLIT(\"a,b,c\", \",\")", ["a", "b", "c"]),
        ("REPEAT(\"ab\", 2)", "abab"), ("REVERSE(\"abc\")", "cba"), ("TO_BASE64(\"soclab\")", "c29jbGFi"),
        ("FROM_BASE64(\"c29jbGFi\")", "soclab"), ("MD5(\"a\")", "0cc175b9c0f1b6a831c399e269772661"),
        ("SHA256(\"a\")", "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb"),
        ("ABS(-3)", 3), ("ROUND(2.567, 2)", 2.57), ("FLOOR(2.5)", 2.0), ("CEIL(2.1)", 3.0), ("POW(2, 10)", 1024.0),
        ("SQRT(16)", 4.0), ("LOG10(1000)", 3.0), ("LOG(2, 8)", 3.0), ("7 / 2", 3), ("-7 / 2", -3), ("7 % 3", 1),
        ("7.0 / 2", 3.5), ("1 + 2 * 3", 7),
        ("CASE(1 > 2, \"a\", 2 > 1, \"b\", \"c\")", "b"), ("COALESCE(null, \"x\")", "x"), ("GREATEST(1, 9, 3)", 9),
        ("LEAST(4, 2, 8)", 2),
        ("MV_COUNT([1, 2, 3])", 3), ("MV_FIRST([3, 1])", 3), ("MV_LAST([3, 1])", 1), ("MV_MIN([3, 1, 2])", 1),
        ("MV_MAX([3, 1, 2])", 3), ("MV_SUM([1, 2, 3])", 6), ("MV_AVG([1, 2])", 1.5), ("MV_MEDIAN([1, 5, 3])", 3),
        ("MV_DEDUPE([\"a\", \"b\", \"a\"])", ["a", "b"]), ("MV_CONCAT([\"a\", \"b\"], \"-\")", "a-b"),
        ("MV_SLICE([1, 2, 3, 4], 1, 2)", [2, 3]), ("MV_SORT([3, 1, 2], \"desc\")", [3, 2, 1]),
        ("MV_ZIP([\"a\", \"b\"], [\"1\", \"2\"], \":\")", ["a:1", "b:2"]), ("MV_APPEND([1, 2], 3)", [1, 2, 3]),
        ("TO_STRING(123)", "123"), ("TO_INTEGER(\"42\")", 42), ("TO_LONG(3.9)", 3), ("TO_DOUBLE(\"1.5\")", 1.5),
        ("TO_BOOLEAN(\"TRUE\")", True), ("TO_IP(\"10.1.2.3\")", "10.1.2.3"), ("\"42\"::integer + 1", 43),
        ("TO_DATETIME(\"2024-05-01T10:00:00Z\")", "2024-05-01T10:00:00.000Z"),
        ("DATE_TRUNC(1 hour, \"2024-05-01T10:42:00Z\"::datetime)", "2024-05-01T10:00:00.000Z"),
        ("DATE_EXTRACT(\"hour_of_day\", \"2024-05-01T10:42:00Z\"::datetime)", 10),
        ("DATE_FORMAT(\"yyyy-MM-dd\", \"2024-05-01T10:42:00Z\"::datetime)", "2024-05-01"),
        ("DATE_PARSE(\"dd/MM/yyyy\", \"02/05/2024\")", "2024-05-02T00:00:00.000Z"),
        ("DATE_DIFF(\"hour\", \"2024-05-01T10:59:00Z\"::datetime, \"2024-05-01T12:00:00Z\"::datetime)", 1),
        ("\"2024-05-01T00:00:00Z\"::datetime + 2 hours", "2024-05-01T02:00:00.000Z"),
        ("IP_PREFIX(\"192.168.7.9\"::ip, 16, 0)", "192.168.0.0"),
        ("CIDR_MATCH(\"10.1.2.3\"::ip, \"10.0.0.0/8\")", True),
        ("\"abc\" LIKE \"a?c\"", True), ("\"abc\" RLIKE \"a.+\"", True), ("null IS NULL", True),
        ("1 == null", None), ("true OR null", True), ("false AND null", False), ("NOT null", None),
    ],
)
def test_functions(backend: EmbeddedBackend, expr: str, expected: Any) -> None:
    assert values(backend, f"ROW x = {expr}") == [[expected]]


def test_multi_valued_scalar_input_is_null_with_warning(backend: EmbeddedBackend) -> None:
    q = f"FROM {PROC} | WHERE process.pid == 100 | EVAL l = LENGTH(process.args) | KEEP l"
    res = run(backend, q)
    col = q.index("LENGTH") + 1
    assert res["values"] == [[None]]
    assert res["warnings"] == [
        f"Line 1:{col}: evaluation of [LENGTH(process.args)] failed, treating result as null. Only first 20 failures recorded.",
        f"Line 1:{col}: java.lang.IllegalArgumentException: single-value function encountered multi-value",
    ]


def test_division_by_zero_warns(backend: EmbeddedBackend) -> None:
    res = run(backend, "ROW a = 1 | EVAL b = a / 0")
    assert res["values"] == [[1, None]]
    assert res["warnings"][1] == "Line 1:22: java.lang.ArithmeticException: / by zero"


def test_keep_precedence(backend: EmbeddedBackend) -> None:
    cols = [c["name"] for c in run(backend, f"FROM {PROC} | KEEP host.name, *, user.name | LIMIT 1")["columns"]]
    assert cols[0] == "host.name" and cols[-1] == "user.name" and "process.pid" in cols


def test_params(backend: EmbeddedBackend) -> None:
    q = f"FROM {PROC} | WHERE user.name == ? AND process.pid > ? | STATS c = COUNT(*)"
    assert values(backend, q, params=["www-data", 101]) == [[2]]
    q = f"FROM {PROC} | WHERE user.name == ?who | STATS c = COUNT(*)"
    assert values(backend, q, params=[{"who": "root"}]) == [[2]]


@pytest.mark.parametrize(
    ("query", "etype", "reason"),
    [
        ("FROM nope", "verification_exception", "Found 1 problem\nline 1:6: Unknown index [nope]"),
        (f"FROM {PROC} | WHERE hots.name == \"x\"", "verification_exception",
         f"Found 1 problem\nline 1:{len(PROC) + 15}: Unknown column [hots.name], did you mean [host.name]?"),
        (f"FROM {PROC} | KEEP a, b", "verification_exception",
         f"Found 2 problems\nline 1:{len(PROC) + 14}: Unknown column [a]\nline 1:{len(PROC) + 17}: Unknown column [b]"),
        (f"FROM {PROC} | WHERE LENGTH(process.pid) > 1", "verification_exception",
         "argument of [LENGTH(process.pid)] must be [string], found value [process.pid] type [long]"),
        (f"FROM {PROC} | WHERE process.pid == \"x\"", "verification_exception",
         "first argument of [process.pid == \"x\"] is [numeric] so second argument must also be [numeric] but was [keyword]"),
        (f"FROM {PROC} | EVAL c = COUNT(*)", "verification_exception", "aggregate function [COUNT(*)] not allowed outside STATS command"),
        (f"FROM {PROC} | STATS host.name", "verification_exception", "expected an aggregate function but found [host.name]"),
        (f"FROM {PROC} | WHERE process.pid", "verification_exception", "Condition expression needs to be boolean, found [LONG]"),
        (f"FROM {PROC} | WHERE FOO(x)", "verification_exception", "Unknown function [FOO]"),
        (f"FROM {PROC} | ENRICH policy", "verification_exception", "ENRICH is not supported by the soclab embedded store"),
        (f"FROM {PROC} | LIMIT -1", "parsing_exception", "Invalid value for LIMIT [-1]"),
        (f"FROM {PROC} | WHERE", "parsing_exception", "mismatched input '<EOF>'"),
        (f"FROM {PROC} | WHERE a = 1", "parsing_exception", "mismatched input '='"),
        ("SELECT * FROM x", "parsing_exception", "line 1:1: mismatched input 'SELECT'"),
    ],
)
def test_errors(backend: EmbeddedBackend, query: str, etype: str, reason: str) -> None:
    with pytest.raises(EsError) as err:
        run(backend, query)
    assert err.value.status == 400 and err.value.type == etype
    assert reason in err.value.reason


def test_keywords_are_case_insensitive_and_comments_ignored(backend: EmbeddedBackend) -> None:
    q = f"from {PROC} // pick the process events\n| where /* only root */ user.name == \"root\" | stats c = count(*)"
    assert values(backend, q) == [[2]]


def test_backtick_identifiers_and_default_names(backend: EmbeddedBackend) -> None:
    res = run(backend, f"FROM {PROC} | STATS COUNT(*), MAX(process.pid) | EVAL `my col` = `COUNT(*)` + 1 | KEEP `my col`, `MAX(process.pid)`")
    assert res["columns"] == [{"name": "my col", "type": "long"}, {"name": "MAX(process.pid)", "type": "long"}]
    assert res["values"] == [[9, 301]]


def test_conversion_warning_names_the_value(backend: EmbeddedBackend) -> None:
    res = run(backend, 'ROW a = "x1" | EVAL b = TO_LONG(a), c = TO_IP("nope")')
    assert res["values"] == [["x1", None, None]]
    assert "Line 1:25: org.elasticsearch.xpack.esql.core.InvalidArgumentException: Cannot parse number [x1]" in res["warnings"]
    assert "Line 1:41: java.lang.IllegalArgumentException: 'nope' is not an IP string literal." in res["warnings"]


def test_where_without_limit_and_sort_then_where_keep_order(backend: EmbeddedBackend) -> None:
    q = f"FROM {PROC} | SORT process.pid DESC | WHERE user.name != \"root\" | EVAL x = process.pid | KEEP x | LIMIT 3"
    assert values(backend, q) == [[301], [300], [103]]


def test_stats_groups_come_in_key_order_without_sort(backend: EmbeddedBackend) -> None:
    """Groups leave a parallel hash aggregation in any order: the store numbers them by key, so
    that the same query answers the same way on every run."""
    q = f"FROM {PROC} | STATS n = COUNT(*) BY user.name, host.name"
    assert values(backend, q) == [[2, "alice", "ws-07"], [2, "root", "db-01"], [4, "www-data", "web-01"]]
    q = f"FROM {CONN} | STATS n = COUNT(*) BY destination.ip | WHERE n < 5"
    assert [r[1] for r in values(backend, q)] == ["198.51.100.7", "203.0.113.9", "2001:db8::1"]


def test_sort_ties_keep_document_order(backend: EmbeddedBackend) -> None:
    # equal keys: documents in time order (the order of the index), groups in key order
    q = f"FROM {PROC} METADATA _id | SORT host.name | KEEP _id, host.name"
    assert [r[0] for r in values(backend, q)] == ["p4", "p5", "p1", "p2", "p3", "p8", "p6", "p7"]
    q = f"FROM {PROC} | STATS n = COUNT(*) BY process.name | SORT n DESC | KEEP process.name, n"
    assert values(backend, q) == [["bash", 3], ["cat", 1], ["curl", 1], ["powershell", 1], ["sh", 1], ["sshd", 1]]


def test_mv_expand_ties_keep_value_order(backend: EmbeddedBackend) -> None:
    q = f"FROM {PROC} METADATA _id | WHERE host.name == \"web-01\" | MV_EXPAND process.args | SORT host.name | KEEP _id, process.args | LIMIT 5"
    assert values(backend, q) == [["p1", "-c"], ["p1", "bash"], ["p1", "whoami"], ["p2", "-s"], ["p2", "curl"]]
