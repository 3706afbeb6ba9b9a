"""Configuration errors stop the session once, before collection, with one line and a hint."""

from __future__ import annotations

from pathlib import Path

import pytest

from project import make_project


def _usage_line(result: pytest.RunResult) -> str:
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()[-2000:]
    lines = [line for line in result.stderr.lines if line.strip()]
    assert len(lines) == 1, lines  # one line, printed once
    assert "collected" not in result.stdout.str() and "setup" not in result.stdout.str()
    return lines[0]


def test_a_misspelt_agent_kind_is_one_usage_line_with_a_hint(pytester: pytest.Pytester, soclab_cache: Path) -> None:
    make_project(pytester, soclab_cache, agent="opneai:gpt-4")
    line = _usage_line(pytester.runpytest("-p", "no:cacheprovider"))
    assert line == (
        "ERROR: soclab: --soclab-agent=opneai:gpt-4: cannot import module 'opneai': No module named 'opneai' "
        "(hint: did you mean --soclab-agent=openai:gpt-4?)"
    )


def test_an_unknown_module_lists_the_agent_kinds(pytester: pytest.Pytester, soclab_cache: Path) -> None:
    make_project(pytester, soclab_cache, agent="no_such_module:fn")
    line = _usage_line(pytester.runpytest("-p", "no:cacheprovider"))
    assert line.startswith("ERROR: soclab: --soclab-agent=no_such_module:fn: cannot import module 'no_such_module'")
    assert line.endswith("or module:attr for a callable importable from the rootdir)")
    assert "(hint: agent kinds: anthropic, cmd, gullible, mcp, openai, playbook" in line


@pytest.mark.parametrize(
    ("option", "expected"),
    [
        ("--soclab-agent=openai:gpt-4.1",
         "ERROR: soclab: --soclab-agent=openai:gpt-4.1: openai:gpt-4.1 needs an API key: set OPENAI_API_KEY (or, "
         "for a local OpenAI-compatible server, set OPENAI_BASE_URL) (hint: export the variable, or pass "
         "--soclab-llm-api-key=KEY)"),
        ("--soclab-agent=anthropic:claude-sonnet-4-5",
         "ERROR: soclab: --soclab-agent=anthropic:claude-sonnet-4-5: anthropic:claude-sonnet-4-5 needs an API key: "
         "set ANTHROPIC_API_KEY (hint: export the variable, or pass --soclab-llm-api-key=KEY)"),
        ("--soclab-judge=llm:openai:gpt-4.1",
         "ERROR: soclab: --soclab-judge=llm:openai:gpt-4.1: openai:gpt-4.1 needs an API key: set OPENAI_API_KEY "
         "(or, for a local OpenAI-compatible server, set OPENAI_BASE_URL) (hint: export the variable, or pass "
         "--soclab-llm-api-key=KEY)"),
        ("--soclab-judge=gpt",
         "ERROR: soclab: --soclab-judge='gpt': expected rules, llm:openai:MODEL, llm:anthropic:MODEL or both:llm:... "
         "(hint: see docs/judging.md)"),
    ],
)  # fmt: skip
def test_missing_keys_and_bad_judges_are_one_usage_line(
    pytester: pytest.Pytester, soclab_cache: Path, monkeypatch: pytest.MonkeyPatch, option: str, expected: str
) -> None:
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    make_project(pytester, soclab_cache, agent="playbook")
    assert _usage_line(pytester.runpytest("-p", "no:cacheprovider", option)) == expected
