"""Small invented recordings for the importer tests (written for the tests, in the recordings' shapes)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_soclab.importers import ImportSummary, import_files

SYSMON = "Microsoft-Windows-Sysmon/Operational"
HOST = "WKS01.example.test"


def nxlog(channel: str, event_id: int, **data: Any) -> dict[str, Any]:
    """An event in NXLog's flattened form: NXLog's fields and the event data side by side."""
    rec: dict[str, Any] = {
        "SourceName": "Microsoft-Windows-Sysmon" if channel == SYSMON else "Microsoft-Windows-Security-Auditing",
        "Level": "4",
        "Keywords": "0x8020000000000000" if channel == "Security" else "0x8000000000000000",
        "Channel": channel,
        "Hostname": HOST,
        "TimeCreated": "2024-03-01T10:00:00.125Z",
        "@timestamp": "2024-03-01T10:00:00.125Z",
        "EventID": event_id,
        "Message": f"event {event_id}",
        "Task": "1",
    }
    rec.update(data)
    return rec


def jl(records: list[Any]) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def docs(summary: ImportSummary, stream: str) -> list[dict[str, Any]]:
    path = summary.files.get(stream)
    assert path, f"no {stream} written; streams: {sorted(summary.files)}"
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()]


def run(tmp_path: Path, kind: str, name: str, text: str) -> ImportSummary:
    src = write(tmp_path / "in" / name, text)
    return import_files(kind, [src], tmp_path / "out")


def one(tmp_path: Path, kind: str, record: Any, stream: str) -> dict[str, Any]:
    summary = run(tmp_path, kind, "events.json", jl([record]))
    assert summary.malformed == [], summary.malformed
    (doc,) = docs(summary, stream)
    return doc


ZEEK_CONN_TSV = (
    "#separator \\x09\n"
    "#set_separator\t,\n"
    "#empty_field\t(empty)\n"
    "#unset_field\t-\n"
    "#path\tconn\n"
    "#open\t2024-03-01-10-00-00\n"
    "#fields\tts\tuid\tid.orig_h\tid.orig_p\tid.resp_h\tid.resp_p\tproto\tservice\tduration\torig_bytes\tresp_bytes"
    "\tconn_state\tlocal_orig\tlocal_resp\thistory\torig_pkts\tresp_pkts\ttunnel_parents\n"
    "#types\ttime\tstring\taddr\tport\taddr\tport\tenum\tstring\tinterval\tcount\tcount\tstring\tbool\tbool"
    "\tstring\tcount\tcount\tset[string]\n"
    "1709287200.250000\tCabc1\t10.0.0.5\t50000\t10.0.0.9\t445\ttcp\tsmb\t1.5\t100\t200\tSF\tT\tT\tShADadFf\t3\t4\t(empty)\n"
    "1709287201.000000\tCabc2\t10.0.0.5\t50001\t198.51.100.7\t443\ttcp\t-\t-\t-\t-\tS0\tT\tF\tS\t1\t0\tCx1,Cx2\n"
    "#close\t2024-03-01-11-00-00\n"
)
