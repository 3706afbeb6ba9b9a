"""The pieces every query compiles with: the compiled predicate and score, the per-index context,
constant folding AND/OR, field resolution, and the option parsing the query kinds share."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..catalog import FieldRef, IndexInfo
from ..limits import MAX_CLAUSE_COUNT, too_many_clauses
from ..terms import TermDict
from ..tokens import Bits, TextIndex
from .errors import EsError, parsing_exception, shard_failure

if TYPE_CHECKING:
    from ..engine import Engine


TRUE = "TRUE"
FALSE = "FALSE"


@dataclass(frozen=True)
class Compiled:
    where: str
    score: str  # a DOUBLE expression, meaningful for matching rows
    # the documents `where` matches, when it is made of indexed text clauses only (store/tokens.py)
    bits: Bits | None = None


@dataclass
class Ctx:
    info: IndexInfo
    now: dt.datetime
    depth: int = 0  # nesting of the query being compiled (indices.query.bool.max_nested_depth)
    clauses: int = 0  # queries compiled so far (indices.query.bool.max_clause_count)
    # text column -> its index in this engine (store/tokens.py); empty: test the text itself
    tokens: dict[str, TextIndex] = field(default_factory=dict)
    # wildcard column -> its term dictionary in this engine (store/terms.py)
    terms: dict[str, TermDict] = field(default_factory=dict)

    def fail(self, type_: str, reason: str) -> EsError:
        return shard_failure(self.info.concrete, type_, reason)

    @classmethod
    def of(cls, engine: Engine, info: IndexInfo, now: dt.datetime) -> Ctx:
        """A context that reads `info`'s indexes in `engine` (text tokens, wildcard dictionaries)."""
        return cls(info, now, tokens=engine.token_relations(info), terms=engine.term_relations(info))


MATCH_ALL = Compiled(TRUE, "1.0")


def col_sql(ref: FieldRef) -> str:
    return ref.sql


def any_value(ref: FieldRef, pred: Callable[[str], str]) -> str:
    """A per-value predicate over a field, true when any value satisfies it."""
    if not ref.multi:
        return f"({pred(col_sql(ref))})"
    return f"(len(list_filter({col_sql(ref)}, lambda __v: {pred('__v')})) > 0)"


def or_(parts: list[str]) -> str:
    return connect(parts, "OR", FALSE, TRUE)


def and_(parts: list[str]) -> str:
    return connect(parts, "AND", TRUE, FALSE)


def connect(parts: list[str], op: str, unit: str, zero: str) -> str:
    """Join predicates with `op`, folding constants: `unit` (its identity) drops out, `zero` wins."""
    parts = [p for p in parts if p != unit]
    if not parts:
        return unit
    if zero in parts:
        return zero
    return parts[0] if len(parts) == 1 else "(" + f" {op} ".join(f"({p})" for p in parts) + ")"


def count_clauses(ctx: Ctx, n: int) -> None:
    """Count `n` more clauses of the request (each query, each field a query expands to)."""
    ctx.clauses += n
    if ctx.clauses > MAX_CLAUSE_COUNT:
        raise too_many_clauses(ctx.clauses)


def tie_score(scores: list[str], tie: float) -> str:
    """The best score plus `tie` times the others: each score's SQL once (bound by a lambda), so a
    nested dis_max does not copy its children's SQL three times at every level."""
    if not tie:
        return f"greatest({', '.join(scores)})"
    listed = "[" + ", ".join(f"({s})::DOUBLE" for s in scores) + "]"
    return f"list_transform([{listed}], lambda __s: list_max(__s) + {tie!r} * (list_sum(__s) - list_max(__s)))[1]"


def scored(where: str, boost: float, bits: Bits | None = None) -> Compiled:
    return Compiled(where, repr(float(boost)), bits)


def field_body(kind: str, body: Any, value_key: str = "value") -> tuple[str, dict[str, Any]]:
    """`{field: value}` or `{field: {value_key: ..., options}}` -> (field, options with value_key)."""
    if not isinstance(body, dict) or not body:
        raise parsing_exception(f"[{kind}] query malformed, no start_object after query name")
    fields = [k for k in body if k not in ("boost", "_name")]
    if len(fields) != 1:
        if not fields:
            raise parsing_exception(f"[{kind}] query malformed, no field specified")
        raise parsing_exception(f"[{kind}] query doesn't support multiple fields, found [{fields[0]}] and [{fields[1]}]")
    name = fields[0]
    spec = body[name]
    if isinstance(spec, dict):
        opts = dict(spec)
        if value_key not in opts and kind == "wildcard" and "wildcard" in opts:
            opts[value_key] = opts["wildcard"]
        if value_key not in opts and kind in ("term", "prefix", "regexp", "wildcard", "fuzzy"):
            raise parsing_exception(f"[{kind}] query does not support [{next(iter(opts), '')}]" if opts else f"No value specified for {kind} query")
    else:
        opts = {value_key: spec}
    if "boost" in body:
        opts.setdefault("boost", body["boost"])
    return name, opts


def boost_of(opts: dict[str, Any]) -> float:
    b = opts.get("boost", 1.0)
    try:
        return float(b)
    except (TypeError, ValueError):
        raise parsing_exception(f"[boost] must be a number, got [{b}]") from None


def check_keys(kind: str, opts: dict[str, Any], allowed: set[str]) -> None:
    for key in opts:
        if key not in allowed and key not in ("boost", "_name"):
            raise parsing_exception(f"[{kind}] query does not support [{key}]")


def resolve_field(ctx: Ctx, name: str) -> FieldRef | None:
    if name == "_id":
        return FieldRef("_id", "_id", "keyword", False)
    return ctx.info.lookup(name)


def index_names(ctx: Ctx) -> set[str]:
    return {ctx.info.name, ctx.info.concrete}


def expand_fields(ctx: Ctx, pattern: str) -> list[str]:
    rx = re.compile("^" + ".*".join(re.escape(p) for p in pattern.split("*")) + "$")
    return [n for n in ctx.info.field_names() if rx.match(n)]


def fuzziness(spec: Any, value: str) -> int:
    s = str(spec).upper()
    if s.startswith("AUTO"):
        lo, hi = 3, 6
        if ":" in s:
            parts = s.split(":", 1)[1].split(",")
            lo, hi = int(parts[0]), int(parts[1])
        n = len(value)
        return 0 if n < lo else (1 if n < hi else 2)
    try:
        return min(2, int(float(s)))
    except ValueError:
        raise parsing_exception(f"failed to parse fuzziness [{spec}]") from None


def min_should_match(spec: Any, n: int) -> int:
    """minimum_should_match: 2, -1, "75%", "-25%", "3<90%" combinations."""
    s = str(spec).strip()
    if "<" in s:
        result = n
        for part in s.split():
            cond, _, val = part.partition("<")
            if n > int(cond):
                result = min_should_match(val, n)
        return result
    try:
        if s.endswith("%"):
            pct = float(s[:-1])
            k = int(n * abs(pct) / 100)
            return n - k if pct < 0 else k
        k = int(s)
    except ValueError:
        raise parsing_exception(f"[minimum_should_match] could not parse [{spec}]") from None
    return n + k if k < 0 else k
