"""From the traced activity to a verdict: which hosts the attacker controlled, what each step was, what
left, whose credentials are exposed, and whether the whole thing is an attack, reconnaissance, or the
estate's own work."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from pytest_soclab.agents.analyst.state import Proc
from pytest_soclab.agents.analyst.store import PROC
from pytest_soclab.agents.analyst.trace import MALICE_THRESHOLD, malice
from pytest_soclab.agents.analyst.tradecraft import base, classify, credential_kind

if TYPE_CHECKING:
    from pytest_soclab.agents.analyst.core import Analyst

_STEP_TAGS = ("web_spawn", "reverse_shell", "download", "unusual_exec", "persistence", "credential", "privesc",
              "staging", "db_dump", "lateral", "exfil", "obfuscated", "package_install", "cleanup", "miner")
_PATHLIKE = re.compile(r"(?<![\w.])/[\w./\-]+")


class Verdict:
    def host_scores(self: Analyst) -> dict[str, tuple[int, int]]:
        out = {}
        for host, eids in self.case.cluster.items():
            procs = [self.case.procs[e] for e in eids if e in self.case.procs]
            for p in procs:
                if not p.behaviours:
                    p.behaviours = classify(p.cmd, p.name, p.exe, p.parent_name, p.parent_cmd)
            out[host] = malice(procs)
        return out

    def decide(self: Analyst) -> None:
        scores = self.host_scores()
        bad = {h for h, (s, top) in scores.items() if s >= MALICE_THRESHOLD or top >= 5}
        # A host reached by the attacker's own logins is theirs even when little ran there.
        bad |= {lg.host for lg in self.case.logins if lg.malicious and lg.host in self.case.cluster}
        for h in list(self.case.cluster):
            if h not in bad:
                self.case.cluster[h] = set()
        if bad:
            self.case.verdict = "malicious"
            self.case.verdict_why = [f"{h}: malice score {scores.get(h, (0, 0))[0]}" for h in sorted(bad)]
        elif any("scanner" in inf.roles or "attacker" in inf.roles for inf in self.case.infra.values()):
            self.case.verdict = "reconnaissance"
        elif self.pattern_info or self.case.trigger_alert is not None:
            self.case.verdict = "benign"
        else:
            self.case.verdict = "undetermined"

    def compile_steps(self: Analyst) -> None:
        """Every attacker process with a behaviour becomes a step of the chain."""
        for host in self.case.implicated:
            procs = sorted((self.case.procs[e] for e in self.case.cluster[host] if e in self.case.procs),
                           key=lambda p: (p.start, p.eid))
            for p in procs:
                tags = [b for b in p.behaviours if b.tag in _STEP_TAGS]
                if not tags:
                    continue
                if any(b.tag == "web_spawn" for b in tags) and len(tags) == 1 and self.case.entries.get(host) \
                        and self.case.entries[host].kind == "web":
                    continue  # told with the web request that started it
                main = max(tags, key=lambda b: b.weight)
                what = "; ".join(dict.fromkeys(b.what for b in tags))
                state = "" if p.ended is not False or main.tag not in ("unusual_exec", "reverse_shell") else \
                    " (still running)"
                self.case.step(p.start, host, f"{p.user} ran `{p.short(150)}` (pid {p.pid}, parent {base(p.parent_name)}) "
                               f"on {host}: {what}{state}", PROC, p.doc_id, main.technique)
                for b in tags:
                    self.case.techniques.setdefault(b.technique, b.what)
                self.note_credentials(p)
                if main.tag == "unusual_exec":
                    self.case.artifact(p.exe, host, "implant", f"runs as {p.user}, pid {p.pid}"
                                       + (", still running" if p.ended is False else ""), p.start, main.technique)
                if main.tag == "package_install":
                    self.origin_package = (host, p)
                    entry = self.case.entries.get(host)
                    if entry is not None:
                        entry.kind, entry.detail = "package", f"the package installed by `{p.short(80)}`"

    def note_credentials(self: Analyst, p: Proc) -> None:
        for b in p.behaviours:
            if b.tag != "credential":
                continue
            self.stolen.setdefault(p.host, set()).add(b.target)
            for path in _PATHLIKE.findall(p.cmd):
                if not credential_kind(path):
                    continue
                parts = set(path.strip("/").split("/"))
                for h in self.case.inventory:
                    if h in parts and h != p.host:
                        self.case.exposed_hosts.setdefault(h, f"{b.target} of {h} read from {p.host}")
                        self.exposed_files.setdefault(h, []).append(path)
