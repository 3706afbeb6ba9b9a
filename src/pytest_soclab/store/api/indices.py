"""`ignore_unavailable`, `allow_no_indices` and `expand_wildcards` as Elasticsearch applies them
to an index expression (defaults: false, true, open)."""

from __future__ import annotations

from typing import Any

from pytest_soclab.errors import illegal_argument

from ..indexexpr import resolve
from .request import flag

_WILDCARD_STATES = {"open", "closed", "hidden", "all", "none"}
NOTHING = "__soclab_no_index__*"  # an expression that names no index and raises nothing


def wildcard_states(params: dict[str, str], default: str = "open") -> set[str]:
    states = {s.strip() for s in params.get("expand_wildcards", default).split(",") if s.strip()}
    bad = states - _WILDCARD_STATES
    if bad:
        raise illegal_argument(f"No enum constant org.elasticsearch.action.support.IndicesOptions.WildcardStates."
                               f"{sorted(bad)[0].upper()}")  # fmt: skip
    return states


def has_options(params: dict[str, str]) -> bool:
    return any(k in params for k in ("ignore_unavailable", "allow_no_indices", "expand_wildcards"))


def narrow(backend: Any, expr: str, params: dict[str, str], *, default_wildcards: str = "open") -> str:
    """The expression with the options applied: the concrete names it resolves to (comma list),
    `NOTHING` when it resolves to none, or the expression itself when there are no options or
    the backend resolves on its own (a live cluster takes them as they are)."""
    engine = getattr(backend, "engine", None)
    if engine is None or not has_options(params):
        return expr
    states = wildcard_states(params, default_wildcards)
    expand_open = bool(states & {"open", "all"}) and "none" not in states
    found = resolve(
        expr, engine.catalog.indices.values(),
        ignore_unavailable=flag(params, "ignore_unavailable", False),
        allow_no_indices=flag(params, "allow_no_indices", True),
        expand_hidden=bool(states & {"hidden", "all"}),
        expand_open=expand_open,
    )  # fmt: skip
    if not found:
        return NOTHING
    return ",".join(info.name for info in found)
