"""The state an ES|QL translation carries from command to command: the relation built so far
(`Rel`) and the per-query names, full-text predicates and STATS results (`State`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pytest_soclab.errors import verification_exception

from .expr import TE, Col, Ctx


@dataclass
class Rel:
    sql: str
    cols: list[Col]
    order: list[str] = field(default_factory=list)
    limit: int | None = None
    # Columns of `sql` that order its rows completely (document order, then the position of an
    # expanded value): SORT breaks its ties with them, so that equal keys come out the same way
    # on every run (DuckDB's parallel sort is not stable).
    ties: list[str] = field(default_factory=lambda: list(TIES))


@dataclass
class Translated:
    sql: str
    cols: list[Col]
    # positions of `cols` the SQL returns, when some columns are constant NULL and left out
    selected: list[int] | None = None
    # positions of `cols` filled from stored sources, with their field per index; the SQL then
    # returns each row's (index position, document) last
    late: dict[int, tuple[str, ...]] = field(default_factory=dict)
    late_sources: list[str] = field(default_factory=list)


# Every relation carries these: the index's position in FROM and the document's in the index
# (or the group's position, after STATS).
TIES = ("__idx", "__doc")
NO_TIES = "0 AS __idx, 0::BIGINT AS __doc"

# Stands in the FROM selects for the NULL columns of mapped fields without values: only those
# the query refers to are put there (an alerts index maps all of ECS, ~2,000 fields, and binding
# them all costs DuckDB ~100 ms a query).
LAZY = "\x00lazy-nulls\x00"


@dataclass
class State:
    """Per-query translation state beside `ctx` (aliases, parameters, problems, warnings)."""

    engine: Any
    ctx: Ctx
    fulltext: dict[int, tuple[str, str]] = field(default_factory=dict)  # id(node) -> (alias, description)
    scope: dict[str, Col] = field(default_factory=dict)
    agg_results: dict[int, TE] = field(default_factory=dict)  # aggregate calls already computed (STATS)
    agg_key_scope: bool = False  # resolving names after STATS grouping
    lazy_nulls: dict[str, str] = field(default_factory=dict)  # alias -> its typed NULL, for FROM columns no index has
    # FROM columns read from stored sources after the query (esql/late.py): alias -> field per index
    late: dict[str, tuple[str, ...]] = field(default_factory=dict)
    late_sources: list[str] = field(default_factory=list)
    late_ok: bool = True
    # operands bound once per expression being compiled (see expressions.share): one list per
    # compile_expr call on the stack, of (lambda variable, operand SQL)
    frames: list[list[tuple[str, str]]] = field(default_factory=list)


def raise_problems(ctx: Ctx) -> None:
    if ctx.problems:
        raise verification_exception(ctx.problems)


def materialize(rel: Rel) -> Rel:
    if rel.limit is None:
        return rel
    order = f" ORDER BY {', '.join(rel.order)}" if rel.order else ""
    return Rel(f"SELECT * FROM ({rel.sql}) AS __l{order} LIMIT {rel.limit}", rel.cols, rel.order, None, rel.ties)
