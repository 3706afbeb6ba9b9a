"""The soclab tools over MCP (Model Context Protocol), on stdio or streamable HTTP on loopback.

    server = build_server(tools, trigger=trigger, on_report=reports.append)
    await serve_stdio(server)                      # soclab mcp --transport stdio
    async with serving_http(server) as url: ...    # http://127.0.0.1:PORT/mcp, as mcp:COMMAND uses it

The tools are exactly those of `tools.specs()` (read tools, the scenario's action
tools, submit_report) with their JSON schemas unchanged, so the server is built
on the SDK's low-level `Server` (MCPServer derives schemas from Python
signatures). A tool result is the Elasticsearch-shaped JSON, as text and as
structured content; a ToolError is an `isError` result carrying Elasticsearch's
error body. When `trigger` is given, the server also offers it as the prompt
`investigate` and the resource `soclab://trigger`.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import ipaddress
import json
import socket
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

from pytest_soclab.bridge.protocol import answer_call, report_from_args
from pytest_soclab.bridge.prompts import SYSTEM_PROMPT, user_prompt
from pytest_soclab.errors import SoclabError
from pytest_soclab.llm import MissingExtraError
from pytest_soclab.llm import compact_json
from pytest_soclab.models import DESTRUCTIVE_TOOLS, READ_TOOLS, REPORT_TOOL, STATE_CHANGING_TOOLS, Tools

TRIGGER_URI = "soclab://trigger"
PROMPT_NAME = "investigate"
MCP_PATH = "/mcp"
INSTRUCTIONS = (
    "soclab: the Elasticsearch security telemetry of one simulated estate. Investigate the trigger (prompt"
    " 'investigate', resource soclab://trigger) with the read tools, which answer like Elasticsearch's"
    " REST API; response actions change simulated hosts only. Call submit_report to end the investigation."
)


def _mcp() -> tuple[Any, Any]:
    """(mcp_types, mcp.server.lowlevel.Server), or a clear error naming the extra."""
    try:
        types = importlib.import_module("mcp_types")
        lowlevel = importlib.import_module("mcp.server.lowlevel")
    except ModuleNotFoundError as exc:
        if exc.name in ("mcp", "mcp_types") or (exc.name or "").startswith("mcp."):
            raise MissingExtraError("mcp", "mcp") from None
        raise
    return types, lowlevel.Server


def _annotations(types: Any, name: str) -> Any:
    return types.ToolAnnotations(
        read_only_hint=name in READ_TOOLS or name == "get_file",
        destructive_hint=name in DESTRUCTIVE_TOOLS if name in STATE_CHANGING_TOOLS else None,
        open_world_hint=False,
    )


def build_server(
    tools: Tools,
    *,
    name: str = "soclab",
    trigger: dict[str, Any] | None = None,
    on_report: Callable[[dict[str, Any]], None] | None = None,
    on_fatal: Callable[[BaseException], None] | None = None,
) -> Any:
    """An MCP server (the SDK's low-level `Server`) exposing `tools`.

    on_report receives each report accepted through submit_report. on_fatal receives any
    exception of the tools other than a ToolError (a budget stop, a harness failure): the
    client then gets a protocol error, and the harness should end the run.
    """
    types, Server = _mcp()

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=spec["name"],
                    description=spec.get("description", ""),
                    input_schema=spec["parameters"],
                    annotations=_annotations(types, spec["name"]),
                )
                for spec in tools.specs()
            ]
        )

    # Tool calls run in a worker thread, one at a time: a slow query must not stall the event loop
    # (pings, listings, other sessions), and the simulator serves one call at a time.
    serial = threading.Lock()

    def answer(name: str, args: dict[str, Any]) -> tuple[bool, Any]:
        with serial:
            return answer_call(tools, name, args)

    async def call_tool(ctx: Any, params: Any) -> Any:
        args = dict(params.arguments or {})
        work = asyncio.get_running_loop().run_in_executor(None, answer, params.name, args)
        try:
            ok, payload = await asyncio.shield(work)
        except asyncio.CancelledError:
            # the client cancelled the request or went away: stop its store work too
            stop = getattr(tools, "interrupt", None)
            if callable(stop):
                stop()
            raise
        except Exception as exc:
            if on_fatal is not None:
                on_fatal(exc)
            raise
        if ok and params.name == REPORT_TOOL and on_report is not None:
            on_report(report_from_args(args))
        return types.CallToolResult(
            content=[types.TextContent(text=compact_json(payload))],
            structured_content=payload if isinstance(payload, dict) else {"result": payload},
            is_error=not ok,
        )

    handlers: dict[str, Any] = {"on_list_tools": list_tools, "on_call_tool": call_tool}
    if trigger is not None:
        trigger_json = json.dumps(trigger, ensure_ascii=False, indent=2, sort_keys=True, default=str)

        async def list_prompts(ctx: Any, params: Any) -> Any:
            return types.ListPromptsResult(
                prompts=[types.Prompt(name=PROMPT_NAME, description="Investigate the trigger of this case.")]
            )

        async def get_prompt(ctx: Any, params: Any) -> Any:
            if params.name != PROMPT_NAME:
                raise ValueError(f"unknown prompt {params.name!r}; the server offers {PROMPT_NAME!r}")
            text = f"{SYSTEM_PROMPT}\n{user_prompt(trigger)}"
            return types.GetPromptResult(
                description="Investigate the trigger of this case.",
                messages=[types.PromptMessage(role="user", content=types.TextContent(text=text))],
            )

        async def list_resources(ctx: Any, params: Any) -> Any:
            return types.ListResourcesResult(
                resources=[
                    types.Resource(
                        name="trigger",
                        uri=TRIGGER_URI,
                        mime_type="application/json",
                        description="The alert or hunt lead to investigate.",
                    )
                ]
            )

        async def read_resource(ctx: Any, params: Any) -> Any:
            if str(params.uri) != TRIGGER_URI:
                raise ValueError(f"unknown resource {params.uri}; the server offers {TRIGGER_URI}")
            return types.ReadResourceResult(
                contents=[
                    types.TextResourceContents(
                        uri=TRIGGER_URI, mime_type="application/json", text=trigger_json
                    )
                ]
            )

        handlers.update(
            on_list_prompts=list_prompts,
            on_get_prompt=get_prompt,
            on_list_resources=list_resources,
            on_read_resource=read_resource,
        )
    return Server(name, version=_version(), instructions=INSTRUCTIONS, **handlers)


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("pytest-soclab")
    except Exception:  # not installed as a distribution (a source checkout)
        return "0"


async def serve_stdio(server: Any) -> None:
    """Serve one client on this process's stdin/stdout until it disconnects.

    A line that is not JSON, or not a JSON-RPC message, is answered with JSON-RPC's error (-32700
    parse error, -32600 invalid request, id null) and the session goes on: the SDK alone drops
    such lines without a word, and a client waits for an answer that never comes."""
    import anyio

    stdio = importlib.import_module("mcp.server.stdio")
    streams = importlib.import_module("mcp.shared._context_streams")
    message = importlib.import_module("mcp.shared.message")
    types = importlib.import_module("mcp_types")
    async with stdio.stdio_server() as (read_stream, write_stream):
        inner_writer, inner_reader = streams.create_context_streams[Any](0)

        async def screen() -> None:
            async with inner_writer:
                async for item in read_stream:
                    if isinstance(item, Exception):
                        await write_stream.send(message.SessionMessage(_protocol_error(types, item)))
                    else:
                        await inner_writer.send(item)

        async with anyio.create_task_group() as tg:
            tg.start_soon(screen)
            await server.run(inner_reader, write_stream, server.create_initialization_options())
            tg.cancel_scope.cancel()


def _protocol_error(types: Any, exc: Exception) -> Any:
    errors = getattr(exc, "errors", None)
    kinds = {e.get("type") for e in errors()} if callable(errors) else set()
    if "json_invalid" in kinds:
        code, text = types.PARSE_ERROR, "Parse error"
    else:
        code, text = types.INVALID_REQUEST, "Invalid Request"
    # what was wrong, not the line itself (which may be megabytes)
    detail = "; ".join(str(e.get("msg", "")) for e in errors()[:3]) if callable(errors) else type(exc).__name__
    return types.JSONRPCError(jsonrpc="2.0", id=None, error=types.ErrorData(code=code, message=text, data=detail))


def check_loopback(host: str) -> None:
    """The HTTP transport listens on loopback only: the tools are for local agents, never the network."""
    if host == "localhost":
        return
    try:
        if ipaddress.ip_address(host).is_loopback:
            return
    except ValueError:
        pass
    raise SoclabError(f"the MCP server listens on loopback only (127.0.0.1, ::1 or localhost), not {host!r}")


@contextlib.asynccontextmanager
async def serving_http(server: Any, host: str = "127.0.0.1", port: int = 0) -> AsyncIterator[str]:
    """Serve streamable HTTP on host:port (0 = an ephemeral port) while the block runs; yields the URL."""
    check_loopback(host)
    try:
        uvicorn = importlib.import_module("uvicorn")
    except ModuleNotFoundError:
        raise MissingExtraError("uvicorn", "mcp") from None
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # Inherited by accepted connections (Linux): without it a streamed response meets the client's
        # delayed ACK, and each tool call of the 2026 protocol era takes ~44 ms instead of ~2 ms.
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise SoclabError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    bound_port = sock.getsockname()[1]
    # A fresh app per serving: the SDK's session manager runs once per app.
    app = server.streamable_http_app(streamable_http_path=MCP_PATH, host=host)
    config = uvicorn.Config(app, log_config=None, log_level="warning", access_log=False, lifespan="on")
    web = uvicorn.Server(config)
    task = asyncio.create_task(web.serve(sockets=[sock]))
    try:
        while not web.started:
            if task.done():
                task.result()  # raises what stopped it
                raise SoclabError(f"the MCP HTTP server on {host}:{bound_port} stopped while starting")
            await asyncio.sleep(0.01)
        url_host = f"[{host}]" if family == socket.AF_INET6 else host
        yield f"http://{url_host}:{bound_port}{MCP_PATH}"
    finally:
        web.should_exit = True
        with contextlib.suppress(Exception):
            await asyncio.wait_for(task, 5)
        if not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
        sock.close()


async def serve_http(
    server: Any, host: str = "127.0.0.1", port: int = 0, *, announce: Callable[[str], None] | None = None
) -> None:
    """Serve streamable HTTP until cancelled (Ctrl-C)."""
    async with serving_http(server, host, port) as url:
        if announce is not None:
            announce(url)
        await asyncio.Event().wait()
