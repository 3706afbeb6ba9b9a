"""Cloud audit tables as Microsoft Sentinel exports them (the OTRF SimuLand recordings), to ECS.

- Azure AD `AuditLogs` -> `logs-azure.auditlogs-default` (Elastic's azure integration)
- `OfficeActivity` (the Office 365 management activity log) -> `logs-o365.audit-default`
- Microsoft 365 Defender advanced-hunting rows (Device*, Identity*, CloudAppEvents) ->
  `logs-m365_defender.event-default`

Every column is kept under the dataset's own namespace with its original name (values as
recorded); the common ECS fields are set from the columns that carry them.
"""

from __future__ import annotations

import json
from typing import Any

from pytest_soclab.importers.ecs import ECS_VERSION, Doc, append_unique, finish_related, ip, parse_time, put
from pytest_soclab.importers.streams import data_stream

AZURE_AUDIT = "logs-azure.auditlogs-default"
O365 = "logs-o365.audit-default"
M365_DEFENDER = "logs-m365_defender.event-default"
# stream -> (event.module, event.dataset, namespace of the kept columns)
DATASETS: dict[str, tuple[str, str, str]] = {
    AZURE_AUDIT: ("azure", "azure.auditlogs", "azure.auditlogs"),
    O365: ("o365", "o365.audit", "o365.audit"),
    M365_DEFENDER: ("m365_defender", "m365_defender.event", "m365_defender.event"),
}


def table_of(obj: dict[str, Any]) -> str | None:
    """The stream a Sentinel cloud row belongs in, or None when it is none of these tables."""
    if "AADTenantId" in obj and "OperationName" in obj:
        return AZURE_AUDIT
    if obj.get("Type") == "OfficeActivity" or ("OfficeWorkload" in obj and "Operation" in obj):
        return O365
    if "ActionType" in obj and "Timestamp" in obj:
        return M365_DEFENDER
    return None


def _user(obj: dict[str, Any]) -> str | None:
    for key in ("UserId", "InitiatingUserOrApp", "InitiatingUser", "AccountUpn", "InitiatingProcessAccountUpn"):
        if obj.get(key):
            return str(obj[key])
    initiated = obj.get("InitiatedBy")
    if isinstance(initiated, str) and initiated.startswith("{"):
        try:
            return (json.loads(initiated).get("user") or {}).get("userPrincipalName")
        except ValueError:
            return None
    return None


def to_doc(obj: dict[str, Any], original: str) -> tuple[str, Doc]:
    stream = table_of(obj)
    if stream is None:
        raise ValueError("not a row of a known Sentinel cloud table")
    module, dataset, namespace = DATASETS[stream]
    when = parse_time(obj.get("TimeGenerated") or obj.get("Timestamp") or obj.get("ActivityDateTime"))
    if when is None:
        raise ValueError("no usable TimeGenerated / Timestamp")
    doc: Doc = {"@timestamp": when, "ecs": {"version": ECS_VERSION}, "data_stream": data_stream(dataset)}
    action = obj.get("OperationName") or obj.get("Operation") or obj.get("ActionType")
    put(doc, "event.kind", "event")
    put(doc, "event.module", module)
    put(doc, "event.dataset", dataset)
    put(doc, "event.action", str(action).strip() if action else None)
    put(doc, "event.original", original)
    result = str(obj.get("Result") or obj.get("ResultStatus") or "").lower()
    put(doc, "event.outcome", "success" if result in ("success", "succeeded") else "failure" if result else None)
    user = _user(obj)
    if user:
        put(doc, "user.name", user.split("@", 1)[0] if "@" in user else user)
        put(doc, "user.email", user if "@" in user else None)
        put(doc, "user.domain", user.split("@", 1)[1] if "@" in user else obj.get("AccountDomain"))
        append_unique(doc, "related.user", user)
    src = ip(obj.get("Client_IPAddress") or obj.get("IPAddress") or obj.get("LocalIP"))
    put(doc, "source.ip", src)
    dst = ip(obj.get("DestinationIPAddress") or obj.get("RemoteIP"))
    put(doc, "destination.ip", dst)
    put(doc, "destination.domain", obj.get("DestinationDeviceName"))
    append_unique(doc, "related.ip", src, dst)
    device = obj.get("DeviceName")
    if device:
        put(doc, "host.name", str(device).lower())
        put(doc, "host.hostname", str(device).split(".", 1)[0].lower())
        append_unique(doc, "related.hosts", str(device).lower())
    put(doc, "user_agent.original", obj.get("UserAgent") or obj.get("UserAgent_string"))
    put(doc, "process.executable", obj.get("InitiatingProcessFolderPath"))
    put(doc, "process.name", obj.get("InitiatingProcessFileName"))
    put(doc, "process.command_line", obj.get("InitiatingProcessCommandLine"))
    put(doc, "cloud.provider", "azure")
    target = obj.get("targetDisplayName") or obj.get("ModifiedApplication") or obj.get("ObjectName")
    parts = [str(action).strip() if action else dataset, f"by {user}" if user else "", f"on {target}" if target else ""]
    put(doc, "message", " ".join(p for p in parts if p))
    kept = {k: v for k, v in obj.items() if v not in (None, "")}
    put(doc, namespace, kept)
    finish_related(doc)
    return stream, doc
