"""_count, GET /{index}/_doc/{id}, GET /{index}/_source/{id} and _mget: all answered by the
backend's search, so every backend serves them."""

from __future__ import annotations

from typing import Any

from pytest_soclab.errors import EsError, parsing_exception

from .indices import narrow
from .request import Answer, ApiRequest, csv_param

_COUNT_KEYS = {"query"}


def _query_from_params(req: ApiRequest, body: dict[str, Any]) -> Any:
    if "q" not in req.params:
        return body.get("query")
    qs: dict[str, Any] = {"query": req.params["q"]}
    for key in ("df", "default_operator", "analyzer", "lenient", "analyze_wildcard"):
        if key in req.params:
            qs["default_field" if key == "df" else key] = req.params[key]
    return {"query_string": qs}


def count(req: ApiRequest) -> Answer:
    """GET|POST /[{index}/]_count"""
    body = req.object_body()
    for key in body:
        if key not in _COUNT_KEYS:
            raise parsing_exception(f"request does not support [{key}]")
    search: dict[str, Any] = {"size": 0, "track_total_hits": True}
    query = _query_from_params(req, body)
    if query is not None:
        search["query"] = query
    if "terminate_after" in req.params:
        search["terminate_after"] = int(req.params["terminate_after"])
    index = narrow(req.backend, req.index or "*", req.params)
    result = req.backend.es_search(index, search)
    total = result["hits"]["total"]
    return 200, {"count": total["value"] if isinstance(total, dict) else total, "_shards": result["_shards"]}, {}


def _source_option(params: dict[str, str], spec: Any = None) -> Any:
    if "_source" in params:
        value = params["_source"]
        spec = value == "true" if value in ("true", "false") else value.split(",")
    inc, exc = csv_param(params, "_source_includes"), csv_param(params, "_source_excludes")
    if inc or exc:
        spec = {"includes": inc, "excludes": exc}
    return True if spec is None else spec


def _fetch(req: ApiRequest, index: str, doc_id: str, source: Any, stored: Any = None) -> dict[str, Any]:
    """One document as GET /{index}/_doc/{id} answers it (found or not)."""
    body: dict[str, Any] = {"query": {"ids": {"values": [doc_id]}}, "size": 1, "_source": source,
                            "version": True, "seq_no_primary_term": True, "track_total_hits": False}  # fmt: skip
    if stored is not None:
        body["stored_fields"] = stored
    result = req.backend.es_search(index, body)
    hits = result.get("hits", {}).get("hits", [])
    if not hits:
        return {"_index": index, "_id": doc_id, "found": False}
    hit = hits[0]
    out: dict[str, Any] = {"_index": hit["_index"], "_id": hit["_id"], "_version": hit.get("_version", 1),
                           "_seq_no": hit.get("_seq_no", 0), "_primary_term": hit.get("_primary_term", 1),
                           "found": True}  # fmt: skip
    if "_source" in hit:
        out["_source"] = hit["_source"]
    return out


def _concrete(index: str) -> None:
    if "*" in index or "," in index or index == "_all":
        raise EsError(400, "illegal_argument_exception",
                      f"the index expression [{index}] must name one index (no wildcards or lists)")  # fmt: skip


def get_doc(req: ApiRequest) -> Answer:
    """GET|HEAD /{index}/_doc/{id}"""
    index, doc_id = req.index or "", req.groups["id"]
    _concrete(index)
    doc = _fetch(req, index, doc_id, _source_option(req.params), req.params.get("stored_fields"))
    return (200 if doc["found"] else 404), doc, {}


def get_source(req: ApiRequest) -> Answer:
    """GET|HEAD /{index}/_source/{id}"""
    index, doc_id = req.index or "", req.groups["id"]
    _concrete(index)
    doc = _fetch(req, index, doc_id, _source_option(req.params))
    if not doc["found"]:
        raise EsError(404, "resource_not_found_exception", f"Document not found [{index}]/[{doc_id}]")
    return 200, doc.get("_source", {}), {}


def mget(req: ApiRequest) -> Answer:
    """GET|POST /[{index}/]_mget"""
    body = req.object_body()
    default_source = _source_option(req.params)
    specs: list[dict[str, Any]]
    if "docs" in body:
        if not isinstance(body["docs"], list):
            raise parsing_exception("[docs] must be an array")
        specs = [d if isinstance(d, dict) else {"_id": d} for d in body["docs"]]
    elif "ids" in body:
        if not isinstance(body["ids"], list):
            raise parsing_exception("[ids] must be an array")
        specs = [{"_id": str(i)} for i in body["ids"]]
    else:
        raise EsError(400, "action_request_validation_exception", "Validation Failed: 1: no documents to get;")
    if not specs:
        raise EsError(400, "action_request_validation_exception", "Validation Failed: 1: no documents to get;")
    out = []
    for spec in specs:
        index = str(spec.get("_index") or req.index or "")
        doc_id = str(spec.get("_id", ""))
        if not index:
            raise EsError(400, "action_request_validation_exception", "Validation Failed: 1: index is missing;")
        try:
            _concrete(index)
            out.append(_fetch(req, index, doc_id, spec.get("_source", default_source), spec.get("stored_fields")))
        except EsError as exc:
            out.append({"_index": index, "_id": doc_id, "error": exc.body()["error"]})
    return 200, {"docs": out}, {}
