"""POST /_query/async, GET and DELETE /_query/async/{id}: an ES|QL query run in the background,
answered within `wait_for_completion_timeout` (1s) or fetched later by its id."""

from __future__ import annotations

import dataclasses
import threading
import time
from typing import Any

from pytest_soclab.errors import EsError

from .request import Answer, ApiRequest, time_value

ASYNC_MAX_KEEP_ALIVE = 5 * 86400.0  # the default keep_alive, and as long as one is kept here
_QUERY_KEYS = {"query", "params", "columnar", "locale", "time_zone", "profile", "include_ccs_metadata",
               "include_execution_metadata", "allow_partial_results", "filter"}  # fmt: skip
_ASYNC_KEYS = {"wait_for_completion_timeout", "keep_alive", "keep_on_completion"}


class _Job:
    def __init__(self) -> None:
        self.done = threading.Event()
        self.result: dict[str, Any] | None = None
        self.error: EsError | None = None
        self.started = time.perf_counter()


def _run(req: ApiRequest, body: dict[str, Any], job: _Job) -> None:
    try:
        columnar = bool(body.get("columnar", False))
        job.result = dict(req.backend.esql_query(body["query"], body.get("params"), columnar))
    except EsError as exc:
        job.error = exc
    except Exception as exc:  # noqa: BLE001 - a background failure is reported to whoever asks for it
        job.error = EsError(500, "exception", f"the query failed: {type(exc).__name__}: {exc}")
    finally:
        job.done.set()


def _in_background(req: ApiRequest, body: dict[str, Any], job: _Job) -> None:
    try:
        _run(req, body, job)
    finally:
        req.backend.close()


def _own_cursor(req: ApiRequest) -> ApiRequest | None:
    """The request on a cursor of its own: the request's is closed once its answer is sent, and the
    query may run on past that. None when the backend cannot fork (a live cluster's client)."""
    fork = getattr(req.backend, "fork", None)
    backend = fork() if fork is not None else None
    return None if backend is None or backend is req.backend else dataclasses.replace(req, backend=backend)


def _answer(key: str | None, job: _Job, show_id: bool) -> Answer:
    headers: dict[str, Any] = {"X-Elasticsearch-Async-Is-Running": "?0" if job.done.is_set() else "?1"}
    if key is not None:
        headers["X-Elasticsearch-Async-Id"] = key
    if not job.done.is_set():
        return 200, {"id": key, "is_running": True}, headers
    if job.error is not None:
        raise job.error
    result = dict(job.result or {})
    result.pop("warnings", None)
    out: dict[str, Any] = {"id": key} if show_id and key is not None else {}
    out.update({"is_running": False, **result})
    return 200, out, headers


def _params(body: dict[str, Any], params: dict[str, str]) -> tuple[float, float, bool]:
    wait = time_value(body.get("wait_for_completion_timeout", params.get("wait_for_completion_timeout", "1s")),
                      "wait_for_completion_timeout")  # fmt: skip
    keep = time_value(body.get("keep_alive", params.get("keep_alive", "5d")), "keep_alive")
    if keep < 60:
        raise EsError(400, "illegal_argument_exception", "[keep_alive] must be greater than 1 minute, got: "
                      f"[{body.get('keep_alive', params.get('keep_alive'))}]")  # fmt: skip
    on_completion = body.get("keep_on_completion", params.get("keep_on_completion", False))
    return wait, min(keep, ASYNC_MAX_KEEP_ALIVE), on_completion in (True, "true", "")


def submit(req: ApiRequest) -> Answer:
    """POST /_query/async"""
    body = req.object_body()
    if "query" not in body:
        raise EsError(400, "parsing_exception", "[query] is required")
    for key in body:
        if key not in _QUERY_KEYS | _ASYNC_KEYS:
            raise EsError(400, "parsing_exception", f"unknown field [{key}]")
    if body.get("filter") is not None:
        raise EsError(400, "unsupported_operation_exception",
                      "[filter] of ES|QL requests is not supported by the soclab embedded store")  # fmt: skip
    fmt = req.params.get("format", "json").lower()
    if fmt != "json":
        raise EsError(400, "illegal_argument_exception", f"format [{fmt}] is not supported by _query/async here: use json")
    wait, keep, on_completion = _params(body, req.params)
    job = _Job()
    own = _own_cursor(req)
    target, job_req = (_run, req) if own is None else (_in_background, own)
    thread = threading.Thread(target=target, args=(job_req, body, job), daemon=True, name="soclab-esql-async")
    thread.start()
    job.done.wait(wait)
    key: str | None = None
    if on_completion or not job.done.is_set():
        key = req.state.open("async", req.client, keep, {"job": job}, ASYNC_MAX_KEEP_ALIVE)
    return _answer(key, job, show_id=key is not None)


def _not_found(key: str) -> EsError:
    return EsError(404, "resource_not_found_exception", key)


def get(req: ApiRequest) -> Answer:
    """GET /_query/async/{id}"""
    key = req.groups["id"]
    keep_text = req.params.get("keep_alive")
    keep = min(time_value(keep_text, "keep_alive"), ASYNC_MAX_KEEP_ALIVE) if keep_text else None
    ctx = req.state.get("async", req.client, key, keep)
    if ctx is None:
        raise _not_found(key)
    job: _Job = ctx.data["job"]
    if "wait_for_completion_timeout" in req.params:
        job.done.wait(time_value(req.params["wait_for_completion_timeout"], "wait_for_completion_timeout"))
    return _answer(key, job, show_id=True)


def delete(req: ApiRequest) -> Answer:
    """DELETE /_query/async/{id}"""
    key = req.groups["id"]
    if not req.state.close("async", req.client, key):
        raise _not_found(key)
    return 200, {"acknowledged": True}, {}
