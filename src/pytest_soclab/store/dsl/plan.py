"""What a search runs on, shared by hits and aggregations: one plan per index (its relation and
compiled query), the filter of its matches, the fetch of stored documents, and sort parsing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..catalog import IndexInfo
from ..engine import Engine
from ..layout import DOC_COL, ID_COL
from ..render import build_source
from ..sources import by_index, filter_source, read_stored, select_columns
from ..sqlutil import ident, in_values
from ..tokens import Bits
from .build import Ctx
from .errors import bad_request, parsing_exception, shard_failure, unsupported


@dataclass
class Plan:
    info: IndexInfo
    rel: str
    where: str
    score: str
    ctx: Ctx
    source: str = ""  # the index's stored-source table here, if any (store/sources.py)
    bits: Bits | None = None  # the documents `where` matches, when indexed text clauses alone make it


def filtered(plan: Plan, post: str, min_score: Any) -> str:
    """The SQL condition of the plan's matches, after `post` (a post_filter) and min_score."""
    cond = f"({plan.where}) AND ({post})"
    if min_score is not None:
        cond += f" AND ({plan.score}) >= {float(min_score)!r}"
    return cond


def fetch_docs(engine: Engine, plans: list[Plan], rows: list[tuple[Any, ...]]) -> dict[tuple[int, int], dict[str, Any]]:
    """Second phase: the stored columns of the selected documents ((index position, _doc) pairs)."""
    out: dict[tuple[int, int], dict[str, Any]] = {}
    for i, docs in by_index(rows).items():
        plan = plans[i]
        names = [DOC_COL, ID_COL, *plan.info.fields]
        cols = ", ".join([ident(DOC_COL), ident(ID_COL), *select_columns(plan.info)])
        where = in_values(ident(DOC_COL), [str(int(d)) for d in docs])
        for row in engine.query(f"SELECT {cols} FROM {plan.rel} WHERE {where}"):
            out[(i, int(row[0]))] = dict(zip(names, row))
    return out


def stored_sources(plans: list[Plan]) -> bool:
    """Every index of the search keeps its documents' rendered sources (wide indices)."""
    return all(plan.source for plan in plans)


def fetch_sources(engine: Engine, plans: list[Plan], rows: list[tuple[Any, ...]], includes: list[str],
                  excludes: list[str]) -> dict[tuple[int, int], dict[str, Any]]:  # fmt: skip
    """The `_source` of the selected documents ((index position, _doc) pairs): the stored source
    where the index keeps one, else rendered from the columns."""
    out: dict[tuple[int, int], dict[str, Any]] = {}
    rest: list[tuple[int, int]] = []
    for i, docs in by_index(rows).items():
        plan = plans[i]
        got = read_stored(engine.query, plan.source, docs) if plan.source else {}
        for d in docs:
            src = got.get(d)
            if src is None:
                rest.append((i, d))
            else:
                out[(i, d)] = filter_source(plan.info, src, includes, excludes)
    if rest:
        for key, doc in fetch_docs(engine, plans, rest).items():
            out[key] = build_source(plans[key[0]].info, doc, includes, excludes)
    return out


@dataclass
class SortKey:
    kind: str  # "score" | "doc" | "field" | "index"
    field: str = ""
    desc: bool = False
    missing_last: bool = True
    missing_value: Any = None
    mode: str | None = None
    unmapped_type: str | None = None
    fmt: str | None = None


def parse_sort(spec: Any) -> list[SortKey]:
    if spec is None:
        return []
    items = spec if isinstance(spec, list) else [spec]
    keys: list[SortKey] = []
    for item in items:
        if isinstance(item, str):
            name, order, opts = item, None, {}
            if ":" in item and not item.startswith("@"):
                name, _, order = item.partition(":")
        elif isinstance(item, dict) and len(item) == 1:
            name, value = next(iter(item.items()))
            if isinstance(value, str):
                order, opts = value, {}
            elif isinstance(value, dict):
                opts = dict(value)
                order = opts.pop("order", None)
            else:
                raise parsing_exception(f"[sort] malformed sort for field [{name}]")
        else:
            raise parsing_exception("[sort] malformed: expected a field name or an object with one field")
        if order is not None and str(order).lower() not in ("asc", "desc"):
            raise bad_request(f"Unknown SortOrder [{order}]")
        for key in opts:
            if key not in ("missing", "mode", "unmapped_type", "format", "numeric_type", "nested"):
                raise parsing_exception(f"[field_sort] unknown field [{key}]")
        if "nested" in opts:
            raise unsupported("sort with [nested]")
        if name == "_score":
            keys.append(SortKey("score", desc=str(order or "desc").lower() == "desc"))
        elif name in ("_doc", "_shard_doc"):
            keys.append(SortKey("doc", desc=str(order or "asc").lower() == "desc"))
        elif name == "_id":
            raise shard_failure(
                "_all", "illegal_argument_exception",
                "Fielddata access on the _id field is disallowed, you can re-enable it by updating the dynamic "
                "cluster setting: indices.id_field_data.enabled",
            )  # fmt: skip
        else:
            desc = str(order or "asc").lower() == "desc"
            missing = opts.get("missing", "_last")
            mode = opts.get("mode")
            if mode is not None and mode not in ("min", "max", "sum", "avg", "median"):
                raise bad_request(f"Unknown SortMode [{mode}]")
            key = SortKey(
                "index" if name == "_index" else "field", name, desc,
                missing_last=missing != "_first", mode=mode, unmapped_type=opts.get("unmapped_type"),
                fmt=opts.get("format"),
            )  # fmt: skip
            if missing not in ("_last", "_first"):
                key.missing_value = missing
                key.missing_last = True
            keys.append(key)
    return keys
