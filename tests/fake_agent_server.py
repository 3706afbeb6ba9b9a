"""A fake OpenAI-compatible model that investigates: one search, then a report. Optionally slow.

Each answer waits `delay` seconds (as a remote model would), so that concurrency can be measured
without a model; usage fields are fixed so that costs are predictable.
"""

from __future__ import annotations

import json
import time
from typing import Any

from fake_chat import ChatHandler

USAGE = {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}


class Investigator(ChatHandler):
    delay = 0.0
    usage = USAGE
    search_first = True  # False: answer with the report at once (one model call per item)

    def do_POST(self) -> None:  # noqa: N802 (http.server API)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.delay:
            time.sleep(self.delay)
        tool_results = [m for m in body["messages"] if m["role"] == "tool"]
        if not tool_results and self.search_first:
            message: dict[str, Any] = {"role": "assistant", "content": "", "tool_calls": [{
                "id": "call_1", "type": "function", "function": {"name": "es_search", "arguments": json.dumps(
                    {"index": "logs-endpoint.events.process-default",
                     "body": {"size": 2, "query": {"term": {"host.name": "web-01"}}}})}}]}  # fmt: skip
            finish = "tool_calls"
        else:
            message = {"role": "assistant", "content": "## Summary\nweb-01 was looked at; nothing to contain."}
            finish = "stop"
        payload = {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": body["model"],
                   "choices": [{"index": 0, "finish_reason": finish, "message": message}], "usage": self.usage}
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def slow(delay: float) -> type[Investigator]:
    return type("SlowInvestigator", (Investigator,), {"delay": delay})
