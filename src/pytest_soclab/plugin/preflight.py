"""Configuration checked once, at session start: a bad agent or judge spec, or a missing API key,
is one `pytest.UsageError` line with a hint, not one setup error per item.

Resolving an agent or a judge is cheap (no process is started, no request is sent), so the
session resolves both here and the fixtures hand out what was resolved.
"""

from __future__ import annotations

import difflib
from typing import Any

import pytest

from pytest_soclab.agents import as_agent, registered_kinds, resolve_agent
from pytest_soclab.errors import SoclabError
from pytest_soclab.judge import resolve_judge
from pytest_soclab.plugin import keys
from pytest_soclab.plugin.settings import Settings, option_name

agent_key = pytest.StashKey[Any]()
judge_key = pytest.StashKey[Any]()

_KEY_VARIABLES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")


def _one_line(text: str) -> str:
    return " ".join(text.split())


def agent_hint(spec: str, message: str) -> str:
    """What to try next, for the usual mistakes: a misspelt kind, a missing key."""
    if any(v in message for v in _KEY_VARIABLES):
        return f"export the variable, or pass {option_name('llm_api_key')}=KEY"
    kinds = sorted(registered_kinds())
    kind, colon, rest = spec.partition(":")
    close = difflib.get_close_matches(kind, kinds, n=1, cutoff=0.6)
    if close and "cannot import module" in message:
        return f"did you mean --soclab-agent={close[0]}{colon}{rest}?"
    return f"agent kinds: {', '.join(kinds)}, or module:attr for a callable importable from the rootdir"


def judge_hint(message: str) -> str:
    if any(v in message for v in _KEY_VARIABLES):
        return f"export the variable, or pass {option_name('llm_api_key')}=KEY"
    return "see docs/judging.md"


def usage_error(message: str, hint: str) -> pytest.UsageError:
    return pytest.UsageError(f"soclab: {_one_line(message)} (hint: {hint})")


def check(config: pytest.Config, settings: Settings) -> None:
    """Resolve the session's agent and judge now, or stop the session with one line."""
    config.stash[agent_key] = make_agent(config, settings)
    config.stash[judge_key] = make_judge(settings)


def make_agent(config: pytest.Config, settings: Settings) -> Any:
    provided = config.hook.pytest_soclab_make_agent(config=config, spec=settings.agent)
    if provided is not None:
        return as_agent(settings.agent, provided)
    try:
        return resolve_agent(settings.agent, root=settings.rootdir, timeout=settings.timeout, llm=settings.llm)
    except SoclabError as exc:
        raise usage_error(_with_option(str(exc), "agent", settings.agent), agent_hint(settings.agent, str(exc))) from None


def make_judge(settings: Settings) -> Any:
    try:
        return resolve_judge(settings.judge, cache_dir=settings.cache_dir / "judge", llm=settings.llm)
    except SoclabError as exc:
        raise usage_error(_with_option(str(exc), "judge", settings.judge), judge_hint(str(exc))) from None


def _with_option(message: str, name: str, value: str) -> str:
    # Errors from deeper down (an LLM client) do not say which option they came from.
    flag = option_name(name)
    return message if message.startswith(flag) else f"{flag}={value}: {message}"


def resolved(config: pytest.Config, key: pytest.StashKey[Any]) -> Any:
    """What `check` resolved; a session that skipped the check (no scenario paths) resolves late."""
    if key in config.stash:
        return config.stash[key]
    check(config, config.stash[keys.settings_key])
    return config.stash[key]
