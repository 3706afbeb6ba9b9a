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
