"""Aggregation requests: names, types, parameters (validated as Elasticsearch validates them)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..limits import MAX_BUCKETS, too_many_buckets
from .errors import EsError, bad_request, parsing_exception, unsupported

BUCKET_TYPES = {
    "terms", "date_histogram", "histogram", "range", "date_range", "ip_range", "filter", "filters",
    "missing", "composite", "multi_terms", "rare_terms", "global",
}  # fmt: skip
METRIC_TYPES = {
    "min", "max", "avg", "sum", "value_count", "cardinality", "stats", "extended_stats", "percentiles",
    "median_absolute_deviation", "top_hits",
}  # fmt: skip
PIPELINE_TYPES = {
    "avg_bucket", "max_bucket", "min_bucket", "sum_bucket", "stats_bucket", "extended_stats_bucket",
    "percentiles_bucket", "bucket_script", "bucket_selector", "bucket_sort", "cumulative_sum", "derivative",
    "moving_fn", "serial_diff", "cumulative_cardinality", "normalize", "inference",
}  # fmt: skip
UNSUPPORTED_AGGS = {
    "significant_terms", "significant_text", "auto_date_histogram", "variable_width_histogram", "sampler",
    "diversified_sampler", "adjacency_matrix", "geo_distance", "geohash_grid", "geotile_grid", "geo_bounds",
    "geo_centroid", "geo_line", "nested", "reverse_nested", "children", "parent", "scripted_metric",
    "weighted_avg", "percentile_ranks", "boxplot", "t_test", "top_metrics", "matrix_stats", "string_stats",
    "rate", "random_sampler", "categorize_text", "frequent_item_sets", "time_series", "ip_prefix",
}  # fmt: skip

CALENDAR = {
    "minute": "minute", "1m": "minute", "hour": "hour", "1h": "hour", "day": "day", "1d": "day",
    "week": "week", "1w": "week", "month": "month", "1M": "month", "quarter": "quarter", "1q": "quarter",
    "year": "year", "1y": "year",
}  # fmt: skip
UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}


def int_param(params: dict[str, Any], key: str, default: int, *, minimum: int | None = None) -> int:
    """An integer aggregation parameter, or the parsing error Elasticsearch gives."""
    value = params.get(key, default)
    if isinstance(value, bool) or value is None:
        raise parsing_exception(f"[{key}] must be an integer, got [{value}]")
    try:
        num = int(value) if not isinstance(value, float) else (int(value) if value.is_integer() else None)
    except (TypeError, ValueError, OverflowError):
        num = None
    if num is None:
        raise parsing_exception(f"[{key}] must be an integer, got [{value}]")
    if minimum is not None and num < minimum:
        raise bad_request(f"[{key}] must be greater than or equal to {minimum}, got [{num}]")
    if num > 1_000_000_000:
        raise bad_request(f"[{key}] is too large: [{num}]")
    if key == "size" and num > MAX_BUCKETS:
        raise too_many_buckets(num)
    return num


def float_param(params: dict[str, Any], key: str, default: float) -> float:
    value = params.get(key, default)
    if isinstance(value, bool) or value is None:
        raise parsing_exception(f"[{key}] must be a number, got [{value}]")
    return number_param(value, key, parsing_exception)


def number_param(value: Any, what: str, error: Callable[[str], EsError] = bad_request) -> float:
    """`value` as a finite float; callers differ only in the error type Elasticsearch raises."""
    try:
        num = float(value)
    except (TypeError, ValueError):
        raise error(f"[{what}] must be a number, got [{value}]") from None
    if not math.isfinite(num):
        raise error(f"[{what}] must be a finite number, got [{value}]")
    return num


@dataclass
class AggNode:
    name: str
    type: str
    params: dict[str, Any]
    children: list[AggNode] = field(default_factory=list)
    meta: Any = None


def parse_aggs(spec: Any, path: str = "") -> list[AggNode]:
    if not isinstance(spec, dict):
        raise parsing_exception(f"Expected [START_OBJECT] under [aggregations], but got a {type(spec).__name__}")
    nodes = []
    for name, body in spec.items():
        if not re.match(r"^[^\[\]>]+$", name):
            raise parsing_exception(f"Invalid aggregation name [{name}]. Aggregation names can contain any character except '[', ']', and '>'")
        if not isinstance(body, dict):
            raise parsing_exception(f"Expected [START_OBJECT] under [{name}], but got a [{type(body).__name__}] in [{name}]")
        kinds = [k for k in body if k not in ("aggs", "aggregations", "meta")]
        if not kinds:
            raise parsing_exception(f"Missing definition for aggregation [{name}]")
        if len(kinds) > 1:
            raise parsing_exception(f"Found two aggregation type definitions in [{name}]: [{kinds[0]}] and [{kinds[1]}]")
        kind = kinds[0]
        if kind in UNSUPPORTED_AGGS or kind in PIPELINE_TYPES:
            raise unsupported(f"[{kind}] aggregation")
        if kind not in BUCKET_TYPES and kind not in METRIC_TYPES:
            raise parsing_exception(f"Unknown aggregation type [{kind}] did you mean [terms]?")
        params = body[kind]
        if not isinstance(params, dict):
            raise parsing_exception(f"Expected [START_OBJECT] under [{kind}], but got a [{type(params).__name__}] in [{name}]")
        sub = body.get("aggs", body.get("aggregations"))
        children = parse_aggs(sub, f"{path}{name}>") if sub is not None else []
        if children and kind in METRIC_TYPES:
            raise EsError(400, "aggregation_initialization_exception",
                          f"Aggregator [{name}] of type [{kind}] cannot accept sub-aggregations")  # fmt: skip
        nodes.append(AggNode(name, kind, params, children, body.get("meta")))
    return nodes
