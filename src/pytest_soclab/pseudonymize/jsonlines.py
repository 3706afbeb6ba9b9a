"""JSON lines read and written with orjson when it is installed, byte for byte as the json module
would (`json.loads`, `json.dumps(ensure_ascii=False, separators=(",", ":"))`): JSON coding is most
of the cost of pseudonymizing a corpus file, and orjson does it 2-3 times faster.

Where the two differ, the json module decides:
- reading: orjson rejects some of what the json module accepts (NaN, Infinity, 1e400, lone
  surrogates): such lines are read by json, and written by json;
- orjson reads integers past 64 bits as floats, and writes floats in [1e-9, 1e-4) in another
  notation (1e-05 as 0.00001, 1e-07 as 1e-7). Both show in what orjson writes (an exponent, or
  0.0000): such a line is read again by json from its text, transformed again, written by json.
  The check looks at strings too: a false alarm costs time, never a difference.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

try:
    import orjson
except ImportError:  # optional: the json module gives the same bytes, slower
    orjson = None  # type: ignore[assignment]

# A literal first character keeps these scans fast (a pattern like \d{19} costs ~8 us a line).
_EXPONENT = re.compile(rb"e[-+]\d")
_NUMBER_EXPONENT = re.compile(rb"\de[-+]\d")


def loads(line: str) -> tuple[Any, str | None]:
    """The value of one JSON line (json.JSONDecodeError as json.loads raises it), and the line when
    orjson read it (what `dumps` falls back on); None when json did."""
    if orjson is not None:
        try:
            return orjson.loads(line), line
        except orjson.JSONDecodeError:
            pass  # let the json module read it, or say why it cannot
    return json.loads(line), None


def dumps(value: Any, line: str | None, redo: Callable[[Any], Any]) -> bytes:
    """One compact JSON line (no newline), UTF-8. `value` is `redo` applied to what `loads` read
    from `line`: when orjson may have read or would write a number otherwise than json, `line` is
    read again by json and `redo` applied again."""
    if line is not None and orjson is not None:
        try:
            out: bytes = orjson.dumps(value)
        except TypeError:  # something orjson does not write: the json module decides
            out = b"0.0000"
        if b"0.0000" not in out and (_EXPONENT.search(out) is None or _NUMBER_EXPONENT.search(out) is None):
            return out
        value = redo(json.loads(line))
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
