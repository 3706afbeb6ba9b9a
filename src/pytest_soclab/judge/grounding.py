"""What the agent itself retrieved: the documents its read tools returned, and fast containment checks.

A claim in a report is grounded when the agent's own tool results contained it. This module turns a
transcript into documents (ES|QL rows, in row or columnar form; search hits with their `_source` and
`fields`; aggregation buckets; the text of `get_file` / `execute` output) and answers "did the agent
retrieve X" without caring which of those shapes X came in.

Fabrication: a query can manufacture the value it then "finds" (`ROW ip = "1.2.3.4"`,
`EVAL h = "web-01"`, a search `script_fields` or `runtime_mappings` script, `execute("echo ...")`).
For calls that compute values like that, a value found in the result counts only when it is not a
literal of the call's own arguments, or when the agent had already retrieved it (or was given it in the
trigger) before. Calls that only filter and aggregate stored data (`FROM | WHERE | STATS | KEEP`) may
name the value they look for: rows come back only when the data holds it.
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from pytest_soclab.models import ToolCall

# Tools whose results are the agent's retrieval. get_mappings / list_indices describe the store, not
# events: a claim cannot be grounded in a field list.
DOCUMENT_TOOLS: frozenset[str] = frozenset({"es_search", "esql_query", "get_file", "execute"})
# Tools whose output is computed from their arguments (the echo rule always applies).
COMPUTING_TOOLS: frozenset[str] = frozenset({"execute"})

_WORDCHAR = re.compile(r"[A-Za-z0-9_]")
# What continues a token: letters and digits. `_` separates, like `-`, `.`, `=` and `:` (package files
# and versions are joined by it: "openssh-server_8.9p1-3ubuntu0.10_amd64.deb").
_NOT_AFTER = r"(?<![A-Za-z0-9])"
_NOT_BEFORE = r"(?![A-Za-z0-9])"
_ESQL_COMPUTES = re.compile(r"^\s*row\b|\|\s*(?:eval|row)\b", re.IGNORECASE)
_DSL_COMPUTES = ("script", "runtime_mappings", "script_fields")
# `CONCAT("185.220.", "101.34")`: glue literals back together before the echo check.
_LITERAL_GLUE = re.compile(r"\"\s*[,+]\s*\"|'\s*[,+]\s*'")
_ESQL_FROM = re.compile(r"^\s*from\s+(.+?)(?:\s+metadata\b[^|]*)?(?:\||$)", re.IGNORECASE | re.DOTALL)
_BACKING_INDEX = re.compile(r"^\.ds-|-\d{4}\.\d{2}\.\d{2}-\d{6}$")

HOST_FIELDS: tuple[str, ...] = ("host.name", "host.hostname", "related.hosts", "agent.name", "observer.name")
IP_FIELDS_OF_HOST: tuple[str, ...] = ("host.ip",)


def norm(text: str) -> str:
    """Lowercase and collapse whitespace: the form every containment check works on."""
    return " ".join(text.lower().split())


def is_prefix_term(term: str) -> bool:
    """`exfiltrat*`: the explicit prefix form (a word, then a single `*`)."""
    t = term.strip()
    return len(t) > 1 and t.endswith("*") and t[-2].isalnum() and "*" not in t[:-1]


@lru_cache(maxsize=4096)
def term_pattern(term: str) -> re.Pattern[str]:
    """A case-insensitive pattern for `term` that does not match inside a longer word or number.

    "10.0.0.5" does not match "10.0.0.50"; "web-01" matches "web-01.corp.local" and
    "web-01_backup.tar"; "02:30" matches 2025-03-11T02:30:00Z; whitespace inside the term matches any
    run of whitespace. A term in the prefix
    form `exfiltrat*` matches the word and its continuations ("exfiltration", "exfiltrated").
    """
    t = term.strip()
    if not t:
        raise ValueError("empty term")
    prefix = is_prefix_term(t)
    if prefix:
        t = t[:-1]
    body = r"\s+".join(re.escape(p) for p in t.split())
    lead = _NOT_AFTER if _WORDCHAR.match(t[0]) else ""
    if t[0].isdigit():
        lead = rf"(?:{lead}|(?<=\dT))"  # a time inside an ISO timestamp: "02:30" in 2025-03-11T02:30:00Z
    tail = "[A-Za-z0-9]*" if prefix else _NOT_BEFORE if _WORDCHAR.match(t[-1]) else ""
    return re.compile(lead + body + tail, re.IGNORECASE)


def _anchor(term: str) -> str:
    """The longest whitespace-free piece of a term, lowercased: a cheap substring test that must pass
    before the regex is worth running."""
    t = term.strip()
    if is_prefix_term(t):
        t = t[:-1]
    return max(t.lower().split(), key=len, default="")


def contains(text: str, term: str) -> bool:
    """Whether `text` contains `term` as a whole token sequence (see term_pattern)."""
    if not term.strip():
        return False
    return _anchor(term) in text.lower() and term_pattern(term).search(text) is not None


def _found(pat: re.Pattern[str], anchor: str, lowered_text: str) -> bool:
    return anchor in lowered_text and pat.search(lowered_text) is not None


def _flatten(value: Any, prefix: str, out: dict[str, list[str]]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(v, f"{prefix}.{k}" if prefix else str(k), out)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _flatten(v, prefix, out)
    elif value is not None:
        out.setdefault(prefix, []).append(_scalar_text(value))


def _scalar_text(value: Any) -> str:
    # As JSON writes it (true, 1.5), without json.dumps' cost on the hot path.
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return json.dumps(value, default=str)


def flatten(value: Any) -> dict[str, list[str]]:
    """Nested JSON -> {dotted.field: [string values]} (lists become several values)."""
    out: dict[str, list[str]] = {}
    _flatten(value, "", out)
    return out


@dataclass(frozen=True)
class Doc:
    """One retrieved document: a search hit, an ES|QL row, an aggregation, or a tool's text output."""

    seq: int  # the tool call that returned it
    tool: str
    index: str | None  # the concrete index when the result says (hit `_index`, ES|QL `_index` column)
    patterns: tuple[str, ...]  # the index expression the call searched
    id: str | None
    fields: dict[str, list[str]]
    text: str = field(repr=False)  # the values, one a line, lowercased (field names are the schema, not content)

    def values(self, *names: str) -> list[str]:
        return [v for n in names for v in self.fields.get(n, [])]


def _doc(seq: int, tool: str, patterns: tuple[str, ...], fields: dict[str, list[str]],
         index: str | None = None, id_: str | None = None) -> Doc:
    text = "\n".join(v for vs in fields.values() for v in vs).lower()
    return Doc(seq=seq, tool=tool, index=index, patterns=patterns, id=id_, fields=fields, text=text)


def _esql_patterns(query: str) -> tuple[str, ...]:
    m = _ESQL_FROM.match(query or "")
    if not m:
        return ()
    return tuple(p.strip().strip('"`') for p in m.group(1).split(",") if p.strip())


def _esql_docs(seq: int, args: dict[str, Any], result: dict[str, Any]) -> list[Doc]:
    cols = [c.get("name", "") if isinstance(c, dict) else str(c) for c in result.get("columns") or []]
    values = result.get("values") or []
    patterns = _esql_patterns(str(args.get("query", "")))
    if args.get("columnar"):
        # values[i] is column i: transpose (ragged columns would be a malformed response: pad).
        n = max((len(c) for c in values if isinstance(c, list)), default=0)
        rows = [[(col[r] if isinstance(col, list) and r < len(col) else None) for col in values] for r in range(n)]
    else:
        rows = [r for r in values if isinstance(r, list)]
    docs = []
    for row in rows:
        fields: dict[str, list[str]] = {}
        for name, v in zip(cols, row):
            if v is None:
                continue
            if isinstance(v, (dict, list)):
                _flatten(v, name, fields)
            else:
                fields[name] = [_scalar_text(v)]  # the common case, kept cheap (rows come by thousands)
        index = (fields.get("_index") or [None])[0]
        id_ = (fields.get("_id") or [None])[0]
        docs.append(_doc(seq, "esql_query", patterns, fields, index, id_))
    return docs


def _search_docs(seq: int, args: dict[str, Any], result: dict[str, Any]) -> list[Doc]:
    patterns = tuple(p.strip() for p in str(args.get("index", "")).split(",") if p.strip())
    body = args.get("body") if isinstance(args.get("body"), dict) else {}
    scripted = set((body or {}).get("script_fields", {}) or {})
    docs = []
    hits = (result.get("hits") or {}).get("hits") or []
    for h in hits:
        if not isinstance(h, dict):
            continue
        fields = flatten(h.get("_source") or {})
        for name, vals in flatten({k: v for k, v in (h.get("fields") or {}).items() if k not in scripted}).items():
            fields.setdefault(name, []).extend(vals)
        docs.append(_doc(seq, "es_search", patterns, fields, h.get("_index"), h.get("_id")))
    aggs = result.get("aggregations")
    if aggs:
        docs.append(_doc(seq, "es_search", patterns, flatten(aggs)))
    return docs


def docs_of_call(call: ToolCall) -> list[Doc]:
    """The documents one tool call retrieved (none for errors, denials, metadata and action tools)."""
    if call.tool not in DOCUMENT_TOOLS or not call.ok or call.blocked or call.result is None:
        return []
    res = call.result
    if call.tool == "esql_query" and isinstance(res, dict) and "columns" in res:
        return _esql_docs(call.seq, call.args, res)
    if call.tool == "es_search" and isinstance(res, dict) and ("hits" in res or "aggregations" in res):
        return _search_docs(call.seq, call.args, res)
    fields = flatten(res) if isinstance(res, (dict, list)) else {"result": [str(res)]}
    patterns = (str(call.args.get("host", "")),) if call.args.get("host") else ()
    return [_doc(call.seq, call.tool, patterns, fields)]


def computes(call: ToolCall) -> bool:
    """Whether the call can manufacture values from its own arguments (the echo rule applies)."""
    if call.tool in COMPUTING_TOOLS or call.tool == "get_file":
        return True
    if call.tool == "esql_query":
        return bool(_ESQL_COMPUTES.search(str(call.args.get("query", ""))))
    if call.tool == "es_search":
        text = json.dumps(call.args.get("body") or {})
        return any(f'"{k}"' in text for k in _DSL_COMPUTES)
    return False


@dataclass
class _CallText:
    seq: int
    tool: str
    computes: bool
    args_text: str
    docs: list[Doc]
    text: str


def source_matches(source: str, doc: Doc) -> bool:
    """Whether a document can come from `source` (a data stream like logs-endpoint.events.process,
    or a dataset like endpoint.events.process). Unknown provenance is given the benefit of the doubt:
    the content check is what matters."""
    s = source.strip().lower()
    if not s:
        return True
    if doc.index:
        idx = _BACKING_INDEX.sub("", doc.index.lower())
        return s in idx or idx in s
    for ds in doc.values("data_stream.dataset", "event.dataset"):
        ds = ds.lower()
        return ds in s or s in ds
    if not doc.patterns:
        return True
    cands = (s, s + "-default", "logs-" + s, "logs-" + s + "-default")
    return any(fnmatch.fnmatchcase(c, p.lower()) for p in doc.patterns for c in cands)


class Retrieved:
    """The agent's retrieval over a transcript, with grounding checks.

    `known` is text the agent was given (the trigger): values in it may be searched for by name even
    in computing calls.
    """

    def __init__(self, calls: Sequence[ToolCall], known: str = "") -> None:
        self._calls: list[_CallText] = []
        for c in sorted(calls, key=lambda c: c.seq):
            docs = docs_of_call(c)
            if not docs:
                continue
            args = _LITERAL_GLUE.sub("", "\n".join(v for vs in flatten(c.args).values() for v in vs).lower())
            self._calls.append(
                _CallText(c.seq, c.tool, computes(c), args, docs, "\n".join(d.text for d in docs))
            )
        self._known = known.lower()
        self._cache: dict[str, list[int]] = {}
        self._qt: str | None = None
        self._hosts: set[str] | None = None

    @property
    def docs(self) -> list[Doc]:
        return [d for c in self._calls for d in c.docs]

    @property
    def empty(self) -> bool:
        return not self._calls

    def text(self) -> str:
        """Everything retrieved, lowercased, one "field: value" per line."""
        return "\n".join(c.text for c in self._calls)

    def grounded_in(self, term: str) -> list[int]:
        """The seqs of the calls that ground `term` (see the module doc for the echo rule)."""
        key = term.strip().lower()
        if not key:
            return []
        if key in self._cache:
            return self._cache[key]
        pat = term_pattern(key)
        anchor = _anchor(key)
        known = bool(pat.search(self._known))
        seqs: list[int] = []
        for c in self._calls:
            if not _found(pat, anchor, c.text):
                continue
            if not c.computes or known or key not in c.args_text:
                seqs.append(c.seq)
                known = True  # once retrieved, later queries may name it
        self._cache[key] = seqs
        return seqs

    def grounded(self, term: str) -> bool:
        return bool(self.grounded_in(term))

    def linked(self, term: str, others: Iterable[str]) -> bool:
        """Grounded in a document that also ties it to another answer-key entity.

        A host in a list of every host, or an IP in a table of all connections, says nothing about the
        attack: the document (or the query that filtered it) must hold one of `others` as well, as the
        process event of /tmp/.sysupdate holds host.name web-01, or the rows of
        `WHERE destination.ip == "10.10.1.15"` hold the attacker's source.ip. With no other entity to tie
        to, plain grounding is enough.
        """
        seqs = set(self.grounded_in(term))
        if not seqs:
            return False
        pats = [(term_pattern(o), _anchor(o)) for o in others
                if o.strip() and not contains(o, term) and not contains(term, o)]
        if not pats:
            return True
        tp, ta = term_pattern(term), _anchor(term)
        for c in self._calls:
            if c.seq not in seqs:
                continue
            for d in c.docs:
                if _found(tp, ta, d.text) and any(_found(p, a, d.text) or _found(p, a, c.args_text) for p, a in pats):
                    return True
        return False

    def evidence(self, source: str, must_find: str) -> list[Doc]:
        """Retrieved documents of `source` that contain `must_find` (grounded, as above)."""
        seqs = set(self.grounded_in(must_find))
        if not seqs:
            return []
        pat, anchor = term_pattern(must_find), _anchor(must_find)
        return [d for c in self._calls if c.seq in seqs for d in c.docs
                if _found(pat, anchor, d.text) and source_matches(source, d)]

    def field_values(self, *names: str) -> set[str]:
        return {v for d in self.docs for v in d.values(*names)}

    def hosts(self) -> set[str]:
        """Host names seen in retrieved documents."""
        if self._hosts is None:
            self._hosts = {h for h in self.field_values(*HOST_FIELDS) if h and not h.startswith(("{", "["))}
        return set(self._hosts)

    def process_names(self) -> dict[tuple[str, str], set[str]]:
        """(host, pid) -> the process names and executables retrieved for that pid on that host: how a
        report names a process without its number ("kill the /tmp/.sysupdate implant on web-01")."""
        out: dict[tuple[str, str], set[str]] = {}
        for d in self.docs:
            pids = d.values("process.pid")
            if not pids:
                continue
            names = set(d.values("process.name", "process.executable"))
            for host in d.values("host.name") or [""]:
                for pid in pids:
                    out.setdefault((host, pid), set()).update(names)
        return out

    def host_ips(self, hosts: Iterable[str]) -> set[str]:
        """The host.ip values of documents about the given hosts."""
        want = {h.lower() for h in hosts}
        out: set[str] = set()
        for d in self.docs:
            if any(h.lower() in want for h in d.values("host.name", "host.hostname")):
                out.update(d.values(*IP_FIELDS_OF_HOST))
        return out

    def contains_quote(self, quote: str) -> bool:
        """Whether a verbatim quote (whitespace and case aside) occurs in what was retrieved.

        Used to check the evidence an LLM judge cites. Quotes of JSON ("host.name": "web-01") and of
        flattened lines (host.name: web-01) both work: quotes and braces are ignored.
        """
        q = quote_norm(quote)
        if len(q) < 3:
            return False
        return q in self._quote_text()

    def _quote_text(self) -> str:
        if self._qt is None:
            raw = "\n".join(
                "\n".join(f"{k}: {v}" for k, vs in d.fields.items() for v in vs) for d in self.docs
            )
            self._qt = quote_norm(raw)
        return self._qt


_QUOTE_STRIP = re.compile(r"[\"'{}\[\],`]")


def quote_norm(s: str) -> str:
    """Lowercase, JSON punctuation (quotes, braces, commas) dropped, whitespace collapsed."""
    return " ".join(_QUOTE_STRIP.sub(" ", s.lower()).split()).replace(" :", ":")
