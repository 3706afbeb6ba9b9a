"""POST /_sql (Elasticsearch SQL) and POST /_sql/close: results paged behind cursors kept per
client, like scrolls."""

from __future__ import annotations

from typing import Any

from pytest_soclab.errors import EsError

from .request import ApiRequest, Answer, int_param, time_value

_FORMATS = ("json", "txt", "text", "csv", "tsv")


def _sql_module() -> Any:
    # imported here: the SQL package needs sqlglot, which the rest of the endpoint does not
    try:
        from .. import sql as sql_package
    except ImportError:
        raise EsError(400, "illegal_argument_exception", "the SQL endpoint needs the sqlglot package "
                      "(a dependency of pytest-soclab): install it") from None  # fmt: skip
    return sql_package


def _respond(req: ApiRequest, columns: list[dict[str, str]] | None, rows: list[list[Any]], cursor: str | None,
             fmt: str, header: bool) -> Answer:  # fmt: skip
    render = _sql_module().render
    headers: dict[str, Any] = {}
    if cursor:
        headers["Cursor"] = cursor
    if fmt == "json":
        out: dict[str, Any] = {}
        if columns is not None:
            out["columns"] = columns
        out["rows"] = rows
        if cursor:
            out["cursor"] = cursor
        return 200, out, headers
    delimiter = req.params.get("delimiter", ",")
    return 200, render(columns, rows, "txt" if fmt == "text" else fmt, delimiter, header), headers


def sql(req: ApiRequest) -> Answer:
    """GET|POST /_sql"""
    body = req.object_body()
    fmt = req.params.get("format", "json").lower()
    if fmt not in _FORMATS:
        raise EsError(400, "illegal_argument_exception", f"invalid format [{fmt}]; use json, txt, csv or tsv")
    keep = time_value(body.get("page_timeout", "45s"), "page_timeout")
    if body.get("cursor"):
        ctx = req.state.get("sql", req.client, str(body["cursor"]), keep)
        if ctx is None:
            raise EsError(404, "search_context_missing_exception", f"No search context found for id [{body['cursor']}]")
        rows = ctx.data["rows"]
        page, rest = rows[: ctx.data["size"]], rows[ctx.data["size"] :]
        ctx.data["rows"] = rest
        cursor = str(body["cursor"]) if rest else None
        if not rest:
            req.state.close("sql", req.client, str(body["cursor"]))
        return _respond(req, None, page, cursor, ctx.data["format"], header=False)
    if "query" not in body:
        raise EsError(400, "action_request_validation_exception", "Validation Failed: 1: one of [query] or [cursor] is required;")
    sql_query = _sql_module().sql_query
    size = int(body.get("fetch_size", int_param(req.params, "fetch_size", 1000)))
    if size <= 0:
        raise EsError(400, "action_request_validation_exception", "Validation Failed: 1: [fetch_size] must be greater than 0;")
    columns, rows = sql_query(req.backend, body)
    page, rest = rows[:size], rows[size:]
    cursor = None
    if rest:
        cursor = req.state.open("sql", req.client, keep, {"rows": rest, "size": size, "format": fmt})
    header = req.params.get("header", "present") != "absent"
    return _respond(req, columns, page, cursor, fmt, header)


def close(req: ApiRequest) -> Answer:
    """POST /_sql/close"""
    body = req.object_body()
    if not body.get("cursor"):
        raise EsError(400, "action_request_validation_exception", "Validation Failed: 1: [cursor] is required;")
    return 200, {"succeeded": req.state.close("sql", req.client, str(body["cursor"]))}, {}


def translate(req: ApiRequest) -> Answer:
    """POST /_sql/translate: the store has no Query DSL to show."""
    raise EsError(400, "illegal_argument_exception", "_sql/translate is not supported by the soclab SQL endpoint "
                  "(its SQL becomes ES|QL, not Query DSL)")  # fmt: skip
