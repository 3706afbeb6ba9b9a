"""Term dictionaries of wildcard fields, built with the store.

ECS maps the fields analysts grep (command lines, URLs, registry strings) as `wildcard`, the type
Elasticsearch made for pattern queries over long, high-cardinality strings. For each such column
of an index, a table of (v, docs): every distinct value, stored uncompressed and sorted, with
the numbers (`_doc`) of the documents holding it (Lucene's terms dictionary and postings).

A wildcard, prefix, regexp or fuzzy query on the field tests each distinct value once and reads
the matching documents as a bitmap (store/tokens.py's Bits): a search made of such clauses knows
its exact hit count without a scan. Telemetry repeats itself, so there are fewer values than
documents, and an uncompressed value is tested without decoding: `*tmp*` over 450k command lines
(190k distinct) took 13-18 ms on the table, where FSST decoding is most of the cost, and
2.7 ms on the dictionary (docs/performance.md).

The per-value predicate is the query's own, so the answers are the scan's answers (checked
against each other by tests/store/test_terms.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import duckdb

from .catalog import IndexInfo
from .layout import DOC_COL
from .sqlutil import ident
from .tokens import Bits, bitmap_test

INDEXED_TYPES = frozenset({"wildcard"})
VALUE = "v"  # the dictionary's value column, as a per-value predicate reads it


@dataclass(frozen=True)
class TermDict:
    """One wildcard column's dictionary, as a query compiles against it."""

    relation: str  # (v, docs)
    docs: int  # documents are numbered 0..docs-1: a bitmap's length
    fetch: Callable[[str], bytes | None]  # runs a query selecting one BLOB (the engine caches them)


def build_term_tables(con: duckdb.DuckDBPyConnection, info: IndexInfo) -> dict[str, str]:
    """Create the dictionary table of each wildcard column of `info`'s table: path -> table."""
    out: dict[str, str] = {}
    cols = sorted(p for p, c in info.fields.items() if c.fdef.type in INDEXED_TYPES)
    for k, path in enumerate(cols):
        name = f"{info.table}__terms{k}"
        col, doc, table = info.fields[path].sql, ident(DOC_COL), ident(info.table)
        if info.fields[path].multi:
            values = f"SELECT unnest({col}) AS v, {doc} AS d FROM {table} WHERE {col} IS NOT NULL"
        else:
            values = f"SELECT {col} AS v, {doc} AS d FROM {table} WHERE {col} IS NOT NULL"
        # uncompressed: testing a value then costs no decoding (FSST was 2x the whole test)
        con.execute(f"CREATE TABLE {ident(name)} (v VARCHAR USING COMPRESSION uncompressed, docs INTEGER[])")
        con.execute(
            f"INSERT INTO {ident(name)} SELECT v, list(DISTINCT d ORDER BY d)::INTEGER[] "
            f"FROM ({values}) WHERE v IS NOT NULL GROUP BY v ORDER BY v"
        )
        out[path] = name
    return out


def values_pred(terms: TermDict, per_value: Callable[[str], str]) -> tuple[str, Bits | None]:
    """SQL: some value of the document satisfies `per_value` (a predicate on one value's SQL); and
    the documents that have such a value."""
    if terms.docs <= 0:
        return "FALSE", None
    select = (f"SELECT bitstring_agg(__d, 0, {terms.docs - 1}) FROM "
              f"(SELECT unnest(docs) AS __d FROM {terms.relation} WHERE {per_value(VALUE)})")  # fmt: skip
    return bitmap_test(terms.docs, terms.fetch, select)
