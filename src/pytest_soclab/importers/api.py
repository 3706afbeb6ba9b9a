"""The Python API: `import_files(kind, paths, out_dir, progress=None) -> ImportSummary`.

Inputs are read in sorted order (directories walked, archives opened, members in name order);
every line becomes one document in its data stream's NDJSON file, or one entry in the summary's
malformed list (file, line, reason). A source that holds nothing importable is listed as skipped.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from itertools import chain
from pathlib import Path
from typing import Any

import orjson

from pytest_soclab.errors import SoclabError
from pytest_soclab.importers import cloud, detect, sysmon_linux, windows, winevent, zeek
from pytest_soclab.importers.progress import Progress, ProgressFn
from pytest_soclab.importers.readers import ReadError, Source, lines, sources
from pytest_soclab.importers.streams import StreamWriter
from pytest_soclab.importers.summary import ImportSummary, InputReport, Skipped
from pytest_soclab.importers.zeek_format import TsvLog, normalize_json

KINDS = ("otrf", "windows", "sysmon-linux", "zeek")
_FIXED = {"windows": detect.WINDOWS, "sysmon-linux": detect.SYSMON_LINUX}


def expand(paths: Iterable[Path | str]) -> list[Path]:
    """Files named, directories walked, sorted; a path that does not exist is an error before anything runs."""
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            out.extend(p for p in path.rglob("*") if p.is_file())
        elif path.is_file():
            out.append(path)
        else:
            raise SoclabError(f"{path}: no such file or directory")
    return sorted(set(out), key=lambda p: p.as_posix())


class _Importer:
    def __init__(self, kind: str, writer: StreamWriter, summary: ImportSummary, progress: Progress) -> None:
        self.kind = kind
        self.writer = writer
        self.summary = summary
        self.progress = progress

    def run(self, source: Source) -> None:
        if source.skip_reason:
            self.summary.skipped.append(Skipped(file=source.label, reason=source.skip_reason))
            return
        stream = lines(source)
        report = InputReport(file=source.label, format="")
        try:
            first = next(((n, raw) for n, raw in stream if raw.strip()), None)
            if first is None:
                self.summary.skipped.append(Skipped(file=source.label, reason="empty"))
                return
            fmt, why = self._format(first[1])
            if fmt is None:
                self.summary.skipped.append(Skipped(file=source.label, reason=why))
                return
            report.format = fmt
            self.summary.inputs.append(report)
            self._lines(source, fmt, chain([first], stream), report)
        except ReadError as exc:
            report.malformed += 1
            self.summary.add_malformed(source.label, report.lines + 1, str(exc))
            if report not in self.summary.inputs:
                self.summary.inputs.append(report)

    def _format(self, first: bytes) -> tuple[str | None, str]:
        """The format to read a source as: detected for `otrf`; for the other kinds, what the kind says
        (lines that are not of it are then reported one by one), unless the source is not text at all."""
        fmt, why = detect.detect(first)
        if self.kind == "otrf" or why == detect.BINARY:
            return fmt, why
        if self.kind == "zeek":
            return (detect.ZEEK_JSON if first.lstrip().startswith(b"{") else detect.ZEEK_TSV), why
        return _FIXED[self.kind], why

    def _lines(self, source: Source, fmt: str, stream: Iterator[tuple[int, bytes]], report: InputReport) -> None:
        tsv = TsvLog() if fmt == detect.ZEEK_TSV else None
        default_log = zeek.log_name_from_file(source.name)
        summary = self.summary
        for number, raw in stream:
            report.lines = number
            summary.lines += 1
            self.progress.tick(source.label, summary.lines, summary.events)
            if not raw.strip():
                continue
            try:
                text = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                self._bad(source, number, report, f"not UTF-8 ({exc.reason} at byte {exc.start})")
                continue
            try:
                if tsv is not None:
                    if text.startswith("#"):
                        tsv.header(text)
                        continue
                    log = tsv.path or default_log
                    out = zeek.to_doc(log, tsv.record(text), text)
                    self._emit(out[0], out[1], report)
                elif fmt == detect.CLOUD:
                    self._emit(*cloud.to_doc(_json_object(text), text), report)
                elif fmt == detect.ZEEK_JSON:
                    rec = normalize_json(_json_object(text))
                    log = str(rec.get("_path") or rec.get("@stream") or default_log)
                    out = zeek.to_doc(log, rec, text)
                    self._emit(out[0], out[1], report)
                else:
                    if fmt == detect.SYSMON_LINUX and not text.lstrip().startswith("{"):
                        ev = sysmon_linux.read_xml(text)
                    else:
                        ev = winevent.read(_json_object(text))
                    stream_name, doc, mapped = windows.to_doc(ev, text)
                    if not mapped:
                        key = f"{ev.channel}/{ev.event_id}"
                        summary.unmapped[key] = summary.unmapped.get(key, 0) + 1
                    self._emit(stream_name, doc, report)
            except (ValueError, TypeError, KeyError, AttributeError) as exc:
                self._bad(source, number, report, str(exc) or type(exc).__name__)

    def _emit(self, stream: str, doc: dict[str, Any], report: InputReport) -> None:
        self.writer.write(stream, doc)
        report.events += 1
        self.summary.events += 1

    def _bad(self, source: Source, number: int, report: InputReport, reason: str) -> None:
        report.malformed += 1
        self.summary.add_malformed(source.label, number, reason)


def _json_object(text: str) -> dict[str, Any]:
    try:
        obj = orjson.loads(text)
    except orjson.JSONDecodeError:  # orjson refuses some valid JSON (integers past 64 bits): ask json
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"invalid JSON: {exc.msg} at column {exc.colno}") from None
    if not isinstance(obj, dict):
        raise ValueError(f"a JSON {type(obj).__name__}, not an object")
    return obj


def import_files(
    kind: str, paths: Iterable[Path | str], out_dir: Path | str, progress: ProgressFn | None = None
) -> ImportSummary:
    """Convert recordings to ECS NDJSON, one file per data stream under out_dir."""
    if kind not in KINDS:
        raise SoclabError(f"unknown import kind {kind!r}: expected one of {', '.join(KINDS)}")
    files = expand(paths)
    out = Path(out_dir)
    summary = ImportSummary(kind=kind, out_dir=str(out))
    writer = StreamWriter(out)
    ticker = Progress(progress)
    importer = _Importer(kind, writer, summary, ticker)
    try:
        for path in files:
            for source in sources(path):
                importer.run(source)
    except BaseException:
        writer.abort()
        raise
    written = writer.commit()
    summary.streams = dict(sorted(writer.counts.items()))
    summary.files = {name: str(path) for name, path in written.items()}
    summary.unmapped = dict(sorted(summary.unmapped.items()))
    summary.elapsed_s = round(ticker.elapsed(), 3)
    return summary
