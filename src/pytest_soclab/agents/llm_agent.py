"""The tool-calling loop shared by the `openai:MODEL` and `anthropic:MODEL` agents.

    agent = openai_agent("gpt-4o-mini")
    report = await agent(trigger, tools)      # {"markdown", "findings"?}
    agent.usage.to_dict()                     # tokens and cost of that run

Only ToolErrors go back to the model (as Elasticsearch's error body), together
with clear errors for malformed calls; any other exception from the tools (a
budget stop, a harness failure) ends the run and propagates to the runner.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from pytest_soclab.bridge import LAST_TURN, NUDGE, SYSTEM_PROMPT, prompt_settings, user_prompt
from pytest_soclab.errors import ToolError, illegal_argument
from pytest_soclab.llm import (
    AssistantMessage,
    ChatModel,
    Message,
    ToolCallRequest,
    ToolResult,
    ToolResultsMessage,
    UserMessage,
)
from pytest_soclab.llm import LLMError
from pytest_soclab.llm import make_chat_model
from pytest_soclab.llm import DEFAULT_MAX_CHARS, bounded_json, compact_json
from pytest_soclab.llm import Usage
from pytest_soclab.models import AgentReport
from pytest_soclab.models import ALL_TOOLS, REPORT_TOOL, Tools

DEFAULT_MAX_TURNS = 40
MAX_NUDGES = 2


def _error_result(call: ToolCallRequest, reason: str) -> ToolResult:
    return ToolResult(call.id, call.name, compact_json(illegal_argument(reason).body()), is_error=True)


class LLMAgent:
    """An agent driven by a chat model through the soclab tools.

    `usage` holds the token usage and cost of the latest run (reset when a run starts);
    run one investigation at a time per agent object.
    """

    def __init__(
        self,
        model: ChatModel,
        *,
        system_prompt: str | None = None,
        max_turns: int = DEFAULT_MAX_TURNS,
        max_result_chars: int = DEFAULT_MAX_CHARS,
    ):
        if max_turns < 1:
            raise LLMError(f"{model.spec}: max_turns must be >= 1, got {max_turns}")
        if max_result_chars < 500:
            raise LLMError(f"{model.spec}: max_result_chars must be >= 500, got {max_result_chars}")
        self.model = model
        self.system_prompt = SYSTEM_PROMPT if system_prompt is None else system_prompt
        self.max_turns = max_turns
        self.max_result_chars = max_result_chars
        self.usage: Usage = model.new_usage()
        self.turns = 0

    @property
    def name(self) -> str:
        return self.model.spec

    def settings(self) -> dict[str, Any]:
        """The published settings of this agent: model, sampling, prompt version and digest, loop limits."""
        return {
            **self.model.settings(),
            **prompt_settings(self.system_prompt),
            "max_turns": self.max_turns,
            "max_result_chars": self.max_result_chars,
        }

    async def __call__(self, trigger: dict[str, Any], tools: Tools) -> dict[str, Any]:
        return await self.investigate(trigger, tools)

    async def investigate(self, trigger: dict[str, Any], tools: Tools) -> dict[str, Any]:
        self.usage = self.model.new_usage()
        self.turns = 0
        try:
            return await self._run(trigger, tools)
        finally:
            await self.model.aclose()

    async def _run(self, trigger: dict[str, Any], tools: Tools) -> dict[str, Any]:
        specs = tools.specs()
        offered = [s["name"] for s in specs]
        messages: list[Message] = [UserMessage(user_prompt(trigger))]
        empty_answers = 0
        while self.turns < self.max_turns:
            turn = await self.model.achat(self.system_prompt, messages, specs)
            self.turns += 1
            self.usage.add(turn.input_tokens, turn.output_tokens, turn.retries)
            messages.append(AssistantMessage(turn))
            if not turn.tool_calls:
                if turn.text.strip():
                    return {"markdown": turn.text}
                empty_answers += 1
                if empty_answers > MAX_NUDGES:
                    raise LLMError(
                        f"{self.name}: the model gave {empty_answers} empty answers in a row and no report"
                    )
                messages.append(UserMessage(NUDGE))
                continue
            empty_answers = 0
            results: list[ToolResult] = []
            for call in turn.tool_calls:
                result, report = self._execute(call, tools, offered)
                if report is not None:
                    return report
                results.append(result)
            messages.append(ToolResultsMessage(tuple(results)))
            if self.turns == self.max_turns - 1:
                messages.append(UserMessage(LAST_TURN))
        raise LLMError(f"{self.name}: no report after {self.max_turns} model turns")

    def _execute(
        self, call: ToolCallRequest, tools: Tools, offered: list[str]
    ) -> tuple[ToolResult, dict[str, Any] | None]:
        """Run one tool call: (what the model reads back, the report if this call ended the run)."""
        if call.error is not None or call.arguments is None:
            return _error_result(
                call, f"tool call [{call.name}]: {call.error}; call it again with valid arguments"
            ), None
        if call.name not in ALL_TOOLS:
            return _error_result(
                call, f"unknown tool [{call.name}]; the available tools are: {', '.join(offered)}"
            ), None
        args = call.arguments
        report: dict[str, Any] | None = None
        if call.name == REPORT_TOOL:
            try:
                AgentReport.coerce(args)
            except (ValueError, ValidationError) as exc:
                detail = str(exc).splitlines()
                return _error_result(call, f"submit_report: {' '.join(detail)[:600]}"), None
            report = {k: v for k, v in args.items() if v is not None}
        try:
            result = tools.call(call.name, **args)
        except ToolError as exc:
            return ToolResult(call.id, call.name, compact_json(exc.body()), is_error=True), None
        return ToolResult(call.id, call.name, bounded_json(result, self.max_result_chars)), report


def llm_agent(
    spec: str,
    *,
    system_prompt: str | None = None,
    max_turns: int = DEFAULT_MAX_TURNS,
    max_result_chars: int = DEFAULT_MAX_CHARS,
    **model_options: Any,
) -> LLMAgent:
    """An LLMAgent on make_chat_model(spec, **model_options): the one build behind every provider's agent."""
    chat = make_chat_model(spec, **model_options)
    return LLMAgent(chat, system_prompt=system_prompt, max_turns=max_turns, max_result_chars=max_result_chars)
