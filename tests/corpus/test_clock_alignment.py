"""align_clocks: the TimeCreated channels are shifted by the host's Sysmon offset; a host without Sysmon
(a domain controller) or named by its short name takes the recording's own offset."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_soclab.corpus.recorded_build import ANY_HOST, SYSMON, _shift, clock_offsets

HOUR = 3_600_000


def _sysmon(tmp_path: Path, rows: list[tuple[str, str, str]]) -> dict[str, Path]:
    path = tmp_path / "sysmon.ndjson"
    path.write_text("".join(json.dumps({"@timestamp": ts, "event": {"created": created}, "host": {"name": host}}) + "\n"
                            for host, ts, created in rows))
    return {SYSMON: path}


def test_offsets_per_host_then_short_names_then_the_recording(tmp_path: Path) -> None:
    files = _sysmon(tmp_path, [
        ("WS5.corp.local", "2020-08-06T15:00:00.100Z", "2020-08-06T11:00:00.000Z"),
        ("WS5.corp.local", "2020-08-06T15:01:00.900Z", "2020-08-06T11:01:01.000Z"),
        ("WS6.corp.local", "2020-08-06T15:00:00.000Z", "2020-08-06T11:00:00.000Z"),
    ])
    offsets = clock_offsets(files)
    assert offsets["WS5.corp.local"] == offsets["ws5"] == offsets[ANY_HOST] == 4 * HOUR

    def shifted(host: str) -> str:
        doc = {"@timestamp": "2020-08-06T11:00:00.000Z", "host": {"name": host}}
        _shift(doc, offsets)
        return doc["@timestamp"]

    assert shifted("WS5.corp.local") == shifted("WS6") == shifted("DC01.corp.local") == "2020-08-06T15:00:00.000Z"


def test_no_sysmon_no_offset(tmp_path: Path) -> None:
    assert clock_offsets({}) == {}
