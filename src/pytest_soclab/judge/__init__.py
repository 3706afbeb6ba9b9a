"""Judges score a task's checkpoints from the answer key and the agent's transcript.

- `RulesJudge()`: deterministic and grounded (the default).
- `LLMJudge(model, cache_dir)`: a model grades; JSON validated, evidence checked, verdicts cached.
- `compare_judges(...)` / `BothJudges(first, second)`: `--soclab-judge=both`, Cohen's kappa and the
  disagreements.
"""

import importlib
from typing import Any

# Imported on first use: the judges pull in scipy and friends, which most runs of the
# plugin (collection, `pytest tests`) never need.
_WHERE = {
    "Judge": "base", "dimension_points": "base", "total_points": "base",
    "BothJudges": "compare", "Disagreement": "compare", "JudgeComparison": "compare",
    "compare_judges": "compare", "compare_verdicts": "compare", "pooled_agreement": "compare",
    "LLMJudge": "llm", "RulesJudge": "rules", "judge_settings": "settings",
    "resolve_judge": "registry",
    "explain_task": "explain",
}  # fmt: skip


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(f"pytest_soclab.judge.{_WHERE[name]}"), name)
    raise AttributeError(f"module 'pytest_soclab.judge' has no attribute {name!r}")


__all__ = [
    "BothJudges",
    "Disagreement",
    "Judge",
    "JudgeComparison",
    "LLMJudge",
    "RulesJudge",
    "compare_judges",
    "compare_verdicts",
    "dimension_points",
    "judge_settings",
    "explain_task",
    "pooled_agreement",
    "resolve_judge",
    "total_points",
]
