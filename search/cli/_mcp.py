"""`stream-browser mcp`: the tools for an MCP host (desktop assistant, IDE, agent) over stdio.

Where the calls go (`--via`): to a running `stream-browser serve` when one answers (it is the
one owner of the screen, and its queue orders the host's calls with the brain's), else to a
`BrowseTool` in this process. The choice is made once at start, so two drivers never take
turns on the tab. Kept apart from `search.mcp` so other commands do not import the MCP SDK
(about 0.5 s). stdout carries only the protocol; logs go to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

import structlog

from browser_core import Settings

log = structlog.get_logger(__name__)
EXIT_OK, EXIT_USAGE = 0, 2


def register(sub: Any) -> None:
    mcp = sub.add_parser(
        "mcp",
        help="serve browse/play/pause/resume/stop/status to an MCP host over stdio",
        description="Serve the tools to an MCP host over stdin/stdout (configure the host "
        "with the command `stream-browser mcp`; see docs/mcp.md). Logs go to stderr.",
    )
    mcp.add_argument(
        "--via",
        choices=("auto", "service", "local"),
        default="auto",
        help="auto (default): the running service if it answers, else this process; "
        "service: always the service (SB_SERVICE_URL, SB_SERVICE_TOKEN); local: this process",
    )
    mcp.add_argument(
        "--replay",
        metavar="NAME_OR_HAR",
        help="serve the network from a recording (offline; implies --via local)",
    )
    mcp.add_argument(
        "--list", action="store_true", help="print the tool definitions as JSON lines and exit"
    )
    mcp.set_defaults(func=cmd_mcp)


def cmd_mcp(args: argparse.Namespace, app: Any) -> int:
    from search import mcp as _mcp

    if args.list:
        print(_mcp.tools_summary())
        return EXIT_OK
    if args.replay and args.via == "service":
        print(
            "stream-browser mcp: --replay needs --via local (the service owns its network)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    settings: Settings = app.settings  # configures logging (stderr) before anything logs
    asyncio.run(_serve(args, settings))
    return EXIT_OK


async def _serve(args: argparse.Namespace, settings: Settings) -> None:
    from search import mcp as _mcp

    timeout_s = _mcp.call_timeout_s(settings)
    service = None
    if args.via == "service":  # even if it is down now: calls say so until it is back
        service = _mcp.service_for(settings)  # None only with SB_SERVICE_URL=off
    elif args.via == "auto" and not args.replay:
        service = await asyncio.to_thread(_mcp.reachable_service, settings)
    if service is not None:
        log.info("mcp.via", via="service", url=service.url)
        await _mcp.serve_stdio(_mcp.forward_to(service, timeout_s - 1.0), timeout_s=timeout_s)
        return
    await _serve_local(args, settings, timeout_s)


async def _serve_local(args: argparse.Namespace, settings: Settings, timeout_s: float) -> None:
    from search import mcp as _mcp
    from search._tool import BrowseTool
    from search.cli._core import _driver

    log.info("mcp.via", via="local", cdp=settings.cdp_endpoint)
    tool = BrowseTool(settings, driver=_driver(args, settings))
    try:
        await _mcp.serve_stdio(tool.arun, timeout_s=timeout_s)
    finally:
        await tool.driver.close()
        log.info("mcp.stdio_closed")
