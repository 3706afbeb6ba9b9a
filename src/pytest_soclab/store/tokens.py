"""Token tables: the inverted index of each text field, built with the store.

For every text column of an index, a table of (tok, d, p): each token of the field's analyzed
value (the tokenizer of dsl/text.py, run by DuckDB's RE2 over the lowercased text), the
document's number (`_doc`) and the token's position, sorted by token so that a lookup reads a
few row groups. A `match` on a token is then a semi-join instead of a regular expression over
every message (a recorded Sysmon case holds 45 MB of them), and a phrase is a join on
positions. Positions of a multi-valued field start a new block per value (VALUE_GAP apart), so
a phrase never spans two values, as with Elasticsearch's position_increment_gap.

The answers are the regular expressions' answers: both sides are the same token definition,
checked against each other by tests/store/test_tokens.py.
"""

from __future__ import annotations

import duckdb

from .catalog import IndexInfo
from .layout import DOC_COL
from .mappings import TEXT_TYPES
from .sqlutil import ident, string

VALUE_GAP = 1 << 20  # positions per value of a multi-valued field: a phrase's slop must stay below it


def _token_re() -> str:
    from .dsl.text import TOKEN_BODY

    return TOKEN_BODY


def build_token_tables(con: duckdb.DuckDBPyConnection, info: IndexInfo) -> dict[str, str]:
    """Create the token table of each text column of `info`'s table; column -> table name."""
    out: dict[str, str] = {}
    text_cols = sorted(p for p, c in info.fields.items() if c.fdef.type in TEXT_TYPES)
    for k, path in enumerate(text_cols):
        name = f"{info.table}__tok{k}"
        col, doc = info.fields[path].sql, ident(DOC_COL)
        tokens = f"regexp_extract_all(lower(__val), {string(_token_re())})"
        if info.fields[path].multi:
            values = (f"SELECT {doc} AS d, unnest({col}) AS __val, generate_subscripts({col}, 1) AS __v "
                      f"FROM {ident(info.table)} WHERE {col} IS NOT NULL")  # fmt: skip
            base = f"(__v - 1) * {VALUE_GAP} + "
        else:
            values = f"SELECT {doc} AS d, {col} AS __val, 1 AS __v FROM {ident(info.table)} WHERE {col} IS NOT NULL"
            base = ""
        con.execute(
            f"CREATE TABLE {ident(name)} AS SELECT tok, d, p FROM ("
            f"SELECT d, unnest(__t) AS tok, ({base}generate_subscripts(__t, 1))::INTEGER AS p "
            f"FROM (SELECT d, __v, {tokens} AS __t FROM ({values}))) ORDER BY tok, d, p"
        )
        out[path] = name
    return out


def token_pred(rel: str, token: str) -> str:
    """SQL: the document has `token` in the field whose token table is `rel`."""
    return f"({ident(DOC_COL)} IN (SELECT d FROM {rel} WHERE tok = {string(token)}))"


def phrase_pred(rel: str, tokens: list[str], slop: int) -> str:
    """SQL: the tokens occur in order, at most `slop` other tokens between neighbours (as
    dsl/text.py's phrase_regex), in one value of the field."""
    if len(tokens) == 1:
        return token_pred(rel, tokens[0])
    joins = []
    for i in range(1, len(tokens)):
        joins.append(f"JOIN {rel} AS __a{i} ON __a{i}.d = __a0.d AND __a{i}.p > __a{i - 1}.p "
                     f"AND __a{i}.p <= __a{i - 1}.p + {1 + slop}")  # fmt: skip
    where = " AND ".join(f"__a{i}.tok = {string(t)}" for i, t in enumerate(tokens))
    return f"({ident(DOC_COL)} IN (SELECT __a0.d FROM {rel} AS __a0 {' '.join(joins)} WHERE {where}))"
