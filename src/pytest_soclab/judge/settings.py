"""What a judge's results depend on besides its inputs: model, sampling settings, prompt version.

Recorded in the results (`run.judge_settings`) so that a reader knows how repeatable the verdicts are:
the rules judge is deterministic; an LLM judge runs at temperature 0, seeded where the provider
takes a seed (OpenAI-compatible APIs: best effort; Anthropic's Messages API has neither).
"""

from __future__ import annotations

from typing import Any


def judge_settings(judge: Any) -> dict[str, Any]:
    if judge is None:
        return {}
    first, second = getattr(judge, "first", None), getattr(judge, "second", None)
    if first is not None and second is not None:  # --soclab-judge=both
        return {"judge": judge.name, "first": judge_settings(first), "second": judge_settings(second)}
    model = getattr(judge, "model", None)
    if model is None:
        return {"judge": getattr(judge, "name", type(judge).__name__), "deterministic": True}
    sampling = getattr(model, "sampling_settings", None)
    out: dict[str, Any] = {"judge": judge.name, "deterministic": False}
    if callable(sampling):
        try:
            out.update({k: v for k, v in sampling().items() if k in ("temperature", "seed", "max_tokens")})
        except Exception:  # noqa: BLE001 - a test double may not have them: say nothing rather than guess
            pass
    out.setdefault("temperature", None)
    out.setdefault("seed", None)
    prompt = getattr(judge, "prompt_version", None)
    if prompt:
        out["prompt"] = prompt
    return out
