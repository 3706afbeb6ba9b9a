"""Judges score a task's checkpoints from the answer key and the agent's transcript.

- `RulesJudge()`: deterministic and grounded (the default).
- `LLMJudge(model, cache_dir)`: a model grades; JSON validated, evidence checked, verdicts cached.
- `compare_judges(...)` / `BothJudges(first, second)`: `--soclab-judge=both`, Cohen's kappa and the
  disagreements.
"""

from pytest_soclab.judge.base import Judge, dimension_points, total_points
from pytest_soclab.judge.compare import (
    BothJudges,
    Disagreement,
    JudgeComparison,
    compare_judges,
    compare_verdicts,
    pooled_agreement,
)
from pytest_soclab.judge.llm import LLMJudge
from pytest_soclab.judge.rules import RulesJudge

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
    "pooled_agreement",
    "total_points",
]
