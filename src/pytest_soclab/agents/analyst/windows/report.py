"""The Windows analyst's report: the verdict and the story, the evidence chain with the documents
that show it, the outside addresses as zeek saw them, what was told apart, the techniques and the
response. Every name in it comes from a document the investigation retrieved."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_soclab.agents.analyst import clock
from pytest_soclab.agents.analyst.report import done_text, redact
from pytest_soclab.agents.analyst.windows import tradecraft as tc
from pytest_soclab.models import attack_techniques

if TYPE_CHECKING:
    from pytest_soclab.agents.analyst.windows.analyst import WindowsAnalyst

MAX_STEPS = 40


def write(a: WindowsAnalyst) -> dict[str, Any]:
    c = a.case
    title = a.rule or "hunt lead"
    lines = [f"# Investigation: {title}", "", "## Verdict", ""] + verdict(a) + [""]
    chain = sorted(c.findings, key=lambda f: (f.time or "~", f.host))[:MAX_STEPS]
    if chain:
        lines += ["## Evidence chain", ""]
        for f in chain:
            ref = f" [{f.ref[0]} {f.ref[1]}]" if f.ref else ""
            tid = f" ({f.technique})" if f.technique else ""
            lines.append(f"- {clock.hm(f.time) if f.time else '--:--'} UTC {f.text}{tid}{ref}")
        lines.append("")
    peers = [p for p in c.peers.values() if p.role == "attacker"]
    if peers:
        lines += ["## Outside addresses", ""]
        for p in peers:
            ports = ", ".join(str(x) for x in sorted(p.ports))
            lines.append(f"- {p.ip} (ports {ports}): the command-and-control (C2) server of "
                         f"{', '.join(sorted(p.processes))}, first contacted at {clock.hm(p.first)} UTC.")
            lines += [f"  - {z}." for z in p.zeek[:6]]
            lines += [f"  - {d}: the payload's download." for d in p.downloads[:3]]
        lines.append("")
    lateral = [p for p in c.peers.values() if p.internal_host]
    if lateral:
        lines += ["## Other hosts reached", ""]
        lines += [f"- {p.internal_host} ({p.ip}) on ports {', '.join(str(x) for x in sorted(p.ports))} from "
                  f"{', '.join(sorted(p.processes))}." for p in lateral] + [""]
    if c.told_apart:
        lines += ["## Activity told apart from the attack", ""] + [f"- {t}" for t in dict.fromkeys(c.told_apart)] + [""]
    if c.verdict == "malicious" and c.techniques:
        names = attack_techniques()
        lines += ["## ATT&CK techniques", ""]
        lines += [f"- {t} {names.get(t, {}).get('name', '')}".rstrip() for t in sorted(c.techniques)][:16] + [""]
    lines += ["## Response", ""] + response_lines(a)
    if a.failed_steps:
        lines += ["", "## Investigation notes", ""] + [f"- step failed: {f}" for f in a.failed_steps]
    findings = {
        "root_cause": redact(" ".join(verdict(a)[:2])),
        "attacker_ips": sorted(p.ip for p in peers) if c.verdict == "malicious" else [],
        "implicated_hosts": list(c.hosts) if c.verdict == "malicious" else [],
        "techniques": sorted(c.techniques) if c.verdict == "malicious" else [],
        "iocs": iocs(a),
        "evidence": [{"index": f.ref[0], "id": f.ref[1], "why": ""} for f in chain if f.ref][:60],
    }
    return {"markdown": "\n".join(redact(x) for x in lines).rstrip() + "\n", "findings": findings}


def verdict(a: WindowsAnalyst) -> list[str]:
    c = a.case
    if c.verdict != "malicious":
        if c.verdict == "suspicious":
            rev = f" It was reverted: {'; '.join(c.reverted[:2])}." if c.reverted else ""
            return [f"Suspicious activity on {', '.join(c.hosts) or 'the host'} by {', '.join(c.actors) or 'an unknown account'}, "
                    f"with nothing left in place.{rev} No containment action is needed; the account's change is "
                    "reviewed with its owner."]
        return ["The evidence retrieved does not show an intrusion; the lead stays open for more data. "
                "No response action was taken."]
    host = c.hosts[0] if c.hosts else "the host"
    ip = c.ip_of(host)
    who = ", ".join(c.actors) or "an unknown account"
    out = [f"Malicious: {host}{f' ({ip})' if ip else ''} is compromised; the activity ran as {who}."]
    story = []
    roots = sorted((c.procs[e] for e in c.roots if e in c.procs), key=lambda p: p.start or "~")
    if roots:
        r = roots[0]
        where = f" ({r.exe})" if r.exe and not tc.windows_binary(r.exe) else ""
        story.append(f"It starts with {r.name}{where}, started by "
                     f"{r.parent_name or 'a process outside the recording'}.")
    if c.dumped:
        story.append(f"Credentials were dumped from LSASS memory (credential dumping, T1003.001) with "
                     f"{', '.join(dict.fromkeys(c.dumped))} on {host}: every credential cached in lsass there, "
                     f"{who}'s first, must be taken as stolen.")
    for prog, technique in dict.fromkeys(c.copied):
        story.append(f"The Active Directory database (ntds.dit) was copied with {prog} on {host} (NTDS, T1003.003): "
                     "every domain account's password hash, krbtgt's included, must be taken as stolen."
                     if technique == "T1003.003" else
                     f"Registry hives that hold password hashes were copied with {prog} on {host} (T1003.002): the "
                     "local accounts' hashes (and cached domain logons) must be taken as stolen.")
    for dc, user, src in c.replicated:
        story.append(f"With {user}'s rights, {src or 'a host outside the telemetry'} had {dc} replicate the directory's "
                     "secrets (DCSync, T1003.006): the password hashes of krbtgt and of the privileged accounts must be "
                     "taken as stolen.")
    peers = [p for p in c.peers.values() if p.role == "attacker"]
    for p in peers:
        seen = f"; zeek shows the session from {ip or host}" if p.zeek else ""
        story.append(f"The implant is controlled from {p.ip} (command-and-control, C2, on port "
                     f"{', '.join(str(x) for x in sorted(p.ports))}){seen}.")
    if c.lateral_accounts:
        others = [h for h in c.hosts if h != host]
        how = ("by creating a service remotely" if "T1543.003" in c.techniques else
               "over PowerShell remoting (WinRM)" if "T1021.006" in c.techniques else
               "through WMI" if "T1047" in c.techniques else "by remote execution")
        story.append(f"The attacker moved laterally with {', '.join(c.lateral_accounts)}'s credentials {how}"
                     f"{' between ' + ' and '.join(c.hosts) if others else ''}.")
    if "T1552.004" in c.techniques:
        story.append("The AD FS token-signing key was taken (its encrypted certificate and the DKM key that decrypts "
                     "it): whoever holds it can forge SAML tokens for any user of the tenant (Golden SAML, T1606.002), "
                     "so the cloud changes that followed in users' names are taken as forged.")
    if a.cloud_users or a.identity_ips:
        story.append(f"In the tenant, changes were made in {', '.join(a.cloud_users) or 'a user'}'s name"
                     + (f"; mail was then read from {', '.join(a.identity_ips)} through the backdoored application "
                        "(mail collection)" if a.identity_ips else "") + ".")
    if c.exposures:
        story.append(f"Still exposed: {'; '.join(c.exposures)}.")
    if c.reverted:
        story.append(f"Reverted afterwards: {'; '.join(c.reverted[:2])}.")
    return out + [" ".join(story)] if story else out


def response_lines(a: WindowsAnalyst) -> list[str]:
    c = a.case
    out = []
    for tool, args, why, ok in c.executed:
        text = done_text(tool, args)
        out.append(f"- {text}: {why}" + ("" if ok else " (refused by the guard; to be done by hand)") + ".")
    if c.verdict == "malicious":
        if c.dumped:
            out.append(f"- Reset the passwords of {', '.join(c.actors) or 'the accounts'} and of every account cached in "
                       "LSASS on the host.")
        if c.replicated or any(t == "T1003.003" for _, t in c.copied):
            out.append("- Reset krbtgt's password twice (a day apart) and the passwords of the privileged accounts: "
                       "their hashes were replicated or copied.")
        if any(t == "T1003.002" for _, t in c.copied):
            out.append("- Reset the passwords of the host's local accounts: their hashes were in the copied hives.")
        for path in c.copies[:4]:
            out.append(f"- Delete {path} once it is collected: a copy of credential material left on the host "
                       "(a human approves the deletion).")
        out.append("- Collect memory and disk images of the compromised hosts first: they are the evidence.")
    out += [f"- {r}" for r in c.recommended]
    if not c.executed and c.verdict != "malicious":
        out.append("- No response action taken.")
    return out


def iocs(a: WindowsAnalyst) -> list[str]:
    c = a.case
    if c.verdict != "malicious":
        return []
    out = [p.ip for p in c.peers.values() if p.role == "attacker"]
    for e in c.activity:
        p = c.procs.get(e)
        if p and any(x.tag in ("unusual-binary", "tool") for x in p.acts) and p.exe:
            out.append(p.exe)
    return list(dict.fromkeys(out))[:20]
