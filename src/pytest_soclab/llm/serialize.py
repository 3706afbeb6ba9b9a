"""Tool results as text for a model: compact JSON, bounded in size.

A result over the limit is shortened structurally where its shape is known
(search hits, ES|QL rows, cat rows, aggregation buckets), so that what the model
reads stays valid JSON with a note saying what was left out and how to narrow
the query; anything else is cut as text with the same kind of note.
"""

from __future__ import annotations

import json
from typing import Any

DEFAULT_MAX_CHARS = 12_000
NOTE_KEY = "_soclab_truncated"
_ADVICE = "narrow the query (filters, size, LIMIT, KEEP or _source) to see the rest"


def compact_json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


def _longest_list(value: Any) -> int:
    """Length of the longest droppable list in a result of known shape (0 when none)."""
    lengths = [0]
    if isinstance(value, list):
        lengths.append(len(value))
    elif isinstance(value, dict):
        hits = value.get("hits")
        if isinstance(hits, dict) and isinstance(hits.get("hits"), list):
            lengths.append(len(hits["hits"]))
        if isinstance(value.get("values"), list):
            lengths.append(len(value["values"]))
        aggs = value.get("aggregations")
        if isinstance(aggs, dict):
            lengths += [
                len(a["buckets"])
                for a in aggs.values()
                if isinstance(a, dict) and isinstance(a.get("buckets"), list)
            ]
    return max(lengths)


def _keep_first(value: Any, keep: int) -> Any:
    """A shallow copy of value where every droppable list keeps its first `keep` items, plus a note."""
    notes: list[str] = []

    def cut(items: list[Any], kind: str) -> list[Any]:
        if len(items) > keep:
            notes.append(f"showing {keep} of {len(items)} {kind}")
            return items[:keep]
        return items

    if isinstance(value, list):
        out: Any = {"rows": cut(value, "rows")}
    else:
        out = dict(value)
        hits = out.get("hits")
        if isinstance(hits, dict) and isinstance(hits.get("hits"), list):
            out["hits"] = {**hits, "hits": cut(hits["hits"], "hits")}
        if isinstance(out.get("values"), list):
            out["values"] = cut(out["values"], "rows")
        aggs = out.get("aggregations")
        if isinstance(aggs, dict):
            out["aggregations"] = {
                name: {**a, "buckets": cut(a["buckets"], f"{name} buckets")}
                if isinstance(a, dict) and isinstance(a.get("buckets"), list)
                else a
                for name, a in aggs.items()
            }
    return {NOTE_KEY: "; ".join(notes) + ": " + _ADVICE, **out}


def bounded_json(value: Any, max_chars: int = DEFAULT_MAX_CHARS) -> str:
    """Compact JSON of value, at most max_chars long."""
    text = compact_json(value)
    if len(text) <= max_chars:
        return text
    longest = _longest_list(value)
    if longest > 1:
        # The largest number of items per list that fits (binary search; at least one item, else cut as text).
        lo, hi, best = 1, longest - 1, None
        while lo <= hi:
            mid = (lo + hi) // 2
            candidate = compact_json(_keep_first(value, mid))
            if len(candidate) <= max_chars:
                best, lo = candidate, mid + 1
            else:
                hi = mid - 1
        if best is not None:
            return best
    tail = f"... [{NOTE_KEY}: the result has {len(text)} characters, the first {{n}} are shown; {_ADVICE}]"
    n = max(0, max_chars - len(tail) - 8)
    return text[:n] + tail.format(n=n)
