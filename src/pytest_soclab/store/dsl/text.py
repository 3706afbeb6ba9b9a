"""The standard analyzer, approximated: word tokens joined across a single `.`, `'`, `’` or `:`
between word characters (so `example.com`, `10.0.0.1`, `don't` stay whole), lowercased.

Word characters are ASCII letters, digits and `_`, and every non-ASCII character outside the
common punctuation blocks (Latin-1 punctuation, General Punctuation, CJK punctuation,
full-width ASCII punctuation). The same classes become RE2 patterns that test a column
without an index; explicit ranges compile in microseconds where RE2's `\\pL` classes take
milliseconds per query.
"""

from __future__ import annotations

import re

# characters that never belong to a word (ASCII punctuation and spaces, then Unicode punctuation blocks)
_NONWORD_RANGES = [
    (0x00, 0x2F), (0x3A, 0x40), (0x5B, 0x5E), (0x60, 0x60), (0x7B, 0xBF), (0xD7, 0xD7), (0xF7, 0xF7),
    (0x2000, 0x206F), (0x2E00, 0x2E7F), (0x3000, 0x303F), (0xFE30, 0xFE4F), (0xFF00, 0xFF0F), (0xFF1A, 0xFF20),
]  # fmt: skip
_JOINERS = ".'\u2019:"


def _py_class(negate: bool) -> str:
    body = "".join(f"\\u{a:04x}-\\u{b:04x}" if a != b else f"\\u{a:04x}" for a, b in _NONWORD_RANGES)
    return f"[{'^' if negate else ''}{body}]"


def _re2_range(a: int, b: int) -> str:
    return f"\\x{{{a:x}}}-\\x{{{b:x}}}" if a != b else f"\\x{{{a:x}}}"


_RE2_NONWORD = "".join(_re2_range(a, b) for a, b in _NONWORD_RANGES)
_W = f"[^{_RE2_NONWORD}]"  # one word character
_NW = f"[{_RE2_NONWORD}]"  # one non-word character (joiners included)
_J = "[.'\\x{2019}:]"
# RE2 has no class subtraction: non-word-and-not-joiner, listed explicitly
_NONWORD_NOT_JOIN = []
for a, b in _NONWORD_RANGES:
    cur = a
    for j in sorted(ord(c) for c in _JOINERS):
        if a <= j <= b:
            if cur <= j - 1:
                _NONWORD_NOT_JOIN.append((cur, j - 1))
            cur = j + 1
    if cur <= b:
        _NONWORD_NOT_JOIN.append((cur, b))
_NWJ = "[" + "".join(_re2_range(a, b) for a, b in _NONWORD_NOT_JOIN) + "]"

LEFT = f"(?:^|{_NWJ}|(?:^|{_NW}){_J})"
RIGHT = f"(?:$|{_NWJ}|{_J}(?:$|{_NW}))"
# between two adjacent tokens: anything that does not join them
SEP = f"(?:{_NW}{{2,}}|{_NWJ})"
TOKEN_BODY = f"{_W}+(?:{_J}{_W}+)*"
TOKEN_CHAR = f"(?:{_W}|{_J})"

_WORD_PY = _py_class(True)
_TOKEN = re.compile(f"{_WORD_PY}+(?:[{_JOINERS}]{_WORD_PY}+)*")


def tokenize(text: str) -> list[str]:
    return [t.lower() for t in _TOKEN.findall(text)]


def re2_escape(text: str) -> str:
    return "".join("\\" + ch if not ch.isalnum() and ch != "_" and ord(ch) < 128 else ch for ch in text)


def token_regex(token: str) -> str:
    """RE2 pattern: `token` occurs as a whole token."""
    return LEFT + re2_escape(token) + RIGHT


def phrase_regex(tokens: list[str], slop: int = 0, prefix_last: bool = False) -> str:
    """RE2 pattern: the tokens in order, with at most `slop` other tokens between neighbours."""
    gap = SEP if slop <= 0 else f"{SEP}(?:{TOKEN_BODY}{SEP}){{0,{slop}}}"
    body = gap.join(re2_escape(t) for t in tokens)
    return LEFT + body + (RIGHT if not prefix_last else "")


def prefix_regex(prefix: str) -> str:
    return LEFT + re2_escape(prefix)


def wildcard_token_regex(pattern: str) -> str:
    """A wildcard over single tokens (`*` any run of token characters, `?` one)."""
    parts: list[str] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            parts.append(re2_escape(pattern[i + 1]))
            i += 2
            continue
        if ch == "*":
            parts.append(f"{TOKEN_CHAR}*")
        elif ch == "?":
            parts.append(TOKEN_CHAR)
        else:
            parts.append(re2_escape(ch))
        i += 1
    return LEFT + "".join(parts) + RIGHT


def match_sql(x: str, pattern: str, prefilter: str | None = None) -> str:
    """SQL: column `x` matches `pattern` case-insensitively (tokens are lowercase).

    `prefilter` is a literal every match contains, checked first with a cheap ILIKE."""
    from ..sqlutil import like_escape, string

    test = f"regexp_matches({x}, {string('(?i)' + pattern)})"
    if prefilter:
        esc = like_escape(prefilter)
        clause = " ESCAPE '\\'" if esc != prefilter else ""
        return f"({x} ILIKE {string('%' + esc + '%')}{clause} AND {test})"
    return f"({test})"
