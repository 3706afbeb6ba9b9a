"""The ES|QL parse-tree limits, checked on lark's tree before it is turned into the syntax tree
(which recurses) and long before any SQL: expression depth, query depth, expression size and
integer literal length (store/limits.py has the numbers)."""

from __future__ import annotations

from lark import Token, Tree

from pytest_soclab.errors import EsError, parsing_exception

from .. import limits as L

# wrappers that add a tree level without adding an expression level
_FLAT = frozenset({"call_args", "fields", "named_field", "field", "agg_fields", "agg_field", "by_clause", "order_expr"})


def check_text(query: str) -> None:
    """Bracket nesting, counted on the text before parsing: lark's parse of thousands of nested
    brackets takes seconds, and each bracket is an expression level. Strings, quoted names and
    comments do not count."""
    depth = 0
    i, n = 0, len(query)
    while i < n:
        ch = query[i]
        if ch == '"':
            if query.startswith('"""', i):
                end = query.find('"""', i + 3)
                i = n if end < 0 else end + 3
                continue
            i += 1
            while i < n and query[i] != '"':
                i += 2 if query[i] == "\\" else 1
            i += 1
            continue
        if ch == "`":
            end = query.find("`", i + 1)
            i = n if end < 0 else end + 1
            continue
        if ch == "/" and query.startswith("//", i):
            end = query.find("\n", i)
            i = n if end < 0 else end
            continue
        if ch in "([":
            depth += 1
            if depth > L.ESQL_MAX_EXPRESSION_DEPTH:
                raise L.too_deep_esql("expression", L.ESQL_MAX_EXPRESSION_DEPTH)
        elif ch in ")]":
            depth = max(0, depth - 1)
        i += 1


def check_tree(tree: Tree) -> None:
    commands = [c for c in tree.children if isinstance(c, Tree)]
    if len(commands) - 1 > L.ESQL_MAX_QUERY_DEPTH:
        raise L.too_deep_esql("query", L.ESQL_MAX_QUERY_DEPTH)
    nodes = 0
    stack: list[tuple[Tree | Token, int]] = [(c, 0) for c in commands]
    while stack:
        node, depth = stack.pop()
        nodes += 1
        if nodes > L.ESQL_MAX_EXPRESSION_NODES:
            raise parsing_exception(
                f"ESQL statement exceeded the maximum expression size allowed ({L.ESQL_MAX_EXPRESSION_NODES} nodes)"
            )
        if isinstance(node, Token):
            if node.type == "INTEGER" and len(node.value) > L.ESQL_MAX_INTEGER_DIGITS:
                raise _big_number(node)
            continue
        if node.data not in _FLAT:
            depth += 1
            if depth > L.ESQL_MAX_EXPRESSION_DEPTH:
                raise L.too_deep_esql("expression", L.ESQL_MAX_EXPRESSION_DEPTH)
        stack.extend((child, depth) for child in node.children)


def _big_number(token: Token) -> EsError:
    shown = token.value if len(token.value) <= 40 else token.value[:20] + "..." + token.value[-10:]
    return parsing_exception(
        f"line {token.line}:{token.column}: Number [{shown}] is too large ({len(token.value)} digits; "
        f"integer literals have at most {L.ESQL_MAX_INTEGER_DIGITS})"
    )
