"""Microsoft Sentinel exports (SecurityEvent / Event rows and the cloud tables) -> the Elastic data streams."""

from __future__ import annotations

from pathlib import Path

from importers_testlib import docs, jl, one, run

from pytest_soclab.importers import streams
from pytest_soclab.importers.cloud import AZURE_AUDIT, M365_DEFENDER, O365

TENANT = "00000000-0000-0000-0000-000000000000"


def security_event(**data: object) -> dict[str, object]:
    rec: dict[str, object] = {"TenantId": TENANT, "SourceSystem": "OpsManager", "TimeGenerated": "2024-03-01T10:00:00.5Z",
                              "Computer": "DC9.example.test", "EventID": 4624, "Type": "SecurityEvent", "MG": "1",
                              "Channel": "Security", "EventSourceName": "Microsoft-Windows-Security-Auditing", "Level": "8",
                              "Activity": "4624 - An account was successfully logged on.", "Account": "EXAMPLE\\alice"}  # fmt: skip
    rec.update(data)
    return rec


def test_security_event_row_gets_host_time_and_mapping(tmp_path: Path) -> None:
    rec = security_event(TargetUserName="alice", TargetDomainName="EXAMPLE", LogonType=3, IpAddress="10.9.0.5",
                         IpPort="50123", ProcessId_string="0x0")
    doc = one(tmp_path, "otrf", rec, streams.SECURITY)
    assert doc["host"] == {"name": "DC9.example.test", "hostname": "DC9"}
    assert doc["@timestamp"] == "2024-03-01T10:00:00.500Z"
    assert doc["event"]["code"] == "4624" and doc["event"]["action"] == "logged-in"
    assert doc["user"]["name"] == "alice" and doc["source"]["ip"] == "10.9.0.5"
    assert doc["winlog"]["logon"]["type"] == "Network"
    assert doc["message"] == "4624 - An account was successfully logged on."
    ed = doc["winlog"]["event_data"]
    assert "TenantId" not in ed and "MG" not in ed and ed["ProcessId"] == "0x0"  # the typed copy under its column name


def test_event_row_uses_its_log_and_a_row_without_either_is_security(tmp_path: Path) -> None:
    sysmon = {"TimeGenerated": "2024-03-01T10:00:01Z", "Source": "Microsoft-Windows-Sysmon", "Computer": "FS9.example.test",
              "EventLog": "Microsoft-Windows-Sysmon/Operational", "EventID": 18, "RenderedDescription": "Pipe Connected",
              "Type": "Event", "PipeName": "\\example\\pipe", "Image": "C:\\Windows\\System32\\cmd.exe",
              "UtcTime": "2024-03-01T10:00:00.9000000Z"}  # fmt: skip
    wfp = {"TimeGenerated": "2024-03-01T10:00:02Z", "Computer": "FS9.example.test", "EventID": 5156,
           "Application": "System", "SourceAddress": "10.9.0.6", "DestAddress": "10.9.0.7", "DestPort": "80"}
    summary = run(tmp_path, "otrf", "WindowsEvents.json", jl([sysmon, wfp]))
    assert summary.malformed == []
    (pipe,) = docs(summary, streams.SYSMON)
    assert pipe["host"]["name"] == "FS9.example.test" and pipe["file"]["name"] == "\\example\\pipe"
    (conn,) = docs(summary, streams.SECURITY)
    assert conn["event"]["code"] == "5156" and conn["winlog"]["channel"] == "Security"


def test_cloud_tables_go_to_their_streams(tmp_path: Path) -> None:
    audit = {"TenantId": TENANT, "AADTenantId": TENANT, "TimeGenerated": "2024-03-01T11:00:00Z", "OperationName": "Add delegated permission grant",
             "Result": "success", "InitiatedBy": '{"user":{"userPrincipalName":"bob@example.test"}}', "Permissions": "Mail.Read"}  # fmt: skip
    office = {"Type": "OfficeActivity", "TimeGenerated": "2024-03-01T11:05:00Z", "Operation": "MailItemsAccessed",
              "OfficeWorkload": "Exchange", "ResultStatus": "Succeeded", "UserId": "bob@example.test", "Client_IPAddress": "198.51.100.9"}  # fmt: skip
    defender = {"Timestamp": "2024-03-01T10:30:00.1234567Z", "ActionType": "LdapSearch", "DeviceName": "FS9.example.test",
                "InitiatingProcessFileName": "powershell.exe", "InitiatingProcessAccountUpn": "carol@example.test", "ReportId_long": 7}  # fmt: skip
    summary = run(tmp_path, "otrf", "cloud.json", jl([audit, office, defender]))
    assert summary.malformed == [] and summary.skipped == []
    (a,) = docs(summary, AZURE_AUDIT)
    assert a["event"]["action"] == "Add delegated permission grant" and a["event"]["outcome"] == "success"
    assert a["user"] == {"name": "bob", "email": "bob@example.test", "domain": "example.test"}
    assert a["azure"]["auditlogs"]["Permissions"] == "Mail.Read"
    (o,) = docs(summary, O365)
    assert o["source"]["ip"] == "198.51.100.9" and o["event"]["action"] == "MailItemsAccessed"
    assert o["data_stream"]["dataset"] == "o365.audit"
    (m,) = docs(summary, M365_DEFENDER)
    assert m["@timestamp"] == "2024-03-01T10:30:00.123Z" and m["host"]["name"] == "fs9.example.test"
    assert m["process"]["name"] == "powershell.exe" and m["m365_defender"]["event"]["ReportId_long"] == 7
