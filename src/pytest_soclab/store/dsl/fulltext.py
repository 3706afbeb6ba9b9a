"""Full-text queries: match and its phrase / prefix forms, multi_match and combined_fields."""

from __future__ import annotations

from typing import Any

from ..catalog import FieldRef
from .. import tokens as tokens_mod
from . import text
from .build import (
    FALSE, TRUE, Compiled, Ctx, and_, any_value, boost_of, check_keys, expand_fields, field_body, tie_score,
    min_should_match, or_, resolve_field, scored,
)
from .errors import EsError, parsing_exception, unsupported
from .literals import as_string, is_keyword, is_text
from .termlevel import equals, prefix_pred


def token_table(ref: FieldRef, ctx: Ctx) -> tokens_mod.TextIndex | None:
    """The index of the text column `ref` reads, when it has one in this engine (a text
    multi-field of a keyword column has none: its values are tested as text)."""
    if not ref.column or ref.column != ref.name:
        return None
    return ctx.tokens.get(ref.column)


def match_one(ref: FieldRef, query: Any, opts: dict[str, Any], ctx: Ctx, boost: float,
               *, lenient: bool = False) -> Compiled:  # fmt: skip
    """`match` on one resolved field."""
    if is_text(ref):
        tokens = text.tokenize(as_string(query))
        if not tokens:
            zero = str(opts.get("zero_terms_query", "none")).lower()
            return Compiled(TRUE if zero == "all" else FALSE, "0.0")
        uniq = list(dict.fromkeys(tokens))
        rel = token_table(ref, ctx)
        bits: list[tokens_mod.Bits | None] = []
        if rel is not None:
            preds, bits = map(list, zip(*(tokens_mod.token_pred(rel, t) for t in uniq)))
        else:
            preds = [any_value(ref, lambda x, t=t: text.match_sql(x, text.token_regex(t), t)) for t in uniq]
        operator = str(opts.get("operator", "or")).lower()
        if operator not in ("or", "and"):
            raise parsing_exception(f"[match] query does not support operator [{operator}]")
        need = len(uniq) if operator == "and" else 1
        if opts.get("minimum_should_match") is not None and operator == "or":
            need = max(1, min_should_match(opts["minimum_should_match"], len(uniq)))
        count = " + ".join(f"coalesce({p}, FALSE)::INTEGER" for p in preds)
        where = and_(preds) if need >= len(uniq) else (or_(preds) if need <= 1 else f"({count}) >= {need}")
        if need >= len(uniq):
            # every match holds every term: the same score for all, which lets the top-N stop early
            return scored(where, len(uniq) * boost, tokens_mod.all_of(bits))
        return Compiled(where, f"({count})::DOUBLE * {boost!r}", tokens_mod.any_of(bits) if need <= 1 else None)
    try:
        return scored(equals(ref, [query], ctx), boost)
    except EsError:
        if lenient:
            return Compiled(FALSE, "0.0")
        raise


def match_query(body: Any, ctx: Ctx, scoring: bool) -> Compiled:
    name, opts = field_body("match", body, value_key="query")
    check_keys("match", opts, {"query", "operator", "minimum_should_match", "zero_terms_query", "lenient",
                                "analyzer", "fuzziness", "prefix_length", "max_expansions", "fuzzy_transpositions",
                                "auto_generate_synonyms_phrase_query", "cutoff_frequency"})  # fmt: skip
    if opts.get("fuzziness") not in (None, 0, "0"):
        raise unsupported("[match] query with [fuzziness]")
    ref = resolve_field(ctx, name)
    if ref is None:
        return Compiled(FALSE, "0.0")
    return match_one(ref, opts["query"], opts, ctx, boost_of(opts), lenient=bool(opts.get("lenient")))


def phrase_one(ref: FieldRef, query: Any, ctx: Ctx, boost: float, slop: int, prefix: bool,
                *, lenient: bool = False) -> Compiled:  # fmt: skip
    if is_text(ref):
        tokens = text.tokenize(as_string(query))
        if not tokens:
            return Compiled(FALSE, "0.0")
        rel = token_table(ref, ctx)
        if rel is not None and not prefix and 0 <= slop < tokens_mod.VALUE_GAP // 2:
            where, bits = tokens_mod.phrase_pred(rel, tokens, slop)
            return scored(where, boost, bits)
        pattern = text.phrase_regex(tokens, slop, prefix_last=prefix)
        longest = max(tokens, key=len)
        return scored(any_value(ref, lambda x: text.match_sql(x, pattern, longest)), boost)
    if prefix and (is_keyword(ref)):
        where, bits = prefix_pred(ref, as_string(query), False, ctx)
        return scored(where, boost, bits)
    try:
        return scored(equals(ref, [query], ctx), boost)
    except EsError:
        if lenient:
            return Compiled(FALSE, "0.0")
        raise


def match_phrase_query(body: Any, ctx: Ctx, scoring: bool, prefix: bool = False) -> Compiled:
    kind = "match_phrase_prefix" if prefix else "match_phrase"
    name, opts = field_body(kind, body, value_key="query")
    check_keys(kind, opts, {"query", "slop", "analyzer", "zero_terms_query", "max_expansions"})
    ref = resolve_field(ctx, name)
    if ref is None:
        return Compiled(FALSE, "0.0")
    return phrase_one(ref, opts["query"], ctx, boost_of(opts), int(opts.get("slop", 0)), prefix)


def match_bool_prefix_query(body: Any, ctx: Ctx, scoring: bool) -> Compiled:
    name, opts = field_body("match_bool_prefix", body, value_key="query")
    check_keys("match_bool_prefix", opts, {"query", "operator", "minimum_should_match", "analyzer"})
    ref = resolve_field(ctx, name)
    if ref is None:
        return Compiled(FALSE, "0.0")
    if not is_text(ref):
        where, bits = prefix_pred(ref, as_string(opts["query"]), False, ctx)
        return scored(where, boost_of(opts), bits)
    tokens = text.tokenize(as_string(opts["query"]))
    if not tokens:
        return Compiled(FALSE, "0.0")
    preds = [any_value(ref, lambda x, t=t: text.match_sql(x, text.token_regex(t), t)) for t in tokens[:-1]]
    preds.append(any_value(ref, lambda x: text.match_sql(x, text.prefix_regex(tokens[-1]), tokens[-1])))
    where = and_(preds) if str(opts.get("operator", "or")).lower() == "and" else or_(preds)
    count = " + ".join(f"coalesce({p}, FALSE)::INTEGER" for p in preds)
    return Compiled(where, f"({count})::DOUBLE * {boost_of(opts)!r}")


def field_specs(kind: str, value: Any) -> list[str]:
    """The `fields` of a multi-field query: a name, a list of names, or all fields when absent."""
    if value is None or value == []:
        return ["*"]
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        token = "VALUE_BOOLEAN" if isinstance(value, bool) else ("START_OBJECT" if isinstance(value, dict) else "VALUE_NUMBER")
        raise parsing_exception(f"[{kind}] unknown token [{token}] after [fields]")
    return value


def _field_patterns(specs: list[Any], ctx: Ctx) -> list[tuple[FieldRef, float]]:
    out: list[tuple[FieldRef, float]] = []
    seen: set[str] = set()
    for spec in specs:
        name, _, boost_s = str(spec).partition("^")
        boost = float(boost_s) if boost_s else 1.0
        names = expand_fields(ctx, name) if "*" in name else [name]
        for n in names:
            ref = resolve_field(ctx, n)
            if ref is not None and n not in seen and ref.type not in ("flattened", "nested", "geo_point", "binary"):
                seen.add(n)
                out.append((ref, boost))
    return out


def multi_match_query(body: Any, ctx: Ctx, scoring: bool) -> Compiled:
    if not isinstance(body, dict) or "query" not in body:
        raise parsing_exception("[multi_match] requires query value")
    check_keys("multi_match", body, {"query", "fields", "type", "operator", "minimum_should_match", "tie_breaker",
                                      "lenient", "analyzer", "slop", "fuzziness", "prefix_length", "max_expansions",
                                      "zero_terms_query", "auto_generate_synonyms_phrase_query", "fuzzy_transpositions"})  # fmt: skip
    if body.get("fuzziness") not in (None, 0, "0"):
        raise unsupported("[multi_match] query with [fuzziness]")
    specs = field_specs("multi_match", body.get("fields"))
    lenient = bool(body.get("lenient")) or specs == ["*"]
    mtype = str(body.get("type", "best_fields")).lower()
    fields = _field_patterns(specs, ctx)
    boost = boost_of(body)
    if mtype not in ("best_fields", "most_fields", "cross_fields", "phrase", "phrase_prefix", "bool_prefix"):
        raise parsing_exception(f"[multi_match] query does not support type [{mtype}]")
    if mtype == "cross_fields" and str(body.get("operator", "or")).lower() == "and":
        # every term must appear in at least one of the fields
        toks = text.tokenize(as_string(body["query"]))
        per_tok = []
        for t in toks:
            alts = [match_one(ref, t, {}, ctx, 1.0, lenient=True).where for ref, _ in fields]
            per_tok.append(or_(alts))
        return Compiled(and_(per_tok) if toks else FALSE, repr(boost))
    parts: list[Compiled] = []
    for ref, fboost in fields:
        if mtype in ("phrase", "phrase_prefix"):
            parts.append(phrase_one(ref, body["query"], ctx, fboost * boost, int(body.get("slop", 0)),
                                     mtype == "phrase_prefix", lenient=lenient))  # fmt: skip
        else:
            parts.append(match_one(ref, body["query"], body, ctx, fboost * boost, lenient=lenient))
    parts = [p for p in parts if p.where != FALSE]
    if not parts:
        return Compiled(FALSE, "0.0")
    where = or_([p.where for p in parts])
    scores = [f"CASE WHEN {p.where} THEN {p.score} ELSE 0 END" for p in parts]
    if mtype in ("most_fields", "cross_fields", "bool_prefix") or len(scores) == 1:
        score = " + ".join(scores)
    else:
        score = tie_score(scores, float(body.get("tie_breaker", 0.0)))
    return Compiled(where, f"({score})::DOUBLE")


def combined_fields_query(body: Any, ctx: Ctx, scoring: bool) -> Compiled:
    if not isinstance(body, dict) or "query" not in body:
        raise parsing_exception("[combined_fields] requires query value")
    rewritten = dict(body)
    rewritten["type"] = "cross_fields"
    rewritten.pop("auto_generate_synonyms_phrase_query", None)
    return multi_match_query(rewritten, ctx, scoring)
