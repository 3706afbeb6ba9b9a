"""ES SQL (a SELECT) -> one ES|QL query.

FROM becomes FROM, WHERE a WHERE (full-text MATCH and QUERY stay right after FROM, where ES|QL
wants them), GROUP BY and the aggregates a STATS, HAVING a WHERE after it, the SELECT list an
EVAL, ORDER BY a SORT, LIMIT a LIMIT, and a KEEP names the columns in SELECT order. A
construct without an ES|QL counterpart is a 400 that names it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, SqlglotError

from pytest_soclab.errors import EsError

from .dialect import EsSql, quote_tables

_IDENT = re.compile(r"^[A-Za-z_@][A-Za-z0-9_@.]*$")
_UNITS = {"YEAR": "year", "YEARS": "year", "QUARTER": "quarter", "MONTH": "month", "MONTHS": "month", "WEEK": "week",
          "WEEKS": "week", "DAY": "day", "DAYS": "day", "HOUR": "hour", "HOURS": "hour", "MINUTE": "minute",
          "MINUTES": "minute", "SECOND": "second", "SECONDS": "second", "MILLISECOND": "millisecond",
          "MILLISECONDS": "millisecond"}  # fmt: skip
_TYPES = {"INT": "integer", "INTEGER": "integer", "BIGINT": "long", "LONG": "long", "SMALLINT": "integer",
          "TINYINT": "integer", "DOUBLE": "double", "FLOAT": "double", "REAL": "double", "DECIMAL": "double",
          "VARCHAR": "keyword", "TEXT": "keyword", "CHAR": "keyword", "KEYWORD": "keyword", "STRING": "keyword",
          "BOOLEAN": "boolean", "TIMESTAMP": "datetime", "DATETIME": "datetime", "DATE": "datetime", "IP": "ip"}  # fmt: skip
_EXTRACT = {exp.Year: "year", exp.Month: "month_of_year", exp.Day: "day_of_month", exp.DayOfMonth: "day_of_month",
            exp.Hour: "hour_of_day", exp.Minute: "minute_of_hour", exp.Second: "second_of_minute",
            exp.DayOfYear: "day_of_year", exp.DayOfWeek: "day_of_week"}  # fmt: skip
_AGGS = {exp.Count, exp.Sum, exp.Avg, exp.Min, exp.Max, exp.Median, exp.StddevPop}
_AGG_NAMES = {"PERCENTILE": "PERCENTILE", "MAD": "MEDIAN_ABSOLUTE_DEVIATION", "MEDIAN_ABSOLUTE_DEVIATION":
              "MEDIAN_ABSOLUTE_DEVIATION", "STDDEV_POP": "STD_DEV"}  # fmt: skip
_SCALAR_NAMES = {"NOW": "NOW()", "CURDATE": "DATE_TRUNC(1 day, NOW())", "TODAY": "DATE_TRUNC(1 day, NOW())"}


def unsupported(what: str) -> EsError:
    return EsError(400, "parsing_exception", f"{what} is not supported by the soclab SQL endpoint")


def _name(text: str) -> str:
    """An ES|QL identifier for a column name."""
    return text if _IDENT.match(text) and not text.endswith(".") else "`" + text.replace("`", "``") + "`"


def _string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


@dataclass
class Plan:
    """The translated query and the columns it returns (names in SELECT order)."""

    esql: str
    columns: list[str]
    limit: int | None


@dataclass
class _Ctx:
    aggs: dict[str, str] = field(default_factory=dict)  # ES|QL aggregate text -> its STATS column
    keys: dict[str, str] = field(default_factory=dict)  # grouping expression text -> its column
    after_stats: bool = False


def parse(sql: str) -> exp.Select:
    if not isinstance(sql, str) or not sql.strip():
        raise EsError(400, "parsing_exception", "[query] is required")
    try:
        tree = sqlglot.parse(quote_tables(sql), read=EsSql)
    except ParseError as exc:
        err = exc.errors[0] if exc.errors else {}
        where = f"line {err.get('line', 1)}:{err.get('col', 1)}: " if err else ""
        what = re.sub(r"\s*<Token .*$", "", str(err.get("description") or exc))
        raise EsError(400, "parsing_exception", f"{where}{what}") from None
    except SqlglotError as exc:
        raise EsError(400, "parsing_exception", f"line 1:1: {str(exc).splitlines()[0]}") from None
    except (IndexError, ValueError) as exc:  # the tokenizer's own failures on truncated input
        raise EsError(400, "parsing_exception", f"line 1:1: cannot parse the query ({type(exc).__name__})") from None
    stmts = [t for t in tree if t is not None]
    if len(stmts) != 1:
        raise EsError(400, "parsing_exception", "one SELECT statement is expected")
    stmt = stmts[0]
    if not isinstance(stmt, exp.Select):
        raise EsError(400, "parsing_exception", f"only SELECT is allowed: the store is read-only, got [{stmt.key.upper()}]")
    return stmt


def _bind(sel: exp.Select, params: list | None) -> exp.Select:
    """`?` placeholders replaced by the request's `params` (values, or {"type", "value"} objects)."""
    values = list(params or [])

    def sub(node: exp.Expression) -> exp.Expression:
        if not isinstance(node, exp.Placeholder):
            return node
        if not values:
            raise EsError(400, "parsing_exception", "not enough [params] for the [?] placeholders")
        v = values.pop(0)
        if isinstance(v, dict):
            v = v.get("value")
        if v is None:
            return exp.Null()
        if isinstance(v, bool):
            return exp.Boolean(this=v)
        if isinstance(v, (int, float)):
            return exp.Literal.number(v)
        return exp.Literal.string(str(v))

    return sel.transform(sub)


def translate(sql: str, params: list | None = None) -> Plan:
    sel = _bind(parse(sql), params)
    try:
        return _translate(sel)
    except (KeyError, IndexError, AttributeError, TypeError, ValueError) as exc:
        # a parse tree missing a part the translation expects (an argument left out)
        raise EsError(400, "parsing_exception", f"cannot translate this query: [{type(exc).__name__}: {exc}]") from None


def _translate(sel: exp.Select) -> Plan:
    for key in ("joins", "with_", "with", "windows", "distinct", "laterals", "qualify", "offset"):
        if sel.args.get(key):
            raise unsupported(key.rstrip("_").upper())
    src = sel.args.get("from_") or sel.args.get("from")
    if src is None:
        return _no_from(sel)
    table = src.this
    if not isinstance(table, exp.Table):
        raise unsupported("a sub-select in FROM")
    index = ".".join(p for p in (table.catalog, table.db, table.name) if p)
    parts = [f"FROM {index}"]
    where = sel.args.get("where")
    if where is not None:
        parts.append(f"WHERE {_expr(where.this, _Ctx())}")
    items = [(_out_name(e), e.this if isinstance(e, exp.Alias) else e) for e in sel.expressions]
    star = any(isinstance(e, exp.Star) for _, e in items)
    group = sel.args.get("group")
    having = sel.args.get("having")
    grouped = bool(group) or any(_has_agg(e) for _, e in items) or having is not None
    ctx = _Ctx()
    if grouped:
        if star:
            raise EsError(400, "verification_exception", "Found 1 problem\nline 1:8: Cannot use [*] with GROUP BY")
        aliases = {n: e for n, e in items}
        by: list[str] = []
        for g in group.expressions if group else []:
            target = aliases.get(g.name) if isinstance(g, exp.Column) and not g.table and g.name in aliases else g
            name = next((n for n, e in items if e == target), _out_name(target))
            text = _expr(target, _Ctx())
            ctx.keys[text] = name
            by.append(f"{_name(name)} = {text}" if _name(name) != text else text)
        for _, e in items:
            _collect_aggs(e, ctx)
        if having is not None:
            _collect_aggs(having.this, ctx)
        for o in (sel.args.get("order").expressions if sel.args.get("order") else []):
            _collect_aggs(o.this, ctx)
        stats = ", ".join(f"{alias} = {text}" for text, alias in ctx.aggs.items())
        parts.append(f"STATS {stats}" + (f" BY {', '.join(by)}" if by else "") if stats else f"STATS BY {', '.join(by)}")
        ctx.after_stats = True
    evals = []
    for name, e in items:
        if isinstance(e, exp.Star):
            continue
        text = _expr(e, ctx)
        if text != _name(name):
            evals.append(f"{_name(name)} = {text}")
    if evals:
        parts.append("EVAL " + ", ".join(evals))
    if having is not None:
        parts.append(f"WHERE {_expr(having.this, ctx)}")
    order = sel.args.get("order")
    if order is not None:
        keys = []
        for o in order.expressions:
            target = o.this
            ref = _expr(target, ctx)
            alias = next((n for n, e in items if e == target), None)
            keys.append(f"{_name(alias) if alias else ref}{' DESC' if o.args.get('desc') else ''}")
        parts.append("SORT " + ", ".join(keys))
    limit = None
    if sel.args.get("limit") is not None:
        limit_exp = sel.args["limit"].expression
        if not isinstance(limit_exp, exp.Literal) or limit_exp.is_string:
            raise EsError(400, "parsing_exception", "LIMIT must be a number")
        limit = int(limit_exp.this)
        parts.append(f"LIMIT {limit}")
    names = [n for n, e in items if not isinstance(e, exp.Star)]
    if not star:
        parts.append("KEEP " + ", ".join(_name(n) for n in names))
    return Plan(" | ".join(parts), names if not star else [], limit)


def _no_from(sel: exp.Select) -> Plan:
    items = [(_out_name(e), e.this if isinstance(e, exp.Alias) else e) for e in sel.expressions]
    fields = ", ".join(f"{_name(n)} = {_expr(e, _Ctx())}" for n, e in items)
    return Plan(f"ROW {fields}", [n for n, _ in items], None)


def _out_name(e: exp.Expression) -> str:
    """The column name ES SQL gives a select item: its alias, a column's name, else its text."""
    if isinstance(e, exp.Alias):
        return e.alias
    if isinstance(e, exp.Column):
        return _column(e)
    return e.sql(dialect=EsSql).replace('"', "")


def _column(e: exp.Column) -> str:
    return ".".join(p.name for p in e.parts)


def _has_agg(e: exp.Expression) -> bool:
    return any(_is_agg(n) for n in e.walk())


def _is_agg(e: exp.Expression) -> bool:
    return type(e) in _AGGS or (isinstance(e, exp.Anonymous) and str(e.this).upper() in _AGG_NAMES)


def _collect_aggs(e: exp.Expression, ctx: _Ctx) -> None:
    for node in e.walk():
        if _is_agg(node):
            text = _agg(node, _Ctx())
            ctx.aggs.setdefault(text, f"__a{len(ctx.aggs)}")


def _agg(e: exp.Expression, ctx: _Ctx) -> str:
    if isinstance(e, exp.Count):
        inner = e.this
        if isinstance(inner, exp.Star) or inner is None:
            return "COUNT(*)"
        if isinstance(inner, exp.Distinct):
            return f"COUNT_DISTINCT({_expr(inner.expressions[0], ctx)})"
        return f"COUNT({_expr(inner, ctx)})"
    if isinstance(e, exp.Anonymous):
        args = ", ".join(_expr(a, ctx) for a in e.expressions)
        return f"{_AGG_NAMES[str(e.this).upper()]}({args})"
    name = {exp.Sum: "SUM", exp.Avg: "AVG", exp.Min: "MIN", exp.Max: "MAX", exp.Median: "MEDIAN",
            exp.StddevPop: "STD_DEV"}[type(e)]  # fmt: skip
    return f"{name}({_expr(e.this, ctx)})"


def _like(pattern: str) -> str:
    out = []
    for ch in pattern:
        out.append({"%": "*", "_": "?", "*": "\\*", "?": "\\?"}.get(ch, ch))
    return "".join(out)


def _interval(e: exp.Interval) -> str:
    value = e.this.name if isinstance(e.this, exp.Literal) else e.this.sql()
    unit = e.args.get("unit")
    text = f"{value} {unit.name}" if unit is not None else value
    m = re.match(r"^\s*(-?\d+)\s+([A-Za-z]+)\s*$", text)
    if not m or m.group(2).upper() not in _UNITS:
        raise unsupported(f"the interval [{e.sql()}]")
    return f"{m.group(1)} {_UNITS[m.group(2).upper()]}"


_BINARY = {exp.EQ: "==", exp.NEQ: "!=", exp.GT: ">", exp.GTE: ">=", exp.LT: "<", exp.LTE: "<=", exp.Add: "+",
           exp.Sub: "-", exp.Mul: "*", exp.Div: "/", exp.Mod: "%", exp.And: "AND", exp.Or: "OR"}  # fmt: skip


def _expr(e: exp.Expression, ctx: _Ctx) -> str:
    if ctx.after_stats:
        if _is_agg(e):
            return ctx.aggs[_agg(e, _Ctx())]
        if not _has_agg(e):
            plain = _expr(e, _Ctx())
            if plain in ctx.keys:
                return _name(ctx.keys[plain])
    if isinstance(e, exp.Paren):
        return f"({_expr(e.this, ctx)})"
    if isinstance(e, exp.Column):
        return _name(_column(e))
    if isinstance(e, exp.Literal):
        return _string(e.this) if e.is_string else str(e.this)
    if isinstance(e, exp.Boolean):
        return "true" if e.this else "false"
    if isinstance(e, exp.Null):
        return "null"
    if type(e) in _BINARY:
        return f"({_expr(e.this, ctx)} {_BINARY[type(e)]} {_expr(e.expression, ctx)})"
    if isinstance(e, exp.Neg):
        return f"-{_expr(e.this, ctx)}"
    if isinstance(e, exp.Not):
        inner = e.this
        if isinstance(inner, exp.Is):
            return f"{_expr(inner.this, ctx)} IS NOT NULL"
        if isinstance(inner, exp.In):
            return f"{_expr(inner.this, ctx)} NOT IN ({', '.join(_expr(x, ctx) for x in inner.expressions)})"
        if isinstance(inner, exp.Like):
            return f"{_expr(inner.this, ctx)} NOT LIKE {_string(_like(inner.expression.name))}"
        return f"NOT ({_expr(inner, ctx)})"
    if isinstance(e, exp.Is):
        return f"{_expr(e.this, ctx)} IS NULL"
    if isinstance(e, exp.In):
        if e.args.get("query"):
            raise unsupported("IN with a sub-select")
        return f"{_expr(e.this, ctx)} IN ({', '.join(_expr(x, ctx) for x in e.expressions)})"
    if isinstance(e, exp.Like):
        return f"{_expr(e.this, ctx)} LIKE {_string(_like(e.expression.name))}"
    if isinstance(e, exp.RegexpLike):
        return f"{_expr(e.this, ctx)} RLIKE {_expr(e.expression, ctx)}"
    if isinstance(e, exp.Between):
        x = _expr(e.this, ctx)
        return f"({x} >= {_expr(e.args['low'], ctx)} AND {x} <= {_expr(e.args['high'], ctx)})"
    if isinstance(e, exp.Cast):
        t = _TYPES.get(e.to.this.name if hasattr(e.to.this, "name") else str(e.to.this).split(".")[-1])
        if t is None:
            raise unsupported(f"CAST to [{e.to.sql()}]")
        return f"({_expr(e.this, ctx)})::{t}"
    if isinstance(e, exp.Interval):
        return _interval(e)
    if isinstance(e, exp.Case):
        parts = []
        for branch in e.args.get("ifs") or []:
            parts += [_expr(branch.this, ctx), _expr(branch.args["true"], ctx)]
        if e.args.get("default") is not None:
            parts.append(_expr(e.args["default"], ctx))
        return f"CASE({', '.join(parts)})"
    if isinstance(e, exp.If):
        args = [_expr(e.this, ctx), _expr(e.args["true"], ctx)]
        if e.args.get("false") is not None:
            args.append(_expr(e.args["false"], ctx))
        return f"CASE({', '.join(args)})"
    if _is_agg(e):
        raise EsError(400, "verification_exception", f"Found 1 problem\nline 1:1: aggregate [{e.sql()}] outside of a grouped query")
    return _function(e, ctx)


def _function(e: exp.Expression, ctx: _Ctx) -> str:
    def a(x: exp.Expression) -> str:
        return _expr(x, ctx)

    if type(e) in _EXTRACT:
        return f'DATE_EXTRACT("{_EXTRACT[type(e)]}", {a(e.this)})'
    simple = {exp.Length: "LENGTH", exp.Upper: "TO_UPPER", exp.Lower: "TO_LOWER", exp.Abs: "ABS",
              exp.Ascii: None}  # fmt: skip
    if type(e) in simple:
        if simple[type(e)] is None:
            raise unsupported(type(e).__name__.upper())
        return f"{simple[type(e)]}({a(e.this)})"
    if isinstance(e, exp.Concat):
        return f"CONCAT({', '.join(a(x) for x in e.expressions)})"
    if isinstance(e, exp.Substring):
        if e.args.get("start") is None:
            raise EsError(400, "parsing_exception", f"error building [substring]: expects two or three arguments, got [{e.sql()}]")
        args = [a(e.this), a(e.args["start"])] + ([a(e.args["length"])] if e.args.get("length") else [])
        return f"SUBSTRING({', '.join(args)})"
    if isinstance(e, exp.Trim):
        fn = {"LEADING": "LTRIM", "TRAILING": "RTRIM"}.get(str(e.args.get("position") or "").upper(), "TRIM")
        return f"{fn}({a(e.this)})"
    if isinstance(e, (exp.Left, exp.Right)):
        return f"{'LEFT' if isinstance(e, exp.Left) else 'RIGHT'}({a(e.this)}, {a(e.expression)})"
    if isinstance(e, exp.Replace):
        # ES SQL replaces literally; ES|QL's REPLACE takes a regex
        needle = e.expression
        pattern = _string(re.escape(needle.this)) if isinstance(needle, exp.Literal) else a(needle)
        return f"REPLACE({a(e.this)}, {pattern}, {a(e.args['replacement'])})"
    if isinstance(e, exp.StrPosition):
        return f"LOCATE({a(e.this)}, {a(e.args['substr'])})"
    if isinstance(e, exp.StartsWith):
        return f"STARTS_WITH({a(e.this)}, {a(e.expression)})"
    if isinstance(e, exp.Coalesce):
        return f"COALESCE({', '.join(a(x) for x in [e.this, *e.expressions])})"
    if isinstance(e, (exp.Greatest, exp.Least)):
        return f"{'GREATEST' if isinstance(e, exp.Greatest) else 'LEAST'}({', '.join(a(x) for x in [e.this, *e.expressions])})"
    if isinstance(e, exp.Round):
        return f"ROUND({a(e.this)}" + (f", {a(e.args['decimals'])})" if e.args.get("decimals") else ")")
    if isinstance(e, (exp.CurrentTimestamp, exp.CurrentDate)):
        return "NOW()" if isinstance(e, exp.CurrentTimestamp) else "DATE_TRUNC(1 day, NOW())"
    if isinstance(e, exp.DateTrunc):
        unit = e.args["unit"]
        name = unit.name.upper() if unit is not None else ""
        if name not in _UNITS:
            raise unsupported(f"DATE_TRUNC unit [{name}]")
        return f"DATE_TRUNC(1 {_UNITS[name]}, {a(e.this)})"
    if isinstance(e, exp.Anonymous):
        name = str(e.this).upper()
        args = e.expressions
        if name in _SCALAR_NAMES and not args:
            return _SCALAR_NAMES[name]
        if name == "MATCH" and len(args) >= 2:
            return f"MATCH({a(args[0])}, {a(args[1])})"
        if name == "QUERY" and args:
            return f"QSTR({a(args[0])})"
        if name == "CIDR_MATCH" and len(args) >= 2:
            return f"CIDR_MATCH({', '.join(a(x) for x in args)})"
        if name == "HISTOGRAM" and len(args) == 2:
            return f"BUCKET({a(args[0])}, {a(args[1])})"
        if name == "ISNULL" and len(args) == 2:
            return f"COALESCE({a(args[0])}, {a(args[1])})"
        if name in ("ENDS_WITH", "LTRIM", "RTRIM", "REVERSE", "REPEAT", "SPACE", "SPLIT"):
            return f"{name}({', '.join(a(x) for x in args)})"
        raise unsupported(f"the function [{name}]")
    raise unsupported(f"[{e.sql(dialect=EsSql)}]")
