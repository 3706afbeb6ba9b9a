"""Structural facts about a call, computed in Python and passed in the guard input.

Rego pays for every step of an evaluation, and splitting index expressions or
reading time ranges out of a search body's JSON text are many steps. These
functions do that parsing here, exactly as the policies do it, and the policies
use the result when the input carries it (as they use the ES|QL parser's facts,
`input.esql`). Facts are parsing only: which index is in scope, how wide a range
may be, what denies, stays in Rego. Without facts (opa, the Rego unit tests, a
caller that sends raw inputs) the policies parse for themselves, so they still
stand alone; `tests/guard/test_guard_facts.py` checks that both paths agree.

- `input.index_facts`: index expression -> its inclusions, each split into its
  name and selector and flagged the way the scope rules test them
  (`scanned_items(e)` in rego/scope.rego computes the same list);
- `input.body_index_exprs`: the index expressions inside a search body (terms
  lookup, more_like_this, indices_boost);
- `input.args_facts`: what the exfiltration rules' cheap tests look for in the
  arguments' text (a URL's "://", an address's "@", the longest base64 run, the
  longest run that could end a DNS label), measured on the arguments' strings;
- `input.agg_sizes`: every `size` / `shard_size` under a search body's
  aggregations (`search_deny`'s aggregation rule in rego/cost.rego);
- `input.esql_bounds`: the bounds of an ES|QL query's `@timestamp` comparisons;
- `input.search_ranges`: every `@timestamp` range of a Query DSL body with its
  bounds resolved (`time_ranges` in rego/cost.rego). Given only when the body is
  plain enough that the policy's scan of its JSON text surely reads the same
  ranges; otherwise left out and the policy scans the text.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import re
from collections.abc import Iterator
from typing import Any

# What Rego's trim_space strips: Unicode White_Space (as Go's strings.TrimSpace and
# Rust's str::trim). Python's str.strip() also strips U+001C..U+001F, so it is not used.
WHITESPACE = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"  # fmt: skip

STREAM_TYPES = frozenset({"logs", "metrics", "traces", "synthetics", "profiling"})


# ---- index expressions ---------------------------------------------------------------


def index_item(inclusion: str) -> dict[str, Any]:
    """One inclusion of an index expression, as `index_item` in rego/scope.rego reads it."""
    parts = inclusion.split("::")
    name = parts[0]
    return {
        "item": inclusion,
        "name": name,
        "selector": parts[1] if len(parts) > 1 else "data",
        "all": name == "_all" or name.strip("*") == "",
        "remote": ":" in name,
        "date_math": name.startswith(("<", "%3c", "%3C")),
        "hidden": name.startswith("."),
        "namespace": stream_namespace(name),
    }


def stream_namespace(name: str) -> str | None:
    """type-dataset-namespace: the namespace a data-stream name fixes (None: none)."""
    parts = name.split("-")
    if parts[0] not in STREAM_TYPES or len(parts) < 3:
        return None
    ns = parts[-1]
    return ns if ns != "" and "*" not in ns else None


def index_items(expr: str) -> list[dict[str, Any]]:
    """The inclusions of an expression (split on commas, trimmed, `-x` exclusions left out)."""
    out = []
    for raw in expr.split(","):
        item = raw.strip(WHITESPACE)
        if item != "" and not item.startswith("-"):
            out.append(index_item(item))
    return out


def index_expressions(tool: str, args: dict[str, Any], esql: dict[str, Any] | None) -> list[str]:
    """The expressions a call names in its arguments: the index argument, the
    list_indices pattern, ES|QL sources as the policy joins them. (ES|QL lookups are
    rare: the policy finds those itself.)"""
    if tool in ("es_search", "get_mappings"):
        expr = args.get("index", "")
    elif tool == "list_indices":
        expr = args.get("pattern", "*")
    elif tool == "esql_query" and esql is not None and isinstance(esql.get("sources"), list):
        sources = esql["sources"]
        expr = ",".join(sources) if sources and all(isinstance(s, str) for s in sources) else None
    else:
        expr = None
    return [expr] if isinstance(expr, str) else []


def body_index_exprs(body: Any, objects: list[dict[str, Any]] | None = None) -> list[str] | None:
    """Index expressions inside a search body, as `scanned_body_index_exprs` in
    rego/scope.rego finds them: documents fetched by terms lookup or more_like_this
    (an object with a string `index`/`_index` and a non-null `id`, `_id` or `doc`,
    anywhere), and the keys of `indices_boost` (an object, or a list of objects).
    None for a body that is not an object (the policy handles that itself)."""
    if not isinstance(body, dict):
        return None
    found = set()
    for node in _objects(body) if objects is None else objects:
        if node.get("id") is not None or node.get("_id") is not None or node.get("doc") is not None:
            found.update(e for e in (node.get("index"), node.get("_index")) if isinstance(e, str))
    boost = body.get("indices_boost")
    if isinstance(boost, dict):
        found.update(boost)
    elif isinstance(boost, list):
        found.update(k for o in boost if isinstance(o, dict) for k in o)
    return sorted(found)


def _objects(root: Any) -> list[dict[str, Any]]:
    """Every object in a JSON value, the value itself included (a loop, not recursion:
    this runs on every search)."""
    out, stack = [], [root]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            out.append(node)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return out


# ---- aggregation sizes ----------------------------------------------------------------

AGG_KEYS = ("aggs", "aggregations")
SIZE_KEYS = ("size", "shard_size")


def agg_sizes(body: Any) -> list[dict[str, Any]] | None:
    """Every `size` / `shard_size` under a search body's aggregations, as the policy's
    scan of their JSON text reads it: the key, the value's JSON text and the value.
    None when some value is not a plain scalar (the policy then scans the text, and
    fails closed on an object or a list)."""
    if not isinstance(body, dict):
        return None
    found: list[dict[str, Any]] = []
    try:
        for key in AGG_KEYS:
            if key in body:
                found.extend(_sizes(body[key]))
    except NotPlain:
        return None
    return found


def _sizes(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        for k, v in node.items():
            if k in SIZE_KEYS:
                yield {"key": k, "text": _scalar_text(v), "value": v}
            yield from _sizes(v)
    elif isinstance(node, list):
        for v in node:
            yield from _sizes(v)


def _scalar_text(v: Any) -> str:
    """A scalar's JSON text, for the scalars whose text every JSON writer spells the same."""
    if v is None or isinstance(v, bool):
        return json.dumps(v)
    if isinstance(v, int) and abs(v) <= MAX_EPOCH_MILLIS:
        return str(v)
    if isinstance(v, str) and _PLAIN.fullmatch(v):
        return f'"{v}"'
    raise NotPlain(v)


# ---- marks in the arguments' text ----------------------------------------------------

# Runs shorter than this are reported as RUN_FLOOR - 1: a fact need only be at least
# the truth, and the policy's thresholds (40, 130 and 30 by default) are longer.
# (Patterns with a fixed minimum and no lookahead: linear in the text's length.)
RUN_FLOOR = 16
_LONG_ALNUM = re.compile(r"[A-Za-z0-9]{%d,}" % RUN_FLOOR)
_LONG_B64 = re.compile(r"[A-Za-z0-9+/]{%d,}" % RUN_FLOOR)
_PRINTABLE_ASCII = re.compile(r"[ -~\n]*")
_AT = re.compile(r"@(?!timestamp(?:[ ,)\n]|\Z))")


def args_facts(args: Any) -> dict[str, Any] | None:
    """What the exfiltration rules' cheap tests look for in the arguments' JSON text,
    read from the arguments' strings (keys too): `url` ("://" in some string),
    `address` (an "@" that is not a field reference like `@timestamp,`), `b64_run`
    (the longest run of base64 characters, an integer's digits included) and
    `dns_label_run` (the longest run of letters and digits followed by a dot; runs
    shorter than RUN_FLOOR count as RUN_FLOOR - 1). Each is at least what the text
    holds, so the policy's regular expressions run whenever they could find something. None when the text could differ from the strings (an
    escaped control character, a non-ASCII letter a case-insensitive pattern takes for
    a Latin one, a float's digits and dot)."""
    strings: list[str] = []
    scalar_run = 0  # the text of an integer, true, false or null is one run
    stack = [args]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            strings.append(node)
        elif isinstance(node, dict):
            for k, v in node.items():
                if not isinstance(k, str):
                    return None
                strings.append(k)
                stack.append(v)
        elif isinstance(node, list):
            stack.extend(node)
        elif node is None or isinstance(node, bool | int):
            scalar_run = max(scalar_run, len(json.dumps(node).lstrip("-")))
        else:
            return None  # floats (their text has a dot) and anything else
    # One text, a line break between strings: no run, "://" or field reference spans it.
    text = "\n".join(strings)
    if not _PRINTABLE_ASCII.fullmatch(text) or text.count("\n") != len(strings) - 1:
        return None
    label_run = RUN_FLOOR - 1
    for m in _LONG_ALNUM.finditer(text):  # a whole run of letters and digits, then a dot?
        if text.startswith(".", m.end()):
            label_run = max(label_run, m.end() - m.start())
    return {
        "url": "://" in text,
        "address": _AT.search(text) is not None,
        "b64_run": max([RUN_FLOOR - 1, scalar_run, *map(len, _LONG_B64.findall(text))]),
        "dns_label_run": label_run,
    }


# ---- Query DSL time ranges ---------------------------------------------------------------

# A string value the policy's text scan reads back unchanged: no quote, backslash,
# comma, brace or bracket, control character or non-ASCII character; a key: no colon
# either (the scan splits a bound at its first colon).
_PLAIN = re.compile(r"[ !#-+\--Z^-z|~]*")
_PLAIN_KEY = re.compile(r"[ !#-+\--9;-Z^-z|~]*")
_RFC3339 = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]{1,9})?(Z|[+-][0-9]{2}:[0-9]{2})"
)
_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_NOW = re.compile(r"now(/[a-zA-Z])?")
# (no leading zero: the policy's to_number rejects "01", and the decision fails closed)
_NOW_MINUS = re.compile(r"now-(0|[1-9][0-9]{0,8})([smhdwMy])(/[a-zA-Z])?")
UNIT_NS = {
    "s": 1_000_000_000, "m": 60_000_000_000, "h": 3_600_000_000_000, "d": 86_400_000_000_000,
    "w": 604_800_000_000_000, "M": 2_592_000_000_000_000, "y": 31_536_000_000_000_000,
}  # fmt: skip
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
MAX_EPOCH_MILLIS = 10**13  # far past any date; larger numbers are left to the policy


class NotPlain(Exception):
    """The body is not plain enough for facts: the policy reads it itself."""


def search_ranges(body: Any, objects: list[dict[str, Any]] | None = None) -> list[dict[str, Any]] | None:
    """Each `{"range": {"@timestamp": {...}}}` of a search body as {"lo": bound, "hi": bound}.

    A bound is a number (epoch nanoseconds), {"now_minus_ns": n} (the policy's "now"
    minus n), null (none given: the policy takes the case window's edge) or
    "unparsed" (a value the policy does not understand: it ignores the range).
    None when the body is not plain enough to be sure the policy reads the same."""
    try:
        found = _timestamp_ranges(_objects(body) if objects is None else objects)
        return [_range_fact(bounds) for bounds in found]
    except (NotPlain, TypeError):  # (TypeError: keys that are not strings)
        return None


def _timestamp_ranges(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The bounds objects the policy finds by the mark `"range":{"@timestamp":{` in the
    body's JSON text (keys sorted): a `range` key whose object's first key is an
    object-valued `@timestamp`. The text shows the mark elsewhere only after a key
    ending in `"range` (its quote escaped): such a body gets no facts."""
    found = []
    for node in objects:
        rng = node.get("range")
        if isinstance(rng, dict) and rng and min(rng) == "@timestamp" and isinstance(rng["@timestamp"], dict):
            found.append(rng["@timestamp"])
        if any(not isinstance(k, str) or k.endswith('"range') for k in node):
            raise NotPlain(node)
    return found


def _range_fact(bounds: dict[str, Any]) -> dict[str, Any]:
    for k, v in bounds.items():
        if not isinstance(k, str) or not _PLAIN_KEY.fullmatch(k) or not _plain_value(v):
            raise NotPlain(k)
    lo = bounds["gte"] if "gte" in bounds else bounds.get("gt")
    hi = bounds["lte"] if "lte" in bounds else bounds.get("lt")
    return {"lo": bound_fact(lo), "hi": bound_fact(hi)}


def _plain_value(v: Any) -> bool:
    if v is None or isinstance(v, bool):
        return True
    if isinstance(v, int):
        return abs(v) <= MAX_EPOCH_MILLIS
    return isinstance(v, str) and _PLAIN.fullmatch(v) is not None


def bound_fact(v: Any) -> Any:
    """A bound as `bound_ns` in rego/cost.rego reads it, in the same order of tests."""
    if v is None:
        return None
    if isinstance(v, bool):
        return "unparsed"
    if isinstance(v, int):  # epoch millis
        return v * 1_000_000
    if not isinstance(v, str):
        raise NotPlain(v)
    fact = _string_bound(v)
    return dict(fact) if isinstance(fact, dict) else fact  # a copy: the cached one stays as it is


@functools.lru_cache(maxsize=4096)
def _string_bound(v: str) -> Any:
    """bound_fact of a string (cached: an investigation repeats its time bounds)."""
    if len(v) >= 20 and v[10] == "T" and v[4] == "-":
        return _rfc3339_ns(v)
    if len(v) == 10 and _DATE.fullmatch(v):
        return _rfc3339_ns(v + "T00:00:00Z")
    if _NOW.fullmatch(v):
        return {"now_minus_ns": 0}
    if m := _NOW_MINUS.fullmatch(v):
        return {"now_minus_ns": int(m[1]) * UNIT_NS[m[2]]}
    if v.startswith("now"):
        raise NotPlain(v)  # spaces around the minus, a long number...: left to the policy
    return "unparsed"


def _rfc3339_ns(v: str) -> int:
    """Epoch nanoseconds of a strict RFC 3339 timestamp; NotPlain for anything else (the
    policy's parser then decides, and may fail closed)."""
    m = _RFC3339.fullmatch(v)
    if not m:
        raise NotPlain(v)
    try:
        tz = dt.UTC if m[8] == "Z" else dt.timezone(_offset(m[8]))
        t = dt.datetime(int(m[1]), int(m[2]), int(m[3]), int(m[4]), int(m[5]), int(m[6]), tzinfo=tz)
    except ValueError as exc:
        raise NotPlain(v) from exc
    frac = (m[7] or ".")[1:].ljust(9, "0")
    delta = t - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + int(frac)


def _offset(text: str) -> dt.timedelta:
    hours, minutes = int(text[1:3]), int(text[4:6])
    if hours > 23 or minutes > 59:
        raise ValueError(text)
    sign = -1 if text[0] == "-" else 1
    return sign * dt.timedelta(hours=hours, minutes=minutes)


# ---- ES|QL time bounds -----------------------------------------------------------------

# Queries of these characters only: Python's and the policy's regular expressions then
# agree on every class used below (\s, case-insensitive letters).
_ESQL_TEXT = re.compile(r"[\t\n\r -~]*")
_BLOCK_COMMENT = re.compile(r"/\*([^*/]|\*[^/]|/[^*])*\*/")
_LINE_COMMENT = re.compile(r"//[^\n]*")
_ESQL_COMPARISON = re.compile(
    r'@timestamp\s*(>=|>|<=|<)\s*(?:to_datetime\s*\(\s*)?(?:"([^"]+)"|now\s*\(\s*\)\s*-\s*([0-9]+)\s*([a-z]+))',
    re.IGNORECASE,
)
ESQL_UNITS = {
    **dict.fromkeys(("s", "sec", "secs", "second", "seconds"), "s"),
    **dict.fromkeys(("min", "mins", "minute", "minutes"), "m"),
    **dict.fromkeys(("h", "hour", "hours"), "h"),
    **dict.fromkeys(("d", "day", "days"), "d"),
    **dict.fromkeys(("w", "week", "weeks"), "w"),
    **dict.fromkeys(("mo", "month", "months"), "M"),
    **dict.fromkeys(("y", "yr", "year", "years"), "y"),
}


def esql_bounds(query: Any) -> dict[str, list[Any]] | None:
    """The bounds of an ES|QL query's @timestamp comparisons (with a literal or
    `NOW() - n unit`), read from its text as `time_ranges` in rego/cost.rego reads
    them: {"lo": [bound...], "hi": [bound...]} for `>`/`>=` and `<`/`<=`, each bound
    as in search_ranges. None when the policy should read the text itself."""
    if not isinstance(query, str) or not _ESQL_TEXT.fullmatch(query):
        return None
    clean = _without_comments(query)
    out: dict[str, list[Any]] = {"lo": [], "hi": []}
    if "@timestamp" not in query.lower() or ("<" not in clean and ">" not in clean):
        return out
    try:
        for m in _ESQL_COMPARISON.finditer(clean):
            fact = bound_fact(m[2]) if m[2] else _esql_now_minus(m[3], m[4])
            out["lo" if m[1].startswith(">") else "hi"].append(fact)
    except NotPlain:
        return None
    return out


def _without_comments(query: str) -> str:
    """The text the policy searches: innermost /* */ comments removed twice, then // ones."""
    if "/*" in query:
        query = _BLOCK_COMMENT.sub(" ", _BLOCK_COMMENT.sub(" ", query))
    return _LINE_COMMENT.sub(" ", query) if "//" in query else query


def _esql_now_minus(number: str, unit: str) -> Any:
    if len(number) > 9 or (len(number) > 1 and number.startswith("0")):
        raise NotPlain(number)  # the policy's to_number rejects leading zeros: it fails closed
    u = ESQL_UNITS.get(unit.lower())
    return "unparsed" if u is None else {"now_minus_ns": int(number) * UNIT_NS[u]}


# ---- all facts of a call -------------------------------------------------------------------


def call_facts(tool: str, args: dict[str, Any], esql: dict[str, Any] | None = None) -> dict[str, Any]:
    """The facts to merge into a call's guard input (`esql`: the ES|QL parser's facts, if any)."""
    out: dict[str, Any] = {}
    exprs = index_expressions(tool, args, esql)
    if tool == "es_search":
        body = args.get("body", {})
        objects = _objects(body)  # walked once for both
        in_body = body_index_exprs(body, objects)
        if in_body is not None:
            out["body_index_exprs"] = in_body
            exprs += in_body
        ranges = search_ranges(body, objects)
        if ranges is not None:
            out["search_ranges"] = ranges
        sizes = agg_sizes(body)
        if sizes is not None:
            out["agg_sizes"] = sizes
    if exprs:
        out["index_facts"] = {e: index_items(e) for e in exprs}
    if tool == "esql_query" and (bounds := esql_bounds(args.get("query"))) is not None:
        out["esql_bounds"] = bounds
    marks = args_facts(args)
    if marks is not None:
        out["args_facts"] = marks
    return out


__all__ = [
    "WHITESPACE",
    "agg_sizes",
    "args_facts",
    "body_index_exprs",
    "bound_fact",
    "call_facts",
    "esql_bounds",
    "index_items",
    "search_ranges",
]
