"""The data streams the Windows, network-only and identity analysts read, by the Elastic integration's
dataset (any namespace)."""

from __future__ import annotations

SYSMON = "logs-windows.sysmon_operational-*"
SECURITY = "logs-system.security-*"
POWERSHELL = "logs-windows.powershell_operational-*"
# Where the classic "Windows PowerShell" channel (400/403/600/800) lands: its own stream, or forwarding's.
CLASSIC_POWERSHELL_STREAMS = ("logs-windows.powershell-*", "logs-windows.forwarded-*")
# Where System-channel events (service control manager, log resets) land: the System integration's
# stream, or Windows event forwarding's.
SYSTEM_STREAMS = ("logs-system.system-*", "logs-windows.forwarded-*")
# Where Application-channel events (SQL Server audit 33205) land.
APPLICATION_STREAMS = ("logs-windows.forwarded-*", "logs-system.application-*")
ZCONN = "logs-zeek.connection-*"
ZDNS = "logs-zeek.dns-*"
ZHTTP = "logs-zeek.http-*"
ZSSL = "logs-zeek.ssl-*"
ZNOTICE = "logs-zeek.notice-*"
ZPE = "logs-zeek.pe-*"
# Cloud streams and the vendor namespace each one's fields live under.
CLOUD_STREAMS = (("logs-azure.auditlogs-*", "azure.*"), ("logs-o365.audit-*", "o365.*"),
                 ("logs-m365_defender.event-*", "m365_defender.*"), ("logs-azure.signinlogs-*", "azure.*"))
