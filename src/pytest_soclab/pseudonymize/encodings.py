"""Encoded forms in which an entity hides from a token scan: percent-encoding, base64 text, and the
letters a backslash escape glues to a name.

- `http%3A%2F%2F198.51.100.177%2F`: the address sits after `%2F`, inside a word. A segment with
  percent escapes is decoded, pseudonymized, and encoded again with the same characters escaped.
- `powershell -enc SQBFAFgA...`: base64 whose decoded bytes are text (UTF-16LE as PowerShell writes
  it, or UTF-8) is decoded, pseudonymized and re-encoded in the same form; binary base64 (hashes,
  keys, compressed blobs) is left as it is.
- `\\t\\tjsmith`, `\\u0022jsmith`: a JSON or C escape before a name (event.original holds raw JSON):
  text.py reads the word after the escape's letters.
"""

from __future__ import annotations

import base64
import binascii
import re
import string
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass

_B64 = re.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/]{20,}={0,2}(?![A-Za-z0-9+/=_-])")
_PCT_CHAR = r"(?:%[0-9A-Fa-f]{2}|[A-Za-z0-9._~!$'()*+,;:@/\\-])"
_PCT = re.compile(rf"{_PCT_CHAR}*%[0-9A-Fa-f]{{2}}{_PCT_CHAR}*")
_PCT_ESC = re.compile(r"%([0-9A-Fa-f]{2})")
_ESCAPE = re.compile(r"(?:u[0-9A-Fa-f]{4}|x[0-9A-Fa-f]{2}|[nrtbfv0])")
_PRINTABLE = frozenset(string.printable)
MAYBE_ENCODED = re.compile(r"%[0-9A-Fa-f]{2}|[A-Za-z0-9+/]{20}")


@dataclass(frozen=True)
class Decoded:
    start: int
    end: int
    text: str
    form: str  # "pct", "b64-utf16", "b64-utf8"


def _text_of(raw: bytes) -> tuple[str, str] | None:
    """(text, form) when the bytes are text; None when they are binary."""
    if len(raw) >= 8 and len(raw) % 2 == 0 and raw[1::2].count(0) >= 0.9 * (len(raw) // 2):
        try:
            t = raw.decode("utf-16-le")
        except UnicodeDecodeError:
            return None
        return (t, "b64-utf16") if _looks_like_text(t) else None
    try:
        t = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return (t, "b64-utf8") if _looks_like_text(t) else None


def _looks_like_text(t: str) -> bool:
    if not t or any(c not in _PRINTABLE for c in t):
        return False
    # Words and separators, as commands and messages have; random printable bytes rarely do.
    return sum(c.isalnum() or c == " " for c in t) >= 0.7 * len(t) and bool(re.search(r"[ ./\\:=;-]", t))


def decoded_segments(s: str) -> list[Decoded]:
    """The base64-text and percent-encoded segments of `s`, in order, not overlapping."""
    out: list[Decoded] = []
    if "%" in s:
        for m in _PCT.finditer(s):
            dec = urllib.parse.unquote(m.group(0), errors="strict") if _valid_pct(m.group(0)) else None
            if dec is not None and dec != m.group(0):
                out.append(Decoded(m.start(), m.end(), dec, "pct"))
    for m in _B64.finditer(s):
        tok = m.group(0)
        if len(tok) % 4 or any(d.start < m.end() and m.start() < d.end for d in out):
            continue
        try:
            raw = base64.b64decode(tok, validate=True)
        except (binascii.Error, ValueError):
            continue
        got = _text_of(raw)
        if got is not None:
            out.append(Decoded(m.start(), m.end(), got[0], got[1]))
    return sorted(out, key=lambda d: d.start)


def _valid_pct(seg: str) -> bool:
    try:
        urllib.parse.unquote(seg, errors="strict")
    except UnicodeDecodeError:
        return False
    return True


def encode(original: str, new_text: str, form: str) -> str:
    """`new_text` in the form of `original` (the segment it was decoded from)."""
    if form == "b64-utf16":
        return base64.b64encode(new_text.encode("utf-16-le")).decode("ascii")
    if form == "b64-utf8":
        return base64.b64encode(new_text.encode("utf-8")).decode("ascii")
    escaped = {chr(int(h, 16)) for h in _PCT_ESC.findall(original)}
    safe = "".join(c for c in string.punctuation if c not in escaped and c != "%")
    out = urllib.parse.quote(new_text, safe=safe)
    if re.search(r"%[0-9a-f][a-f]|%[a-f][0-9a-f]", original):
        out = _PCT_ESC.sub(lambda m: "%" + m.group(1).lower(), out)
    return out


def transform_encoded(s: str, plain: Callable[[str], str], text: Callable[[str], str]) -> str:
    """`s` with its encoded segments decoded, transformed by `text`, and encoded again; the rest by
    `plain`."""
    segs = decoded_segments(s)
    if not segs:
        return plain(s)
    out: list[str] = []
    pos = 0
    for d in segs:
        out.append(plain(s[pos: d.start]) if d.start > pos else "")
        original = s[d.start: d.end]
        new = text(d.text)
        out.append(original if new == d.text else encode(original, new, d.form))
        pos = d.end
    out.append(plain(s[pos:]) if pos < len(s) else "")
    return "".join(out)
