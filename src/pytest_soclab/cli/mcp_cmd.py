"""`soclab mcp --case CASE [--mode protected] [--transport stdio|http]`: a case's tools over MCP.

Points an MCP-capable assistant at a simulated estate: the read tools, the
scenario's action tools and submit_report, backed by the simulator and (in
protected mode) the guard. stdio for assistants that start their servers
themselves; streamable HTTP on loopback for the others.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from pytest_soclab.errors import SoclabError
from pytest_soclab.cli.args import add_case_options, session_from_args
from pytest_soclab.models import Tools


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "mcp",
        help="serve a case's tools over MCP (stdio or HTTP on loopback)",
        description="Serve the tools of a simulated case over the Model Context Protocol.",
    )
    add_case_options(p)
    p.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    p.add_argument("--host", default="127.0.0.1", help="HTTP: a loopback address (default 127.0.0.1)")
    p.add_argument(
        "--port", type=int, default=8765, help="HTTP: the port (default 8765, 0 for any free port)"
    )
    p.set_defaults(func=run)


def case_tools(args: argparse.Namespace) -> tuple[Tools, dict[str, Any] | None]:
    """The simulator's tools for --case (and --scenario, --mode), and the trigger to offer, if any."""
    session = session_from_args(args)
    return session.simulator.tools(), session.trigger


def run(args: argparse.Namespace) -> int:
    from pytest_soclab.bridge import build_server, check_loopback, serve_http, serve_stdio

    if args.transport == "http":
        check_loopback(args.host)
        if not 0 <= args.port <= 65535:
            raise SoclabError(f"--port must be between 0 and 65535, got {args.port}")
    tools, trigger = case_tools(args)

    def on_report(report: dict[str, Any]) -> None:
        print(
            f"soclab mcp: report received ({len(report['markdown'])} characters of markdown)", file=sys.stderr
        )

    server = build_server(tools, trigger=trigger, on_report=on_report)
    if args.transport == "stdio":
        asyncio.run(serve_stdio(server))
    else:
        asyncio.run(
            serve_http(
                server,
                args.host,
                args.port,
                announce=lambda url: print(f"soclab mcp: serving {url}", file=sys.stderr, flush=True),
            )
        )
    return 0
