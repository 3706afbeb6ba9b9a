"""Request generators for fuzzing the ES-compatible endpoint (issue 19), one per class. Each
takes a seeded `random.Random` and returns `(method, path, body bytes)`; the same seed gives the
same requests, so any finding replays.

Classes: ES|QL from a small grammar, DSL from the query structure, mutations of real queries,
and the hostile classes of the issue (token soups, truncation, deep nesting, huge numbers,
unicode, regex bombs, odd spans, wide EVALs, random JSON bodies, deep bool trees)."""

from __future__ import annotations

import json
import random
from collections.abc import Callable

Request = tuple[str, str, bytes]

PROC = "logs-endpoint.events.process-default"
INDICES = [PROC, "logs-*", "logs-zeek.conn-default", "nope", "*", "<logs-{now/d}>"]
FIELDS = ["host.name", "process.pid", "process.name", "process.args", "user.name", "@timestamp", "tags", "message",
          "host.ip", "process.command_line", "user_agent.original", "source.ip", "destination.port", "network.bytes",
          "nope", "`host.name`"]  # fmt: skip
LITERALS = ["1", "-2", "3.5", '"web-01"', '"10.0.0.1"', '"2024-05-01"', "null", "true", "[1, 2]", '["a", "b"]',
            "1 day", "2 hours", '"\U0001f980"', '"a\\nb"', "2147483647", "9223372036854775807"]  # fmt: skip
FUNCS = ["LENGTH", "TO_UPPER", "CONCAT", "COALESCE", "MV_COUNT", "MV_MAX", "TO_STRING", "TO_LONG", "ABS", "ROUND",
         "DATE_TRUNC", "CIDR_MATCH", "CASE", "GREATEST", "SUBSTRING", "TO_IP", "DATE_EXTRACT", "SPLIT", "MV_CONCAT",
         "NOW", "STARTS_WITH", "REPLACE", "REPEAT", "SPACE", "MV_PERCENTILE", "POW", "LOG10", "TO_DATETIME", "BUCKET",
         "FOO"]  # fmt: skip
AGGS = ["COUNT", "COUNT_DISTINCT", "MIN", "MAX", "AVG", "SUM", "MEDIAN", "VALUES", "TOP", "PERCENTILE"]
OPS = ["+", "-", "*", "/", "%", "==", "!=", "<", ">=", "AND", "OR"]
SEEDS_ESQL = [
    f"FROM {PROC} | WHERE host.name == \"web-01\" | KEEP @timestamp, process.name | SORT @timestamp | LIMIT 5",
    f"FROM {PROC} | STATS c = COUNT(*) BY host.name | SORT c DESC",
    f"FROM logs-* | STATS c = COUNT(*) BY b = BUCKET(@timestamp, 1 hour)",
    f"FROM {PROC} | EVAL l = LENGTH(process.command_line) | WHERE l > 5 | STATS m = MAX(l)",
    f"FROM {PROC} | GROK process.command_line \"%{{WORD:cmd}} %{{GREEDYDATA:rest}}\" | KEEP cmd, rest",
    f"FROM {PROC} | DISSECT process.command_line \"%{{a}} %{{b}}\" | KEEP a, b",
    f"FROM {PROC} | MV_EXPAND tags | STATS c = COUNT(*) BY tags",
    "ROW a = 1, b = \"x\" | EVAL c = CONCAT(b, TO_STRING(a))",
    f"FROM {PROC} | WHERE process.name RLIKE \"(ba|c)sh.*\" | KEEP process.name",
    f"FROM {PROC} | EVAL n = TO_LONG(user_agent.original) | KEEP n",
]  # fmt: skip
SEEDS_DSL = [
    {"query": {"term": {"host.name": "web-01"}}},
    {"query": {"bool": {"must": [{"match": {"message": "started"}}], "filter": [{"range": {"@timestamp": {"gte": "now-30d"}}}]}}},
    {"size": 0, "aggs": {"h": {"terms": {"field": "host.name"}, "aggs": {"p": {"cardinality": {"field": "process.name"}}}}}},
    {"query": {"query_string": {"query": "bash OR curl"}}, "sort": [{"@timestamp": "desc"}]},
    {"size": 0, "aggs": {"t": {"date_histogram": {"field": "@timestamp", "fixed_interval": "1h"}}}},
    {"query": {"multi_match": {"query": "web", "fields": ["host.name", "message"]}}},
]  # fmt: skip


def _esql(q: str) -> Request:
    return "POST", "/_query", json.dumps({"query": q}).encode()


def _search(body: object, index: str = PROC) -> Request:
    return "POST", f"/{index}/_search", json.dumps(body).encode()


# ---------------------------------------------------------------------------- ES|QL grammar


def _expr(r: random.Random, depth: int = 0) -> str:
    c = r.randrange(10 if depth < 4 else 2)
    if c == 0:
        return r.choice(FIELDS)
    if c == 1:
        return r.choice(LITERALS)
    if c < 5:
        return f"{_expr(r, depth + 1)} {r.choice(OPS)} {_expr(r, depth + 1)}"
    if c < 8:
        fn = r.choice(FUNCS)
        return f"{fn}({', '.join(_expr(r, depth + 1) for _ in range(r.randrange(0, 4)))})"
    if c == 8:
        return f"({_expr(r, depth + 1)})"
    return f"NOT {_expr(r, depth + 1)}"


def esql_grammar(r: random.Random) -> Request:
    src = r.choice([f"FROM {r.choice(INDICES)}", f"ROW a = {_expr(r)}, b = {r.choice(LITERALS)}"])
    cmds = []
    for _ in range(r.randrange(0, 5)):
        k = r.randrange(8)
        if k == 0:
            cmds.append(f"WHERE {_expr(r)}")
        elif k == 1:
            cmds.append(f"EVAL x{r.randrange(5)} = {_expr(r)}")
        elif k == 2:
            by = f" BY {r.choice(FIELDS)}" if r.random() < 0.6 else ""
            cmds.append(f"STATS s = {r.choice(AGGS)}({r.choice(FIELDS + ['*'])}){by}")
        elif k == 3:
            cmds.append(f"SORT {r.choice(FIELDS)} {r.choice(['ASC', 'DESC', ''])}")
        elif k == 4:
            cmds.append(f"LIMIT {r.choice([0, 1, 10, 10000, 99999999])}")
        elif k == 5:
            cmds.append(f"KEEP {', '.join(r.sample(FIELDS, 2))}")
        elif k == 6:
            cmds.append(f"MV_EXPAND {r.choice(FIELDS)}")
        else:
            cmds.append(f"DROP {r.choice(FIELDS)}")
    return _esql(" | ".join([src, *cmds]))


# ---------------------------------------------------------------------------- DSL structure


def _query(r: random.Random, depth: int = 0) -> dict:
    leaves = [
        lambda: {"term": {r.choice(FIELDS): r.choice(["web-01", 1, True, None, "\U0001f980"])}},
        lambda: {"terms": {r.choice(FIELDS): [r.choice(["a", "b", 1]) for _ in range(r.randrange(0, 4))]}},
        lambda: {"range": {r.choice(FIELDS): {r.choice(["gte", "lt", "gt"]): r.choice(["now-1d", "now-1000000000y", 5, "x", "2024-05-01||/d"])}}},
        lambda: {"match": {r.choice(FIELDS): r.choice(["bash curl", "", "a" * 50])}},
        lambda: {"exists": {"field": r.choice(FIELDS)}},
        lambda: {"wildcard": {r.choice(FIELDS): r.choice(["*sh", "b?sh", "**"])}},
        lambda: {"regexp": {r.choice(FIELDS): r.choice(["(a|b)*c", "[", "a{1,1000}", ".*" * 10])}},
        lambda: {"query_string": {"query": r.choice(["bash AND NOT curl", "host.name:web*", "a:(", "(x OR y) AND z"])}},
        lambda: {"multi_match": {"query": "web", "fields": r.choice([["*"], ["host.name"], True, 5, "message"])}},
        lambda: {"ids": {"values": ["p1", "p2"]}},
        lambda: {r.choice(["nested", "script", "unknown_query"]): {}},
    ]  # fmt: skip
    if depth >= 4 or r.random() < 0.5:
        return r.choice(leaves)()
    if r.random() < 0.2:
        return {"dis_max": {"queries": [_query(r, depth + 1) for _ in range(r.randrange(1, 4))], "tie_breaker": 0.3}}
    occ = {k: [_query(r, depth + 1) for _ in range(r.randrange(0, 3))] for k in r.sample(["must", "should", "filter", "must_not"], 2)}
    return {"bool": occ}


def _aggs(r: random.Random) -> dict:
    kinds = [
        lambda: {"terms": {"field": r.choice(FIELDS), "size": r.choice([1, 10, 100000, -1])}},
        lambda: {"date_histogram": {"field": "@timestamp", r.choice(["fixed_interval", "calendar_interval"]): r.choice(["1h", "1d", "0s", "1M", "x"])}},
        lambda: {"cardinality": {"field": r.choice(FIELDS)}},
        lambda: {"filters": {"filters": {f"f{i}": {"term": {"host.name": f"h{i}"}} for i in range(r.choice([1, 3, 50]))}}},
        lambda: {"histogram": {"field": "process.pid", "interval": r.choice([1, 0, -5, 0.001])}},
        lambda: {"avg": {"field": r.choice(FIELDS)}},
        lambda: {"top_hits": {"size": r.choice([1, 3, 1000])}},
    ]  # fmt: skip
    return {f"a{i}": r.choice(kinds)() for i in range(r.randrange(1, 3))}


def dsl_structure(r: random.Random) -> Request:
    body: dict = {"query": _query(r)}
    if r.random() < 0.4:
        body["aggs"] = _aggs(r)
    if r.random() < 0.3:
        body["size"] = r.choice([0, 1, 10, 10001, -1, "x", 1.5])
    if r.random() < 0.2:
        body["sort"] = [{r.choice(FIELDS): r.choice(["asc", "desc", "up"])}]
    if r.random() < 0.1:
        body["fields"] = [{"field": "@timestamp", "format": r.choice(["yyyy", "yyyy-'bad", 5, "epoch_millis"])}]
    return _search(body, r.choice(INDICES))


# ---------------------------------------------------------------------------- mutations of real queries


def mutate(r: random.Random) -> Request:
    if r.random() < 0.6:
        q = r.choice(SEEDS_ESQL)
        for _ in range(r.randrange(1, 4)):
            op = r.randrange(5)
            i = r.randrange(len(q) + 1)
            if op == 0:
                q = q[:i]  # truncate
            elif op == 1:
                q = q[:i] + r.choice(["|", "(", ")", '"', "`", ",", " ", "\\", "\x00", "\U0001f980", "999999999999999999999"]) + q[i:]
            elif op == 2:
                j = r.randrange(len(q) + 1)
                q = q[:min(i, j)] + q[max(i, j):]
            elif op == 3:
                q = q + " | " + r.choice(["LIMIT 1", "EVAL z = 1", "WHERE", "STATS", "SORT"])
            else:
                q = q.replace(" ", "  ", 1)
        return _esql(q)
    body = json.loads(json.dumps(r.choice(SEEDS_DSL)))
    text = json.dumps(body)
    i = r.randrange(len(text))
    choice = r.randrange(3)
    if choice == 0:
        raw = text[:i]
    elif choice == 1:
        raw = text[:i] + r.choice(["{", "}", "[", "]", ",", ":", '"', "null", "1e999"]) + text[i:]
    else:
        raw = text.replace('"web-01"', r.choice(['{"a": 1}', "[]", "null", "1e309", '"\\ud800"']))
    return "POST", f"/{PROC}/_search", raw.encode()


# ---------------------------------------------------------------------------- the issue's classes


def token_soup(r: random.Random) -> Request:
    toks = ["FROM", "ROW", "|", "WHERE", "EVAL", "STATS", "BY", "(", ")", ",", "=", "==", "1", '"x"', "a", "*",
            "LIMIT", "SORT", "AND", "NOT", "::", "[", "]", "?", "`x`", "//", "/*", "\"\"\""]  # fmt: skip
    return _esql(" ".join(r.choice(toks) for _ in range(r.randrange(1, 40))))


def deep_nesting(r: random.Random) -> Request:
    n = r.choice([50, 64, 65, 100, 400, 1000, 5000])
    k = r.randrange(4)
    if k == 0:
        return _esql("ROW a = " + "(" * n + "1" + ")" * n)
    if k == 1:
        return _esql("ROW a = " + " + ".join(["1"] * n))
    if k == 2:
        return _esql("ROW a = 1 | EVAL b = " + "CASE(a > 1, 1, " * n + "0" + ")" * n)
    return _esql("ROW a = 1" + " | EVAL a = a + 1" * min(n, 500))


def huge_numbers(r: random.Random) -> Request:
    n = r.choice(["9" * 20, "9" * 41, "9" * 5000, "1e309", "-" + "9" * 30, "0." + "0" * 400 + "1"])
    return r.choice([_esql(f"ROW a = {n}"), _esql(f"ROW a = 1 | LIMIT {n}"), _search({"size": n}),
                     ("POST", f"/{PROC}/_search", f'{{"size": {n}}}'.encode())])  # fmt: skip


def unicode_input(r: random.Random) -> Request:
    s = r.choice(["\U0001f980", "\u202e", "\x00", "\r\nX-Evil: 1", "\ud800", "caf\u00e9", "\uffff"])
    return r.choice([_esql(f'ROW a = "{s}" | EVAL b = TO_LONG(a)'), _esql(f"FROM {PROC} | WHERE host.name == \"{s}\""),
                     _search({"query": {"term": {"host.name": s}}}), ("GET", f"/{s}/_search", b"")])  # fmt: skip


def regex_bombs(r: random.Random) -> Request:
    p = r.choice(["(a*)*" * 50, "(a|aa)+$" * 10, "a{1000}{1000}", "(" * 500 + "a" + ")" * 500, ".*" * 600])
    return r.choice([_esql(f'FROM {PROC} | WHERE process.name RLIKE "{p}"'), _search({"query": {"regexp": {"process.name": p}}}),
                     _esql(f'ROW a = REPLACE("aaaa", "{p}", "b")')])  # fmt: skip


def odd_spans(r: random.Random) -> Request:
    span = r.choice(["0 days", "-5 minutes", "1000000000 years", "1 nanosecond", "99999999999 hours", "1.5 days"])
    return r.choice([_esql(f"ROW a = DATE_TRUNC({span}, NOW())"),
                     _esql(f"FROM {PROC} | STATS c = COUNT(*) BY b = BUCKET(@timestamp, {span})"),
                     _esql(f"ROW a = NOW() + {span}")])  # fmt: skip


def wide_eval(r: random.Random) -> Request:
    n = r.choice([10, 100, 300, 1000])
    return r.choice([_esql("ROW a = 1 | EVAL " + ", ".join(f"c{i} = CONCAT(TO_STRING(a), \"x{i}\")" for i in range(n))),
                     _esql("ROW a = 1 | EVAL b = " + " + ".join(f"a * {i}" for i in range(min(n, 60)))),
                     _esql('ROW a = REPEAT("aaaaaaaaaa", 100000000)')])  # fmt: skip


def random_json(r: random.Random) -> Request:
    def value(d: int = 0) -> object:
        c = r.randrange(7 if d < 5 else 4)
        makers = [lambda: None, lambda: True, lambda: r.randrange(-10**20, 10**20), lambda: "s" * r.randrange(5),
                  lambda: {}, lambda: [value(d + 1) for _ in range(3)],
                  lambda: {r.choice(["query", "size", "aggs", "x", "sort", "from"]): value(d + 1)}]  # fmt: skip
        return makers[c]()
    path = r.choice(["/_query", f"/{PROC}/_search", "/_search", "/_mapping", "/_cat/indices"])
    raw = r.choice([json.dumps(value()).encode(), b"null", b"[" * 100_000, b'{"query":' * 3000, b"\xff\xfe", b""])
    return r.choice(["POST", "GET", "PUT", "DELETE"]), path, raw


def deep_bool(r: random.Random) -> Request:
    n = r.choice([10, 29, 31, 200, 1000])
    raw = b'{"query": ' + b'{"bool": {"must": [' * n + b'{"match_all": {}}' + b"]}}" * n + b"}"
    if r.random() < 0.3:
        raw = json.dumps({"size": 0, "aggs": {"f": {"filters": {"filters": {f"k{i}": {"term": {"host.name": f"h{i}"}} for i in range(3000)}}}}}).encode()
    if r.random() < 0.2:
        raw = json.dumps({"query": {"query_string": {"query": " OR ".join(f"a{i}" for i in range(200))}}}).encode()
    return "POST", f"/{PROC}/_search", raw


CLASSES: dict[str, Callable[[random.Random], Request]] = {
    "esql_grammar": esql_grammar,
    "dsl_structure": dsl_structure,
    "mutation": mutate,
    "token_soup": token_soup,
    "deep_nesting": deep_nesting,
    "huge_numbers": huge_numbers,
    "unicode": unicode_input,
    "regex_bombs": regex_bombs,
    "odd_spans": odd_spans,
    "wide_eval": wide_eval,
    "random_json": random_json,
    "deep_bool": deep_bool,
}


def requests(seed: int, n: int) -> list[tuple[str, Request]]:
    """`n` requests, the classes in turn, reproducible from `seed`."""
    r = random.Random(seed)
    names = list(CLASSES)
    return [(names[i % len(names)], CLASSES[names[i % len(names)]](r)) for i in range(n)]
