"""Remote sessions and what the attacker typed into them.

- On the target of PowerShell remoting, the session runs in wsmprovhost.exe and its commands are
  PowerShell 4103 events whose host application is that process ("ServerRemoteHost").
- On the source, a program that passed explicit credentials logs 4648 (the account, the target and
  its SPN: HTTP/<host> for WinRM).
- An implant that hosts PowerShell in its own process starts no powershell.exe: the "Windows
  PowerShell" log (400/800) names it as the host application, and 800 carries each pipeline's
  command line. A credential built from a literal password (`ConvertTo-SecureString ... -AsPlainText`)
  puts the password in the log: the report names the fact, never the password.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from pytest_soclab.agents.analyst import clock
from pytest_soclab.agents.analyst.store import q, q_in
from pytest_soclab.agents.analyst.windows import tradecraft as tc
from pytest_soclab.agents.analyst.windows.evidence import Finding, WinProc, ref_of
from pytest_soclab.agents.analyst.windows.streams import CLASSIC_POWERSHELL_STREAMS, POWERSHELL, SECURITY

if TYPE_CHECKING:
    from pytest_soclab.agents.analyst.windows.investigator import Investigation

_PLAINTEXT_SECRET = re.compile(r"(ConvertTo-SecureString\s+)(['\"])(.*?)\2", re.IGNORECASE)
_REMOTE_COMMAND = re.compile(r"\b(?:Invoke-Command|Enter-PSSession|New-PSSession|Invoke-WmiMethod|Invoke-CimMethod)\b",
                             re.IGNORECASE)


def redact(command: str) -> str:
    """A command line as the report may quote it: a literal password replaced."""
    return _PLAINTEXT_SECRET.sub(lambda m: f"{m.group(1)}{m.group(2)}<password>{m.group(2)}", command)


def session_commands(a: Investigation, session: WinProc) -> None:
    """The commands a remote PowerShell session ran on its host (4103 of its wsmprovhost.exe)."""
    if not a.tel.has(POWERSHELL) or not session.start:
        return
    rows = a.esql(f'FROM {POWERSHELL} METADATA _id, _index | WHERE event.code == "4103" AND host.name == {q(session.host)} '
                  f'AND process.name == {q(session.name)} AND @timestamp >= "{clock.shift(session.start, -5)}" AND '
                  f'@timestamp <= "{clock.shift(session.start, 3600)}" | SORT @timestamp | KEEP _id, _index, @timestamp, '
                  "powershell.command.name, powershell.connected_user, user.name | LIMIT 100")
    names = list(dict.fromkeys(str(r.get("powershell.command.name")) for r in rows if r.get("powershell.command.name")))
    if not names:
        return
    who = tc.account(rows[0].get("user.name")) or session.user
    a.case.add(Finding(str(rows[0].get("@timestamp")), session.host,
                       f"the remote PowerShell session ({session.name} on {session.host}, as {who}) ran "
                       f"{', '.join(names[:8])} (PowerShell 4103, host ServerRemoteHost).", "T1021.006", ref_of(rows[0]), 3))


def explicit_credentials(a: Investigation, proc: WinProc, t: str) -> None:
    """4648 by the source process: an account's credentials passed explicitly, and to which service."""
    if not proc.exe or not a.tel.has(SECURITY):
        return
    rows = a.esql(f'FROM {SECURITY} METADATA _id, _index | WHERE event.code == "4648" AND host.name == {q(proc.host)} AND '
                  f"winlog.event_data.ProcessName == {q(proc.exe)} AND @timestamp >= \"{clock.shift(t, -300)}\" AND "
                  f'@timestamp <= "{clock.shift(t, 60)}" | SORT @timestamp | KEEP _id, _index, @timestamp, event.code, '
                  "winlog.event_data.TargetUserName, winlog.event_data.TargetServerName, winlog.event_data.TargetInfo "
                  "| LIMIT 20")
    if not rows:
        return
    r = rows[0]
    targets = sorted({str(x.get("winlog.event_data.TargetInfo") or x.get("winlog.event_data.TargetServerName"))
                      for x in rows} - {"None", "localhost"})
    a.case.add(Finding(str(r.get("@timestamp")), proc.host,
                       f"{proc.name} on {proc.host} logged on with the explicit credentials of "
                       f"{r.get('winlog.event_data.TargetUserName')} to {', '.join(targets) or 'another host'} "
                       f"({len(rows)} event(s) 4648).", "T1078", ref_of(r), 3))


def hosted_powershell(a: Investigation) -> None:
    """Pipelines run by PowerShell hosted in the activity's programs (800, host application = the program)."""
    streams = ", ".join(s for s in CLASSIC_POWERSHELL_STREAMS if a.tel.has(s))
    procs = [a.case.procs[e] for e in a.case.activity if e in a.case.procs]
    hosts = {p.exe: p for p in procs if p.exe and p.lname not in tc.SHELLS}
    if not streams or not hosts:
        return
    rows = a.esql(f'FROM {streams} METADATA _id, _index | WHERE event.code == "800" AND process.executable IN '
                  f"({q_in(hosts)}) | SORT @timestamp | KEEP _id, _index, @timestamp, host.name, process.executable, "
                  "powershell.command.value, user.name | LIMIT 100")
    seen: set[str] = set()
    for r in rows:
        cmd = " ".join(str(r.get("powershell.command.value") or "").split())
        if not cmd or cmd in seen:
            continue
        seen.add(cmd)
        p = hosts.get(str(r.get("process.executable")))
        marks = [m for m in ("remote", "plaintext") if (_REMOTE_COMMAND if m == "remote" else _PLAINTEXT_SECRET).search(cmd)]
        what = []
        if "remote" in marks:
            what.append("runs a command on another host")
        if "plaintext" in marks:
            what.append("with a password written in plain text in the command (ConvertTo-SecureString -AsPlainText), "
                        "now in the PowerShell log")
        a.case.add(Finding(str(r.get("@timestamp")), str(r.get("host.name")),
                           f"PowerShell hosted in {p.name if p else r.get('process.executable')} (no powershell.exe: "
                           f"'Windows PowerShell' 800 names it as the host application) ran `{redact(cmd)[:240]}`"
                           + (f": it {' '.join(what)}." if what else "."),
                           "T1059.001", ref_of(r), 4 if marks else 2))
