"""Serves FakeTools over MCP on stdio, for the stdio round-trip test."""

from __future__ import annotations

import asyncio
import json
import sys

from fake_tools import FakeTools

from pytest_soclab.bridge.mcp_server import build_server, serve_stdio

trigger = json.loads(sys.argv[1])
asyncio.run(serve_stdio(build_server(FakeTools(), trigger=trigger)))
