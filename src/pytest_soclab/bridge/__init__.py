"""The tools served to agents outside this process: answering calls, the report tool, prompts, MCP.

Below `agents/`: the adapters use it, and it knows nothing of them.
"""

from pytest_soclab.bridge.mcp_server import (
    INSTRUCTIONS,
    build_server,
    check_loopback,
    serve_http,
    serve_stdio,
    serving_http,
)
from pytest_soclab.bridge.prompts import (
    LAST_TURN,
    NUDGE,
    PROMPT_VERSION,
    SYSTEM_PROMPT,
    prompt_settings,
    user_prompt,
)
from pytest_soclab.bridge.protocol import (
    PROTOCOL_VERSION,
    CallMessage,
    ReportMessage,
    answer_call,
    parse_agent_line,
    report_from_args,
)

__all__ = [
    "INSTRUCTIONS",
    "LAST_TURN",
    "NUDGE",
    "PROMPT_VERSION",
    "PROTOCOL_VERSION",
    "SYSTEM_PROMPT",
    "CallMessage",
    "ReportMessage",
    "answer_call",
    "build_server",
    "check_loopback",
    "parse_agent_line",
    "prompt_settings",
    "report_from_args",
    "serve_http",
    "serve_stdio",
    "serving_http",
    "user_prompt",
]
