"""WMI event subscriptions (T1546.003): an event filter (what to wait for), a consumer (what to run)
and the binding between them. Sysmon logs the three as events 19, 20 and 21 (Operation Created /
Deleted, the account that did it); WMI-Activity 5861 repeats a binding with the consumer's full
definition. Only two consumer classes run code: ActiveScriptEventConsumer (a VBScript or JScript,
run by scrcons.exe) and CommandLineEventConsumer (a program, started by the WMI provider host);
Windows' own subscriptions use the others (event log, SMTP, log file consumers).

A subscription created over the network (DCOM from another host) is also lateral movement: its
creator's network logon on the host, at the moment of creation, leads back to the source.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from pytest_soclab.agents.analyst import clock
from pytest_soclab.agents.analyst.store import q
from pytest_soclab.agents.analyst.windows import tradecraft as tc
from pytest_soclab.agents.analyst.windows.evidence import PROC_FIELDS, Finding, WinProc, ref_of
from pytest_soclab.agents.analyst.windows.streams import SYSMON, SYSTEM_STREAMS

if TYPE_CHECKING:
    from pytest_soclab.agents.analyst.windows.investigator import Investigation

CODE_CONSUMERS = {"activescripteventconsumer": "scrcons.exe", "commandlineeventconsumer": "wmiprvse.exe"}
_CONSUMER = re.compile(r"(\w+EventConsumer)\s*\.?\s*(?:Name\s*)?=\s*\\?\"([^\"\\]+)", re.IGNORECASE)
_SCRIPT_MARKS = re.compile(
    r"BinaryFormatter|Base64ToStream|FromBase64String|Deserialize\w*|Assembly\.Load|WScript\.Shell|powershell"
    r"|DownloadString|Net\.WebClient|XMLHTTP|https?://[^\s\"'\\]+", re.IGNORECASE)
_ENGINE = re.compile(r"ScriptingEngine\s*=\s*\"(\w+)\"", re.IGNORECASE)
_FIELDS = ("_id", "_index", "@timestamp", "host.name", "event.code", "user.name", "winlog.event_data.Operation",
           "winlog.event_data.Name", "winlog.event_data.Query", "winlog.event_data.Type",
           "winlog.event_data.Destination", "winlog.event_data.Consumer", "winlog.event_data.Filter")


def _name(value: Any) -> str:
    return str(value or "").strip().strip('"').strip()


def subscriptions(a: Investigation) -> None:
    """Bindings of a code-running consumer: what it waits for, what it runs, whether it ran, who made it
    and from where."""
    rows = a.esql(f'FROM {SYSMON} METADATA _id, _index | WHERE event.code IN ("19", "20", "21") | SORT @timestamp '
                  f"| KEEP {', '.join(_FIELDS)} | LIMIT 500")
    bindings = [r for r in rows if str(r.get("event.code")) == "21" and _name(r.get("winlog.event_data.Operation")).lower() == "created"]
    for b in bindings:
        m = _CONSUMER.search(str(b.get("winlog.event_data.Consumer") or ""))
        if m is None or m.group(1).lower() not in CODE_CONSUMERS:
            continue
        _binding(a, b, m.group(1), m.group(2), rows)


def _binding(a: Investigation, b: dict[str, Any], kind: str, consumer: str, rows: list[dict[str, Any]]) -> None:
    c = a.case
    host, t = str(b.get("host.name") or ""), str(b.get("@timestamp") or "")
    user = tc.account(b.get("user.name"))
    filt = _name(str(b.get("winlog.event_data.Filter") or "").split("=", 1)[-1].replace('\\"', '"'))
    same_host = [r for r in rows if str(r.get("host.name")) == host]
    query = next((_name(r.get("winlog.event_data.Query")) for r in same_host
                  if str(r.get("event.code")) == "19" and _name(r.get("winlog.event_data.Name")) == filt), "")
    c.add(Finding(t, host, f"{host}: {user or 'an account'} bound the WMI event filter {filt}"
                           + (f" (`{query[:160]}`)" if query else "")
                           + f" to the {kind} {consumer} (Sysmon 21): a WMI event subscription that runs code "
                             "whenever the filter's event occurs (persistence, T1546.003).", "T1546.003", ref_of(b), 5))
    if host and host not in c.hosts:
        c.hosts.append(host)
    if user and not tc.system_account(user) and user not in c.actors:
        c.actors.append(user)
    _script(a, host, consumer, t, same_host)
    deleted = [r for r in same_host if _name(r.get("winlog.event_data.Operation")).lower() == "deleted"
               and (_name(r.get("winlog.event_data.Name")) in (filt, consumer) or consumer in str(r.get("winlog.event_data.Consumer")))]
    end = str(deleted[-1].get("@timestamp")) if deleted else ""
    if deleted:
        c.add(Finding(end, host, f"the subscription ({filt}, {consumer}) was deleted at {end[11:19]} UTC by "
                                 f"{tc.account(deleted[-1].get('user.name')) or 'the same account'} (Sysmon "
                                 f"{', '.join(sorted({str(r.get('event.code')) for r in deleted}))}, Operation Deleted): "
                                 "removed once it had run, to leave nothing behind.", "T1070", ref_of(deleted[-1]), 3))
    _runs(a, host, kind, t, end)
    a.follow_source(host, t, "T1047")


def _script(a: Investigation, host: str, consumer: str, t: str, rows: list[dict[str, Any]]) -> None:
    """What the consumer runs: Sysmon 20's Destination, or WMI-Activity 5861's definition of it."""
    text = next((str(r.get("winlog.event_data.Destination") or "") for r in rows
                 if str(r.get("event.code")) == "20" and _name(r.get("winlog.event_data.Name")) == consumer
                 and r.get("winlog.event_data.Destination")), "")
    ref = None
    streams = ", ".join(s for s in SYSTEM_STREAMS if a.tel.has(s))
    if streams:
        found = a.esql(f'FROM {streams} METADATA _id, _index | WHERE event.code == "5861" AND host.name == {q(host)} AND '
                       f'message LIKE "*{consumer}*" | SORT @timestamp | KEEP _id, _index, @timestamp, event.code, message '
                       "| LIMIT 5")
        if found:
            ref = ref_of(found[0])
            text = text or str(found[0].get("message") or "")
    if not text:
        return
    marks = list(dict.fromkeys(m.group(0) for m in _SCRIPT_MARKS.finditer(text)))
    engine = _ENGINE.search(text)
    a.case.add(Finding(t, host, f"the consumer {consumer} runs "
                                + (f"a {engine.group(1)} script" if engine else "code")
                                + (f" that uses {', '.join(marks[:6])}" if marks else "")
                                + (": it decodes and deserializes a .NET payload in memory (a stager)."
                                   if any(m.lower() in ("binaryformatter", "deserialize") for m in marks) else ".")
                                + " (WMI-Activity 5861)" * bool(ref), "T1059.005" if engine else "", ref, 4))


def _runs(a: Investigation, host: str, kind: str, created: str, deleted: str) -> None:
    """Whether the consumer ran: the process that runs it, started while the subscription existed."""
    runner = CODE_CONSUMERS[kind.lower()]
    hi = clock.shift(deleted, 60) if deleted else clock.shift(created, 86400)
    where = (f'process.name == "{runner}"' if runner == "scrcons.exe" else f'process.parent.name == "{runner}"')
    rows = a.esql(f'FROM {SYSMON} METADATA _id, _index | WHERE event.code == "1" AND host.name == {q(host)} AND {where} '
                  f'AND @timestamp >= "{created}" AND @timestamp <= "{hi}" | SORT @timestamp '
                  f"| KEEP {', '.join(PROC_FIELDS)} | LIMIT 20")
    for r in rows:
        p = WinProc.from_row(r)
        a.case.procs.setdefault(p.eid, p)
        a.case.add(Finding(p.start, host, f"{p.name} started at {p.start[11:19]} UTC on {host} as {p.user or 'SYSTEM'}: "
                                          "the subscription fired and its consumer ran.", "T1546.003", p.ref, 4))
        a.case.roots.append(p.eid)
        a.take_activity(p)
