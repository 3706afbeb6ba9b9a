"""Documents to columns through extractors compiled per document shape.

The documents of one index come in a few shapes (the same keys in the same nested objects:
a process start, a process start with tags...). For each shape seen, a function is generated
that reads every leaf of a document of that shape in one expression and returns them as a
row tuple laid out in the index's column order (None where the shape lacks a column). It
checks the shape on the way: each object's size is compared and each of its keys is read, so
a document with a missing, extra or renamed key, or a scalar where an object was, fails it
(KeyError, TypeError) and tries the next shape. One tuple per document, transposed once, is
far cheaper than pyarrow inferring the nested type of every document.

Leaves are values that are not objects: scalars, lists (of scalars or of objects) and None.
Their types are not checked here: the caller converts each column with a type pyarrow
enforces, or infers it.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import zip_longest
from typing import Any

MAX_SHAPES = 256


class Unsupported(Exception):
    """A document this path does not handle (the caller takes another path)."""


Extractor = Callable[[dict[str, Any]], tuple[Any, ...]]


class ShapeExtractor:
    """Per index: the columns seen so far (in order of first appearance) and one compiled
    extractor per document shape, looked up by the document's number of top-level keys."""

    def __init__(self, opaque: frozenset[str] = frozenset()):
        self.opaque = opaque
        self.columns: dict[str, int] = {}
        self.samples: list[Any] = []  # a value seen in each column (its Python type guides conversion)
        self._by_size: dict[int, list[Extractor]] = {}
        self.shapes = 0

    def rows(self, docs: list[Any]) -> list[tuple[Any, ...]]:
        """One row tuple per document, each as wide as the columns were when its shape was compiled."""
        out: list[tuple[Any, ...]] = []
        append = out.append
        by_size = self._by_size
        for doc in docs:
            try:
                cands = by_size.get(len(doc))
            except TypeError:
                raise Unsupported from None
            if cands is not None:
                for n, extract in enumerate(cands):
                    try:
                        append(extract(doc))
                    except (KeyError, TypeError):
                        continue
                    if n:  # keep the shape seen last in front
                        cands.insert(0, cands.pop(n))
                    break
                else:
                    append(self._learn(doc)(doc))
            else:
                append(self._learn(doc)(doc))
        return out

    def columns_of(self, rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        """The rows transposed: one tuple of values per column (None where a row is short)."""
        cols = list(zip_longest(*rows))
        width = len(self.columns)
        if len(cols) < width:  # columns no row of this chunk reached
            cols.extend([(None,) * len(rows)] * (width - len(cols)))
        return cols

    def _learn(self, doc: Any) -> Extractor:
        if type(doc) is not dict:
            raise Unsupported
        if self.shapes >= MAX_SHAPES:
            raise Unsupported
        extract = self._compile(doc)
        self._by_size.setdefault(len(doc), []).insert(0, extract)
        self.shapes += 1
        return extract

    def _compile(self, doc: dict[str, Any]) -> Extractor:
        lines: list[str] = []
        sizes: list[tuple[str, int]] = [("d", len(doc))]
        leaves: dict[int, str] = {}
        count = 0

        def walk(obj: dict[str, Any], var: str, prefix: str) -> None:
            nonlocal count
            for key, value in obj.items():
                if type(key) is not str:
                    raise Unsupported
                path = f"{prefix}{key}"
                if path in self.opaque:
                    raise Unsupported  # kept as JSON: the document path does that
                access = f"{var}[{key!r}]"
                if type(value) is dict:
                    count += 1
                    sub = f"o{count}"
                    lines.append(f"    {sub} = {access}")
                    sizes.append((sub, len(value)))
                    walk(value, sub, path + ".")
                    continue
                col = self.columns.get(path)
                if col is None:
                    col = self.columns[path] = len(self.columns)
                    self.samples.append(None)
                if col in leaves:
                    raise Unsupported  # one path reached twice ("a.b" and a: {b}): the document path merges them
                if value is not None and self.samples[col] is None:
                    self.samples[col] = value
                leaves[col] = access

        walk(doc, "d", "")
        width = max(leaves) + 1 if leaves else 0
        cond = " or ".join(f"len({var}) != {size}" for var, size in sizes)
        body = ", ".join(leaves.get(i, "None") for i in range(width))
        src = (
            "def extract(d):\n"
            + "".join(line + "\n" for line in lines)
            + f"    if {cond}:\n        raise KeyError\n"
            + f"    return ({body}{',' if width else ''})\n"
        )
        namespace: dict[str, Any] = {}
        exec(compile(src, "<store shape>", "exec"), namespace)  # noqa: S102 - keys enter only as repr() literals
        return namespace["extract"]  # type: ignore[no-any-return]
