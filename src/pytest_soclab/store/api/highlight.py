"""`highlight` in _search: the query's terms marked in the hits' text values.

Terms come from the full-text and term-level clauses of the query (match, match_phrase,
multi_match, query_string, simple_query_string, term, terms, prefix, wildcard); each value is
tokenized as the store's standard analyzer does, and a token equal to a term (or starting
with a prefix) is wrapped in the tags. Fragments are cut around the first marks, like the
unified highlighter's sentence-free fallback: `fragment_size` characters (100), at most
`number_of_fragments` (5; 0 means the whole value)."""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from typing import Any

from pytest_soclab.errors import EsError

from ..dsl.text import tokenize

_TOKEN = re.compile(r"\w+(?:[.'\u2019:]\w+)*", re.UNICODE)
_QS_SYNTAX = re.compile(r"(?:\b(?:AND|OR|NOT|TO)\b|[+\-!(){}\[\]^\"~:\\/]|&&|\|\|)")
_ALL = "*"


@dataclass
class Terms:
    """Terms and prefixes per field name (`*`: any field)."""

    exact: dict[str, set[str]] = field(default_factory=dict)
    prefixes: dict[str, set[str]] = field(default_factory=dict)

    def add(self, name: str, values: list[str], prefix: bool = False) -> None:
        target = self.prefixes if prefix else self.exact
        target.setdefault(name, set()).update(v.lower() for v in values if v)

    def for_field(self, name: str, require_match: bool) -> tuple[set[str], set[str]]:
        exact: set[str] = set()
        prefixes: set[str] = set()
        for src, out in ((self.exact, exact), (self.prefixes, prefixes)):
            for pat, vals in src.items():
                if pat == _ALL or not require_match or fnmatch.fnmatchcase(name, pat) or name.startswith(pat + "."):
                    out.update(vals)
        return exact, prefixes


def _field_and_value(body: Any, value_key: str) -> list[tuple[str, Any]]:
    if not isinstance(body, dict):
        return []
    out = []
    for name, spec in body.items():
        if isinstance(spec, dict):
            out.append((name, spec.get(value_key, spec.get("value"))))
        else:
            out.append((name, spec))
    return out


def collect(query: Any, terms: Terms) -> None:
    """Walks the query and gathers what a highlighter would mark."""
    if not isinstance(query, dict):
        return
    for kind, body in query.items():
        if kind == "bool" and isinstance(body, dict):
            for clause in ("must", "should", "filter"):  # must_not matches nothing worth marking
                sub = body.get(clause)
                for q in sub if isinstance(sub, list) else [sub]:
                    collect(q, terms)
        elif kind in ("constant_score", "boosting"):
            collect(body.get("filter") or body.get("positive") if isinstance(body, dict) else None, terms)
        elif kind == "dis_max" and isinstance(body, dict):
            for q in body.get("queries") or []:
                collect(q, terms)
        elif kind in ("match", "match_phrase", "match_bool_prefix", "match_phrase_prefix"):
            for name, value in _field_and_value(body, "query"):
                terms.add(name, tokenize(str(value)))
        elif kind in ("term", "terms"):
            for name, value in _field_and_value(body, "value"):
                values = value if isinstance(value, list) else [value]
                terms.add(name, [str(v) for v in values if not isinstance(v, (dict, list))])
                terms.add(name, [t for v in values if isinstance(v, str) for t in tokenize(v)])
        elif kind == "prefix":
            for name, value in _field_and_value(body, "value"):
                terms.add(name, [str(value)], prefix=True)
        elif kind == "wildcard":
            for name, value in _field_and_value(body, "value"):
                head = re.split(r"[*?]", str(value), maxsplit=1)[0]
                if head:
                    terms.add(name, [head], prefix=True)
        elif kind in ("multi_match", "combined_fields") and isinstance(body, dict):
            fields = body.get("fields") or [_ALL]
            for name in fields:
                terms.add(str(name).split("^")[0], tokenize(str(body.get("query", ""))))
        elif kind in ("query_string", "simple_query_string") and isinstance(body, dict):
            _query_string_terms(body, terms)


def _query_string_terms(body: dict[str, Any], terms: Terms) -> None:
    text = str(body.get("query", ""))
    default = body.get("fields") or ([body["default_field"]] if body.get("default_field") else [_ALL])
    for m in re.finditer(r'(?:([\w.@*]+):)?("(?:[^"\\]|\\.)*"|\S+)', text):
        name, value = m.group(1), m.group(2)
        value = value.strip("()")
        if value in ("AND", "OR", "NOT", "&&", "||") or not value:
            continue
        targets = [name] if name else [str(f).split("^")[0] for f in default]
        prefix = value.endswith("*") and "*" not in value[:-1]
        clean = _QS_SYNTAX.sub(" ", value.rstrip("*"))
        for target in targets:
            if prefix:
                terms.add(target, [clean.strip()], prefix=True)
            else:
                terms.add(target, tokenize(clean))


def _marks(text: str, exact: set[str], prefixes: set[str]) -> list[tuple[int, int]]:
    out = []
    for m in _TOKEN.finditer(text):
        tok = m.group(0).lower()
        if tok in exact or any(tok.startswith(p) for p in prefixes):
            out.append((m.start(), m.end()))
    return out


def _fragments(text: str, marks: list[tuple[int, int]], pre: str, post: str, size: int, count: int) -> list[str]:
    def tag(start: int, end: int) -> str:
        parts, pos = [], start
        for a, b in marks:
            if a >= start and b <= end:
                parts += [text[pos:a], pre, text[a:b], post]
                pos = b
        parts.append(text[pos:end])
        return "".join(parts)

    if count == 0 or len(text) <= size:
        return [tag(0, len(text))]
    frags: list[str] = []
    end = 0
    for a, _ in marks:
        if a < end:
            continue
        start = max(0, a - size // 4)
        while start > 0 and not text[start - 1].isspace() and a - start < size // 2:
            start -= 1
        end = min(len(text), start + size)
        frags.append(tag(start, end).strip())
        if len(frags) >= count:
            break
    return frags


def _leaves(source: Any, prefix: str = "") -> list[tuple[str, Any]]:
    if isinstance(source, dict):
        out = []
        for k, v in source.items():
            out.extend(_leaves(v, f"{prefix}{k}" if not prefix else f"{prefix}.{k}"))
        return out
    return [(prefix, source)]


def _options(spec: dict[str, Any], base: dict[str, Any]) -> dict[str, Any]:
    merged = {**base, **{k: v for k, v in spec.items() if k != "fields"}}
    for key in ("fragment_size", "number_of_fragments"):
        if key in merged and (isinstance(merged[key], bool) or not isinstance(merged[key], int)):
            raise EsError(400, "x_content_parse_exception", f"[highlight] failed to parse field [{key}]")
    return merged


def field_specs(spec: Any) -> list[tuple[str, dict[str, Any]]]:
    if not isinstance(spec, dict):
        raise EsError(400, "x_content_parse_exception", "[highlight] must be an object")
    fields = spec.get("fields", {})
    if isinstance(fields, list):  # the ordered form: [{"a": {}}, {"b": {}}]
        pairs = [(k, v) for item in fields if isinstance(item, dict) for k, v in item.items()]
    elif isinstance(fields, dict):
        pairs = list(fields.items())
    else:
        raise EsError(400, "x_content_parse_exception", "[highlight] field [fields] must be an object or an array")
    return [(name, _options(opts if isinstance(opts, dict) else {}, spec)) for name, opts in pairs]


def highlight_hit(source: dict[str, Any], specs: list[tuple[str, dict[str, Any]]], query: Any,
                  text_fields: set[str]) -> dict[str, list[str]]:  # fmt: skip
    """The `highlight` object of one hit (empty when nothing is marked)."""
    terms = Terms()
    collect(query, terms)
    out: dict[str, list[str]] = {}
    leaves = _leaves(source)
    for pattern, opts in specs:
        hq = opts.get("highlight_query")
        local = terms
        if hq:
            local = Terms()
            collect(hq, local)
        require = bool(opts.get("require_field_match", True))
        pre = (opts.get("pre_tags") or ["<em>"])[0]
        post = (opts.get("post_tags") or ["</em>"])[0]
        size = int(opts.get("fragment_size", 100))
        count = int(opts.get("number_of_fragments", 5))
        for name, value in leaves:
            if not fnmatch.fnmatchcase(name, pattern) or name in out:
                continue
            if "*" in pattern and text_fields and name not in text_fields:
                continue  # a wildcard highlights text fields only, as Elasticsearch does
            exact, prefixes = local.for_field(name, require)
            if not exact and not prefixes:
                continue
            frags: list[str] = []
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, str):
                    marks = _marks(item, exact, prefixes)
                    if marks:
                        frags.extend(_fragments(item, marks, pre, post, size, count))
            if frags:
                out[name] = frags[: count] if count else frags
    return out
