"""Index expressions as Elasticsearch resolves them: names, `*` wildcards, comma lists,
`-` exclusions, data stream names and their `.ds-` backing index names."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from pytest_soclab.errors import EsError, index_not_found

from .catalog import IndexInfo


@lru_cache(maxsize=512)
def _pattern(glob: str) -> re.Pattern[str]:
    return re.compile("^" + ".*".join(re.escape(p) for p in glob.split("*")) + "$")


def _names(info: IndexInfo) -> tuple[str, ...]:
    return (info.name, info.backing) if info.backing else (info.name,)


def split_expression(expr: str) -> list[str]:
    parts = [p.strip() for p in expr.split(",")]
    if not expr.strip() or any(not p for p in parts):
        raise EsError(400, "invalid_index_name_exception", f"Invalid index name [{expr}], must not be empty")
    return parts


def resolve(
    expr: str,
    indices: Iterable[IndexInfo],
    *,
    ignore_unavailable: bool = False,
    allow_no_indices: bool = True,
    expand_hidden: bool = False,
    expand_open: bool = True,
) -> list[IndexInfo]:
    """The indices an expression names, in catalog order. Raises index_not_found_exception for a
    missing concrete name (unless ignore_unavailable) and for a wildcard that matches nothing
    when allow_no_indices is false. `expand_open=False` (expand_wildcards=none or closed): a
    wildcard matches nothing, every index here being open."""
    catalog = list(indices)
    chosen: dict[str, IndexInfo] = {}
    for pos, item in enumerate(split_expression(expr)):
        exclude = item.startswith("-") and pos > 0
        pat = item[1:] if exclude else item
        if ":" in pat:
            cluster = pat.split(":", 1)[0]
            raise EsError(404, "no_such_remote_cluster_exception", f"no such remote cluster: [{cluster}]")
        if pat in ("_all", "*") and not exclude:
            pat = "*"
        if "*" in pat:
            rx = _pattern(pat)
            hidden_ok = expand_hidden or pat.startswith(".")
            hits = [
                i for i in catalog if any(rx.match(n) and (hidden_ok or not n.startswith(".")) for n in _names(i))
            ] if expand_open else []
            if not hits and not exclude and not allow_no_indices:
                raise index_not_found(pat)
        else:
            hits = [i for i in catalog if pat in _names(i)]
            if not hits and not exclude and not ignore_unavailable:
                raise index_not_found(pat)
        for info in hits:
            if exclude:
                chosen.pop(info.name, None)
            else:
                chosen[info.name] = info
    order = {i.name: n for n, i in enumerate(catalog)}
    return sorted(chosen.values(), key=lambda i: order[i.name])
