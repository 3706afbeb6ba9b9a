"""Exceptions shared by every layer.

`EsError` carries an Elasticsearch-shaped error body, so that whatever raised it
(the embedded store, the live client, the guard, an action tool) reaches the
agent in the one shape an Elasticsearch user already knows.
"""

from __future__ import annotations

from typing import Any


class SoclabError(Exception):
    """A user-facing error: its message is meant to be shown as is, without a traceback."""


class ScenarioFileError(SoclabError):
    """A scenario, task or suite file that does not parse or validate: file, field path, problem."""

    def __init__(self, path: str, problems: list[tuple[str, str]]):
        self.path = path
        self.problems = problems
        lines = [f"{path}: {field}: {msg}" if field else f"{path}: {msg}" for field, msg in problems]
        super().__init__("\n".join(lines))


class EsError(Exception):
    """An error in Elasticsearch's shape: `{"error": {"root_cause", "type", "reason"}, "status"}`."""

    def __init__(self, status: int, type: str, reason: str, **extra: Any):
        super().__init__(f"[{type}] {reason}")
        self.status = status
        self.type = type
        self.reason = reason
        self.extra = extra

    def body(self) -> dict[str, Any]:
        cause = {"type": self.type, "reason": self.reason, **self.extra}
        return {"error": {"root_cause": [cause], **cause}, "status": self.status}

    @classmethod
    def from_body(cls, body: dict[str, Any], status: int | None = None) -> EsError:
        err = body.get("error", body)
        if isinstance(err, str):
            return cls(status or body.get("status", 500), "exception", err)
        extra = {k: v for k, v in err.items() if k not in ("type", "reason", "root_cause")}
        return cls(status or body.get("status", 500), err.get("type", "exception"), err.get("reason", ""), **extra)


class ToolError(EsError):
    """What an agent's `tools.call` raises: a tool failure, a refused tool or a guard denial."""


def parsing_exception(reason: str) -> EsError:
    return EsError(400, "parsing_exception", reason)


def illegal_argument(reason: str) -> EsError:
    return EsError(400, "illegal_argument_exception", reason)


def index_not_found(index: str) -> EsError:
    return EsError(
        404,
        "index_not_found_exception",
        f"no such index [{index}]",
        **{"resource.type": "index_or_alias", "resource.id": index, "index": index},
    )


def verification_exception(problems: list[str]) -> EsError:
    n = len(problems)
    head = f"Found {n} problem" + ("s" if n != 1 else "")
    return EsError(400, "verification_exception", "\n".join([head, *problems]))


def security_exception(reason: str) -> EsError:
    """How a denied call looks to the agent: Elasticsearch answers 403 security_exception to unauthorized requests."""
    return EsError(403, "security_exception", reason)
