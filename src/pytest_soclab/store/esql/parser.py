"""ES|QL text -> syntax tree, with Elasticsearch's parsing_exception messages on bad input."""

from __future__ import annotations

from functools import cache, lru_cache
from importlib import resources
from typing import Any

from lark import Lark, Token, Transformer, Tree, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken, VisitError

from pytest_soclab.errors import EsError, parsing_exception

from . import ast as A
from .depth import check_text, check_tree
from .types import parse_span

_NAMES = {
    "$END": "<EOF>", "PIPE": "'|'", "COMMA": "','", "LPAR": "'('", "RPAR": "')'", "LSQB": "'['", "RSQB": "']'",
    "LBRACE": "'{'", "RBRACE": "'}'", "EQUAL": "'='", "DOT": "'.'", "COLON": "':'", "__ANON_0": "'::'",
    "INTEGER": "INTEGER_LITERAL", "DECIMAL": "DECIMAL_LITERAL", "STRING": "QUOTED_STRING",
    "TRIPLE_STRING": "QUOTED_STRING", "IDENTIFIER": "UNQUOTED_IDENTIFIER", "QUOTED_ID": "QUOTED_IDENTIFIER",
    "PARAM": "'?'", "INDEX_PATTERN": "UNQUOTED_SOURCE", "NAME_PATTERN": "ID_PATTERN", "STAR": "'*'",
    "COMPARISON": "{'==', '!=', '<', '<=', '>', '>=', '=~'}", "ADD_OP": "{'+', '-'}", "MUL_OP": "{'*', '/', '%'}",
}  # fmt: skip


@cache
def _parser() -> Lark:
    grammar = resources.files("pytest_soclab.store.esql").joinpath("grammar.lark").read_text(encoding="utf-8")
    return Lark(grammar, parser="lalr", propagate_positions=True, maybe_placeholders=False)


def _expected(names: set[str] | frozenset[str]) -> str:
    shown = set()
    for n in names:
        if n in ("UNSUPPORTED_CMD", "INLINESTATS", "INLINE") or n.startswith("__ANON"):
            if n.startswith("__ANON"):
                shown.add("'::'")
            continue
        if n == "VBAR":
            shown.add("'|'")
        elif n in _NAMES:
            shown.add(_NAMES[n])
        elif n.isupper() and not n.startswith("__"):
            shown.add(f"'{n.lower()}'")
        else:
            shown.add(f"'{n}'")
    return "{" + ", ".join(sorted(shown)) + "}"


def parse(query: str) -> A.Query:
    """The query's syntax tree. Trees are shared (the guard's ES|QL facts and the store
    parse the same text, one right after the other): treat them as read-only."""
    if not isinstance(query, str):
        raise parsing_exception("[query] must be a string")
    return _parse_cached(query)


@lru_cache(maxsize=64)
def _parse_cached(query: str) -> A.Query:
    if not query.strip():
        raise parsing_exception("line 1:1: mismatched input '<EOF>' expecting {'row', 'from', 'show'}")
    check_text(query)
    try:
        tree = _parser().parse(query)
    except UnexpectedCharacters as exc:
        ch = query[exc.pos_in_stream] if exc.pos_in_stream < len(query) else "<EOF>"
        if ch == '"':
            raise parsing_exception(f"line {exc.line}:{exc.column}: token recognition error at: '{_tail(query, exc.pos_in_stream)}'") from None
        raise parsing_exception(f"line {exc.line}:{exc.column}: token recognition error at: '{ch}'") from None
    except UnexpectedToken as exc:
        tok = exc.token
        text = "<EOF>" if tok.type == "$END" else str(tok)
        line = tok.line if tok.line is not None else _last_line(query)
        col = tok.column if tok.column is not None else _last_col(query)
        kind = "extraneous input" if tok.type != "$END" and exc.state is not None and _is_extraneous(exc) else "mismatched input"
        raise parsing_exception(f"line {line}:{col}: {kind} '{text}' expecting {_expected(exc.expected)}") from None
    except UnexpectedEOF as exc:
        raise parsing_exception(
            f"line {_last_line(query)}:{_last_col(query)}: mismatched input '<EOF>' expecting {_expected(exc.expected)}"
        ) from None
    except UnexpectedInput as exc:  # pragma: no cover - other lark input errors
        raise parsing_exception(f"line {getattr(exc, 'line', 1)}:{getattr(exc, 'column', 1)}: {exc}") from None
    check_tree(tree)
    try:
        return _ToAst(query).transform(tree)
    except VisitError as exc:
        if isinstance(exc.orig_exc, EsError):
            raise exc.orig_exc from None
        raise


def _is_extraneous(exc: UnexpectedToken) -> bool:
    return False


def _tail(query: str, pos: int) -> str:
    return query[pos:].split("\n")[0]


def _last_line(query: str) -> int:
    return query.count("\n") + 1


def _last_col(query: str) -> int:
    return len(query) - (query.rfind("\n") + 1) + 1


_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", '"': '"', "\\": "\\"}


def unquote_string(token: str, pos: A.Pos) -> str:
    if token.startswith('"""'):
        return token[3:-3]
    body = token[1:-1]
    out = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            if nxt not in _ESCAPES:
                raise parsing_exception(
                    f"{pos}: Invalid escape sequence \\{nxt} in [{token}]; only \\t, \\n, \\r, \\\", \\\\ are allowed"
                )
            out.append(_ESCAPES[nxt])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _unquote_id(text: str) -> str:
    if text.startswith("`"):
        return text[1:-1].replace("``", "`")
    return text


def _pos(meta: Any) -> A.Pos:
    return A.Pos(getattr(meta, "line", 1), getattr(meta, "column", 1))


def _tpos(tok: Token) -> A.Pos:
    return A.Pos(tok.line or 1, tok.column or 1)


@v_args(meta=True)
class _ToAst(Transformer):  # type: ignore[type-arg]
    def __init__(self, query: str):
        super().__init__()
        self.q = query

    def _text(self, meta: Any) -> str:
        return self.q[meta.start_pos : meta.end_pos]

    # -- top level

    def start(self, meta: Any, items: list[Any]) -> A.Query:
        return A.Query(items[0], list(items[1:]))

    def from_command(self, meta: Any, items: list[Any]) -> A.From:
        indices = [i for i in items[1:] if isinstance(i, tuple)]
        metadata = next((i for i in items if isinstance(i, list)), [])
        return A.From(_pos(meta), "FROM", indices, metadata)

    def metadata(self, meta: Any, items: list[Any]) -> list[str]:
        return [i for i in items[1:]]

    def index_pattern(self, meta: Any, items: list[Any]) -> tuple[str, A.Pos]:
        tok = items[0]
        text = str(tok)
        if tok.type == "STRING":
            text = unquote_string(text, _tpos(tok))
        return text, _tpos(tok)

    def row_command(self, meta: Any, items: list[Any]) -> A.Row:
        return A.Row(_pos(meta), "ROW", items[1])

    def show_command(self, meta: Any, items: list[Any]) -> A.Show:
        what = str(items[1]).upper()
        if what != "INFO":
            raise parsing_exception(f"{_tpos(items[1])}: mismatched input '{items[1]}' expecting 'info'")
        return A.Show(_pos(meta), "SHOW", what)

    def where_command(self, meta: Any, items: list[Any]) -> A.Where:
        return A.Where(_pos(meta), "WHERE", items[1])

    def eval_command(self, meta: Any, items: list[Any]) -> A.Eval:
        return A.Eval(_pos(meta), "EVAL", items[1])

    def stats_command(self, meta: Any, items: list[Any]) -> A.Stats:
        inline = str(items[0]).upper() in ("INLINESTATS", "INLINE")
        aggs: list[Any] = []
        by: list[Any] = []
        for it in items[1:]:
            if isinstance(it, tuple) and it[0] == "by":
                by = it[1]
            elif isinstance(it, tuple) and it[0] == "aggs":
                aggs = it[1]
        if inline:
            return A.InlineStats(_pos(meta), "INLINE STATS", aggs, by)
        return A.Stats(_pos(meta), "STATS", aggs, by)

    def by_clause(self, meta: Any, items: list[Any]) -> tuple[str, Any]:
        return ("by", items[1])

    def agg_fields(self, meta: Any, items: list[Any]) -> tuple[str, Any]:
        return ("aggs", items)

    def agg_field(self, meta: Any, items: list[Any]) -> tuple[str, A.Node, A.Node | None]:
        name, expr = items[0]
        cond = items[2] if len(items) > 2 else None
        return name, expr, cond

    def sort_command(self, meta: Any, items: list[Any]) -> A.Sort:
        return A.Sort(_pos(meta), "SORT", items[1:])

    def order_expr(self, meta: Any, items: list[Any]) -> A.SortKey:
        desc = False
        nulls = None
        for it in items[1:]:
            if isinstance(it, tuple) and it[0] == "ord":
                desc = it[1]
            elif isinstance(it, tuple) and it[0] == "nulls":
                nulls = it[1]
        return A.SortKey(items[0], desc, nulls)

    def ordering(self, meta: Any, items: list[Any]) -> tuple[str, bool]:
        return ("ord", str(items[0]).upper() == "DESC")

    def nulls_order(self, meta: Any, items: list[Any]) -> tuple[str, bool]:
        return ("nulls", str(items[1]).upper() == "FIRST")

    def limit_command(self, meta: Any, items: list[Any]) -> A.Limit:
        return items[1] if isinstance(items[1], A.Limit) else A.Limit(_pos(meta), "LIMIT", items[1])

    def limit_value(self, meta: Any, items: list[Any]) -> A.Limit | int:
        tok = items[0]
        if tok.type == "PARAM":
            return A.Limit(_pos(meta), "LIMIT", None, str(tok)[1:])
        if tok.type == "ADD_OP":
            value = int(str(items[1])) * (-1 if str(tok) == "-" else 1)
            if value < 0:
                raise parsing_exception(f"{_tpos(tok)}: Invalid value for LIMIT [{value}], expecting a non negative integer")
            return value
        return int(str(tok))

    def keep_command(self, meta: Any, items: list[Any]) -> A.Keep:
        return A.Keep(_pos(meta), "KEEP", items[1:])

    def drop_command(self, meta: Any, items: list[Any]) -> A.Drop:
        return A.Drop(_pos(meta), "DROP", items[1:])

    def name_pattern(self, meta: Any, items: list[Any]) -> tuple[str, A.Pos]:
        return _unquote_id(str(items[0])), _tpos(items[0])

    def rename_command(self, meta: Any, items: list[Any]) -> A.Rename:
        return A.Rename(_pos(meta), "RENAME", items[1:])

    def rename_as(self, meta: Any, items: list[Any]) -> tuple[str, str, A.Pos]:
        old, new = items[0], items[2]
        return old[0], new[0], old[1]

    def rename_assign(self, meta: Any, items: list[Any]) -> tuple[str, str, A.Pos]:
        new, old = items[0], items[1]
        return old[0], new[0], old[1]

    def dissect_command(self, meta: Any, items: list[Any]) -> A.Dissect:
        opts = dict(i for i in items[3:] if isinstance(i, tuple))
        return A.Dissect(_pos(meta), "DISSECT", items[1], items[2].value, opts)

    def command_option(self, meta: Any, items: list[Any]) -> tuple[str, Any]:
        return str(items[0]), items[1]

    def grok_command(self, meta: Any, items: list[Any]) -> A.Grok:
        return A.Grok(_pos(meta), "GROK", items[1], items[2].value)

    def mv_expand_command(self, meta: Any, items: list[Any]) -> A.MvExpand:
        name, pos = items[1]
        return A.MvExpand(_pos(meta), "MV_EXPAND", name, pos)

    def sample_command(self, meta: Any, items: list[Any]) -> A.Sample:
        num = items[1]
        value = float(num.value)
        if not 0 < value < 1:
            raise EsError(400, "verification_exception", f"Found 1 problem\n{_pos(meta)}: invalid value for SAMPLE "
                          f"probability [{num.text}], expecting a number between 0 and 1, exclusive")  # fmt: skip
        return A.Sample(_pos(meta), "SAMPLE", value)

    def lookup_join_command(self, meta: Any, items: list[Any]) -> A.LookupJoin:
        index, pos = items[2]
        keys = [i for i in items[4:] if isinstance(i, tuple)]
        return A.LookupJoin(_pos(meta), "LOOKUP JOIN", index, pos, keys)

    def unsupported_command(self, meta: Any, items: list[Any]) -> A.Unsupported:
        return A.Unsupported(_pos(meta), str(items[0]).upper(), str(items[0]).upper())

    def fields(self, meta: Any, items: list[Any]) -> list[tuple[str, A.Node]]:
        return items

    def named_field(self, meta: Any, items: list[Any]) -> tuple[str, A.Node]:
        return items[0][0], items[1]

    def unnamed_field(self, meta: Any, items: list[Any]) -> tuple[str, A.Node]:
        return items[0].text, items[0]

    def qualified_name(self, meta: Any, items: list[Any]) -> tuple[str, A.Pos]:
        return ".".join(_unquote_id(str(t)) for t in items), _tpos(items[0])

    # -- expressions

    def attribute(self, meta: Any, items: list[Any]) -> A.Attr:
        name, pos = items[0]
        return A.Attr(pos, self._text(meta), name)

    def or_op(self, meta: Any, items: list[Any]) -> A.Logic:
        return A.Logic(_pos(meta), self._text(meta), "OR", items[0], items[2])

    def and_op(self, meta: Any, items: list[Any]) -> A.Logic:
        return A.Logic(_pos(meta), self._text(meta), "AND", items[0], items[2])

    def not_op(self, meta: Any, items: list[Any]) -> A.Not:
        return A.Not(_pos(meta), self._text(meta), items[1])

    def _negated(self, items: list[Any]) -> tuple[bool, list[Any]]:
        rest = [i for i in items if not (isinstance(i, Token) and i.type in ("NOT", "LIKE", "RLIKE", "IN", "IS", "NULL"))]
        neg = any(isinstance(i, Token) and i.type == "NOT" for i in items)
        return neg, rest

    def like_op(self, meta: Any, items: list[Any]) -> A.Like:
        neg, rest = self._negated(items)
        return A.Like(_pos(meta), self._text(meta), rest[0], rest[1], neg, False)

    def rlike_op(self, meta: Any, items: list[Any]) -> A.Like:
        neg, rest = self._negated(items)
        return A.Like(_pos(meta), self._text(meta), rest[0], rest[1], neg, True)

    def pattern_list(self, meta: Any, items: list[Any]) -> list[str]:
        return [i.value for i in items]

    def in_op(self, meta: Any, items: list[Any]) -> A.InList:
        neg, rest = self._negated(items)
        return A.InList(_pos(meta), self._text(meta), rest[0], rest[1:], neg)

    def is_null(self, meta: Any, items: list[Any]) -> A.IsNull:
        neg, rest = self._negated(items)
        return A.IsNull(_pos(meta), self._text(meta), rest[0], neg)

    def match_op(self, meta: Any, items: list[Any]) -> A.MatchOp:
        return A.MatchOp(_pos(meta), self._text(meta), items[0], items[1])

    def comparison(self, meta: Any, items: list[Any]) -> A.BinOp:
        return A.BinOp(_pos(meta), self._text(meta), str(items[1]), items[0], items[2])

    def arith(self, meta: Any, items: list[Any]) -> A.BinOp:
        return A.BinOp(_pos(meta), self._text(meta), str(items[1]), items[0], items[2])

    def unary(self, meta: Any, items: list[Any]) -> A.Node:
        if str(items[0]) == "+":
            return items[1]
        inner = items[1]
        if isinstance(inner, A.Literal) and inner.type in ("integer", "long", "double"):
            value = -inner.value
            return A.Literal(_pos(meta), self._text(meta), value, _int_type(value) if inner.type != "double" else "double")
        return A.Neg(_pos(meta), self._text(meta), inner)

    def cast(self, meta: Any, items: list[Any]) -> A.Cast:
        return A.Cast(_pos(meta), self._text(meta), items[0], str(items[1]).lower())

    def function_call(self, meta: Any, items: list[Any]) -> A.Call:
        name = str(items[0]).upper()
        args: list[A.Node] = []
        star = False
        options = None
        if len(items) > 1:
            star, args, options = items[1]
        return A.Call(_pos(meta), self._text(meta), name, args, star, options)

    def star_args(self, meta: Any, items: list[Any]) -> tuple[bool, list[A.Node], None]:
        return True, [], None

    def call_args(self, meta: Any, items: list[Any]) -> tuple[bool, list[A.Node], dict[str, Any] | None]:
        options = None
        if items and isinstance(items[-1], dict):
            options = items.pop()
        return False, items, options

    def map_literal(self, meta: Any, items: list[Any]) -> dict[str, Any]:
        return dict(items)

    def map_entry(self, meta: Any, items: list[Any]) -> tuple[str, Any]:
        lit = items[1]
        return items[0].value, lit.value if isinstance(lit, A.Literal) else lit

    # -- constants

    def null_lit(self, meta: Any, items: list[Any]) -> A.Literal:
        return A.Literal(_pos(meta), self._text(meta), None, "null")

    def true_lit(self, meta: Any, items: list[Any]) -> A.Literal:
        return A.Literal(_pos(meta), self._text(meta), True, "boolean")

    def false_lit(self, meta: Any, items: list[Any]) -> A.Literal:
        return A.Literal(_pos(meta), self._text(meta), False, "boolean")

    def int_lit(self, meta: Any, items: list[Any]) -> A.Literal:
        value = int(str(items[0]))
        if value >= 2**63:
            return A.Literal(_pos(meta), self._text(meta), float(value), "double")
        return A.Literal(_pos(meta), self._text(meta), value, _int_type(value))

    def dec_lit(self, meta: Any, items: list[Any]) -> A.Literal:
        return A.Literal(_pos(meta), self._text(meta), float(str(items[0])), "double")

    def signed_lit(self, meta: Any, items: list[Any]) -> A.Literal:
        """A signed number inside an array literal (`[-1, +2]`): folded, as the grammar's
        integerValue / decimalValue carry their sign."""
        sign, num = str(items[0]), items[1]
        value = -num.value if sign == "-" else num.value
        t = num.type if num.type == "double" else _int_type(value)
        return A.Literal(_pos(meta), self._text(meta), value, t)

    def span_lit(self, meta: Any, items: list[Any]) -> A.Literal:
        num, unit = items[0], items[1]
        if num.type != "integer" and num.type != "long":
            raise parsing_exception(f"{_pos(meta)}: Unexpected time interval qualifier: '{unit}'")
        return A.Literal(_pos(meta), self._text(meta), *parse_span(int(num.value), str(unit), _pos(meta)))

    def string(self, meta: Any, items: list[Any]) -> A.Literal:
        tok = items[0]
        return A.Literal(_pos(meta), self._text(meta), unquote_string(str(tok), _tpos(tok)), "keyword")

    def param(self, meta: Any, items: list[Any]) -> A.Param:
        text = str(items[0])
        if text.startswith("??"):
            raise parsing_exception(f"{_pos(meta)}: identifier parameters [{text}] are not supported by the soclab embedded store")
        return A.Param(_pos(meta), text, text[1:])

    def empty_array(self, meta: Any, items: list[Any]) -> A.Literal:
        return A.Literal(_pos(meta), self._text(meta), None, "null")

    def array_lit(self, meta: Any, items: list[Any]) -> A.Literal:
        vals = [i.value if isinstance(i, A.Literal) else i for i in items]
        types = {i.type for i in items if isinstance(i, A.Literal) and i.type != "null"}
        if any(isinstance(i, A.Param) for i in items):
            raise parsing_exception(f"{_pos(meta)}: parameters inside array literals are not supported")
        if types <= {"integer", "long"} and types:
            t = "long" if "long" in types else "integer"
        elif types <= {"integer", "long", "double"} and types:
            t = "double"
            vals = [float(v) if v is not None else None for v in vals]
        elif len(types) == 1:
            t = types.pop()
        elif not types:
            t = "null"
        else:
            raise parsing_exception(f"{_pos(meta)}: array elements must be of the same type, found {sorted(types)}")
        return A.Literal(_pos(meta), self._text(meta), vals, t)

    def __default__(self, data: Any, children: Any, meta: Any) -> Any:  # pragma: no cover
        return Tree(data, children, meta)


def _int_type(value: int) -> str:
    return "integer" if -(2**31) <= value < 2**31 else "long"

