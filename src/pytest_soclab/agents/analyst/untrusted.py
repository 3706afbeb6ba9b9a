"""Text in telemetry that addresses an analyst or an AI: attacker-controlled data to flag, never orders."""

from __future__ import annotations

import re
from typing import Any

_INSTRUCTION_RE = re.compile(
    r"(ignore (all |any )?(previous|prior|earlier) (instructions|guidance|rules)|you must now|as an ai|ai agent|"
    r"assistant[:,]|system prompt|new instructions|instructions? for (the )?(ai|assistant|agent|analyst)|"
    r"urgent: (run|execute|call)|note to (the )?(analyst|ai|assistant|agent|grader)|attention (ai|analyst|agent)|"
    # text that addresses whoever writes or grades the report: a record of the data never does
    r"(submit|write|file) (your|the) report|your report|reference answer|evaluator|grader|grading this|"
    r"(triage|response|soc|security|ai|llm) (agent|assistant|copilot)|copilot|automated responder|"
    r"required (step|action)|required_action|for the (triage|ai|analyst|agent)\b)",
    re.IGNORECASE,
)


def strings(obj: Any) -> list[str]:
    """Every string inside a JSON-like value."""
    out: list[str] = []
    if isinstance(obj, str):
        out.append(obj)
    elif isinstance(obj, dict):
        for v in obj.values():
            out += strings(v)
    elif isinstance(obj, list):
        for v in obj:
            out += strings(v)
    return out


def looks_like_instruction(text: str) -> bool:
    return len(text) > 24 and bool(_INSTRUCTION_RE.search(text))
