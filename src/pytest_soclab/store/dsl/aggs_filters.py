"""Single-bucket and filter aggregations: filter, missing, filters."""

from __future__ import annotations

from typing import Any

from ..sqlutil import string
from .aggs_parse import AggNode
from .aggs_run import Level, Results, Runner
from .aggs_values import FieldCol, known_parents, sub_results


def agg_filter(run: Runner, node: AggNode, level: Level, out: Results) -> None:
    alias = run.cols[id(node)]
    key = run.new_key()
    ksql = f"SELECT *, 0 AS {key} FROM ({level.sql}) WHERE {alias}"
    _single(run, node, level, out, ksql, key)


def agg_missing(run: Runner, node: AggNode, level: Level, out: Results) -> None:
    col: FieldCol | None = run.cols.get(id(node))
    key = run.new_key()
    cond = "TRUE" if col is None else f"{col.alias} IS NULL"
    ksql = f"SELECT *, 0 AS {key} FROM ({level.sql}) WHERE {cond}"
    _single(run, node, level, out, ksql, key)


def _single(run: Runner, node: AggNode, level: Level, out: Results, ksql: str, key: str) -> None:
    group = ", ".join(level.keys + [key])
    rest, xexprs, slots = run.split_children(node)
    xcols = "".join(f", {e}" for e in xexprs)
    rows = run.query(f"SELECT {group}, count(*){xcols} FROM ({ksql}) GROUP BY {group}")
    nk = len(level.keys)
    counts = {tuple(r[:nk]): int(r[nk + 1]) for r in rows}
    child = run.child_level(level, ksql, [key], ["long"], None) if rest else None
    sub = run.eval(rest, child) if child else {}
    for r in rows:
        if slots:
            sub.setdefault(tuple(r[: nk + 1]), {}).update(run.fill_metrics(slots, r[nk + 2 :]))
    for parent in known_parents(out, level, run) | set(counts) | ({()} if not level.keys else set()):
        res = {"doc_count": counts.get(parent, 0)}
        res.update(sub_results(node, sub.get(parent + (0,), {})))
        if node.meta is not None:
            res["meta"] = node.meta
        out.setdefault(parent, {})[node.name] = res


def agg_filters(run: Runner, node: AggNode, level: Level, out: Results) -> None:
    p = node.params
    named: list[tuple[str, str]] = run.cols[id(node)]
    keyed = isinstance(p.get("filters"), dict) and p.get("keyed", True)
    key = run.new_key()
    branches = [f"SELECT *, {string(n)} AS {key} FROM ({level.sql}) WHERE {a}" for n, a in named]
    other = p.get("other_bucket_key") or ("_other_" if p.get("other_bucket") else None)
    if other:
        none_match = " AND ".join(f"NOT coalesce({a}, FALSE)" for _, a in named) or "TRUE"
        branches.append(f"SELECT *, {string(other)} AS {key} FROM ({level.sql}) WHERE {none_match}")
    ksql = " UNION ALL ".join(branches)
    group = ", ".join(level.keys + [key])
    rows = run.query(f"SELECT {group}, count(*) FROM ({ksql}) GROUP BY {group}")
    nk = len(level.keys)
    counts: dict[tuple[Any, ...], dict[str, int]] = {}
    for r in rows:
        counts.setdefault(tuple(r[:nk]), {})[r[nk]] = int(r[nk + 1])
    child = run.child_level(level, ksql, [key], ["str"], None) if node.children else None
    sub = run.eval(node.children, child) if child else {}
    names = [n for n, _ in named] + ([other] if other else [])
    for parent in known_parents(out, level, run) | set(counts) | ({()} if not level.keys else set()):
        buckets_list = []
        for n in names:
            b = {"doc_count": counts.get(parent, {}).get(n, 0)}
            b.update(sub_results(node, sub.get(parent + (n,), {})))
            buckets_list.append((n, b))
        res: dict[str, Any] = {"buckets": dict(buckets_list) if keyed else [({"key": n} | b) if isinstance(p.get("filters"), dict) else b for n, b in buckets_list]}
        if node.meta is not None:
            res["meta"] = node.meta
        out.setdefault(parent, {})[node.name] = res
