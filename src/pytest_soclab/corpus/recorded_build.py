"""Building a recorded case's documents: import, align clocks, drop `event.original`, fire alerts."""

from __future__ import annotations

import copy
import statistics
import tempfile
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from pytest_soclab.corpus import ids
from pytest_soclab.corpus.alerts import detection_alert
from pytest_soclab.corpus.docs import ALERTS
from pytest_soclab.corpus.recorded import RecordedCase, matches, read_docs
from pytest_soclab.corpus.timeutil import iso_ms
from pytest_soclab.errors import SoclabError
from pytest_soclab.importers import ImportSummary, import_files

Doc = tuple[str, str, dict[str, Any]]
SYSMON = "logs-windows.sysmon_operational-default"
# Windows streams whose @timestamp is NXLog's TimeCreated (Sysmon's is its own UtcTime).
TIME_CREATED_STREAMS = (
    "logs-system.security-default",
    "logs-windows.powershell_operational-default",
    "logs-windows.forwarded-default",
)


def to_epoch_ms(value: Any) -> int | None:
    try:
        return round(datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return None


def clock_offsets(files: dict[str, Path]) -> dict[str, int]:
    """Per host: how far Sysmon's UtcTime runs ahead of TimeCreated (median, whole minutes), in ms."""
    if SYSMON not in files:
        return {}
    diffs: dict[str, list[int]] = {}
    for _stream, _n, doc in read_docs({SYSMON: files[SYSMON]}):
        ts, created = to_epoch_ms(doc.get("@timestamp")), to_epoch_ms(doc.get("event", {}).get("created"))
        host = doc.get("host", {}).get("name")
        if ts is not None and created is not None and host:
            diffs.setdefault(host, []).append(ts - created)
    out = {h: round(statistics.median(d) / 60_000) * 60_000 for h, d in diffs.items()}
    if out:
        # A channel may name a host by its short name (WORKSTATION6 for WORKSTATION6.corp.local); a host
        # without Sysmon (a domain controller) was logged by the same collector: the recording's own
        # offset, the median over its hosts.
        every = round(statistics.median(out.values()) / 60_000) * 60_000
        for h, o in list(out.items()):
            out.setdefault(_short(h), o)
        out[ANY_HOST] = every
    return out


ANY_HOST = "*"


def _short(name: str) -> str:
    return name.split(".", 1)[0].lower()


def _shift(doc: dict[str, Any], offsets: dict[str, int]) -> None:
    name = str(doc.get("host", {}).get("name") or "")
    offset = offsets.get(name, offsets.get(_short(name), offsets.get(ANY_HOST)))
    ts = to_epoch_ms(doc.get("@timestamp"))
    if offset and ts is not None:
        doc["@timestamp"] = iso_ms(ts + offset)


def recorded_docs(
    case: RecordedCase,
    corpus_dir: Path,
    *,
    work_dir: Path | None = None,
    progress: Callable[[str], None] | None = None,
    summary_out: list[ImportSummary] | None = None,
) -> Iterator[Doc]:
    """The case's documents as (data stream, id, doc), then the alerts its rules fire."""
    rec = case.recording
    with tempfile.TemporaryDirectory(prefix=f"soclab-{case.id}-", dir=work_dir) as tmp:
        summary = import_files(rec.importer, case.paths(corpus_dir), Path(tmp), progress=progress)
        if summary_out is not None:
            summary_out.append(summary)
        files = {s: Path(p) for s, p in summary.files.items()}
        if not files:
            raise SoclabError(f"case {case.id}: the recording imported no documents")
        offsets = clock_offsets(files) if rec.align_clocks else {}
        # Per alert rule: the earliest matching event (ts, stream, doc, id).
        fired: dict[int, tuple[int, str, dict[str, Any], str]] = {}
        for stream, n, doc in read_docs(files):
            if not rec.keep_original:
                doc.get("event", {}).pop("original", None)
            if offsets and stream in TIME_CREATED_STREAMS:
                _shift(doc, offsets)
            doc_id = ids.doc_id_from(case.id, stream, n)
            for i, alert in enumerate(case.alerts):
                if alert.stream == stream and matches(doc, alert.match):
                    ts = to_epoch_ms(doc.get("@timestamp")) or 0
                    if i not in fired or ts < fired[i][0]:
                        fired[i] = (ts, stream, copy.deepcopy(doc), doc_id)
            yield stream, doc_id, doc
    missing = [a.rule for i, a in enumerate(case.alerts) if i not in fired]
    if missing:
        raise SoclabError(f"case {case.id}: alert rule(s) {missing} match no recorded event")
    for i in sorted(fired):
        ts, stream, doc, doc_id = fired[i]
        _, alert = detection_alert(case.id, case.alerts[i], (ts, stream, doc), doc_id)
        yield ALERTS, ids.doc_id_from(case.id, "alert", i), alert
