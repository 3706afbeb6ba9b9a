"""Token tables: the inverted index of each text field, built with the store.

For every text column of an index, a postings table of (tok, nxt, d, p): each token of the
field's analyzed value (the tokenizer of dsl/text.py, run by DuckDB's RE2 over the lowercased
text), the token after it in the same value (NULL at a value's end), the document's number
(`_doc`) and the token's position, sorted by token and next token, so that a lookup of either
reads a few row groups.
Positions of a multi-valued field start a new block per value (VALUE_GAP apart), so a phrase
never spans two values, as with Elasticsearch's position_increment_gap.

A query tests each document against a bitmap over document numbers (`get_bit`): one pass over
the rows, stopping where a LIMIT does, whatever the term's frequency. A semi-join on the
postings (`_doc IN (...)`) cost 16 ms at 450k documents even with nothing to join, and a
common word's join 29 ms (docs/performance.md). The bitmap of a term found in at least
BITMAP_MIN_POSTINGS postings is made at load (aggregating a common word's postings at query
time costs as much as the join); any other term's, and a phrase's, is aggregated from its
postings: a two-word phrase is one range of its first word's postings whose `nxt` is the
second, a longer one a join of such pairs at consecutive positions. Either way the bitmap is
read when the query is compiled (as Lucene rewrites a query against its terms dictionary) and
written into the SQL as a constant.

The answers are the regular expressions' answers: both sides are the same token definition,
checked against each other by tests/store/test_tokens.py.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable
from dataclasses import dataclass

import duckdb

from .catalog import IndexInfo, TextIndexInfo
from .layout import DOC_COL
from .mappings import TEXT_TYPES
from .sqlutil import ident, string

VALUE_GAP = 1 << 20  # positions per value of a multi-valued field: a phrase's slop must stay below it
# postings from which a term's bitmap is made at load: below it, aggregating them at query time
# costs about a millisecond (21 ns a posting, measured at 1M events)
BITMAP_MIN_POSTINGS = 1 << 16


@dataclass(frozen=True)
class TextIndex:
    """One text column's index, as a query compiles against it."""

    postings: str  # relation of (tok, nxt, d, p)
    bitmaps: str  # relation of (tok, bits): the terms with a bitmap made at load
    frequent: frozenset[str]
    docs: int  # documents are numbered 0..docs-1: a bitmap's length
    fetch: Callable[[str], bytes | None]  # runs a query selecting one BLOB (the engine caches them)


_NONZERO = re.compile(b"[^\x00]")


@dataclass(frozen=True)
class Bits:
    """The documents a text clause matches, as a bitmap read at compile time: clauses combine in
    Python, and a search made of them alone counts its hits without a scan (the count of a phrase
    in 10k of 450k documents scanned every row: 6.7 ms) and reads its first hits by number."""

    docs: int
    value: int  # bit docs-1-d is document d (the BLOB's big-endian order)

    @classmethod
    def from_blob(cls, docs: int, blob: bytes | None) -> Bits:
        return cls(docs, int.from_bytes(blob or b"", "big") & ((1 << docs) - 1))

    def __and__(self, other: Bits) -> Bits:
        return Bits(self.docs, self.value & other.value)

    def __or__(self, other: Bits) -> Bits:
        return Bits(self.docs, self.value | other.value)

    def __invert__(self) -> Bits:
        return Bits(self.docs, ~self.value & ((1 << self.docs) - 1))

    def count(self) -> int:
        return self.value.bit_count()

    def first(self, n: int) -> list[int]:
        """The first `n` documents, in document order."""
        if n <= 0:
            return []
        size = (self.docs + 7) // 8
        raw, pad = self.value.to_bytes(size, "big"), size * 8 - self.docs
        out: list[int] = []
        for m in _NONZERO.finditer(raw):
            byte = raw[m.start()]
            for bit in range(8):
                if byte & (0x80 >> bit):
                    out.append(m.start() * 8 + bit - pad)
                    if len(out) >= n:
                        return out
        return out


def _token_re() -> str:
    from .dsl.text import TOKEN_BODY

    return TOKEN_BODY


def build_token_tables(con: duckdb.DuckDBPyConnection, info: IndexInfo) -> dict[str, TextIndexInfo]:
    """Create the postings and bitmap tables of each text column of `info`'s table."""
    out: dict[str, TextIndexInfo] = {}
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
        # two unnests in one SELECT run in lockstep, the shorter padded with NULL: the next token
        con.execute(
            f"CREATE TABLE {ident(name)} AS SELECT tok, nxt, d, p FROM ("
            f"SELECT d, unnest(__t) AS tok, unnest(__t[2:]) AS nxt, ({base}generate_subscripts(__t, 1))::INTEGER AS p "
            f"FROM (SELECT d, __v, {tokens} AS __t FROM ({values}))) ORDER BY tok, nxt, d, p"
        )
        bits = f"{name}__bits"
        # stored uncompressed: a query reads one bitmap, and the scan decodes the whole vector
        # its row sits in (ZSTD: 5 ms for 61 bitmaps of 450k documents, against 1 ms)
        con.execute(f"CREATE TABLE {ident(bits)} (tok VARCHAR, bits BIT USING COMPRESSION uncompressed)")
        con.execute(
            f"INSERT INTO {ident(bits)} SELECT tok, bitstring_agg(d, 0, {max(0, info.count - 1)}) "
            f"FROM {ident(name)} WHERE tok IN (SELECT tok FROM {ident(name)} GROUP BY tok "
            f"HAVING count(*) >= {BITMAP_MIN_POSTINGS}) GROUP BY tok ORDER BY tok"
        )
        frequent = [r[0] for r in con.execute(f"SELECT tok FROM {ident(bits)} ORDER BY tok").fetchall()]
        out[path] = TextIndexInfo(name, bits, frequent)
    return out


def bitmap_test(docs: int, fetch: Callable[[str], bytes | None], select: str) -> tuple[str, Bits]:
    """SQL testing each of `docs` documents against the bitmap `select` makes, fetched now and
    written into the query as a constant (a subquery there would be planned as a nested-loop join:
    39 ms against 5 to count a phrase's 10k documents among 450k); and the bitmap itself."""
    blob = fetch(f"SELECT ({select})::BLOB")
    bits = Bits.from_blob(docs, blob)
    if not blob:
        return "FALSE", bits  # the term is in no document
    # a BIT of n bits cast to BLOB is left-padded to whole bytes; cast back, bit i of it is bit
    # i + pad of the BLOB's bits
    pad = len(blob) * 8 - docs
    doc = f"({ident(DOC_COL)} + {pad})::INTEGER" if pad else f"{ident(DOC_COL)}::INTEGER"
    return f"(get_bit(from_base64('{base64.b64encode(blob).decode()}')::BIT, {doc}) = 1)", bits


_BITMAP = re.compile(r"from_base64\('[A-Za-z0-9+/=]*'\)")


def without_bitmaps(sql: str) -> str:
    """`sql` with its bitmap constants cut out (for inspecting the SQL: base64 holds any word)."""
    return _BITMAP.sub("BITMAP", sql) if "from_base64('" in sql else sql


def _aggregated(index: TextIndex, source: str) -> str:
    return f"SELECT bitstring_agg(__a0.d, 0, {index.docs - 1}) FROM {source}"


def token_pred(index: TextIndex, token: str) -> tuple[str, Bits | None]:
    """SQL: the document has `token` in the field `index` indexes; and the documents that have it."""
    if index.docs <= 0:
        return "FALSE", None
    if token in index.frequent:
        select = f"SELECT bits FROM {index.bitmaps} WHERE tok = {string(token)}"
    else:
        select = _aggregated(index, f"{index.postings} AS __a0 WHERE __a0.tok = {string(token)}")
    return bitmap_test(index.docs, index.fetch, select)


def phrase_pred(index: TextIndex, tokens: list[str], slop: int) -> tuple[str, Bits | None]:
    """SQL: the tokens occur in order, at most `slop` other tokens between neighbours (as
    dsl/text.py's phrase_regex), in one value of the field; and the documents where they do."""
    if len(tokens) == 1:
        return token_pred(index, tokens[0])
    if index.docs <= 0:
        return "FALSE", None
    rel = index.postings
    if slop == 0:
        # word i and i+1 as one posting (tok, nxt), the pairs at consecutive positions
        pairs = list(zip(tokens, tokens[1:]))
        joins = [f"JOIN {rel} AS __a{i} ON __a{i}.d = __a0.d AND __a{i}.p = __a0.p + {i}" for i in range(1, len(pairs))]
        where = " AND ".join(f"__a{i}.tok = {string(a)} AND __a{i}.nxt = {string(b)}" for i, (a, b) in enumerate(pairs))
    else:
        joins = [f"JOIN {rel} AS __a{i} ON __a{i}.d = __a0.d AND __a{i}.p > __a{i - 1}.p "
                 f"AND __a{i}.p <= __a{i - 1}.p + {1 + slop}" for i in range(1, len(tokens))]  # fmt: skip
        where = " AND ".join(f"__a{i}.tok = {string(t)}" for i, t in enumerate(tokens))
    select = _aggregated(index, f"{rel} AS __a0 {' '.join(joins)} WHERE {where}")
    return bitmap_test(index.docs, index.fetch, select)


def all_of(parts: list[Bits | None]) -> Bits | None:
    """The documents every part matches (None: some part has no bitmap)."""
    if not parts or any(p is None for p in parts):
        return None
    out = parts[0]
    for p in parts[1:]:
        out = out & p  # type: ignore[operator]
    return out


def any_of(parts: list[Bits | None]) -> Bits | None:
    """The documents some part matches (None: some part has no bitmap)."""
    if not parts or any(p is None for p in parts):
        return None
    out = parts[0]
    for p in parts[1:]:
        out = out | p  # type: ignore[operator]
    return out


def combine(positive: list[Bits | None], negative: list[Bits | None]) -> Bits | None:
    """The documents every `positive` part matches and no `negative` part does (a bool's must and
    must_not); None when a part has no bitmap, or there is no part at all."""
    if (not positive and not negative) or any(p is None for p in positive + negative):
        return None
    out = all_of(positive) if positive else ~Bits(negative[0].docs, 0)  # type: ignore[union-attr]
    for b in negative:
        out = out & ~b  # type: ignore[operator]
    return out
