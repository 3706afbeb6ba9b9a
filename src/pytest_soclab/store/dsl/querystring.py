"""query_string (Lucene syntax) and simple_query_string, compiled with the same leaves as the DSL.

Clause combination follows Lucene's classic parser: `+` / AND make clauses required, `-` /
NOT / `!` prohibit them, plain clauses follow the default operator; a purely negative query
matches everything else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..catalog import FieldRef
from ..mappings import DATE_TYPES, KEYWORD_TYPES, NUMERIC_TYPES, TEXT_TYPES
from ..sqlutil import string
from ..tokens import Bits, any_of, combine
from . import text
from .build import (
    FALSE, TRUE, Compiled, Ctx, and_, any_value, count_clauses, expand_fields, fuzziness, or_, resolve_field,
)  # fmt: skip
from .errors import EsError, parsing_exception
from .fulltext import field_specs, match_one, phrase_one
from .lucene_regex import to_re2
from .termlevel import equals, keyword_values, prefix_pred, range_literal, wildcard_pred

MUST, SHOULD, MUST_NOT = "must", "should", "must_not"


@dataclass
class Term:
    field: str | None
    kind: str  # term | phrase | wildcard | regexp | range | exists | fuzzy
    value: Any
    boost: float = 1.0
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Group:
    clauses: list[tuple[str, Any]]  # (occur, Term | Group)
    boost: float = 1.0
    field: str | None = None


# ---------------------------------------------------------------------------- lexer

_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<lp>\()
  | (?P<rp>\))
  | (?P<and>AND\b|&&)
  | (?P<or>OR\b|\|\|)
  | (?P<not>NOT\b|!(?!=))
  | (?P<plus>\+)
  | (?P<minus>-(?=\S))
  | (?P<phrase>"(?:\\.|[^"\\])*")
  | (?P<regex>/(?:\\.|[^/\\])*/)
  | (?P<range>[\[{][^\]}]*[\]}])
  | (?P<caret>\^[0-9.]+)
  | (?P<tilde>~[0-9.]*)
  | (?P<word>(?:\\.|[^\s()"\[\]{}^~:\\]|:(?=[^\s]*\\))+)
  | (?P<colon>:)
    """,
    re.VERBOSE,
)


def _lex(query: str) -> list[tuple[str, str]]:
    tokens: list[tuple[str, str]] = []
    pos = 0
    while pos < len(query):
        m = _TOKEN.match(query, pos)
        if not m:
            raise _syntax(query, pos)
        kind = m.lastgroup or ""
        if kind != "ws":
            tokens.append((kind, m.group()))
        pos = m.end()
    return tokens


def _syntax(query: str, pos: int) -> EsError:
    return EsError(400, "query_shard_exception", f"Failed to parse query [{query}]",
                   caused_by={"type": "parse_exception", "reason": f"Cannot parse '{query}': Encountered \"{query[pos:pos + 1]}\" at column {pos}."})  # fmt: skip


# ---------------------------------------------------------------------------- parser (Lucene classic)


class _Parser:
    def __init__(self, query: str, default_and: bool):
        self.query = query
        self.toks = _lex(query)
        self.i = 0
        self.default_and = default_and

    def peek(self) -> tuple[str, str] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self) -> tuple[str, str]:
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def parse(self) -> Group:
        group = self.clauses(None)
        if self.peek() is not None:
            raise _syntax(self.query, len(self.query))
        return group

    def clauses(self, fld: str | None) -> Group:
        clauses: list[tuple[str, Any]] = []
        conj = None
        while True:
            tok = self.peek()
            if tok is None or tok[0] == "rp":
                break
            if tok[0] in ("and", "or"):
                self.take()
                conj = tok[0]
                continue
            mod = None
            if tok[0] in ("plus", "minus", "not"):
                self.take()
                mod = "req" if tok[0] == "plus" else "not"
            clause = self.clause(fld)
            self._add(clauses, conj, mod, clause)
            conj = None
        return Group(clauses)

    def _add(self, clauses: list[tuple[str, Any]], conj: str | None, mod: str | None, q: Any) -> None:
        if clauses and conj == "and":
            occ, last = clauses[-1]
            if occ != MUST_NOT:
                clauses[-1] = (MUST, last)
        if clauses and self.default_and and conj == "or":
            occ, last = clauses[-1]
            if occ != MUST_NOT:
                clauses[-1] = (SHOULD, last)
        if not self.default_and:
            required = mod == "req"
            prohibited = mod == "not"
            if conj == "and" and not prohibited:
                required = True
        else:
            prohibited = mod == "not"
            required = not prohibited and conj != "or"
        occur = MUST if required else (MUST_NOT if prohibited else SHOULD)
        clauses.append((occur, q))

    def clause(self, fld: str | None) -> Any:
        tok = self.peek()
        if tok is None:
            raise _syntax(self.query, len(self.query))
        # field:...
        if tok[0] == "word" and self.i + 1 < len(self.toks) and self.toks[self.i + 1][0] == "colon":
            name = _unescape(self.take()[1])
            self.take()
            return self.clause(name)
        if tok[0] == "lp":
            self.take()
            group = self.clauses(fld)
            if self.peek() is None or self.peek()[0] != "rp":  # type: ignore[index]
                raise _syntax(self.query, len(self.query))
            self.take()
            group.field = fld
            group.boost = self._boost()
            return group
        kind, value = self.take()
        if kind == "phrase":
            slop = 0
            if self.peek() and self.peek()[0] == "tilde":  # type: ignore[index]
                slop = int(float(self.take()[1][1:] or 0))
            return Term(fld, "phrase", _unescape(value[1:-1]), self._boost(), {"slop": slop})
        if kind == "regex":
            return Term(fld, "regexp", value[1:-1], self._boost())
        if kind == "range":
            lo_incl, hi_incl = value[0] == "[", value[-1] == "]"
            body = value[1:-1].strip()
            parts = re.split(r"\s+TO\s+", body)
            if len(parts) != 2:
                raise _syntax(self.query, self.query.find(value))
            lo, hi = (p.strip().strip('"') for p in parts)
            return Term(fld, "range", None, self._boost(), {"lo": None if lo == "*" else lo, "hi": None if hi == "*" else hi,
                                                           "lo_incl": lo_incl, "hi_incl": hi_incl})  # fmt: skip
        if kind == "word":
            word = value
            if fld is not None and word[:2] in (">=", "<=") or word[:1] in (">", "<"):
                op = word[:2] if word[:2] in (">=", "<=") else word[:1]
                bound = _unescape(word[len(op):])
                extra = {"lo": None, "hi": None, "lo_incl": True, "hi_incl": True}
                if op.startswith(">"):
                    extra.update(lo=bound, lo_incl=op == ">=")
                else:
                    extra.update(hi=bound, hi_incl=op == "<=")
                return Term(fld, "range", None, self._boost(), extra)
            if self.peek() and self.peek()[0] == "tilde":  # type: ignore[index]
                fuzz = self.take()[1][1:] or "AUTO"
                return Term(fld, "fuzzy", _unescape(word), self._boost(), {"fuzziness": fuzz})
            if fld == "_exists_":
                return Term(_unescape(word), "exists", None, self._boost())
            if _has_wildcard(word):
                return Term(fld, "wildcard", word, self._boost())
            return Term(fld, "term", _unescape(word), self._boost())
        if kind in ("and", "or", "not"):
            return Term(fld, "term", value, self._boost())
        raise _syntax(self.query, self.query.find(value))

    def _boost(self) -> float:
        tok = self.peek()
        if tok and tok[0] == "caret":
            self.take()
            try:
                return float(tok[1][1:])
            except ValueError:
                return 1.0
        return 1.0


def _has_wildcard(word: str) -> bool:
    i = 0
    while i < len(word):
        if word[i] == "\\":
            i += 2
            continue
        if word[i] in "*?":
            return True
        i += 1
    return False


def _unescape(text_: str) -> str:
    return re.sub(r"\\(.)", r"\1", text_)


# ---------------------------------------------------------------------------- simple_query_string


def _simple_parse(query: str, default_and: bool) -> Group:
    """simple_query_string never fails: `+` and, `|` or, `-` not, `"` phrase, `*` prefix, `( )`, `~N`.

    Lucene's SimpleQueryParser semantics: the operators are binary and left-associative. A
    term joins the tree built so far with the operator written before it (the first one, if
    several), else the default operator; a change of operator makes the tree so far one clause
    of a new node (`a b +c` is `(a OR b) AND c`). `-` negates the next term alone, as "every
    document but": with the OR default, `a -b` is `a OR NOT b`."""
    # `word~N` is fuzzy with the digits only: what follows them starts the next term
    toks = re.findall(r'"(?:\\.|[^"\\])*"(?:~\d+)?|[()|+]|-(?=\S)|[^\s()|+"~]+(?:~\d*)?|~\d*', query)
    default = MUST if default_and else SHOULD
    pos = 0

    def leaf(tok: str) -> Term:
        phrase = re.fullmatch(r'"((?:\\.|[^"\\])*)"(?:~(\d+))?', tok)
        if phrase:
            return Term(None, "phrase", _unescape(phrase.group(1)), 1.0, {"slop": int(phrase.group(2) or 0)})
        if tok.endswith("*") and len(tok) > 1:
            return Term(None, "wildcard", tok, 1.0)
        if "~" in tok[1:]:
            word, _, fz = tok.partition("~")
            return Term(None, "fuzzy", word, 1.0, {"fuzziness": fz or "AUTO"})
        # a word the analyzer splits (`foo-bar`) joins its tokens with the default operator
        return Term(None, "term", tok, 1.0, {"operator": "and" if default_and else "or"})

    def parse_group(nested: bool) -> Any:
        nonlocal pos
        top: Any = None
        current: str | None = None
        previous: str | None = None
        nots = 0
        while pos < len(toks):
            tok = toks[pos]
            if tok == ")" and nested:
                break
            pos += 1
            if tok == ")":
                continue  # unmatched: dropped, as any invalid part
            if tok in ("+", "|"):
                if current is None and top is not None:
                    current = MUST if tok == "+" else SHOULD
                continue
            if tok == "-":
                nots += 1
                continue
            if tok == "(":
                branch = parse_group(True)
                if pos < len(toks) and toks[pos] == ")":
                    pos += 1
                if branch is None:
                    continue  # `()`: nothing to join, and the pending operators stay pending
            else:
                branch = leaf(tok)
            if nots % 2:
                branch = Group([(MUST_NOT, branch)])
            if top is None:
                top = branch
            else:
                op = current or default
                if previous != op:
                    top = Group([(op, top)])
                top.clauses.append((op, branch))
                previous = op
            nots, current = 0, None
        return top

    tree = parse_group(False)
    if tree is None:
        return Group([])
    return tree if isinstance(tree, Group) else Group([(MUST, tree)])


# ---------------------------------------------------------------------------- compilation


def compile_query_string(body: Any, ctx: Ctx, scoring: bool, *, simple: bool) -> Compiled:
    kind = "simple_query_string" if simple else "query_string"
    if not isinstance(body, dict) or "query" not in body:
        raise parsing_exception(f"[{kind}] must be provided with a [query]")
    allowed = {"query", "fields", "default_field", "default_operator", "analyze_wildcard", "lenient", "boost",
               "allow_leading_wildcard", "minimum_should_match", "analyzer", "quote_analyzer", "time_zone",
               "auto_generate_synonyms_phrase_query", "flags", "fuzziness", "fuzzy_max_expansions",
               "fuzzy_prefix_length", "fuzzy_transpositions", "phrase_slop", "quote_field_suffix", "type",
               "tie_breaker", "max_determinized_states", "enable_position_increments", "escape", "rewrite", "_name"}  # fmt: skip
    for key in body:
        if key not in allowed:
            raise parsing_exception(f"[{kind}] unknown token [{key}]")
    query = body["query"]
    if not isinstance(query, str):
        query = str(query)
    default_and = str(body.get("default_operator", "or")).lower() == "and"
    if simple:
        tree = _simple_parse(query, default_and)
    else:
        tree = _Parser(query, default_and).parse()
    fields = body.get("fields")
    if fields is None:
        fields = [body["default_field"]] if body.get("default_field") else ["*"]
    fields = field_specs("query_string", fields)
    lenient = bool(body.get("lenient")) or fields == ["*"] or any("*" in f for f in fields)
    comp = _Compiler(ctx, [str(f) for f in fields], lenient, bool(body.get("allow_leading_wildcard", True)))
    where, score, bits = comp.group(tree, None)
    boost = float(body.get("boost", 1.0))
    return Compiled(where, f"(({score}) * {boost!r})::DOUBLE", bits)


class _Compiler:
    def __init__(self, ctx: Ctx, fields: list[str], lenient: bool, leading_wildcard: bool):
        self.ctx = ctx
        self.fields = fields
        self.lenient = lenient
        self.leading = leading_wildcard

    def group(self, g: Group, fld: str | None) -> tuple[str, str, Bits | None]:
        fld = g.field or fld
        must, should, must_not = [], [], []
        for occur, node in g.clauses:
            w, s, b = self.group(node, fld) if isinstance(node, Group) else self.term(node, fld)
            {MUST: must, SHOULD: should, MUST_NOT: must_not}[occur].append((w, s, b))
        parts = [w for w, _, _ in must]
        if should and not must:
            parts.append(or_([w for w, _, _ in should]))
        for w, _, _ in must_not:
            if w == TRUE:
                parts.append(FALSE)
            elif w != FALSE:
                parts.append(f"NOT coalesce({w}, FALSE)")
        if not parts:
            return (FALSE, "0.0", None) if not g.clauses else (TRUE, "1.0", None)
        where = and_(parts)
        # a lone should clause is required by `where`: its score needs no test (a second one would
        # evaluate its predicate again: for a token lookup, a second semi-join per row)
        required = len(should) == 1 and not must
        scores = [s for _, s, _ in must] + [s if required else f"CASE WHEN {w} THEN {s} ELSE 0 END" for w, s, _ in should]
        score = " + ".join(f"({s})" for s in scores) if scores else "1.0"
        positive = [b for w, _, b in must if w != TRUE] + ([any_of([b for _, _, b in should])] if should and not must else [])
        bits = combine(positive, [b for _, _, b in must_not]) if TRUE not in (w for w, _, _ in must_not) else None
        return where, f"(({score}) * {g.boost!r})", bits

    def _refs(self, fld: str | None) -> list[FieldRef]:
        names = [fld] if fld is not None else self.fields
        refs: list[FieldRef] = []
        for pattern in names:
            name = pattern.split("^")[0]
            expanded = expand_fields(self.ctx, name) if "*" in name else [name]
            for n in expanded:
                ref = resolve_field(self.ctx, n)
                if ref is not None and ref.type not in ("flattened", "nested", "geo_point", "binary"):
                    refs.append(ref)
        return refs

    def term(self, t: Term, fld: str | None) -> tuple[str, str, Bits | None]:
        name = t.field if t.field is not None else fld
        if t.kind == "exists":
            names = expand_fields(self.ctx, t.field or "") if "*" in (t.field or "") else [t.field or ""]
            preds = [f"({self._col(r)} IS NOT NULL)" for r in (resolve_field(self.ctx, n) for n in names) if r is not None]
            return or_(preds), "1.0", None
        refs = self._refs(name)
        count_clauses(self.ctx, len(refs))
        preds: list[str] = []
        bits: list[Bits | None] = []
        for ref in refs:
            try:
                pred, b = self._leaf(ref, t)
            except EsError:
                if self.lenient:
                    continue
                raise
            bits.append(b)
            if pred != FALSE:
                preds.append(pred)
        where = or_(preds)
        return where, f"{t.boost!r}", any_of(bits) if len(refs) == 1 else None

    def _col(self, ref: FieldRef) -> str:
        return ref.sql

    def _leaf(self, ref: FieldRef, t: Term) -> tuple[str, Bits | None]:
        """The clause's SQL on one field, and its documents when an index gives them."""
        if t.kind == "term":
            opts = {"operator": t.extra["operator"]} if "operator" in t.extra else {}
            c = match_one(ref, t.value, opts, self.ctx, 1.0, lenient=False)
            return c.where, c.bits
        if t.kind == "phrase":
            c = phrase_one(ref, t.value, self.ctx, 1.0, int(t.extra.get("slop", 0)), False)
            return c.where, c.bits
        if t.kind == "wildcard":
            return self._wildcard(ref, t.value)
        if t.kind == "regexp" and ref.type in KEYWORD_TYPES:
            pattern = to_re2(t.value)
            return keyword_values(ref, self.ctx, lambda x: f"regexp_full_match({x}, {string(pattern)})")
        return self._other(ref, t), None

    def _wildcard(self, ref: FieldRef, value: str) -> tuple[str, Bits | None]:
        ctx = self.ctx
        if not self.leading and value[:1] in "*?":
            raise parsing_exception(f"Failed to parse query: leading wildcard is not allowed [{value}]")
        if ref.type in TEXT_TYPES:
            return wildcard_pred(ref, value.lower(), False, ctx)
        if ref.type in KEYWORD_TYPES or ref.column == "_id":
            if value.endswith("*") and not _has_wildcard(value[:-1]):
                return prefix_pred(ref, _unescape(value[:-1]), False, ctx)
            return wildcard_pred(ref, value, False, ctx)
        raise parsing_exception(f"Can only use wildcard queries on keyword and text fields - not on [{ref.name}]")

    def _other(self, ref: FieldRef, t: Term) -> str:
        ctx = self.ctx
        if t.kind == "regexp":
            pattern = to_re2(t.value)
            if ref.type in TEXT_TYPES:
                full = text.LEFT + "(?:" + pattern + ")" + text.RIGHT
                return any_value(ref, lambda x: text.match_sql(x, full))
            raise parsing_exception(f"Can only use regexp queries on keyword and text fields - not on [{ref.name}]")
        if t.kind == "fuzzy":
            if ref.type not in KEYWORD_TYPES:
                if ref.type in TEXT_TYPES:
                    dist = fuzziness(t.extra.get("fuzziness", "AUTO"), t.value)
                    tok = t.value.lower()
                    # fuzzy on analysed text: any token within the edit distance
                    return any_value(ref, lambda x: f"len(list_filter(regexp_extract_all(lower({x}), {string(text.TOKEN_BODY)}), lambda __t: damerau_levenshtein(__t, {string(tok)}) <= {dist})) > 0")
                return equals(ref, [t.value], ctx)
            dist = fuzziness(t.extra.get("fuzziness", "AUTO"), t.value)
            return any_value(ref, lambda x: f"damerau_levenshtein({x}, {string(t.value)}) <= {dist}")
        if t.kind == "range":
            conds = []
            for key, is_lower in (("lo", True), ("hi", False)):
                value = t.extra.get(key)
                if value is None:
                    continue
                inclusive = t.extra["lo_incl"] if is_lower else t.extra["hi_incl"]
                lit = range_literal(ref, value, ctx, is_lower=is_lower, inclusive=inclusive, fmt=None, tz=None)
                if lit is None:
                    continue
                op = (">=" if inclusive else ">") if is_lower else ("<=" if inclusive else "<")
                conds.append((op, lit))
            if ref.type not in NUMERIC_TYPES and ref.type not in DATE_TYPES and ref.type not in KEYWORD_TYPES and ref.type != "ip":
                if ref.type in TEXT_TYPES:
                    pass
            if not conds:
                return f"({self._col(ref)} IS NOT NULL)"
            return any_value(ref, lambda x: " AND ".join(f"{x} {op} {lit}" for op, lit in conds))
        raise parsing_exception(f"unsupported query_string clause [{t.kind}]")
