"""Windows events -> (data stream, ECS document): routing by channel, the fields every event gets, and the
per-channel mapping (Sysmon, Security/System, PowerShell).

Routing follows the issue: Sysmon, Security and PowerShell/Operational events that have a mapping go
to their own streams; every other channel, and an event id with no mapping, goes to the forwarded
stream (with the generic fields and `winlog.event_data`), counted as unmapped in the summary.
"""

from __future__ import annotations

from typing import Any

from pytest_soclab.importers import powershell, security, streams, sysmon
from pytest_soclab.importers.cmdline import split_posix, split_windows
from pytest_soclab.importers.ecs import ECS_VERSION, Doc, finish_related, parse_time, put
from pytest_soclab.importers.winevent import WinEvent

SYSMON_CHANNEL = "Microsoft-Windows-Sysmon/Operational"
SECURITY_CHANNEL = "Security"
POWERSHELL_CHANNEL = "Microsoft-Windows-PowerShell/Operational"
CLASSIC_POWERSHELL_CHANNEL = "Windows PowerShell"
SYSTEM_CHANNEL = "System"
LINUX_SYSMON_PREFIX = "Linux-Sysmon"
# Windows channel names are case-insensitive: some exports write "security" for the Security log.
_CANONICAL = {c.lower(): c for c in (SYSMON_CHANNEL, SECURITY_CHANNEL, POWERSHELL_CHANNEL, CLASSIC_POWERSHELL_CHANNEL,
                                     SYSTEM_CHANNEL)}


def canonical_channel(channel: str) -> str:
    return _CANONICAL.get(channel.lower(), channel)


def route(ev: WinEvent) -> tuple[str, bool]:
    """(stream, mapped): where the event goes and whether a specific mapping applies."""
    ch, eid = ev.channel, ev.event_id
    if ch.startswith(LINUX_SYSMON_PREFIX):
        return streams.SYSMON_LINUX, sysmon.known(eid)
    if ch == SYSMON_CHANNEL:
        return (streams.SYSMON, True) if sysmon.known(eid) else (streams.FORWARDED, False)
    if ch == SECURITY_CHANNEL:
        return (streams.SECURITY, True) if security.known(eid) else (streams.FORWARDED, False)
    if ch == POWERSHELL_CHANNEL:
        return (streams.POWERSHELL, True) if powershell.known_operational(eid) else (streams.FORWARDED, False)
    if ch == CLASSIC_POWERSHELL_CHANNEL:
        return streams.FORWARDED, eid in powershell.CLASSIC
    if ch == SYSTEM_CHANNEL:
        return streams.FORWARDED, eid == 7045
    return streams.FORWARDED, False


def _text(value: Any) -> Any:
    """Event data values as the keyword strings Elastic indexes them as (older NXLog writes some as numbers)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return value


def _winlog(ev: WinEvent) -> dict[str, Any]:
    w: dict[str, Any] = dict(ev.extra)
    w.update({"channel": ev.channel, "event_id": str(ev.event_id)})
    for key, value in (("computer_name", ev.computer), ("provider_name", ev.provider),
                       ("provider_guid", ev.provider_guid), ("task", ev.task), ("opcode", ev.opcode)):  # fmt: skip
        if value not in (None, ""):
            w[key] = value
    if ev.record_id not in (None, ""):
        w["record_id"] = str(ev.record_id)
    if ev.version not in (None, ""):
        w["version"] = ev.version
    if ev.keywords:
        w["keywords"] = list(ev.keywords)
    if ev.user:
        w["user"] = dict(ev.user)
    proc: dict[str, Any] = {}
    if ev.pid is not None:
        proc["pid"] = ev.pid
    if ev.thread_id is not None:
        proc["thread"] = {"id": ev.thread_id}
    if proc:
        w["process"] = proc
    data = {k: _text(v) for k, v in ev.event_data.items() if v is not None}
    if data:
        w["event_data"] = data
    return w


def to_doc(ev: WinEvent, original: str) -> tuple[str, Doc, bool]:
    """(stream, document, mapped) for one event; `original` is the line it was read from."""
    ev.channel = canonical_channel(ev.channel)
    stream, mapped = route(ev)
    module, dataset = streams.DATASETS[stream]
    is_sysmon = ev.channel == SYSMON_CHANNEL or ev.channel.startswith(LINUX_SYSMON_PREFIX)
    if is_sysmon and ev.message and sysmon.fields_lost(ev.event_data):
        ev.event_data = {**sysmon.message_fields(ev.message), **ev.event_data}
    created = parse_time(ev.time_created) or parse_time(ev.timestamp)
    when = (parse_time(ev.event_data.get("UtcTime")) if is_sysmon else None) or created
    doc: Doc = {
        "data_stream": streams.data_stream(dataset),
        "ecs": {"version": ECS_VERSION},
        "event": {"code": str(ev.event_id), "dataset": dataset, "kind": "event", "module": module,
                  "original": original},  # fmt: skip
        "winlog": _winlog(ev),
    }
    put(doc, "@timestamp", when)
    put(doc, "event.created", created)
    put(doc, "event.provider", ev.provider)
    put(doc, "message", ev.message)
    put(doc, "log.level", ev.level)
    if ev.computer:
        put(doc, "host.name", ev.computer)
        put(doc, "host.hostname", ev.computer.split(".", 1)[0])
    data = ev.event_data
    if is_sysmon:
        linux = ev.channel.startswith(LINUX_SYSMON_PREFIX)
        if sysmon.known(ev.event_id):
            sysmon.map_event(doc, ev.event_id, data, "/" if linux else "\\", split_posix if linux else split_windows)
    elif ev.channel in (SECURITY_CHANNEL, SYSTEM_CHANNEL):
        security.map_event(doc, ev.event_id, data, ev.keywords)
    elif ev.channel in (POWERSHELL_CHANNEL, CLASSIC_POWERSHELL_CHANNEL):
        powershell.map_event(doc, ev.event_id, data, ev.message, ev.channel == CLASSIC_POWERSHELL_CHANNEL)
    if "id" not in doc.get("user", {}):
        put(doc, "user.id", ev.user.get("identifier"))
    finish_related(doc)
    return stream, doc, mapped
