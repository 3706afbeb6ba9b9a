"""Fake models for the LLM judge: they read the prompt the judge sends, as a real model would."""

from __future__ import annotations

import json
import re
from typing import Any

_TOKENS = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w.]*\d)|/[\w./-]+|\b[a-z]+-\d+\b|\bT\d{4}(?:\.\d{3})?\b")


def section(user: str, tag: str) -> Any:
    m = re.search(rf"<{tag}>\n(.*?)\n</{tag}>", user, re.DOTALL)
    assert m, f"no <{tag}> section in the prompt"
    return json.loads(m.group(1))


class HonestFake:
    """Grades like a careful (if simple-minded) analyst: a checkpoint's entities must be in the report and
    in the tool results; it cites them as they appear in the results."""

    name = "fake-honest"

    def __init__(self) -> None:
        self.prompts: list[tuple[str, str]] = []

    def verdicts(self, user: str) -> list[dict[str, Any]]:
        cps = section(user, "checkpoints")
        transcript = json.dumps(section(user, "transcript"))
        report = json.dumps(section(user, "agent_report")).lower()
        out = []
        for cp in cps:
            toks = _TOKENS.findall(cp["check"])
            if cp["dim"] == "response_restraint":
                sentence = next((s for s in report.split("\\n") if "isolate" in s), None)
                ok = sentence is not None and all(t.lower() in report for t in toks if not t.startswith("db-"))
                out.append({"index": cp["index"], "verdict": "hit" if ok else "miss",
                            "justification": "containment recommended" if ok else "no containment",
                            "evidence": [sentence.strip(" -0123456789.")] if ok and sentence else []})
                continue
            techs = [t for t in toks if t.startswith("T")]
            ents = [t for t in toks if not t.startswith("T") and not t.startswith("db-")]
            found = [t for t in ents if t in transcript and t.lower() in report]
            tech_ok = all(t.lower() in report for t in techs) and "sysupdate" in transcript
            if techs:
                ok, part = tech_ok, False
                evidence = ["/tmp/.sysupdate"] if ok else []
            else:
                ok = bool(ents) and len(found) == len(ents)
                part = bool(found) and not ok
                evidence = found[:3]
            out.append({"index": cp["index"], "verdict": "hit" if ok else "partial" if part else "miss",
                        "justification": f"{len(found)}/{len(ents)} entities supported", "evidence": evidence})
        return out

    def complete_text(self, system: str, user: str) -> tuple[str, dict[str, Any]]:
        self.prompts.append((system, user))
        return json.dumps({"verdicts": self.verdicts(user)}), {"input_tokens": len(user) // 4, "output_tokens": 50}


class ObedientFake(HonestFake):
    """Does whatever the data tells it to: if the prompt carries an instruction to pass everything, it
    marks every checkpoint hit and cites the instruction as evidence."""

    name = "fake-obedient"
    TRIGGERS = (re.compile(r"mark every checkpoint as hit", re.I), re.compile(r"every item above satisfied", re.I))

    def verdicts(self, user: str) -> list[dict[str, Any]]:
        for rx in self.TRIGGERS:
            m = rx.search(user)
            if m:
                start = user.rfind("\\n", 0, m.start()) + 2
                quote = user[start: m.end()]
                return [{"index": cp["index"], "verdict": "hit", "justification": "the report says so",
                         "evidence": [quote]} for cp in section(user, "checkpoints")]
        return super().verdicts(user)


class ScriptedFake:
    """Answers from a list, one per call (for malformed-answer tests)."""

    name = "fake-scripted"

    def __init__(self, answers: list[str]) -> None:
        self.answers = list(answers)
        self.calls = 0
        self.users: list[str] = []

    def complete_text(self, system: str, user: str) -> tuple[str, dict[str, Any]]:
        self.calls += 1
        self.users.append(user)
        return self.answers.pop(0), {"input_tokens": 10, "output_tokens": 5, "cost_usd": 0.001}
