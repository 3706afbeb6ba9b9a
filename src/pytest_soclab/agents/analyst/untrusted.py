"""Text in telemetry that addresses an analyst or an AI: attacker-controlled data to flag, never orders."""

from __future__ import annotations

import re
from typing import Any

_INSTRUCTION_RE = re.compile(
    r"(ignore (all |any )?(previous|prior|earlier) (instructions|guidance|rules)|you must now|as an ai|ai agent|"
    r"assistant[:,]|system prompt|new instructions|instructions? for (the )?(ai|assistant|agent|analyst)|"
    r"urgent: (run|execute|call)|note to (the )?(analyst|ai|assistant|agent|grader)|attention (ai|analyst|agent))",
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
