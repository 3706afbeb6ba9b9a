"""Resolve `--soclab-judge` to a Judge: `rules`, `llm:PROVIDER:MODEL`, or `both:llm:PROVIDER:MODEL`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_soclab.errors import SoclabError


def resolve_judge(spec: str, *, cache_dir: Path | None, llm: dict[str, str]) -> Any:
    from pytest_soclab.judge.rules import RulesJudge

    if spec == "rules":
        return RulesJudge()
    kind, _, rest = spec.partition(":")
    if kind == "llm" and rest:
        return _llm_judge(rest, cache_dir, llm)
    if kind == "both" and rest.startswith("llm:"):
        from pytest_soclab.judge.compare import BothJudges

        return BothJudges(RulesJudge(), _llm_judge(rest[4:], cache_dir, llm))
    raise SoclabError(f"--soclab-judge={spec!r}: expected rules, llm:openai:MODEL, llm:anthropic:MODEL or both:llm:...")


def _llm_judge(model_spec: str, cache_dir: Path | None, llm: dict[str, str]) -> Any:
    from pytest_soclab.judge.llm import LLMJudge
    from pytest_soclab.llm import make_chat_model

    opts = {k: v for k, v in (("base_url", llm.get("base_url")), ("api_key", llm.get("api_key"))) if v}
    return LLMJudge(make_chat_model(model_spec, **opts), cache_dir)
