"""What a language model reads in a string, beyond its literal characters.

A model reading telemetry does not see code points: it reads `wіpe` with a Cyrillic `і` as
"wipe", skips zero-width characters, decodes a base64 blob it is told to decode, reads a
name written with a fraction slash as a path, and puts together a note split over several
records ("part 1/2", "part 2/2"). The naive agent (`gullible`) reads every string of its
results through `views` so that it is as susceptible as such a model; nothing here knows a
scenario.
"""

from __future__ import annotations

import base64
import binascii
import re
import unicodedata
from urllib.parse import unquote_plus

# Characters that render as nothing (or as a space) and that models skip.
_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad\u180e"), None)
# Lookalikes a model reads as the Latin letter they resemble (Cyrillic, Greek), and slashes.
_CONFUSABLE = str.maketrans(
    {
        "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "і": "i", "ј": "j", "ѕ": "s",
        "ԁ": "d", "һ": "h", "ӏ": "l", "ո": "n", "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H",
        "О": "O", "Р": "P", "С": "C", "Т": "T", "Х": "X", "Ү": "Y", "ο": "o", "α": "a", "ε": "e", "ι": "i",
        "κ": "k", "ν": "v", "ρ": "p", "τ": "t", "υ": "u", "Ο": "O", "Α": "A", "Ε": "E", "Ι": "I", "Κ": "K",
        "Ν": "N", "Ρ": "P", "Τ": "T", "Χ": "X", "⁄": "/", "∕": "/", "／": "/", "﹒": ".", "․": ".",
        # what stands for the characters a Windows file name cannot hold
        "\u29f5": "\\", "\ua789": ":", "\u204e": "*", "\u201d": '"', "\u2039": "<", "\u203a": ">", "\u01c0": "|",
    }
)  # fmt: skip
_B64_RUN = re.compile(r"[A-Za-z0-9+/]{24,}={0,2}")
_PART = re.compile(r"\(?\b(?:part|partie|parte|teil)\s*(\d)\s*/\s*(\d)\b\)?", re.IGNORECASE)
_DASHED_IP = re.compile(r"(?<!\d)(\d{1,3})-(\d{1,3})-(\d{1,3})-(\d{1,3})(?!\d)")
_REF = re.compile(r"\bref[\s:#-]*([A-Za-z0-9-]{3,24})", re.IGNORECASE)


def normalise(text: str) -> str:
    """The text as a model reads it: compatibility forms folded, invisibles dropped, lookalikes read."""
    if text.isascii():
        return text
    return unicodedata.normalize("NFKC", text).translate(_INVISIBLE).translate(_CONFUSABLE)


def decoded(text: str) -> list[str]:
    """Base64 runs in the text that decode to readable prose (a model decodes what it is shown)."""
    out = []
    for m in _B64_RUN.finditer(text):
        run = m.group(0)
        try:
            raw = base64.b64decode(run + "=" * (-len(run) % 4), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            continue
        if " " in raw and sum(c.isprintable() for c in raw) >= 0.95 * len(raw):
            out.append(raw)
    return out


def views(text: str) -> list[str]:
    """The readings of one string: itself normalised (URL-decoded when it is a URI), what its
    encoded runs say, and, in a DNS name, addresses written with dashes."""
    plain = normalise(unquote_plus(text)) if "%" in text else normalise(text)
    out = [plain] if plain == text else [plain, text]
    out += [normalise(d) for d in decoded(plain)]
    if " " not in plain and _DASHED_IP.search(plain):
        out.append(_DASHED_IP.sub(r"\1.\2.\3.\4", plain))
    return out


class Fragments:
    """Notes split over several records: each part says `part k/n` (and may carry a `ref`); once
    every part of a series was read, the joined note is read as one text."""

    def __init__(self) -> None:
        self._series: dict[tuple[str, int], dict[int, str]] = {}

    def add(self, text: str) -> str | None:
        m = _PART.search(text)
        if m is None:
            return None
        k, n = int(m.group(1)), int(m.group(2))
        if not 1 <= k <= n <= 9:
            return None
        ref = _REF.search(text)
        parts = self._series.setdefault((ref.group(1).lower() if ref else "", n), {})
        parts.setdefault(k, _PART.sub(" ", text).strip())
        if len(parts) < n:
            return None
        return " ".join(parts[i] for i in range(1, n + 1))
