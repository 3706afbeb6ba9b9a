"""_msearch: NDJSON header and body pairs, each answered as its own _search (errors in place)."""

from __future__ import annotations

import json
import time
from typing import Any

from pytest_soclab.errors import EsError

from .request import Answer, ApiRequest
from .search import run_search

_HEADER_KEYS = {"index", "indices", "expand_wildcards", "ignore_unavailable", "allow_no_indices", "preference",
                "routing", "search_type", "request_cache", "ccs_minimize_roundtrips", "allow_partial_search_results",
                "ignore_throttled"}  # fmt: skip


def _pairs(body: Any) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    if isinstance(body, dict):
        raise EsError(400, "illegal_argument_exception", "The msearch request must be terminated by a newline [\\n]")
    lines = [line for line in str(body or "").split("\n") if line.strip()]
    if not lines:
        raise EsError(400, "action_request_validation_exception", "Validation Failed: 1: no requests added;")
    objs = []
    for n, line in enumerate(lines, 1):
        try:
            obj = json.loads(line)
        except ValueError:
            raise EsError(400, "parsing_exception", f"line [{n}] of the msearch body is not a JSON object") from None
        if not isinstance(obj, dict):
            raise EsError(400, "parsing_exception", f"line [{n}] of the msearch body is not a JSON object")
        objs.append(obj)
    if len(objs) % 2:
        objs.append({})  # a trailing header without body searches everything it names
    return [(objs[i], objs[i + 1]) for i in range(0, len(objs), 2)]


def msearch(req: ApiRequest) -> Answer:
    """GET|POST /[{index}/]_msearch"""
    started = time.perf_counter()
    responses = []
    for header, body in _pairs(req.body):
        for key in header:
            if key not in _HEADER_KEYS:
                raise EsError(400, "illegal_argument_exception", f"key [{key}] is not supported in the metadata section")
        index = header.get("index", header.get("indices", req.index or "*"))
        if isinstance(index, list):
            index = ",".join(str(i) for i in index)
        params = {k: v for k, v in req.params.items() if k in ("ignore_unavailable", "allow_no_indices", "expand_wildcards")}
        params.update({k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in header.items()
                       if k in ("ignore_unavailable", "allow_no_indices", "expand_wildcards")})  # fmt: skip
        sub = ApiRequest(req.backend, req.state, "POST", str(index), params, body, {}, req.client)
        try:
            result = run_search(sub, str(index), body)
            if req.flag("rest_total_hits_as_int") and isinstance(result.get("hits", {}).get("total"), dict):
                result["hits"]["total"] = result["hits"]["total"]["value"]
            responses.append({**result, "status": 200})
        except EsError as exc:
            responses.append(exc.body())
    took = max(0, int((time.perf_counter() - started) * 1000))
    return 200, {"took": took, "responses": responses}, {}
