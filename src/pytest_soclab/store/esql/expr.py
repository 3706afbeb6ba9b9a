"""Typed SQL expressions and the translation context shared by the ES|QL translator and its functions."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..sqlutil import literal
from . import ast as A

# warning message (the second Warning header) per kind of runtime failure
MV_WARNING = "java.lang.IllegalArgumentException: single-value function encountered multi-value"


@dataclass
class TE:
    """A translated expression: SQL text, ES|QL type, multi-valued or not."""

    sql: str
    type: str
    multi: bool = False
    const: bool = False  # a literal (foldable) value
    value: Any = None  # its Python value when const
    bad: bool = False  # translation failed (a problem was recorded); suppresses follow-up errors


@dataclass
class Col:
    name: str
    type: str
    alias: str
    multi: bool
    origin: str = ""  # why a column is unsupported (type conflict details)


@dataclass
class Ctx:
    """Per-query translation state."""

    token: int
    now_sql: str
    params: list[Any] | None = None
    problems: list[str] = field(default_factory=list)
    warnings: dict[int, tuple[A.Pos, str, str]] = field(default_factory=dict)
    next_alias: int = 0
    next_param: int = 0
    in_stats: bool = False

    def alias(self) -> str:
        self.next_alias += 1
        return f"c{self.next_alias}"

    def problem(self, pos: A.Pos, message: str) -> TE:
        self.problems.append(f"{pos}: {message}")
        return TE("NULL", "null", bad=True)

    def warn_id(self, node: A.Node, message: str = MV_WARNING) -> int:
        wid = len(self.warnings) + 1
        self.warnings[wid] = (node.pos, node.text, message)
        return wid

    def warn_sql(self, node: A.Node, cond: str, message: str = MV_WARNING, value: str | None = None) -> str:
        """A boolean SQL expression equal to `cond` that records a warning for `node` when true.
        With `value` (SQL), the first failing value replaces `{}` in the message."""
        if value is not None:
            return f"__wv({self.token}::BIGINT, {self.warn_id(node, message)}, {cond}, ({value})::VARCHAR)"
        return f"__w({self.token}::BIGINT, {self.warn_id(node, message)}, {cond})"


# compiles one argument expression in the caller's scope: given to the functions that translate
# their own arguments (conversions, BUCKET) so that they need not know the translator
Compile = Callable[[A.Node], TE]


def unknown_column(name: str, known: list[str]) -> str:
    matches = difflib.get_close_matches(name, known, n=3, cutoff=0.8)
    if not matches:
        return f"Unknown column [{name}]"
    if len(matches) == 1:
        return f"Unknown column [{name}], did you mean [{matches[0]}]?"
    return f"Unknown column [{name}], did you mean any of {_bracket(matches)}?"


def _bracket(items: list[str]) -> str:
    return "[" + ", ".join(items) + "]"


def sv(ctx: Ctx, te: TE, node: A.Node) -> TE:
    """Single-value view of an expression: multi-values become null with Elasticsearch's warning."""
    if not te.multi:
        return te
    x = te.sql
    sql = f"(CASE WHEN len({x}) = 1 THEN ({x})[1] WHEN {ctx.warn_sql(node, f'len({x}) > 1')} THEN NULL END)"
    return TE(sql, te.type, False)


def as_list(te: TE) -> str:
    """An expression as a LIST (scalars wrapped), for the MV_ functions."""
    if te.multi:
        return te.sql
    if te.type == "null":
        return "NULL"
    return f"(CASE WHEN ({te.sql}) IS NULL THEN NULL ELSE [{te.sql}] END)"


def lit(value: Any, type_: str) -> TE:
    if value is None:
        return TE("NULL", "null", const=True, value=None)
    sql = literal(value)
    if type_ == "integer":
        sql = f"({value})::INTEGER"
    elif type_ == "long":
        sql = f"({value})::BIGINT"
    return TE(sql, type_, const=True, value=value)


ORDINALS = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"]


def ordinal(i: int, n: int) -> str:
    if n == 1:
        return ""
    return (ORDINALS[i] if i < len(ORDINALS) else f"{i + 1}th") + " "
