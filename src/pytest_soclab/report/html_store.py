"""The HTML report's text store: every long value of every item, once, packed in one piece.

Items refer to a text by its digest (`report/html_item.py`). Each item's texts travel
from its worker on the test report, packed; the controller merges them and writes the
store into the page once, ordered so that the copies of one result (baseline and
protected, repeats) sit side by side, where gzip's window finds their likeness.
"""

from __future__ import annotations

import json

from pytest_soclab.report.packed import pack_text, unpack_text

STORE_ID = "soclab-texts"


def pack_texts(texts: dict[str, list[str]]) -> str:
    """An item's texts ({digest: [sort key, text]}) for the trip to the controller."""
    return pack_text(json.dumps(texts, ensure_ascii=False))


def merge_texts(store: dict[str, list[str]], packed: str) -> None:
    """Add an item's packed texts to the store (a digest already there is the same text)."""
    for ref, entry in json.loads(unpack_text(packed)).items():
        store.setdefault(ref, entry)


def store_html(store: dict[str, list[str]]) -> str:
    """The store as one hidden element of the page: {digest: text}, packed, in sort-key order."""
    ordered = {ref: text for ref, (_key, text) in sorted(store.items(), key=lambda kv: kv[1][0])}
    return f'<div id="{STORE_ID}" hidden data-gz="{pack_text(json.dumps(ordered, ensure_ascii=False))}"></div>'
