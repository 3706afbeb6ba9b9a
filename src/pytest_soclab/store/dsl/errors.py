"""Errors of the search API in Elasticsearch's shapes."""

from __future__ import annotations

from typing import Any

from pytest_soclab.errors import EsError, parsing_exception

__all__ = ["EsError", "parsing_exception", "shard_failure", "unsupported", "bad_request"]


def shard_failure(index: str, type_: str, reason: str, **extra: Any) -> EsError:
    """A failure while running a query on an index: `search_phase_execution_exception`
    ("all shards failed") with the real cause as root cause, as Elasticsearch answers it."""
    inner = {"type": type_, "reason": reason, "index_uuid": "_na_", "index": index, **extra}
    return EsError(
        400,
        "search_phase_execution_exception",
        "all shards failed",
        root_cause=[inner],
        phase="query",
        grouped=True,
        failed_shards=[{"shard": 0, "index": index, "node": "soclab-embedded", "reason": inner}],
        caused_by=inner,
    )


def unsupported(what: str) -> EsError:
    """Something Elasticsearch supports that the embedded store does not: a clear refusal."""
    return EsError(400, "unsupported_operation_exception", f"{what} is not supported by the soclab embedded store")


def bad_request(reason: str) -> EsError:
    return EsError(400, "illegal_argument_exception", reason)
