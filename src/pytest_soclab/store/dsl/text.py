"""The standard analyzer, approximated: Unicode word tokens (letters, digits, `_`) joined across a
single `.`, `'` or `:` between word characters (so `example.com`, `10.0.0.1`, `don't` stay whole),
lowercased. The same rules become RE2 patterns that test an analysed column without an index."""

from __future__ import annotations

import re

_TOKEN = re.compile(r"\w+(?:[.'\u2019:]\w+)*", re.UNICODE)

_W = r"\pL\pN\pM_"
_J = r".'\x{2019}:"
LEFT = rf"(?:^|[^{_W}{_J}]|(?:^|[^{_W}])[{_J}])"
RIGHT = rf"(?:$|[^{_W}{_J}]|[{_J}](?:$|[^{_W}]))"
# between two adjacent tokens: anything that does not join them
SEP = rf"(?:[^{_W}]{{2,}}|[^{_W}{_J}])"
TOKEN_BODY = rf"[{_W}]+(?:[{_J}][{_W}]+)*"


# ASCII-only variants: RE2's Unicode classes are several times slower, and most telemetry is ASCII
_WA = "A-Za-z0-9_"
_JA = ".':"
LEFT_A = rf"(?:^|[^{_WA}{_JA}]|(?:^|[^{_WA}])[{_JA}])"
RIGHT_A = rf"(?:$|[^{_WA}{_JA}]|[{_JA}](?:$|[^{_WA}]))"
SEP_A = rf"(?:[^{_WA}]{{2,}}|[^{_WA}{_JA}])"
TOKEN_BODY_A = rf"[{_WA}]+(?:[{_JA}][{_WA}]+)*"


def tokenize(text: str) -> list[str]:
    return [t.lower() for t in _TOKEN.findall(text)]


def re2_escape(text: str) -> str:
    return "".join("\\" + ch if not ch.isalnum() and ch != "_" and ord(ch) < 128 else ch for ch in text)


def token_regex(token: str) -> str:
    """RE2 pattern: `token` occurs as a whole token (the column is lowercased first)."""
    return LEFT + re2_escape(token) + RIGHT


def phrase_regex(tokens: list[str], slop: int = 0, prefix_last: bool = False) -> str:
    """RE2 pattern: the tokens in order, with at most `slop` other tokens between neighbours."""
    gap = SEP if slop <= 0 else rf"{SEP}(?:{TOKEN_BODY}{SEP}){{0,{slop}}}"
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
            parts.append(rf"[{_W}{_J}]*")
        elif ch == "?":
            parts.append(rf"[{_W}{_J}]")
        else:
            parts.append(re2_escape(ch))
        i += 1
    return LEFT + "".join(parts) + RIGHT


def _ascii(pattern: str) -> str:
    return (
        pattern.replace(LEFT, LEFT_A).replace(RIGHT, RIGHT_A).replace(SEP, SEP_A).replace(TOKEN_BODY, TOKEN_BODY_A)
        .replace(rf"[{_W}{_J}]", f"[{_WA}{_JA}]")
    )


def match_sql(x: str, pattern: str, prefilter: str | None = None) -> str:
    """SQL: column `x` (any case) matches the token `pattern` built from LEFT/RIGHT/SEP pieces.

    `prefilter` is a literal every match contains (checked first with a cheap ILIKE)."""
    from ..sqlutil import like_escape, string

    uni = string("(?i)" + pattern)
    asc = string("(?i)" + _ascii(pattern))
    test = f"CASE WHEN strlen({x}) = length({x}) THEN regexp_matches({x}, {asc}) ELSE regexp_matches({x}, {uni}) END"
    if prefilter:
        esc = like_escape(prefilter)
        clause = f" ESCAPE '\\'" if esc != prefilter else ""
        return f"({x} ILIKE {string('%' + esc + '%')}{clause} AND {test})"
    return f"({test})"
