"""Output data streams, named as Elastic's integrations name them, and the NDJSON writer.

Documents are written with sorted keys and one compact line each, so the same input gives
byte-identical files. Each file is written beside its final name and moved into place when the
import finishes, so an interrupted import leaves no half-written stream behind.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO, Any

import orjson

SYSMON = "logs-windows.sysmon_operational-default"
SECURITY = "logs-system.security-default"
POWERSHELL = "logs-windows.powershell_operational-default"
FORWARDED = "logs-windows.forwarded-default"
SYSMON_LINUX = "logs-sysmon_linux.log-default"

# stream -> (event.module, event.dataset)
DATASETS: dict[str, tuple[str, str]] = {
    SYSMON: ("windows", "windows.sysmon_operational"),
    SECURITY: ("system", "system.security"),
    POWERSHELL: ("windows", "windows.powershell_operational"),
    FORWARDED: ("windows", "windows.forwarded"),
    SYSMON_LINUX: ("sysmon_linux", "sysmon_linux.log"),
}


def zeek_stream(dataset: str) -> str:
    return f"logs-zeek.{dataset}-default"


def data_stream(dataset: str) -> dict[str, str]:
    return {"dataset": dataset, "namespace": "default", "type": "logs"}


def dumps(doc: dict[str, Any]) -> bytes:
    try:
        return orjson.dumps(doc, option=orjson.OPT_SORT_KEYS)
    except (TypeError, orjson.JSONEncodeError):  # integers past 64 bits: the json module writes them
        return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


class StreamWriter:
    """One NDJSON file per data stream under out_dir, `<stream>.ndjson`."""

    def __init__(self, out_dir: Path) -> None:
        self.out_dir = out_dir
        self.counts: dict[str, int] = {}
        self._files: dict[str, IO[bytes]] = {}

    def path(self, stream: str) -> Path:
        return self.out_dir / f"{stream}.ndjson"

    def write(self, stream: str, doc: dict[str, Any]) -> None:
        fh = self._files.get(stream)
        if fh is None:
            self.out_dir.mkdir(parents=True, exist_ok=True)
            fh = self._files[stream] = open(self.path(stream).with_suffix(".ndjson.part"), "wb")  # noqa: SIM115
            self.counts[stream] = 0
        fh.write(dumps(doc))
        fh.write(b"\n")
        self.counts[stream] += 1

    def commit(self) -> dict[str, Path]:
        """Close every file and move it into place; returns stream -> path."""
        out: dict[str, Path] = {}
        for stream, fh in sorted(self._files.items()):
            fh.close()
            final = self.path(stream)
            os.replace(final.with_suffix(".ndjson.part"), final)
            out[stream] = final
        self._files.clear()
        return out

    def abort(self) -> None:
        for stream, fh in self._files.items():
            fh.close()
            self.path(stream).with_suffix(".ndjson.part").unlink(missing_ok=True)
        self._files.clear()
