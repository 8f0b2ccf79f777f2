"""`stream-browser mcp`: the tools for an MCP host (desktop assistant, IDE, agent) over stdio.

Kept apart from `search._mcp` so the CLI does not import the MCP SDK (about 0.5 s) for
every other command. stdout carries only the protocol; logs go to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

import structlog

from browser_core import Settings

log = structlog.get_logger(__name__)

EXIT_OK = 0


def register(sub: Any) -> None:
    mcp = sub.add_parser(
        "mcp",
        help="serve browse/play/pause/resume/stop/status to an MCP host over stdio",
        description="Serve the tools to an MCP host over stdin/stdout (configure the host "
        "with the command `stream-browser mcp`; see docs/mcp.md). Logs go to stderr.",
    )
    mcp.add_argument(
        "--replay", metavar="NAME_OR_HAR", help="serve the network from a recording (offline)"
    )
    mcp.add_argument(
        "--list", action="store_true", help="print the tool definitions as JSON lines and exit"
    )
    mcp.set_defaults(func=cmd_mcp)


def cmd_mcp(args: argparse.Namespace, app: Any) -> int:
    from search import _mcp

    if args.list:
        print(_mcp.tools_summary())
        return EXIT_OK
    settings: Settings = app.settings  # configures logging (stderr) before anything logs
    asyncio.run(_serve(args, settings))
    return EXIT_OK


async def _serve(args: argparse.Namespace, settings: Settings) -> None:
    from search import _mcp
    from search._cli_core import _driver
    from search._tool import BrowseTool

    tool = BrowseTool(settings, driver=_driver(args, settings))
    try:
        await _mcp.serve_stdio(tool.arun, deadline_s=settings.call_deadline_s)
    finally:
        await tool.driver.close()
        log.info("mcp.stdio_closed")
