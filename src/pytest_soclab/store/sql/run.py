"""POST /_sql: run the translated query, page its rows behind cursors, and render them as ES
SQL does (json `{"columns", "rows", "cursor"}`, txt tables, csv, tsv)."""

from __future__ import annotations

import csv
import io
from typing import Any

from pytest_soclab.errors import EsError

from ..base import Backend
from .translate import translate

MAX_ROWS = 10_000  # ES|QL's most rows per query
_BODY_KEYS = {"query", "fetch_size", "cursor", "params", "time_zone", "filter", "field_multi_value_leniency",
              "columnar", "page_timeout", "request_timeout", "runtime_mappings", "wait_for_completion_timeout",
              "keep_on_completion", "keep_alive", "catalog", "index_using_frozen", "binary_format",
              "allow_partial_search_results", "mode", "client_id", "version"}  # fmt: skip
_TYPES = {"date": "datetime", "date_nanos": "datetime"}
MIN_WIDTH = 15  # ES SQL's text tables: the narrowest column


def _render_value(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def render(columns: list[dict[str, str]] | None, rows: list[list[Any]], fmt: str, delimiter: str = ",",
           header: bool = True) -> str:  # fmt: skip
    names = [c["name"] for c in columns or []]
    cells = [[_render_value(v) for v in row] for row in rows]
    if fmt in ("csv", "tsv"):
        buf = io.StringIO()
        writer = csv.writer(buf, delimiter="\t" if fmt == "tsv" else delimiter,
                            lineterminator="\r\n" if fmt == "csv" else "\n")  # fmt: skip
        if header and names:
            writer.writerow(names)
        writer.writerows(cells)
        return buf.getvalue()
    widths = [max([MIN_WIDTH, len(n)] + [len(r[i]) for r in cells]) for i, n in enumerate(names)] if names else \
        [max([MIN_WIDTH] + [len(r[i]) for r in cells]) for i in range(len(cells[0]) if cells else 0)]  # fmt: skip
    lines = []
    if header and names:
        lines.append("|".join(n.center(w) if (w - len(n)) % 2 == 0 else (" " * ((w - len(n)) // 2) + n).ljust(w)
                              for n, w in zip(names, widths)))  # fmt: skip
        lines.append("+".join("-" * w for w in widths))
    lines += ["|".join(v.ljust(w) for v, w in zip(r, widths)) for r in cells]
    return "".join(line + "\n" for line in lines)


def _rows(result: dict[str, Any], names: list[str], lenient: bool) -> list[list[Any]]:
    out = []
    for row in result["values"]:
        fixed = []
        for name, v in zip(names, row):
            if isinstance(v, list):
                if not lenient:
                    raise EsError(400, "ql_illegal_argument_exception", f"Arrays (returned by [{name}]) are not supported")
                v = v[0] if v else None
            fixed.append(v)
        out.append(fixed)
    return out


def sql_query(backend: Backend, body: dict[str, Any]) -> tuple[list[dict[str, str]], list[list[Any]]]:
    """The columns and every row (at most MAX_ROWS) of a SQL request."""
    for key in body:
        if key not in _BODY_KEYS:
            raise EsError(400, "parsing_exception", f"unknown field [{key}]")
    if body.get("filter") is not None:
        raise EsError(400, "parsing_exception", "[filter] is not supported by the soclab SQL endpoint")
    plan = translate(body.get("query", ""), body.get("params"))
    esql = plan.esql if plan.limit is not None or plan.esql.startswith("ROW") else f"{plan.esql} | LIMIT {MAX_ROWS}"
    result = backend.esql_query(esql)
    columns = [{"name": c["name"], "type": _TYPES.get(c["type"], c["type"])} for c in result["columns"]]
    return columns, _rows(result, [c["name"] for c in columns], bool(body.get("field_multi_value_leniency")))
