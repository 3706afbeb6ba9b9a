"""Lucene regular expressions (anchored, `@`, `#`, `<n-m>`) as RE2 patterns."""

from __future__ import annotations

from ..limits import MAX_REGEX_LENGTH
from .errors import EsError, unsupported

_FLAG_BITS = {
    "NONE": 0, "INTERSECTION": 1, "COMPLEMENT": 2, "EMPTY": 4, "ANYSTRING": 8, "INTERVAL": 16,
    "ALL": 0xFFFF,
}  # fmt: skip


def parse_flags(flags: str | None) -> int:
    if not flags:
        return _FLAG_BITS["ALL"]
    bits = 0
    for name in str(flags).split("|"):
        name = name.strip().upper()
        if name not in _FLAG_BITS:
            raise EsError(400, "illegal_argument_exception", f"Unknown regexp flag [{name}]")
        bits |= _FLAG_BITS[name]
    return bits


def _literal(ch: str) -> str:
    return ch if ch.isalnum() or ch == "_" or ord(ch) > 127 else "\\" + ch


def to_re2(pattern: str, flags: int = 0xFFFF) -> str:
    """Translate; the result is meant for a full match."""
    if len(pattern) > MAX_REGEX_LENGTH:
        raise EsError(
            400, "illegal_argument_exception",
            f"The length of regex [{len(pattern)}] used in the Regexp Query request has exceeded the allowed maximum "
            f"of [{MAX_REGEX_LENGTH}]. This maximum can be set by changing the [index.max_regex_length] index level setting.",
        )  # fmt: skip
    out: list[str] = []
    i, n = 0, len(pattern)
    depth = 0
    while i < n:
        ch = pattern[i]
        if ch == "\\":
            if i + 1 >= n:
                raise EsError(400, "illegal_argument_exception", f"expected character after '\\' in [{pattern}]")
            out.append(_literal(pattern[i + 1]))
            i += 2
        elif ch == '"':
            j = pattern.find('"', i + 1)
            if j < 0:
                raise EsError(400, "illegal_argument_exception", f"expected '\"' at position {n} in [{pattern}]")
            out.append("".join(_literal(c) for c in pattern[i + 1 : j]))
            i = j + 1
        elif ch == "[":
            j = i + 1
            if j < n and pattern[j] == "^":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                j += 2 if pattern[j] == "\\" else 1
            if j >= n:
                raise EsError(400, "illegal_argument_exception", f"expected ']' at position {n} in [{pattern}]")
            body = pattern[i + 1 : j]
            out.append("[" + body.replace("[", "\\[") + "]")
            i = j + 1
        elif ch in ".?+*|":
            out.append(ch)
            i += 1
        elif ch == "(":
            depth += 1
            out.append("(?:")
            i += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                raise EsError(400, "illegal_argument_exception", f"unexpected ')' at position {i} in [{pattern}]")
            out.append(")")
            i += 1
        elif ch == "{":
            j = pattern.find("}", i)
            body = pattern[i + 1 : j] if j > 0 else ""
            if j < 0 or not body.replace(",", "").isdigit():
                raise EsError(400, "illegal_argument_exception", f"integer expected at position {i + 1} in [{pattern}]")
            out.append("{" + body + "}")
            i = j + 1
        elif ch == "@" and flags & 8:
            out.append(".*")
            i += 1
        elif ch == "#" and flags & 4:
            out.append("[^\\x00-\\x{10FFFF}]")
            i += 1
        elif ch == "<" and flags & 16:
            j = pattern.find(">", i)
            body = pattern[i + 1 : j] if j > 0 else ""
            lo, sep, hi = body.partition("-")
            if j < 0 or not sep or not lo.isdigit() or not hi.isdigit():
                raise EsError(400, "illegal_argument_exception", f"interval syntax error at position {i} in [{pattern}]")
            a, b = sorted((int(lo), int(hi)))
            if b - a > 10000:
                raise unsupported(f"regexp interval <{lo}-{hi}> wider than 10000 values")
            out.append("(?:" + "|".join(str(v) for v in range(b, a - 1, -1)) + ")")
            i = j + 1
        elif ch == "&" and flags & 1:
            raise unsupported("regexp intersection operator [&]")
        elif ch == "~" and flags & 2:
            raise unsupported("regexp complement operator [~]")
        else:
            out.append(_literal(ch))
            i += 1
    if depth != 0:
        raise EsError(400, "illegal_argument_exception", f"expected ')' at position {n} in [{pattern}]")
    return "".join(out)
