"""The MCP faces of the tool: `stream-browser mcp` (stdio) and the service's `/mcp` endpoint
(streamable HTTP), on the official `mcp` SDK's low-level server.

Both faces call one async entry with the `BrowseTool.arun` contract, so no action exists
twice. Guards against a host seeing a protocol error or a hang: every failure becomes a tool
error (`isError`) naming its failure kind and fix, and every call is bounded by the call
deadline. On stdio, only protocol frames reach stdout (logs and stray prints go to stderr).

`_tools` declares the tools from the action registry, `_results` turns a walk into a tool
result, `_server` is the protocol server, `_forward` forwards to a running service, `_faces`
holds the HTTP and stdio faces.
"""

from ._faces import (
    McpHttpApp,
    caller_gone,
    mcp_http_app,
    protocol_stdout,
    serve_stdio,
    tools_summary,
)
from ._forward import forward_to, reachable_service, service_for, walk_from_reply
from ._results import error_result, success_result, walk_result
from ._server import build_server, run_tool
from ._tools import (
    TOOLS,
    TOOLS_BY_NAME,
    BrowseCall,
    McpTool,
    ToolFailure,
    call_timeout_s,
    output_schema,
)

__all__ = [
    "TOOLS",
    "TOOLS_BY_NAME",
    "BrowseCall",
    "McpHttpApp",
    "McpTool",
    "ToolFailure",
    "build_server",
    "call_timeout_s",
    "caller_gone",
    "error_result",
    "forward_to",
    "mcp_http_app",
    "output_schema",
    "protocol_stdout",
    "reachable_service",
    "run_tool",
    "serve_stdio",
    "service_for",
    "success_result",
    "tools_summary",
    "walk_from_reply",
    "walk_result",
]
