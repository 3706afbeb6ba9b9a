"""The ES|QL syntax tree. Every node keeps its source position and text: error messages
and default column names (`COUNT(*)`) are made from them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Pos:
    line: int
    col: int

    def __str__(self) -> str:
        return f"line {self.line}:{self.col}"


@dataclass
class Node:
    pos: Pos
    text: str


# ---------------------------------------------------------------------------- expressions


@dataclass
class Literal(Node):
    value: Any  # python value; list for arrays
    type: str  # null, boolean, integer, long, double, keyword, date_period, time_duration


@dataclass
class Param(Node):
    name: str  # "" positional, digits for ?1, identifier for ?name


@dataclass
class Attr(Node):
    name: str


@dataclass
class Call(Node):
    name: str  # upper-case
    args: list[Node]
    star: bool = False
    options: dict[str, Any] | None = None


@dataclass
class BinOp(Node):
    op: str  # + - * / % == != < <= > >= =~
    left: Node
    right: Node


@dataclass
class Logic(Node):
    op: str  # AND | OR
    left: Node
    right: Node


@dataclass
class Not(Node):
    expr: Node


@dataclass
class Neg(Node):
    expr: Node


@dataclass
class InList(Node):
    expr: Node
    items: list[Node]
    negated: bool


@dataclass
class IsNull(Node):
    expr: Node
    negated: bool


@dataclass
class Like(Node):
    expr: Node
    patterns: list[str]
    negated: bool
    rlike: bool


@dataclass
class Cast(Node):
    expr: Node
    type: str


@dataclass
class MatchOp(Node):
    field: Node
    query: Node


# ---------------------------------------------------------------------------- commands


@dataclass
class Command:
    pos: Pos
    name: str


@dataclass
class From(Command):
    indices: list[tuple[str, Pos]]
    metadata: list[str] = field(default_factory=list)


@dataclass
class Row(Command):
    fields: list[tuple[str, Node]]


@dataclass
class Show(Command):
    what: str


@dataclass
class Where(Command):
    cond: Node


@dataclass
class Eval(Command):
    fields: list[tuple[str, Node]]


@dataclass
class Stats(Command):
    aggs: list[tuple[str, Node, Node | None]]
    by: list[tuple[str, Node]]


@dataclass
class InlineStats(Stats):
    """INLINE STATS (INLINESTATS): the aggregates appended to every input row."""


@dataclass
class Sample(Command):
    probability: float


@dataclass
class LookupJoin(Command):
    index: str
    index_pos: Pos
    keys: list[tuple[str, Pos]]


@dataclass
class SortKey:
    expr: Node
    desc: bool
    nulls_first: bool | None


@dataclass
class Sort(Command):
    keys: list[SortKey]


@dataclass
class Limit(Command):
    n: int | None
    param: str | None = None


@dataclass
class Keep(Command):
    patterns: list[tuple[str, Pos]]


@dataclass
class Drop(Command):
    patterns: list[tuple[str, Pos]]


@dataclass
class Rename(Command):
    pairs: list[tuple[str, str, Pos]]


@dataclass
class Dissect(Command):
    expr: Node
    pattern: str
    options: dict[str, Any]


@dataclass
class Grok(Command):
    expr: Node
    pattern: str


@dataclass
class MvExpand(Command):
    field: str
    field_pos: Pos


@dataclass
class Unsupported(Command):
    keyword: str


@dataclass
class Query:
    source: Command
    commands: list[Command]
