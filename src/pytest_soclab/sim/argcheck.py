"""Check a tool call's arguments against its JSON schema (the simple subset tools.py uses)."""

from __future__ import annotations

from typing import Any

from pytest_soclab.errors import EsError, illegal_argument

# JSON schema types as Python types (bool, an int subclass, is told apart where it matters);
# also used by the action tools' own check (sim/actions.py).
JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
}


def check_args(tool: str, schema: dict[str, Any], args: dict[str, Any]) -> dict[str, Any]:
    """Return the args (ints given as digit strings are coerced) or raise an Elasticsearch-shaped 400."""
    props: dict[str, Any] = schema.get("properties", {})
    unknown = sorted(set(args) - set(props))
    if unknown:
        raise illegal_argument(f"[{tool}] unknown argument(s) {unknown}; expected {sorted(props)}")
    missing = [r for r in schema.get("required", []) if args.get(r) in (None, "")]
    if missing:
        raise illegal_argument(f"[{tool}] missing required argument(s) {missing}")
    out = dict(args)
    for name, value in args.items():
        if value is None:
            continue
        want = props[name].get("type")
        types = JSON_TYPES.get(want, ())
        if want == "integer" and isinstance(value, str) and value.strip().lstrip("-").isdigit():
            out[name] = int(value)
            continue
        if types and (not isinstance(value, types) or (want in ("integer", "number") and isinstance(value, bool))):
            raise illegal_argument(f"[{tool}] argument [{name}] must be of type {want}, got {type(value).__name__}")
    return out


def budget_exceeded(limit: int) -> EsError:
    return EsError(
        429,
        "circuit_breaking_exception",
        f"tool-call budget of {limit} calls for this item is spent; submit your report",
    )
