"""_cat/shards, _cat/count and _cat/aliases, and the table rendering every cat API shares
(`format`, `h`, `v`, `s`; http.py's _cat/indices uses it too)."""

from __future__ import annotations

import csv
import io
import time
from typing import Any

from pytest_soclab.errors import EsError

from .indices import NOTHING, narrow
from .request import Answer, ApiRequest, csv_param

INDICES_COLUMNS = ["health", "status", "index", "uuid", "pri", "rep", "docs.count", "docs.deleted", "store.size",
                   "pri.store.size", "dataset.size"]  # fmt: skip
SHARDS_COLUMNS = ["index", "shard", "prirep", "state", "docs", "store", "dataset", "ip", "node"]
COUNT_COLUMNS = ["epoch", "timestamp", "count"]
ALIASES_COLUMNS = ["alias", "index", "filter", "routing.index", "routing.search", "is_write_index"]
_NODE = "soclab"


def render(rows: list[dict[str, Any]], default: list[str], params: dict[str, str]) -> Any:
    """A cat answer in the requested format: JSON rows, or a table (txt, csv, tsv)."""
    fmt = params.get("format", "txt").lower()
    if fmt not in ("json", "txt", "text", "csv", "tsv"):
        raise EsError(400, "illegal_argument_exception", f"Unsupported format [{fmt}]: use json, txt, csv or tsv")
    for key in reversed(csv_param(params, "s")):
        name, _, order = key.partition(":")
        rows = sorted(rows, key=lambda r: _sort_key(r.get(name)), reverse=order.lower() == "desc")
    cols = csv_param(params, "h") or default
    if fmt == "json":
        return [{c: r.get(c) for c in cols} for r in rows]
    table = [["" if r.get(c) is None else str(r.get(c)) for c in cols] for r in rows]
    header = "v" in params and params["v"] in ("", "true")
    if fmt in ("csv", "tsv"):
        buf = io.StringIO()
        writer = csv.writer(buf, delimiter="," if fmt == "csv" else "\t", lineterminator="\n")
        writer.writerows([cols, *table] if header or fmt == "csv" else table)
        return buf.getvalue()
    if header:
        table.insert(0, cols)
    widths = [max((len(row[i]) for row in table), default=0) for i in range(len(cols))]
    return "".join(" ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip() + "\n" for row in table)


def _sort_key(value: Any) -> tuple[int, Any]:
    try:
        return (0, float(value))
    except (TypeError, ValueError):
        return (1, str(value))


def cat_shards(req: ApiRequest) -> Answer:
    """GET /_cat/shards[/{index}]: one started primary per index, on the one node."""
    rows = []
    for r in req.backend.list_indices(req.index or "*"):
        rows.append({"index": r.get("index"), "shard": "0", "prirep": "p", "state": "STARTED",
                     "docs": r.get("docs.count"), "store": r.get("store.size"), "dataset": r.get("dataset.size"),
                     "ip": "127.0.0.1", "node": _NODE})  # fmt: skip
    return 200, render(rows, SHARDS_COLUMNS, req.params), {}


def cat_count(req: ApiRequest) -> Answer:
    """GET /_cat/count[/{index}]"""
    index = narrow(req.backend, req.index or "*", req.params)
    n = 0
    if index != NOTHING:
        result = req.backend.es_search(index, {"size": 0, "track_total_hits": True})
        total = result["hits"]["total"]
        n = total["value"] if isinstance(total, dict) else int(total)
    now = time.time()
    row = {"epoch": str(int(now)), "timestamp": time.strftime("%H:%M:%S", time.gmtime(now)), "count": str(n)}
    return 200, render([row], COUNT_COLUMNS, req.params), {}


def cat_aliases(req: ApiRequest) -> Answer:
    """GET /_cat/aliases[/{name}]: a store has no aliases."""
    return 200, render([], ALIASES_COLUMNS, req.params), {}
