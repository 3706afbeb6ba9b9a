"""Evaluating an aggregation tree over the `docs` relation: the levels of bucket keys and the
runner the bucket and metric aggregations share (queries, key columns, child levels)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..engine import Engine
from .aggs_docs import DocsBuilder
from .aggs_parse import METRIC_TYPES, AggNode
from .aggs_values import FieldCol, key_literal, metric_result, metric_selects

# per parent bucket key (a tuple of the key columns' values): aggregation name -> its result
Results = dict[tuple[Any, ...], dict[str, Any]]


@dataclass
class Level:
    """A relation over docs with key columns k0..kn (each bucket level adds one or more)."""

    sql: str
    keys: list[str]
    families: list[str]


class Runner:
    """State of one evaluation: the docs relation, each node's prepared fields or filters (`cols`,
    by id(node)), and the key counter. `evaluate` dispatches a list of nodes at a level; it is
    given by the caller so that the aggregation modules, which recurse through `eval`, need not
    import the dispatcher."""

    def __init__(self, engine: Engine, builder: DocsBuilder, cols: dict[int, Any],
                 evaluate: Callable[[Runner, list[AggNode], Level], Results]):  # fmt: skip
        self.engine = engine
        self.b = builder
        self.docs_sql = builder.sql()
        self.cols = cols
        self.level_no = 0
        self._evaluate = evaluate

    def query(self, sql: str) -> list[tuple[Any, ...]]:
        return self.engine.query(f"WITH docs AS ({self.docs_sql}) {sql}")

    def eval(self, nodes: list[AggNode], level: Level) -> Results:
        return self._evaluate(self, nodes, level)

    def split_children(self, node: AggNode) -> tuple[list[AggNode], list[str], list[tuple[AggNode, int, int]]]:
        """Metric children computed in the parent's GROUP BY; the rest evaluated per chosen bucket."""
        exprs: list[str] = []
        slots: list[tuple[AggNode, int, int]] = []
        rest: list[AggNode] = []
        for child in node.children:
            if child.type in METRIC_TYPES and child.type != "top_hits":
                e = metric_selects(child, self.cols.get(id(child)))
                slots.append((child, len(exprs), len(e)))
                exprs.extend(e)
            else:
                rest.append(child)
        return rest, exprs, slots

    def fill_metrics(self, slots: list[tuple[AggNode, int, int]], vals: Any) -> dict[str, Any]:
        return {c.name: metric_result(c, self.cols.get(id(c)), vals[a : a + n]) for c, a, n in slots}

    def new_key(self) -> str:
        self.level_no += 1
        return f"k{self.level_no}"

    def child_level(self, level: Level, key_sql: str, keys: list[str], fams: list[str],
                     selected: list[tuple[Any, ...]] | None) -> Level:  # fmt: skip
        sql = key_sql
        if selected is not None:
            allkeys = level.keys + keys
            allfams = level.families + fams
            if not selected:
                sql = f"SELECT * FROM ({key_sql}) WHERE FALSE"
            else:
                values = ", ".join(
                    "(" + ", ".join(key_literal(v, f) for v, f in zip(row, allfams)) + ")" for row in selected
                )
                cond = " AND ".join(f"__r.{k} IS NOT DISTINCT FROM __sel.s{i}" for i, k in enumerate(allkeys))
                names = ", ".join(f"s{i}" for i in range(len(allkeys)))
                sql = (
                    f"SELECT __r.* FROM ({key_sql}) __r SEMI JOIN (VALUES {values}) AS __sel({names}) ON {cond}"
                )
        return Level(sql, level.keys + keys, level.families + fams)

    def keyed(self, level: Level, col: FieldCol, key: str, expr_of: Any, *, missing: Any = None) -> str:
        """Level SQL with one key per value of `col` (unnested when multi-valued)."""
        if col.multi:
            src = (
                f"SELECT __r.*, __u.__v AS __val FROM ({level.sql}) __r, "
                f"unnest(list_distinct(__r.{col.alias})) AS __u(__v)"
            )
            sql = f"SELECT * EXCLUDE (__val), {expr_of('__val')} AS {key} FROM ({src})"
            if missing is not None:
                sql += f" UNION ALL SELECT *, {missing} AS {key} FROM ({level.sql}) WHERE {col.alias} IS NULL"
            return sql
        if missing is not None:
            return f"SELECT *, coalesce({expr_of(col.alias)}, {missing}) AS {key} FROM ({level.sql})"
        return f"SELECT *, {expr_of(col.alias)} AS {key} FROM ({level.sql}) WHERE {col.alias} IS NOT NULL"
