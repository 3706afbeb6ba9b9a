"""Aggregations as grouped SQL.

The matching documents become one relation (`docs`) with a column per field an
aggregation uses. Each bucket level adds a key column (unnesting multi-valued fields,
as a document with several values falls in several buckets); a level's buckets are
chosen in SQL (top terms per parent with window functions) and its sub-aggregations
run on the documents of the chosen buckets only.

This module is the dispatcher: node type -> the function computing it (bucket aggregations in
aggs_terms, aggs_ranges and aggs_filters, metrics in aggs_metrics). Pipeline aggregations are
refused when the request is parsed (aggs_parse).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..engine import Engine
from . import aggs_filters, aggs_metrics, aggs_ranges, aggs_terms
from .aggs_docs import DocsBuilder, prepare
from .aggs_parse import BUCKET_TYPES, METRIC_TYPES, AggNode, parse_aggs
from .aggs_run import Level, Results, Runner
from .aggs_values import empty_result
from .plan import Plan

Bucketing = Callable[[Runner, AggNode, Level, Results], None]

BUCKETS: dict[str, Bucketing] = {
    "terms": aggs_terms.agg_terms,
    "rare_terms": aggs_terms.agg_rare_terms,
    "multi_terms": aggs_terms.agg_multi_terms,
    "composite": aggs_terms.agg_composite,
    "histogram": aggs_ranges.agg_histogram,
    "date_histogram": aggs_ranges.agg_date_histogram,
    "range": aggs_ranges.agg_range,
    "date_range": aggs_ranges.agg_date_range,
    "ip_range": aggs_ranges.agg_ip_range,
    "filter": aggs_filters.agg_filter,
    "filters": aggs_filters.agg_filters,
    "missing": aggs_filters.agg_missing,
}


def run_aggs(engine: Engine, plans: list[Plan], spec: Any, min_score: Any) -> dict[str, Any]:
    nodes = parse_aggs(spec)
    if not plans:
        return {n.name: empty_result(n) for n in nodes}
    builder = DocsBuilder(plans, min_score)
    cols: dict[int, Any] = {}
    prepare(builder, cols, nodes)
    runner = Runner(engine, builder, cols, evaluate)
    root = Level("SELECT * FROM docs", [], [])
    results = runner.eval(nodes, root).get((), {})
    return {n.name: results.get(n.name, empty_result(n)) for n in nodes}


def evaluate(runner: Runner, nodes: list[AggNode], level: Level) -> Results:
    """The results of `nodes` per parent bucket of `level`: the metrics together in one query,
    then top_hits and each bucket aggregation (which recurse into their children)."""
    out: Results = {}
    metrics = [n for n in nodes if n.type in METRIC_TYPES and n.type != "top_hits"]
    if metrics:
        aggs_metrics.metrics(runner, metrics, level, out)
    for node in nodes:
        if node.type == "top_hits":
            aggs_metrics.top_hits(runner, node, level, out)
        elif node.type in BUCKET_TYPES:
            BUCKETS[node.type](runner, node, level, out)
    return out
