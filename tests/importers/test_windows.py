"""Windows events (NXLog flattened, Winlogbeat 7+, Winlogbeat 6) -> the Elastic data streams and fields."""

from __future__ import annotations

from pathlib import Path

from importers_testlib import HOST, SYSMON, docs, jl, nxlog, one, run

from pytest_soclab.importers import streams

PROC_GUID = "{11111111-2222-3333-4444-555555555555}"
PARENT_GUID = "{11111111-2222-3333-4444-000000000001}"


def test_sysmon_process_create(tmp_path: Path) -> None:
    rec = nxlog(SYSMON, 1, RuleName="-", UtcTime="2024-03-01 09:59:59.500", ProcessGuid=PROC_GUID, ProcessId="4242",
                Image="C:\\Tools\\evil.exe", CommandLine='"C:\\Tools\\evil.exe" -a "b c"', CurrentDirectory="C:\\Tools\\",
                User="CORP\\alice", Hashes="SHA1=AB12,MD5=CD34,SHA256=EF56,IMPHASH=0000",
                ParentProcessGuid=PARENT_GUID, ParentProcessId="100", ParentImage="C:\\Windows\\explorer.exe",
                ParentCommandLine="C:\\Windows\\explorer.exe", OriginalFileName="evil.exe", Company="ACME")  # fmt: skip
    doc = one(tmp_path, "windows", rec, streams.SYSMON)
    assert doc["@timestamp"] == "2024-03-01T09:59:59.500Z"  # Sysmon's UtcTime, as Elastic takes it
    assert doc["event"]["created"] == "2024-03-01T10:00:00.125Z"
    assert doc["event"]["category"] == ["process"] and doc["event"]["type"] == ["start"]
    assert doc["event"]["action"] == "Process creation" and doc["event"]["code"] == "1"
    assert doc["event"]["module"] == "windows" and doc["event"]["dataset"] == "windows.sysmon_operational"
    assert doc["data_stream"] == {"dataset": "windows.sysmon_operational", "namespace": "default", "type": "logs"}
    p = doc["process"]
    assert p["entity_id"] == PROC_GUID and p["pid"] == 4242 and p["name"] == "evil.exe"
    assert p["args"] == ["C:\\Tools\\evil.exe", "-a", "b c"] and p["args_count"] == 3
    assert p["parent"] == {"entity_id": PARENT_GUID, "pid": 100, "executable": "C:\\Windows\\explorer.exe",
                           "name": "explorer.exe", "command_line": "C:\\Windows\\explorer.exe",
                           "args": ["C:\\Windows\\explorer.exe"], "args_count": 1}  # fmt: skip
    assert p["hash"] == {"sha1": "ab12", "md5": "cd34", "sha256": "ef56"}  # the all-zero imphash is dropped
    assert p["pe"] == {"original_file_name": "evil.exe", "company": "ACME"}
    assert doc["user"] == {"domain": "CORP", "name": "alice"}
    assert doc["related"]["user"] == ["alice"] and doc["related"]["hash"] == ["ab12", "cd34", "ef56"]
    assert doc["host"] == {"name": HOST, "hostname": "WKS01"}
    w = doc["winlog"]
    assert w["channel"] == SYSMON and w["event_id"] == "1" and w["computer_name"] == HOST
    assert w["provider_name"] == "Microsoft-Windows-Sysmon"
    assert w["event_data"]["Hashes"].startswith("SHA1=") and w["event_data"]["ParentProcessId"] == "100"
    assert "Channel" not in w["event_data"] and "Hostname" not in w["event_data"]
    assert doc["message"] == "event 1" and doc["event"]["original"].startswith("{")
    assert doc["ecs"]["version"]


def test_sysmon_network_dns_image_file_registry(tmp_path: Path) -> None:
    recs = [
        nxlog(SYSMON, 3, Image="C:\\a.exe", Protocol="tcp", Initiated="true", SourceIsIpv6="false",
              SourceIp="10.1.1.1", SourcePort="50123", DestinationIp="203.0.113.9", DestinationPort="443",
              DestinationHostname="c2.example.test", DestinationPortName="https"),
        nxlog(SYSMON, 22, Image="C:\\a.exe", QueryName="c2.example.test", QueryStatus="0",
              QueryResults="type:  5 edge.example.test;::ffff:203.0.113.9;"),
        nxlog(SYSMON, 7, Image="C:\\a.exe", ImageLoaded="C:\\Windows\\System32\\x.dll", OriginalFileName="x.dll",
              Hashes="MD5=AA,IMPHASH=BB", Signed="true", Signature="Microsoft Windows", SignatureStatus="Valid"),
        nxlog(SYSMON, 11, Image="C:\\a.exe", TargetFilename="C:\\Users\\bob\\drop.ps1"),
        nxlog(SYSMON, 13, EventType="SetValue", Image="C:\\a.exe", Details="DWORD (0x00000010)",
              TargetObject="HKLM\\SOFTWARE\\Run\\evil"),
        nxlog(SYSMON, 10, SourceProcessGUID=PROC_GUID, SourceProcessId="7", SourceThreadId="8",
              SourceImage="C:\\a.exe", TargetImage="C:\\Windows\\system32\\lsass.exe", GrantedAccess="0x1010"),
    ]  # fmt: skip
    summary = run(tmp_path, "windows", "s.json", jl(recs))
    net, dns, img, fil, reg, acc = docs(summary, streams.SYSMON)
    assert net["source"] == {"ip": "10.1.1.1", "port": 50123}
    assert net["destination"] == {"ip": "203.0.113.9", "port": 443, "domain": "c2.example.test"}
    assert net["network"] == {"transport": "tcp", "protocol": "https", "direction": "egress", "type": "ipv4"}
    assert net["related"]["ip"] == ["10.1.1.1", "203.0.113.9"]
    assert dns["dns"]["question"]["name"] == "c2.example.test"
    assert dns["dns"]["answers"] == [{"data": "edge.example.test", "type": "CNAME"}, {"data": "203.0.113.9", "type": "A"}]
    assert dns["dns"]["resolved_ip"] == ["203.0.113.9"] and dns["network"]["protocol"] == "dns"
    assert dns["sysmon"]["dns"]["status"] == "SUCCESS"
    assert img["file"]["path"] == "C:\\Windows\\System32\\x.dll" and img["file"]["name"] == "x.dll"
    assert img["file"]["hash"] == {"md5": "aa"} and img["file"]["pe"]["imphash"] == "bb"
    assert img["file"]["pe"]["original_file_name"] == "x.dll"
    assert img["file"]["code_signature"] == {"subject_name": "Microsoft Windows", "status": "Valid", "signed": True,
                                             "valid": True}  # fmt: skip
    assert img["event"]["type"] == ["change"]
    assert fil["file"] == {"path": "C:\\Users\\bob\\drop.ps1", "name": "drop.ps1", "directory": "C:\\Users\\bob",
                           "extension": "ps1"}  # fmt: skip
    assert fil["event"]["category"] == ["file"] and fil["event"]["type"] == ["creation"]
    assert reg["registry"] == {"path": "HKLM\\SOFTWARE\\Run\\evil", "hive": "HKLM", "key": "SOFTWARE\\Run\\evil",
                               "value": "evil", "data": {"strings": ["16"], "type": "SZ_DWORD"}}  # fmt: skip
    assert reg["winlog"]["event_data"]["EventType"] == "SetValue"  # Sysmon's EventType is event data, not NXLog's
    assert reg["event"]["category"] == ["configuration", "registry"]
    assert acc["process"] == {"entity_id": PROC_GUID, "pid": 7, "thread": {"id": 8}, "executable": "C:\\a.exe",
                              "name": "a.exe"}  # fmt: skip
    assert acc["winlog"]["event_data"]["TargetImage"].endswith("lsass.exe")
    assert acc["event"]["type"] == ["access"] and acc["event"]["action"] == "ProcessAccess"


def test_security_logons(tmp_path: Path) -> None:
    ok = nxlog("Security", 4624, SubjectUserSid="S-1-5-18", SubjectUserName="WKS01$", SubjectDomainName="CORP",
               TargetUserSid="S-1-5-21-1-2-3-1105", TargetUserName="alice", TargetDomainName="CORP",
               TargetLogonId="0x1a2b", LogonType="10", IpAddress="::ffff:192.0.2.10", IpPort="51515",
               WorkstationName="JUMP01", ProcessId="0x2f0", ProcessName="C:\\Windows\\System32\\svchost.exe")
    bad = nxlog("Security", 4625, Keywords="0x8010000000000000", TargetUserName="admin", TargetDomainName="CORP",
                LogonType="3", IpAddress="198.51.100.23", IpPort="0", Status="0xc000006d", SubStatus="0xc000006a")
    summary = run(tmp_path, "windows", "sec.json", jl([ok, bad]))
    a, b = docs(summary, streams.SECURITY)
    assert a["event"]["category"] == ["authentication"] and a["event"]["type"] == ["start"]
    assert a["event"]["action"] == "logged-in" and a["event"]["outcome"] == "success"
    assert a["event"]["module"] == "system" and a["event"]["dataset"] == "system.security"
    assert a["user"] == {"name": "alice", "domain": "CORP", "id": "S-1-5-21-1-2-3-1105"}
    assert a["source"] == {"ip": "192.0.2.10", "port": 51515, "domain": "JUMP01"}
    assert a["winlog"]["logon"] == {"type": "RemoteInteractive", "id": "0x1a2b"}
    assert a["process"] == {"pid": 0x2F0, "executable": "C:\\Windows\\System32\\svchost.exe", "name": "svchost.exe"}
    assert a["winlog"]["keywords"] == ["Audit Success"]
    assert b["event"]["outcome"] == "failure" and b["event"]["action"] == "logon-failed"
    assert b["source"] == {"ip": "198.51.100.23"}  # port 0 means none
    assert b["winlog"]["logon"]["type"] == "Network"
    assert b["winlog"]["logon"]["failure"] == {"status": "0xc000006d", "sub_status": "0xc000006a"}


def test_security_process_iam_and_network(tmp_path: Path) -> None:
    recs = [
        nxlog("Security", 4688, SubjectUserName="alice", SubjectDomainName="CORP", NewProcessId="0x1850",
              NewProcessName="C:\\Windows\\System32\\cmd.exe", ProcessId="0x114", CommandLine="cmd.exe /c whoami",
              ParentProcessName="C:\\Windows\\explorer.exe"),
        nxlog("Security", 4720, SubjectUserName="admin", SubjectDomainName="CORP", TargetUserName="backdoor",
              TargetDomainName="CORP", TargetSid="S-1-5-21-9"),
        nxlog("Security", 4732, SubjectUserName="admin", TargetUserName="Administrators", TargetDomainName="Builtin",
              TargetSid="S-1-5-32-544", MemberName="CN=backdoor,CN=Users,DC=corp", MemberSid="S-1-5-21-9"),
        nxlog("Security", 5156, ProcessID="4", Application="\\device\\harddiskvolume2\\x.exe", Direction="%%14593",
              SourceAddress="10.0.0.5", SourcePort="50000", DestAddress="10.0.0.9", DestPort="445", Protocol="6"),
        nxlog("Security", 4663, SubjectUserName="alice", ObjectType="File", ObjectName="C:\\secret\\db.kdbx",
              ProcessId="0x10", ProcessName="C:\\x.exe"),
        nxlog("Security", 1102, SubjectUserName="admin"),
    ]  # fmt: skip
    proc, created, member, conn, obj, cleared = docs(run(tmp_path, "windows", "s.json", jl(recs)), streams.SECURITY)
    assert proc["process"]["pid"] == 0x1850 and proc["process"]["parent"]["pid"] == 0x114
    assert proc["process"]["args"] == ["cmd.exe", "/c", "whoami"] and proc["process"]["name"] == "cmd.exe"
    assert proc["process"]["parent"]["name"] == "explorer.exe" and proc["user"]["name"] == "alice"
    assert proc["event"]["action"] == "created-process"
    assert created["user"]["name"] == "admin" and created["user"]["target"]["name"] == "backdoor"
    assert created["event"]["type"] == ["user", "creation"]
    assert member["group"] == {"name": "Administrators", "domain": "Builtin", "id": "S-1-5-32-544"}
    assert member["user"]["target"] == {"name": "backdoor", "id": "S-1-5-21-9"}
    assert member["event"]["action"] == "added-member-to-group"
    assert conn["source"] == {"ip": "10.0.0.5", "port": 50000} and conn["destination"]["port"] == 445
    assert conn["network"] == {"iana_number": "6", "transport": "tcp", "direction": "egress"}
    assert conn["process"]["pid"] == 4 and conn["event"]["category"] == ["network"]
    assert obj["file"]["path"] == "C:\\secret\\db.kdbx" and obj["event"]["action"] == "object-access-attempted"
    assert cleared["event"]["action"] == "audit-log-cleared" and cleared["event"]["type"] == ["admin", "change"]


def test_powershell_and_forwarded(tmp_path: Path) -> None:
    ps = "Microsoft-Windows-PowerShell/Operational"
    recs = [
        nxlog(ps, 4104, MessageNumber="1", MessageTotal="1", ScriptBlockText="IEX (New-Object Net.WebClient)",
              ScriptBlockId="abc-1", Path="C:\\u\\x.ps1"),
        nxlog(ps, 4103, ContextInfo="        Host Application = powershell.exe -nop -enc AAA\n        User = CORP\\bob\n"
              "        Command Name = Invoke-Expression\n", Payload="CommandInvocation(...)"),
        nxlog("System", 7045, ServiceName="evilsvc", ImagePath="C:\\Windows\\evil.exe", ServiceType="user mode service"),
        nxlog("Application", 1001, Data="whatever"),
        nxlog(SYSMON, 999, Thing="x"),
        nxlog("Security", 4999, Thing="y"),
        nxlog(ps, 4100, Thing="z"),
    ]  # fmt: skip
    summary = run(tmp_path, "windows", "p.json", jl(recs))
    block, pipeline = docs(summary, streams.POWERSHELL)
    assert block["powershell"]["file"] == {"script_block_text": "IEX (New-Object Net.WebClient)", "script_block_id": "abc-1"}
    assert block["powershell"]["sequence"] == 1 and block["file"]["name"] == "x.ps1"
    assert block["event"]["action"] == "Execute a Remote Command"
    assert pipeline["process"]["command_line"] == "powershell.exe -nop -enc AAA"
    assert pipeline["process"]["args"] == ["powershell.exe", "-nop", "-enc", "AAA"]
    assert pipeline["user"] == {"domain": "CORP", "name": "bob"}
    assert pipeline["powershell"]["command"]["name"] == "Invoke-Expression"
    svc, app, sysmon_unknown, sec_unknown, ps_unknown = docs(summary, streams.FORWARDED)
    assert svc["service"]["name"] == "evilsvc" and svc["file"]["path"] == "C:\\Windows\\evil.exe"
    assert svc["event"]["action"] == "service-installed" and svc["event"]["dataset"] == "windows.forwarded"
    assert app["winlog"]["channel"] == "Application" and app["winlog"]["event_data"] == {"Data": "whatever"}
    assert sysmon_unknown["event"]["code"] == "999" and "category" not in sysmon_unknown["event"]
    assert sec_unknown["winlog"]["event_data"]["Thing"] == "y"
    assert ps_unknown["winlog"]["channel"] == ps
    assert summary.unmapped == {"Application/1001": 1, f"{SYSMON}/999": 1, "Security/4999": 1, f"{ps}/4100": 1}
    assert summary.events == 7 and sum(summary.streams.values()) == 7


def test_winlogbeat_forms(tmp_path: Path) -> None:
    wlb7 = {"@timestamp": "2024-03-01T10:00:01.000Z", "message": "Process Create", "host": {"name": "wec"},
            "winlog": {"channel": SYSMON, "event_id": 1, "computer_name": "SRV9.corp", "record_id": 77,
                       "provider_name": "Microsoft-Windows-Sysmon", "api": "wineventlog",
                       "user": {"identifier": "S-1-5-18", "name": "SYSTEM", "domain": "NT AUTHORITY", "type": "User"},
                       "process": {"pid": 2000, "thread": {"id": 3000}},
                       "event_data": {"UtcTime": "2024-03-01 10:00:00.900", "ProcessGuid": PROC_GUID,
                                      "ProcessId": "5", "Image": "C:\\x.exe", "User": "CORP\\carol"}}}  # fmt: skip
    wlb6 = {"@timestamp": "2019-05-18T20:36:46.254Z", "log_name": "Security", "event_id": 4624,
            "computer_name": "DC1.corp", "record_number": "5402081", "source_name": "Microsoft-Windows-Security-Auditing",
            "keywords": ["Audit Success"], "message": "An account was successfully logged on.",
            "event_data": {"TargetUserName": "dave", "TargetDomainName": "CORP", "LogonType": "3",
                           "IpAddress": "192.0.2.44", "IpPort": "49999"}}  # fmt: skip
    summary = run(tmp_path, "windows", "wlb.json", jl([wlb7, wlb6]))
    (s,) = docs(summary, streams.SYSMON)
    assert s["@timestamp"] == "2024-03-01T10:00:00.900Z" and s["host"]["name"] == "SRV9.corp"
    assert s["winlog"]["record_id"] == "77" and s["winlog"]["api"] == "wineventlog"
    assert s["winlog"]["process"] == {"pid": 2000, "thread": {"id": 3000}}
    assert s["user"] == {"domain": "CORP", "name": "carol", "id": "S-1-5-18"}
    assert s["process"]["pid"] == 5 and s["message"] == "Process Create"
    (l,) = docs(summary, streams.SECURITY)
    assert l["user"]["name"] == "dave" and l["source"] == {"ip": "192.0.2.44", "port": 49999}
    assert l["winlog"]["record_id"] == "5402081" and l["winlog"]["logon"]["type"] == "Network"
    assert l["event"]["outcome"] == "success" and l["@timestamp"] == "2019-05-18T20:36:46.254Z"


def test_older_nxlog_fields_are_not_event_data(tmp_path: Path) -> None:
    rec = {"EventTime": "2020-06-09 22:50:54", "@timestamp": "2020-06-10T02:50:56.537Z", "Hostname": "W6.lab",
           "Keywords": -9223372036854775808, "EventType": "INFO", "SeverityValue": 2, "Severity": "INFO",
           "EventID": 5, "SourceName": "Microsoft-Windows-Sysmon", "RecordNumber": 713650, "ThreadID": 4168,
           "Channel": SYSMON, "Domain": "NT AUTHORITY", "AccountName": "SYSTEM", "UserID": "S-1-5-18",
           "ExecutionProcessID": 3500, "ProcessId": "6196", "Image": "C:\\x.exe", "UtcTime": "2020-06-10 02:50:54.631",
           "tags": ["mordorDataset"], "port": 62387, "host": "wec"}  # fmt: skip
    doc = one(tmp_path, "windows", rec, streams.SYSMON)
    assert doc["winlog"]["event_data"] == {"ProcessId": "6196", "Image": "C:\\x.exe", "UtcTime": "2020-06-10 02:50:54.631"}
    assert doc["winlog"]["record_id"] == "713650" and doc["winlog"]["process"] == {"pid": 3500, "thread": {"id": 4168}}
    assert doc["winlog"]["user"] == {"identifier": "S-1-5-18", "name": "SYSTEM", "domain": "NT AUTHORITY"}
    assert doc["event"]["type"] == ["end"] and doc["@timestamp"] == "2020-06-10T02:50:54.631Z"


def test_classic_powershell_pipeline_details(tmp_path: Path) -> None:
    """Windows PowerShell 800 keeps its command line and invocation details only in the message; 4103
    its details in Payload: both become Elastic's powershell.command.value / invocation_details."""
    message = ("Pipeline execution details for command line: Invoke-Command -ComputerName WS6 { get-process }. \r\n\r\n"
               "Context Information: \r\n\tUserId=CORP\\bob\r\n\tHostApplication=C:\\Users\\bob\\x.exe\r\n"
               "\tCommandLine=Invoke-Command -ComputerName WS6 { get-process }\r\n\r\nDetails: \r\n"
               'CommandInvocation(Out-String): "Out-String"\r\n'
               'ParameterBinding(Out-String): name="InputObject"; value="System.Diagnostics.Process (csrss)"\r\n')
    recs = [nxlog("Windows PowerShell", 800, Message=message),
            nxlog("Microsoft-Windows-PowerShell/Operational", 4103,
                  ContextInfo="        Host Application = wsmprovhost.exe -Embedding\n",
                  Payload='CommandInvocation(Get-Process): "Get-Process"\n')]
    summary = run(tmp_path, "windows", "ps.json", jl(recs))
    (classic,) = docs(summary, streams.FORWARDED)
    cmd = classic["powershell"]["command"]
    assert cmd["value"] == "Invoke-Command -ComputerName WS6 { get-process }"
    assert cmd["invocation_details"] == [
        {"type": "CommandInvocation", "related_command": "Out-String", "value": "Out-String"},
        {"type": "ParameterBinding", "related_command": "Out-String", "name": "InputObject",
         "value": "System.Diagnostics.Process (csrss)"}]
    assert classic["process"]["executable"] == "C:\\Users\\bob\\x.exe" and classic["user"]["name"] == "bob"
    (op,) = docs(summary, streams.POWERSHELL)
    assert op["powershell"]["command"]["invocation_details"] == [
        {"type": "CommandInvocation", "related_command": "Get-Process", "value": "Get-Process"}]


def test_sysmon_fields_only_in_the_message_are_read_back(tmp_path: Path) -> None:
    """An export that kept a large event's fields only in its rendered message (NXLog, a WMI consumer with
    a long script): its UtcTime, operation and script come back, continuation lines included."""
    message = ("WmiEventConsumer activity detected:\r\nRuleName: -\r\nEventType: WmiConsumerEvent\r\n"
               "UtcTime: 2024-03-01 14:00:00.250\r\nOperation: Created\r\nUser: CORP\\bob\r\nName:  \"Upd\"\r\n"
               "Type: Script\r\nDestination:  \"Dim s\r\nSet s = CreateObject(\\\"WScript.Shell\\\")\r\nhttp://x/y\"")
    rec = nxlog(SYSMON, 20, Message=message)
    rec["TimeCreated"] = "2024-03-01T10:00:00.000Z"  # the collector's local clock
    (doc,) = docs(run(tmp_path, "windows", "s.json", jl([rec])), streams.SYSMON)
    assert doc["@timestamp"] == "2024-03-01T14:00:00.250Z"
    data = doc["winlog"]["event_data"]
    assert data["Operation"] == "Created" and data["Type"] == "Script" and data["EventType"] == "WmiConsumerEvent"
    assert data["Destination"] == ' "Dim s\nSet s = CreateObject(\\"WScript.Shell\\")\nhttp://x/y"'
    assert doc["user"]["name"] == "bob"


def test_channel_names_are_case_insensitive(tmp_path: Path) -> None:
    """Windows channel names are case-insensitive: an export's "security" is the Security log."""
    rec = nxlog("security", 4624, TargetUserName="dave", TargetDomainName="CORP", LogonType="3",
                IpAddress="192.0.2.44", IpPort="49999")
    summary = run(tmp_path, "windows", "c.json", jl([rec]))
    (doc,) = docs(summary, streams.SECURITY)
    assert doc["winlog"]["channel"] == "Security" and doc["source"]["ip"] == "192.0.2.44"
    assert not summary.unmapped


def test_a_sysmon_pid_the_export_overwrote_is_read_back(tmp_path: Path) -> None:
    """NXLog's own ProcessID (the Sysmon service's pid) took the place of Sysmon's ProcessId: the
    event's pid comes back from its message; the fields present stay as they are."""
    message = ("Registry value set:\r\nRuleName: -\r\nEventType: SetValue\r\nUtcTime: 2024-03-01 10:00:00.500\r\n"
               f"ProcessGuid: {PROC_GUID}\r\nProcessId: 716\r\nImage: C:\\x.exe\r\n")
    rec = nxlog(SYSMON, 13, UtcTime="2024-03-01 10:00:00.500", ProcessGuid=PROC_GUID, ProcessID="3168",
                Image="C:\\x.exe", TargetObject="HKLM\\System\\x", Details="DWORD (0x00000002)", Message=message)
    (doc,) = docs(run(tmp_path, "windows", "p.json", jl([rec])), streams.SYSMON)
    assert doc["process"]["pid"] == 716 and doc["winlog"]["event_data"]["EventType"] == "SetValue"
    assert doc["registry"]["path"] == "HKLM\\System\\x"
