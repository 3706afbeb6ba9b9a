"""Text packed for the HTML report: gzip, then base64, unpacked in the browser.

pytest-html stores every extra inside one JSON string in an HTML attribute, so markup
is escaped twice there (a quote costs up to ten bytes). Base64 needs no escaping in
JSON or HTML, and gzip shrinks the transcripts' repetitive JSON about tenfold.
The browser unpacks with the standard `DecompressionStream("gzip")`
(see `report/html_client.py`).
"""

from __future__ import annotations

import base64
import gzip

LEVEL = 9  # a report is written once and read many times


def pack_text(text: str) -> str:
    """`text` as base64 of its gzip (mtime 0: the same text always packs the same)."""
    return base64.b64encode(gzip.compress(text.encode("utf-8"), LEVEL, mtime=0)).decode("ascii")


def unpack_text(packed: str) -> str:
    """The inverse of `pack_text` (for tests and tools reading a report)."""
    return gzip.decompress(base64.b64decode(packed)).decode("utf-8")
