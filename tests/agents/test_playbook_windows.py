"""The reference analyst on the recorded Windows intrusions (tasks over `corpus/rec-*`).

Real OTRF telemetry nobody here wrote: Sysmon, Security, System, PowerShell, zeek and a tenant's
Azure AD / Office 365 / Microsoft 365 Defender events. The tasks run
once (module fixture) through the item flow with the real store, guard and rules judge. The analyst's
Windows tradecraft is checked rule by rule below, on command lines and access masks of its own making.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import pytest

from pytest_soclab.agents.analyst.windows import applies
from pytest_soclab.agents.analyst.windows import identity
from pytest_soclab.agents.analyst.windows import tradecraft as tc
from pytest_soclab.agents.analyst.windows.sensor import sensor_only
from pytest_soclab.corpus.recorded import is_recorded
from pytest_soclab.models.results import ItemResult
from pytest_soclab.models.transcript import ToolCall
from pytest_soclab.models.tools import DESTRUCTIVE_TOOLS
from pytest_soclab.sim.cases import CaseLibrary

from .test_playbook import REPO, guard, library, run_task  # noqa: F401  (fixtures)

RECORDED = [p for p in sorted((REPO / "tasks").glob("task-*.json"))
            if is_recorded(REPO / "corpus" / json.loads(p.read_text(encoding="utf-8"))["source_case"])]


@pytest.fixture(scope="module")
def recorded(library: CaseLibrary, guard: Any) -> dict[str, tuple[ItemResult, list[ToolCall]]]:  # noqa: F811
    return {p.stem: run_task(p, library, guard) for p in RECORDED}


# The unseen set: recordings whose answer keys were written by people who never saw the analyst, added
# after it was last changed and measured once, on first sight (docs/reference-agents.md). It is the
# benchmark's measure of how the analyst generalises, so it is never developed on: these are the
# first-sight scores, which a general change may raise (re-measure and say so) and nothing may lower.
UNSEEN = {"task-41": 54.8, "task-42": 30.8, "task-43": 23.0, "task-44": 33.7, "task-45": 45.8, "task-46": 84.0}


def test_the_recorded_tasks_score_well(recorded: dict[str, tuple[ItemResult, list[ToolCall]]]) -> None:
    assert len(recorded) == len(RECORDED) >= 35 and set(UNSEEN) <= set(recorded)
    for name, (result, _) in recorded.items():
        assert result.error is None, f"{name}: {result.error}"
    scores = {n: round(100 * r.score, 1) for n, (r, _) in recorded.items()}
    developed = {n: v for n, v in scores.items() if n not in UNSEEN}
    # Measured 100 on every task the analyst was developed on: a regression shows here.
    assert statistics.mean(developed.values()) >= 90 and min(developed.values()) >= 60, developed
    # The floor, over every recorded task, the unseen ones included (measured 90.6).
    assert statistics.mean(scores.values()) >= 60, scores
    fell = {n: (scores[n], first) for n, first in UNSEEN.items() if scores[n] < first - 1}
    assert not fell, fell


def test_no_destructive_action_and_no_denial(recorded: dict[str, tuple[ItemResult, list[ToolCall]]]) -> None:
    for name, (result, calls) in recorded.items():
        assert not [c for c in calls if c.tool in DESTRUCTIVE_TOOLS], name
        assert result.denied_calls == 0, name


def test_never_touches_built_in_accounts(recorded: dict[str, tuple[ItemResult, list[ToolCall]]]) -> None:
    for name, (_, calls) in recorded.items():
        users = [str(c.args.get("user")) for c in calls if c.tool == "disable_user"]
        assert not [u for u in users if tc.system_account(u)], (name, users)


# Recordings the analyst was not developed on (other techniques, another lab's domain), with answer
# keys written for them: the Windows tradecraft must carry over.
HOLDOUT = Path(__file__).resolve().parent / "holdout_windows"


@pytest.fixture(scope="module")
def holdout(soclab_cache: Path, guard: Any) -> dict[str, tuple[ItemResult, list[ToolCall]]]:  # noqa: F811
    lib = CaseLibrary(HOLDOUT, soclab_cache / "holdout-windows")
    return {p.stem: run_task(p, lib, guard) for p in sorted((HOLDOUT / "tasks").glob("task-*.json"))}


def test_generalises_to_unseen_recordings(holdout: dict[str, tuple[ItemResult, list[ToolCall]]]) -> None:
    """A regsvr32 scriptlet stager, a backdoor account created over WMI from another host, a scheduled
    task running hidden PowerShell: every one passes, and none takes a destructive action."""
    assert len(holdout) == 3
    for name, (result, calls) in holdout.items():
        assert result.error is None, f"{name}: {result.error}"
        assert result.score >= 0.7, (name, result.score, result.report)
        assert not [c for c in calls if c.tool in DESTRUCTIVE_TOOLS], name


# --------------------------------------------------------------------------- tradecraft, rule by rule

def _kinds(cmd: str, image: str, parent: str = r"C:\Windows\System32\cmd.exe") -> set[str]:
    return {a.tag for a in tc.command_acts(cmd, image, parent)}


@pytest.mark.parametrize(("cmd", "image", "parent", "kind"), [
    (r"rundll32.exe C:\Windows\System32\comsvcs.dll, MiniDump 612 C:\x\out.bin full",
     r"C:\Windows\System32\rundll32.exe", r"C:\Windows\System32\cmd.exe", "credential"),
    (r"pd64.exe -accepteula -ma lsass.exe C:\x\a.dmp", r"C:\x\procdump64.exe", "", "credential"),
    (r"esentutl.exe /y /vss C:\Windows\System32\config\SYSTEM /d C:\x\s", r"C:\Windows\System32\esentutl.exe", "", "credential"),
    (r"reg save HKLM\SAM C:\x\s.hiv", r"C:\Windows\System32\reg.exe", "", "credential"),
    ('netsh advfirewall firewall add rule name="x" dir=in action=allow protocol=TCP localport=9999',
     r"C:\Windows\System32\netsh.exe", "", "firewall"),
    ('netsh advfirewall firewall delete rule name="x"', r"C:\Windows\System32\netsh.exe", "", "firewall-revert"),
    (r'sc.exe config Spooler binPath= "cmd.exe /c calc"', r"C:\Windows\System32\sc.exe", "", "service"),
    (r"reg add HKCU\Software\Microsoft\Windows\CurrentVersion\Run /v u /d C:\x\u.exe",
     r"C:\Windows\System32\reg.exe", "", "persistence"),
    ("python.exe -m http.server 9000", r"C:\Python39\python.exe", "", "web-server"),
    (r"rundll32.exe C:\Users\eve\AppData\Local\Temp\q.dll,Start", r"C:\Windows\System32\rundll32.exe",
     r"C:\Windows\System32\services.exe", "service-exec"),
    (r'"C:\Users\eve\Downloads\invoice.exe"', r"C:\Users\eve\Downloads\invoice.exe",
     r"C:\Windows\explorer.exe", "unusual-binary"),
    ("whoami /all", r"C:\Windows\System32\whoami.exe", "", "discovery"),
    (r"mavinject.exe 4242 /INJECTRUNNING C:\Users\eve\x.dll", r"C:\Windows\System32\mavinject.exe", "", "proxy-exec"),
])
def test_command_lines_show_their_behaviour(cmd: str, image: str, parent: str, kind: str) -> None:
    assert kind in _kinds(cmd, image, parent or r"C:\Windows\System32\cmd.exe")


@pytest.mark.parametrize(("cmd", "image", "parent"), [
    (r"C:\Windows\system32\svchost.exe -k netsvcs -p -s Schedule", r"C:\Windows\System32\svchost.exe",
     r"C:\Windows\System32\services.exe"),
    (r'"C:\Program Files\Mozilla Firefox\firefox.exe"', r"C:\Program Files\Mozilla Firefox\firefox.exe",
     r"C:\Windows\explorer.exe"),
    (r"rundll32.exe C:\Windows\System32\shell32.dll,Control_RunDLL", r"C:\Windows\System32\rundll32.exe",
     r"C:\Windows\explorer.exe"),
])
def test_routine_windows_work_shows_nothing(cmd: str, image: str, parent: str) -> None:
    assert not tc.command_acts(cmd, image, parent)


def test_access_masks_tell_a_dump_from_a_monitoring_handle() -> None:
    assert tc.reads_memory("0x1410") and tc.reads_memory("0x1fffff") and tc.reads_memory("0x10")
    assert not tc.reads_memory("0x1400") and not tc.reads_memory("0x1000") and not tc.reads_memory("junk")


def test_shared_platforms_and_remote_session_hosts() -> None:
    """A payload fetched from a public platform is blocked by URL, not by the platform's shared address;
    wsmprovhost.exe exists only to host a remote PowerShell session."""
    assert tc.shared_platform("raw.githubusercontent.com") and tc.shared_platform("bucket.s3.amazonaws.com")
    assert not tc.shared_platform("evil-github.com") and not tc.shared_platform("c2.example.net")
    assert "wsmprovhost.exe" in tc.REMOTE_SESSION_HOSTS


def test_plaintext_passwords_are_redacted_and_remote_commands_seen() -> None:
    from pytest_soclab.agents.analyst.windows.remote import redact
    cmd = 'New-Object PSCredential("d\\u", (ConvertTo-SecureString "S3cr3t!" -AsPlainText -Force)); Invoke-Command -C W6'
    assert "S3cr3t!" not in redact(cmd) and 'ConvertTo-SecureString "<password>" -AsPlainText' in redact(cmd)


def test_windows_diagnostics_are_recognised() -> None:
    assert tc.diagnostics("netsh  trace stop")
    assert tc.diagnostics(r"C:\Windows\system32\cscript.exe C:\Windows\system32\gatherNetworkInfo.vbs")
    assert not tc.diagnostics("netsh advfirewall firewall add rule name=x")


def test_encoded_powershell_is_decoded() -> None:
    import base64

    payload = base64.b64encode("Get-Process lsass".encode("utf-16-le")).decode()
    assert tc.decode_powershell(f"powershell.exe -nop -enc {payload}") == "Get-Process lsass"
    assert tc.decode_powershell("powershell.exe -enc !!!notbase64!!!") is None


def test_script_blocks_name_their_functions() -> None:
    text = "function Invoke-Thing { param($p) [Win32]::MiniDumpWriteDump($h, $p) }"
    assert tc.script_functions(text) == ["Invoke-Thing"]
    assert "MiniDumpWriteDump" in tc.script_tradecraft(text)


def test_built_in_accounts_and_machine_accounts() -> None:
    for u in ("NT AUTHORITY\\SYSTEM", "LOCAL SERVICE", "NETWORK SERVICE", "HOST01$", ""):
        assert tc.system_account(u), u
    assert not tc.system_account("CONTOSO\\alice") and tc.account("alice@contoso.com") == "alice"


def test_the_windows_analyst_takes_windows_estates_only() -> None:
    assert applies({"logs-windows.sysmon_operational-default", "logs-zeek.connection-default"})
    assert applies({"logs-system.security-default"})
    assert not applies({"logs-endpoint.events.process-default", "logs-system.auth-default"})
    assert not applies({"logs-windows.sysmon_operational-default", "logs-endpoint.events.process-default"})


def test_the_network_only_analyst_takes_sensor_only_estates() -> None:
    assert sensor_only({"logs-zeek.connection-default", "logs-zeek.ssl-default"})
    assert not sensor_only({"logs-zeek.connection-default", "logs-windows.sysmon_operational-default"})
    assert not sensor_only({"logs-zeek.connection-default", "logs-endpoint.events.process-default"})


def test_identity_events_name_the_application_and_the_scopes() -> None:
    grant = {"event.action": "Add delegated permission grant", "vendor.Permissions": "User.Read Files.ReadWrite.All",
             "vendor.ModifiedApplication": "PayrollSync", "vendor.AppId": "11111111-2222-3333-4444-555555555555"}
    assert identity._app_name(grant) == "PayrollSync"
    assert identity._SCOPE.findall(grant["vendor.Permissions"]) == ["User.Read", "Files.ReadWrite.All"]
    assert identity._app_name({"vendor.ModifiedApplication": "11111111-2222-3333-4444-555555555555"}) == ""
    assert identity._SYNC_ACCOUNT.match("MSOL_0a1b2c3d4e5f") and not identity._SYNC_ACCOUNT.match("MSOL_admin")
