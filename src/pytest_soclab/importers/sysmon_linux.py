"""Sysmon for Linux records: the `<Event>` XML it writes to syslog, one per line (with or without the
syslog prefix), read into a WinEvent on the `Linux-Sysmon/Operational` channel.

Records already in JSON (Winlogbeat or NXLog form) go through winevent.read instead. The ECS mapping
is the Sysmon one (sysmon.py) with Linux paths, into `logs-sysmon_linux.log-default`, as Elastic's
`sysmon_linux` integration indexes it.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

from pytest_soclab.importers.ecs import integer
from pytest_soclab.importers.winevent import WinEvent, keyword_names

CHANNEL = "Linux-Sysmon/Operational"
_LEVELS = {"0": "information", "1": "critical", "2": "error", "3": "warning", "4": "information", "5": "verbose"}


class NotSysmonXml(ValueError):
    pass


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def looks_like(line: str) -> bool:
    return "<Event" in line and "</Event>" in line


def read_xml(line: str) -> WinEvent:
    start, end = line.find("<Event"), line.rfind("</Event>")
    if start < 0 or end < 0:
        raise NotSysmonXml("no <Event>...</Event> element")
    text = line[start : end + len("</Event>")]
    if "<!" in text:  # no DOCTYPE or entity declarations: they have no business in an event record
        raise NotSysmonXml("XML declarations are not accepted in an event record")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise NotSysmonXml(f"invalid XML: {exc}") from None
    system: dict[str, Any] = {}
    attrs: dict[str, dict[str, str]] = {}
    data: dict[str, Any] = {}
    for part in root:
        name = _local(part.tag)
        if name == "System":
            for child in part:
                cname = _local(child.tag)
                system[cname] = (child.text or "").strip()
                attrs[cname] = dict(child.attrib)
        elif name == "EventData":
            for item in part:
                key = item.attrib.get("Name")
                if key:
                    data[key] = item.text or ""
    eid = integer(system.get("EventID"))
    if eid is None:
        raise NotSysmonXml("no numeric System/EventID")
    return WinEvent(
        channel=system.get("Channel") or CHANNEL,
        event_id=eid,
        computer=system.get("Computer") or None,
        event_data=data,
        time_created=attrs.get("TimeCreated", {}).get("SystemTime"),
        record_id=system.get("EventRecordID") or None,
        provider=attrs.get("Provider", {}).get("Name"),
        provider_guid=attrs.get("Provider", {}).get("Guid"),
        level=_LEVELS.get(system.get("Level", ""), system.get("Level") or None),
        keywords=keyword_names(system.get("Keywords")),
        task=system.get("Task") or None,
        opcode=system.get("Opcode") or None,
        version=system.get("Version") or None,
        pid=integer(attrs.get("Execution", {}).get("ProcessID")),
        thread_id=integer(attrs.get("Execution", {}).get("ThreadID")),
        user={"identifier": attrs["Security"]["UserId"]} if attrs.get("Security", {}).get("UserId") else {},
    )
