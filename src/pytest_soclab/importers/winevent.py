"""Windows event records in the forms recordings come in, read into one shape (WinEvent).

- NXLog, flattened (the OTRF recordings): `Channel`, `EventID`, `Hostname`, `@timestamp`, `Message`,
  NXLog's own fields (`SourceName`, `RecordNumber`, `EventTime`, ...) and the event data, all at top level.
- Winlogbeat 7+ / Elastic Agent: `winlog.{channel, event_id, computer_name, event_data, ...}`, `message`.
- Winlogbeat 6: `log_name`, `event_id`, `computer_name`, `event_data`, `record_number`, `source_name`.
- Microsoft Sentinel's tables (SecurityEvent, Event): `Computer`, `EventID`, `TimeGenerated`, `Channel`
  (SecurityEvent) or `EventLog` (Event), the event data at top level beside the table's own columns.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pytest_soclab.importers.ecs import integer

# NXLog's own fields in its flattened form: everything else at top level is event data.
NXLOG_FIELDS = frozenset({
    "@timestamp", "@version", "AccountName", "AccountType", "ActivityID", "Category", "Channel", "Domain",
    "EventID", "EventReceivedTime", "EventTime", "EventTypeOrignal", "ExecutionProcessID", "Hostname",
    "Keywords", "Level", "Message", "Opcode", "OpcodeValue", "ProviderGuid", "RecordNumber", "RelatedActivityID",
    "Severity", "SeverityValue", "SourceModuleName", "SourceModuleType", "SourceName", "Task", "ThreadID",
    "TimeCreated", "UserID", "Version", "host", "port", "tags", "ERROR_EVT_UNRESOLVED",
})  # fmt: skip
# NXLog's EventType (its severity) when it is NXLog's; Sysmon also has an EventType event data field.
# Sentinel's own columns (SecurityEvent / Event tables): everything else at top level is event data.
SENTINEL_FIELDS = frozenset({
    "TenantId", "SourceSystem", "TimeGenerated", "Computer", "MG", "ManagementGroupName", "Type", "_ResourceId",
    "Channel", "EventLog", "EventID", "Level", "Activity", "SourceComputerId", "EventOriginId", "TimeCollected",
    "InstanceId", "Task", "EventSourceName", "Source", "EventLevel", "EventLevelName", "RenderedDescription",
    "EventCategory", "HostCustomEntity", "AccountCustomEntity", "timestamp", "EventData_string", "ParameterXml",
    "UserName", "Account", "AccountType",
})  # fmt: skip
NXLOG_EVENT_TYPES = frozenset({"AUDIT_SUCCESS", "AUDIT_FAILURE", "INFO", "WARNING", "ERROR", "CRITICAL", "VERBOSE"})

LEVELS = {"0": "information", "1": "critical", "2": "error", "3": "warning", "4": "information", "5": "verbose"}
_AUDIT_SUCCESS = 0x0020000000000000
_AUDIT_FAILURE = 0x0010000000000000
_CLASSIC = 0x0080000000000000


class NotWindows(ValueError):
    """The record is JSON but not a Windows event in any form this reader knows."""


@dataclass
class WinEvent:
    channel: str
    event_id: int
    computer: str | None
    event_data: dict[str, Any]
    time_created: Any = None
    timestamp: Any = None
    record_id: Any = None
    provider: str | None = None
    provider_guid: str | None = None
    message: str | None = None
    level: str | None = None
    keywords: list[str] = field(default_factory=list)
    task: Any = None
    opcode: Any = None
    version: Any = None
    pid: int | None = None
    thread_id: int | None = None
    user: dict[str, Any] = field(default_factory=dict)  # winlog.user: identifier, name, domain, type
    extra: dict[str, Any] = field(default_factory=dict)  # other winlog.* keys of the Winlogbeat form


def keyword_names(value: Any) -> list[str]:
    """Keywords as Winlogbeat names them, from NXLog's hex or signed-int bit mask or an existing list."""
    if isinstance(value, list):
        return [str(v) for v in value]
    mask = integer(value)
    if mask is None:
        return [value] if isinstance(value, str) and value else []
    mask &= 0xFFFFFFFFFFFFFFFF  # NXLog writes the mask as a signed 64-bit int in older recordings
    names = []
    if mask & _AUDIT_FAILURE:
        names.append("Audit Failure")
    if mask & _AUDIT_SUCCESS:
        names.append("Audit Success")
    if mask & _CLASSIC:
        names.append("Classic")
    return names


def _level(value: Any) -> str | None:
    if value is None or value == "":
        return None
    text = str(value)
    return LEVELS.get(text, text.lower())


def _event_id(value: Any) -> int:
    n = integer(value)
    if n is None or n < 0:
        raise NotWindows(f"event id {value!r} is not a number")
    return n


def read(obj: dict[str, Any]) -> WinEvent:
    if isinstance(obj.get("winlog"), dict):
        return _from_winlogbeat(obj)
    if "log_name" in obj and "event_id" in obj:
        return _from_winlogbeat6(obj)
    if "Computer" in obj and "EventID" in obj and "TimeGenerated" in obj:
        return _from_sentinel(obj)
    if "Channel" in obj and "EventID" in obj:
        return _from_nxlog(obj)
    raise NotWindows("not a Windows event (no Channel/EventID, winlog.* or log_name/event_id)")


def _from_nxlog(obj: dict[str, Any]) -> WinEvent:
    nxlog_event_type = "EventTypeOrignal" not in obj and obj.get("EventType") in NXLOG_EVENT_TYPES
    data = {
        k: v for k, v in obj.items() if k not in NXLOG_FIELDS and not (k == "EventType" and nxlog_event_type)
    }
    user: dict[str, Any] = {}
    for src, dst in (("UserID", "identifier"), ("AccountName", "name"), ("Domain", "domain"), ("AccountType", "type")):
        if obj.get(src) not in (None, ""):
            user[dst] = obj[src]
    return WinEvent(
        channel=str(obj["Channel"]),
        event_id=_event_id(obj["EventID"]),
        computer=obj.get("Hostname"),
        event_data=data,
        time_created=obj.get("TimeCreated") or obj.get("EventTime"),
        timestamp=obj.get("@timestamp"),
        record_id=obj.get("RecordNumber"),
        provider=obj.get("SourceName"),
        provider_guid=obj.get("ProviderGuid"),
        message=obj.get("Message"),
        level=_level(obj.get("Level") if "Level" in obj else obj.get("Severity")),
        keywords=keyword_names(obj.get("Keywords")),
        task=obj.get("Task") if "Category" not in obj else obj.get("Category"),
        opcode=obj.get("Opcode"),
        version=obj.get("Version"),
        pid=integer(obj.get("ExecutionProcessID")),
        thread_id=integer(obj.get("ThreadID")),
        user=user,
    )


def _from_sentinel(obj: dict[str, Any]) -> WinEvent:
    # SecurityEvent rows name their channel; Event rows their log; the rows of neither (a few
    # Windows Filtering Platform events in the recordings) are Security's.
    channel = obj.get("Channel") or obj.get("EventLog") or "Security"
    data = {k: v for k, v in obj.items() if k not in SENTINEL_FIELDS and v not in (None, "")}
    for suffix in ("_string", "_dynamic"):  # Sentinel's typed copies of a column: ProcessId_dynamic
        for k in [k for k in data if k.endswith(suffix) and k != "EventData_dynamic"]:
            data.setdefault(k.removesuffix(suffix), data.pop(k))
    user = {"name": obj["Account"]} if obj.get("Account") else {}
    level = obj.get("EventLevelName") or obj.get("Level")
    return WinEvent(
        channel=str(channel),
        event_id=_event_id(obj["EventID"]),
        computer=obj.get("Computer"),
        event_data=data,
        time_created=obj.get("TimeGenerated"),
        timestamp=obj.get("TimeGenerated"),
        provider=obj.get("EventSourceName") or obj.get("Source"),
        message=obj.get("RenderedDescription") or obj.get("Activity"),
        level=_level(level) if level not in ("8", 8) else "information",
        keywords=["Audit Success"] if obj.get("Level") in ("8", 8) or level == "Audit Success" else [],
        task=obj.get("Task"),
        user=user,
    )


def _from_winlogbeat(obj: dict[str, Any]) -> WinEvent:
    w = obj["winlog"]
    if "channel" not in w or "event_id" not in w:
        raise NotWindows("winlog.* without winlog.channel and winlog.event_id")
    proc = w.get("process") if isinstance(w.get("process"), dict) else {}
    data = dict(w.get("event_data") or {})
    data.update({k: v for k, v in (w.get("user_data") or {}).items() if k not in data})
    known = {"channel", "event_id", "computer_name", "event_data", "user_data", "record_id", "provider_name",
             "provider_guid", "level", "keywords", "task", "opcode", "version", "process", "user", "time_created"}  # fmt: skip
    event = obj.get("event") if isinstance(obj.get("event"), dict) else {}
    return WinEvent(
        channel=str(w["channel"]),
        event_id=_event_id(w["event_id"]),
        computer=w.get("computer_name"),
        event_data=data,
        time_created=w.get("time_created") or event.get("created"),
        timestamp=obj.get("@timestamp"),
        record_id=w.get("record_id"),
        provider=w.get("provider_name"),
        provider_guid=w.get("provider_guid"),
        message=obj.get("message"),
        level=_level(w.get("level") or (obj.get("log") or {}).get("level")),
        keywords=keyword_names(w.get("keywords")),
        task=w.get("task"),
        opcode=w.get("opcode"),
        version=w.get("version"),
        pid=integer(proc.get("pid")),
        thread_id=integer((proc.get("thread") or {}).get("id")),
        user=dict(w.get("user") or {}),
        extra={k: v for k, v in w.items() if k not in known},
    )


def _from_winlogbeat6(obj: dict[str, Any]) -> WinEvent:
    data = dict(obj.get("event_data") or {})
    data.update({k: v for k, v in (obj.get("user_data") or {}).items() if k not in data})
    return WinEvent(
        channel=str(obj["log_name"]),
        event_id=_event_id(obj["event_id"]),
        computer=obj.get("computer_name"),
        event_data=data,
        timestamp=obj.get("@timestamp"),
        record_id=obj.get("record_number"),
        provider=obj.get("source_name"),
        provider_guid=obj.get("provider_guid"),
        message=obj.get("message"),
        level=_level(obj.get("level")),
        keywords=keyword_names(obj.get("keywords")),
        task=obj.get("task"),
        opcode=obj.get("opcode"),
        version=obj.get("version"),
        pid=integer(obj.get("process_id")),
        thread_id=integer(obj.get("thread_id")),
        user=dict(obj.get("user") or {}),
    )
