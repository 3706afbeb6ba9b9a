"""What a text source holds, told from its first non-blank line (for `otrf` and `zeek` imports)."""

from __future__ import annotations

import json
from typing import Any

from pytest_soclab.importers import cloud, sysmon_linux

WINDOWS = "windows"
SYSMON_LINUX = "sysmon-linux"
ZEEK_TSV = "zeek-tsv"
ZEEK_JSON = "zeek-json"
CLOUD = "sentinel-cloud"
BINARY = "binary data (not text lines)"
NOT_UTF8 = "not UTF-8 text"


def is_windows_record(obj: dict[str, Any]) -> bool:
    return (
        isinstance(obj.get("winlog"), dict)
        or ("Channel" in obj and "EventID" in obj)
        or ("log_name" in obj and "event_id" in obj)
        or ("Computer" in obj and "EventID" in obj and "TimeGenerated" in obj)  # Microsoft Sentinel's tables
    )


def is_zeek_record(obj: dict[str, Any]) -> bool:
    return "ts" in obj and ("uid" in obj or "_path" in obj or "@stream" in obj or "id.orig_h" in obj)


def detect(first: bytes) -> tuple[str | None, str]:
    """(format, why) from the first non-blank line; format None means "not something this imports"."""
    if b"\x00" in first:
        return None, BINARY
    try:
        line = first.decode("utf-8-sig").strip()
    except UnicodeDecodeError:
        return None, NOT_UTF8
    if line.startswith("#separator") or line.startswith("#fields"):
        return ZEEK_TSV, "Zeek TSV header"
    if sysmon_linux.looks_like(line):
        return SYSMON_LINUX, "Sysmon for Linux XML"
    if line.startswith("{"):
        try:
            obj = json.loads(line)
        except ValueError:
            return None, "first line is not valid JSON"
        if isinstance(obj, dict):
            if is_windows_record(obj):
                channel = str(obj.get("Channel") or obj.get("log_name") or (obj.get("winlog") or {}).get("channel"))
                return (SYSMON_LINUX if channel.startswith("Linux-Sysmon") else WINDOWS), "Windows event JSON"
            if is_zeek_record(obj):
                return ZEEK_JSON, "Zeek JSON"
            if cloud.table_of(obj) is not None:
                return CLOUD, "Microsoft Sentinel cloud table"
            keys = ", ".join(sorted(obj)[:6])
            return None, f"JSON records of an unknown kind (keys: {keys}, ...)"
    return None, "not a format this importer reads (Windows event JSON, Sysmon for Linux, Zeek)"
