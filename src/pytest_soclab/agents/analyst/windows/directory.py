"""The directory plane: secrets replicated out of a domain controller (DCSync, T1003.006).

Domain controllers replicate with the extended rights DS-Replication-Get-Changes(-All,
-In-Filtered-Set). A DC audits each use as Security 4662 (an operation on a directory object) with
the rights' GUIDs in `Properties`. Asked by a domain controller's own account, it is replication;
asked by any other account, it is someone pulling password hashes (krbtgt's among them) through
DRSUAPI. Azure AD Connect's sync account (`MSOL_<hex>`) holds the rights by design.

The request's logon id leads to the account's network logon on the DC (4624, same id) and its source
address; that host's Sysmon names the process that connected (same source port, or the connection to
the DC in the same seconds): the activity to trace.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_soclab.agents.analyst import clock
from pytest_soclab.agents.analyst.store import q
from pytest_soclab.agents.analyst.tradecraft import is_ip
from pytest_soclab.agents.analyst.windows import tradecraft as tc
from pytest_soclab.agents.analyst.windows.evidence import PROC_FIELDS, Finding, WinProc, ref_of
from pytest_soclab.agents.analyst.windows.streams import SECURITY, SYSMON

if TYPE_CHECKING:
    from pytest_soclab.agents.analyst.windows.investigator import Investigation

REPLICATION_RIGHTS = {
    "1131f6aa-9c07-11d1-f79f-00c04fc2dcd2": "DS-Replication-Get-Changes",
    "1131f6ad-9c07-11d1-f79f-00c04fc2dcd2": "DS-Replication-Get-Changes-All",
    "89e95b76-444d-4c62-991a-0facbeda640c": "DS-Replication-Get-Changes-In-Filtered-Set",
}
_SYNC_ACCOUNT = "msol_"  # Azure AD Connect's directory sync account: replicates by design


def replication_requests(a: Investigation) -> None:
    """Replication rights used by accounts that are not domain controllers: the request, the logon
    behind it, the host and process it came from."""
    if not a.tel.has(SECURITY):
        return
    rights = " OR ".join(f'winlog.event_data.Properties LIKE "*{g}*"' for g in REPLICATION_RIGHTS)
    rows = a.esql(f'FROM {SECURITY} METADATA _id, _index | WHERE event.code == "4662" AND ({rights}) AND '
                  'NOT user.name LIKE "*$" | SORT @timestamp | KEEP _id, _index, @timestamp, host.name, user.name, '
                  "user.domain, winlog.logon.id, winlog.event_data.Properties, winlog.event_data.AccessMask | LIMIT 200")
    requests: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for r in rows:
        key = (str(r.get("host.name") or ""), tc.account(r.get("user.name")), str(r.get("winlog.logon.id") or ""))
        requests.setdefault(key, []).append(r)
    for (dc, user, logon_id), rs in requests.items():
        if user.lower().startswith(_SYNC_ACCOUNT):
            a.case.told_apart.append(f"{user} used the directory replication rights on {dc} ({len(rs)} 4662): Azure AD "
                                     "Connect's sync account, which replicates password hashes by design.")
            continue
        _request(a, dc, user, logon_id, rs)


def _request(a: Investigation, dc: str, user: str, logon_id: str, rows: list[dict[str, Any]]) -> None:
    c = a.case
    first = rows[0]
    t = str(first.get("@timestamp") or "")
    guids = sorted({g for r in rows for g in REPLICATION_RIGHTS if g in str(r.get("winlog.event_data.Properties") or "").lower()})
    named = ", ".join(f"{REPLICATION_RIGHTS[g]} {{{g}}}" for g in guids)
    c.add(Finding(t, dc, f"{dc} logged {len(rows)} directory object access(es) (4662) by {user} (logon id {logon_id}) "
                         f"with {named}: directory replication asked by an account that is not a domain controller, "
                         "a DCSync (DRSUAPI DsGetNCChanges). The password hashes it replicated (krbtgt's and the "
                         "privileged accounts' NTLM hashes) must be taken as stolen.", "T1003.006", ref_of(first), 5))
    c.served.add(dc)
    if not tc.system_account(user) and user not in c.actors:
        c.actors.append(user)
    if not logon_id:
        return
    logons = a.esql(f'FROM {SECURITY} METADATA _id, _index | WHERE host.name == {q(dc)} AND event.code == "4624" AND '
                    f"winlog.logon.id == {q(logon_id)} | SORT @timestamp | KEEP _id, _index, @timestamp, source.ip, "
                    "source.port, winlog.event_data.LogonType, winlog.event_data.AuthenticationPackageName | LIMIT 5")
    logon = next((r for r in logons if is_ip(str(r.get("source.ip") or ""))), None)
    if logon is None:
        return
    src, port = str(logon.get("source.ip")), logon.get("source.port")
    c.add(Finding(str(logon.get("@timestamp")), dc,
                  f"the logon id {logon_id} is {user}'s network logon on {dc} (4624 type "
                  f"{logon.get('winlog.event_data.LogonType')}, {logon.get('winlog.event_data.AuthenticationPackageName')}) "
                  f"from {src}" + (f":{port}" if port else "") + ": where the replication request came from.",
                  "T1078.002", ref_of(logon), 4))
    host = a.case.host_of(src) or a.owner_of(src)
    c.replicated.append((dc, user, host))
    if not host:
        return
    proc = _requester(a, host, src, port, t)
    if proc is None:
        return
    c.add(Finding(proc.start or t, host, f"the source {src} is {host}: {proc.name} ({proc.exe}) there, as {proc.user}, "
                                         f"opened the connection to {dc} that carried the request (Sysmon 3).",
                  "T1003.006", proc.ref, 4))
    if host not in c.hosts:
        c.hosts.append(host)
    if a.seed is None:
        a.seed = proc
        a.window = (t, t)


def _requester(a: Investigation, host: str, src: str, port: Any, t: str) -> WinProc | None:
    """The process on the source host whose connection carried the request: the one with the logon's
    source port, else the first connection in the seconds before that Windows does not make itself."""
    near = f'@timestamp >= "{clock.shift(t, -120)}" AND @timestamp <= "{clock.shift(t, 5)}"'
    by_port = f" AND source.port == {int(port)}" if isinstance(port, int) or str(port).isdigit() else ""
    for extra in ([by_port, ""] if by_port else [""]):
        rows = a.esql(f'FROM {SYSMON} METADATA _id, _index | WHERE event.code == "3" AND host.name == {q(host)} AND '
                      f"source.ip == {q(src)}{extra} AND {near} | SORT @timestamp | KEEP {', '.join(PROC_FIELDS)} | LIMIT 50")
        rows = [r for r in rows if tc.base(r.get("process.name")) not in tc.SESSION_BOUNDARIES
                and str(r.get("process.name") or "").lower() != "system"]
        if rows:
            eid = str(rows[0].get("process.entity_id") or "")
            p = a.procs_by_id({eid}).get(eid)
            if p is None:  # started before the recording: the process as its connection shows it
                p = WinProc.from_row(rows[0])
                p.known = False
            a.case.procs.setdefault(p.eid, p)
            return p
    return None
