"""Metric aggregations: the single- and multi-value metrics of a level in one grouped query, and
top_hits (whole documents per bucket)."""

from __future__ import annotations

from typing import Any

from ..render import source_filter
from .aggs_parse import AggNode, int_param
from .aggs_run import Level, Results, Runner
from .aggs_values import SENTINEL, FieldCol, metric_result, metric_selects, sort_render
from .errors import bad_request
from .plan import fetch_sources, parse_sort


def metrics(run: Runner, nodes: list[AggNode], level: Level, out: Results) -> None:
    exprs: list[str] = []
    slots: list[tuple[AggNode, int, int]] = []
    for node in nodes:
        col = run.cols.get(id(node))
        mexprs = metric_selects(node, col)
        slots.append((node, len(exprs), len(mexprs)))
        exprs.extend(mexprs)
    keys = ", ".join(level.keys)
    select = ", ".join(level.keys + exprs) if exprs else keys
    group = f" GROUP BY {keys}" if keys else ""
    rows = run.query(f"SELECT {select} FROM ({level.sql}){group}")
    nk = len(level.keys)
    for row in rows:
        key = tuple(row[:nk])
        vals = row[nk:]
        bucket = out.setdefault(key, {})
        for node, start, n in slots:
            bucket[node.name] = metric_result(node, run.cols.get(id(node)), vals[start : start + n])


def top_hits(run: Runner, node: AggNode, level: Level, out: Results) -> None:
    sort = parse_sort(node.params.get("sort"))
    if len(sort) <= 1:
        _top_hits_by(run, node, level, out, sort)
    else:
        _top_hits_window(run, node, level, out)


def _top_hits_by(run: Runner, node: AggNode, level: Level, out: Results, sort: list[Any]) -> None:
    """top_hits as one grouped max_by/min_by over whole rows: no second lookup of the documents."""
    p = node.params
    size, offset = int_param(p, "size", 3, minimum=0), int_param(p, "from", 0, minimum=0)
    if size < 0 or offset < 0:
        raise bad_request("[from] and [size] of [top_hits] must be non-negative")
    pos = "(__i::DOUBLE * 1e12 + __d::DOUBLE)"
    key = sort[0] if sort else None
    col: FieldCol | None = None
    if key is None or key.kind == "score":
        fn, val = "max_by", f"struct_pack(k := __s, t := -{pos})"
        if key is not None and not key.desc:
            fn, val = "min_by", f"struct_pack(k := __s, t := {pos})"
    elif key.kind == "doc":
        fn, val = ("max_by", f"-{pos}") if not key.desc else ("max_by", pos)
        if not key.desc:
            fn, val = "min_by", pos
    else:
        col = run.b.fields.get(key.field)
        if col is None:
            fn, val = "min_by", pos
        else:
            expr = col.alias if not col.multi else f"list_{'max' if key.desc else 'min'}({col.alias})"
            low, high = SENTINEL[col.family]
            if key.desc:
                fn, val = "max_by", f"struct_pack(k := coalesce({expr}, {low}), t := -{pos})"
            else:
                fn, val = "min_by", f"struct_pack(k := coalesce({expr}, {high}), t := {pos})"
    fields = ", ".join(["__i := __i", "__d := __d", "__s := __s", "__id := __id"]
                       + ([f"__k := {col.alias}"] if col is not None else []))  # fmt: skip
    keys = ", ".join(level.keys)
    n = max(1, offset + size)
    sql = (
        f"SELECT {keys + ', ' if keys else ''}count(*) AS __tot, {fn}(struct_pack({fields}), {val}, {n}) AS __top "
        f"FROM ({level.sql}){' GROUP BY ' + keys if keys else ''}"
    )
    rows = run.query(sql)
    nk = len(level.keys)
    enabled, inc, exc = source_filter(p.get("_source"))
    scored = key is None or key.kind == "score"
    picked_all = [(tuple(r[:nk]), int(r[nk]), (r[nk + 1] or [])[offset : offset + size]) for r in rows]
    docs: dict[tuple[int, int], dict[str, Any]] = {}
    if enabled and size:
        wanted = [(int(rec["__i"]), int(rec["__d"])) for _, _, picked in picked_all for rec in picked]
        docs = fetch_sources(run.engine, run.b.plans, wanted, inc, exc)
    for parent, total, picked in picked_all:
        hits = []
        for rec in picked:
            i, d = int(rec["__i"]), int(rec["__d"])
            plan = run.b.plans[i]
            hit: dict[str, Any] = {"_index": plan.info.concrete, "_id": rec["__id"],
                                   "_score": float(rec["__s"]) if scored and rec["__s"] is not None else None}  # fmt: skip
            if enabled:
                hit["_source"] = docs.get((i, d), {})
            if key is not None:
                if key.kind == "score":
                    hit["sort"] = [float(rec["__s"])]
                elif key.kind == "doc":
                    hit["sort"] = [d]
                else:
                    hit["sort"] = [sort_render(rec.get("__k"), col, key.desc)]
            hits.append(hit)
        max_score = max((h["_score"] for h in hits if h["_score"] is not None), default=None)
        out.setdefault(parent, {})[node.name] = {
            "hits": {"total": {"value": total, "relation": "eq"}, "max_score": max_score, "hits": hits}
        }


def _top_hits_window(run: Runner, node: AggNode, level: Level, out: Results) -> None:
    p = node.params
    size = int_param(p, "size", 3, minimum=0)
    offset = int_param(p, "from", 0, minimum=0)
    sort = parse_sort(p.get("sort"))
    order: list[str] = []
    sort_cols: list[tuple[int, Any, FieldCol | None]] = []
    for i, key in enumerate(sort):
        d = "DESC" if key.desc else "ASC"
        if key.kind == "score":
            order.append(f"__s {d}")
        elif key.kind == "doc":
            order.append(f"__i {d}, __d {d}")
        else:
            col = run.b.fields.get(key.field)
            if col is None:  # unmapped everywhere: sorts nothing
                continue
            expr = col.alias if not col.multi else f"list_{'max' if key.desc else 'min'}({col.alias})"
            nulls = "NULLS LAST" if key.missing_last else "NULLS FIRST"
            order.append(f"{expr} {d} {nulls}")
            sort_cols.append((i, key, col))
    if not sort:
        order.append("__s DESC")
    order += ["__i ASC", "__d ASC"]
    keys = ", ".join(level.keys)
    part = f"PARTITION BY {keys} " if keys else ""
    extra = "".join(f", {c.alias}" for _, _, c in sort_cols)
    sql = (
        f"SELECT {keys + ', ' if keys else ''}__i, __d, __s{extra}, __id, count(*) OVER ({part}) AS __tot FROM ({level.sql}) "
        f"QUALIFY row_number() OVER ({part}ORDER BY {', '.join(order)}) BETWEEN {offset + 1} AND {offset + size} "
        f"ORDER BY {keys + ', ' if keys else ''}row_number() OVER ({part}ORDER BY {', '.join(order)})"
    )
    rows = run.query(sql)
    nk = len(level.keys)
    plans = run.b.plans
    enabled, inc, exc = source_filter(p.get("_source"))
    docs = fetch_sources(run.engine, plans, [(row[nk], row[nk + 1]) for row in rows], inc, exc) if enabled else {}
    grouped: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    totals: dict[tuple[Any, ...], int] = {}
    scored = not sort or any(k.kind == "score" for k in sort)
    for row in rows:
        key = tuple(row[:nk])
        i, d, s = row[nk], int(row[nk + 1]), row[nk + 2]
        totals[key] = int(row[-1])
        hit: dict[str, Any] = {"_index": plans[i].info.concrete, "_id": row[-2],
                               "_score": float(s) if scored else None}  # fmt: skip
        if enabled:
            hit["_source"] = docs.get((i, d), {})
        if sort:
            vals = []
            for j, key_s in enumerate(sort):
                if key_s.kind == "score":
                    vals.append(float(s))
                elif key_s.kind == "doc":
                    vals.append(d)
                else:
                    pos = next(k for k, (jj, _, _) in enumerate(sort_cols) if jj == j)
                    vals.append(sort_render(row[nk + 3 + pos], sort_cols[pos][2], key_s.desc))
            hit["sort"] = vals
        grouped.setdefault(key, []).append(hit)
    for key, hits in grouped.items():
        max_score = max((h["_score"] for h in hits if h["_score"] is not None), default=None)
        out.setdefault(key, {})[node.name] = {
            "hits": {"total": {"value": totals[key], "relation": "eq"}, "max_score": max_score, "hits": hits}
        }
