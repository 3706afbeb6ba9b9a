"""_search beyond the backend's own: index options, `highlight`, scroll and point in time.

A scroll or a point in time over a read-only store needs no snapshot: the data never
changes, so a context is the request, the index expression and the sort values of the last
hit handed out; each page is a `search_after` on the request's sort plus a `_doc` tiebreaker.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from pytest_soclab.errors import EsError

from .highlight import field_specs, highlight_hit
from .indices import narrow
from .request import Answer, ApiRequest, time_value

_DOC = {"_doc": "asc"}


def _missing_context(key: str) -> EsError:
    cause = {"type": "search_context_missing_exception", "reason": f"No search context found for id [{key}]"}
    return EsError(404, "search_phase_execution_exception", "all shards failed", phase="query", grouped=True,
                   failed_shards=[{"shard": -1, "index": None, "reason": cause}], caused_by=cause)  # fmt: skip


def _text_fields(req: ApiRequest, index: str) -> set[str]:
    names: set[str] = set()
    try:
        mappings = req.backend.get_mappings(index)
    except EsError:
        return names

    def walk(props: dict[str, Any], prefix: str) -> None:
        for key, spec in props.items():
            name = f"{prefix}{key}"
            if spec.get("type") in ("text", "match_only_text"):
                names.add(name)
            walk(spec.get("properties", {}), name + ".")

    for entry in mappings.values():
        walk(entry.get("mappings", {}).get("properties", {}), "")
    return names


def _with_highlight(req: ApiRequest, index: str, body: dict[str, Any], spec: Any) -> dict[str, Any]:
    specs = field_specs(spec)
    source = body.get("_source", True)
    result = req.backend.es_search(index, body if source in (True, None) else {**body, "_source": True})
    text = _text_fields(req, index)
    for hit in result.get("hits", {}).get("hits", []):
        found = highlight_hit(hit.get("_source") or {}, specs, body.get("query"), text)
        if found:
            hit["highlight"] = found
    if source not in (True, None):
        # the marks need the whole document; the hits show what was asked for
        ids = [h["_id"] for h in result["hits"]["hits"]]
        again = req.backend.es_search(index, {**body, "query": {"ids": {"values": ids}}, "from": 0, "size": len(ids),
                                              "aggs": None, "track_total_hits": False})  # fmt: skip
        shown = {(h["_index"], h["_id"]): h for h in again["hits"]["hits"]}
        for hit in result["hits"]["hits"]:
            other = shown.get((hit["_index"], hit["_id"]), {})
            if "_source" in other:
                hit["_source"] = other["_source"]
            else:
                hit.pop("_source", None)
    return result


def _paged_sort(body: dict[str, Any]) -> tuple[list[Any], bool]:
    """The request's sort with a `_doc` tiebreaker, and whether the request had one of its own."""
    sort = body.get("sort")
    if sort is None:
        return ([{"_score": "desc"}, _DOC] if body.get("query") else [_DOC]), False
    items = sort if isinstance(sort, list) else [sort]
    names = [next(iter(s)) if isinstance(s, dict) else str(s).split(":")[0] for s in items]
    return (list(items) if names and names[-1] in ("_doc", "_shard_doc") else [*items, _DOC]), True


def _run(req: ApiRequest, index: str, body: dict[str, Any]) -> dict[str, Any]:
    body = {k: v for k, v in body.items() if v is not None or k not in ("aggs",)}
    spec = body.pop("highlight", None)
    if spec is not None:
        return _with_highlight(req, index, body, spec)
    return req.backend.es_search(index, body)


def run_search(req: ApiRequest, index: str, body: dict[str, Any]) -> dict[str, Any]:
    """POST /{index}/_search: what http.py's route hands to the backend, with the read API's options."""
    pit = body.get("pit")
    if pit is not None:
        return _pit_search(req, index, body, pit)
    if "scroll" in req.params:
        return _open_scroll(req, index, body)
    return _run(req, narrow(req.backend, index, req.params), body)


# ---------------------------------------------------------------------------- scroll


def _page(req: ApiRequest, index: str, body: dict[str, Any], sort: list[Any], after: list[Any] | None,
          own_sort: bool, strip_last: bool) -> dict[str, Any]:  # fmt: skip
    page = {**body, "sort": sort}
    if after is not None:
        page["search_after"] = after
        page.pop("aggs", None)
        page.pop("aggregations", None)
    result = _run(req, index, page)
    hits = result.get("hits", {}).get("hits", [])
    last = hits[-1].get("sort") if hits else None
    for hit in hits:
        if not own_sort:
            hit.pop("sort", None)
            if body.get("query") is None:
                hit["_score"] = 1.0
        elif strip_last and "sort" in hit:
            hit["sort"] = hit["sort"][:-1]
    if not own_sort and body.get("query") is None and hits:
        result["hits"]["max_score"] = 1.0
    result["__last"] = last
    return result


def _open_scroll(req: ApiRequest, index: str, body: dict[str, Any]) -> dict[str, Any]:
    keep = time_value(req.params["scroll"], "scroll")
    for key in ("from", "search_after"):
        if body.get(key) not in (None, 0):
            raise EsError(400, "action_request_validation_exception",
                          f"Validation Failed: 1: using [{key}] is not allowed in a scroll context;")  # fmt: skip
    index = narrow(req.backend, index, req.params)
    sort, own = _paged_sort(body)
    had_tiebreaker = own and len(sort) == len(body["sort"] if isinstance(body.get("sort"), list) else [body.get("sort")])
    result = _page(req, index, body, sort, None, own, strip_last=own and not had_tiebreaker)
    last = result.pop("__last")
    total = result.get("hits", {}).get("total")
    data = {"index": index, "body": {k: v for k, v in body.items() if k not in ("aggs", "aggregations")},
            "sort": sort, "own": own, "strip": own and not had_tiebreaker, "after": last, "total": total}  # fmt: skip
    key = req.state.open("scroll", req.client, keep, data)
    return {"_scroll_id": key, **result}


def _scroll_ids(req: ApiRequest, body: dict[str, Any]) -> list[str]:
    raw: Any = req.groups.get("scroll_id") or body.get("scroll_id") or req.params.get("scroll_id")
    if isinstance(raw, str):
        raw = [p for p in raw.split(",") if p]
    if not raw or not isinstance(raw, list):
        raise EsError(400, "action_request_validation_exception", "Validation Failed: 1: no scroll ids specified;")
    return [str(x) for x in raw]


def scroll(req: ApiRequest) -> Answer:
    """GET|POST /_search/scroll[/{id}]"""
    body = req.object_body()
    keep_text = body.get("scroll", req.params.get("scroll"))
    keep = time_value(keep_text, "scroll") if keep_text is not None else None
    (key,) = _scroll_ids(req, body)[:1]
    ctx = req.state.get("scroll", req.client, key, keep)
    if ctx is None:
        raise _missing_context(key)
    d = ctx.data
    if d["after"] is None:
        result = _page(req, d["index"], {**d["body"], "size": 0}, d["sort"], None, d["own"], d["strip"])
        result.pop("__last")
    else:
        result = _page(req, d["index"], d["body"], d["sort"], d["after"], d["own"], d["strip"])
        last = result.pop("__last")
        d["after"] = last if last is not None else d["after"]
        if last is None:
            d["after_done"] = True
    if d.get("after_done"):
        result["hits"]["hits"] = []
    if d["total"] is not None:
        result["hits"]["total"] = d["total"]
    if req.flag("rest_total_hits_as_int") and isinstance(result["hits"].get("total"), dict):
        result["hits"]["total"] = result["hits"]["total"]["value"]
    return 200, {"_scroll_id": key, **result}, {}


def clear_scroll(req: ApiRequest) -> Answer:
    """DELETE /_search/scroll[/{id}]"""
    body = req.object_body()
    ids = _scroll_ids(req, body)
    if ids == ["_all"]:
        n = req.state.close_all("scroll", req.client)
    else:
        n = sum(req.state.close("scroll", req.client, k) for k in ids)
    return (200 if n or ids == ["_all"] else 404), {"succeeded": True, "num_freed": n}, {}


# ---------------------------------------------------------------------------- point in time


def open_pit(req: ApiRequest) -> Answer:
    """POST /{index}/_pit?keep_alive=1m"""
    if "keep_alive" not in req.params:
        raise EsError(400, "action_request_validation_exception", "Validation Failed: 1: [keep_alive] is not specified;")
    keep = time_value(req.params["keep_alive"], "keep_alive")
    index = narrow(req.backend, req.index or "*", req.params)
    probe = req.backend.es_search(index, {"size": 0, "track_total_hits": False})
    key = req.state.open("pit", req.client, keep, {"index": index})
    pit_id = base64.urlsafe_b64encode(json.dumps({"soclab_pit": key}).encode()).decode()
    return 200, {"id": pit_id, "_shards": probe.get("_shards", {}), "creation_time": 0}, {}


def _pit_key(pit_id: Any) -> str:
    try:
        return str(json.loads(base64.urlsafe_b64decode(str(pit_id).encode()))["soclab_pit"])
    except (ValueError, KeyError, TypeError):
        raise EsError(400, "illegal_argument_exception", f"invalid id: [{pit_id}]") from None


def close_pit(req: ApiRequest) -> Answer:
    """DELETE /_pit"""
    body = req.object_body()
    if "id" not in body:
        raise EsError(400, "action_request_validation_exception", "Validation Failed: 1: [id] is required;")
    freed = req.state.close("pit", req.client, _pit_key(body["id"]))
    return (200 if freed else 404), {"succeeded": True, "num_freed": int(freed)}, {}


def _pit_search(req: ApiRequest, index: str, body: dict[str, Any], pit: Any) -> dict[str, Any]:
    if index not in ("*", "_all", ""):
        raise EsError(400, "action_request_validation_exception",
                      "Validation Failed: 1: [indices] cannot be used with point in time. Do not specify any index "
                      "with point in time.;")  # fmt: skip
    if not isinstance(pit, dict) or "id" not in pit:
        raise EsError(400, "parsing_exception", "[pit] requires [id]")
    keep = time_value(pit["keep_alive"], "keep_alive") if pit.get("keep_alive") is not None else None
    ctx = req.state.get("pit", req.client, _pit_key(pit["id"]), keep)
    if ctx is None:
        raise _missing_context(str(pit["id"]))
    rest = {k: v for k, v in body.items() if k != "pit"}
    if rest.get("sort") is not None:
        # Elasticsearch adds the implicit `_shard_doc` tiebreaker to a point in time's sort
        rest["sort"], _ = _paged_sort(rest)
    result = _run(req, ctx.data["index"], rest)
    return {"pit_id": pit["id"], **result}
