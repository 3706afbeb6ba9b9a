"""Inputs as text sources: plain files, `.gz`, `.zip` and `.tar.gz` (nested archives too), read line by line.

A source is one file of text (a plain file, or an archive member) with a label naming where it
came from (`dir/x.zip::member.json`). Archive members come in name order, so the output does not
depend on how an archive was packed. A read that fails midway (a truncated gzip stream, a bad zip
member) raises ReadError after the lines read so far: the caller keeps those and reports the rest.
"""

from __future__ import annotations

import gzip
import io
import tarfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

Opener = Callable[[], IO[bytes]]

_ARCHIVE_ERRORS = (EOFError, OSError, zlib.error, zipfile.BadZipFile, tarfile.TarError)


class ReadError(Exception):
    """Reading a source failed after some lines; the message says why."""


@dataclass(frozen=True)
class Source:
    label: str  # where it came from, for reports
    name: str  # the file name of the member itself (no directories), for telling e.g. a Zeek log's name
    open: Opener
    skip_reason: str | None = None  # set for members that are not data (macOS resource forks)


def _kind(name: str) -> str:
    low = name.lower()
    if low.endswith((".tar.gz", ".tgz")):
        return "tgz"
    if low.endswith(".tar"):
        return "tar"
    if low.endswith(".zip"):
        return "zip"
    if low.endswith(".gz"):
        return "gz"
    return "plain"


def _resource_fork(member: str) -> bool:
    parts = member.split("/")
    return "__MACOSX" in parts or parts[-1].startswith("._")


def sources(path: Path) -> Iterator[Source]:
    """Every text source in a path (recursing into archives)."""
    yield from _expand(str(path), path.name, lambda: path.open("rb"))


def _expand(label: str, name: str, opener: Opener) -> Iterator[Source]:
    kind = _kind(name)
    if kind == "plain":
        yield Source(label, name, opener)
    elif kind == "gz":
        inner = name[:-3]

        def open_gz() -> IO[bytes]:
            return gzip.GzipFile(fileobj=opener(), mode="rb")  # type: ignore[return-value]

        yield from _expand(f"{label}::{inner}" if _kind(inner) == "plain" else label, inner, open_gz)
    elif kind == "zip":
        yield from _zip_members(label, opener)
    else:
        yield from _tar_members(label, opener, "r:gz" if kind == "tgz" else "r:")


def _seekable(opener: Opener) -> IO[bytes]:
    fh = opener()
    if fh.seekable():
        return fh
    with fh:  # a member of an archive inside an archive: small enough to hold in memory
        return io.BytesIO(fh.read())


def _zip_members(label: str, opener: Opener) -> Iterator[Source]:
    try:
        zf = zipfile.ZipFile(_seekable(opener))
    except _ARCHIVE_ERRORS as exc:
        yield Source(label, label, opener, skip_reason=f"not a readable zip archive: {exc}")
        return
    for info in sorted(zf.infolist(), key=lambda i: i.filename):
        if info.is_dir():
            continue
        member = info.filename
        mlabel = f"{label}::{member}"
        base = member.rsplit("/", 1)[-1]
        if _resource_fork(member):
            yield Source(mlabel, base, opener, skip_reason="macOS resource fork, not data")
            continue
        yield from _expand(mlabel, base, lambda info=info: zf.open(info))  # type: ignore[misc]


def _tar_members(label: str, opener: Opener, mode: str) -> Iterator[Source]:
    try:
        tf = tarfile.open(fileobj=_seekable(opener), mode=mode)  # type: ignore[call-overload]
    except _ARCHIVE_ERRORS as exc:
        yield Source(label, label, opener, skip_reason=f"not a readable tar archive: {exc}")
        return
    members: list[tarfile.TarInfo] = []
    error: str | None = None
    try:
        for info in tf:  # iterating, not getmembers(): a truncated archive still yields what is whole
            if info.isfile():
                members.append(info)
    except _ARCHIVE_ERRORS as exc:
        error = f"archive ends early: {exc}"
    for info in sorted(members, key=lambda i: i.name):
        base = info.name.rsplit("/", 1)[-1]
        mlabel = f"{label}::{info.name}"
        if _resource_fork(info.name):
            yield Source(mlabel, base, opener, skip_reason="macOS resource fork, not data")
            continue

        def open_member(info: tarfile.TarInfo = info) -> IO[bytes]:
            fh = tf.extractfile(info)
            assert fh is not None  # regular files always have content
            return fh

        yield from _expand(mlabel, base, open_member)
    if error and not members:
        yield Source(label, label, opener, skip_reason=error)


def lines(source: Source) -> Iterator[tuple[int, bytes]]:
    """(line number, line without its end) for each line; ReadError if the source breaks off."""
    number = 0
    try:
        with source.open() as fh:
            for number, raw in enumerate(fh, 1):  # noqa: B007 - the number is needed after the loop
                yield number, raw.rstrip(b"\r\n")
    except _ARCHIVE_ERRORS as exc:
        raise ReadError(f"input ends early after line {number}: {exc}") from None
