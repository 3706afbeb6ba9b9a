"""`soclab query`: the tools from a shell, printing Elasticsearch-shaped JSON.

Two ways to reach the tools:
- inside a benchmark item (an `mcp:COMMAND` agent that shells out): SOCLAB_MCP_URL is set,
  and every call goes through that item's simulator, guard and transcript;
- standalone, on a case (`--case CASE` or `--scenario FILE`): for exploring a case by hand.

The result is printed on stdout as JSON (or, with `--format table`, as an aligned text
table); an Elasticsearch error is printed as JSON (its error body) and the exit status is 1.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from pytest_soclab.errors import EsError, SoclabError
from pytest_soclab.cli.args import add_case_options, session_from_args
from pytest_soclab.cli.table import render

URL_ENV = "SOCLAB_MCP_URL"


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "query",
        help="call a tool (ES|QL, search, mappings, indices, actions) and print Elasticsearch-shaped JSON",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    verbs = p.add_subparsers(dest="verb", metavar="VERB", required=True)

    def common(v: argparse.ArgumentParser) -> None:
        add_case_options(v)
        v.add_argument("--mcp-url", default=os.environ.get(URL_ENV), help=f"an item's MCP endpoint (default ${URL_ENV})")
        v.add_argument("--compact", action="store_true", help="one line of JSON instead of indented")
        v.add_argument("--format", choices=("json", "table"), default="json",
                       help="json (default: what Elasticsearch answers) or table (rows and columns, for reading)")  # fmt: skip
        v.set_defaults(func=run)

    v = verbs.add_parser("esql", help="POST /_query: an ES|QL query")
    v.add_argument("query", help='e.g. "FROM logs-* | STATS n = COUNT(*) BY host.name"')
    v.add_argument("--params", help="JSON list of values for ? placeholders")
    v.add_argument("--columnar", action="store_true",
                   help="answer with one list of values per column instead of one per row (ES|QL's columnar)")  # fmt: skip
    common(v)
    v = verbs.add_parser("search", help="POST /INDEX/_search: a Query DSL search")
    v.add_argument("index")
    v.add_argument("--body", default="{}", help="the request body as JSON, or @FILE")
    common(v)
    v = verbs.add_parser("mappings", help="GET /INDEX/_mapping")
    v.add_argument("index")
    common(v)
    v = verbs.add_parser("indices", help="GET /_cat/indices/PATTERN?format=json")
    v.add_argument("pattern", nargs="?", default="*")
    common(v)
    v = verbs.add_parser("call", help="any tool by name, e.g. isolate_host or submit_report")
    v.add_argument("tool")
    v.add_argument("--args", default="{}", help="the tool's arguments as a JSON object, or @FILE")
    common(v)


def _json_arg(text: str, what: str) -> Any:
    if text.startswith("@"):
        try:
            text = Path(text[1:]).read_text(encoding="utf-8")
        except OSError as exc:
            raise SoclabError(f"{what}: cannot read {text[1:]}: {exc.strerror or exc}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise SoclabError(f"{what} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None


def tool_call(args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    if args.verb == "esql":
        call: dict[str, Any] = {"query": args.query}
        if args.params:
            call["params"] = _json_arg(args.params, "--params")
        if args.columnar:
            call["columnar"] = True
        return "esql_query", call
    if args.verb == "search":
        body = _json_arg(args.body, "--body")
        if not isinstance(body, dict):
            raise SoclabError("--body must be a JSON object")
        return "es_search", {"index": args.index, "body": body}
    if args.verb == "mappings":
        return "get_mappings", {"index": args.index}
    if args.verb == "indices":
        return "list_indices", {"pattern": args.pattern}
    call_args = _json_arg(args.args, "--args")
    if not isinstance(call_args, dict):
        raise SoclabError("--args must be a JSON object")
    return args.tool, call_args


def call_over_mcp(url: str, tool: str, call_args: dict[str, Any]) -> tuple[bool, Any]:
    from mcp import Client

    async def main() -> tuple[bool, Any]:
        async with Client(url) as client:
            res = await client.call_tool(tool, call_args)
            payload = res.structured_content
            if payload is None and res.content:
                payload = json.loads(res.content[0].text)
            return not res.is_error, payload

    try:
        return asyncio.run(main())
    except OSError as exc:
        raise SoclabError(f"cannot reach the MCP endpoint {url}: {exc}") from None


def call_standalone(args: argparse.Namespace, tool: str, call_args: dict[str, Any]) -> tuple[bool, Any]:

    sim = session_from_args(args).simulator
    try:
        return True, sim.call(tool, call_args)
    except EsError as err:
        return False, err.body()
    finally:
        sim.close()


def run(args: argparse.Namespace) -> int:
    tool, call_args = tool_call(args)
    if args.mcp_url:
        ok, payload = call_over_mcp(args.mcp_url, tool, call_args)
    else:
        ok, payload = call_standalone(args, tool, call_args)
    if ok and args.format == "table":
        print(render(tool, payload, columnar=bool(getattr(args, "columnar", False))))
        return 0
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":")) if args.compact else json.dumps(
        payload, indent=2, ensure_ascii=False
    )
    print(text)
    return 0 if ok else 1
