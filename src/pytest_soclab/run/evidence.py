"""Pack and unpack what a judge needs to judge a task item again: the task, the full report, every call.

The transcript in a results file keeps bounded excerpts for people; grounding needs the whole
results (a quote must be found in what the agent retrieved), so the judge's inputs ride along
whole, compressed: JSON, zlib level 6, base64.
"""

from __future__ import annotations

import base64
import hashlib
import json
import zlib
from dataclasses import dataclass
from typing import Any

from pytest_soclab.errors import SoclabError
from pytest_soclab.models import AgentReport, Evidence, Task, ToolCall


_TIMES: dict[str, Any] = {"duration_ms": True, "decision": {"duration_us": True}}


@dataclass(frozen=True)
class JudgeInputs:
    task: Task
    report: AgentReport
    calls: list[ToolCall]


def pack_evidence(task: Task, report: AgentReport, calls: list[ToolCall]) -> Evidence:
    doc = {
        "task": task.model_dump(mode="json", by_alias=True),
        "report": report.model_dump(mode="json"),
        # Without their timings, so that two runs that did the same record the same evidence.
        "calls": [c.model_dump(mode="json", exclude=_TIMES) for c in calls],
    }
    raw = json.dumps(doc, sort_keys=True, separators=(",", ":"), default=str, ensure_ascii=False).encode()
    return Evidence(
        sha256=hashlib.sha256(raw).hexdigest(),
        size=len(raw),
        data=base64.b64encode(zlib.compress(raw, 6)).decode("ascii"),
    )


def unpack_evidence(evidence: Evidence) -> JudgeInputs:
    try:
        raw = zlib.decompress(base64.b64decode(evidence.data))
    except (ValueError, zlib.error) as exc:
        raise SoclabError(f"recorded evidence does not decode: {exc}") from None
    if hashlib.sha256(raw).hexdigest() != evidence.sha256:
        raise SoclabError("recorded evidence does not match its sha256 (the file was altered)")
    doc = json.loads(raw)
    return JudgeInputs(
        task=Task.model_validate(doc["task"]),
        report=AgentReport.model_validate(doc["report"]),
        calls=[ToolCall.model_validate(c) for c in doc["calls"]],
    )
