"""Bucket aggregations keyed by field values: terms, rare_terms, multi_terms and composite."""

from __future__ import annotations

from typing import Any

from ..datefmt import parse_timezone
from .aggs_parse import BUCKET_TYPES, METRIC_TYPES, AggNode, int_param, number_param
from .aggs_run import Level, Results, Runner
from .aggs_values import (
    FieldCol, after_key_literal, composite_value, date_bucket, empty_result, include_exclude,
    known_parents, missing_sql, order_metric, render_key, sub_results,
)
from .errors import EsError, bad_request, parsing_exception, unsupported


def agg_terms(run: Runner, node: AggNode, level: Level, out: Results, rare: bool = False) -> None:
    p = node.params
    col: FieldCol | None = run.cols.get(id(node))
    allowed = {"field", "size", "shard_size", "order", "min_doc_count", "shard_min_doc_count", "missing",
               "include", "exclude", "show_term_doc_count_error", "execution_hint", "collect_mode",
               "value_type", "format", "max_doc_count", "precision"}  # fmt: skip
    for k in p:
        if k not in allowed:
            raise parsing_exception(f"[{node.type}] unknown field [{k}]")
    if col is None:
        for key in known_parents(out, level, run):
            out.setdefault(key, {})[node.name] = empty_result(node)
        if not level.keys:
            out.setdefault((), {})[node.name] = empty_result(node)
        return
    size = int_param(p, "size", 10) if not rare else 10_000
    if size < 0 or (size == 0 and not rare):
        raise bad_request(f"[size] must be greater than 0. Found [{size}] in [{node.name}]")
    min_doc = int_param(p, "min_doc_count", 1, minimum=0)
    key = run.new_key()
    missing = missing_sql(p.get("missing"), col) if "missing" in p else None
    ksql = run.keyed(level, col, key, lambda x: x, missing=missing)
    inc_exc = include_exclude(p, col, key)
    if inc_exc:
        ksql = f"SELECT * FROM ({ksql}) WHERE {inc_exc}"
    order_sql, metric_exprs = _order(run, node, col, key)
    parents = ", ".join(level.keys)
    part = f"PARTITION BY {parents} " if parents else ""
    group = ", ".join(level.keys + [key])
    mcols = "".join(f", {e} AS __m{i}" for i, e in enumerate(metric_exprs))
    having = f"HAVING count(*) >= {min_doc}" if min_doc > 1 else ""
    if rare:
        max_doc = int_param(p, "max_doc_count", 1, minimum=1)
        having = f"HAVING count(*) <= {max_doc}"
    rest, xexprs, slots = run.split_children(node)
    xcols = "".join(f", {e} AS __x{i}" for i, e in enumerate(xexprs))
    xsel = "".join(f", __x{i}" for i in range(len(xexprs)))
    inner = f"SELECT {group}, count(*) AS __c{mcols}{xcols} FROM ({ksql}) GROUP BY {group} {having}"
    sql = (
        f"SELECT {group}, __c, sum(__c) OVER ({part}) AS __tot{xsel} FROM ({inner}) "
        f"QUALIFY row_number() OVER ({part}ORDER BY {order_sql}) <= {size} "
        f"ORDER BY {parents + ', ' if parents else ''}row_number() OVER ({part}ORDER BY {order_sql})"
    )
    rows = run.query(sql)
    nk = len(level.keys)
    selected = [tuple(r[: nk + 1]) for r in rows]
    child = run.child_level(level, ksql, [key], [col.family], selected) if rest else None
    sub = run.eval(rest, child) if child else {}
    for r in rows:
        if slots:
            sub.setdefault(tuple(r[: nk + 1]), {}).update(run.fill_metrics(slots, r[nk + 3 :]))
    grouped: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    totals: dict[tuple[Any, ...], int] = {}
    for r in rows:
        parent = tuple(r[:nk])
        kval, cnt, tot = r[nk], int(r[nk + 1]), int(r[nk + 2])
        totals[parent] = tot
        bucket = render_key(kval, col, p.get("format"))
        bucket["doc_count"] = cnt
        bucket.update(sub_results(node, sub.get(parent + (kval,), {})))
        grouped.setdefault(parent, []).append(bucket)
    if min_doc == 0 and not level.keys and col.family in ("str", "bool"):
        _zero_terms(run, node, col, grouped, size)
    for parent in known_parents(out, level, run) | set(grouped) | ({()} if not level.keys else set()):
        buckets = grouped.get(parent, [])
        shown = sum(b["doc_count"] for b in buckets)
        res: dict[str, Any] = {"doc_count_error_upper_bound": 0, "sum_other_doc_count": totals.get(parent, 0) - shown,
                               "buckets": buckets}  # fmt: skip
        if rare:
            res = {"buckets": buckets}
        if node.meta is not None:
            res["meta"] = node.meta
        out.setdefault(parent, {})[node.name] = res


def agg_rare_terms(run: Runner, node: AggNode, level: Level, out: Results) -> None:
    node.params.setdefault("order", {"_count": "asc"})
    agg_terms(run, node, level, out, rare=True)


def _zero_terms(run: Runner, node: AggNode, col: FieldCol, grouped: dict[tuple[Any, ...], list[dict[str, Any]]],
                size: int) -> None:  # fmt: skip
    """min_doc_count 0: terms of all documents of the indices, with 0 counts when not matching."""
    have = {b["key"] for b in grouped.get((), [])}
    parts = []
    for plan in run.b.plans:
        ref = plan.info.lookup(col.name)
        if ref is None:
            continue
        c = ref.sql
        parts.append(f"SELECT DISTINCT unnest({c}) AS v FROM {plan.rel}" if ref.multi else
                     f"SELECT DISTINCT {c} AS v FROM {plan.rel} WHERE {c} IS NOT NULL")  # fmt: skip
    if not parts:
        return
    rows = run.engine.query(f"SELECT DISTINCT v FROM ({' UNION ALL '.join(parts)}) ORDER BY v")
    buckets = grouped.setdefault((), [])
    for (v,) in rows:
        rendered = render_key(v, col, None)
        if rendered["key"] not in have and len(buckets) < size:
            rendered["doc_count"] = 0
            rendered.update(sub_results(node, {}))
            buckets.append(rendered)


def _order(run: Runner, node: AggNode, col: FieldCol, key: str) -> tuple[str, list[str]]:
    spec = node.params.get("order", [{"_count": "desc"}])
    items = spec if isinstance(spec, list) else [spec]
    parts: list[str] = []
    metric_exprs: list[str] = []
    for item in items:
        if not isinstance(item, dict) or len(item) != 1:
            raise parsing_exception(f"[{node.type}] [order] must be an object with one key")
        path, direction = next(iter(item.items()))
        direction = str(direction).upper()
        if direction not in ("ASC", "DESC"):
            raise parsing_exception(f"Unknown order direction [{direction.lower()}]")
        if path == "_count":
            parts.append(f"__c {direction}")
        elif path in ("_key", "_term"):
            parts.append(f"{key} {direction}")
        else:
            name, _, stat = path.partition(".")
            name = name.split("[")[0]
            child = next((c for c in node.children if c.name == name), None)
            if child is None:
                raise EsError(400, "aggregation_execution_exception",
                              f"Invalid aggregator order path [{path}]. The provided aggregation [{name}] either does not exist, or is a pipeline aggregation and cannot be used to sort the buckets.")  # fmt: skip
            if child.type in BUCKET_TYPES and child.type in ("filter", "missing"):
                raise unsupported(f"ordering terms by the single-bucket aggregation [{name}]")
            if child.type not in METRIC_TYPES or child.type == "top_hits":
                raise EsError(400, "aggregation_execution_exception",
                              f"Buckets can only be sorted on a sub-aggregator path that is built out of zero or more single-bucket aggregations within the path and a final single-bucket or a metrics aggregation at the path end. [{name}] is not single-bucket.")  # fmt: skip
            expr = order_metric(child, run.cols.get(id(child)), stat)
            parts.append(f"__m{len(metric_exprs)} {direction} NULLS LAST")
            metric_exprs.append(expr)
    if not any(p.startswith(key + " ") for p in parts):
        parts.append(f"{key} ASC")
    return ", ".join(parts), metric_exprs


def agg_multi_terms(run: Runner, node: AggNode, level: Level, out: Results) -> None:
    cols: list[FieldCol | None] = run.cols[id(node)]
    p = node.params
    size = int_param(p, "size", 10, minimum=1)
    if any(c is None for c in cols):
        for parent in known_parents(out, level, run) | ({()} if not level.keys else set()):
            out.setdefault(parent, {})[node.name] = {"doc_count_error_upper_bound": 0, "sum_other_doc_count": 0, "buckets": []}
        return
    sql = level.sql
    keys = []
    for col in cols:
        assert col is not None
        key = run.new_key()
        sql = run.keyed(Level(sql, level.keys + keys, []), col, key, lambda x: x)
        keys.append(key)
    parents = ", ".join(level.keys)
    part = f"PARTITION BY {parents} " if parents else ""
    group = ", ".join(level.keys + keys)
    order = "__c DESC, " + ", ".join(f"{k} ASC" for k in keys)
    rows = run.query(
        f"SELECT {group}, __c, sum(__c) OVER ({part}) FROM (SELECT {group}, count(*) AS __c FROM ({sql}) GROUP BY {group}) "
        f"QUALIFY row_number() OVER ({part}ORDER BY {order}) <= {size} ORDER BY {parents + ', ' if parents else ''}{order}"
    )
    nk = len(level.keys)
    fams = [c.family for c in cols if c is not None]
    selected = [tuple(r[: nk + len(keys)]) for r in rows]
    child = run.child_level(level, sql, keys, fams, selected) if node.children else None
    sub = run.eval(node.children, child) if child else {}
    grouped: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    totals: dict[tuple[Any, ...], int] = {}
    for r in rows:
        parent = tuple(r[:nk])
        kvals = r[nk : nk + len(keys)]
        rendered = [render_key(v, c, None) for v, c in zip(kvals, cols) if c is not None]
        bucket = {"key": [x["key"] for x in rendered],
                  "key_as_string": "|".join(str(x.get("key_as_string", x["key"])) for x in rendered),
                  "doc_count": int(r[nk + len(keys)])}  # fmt: skip
        totals[parent] = int(r[-1])
        bucket.update(sub_results(node, sub.get(tuple(r[: nk + len(keys)]), {})))
        grouped.setdefault(parent, []).append(bucket)
    for parent in known_parents(out, level, run) | set(grouped) | ({()} if not level.keys else set()):
        buckets = grouped.get(parent, [])
        out.setdefault(parent, {})[node.name] = {
            "doc_count_error_upper_bound": 0,
            "sum_other_doc_count": totals.get(parent, 0) - sum(b["doc_count"] for b in buckets),
            "buckets": buckets,
        }


def agg_composite(run: Runner, node: AggNode, level: Level, out: Results) -> None:
    if level.keys:
        raise EsError(400, "illegal_argument_exception",
                      f"[composite] aggregation cannot be used with a parent aggregation of type: [{'terms'}]")  # fmt: skip
    p = node.params
    size = int_param(p, "size", 10, minimum=1)
    sources = run.cols[id(node)]
    sql = level.sql
    keys, fams, renders = [], [], []
    orders = []
    for sname, stype, sparams, col in sources:
        key = run.new_key()
        if col is None:
            sql = f"SELECT *, NULL AS {key} FROM ({sql})"
            keys.append(key)
            fams.append("str")
            renders.append((sname, stype, sparams, None))
            orders.append(f"{key} {str(sparams.get('order', 'asc')).upper()} NULLS FIRST")
            continue
        if stype == "terms":
            expr_of = lambda x: x  # noqa: E731
            fam = col.family
        elif stype == "date_histogram":
            tz = parse_timezone(str(sparams["time_zone"])) if sparams.get("time_zone") else None
            expr_of, _ = date_bucket(sparams, tz)
            fam = "long"
        else:
            iv = number_param(sparams.get("interval", 0), "interval")
            if not iv > 0:
                raise bad_request("[interval] must be >0 for histogram aggregation")
            expr_of = lambda x, i=iv: f"(floor({x}::DOUBLE / {i!r}) * {i!r})"  # noqa: E731
            fam = "double"
        missing_bucket = bool(sparams.get("missing_bucket", False))
        lvl = Level(sql, level.keys + keys, [])
        sql = run.keyed(lvl, col, key, expr_of, missing="NULL" if missing_bucket else None)
        keys.append(key)
        fams.append(fam)
        renders.append((sname, stype, sparams, col))
        orders.append(f"{key} {str(sparams.get('order', 'asc')).upper()} NULLS FIRST")
    after = p.get("after")
    where = ""
    if after is not None:
        if not isinstance(after, dict):
            raise parsing_exception("[composite] [after] must be an object")
        conds = []
        lits = []
        for (sname, stype, sparams, col), key, fam in zip(renders, keys, fams):
            if sname not in after:
                raise bad_request(f"[after] has no value for source [{sname}]")
            lits.append(after_key_literal(after[sname], col, stype))
        for i in range(len(keys)):
            terms = [f"{keys[j]} IS NOT DISTINCT FROM {lits[j]}" for j in range(i)]
            desc = "DESC" in orders[i]
            terms.append(f"{keys[i]} {'<' if desc else '>'} {lits[i]}")
            conds.append("(" + " AND ".join(terms) + ")")
        where = "WHERE " + " OR ".join(conds)
    group = ", ".join(keys)
    rows = run.query(
        f"SELECT {group}, count(*) FROM ({sql}) {where} GROUP BY {group} ORDER BY {', '.join(orders)} LIMIT {size}"
    )
    selected = [tuple(r[: len(keys)]) for r in rows]
    child = run.child_level(level, sql, keys, fams, selected) if node.children else None
    sub = run.eval(node.children, child) if child else {}
    buckets = []
    for r in rows:
        kd = {}
        for (sname, stype, sparams, col), v in zip(renders, r[: len(keys)]):
            kd[sname] = composite_value(v, col, stype)
        b = {"key": kd, "doc_count": int(r[len(keys)])}
        b.update(sub_results(node, sub.get(tuple(r[: len(keys)]), {})))
        buckets.append(b)
    res: dict[str, Any] = {}
    if buckets:
        res["after_key"] = buckets[-1]["key"]
    res["buckets"] = buckets
    out.setdefault((), {})[node.name] = res
