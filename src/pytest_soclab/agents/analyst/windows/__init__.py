"""The reference analyst on Windows estates: Sysmon, Security, System and PowerShell events, and zeek.

`applies(streams)` says whether an estate's data is Windows telemetry without Elastic Defend's Linux
process events; `WindowsAnalyst(trigger, tools, tel).run()` investigates it."""

from __future__ import annotations

WINDOWS_STREAMS = ("logs-windows.sysmon_operational", "logs-system.security", "logs-windows.powershell")
LINUX_PROCESS_STREAM = "logs-endpoint.events.process"


def applies(streams: set[str]) -> bool:
    windows = any(s.startswith(WINDOWS_STREAMS) for s in streams)
    return windows and not any(s.startswith(LINUX_PROCESS_STREAM) for s in streams)
