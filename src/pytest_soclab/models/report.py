"""The agent's final answer."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class EvidenceRef(BaseModel):
    model_config = ConfigDict(extra="allow")
    index: str = ""
    id: str = ""
    why: str = ""


class ResponseRef(BaseModel):
    model_config = ConfigDict(extra="allow")
    action: str
    target: str = ""
    rationale: str = ""


class Findings(BaseModel):
    """Optional structured findings next to the markdown. Extra keys are kept, not judged."""

    model_config = ConfigDict(extra="allow")
    root_cause: str = ""
    attacker_ips: list[str] = Field(default_factory=list)
    implicated_hosts: list[str] = Field(default_factory=list)
    techniques: list[str] = Field(default_factory=list)
    iocs: list[str] = Field(default_factory=list)
    evidence: list[EvidenceRef] = Field(default_factory=list)
    response: list[ResponseRef] = Field(default_factory=list)


class AgentReport(BaseModel):
    markdown: str
    findings: Findings | None = None

    @classmethod
    def coerce(cls, value: Any) -> AgentReport:
        """Accept what the agent contract allows: a markdown string, or {"markdown", "findings"}.

        Raises ValueError with a message fit to show the user when the value is neither.
        """
        if isinstance(value, AgentReport):
            return value
        if isinstance(value, str):
            return cls(markdown=value)
        if isinstance(value, dict):
            if "markdown" not in value or not isinstance(value["markdown"], str):
                raise ValueError(
                    f"a report dict needs a string 'markdown' key; got keys {sorted(map(str, value))}"
                )
            extra = sorted(set(value) - {"markdown", "findings"})
            if extra:
                raise ValueError(f"unknown report key(s) {extra}; allowed: markdown, findings")
            return cls.model_validate(value)
        raise ValueError(f"the agent returned {type(value).__name__}; expected str or {{'markdown', 'findings'}}")

    def text(self) -> str:
        """The markdown plus the findings rendered as text: everything a grader reads."""
        if self.findings is None:
            return self.markdown
        return self.markdown + "\n\n" + self.findings.model_dump_json(exclude_defaults=True)
