"""The two faces: the service's streamable HTTP endpoint and stdio (only protocol frames on
stdout)."""

from __future__ import annotations

import contextlib
import contextvars
import io
import json
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio
import structlog
from mcp.server.stdio import stdio_server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.routing import Route

from browser_core import Settings

from ._server import build_server
from ._tools import (
    TOOLS,
    BrowseCall,
    call_timeout_s,
    output_schema,
)

log = structlog.get_logger(__name__)

Gone = Callable[[], Awaitable[bool]]
_CALLER_GONE: contextvars.ContextVar[Gone | None] = contextvars.ContextVar(
    "mcp_caller_gone", default=None
)


def caller_gone() -> Gone | None:
    """For the tool call running now: a check that its HTTP caller hung up (None on stdio).
    The service skips a queued call whose caller is gone, as it does on `/v1/browse`."""
    return _CALLER_GONE.get()


def _disconnect_check(receive: Any) -> Gone:
    """True once the client has closed the connection (the body is read by then): a
    receive that does not wait, as Starlette's `Request.is_disconnected`."""

    async def gone() -> bool:
        with anyio.CancelScope() as scope:
            scope.cancel()
            message = await receive()
            return bool(message.get("type") == "http.disconnect")
        return False

    return gone


class McpHttpApp:
    """The streamable HTTP endpoint as an ASGI app, to be routed at `/mcp` by the service.

    Stateless and JSON-only (no session to lose between requests, no stream to hold open);
    the service's middleware does the token and Origin/Host checks before a request gets
    here. The service must enter `running()` in its lifespan (the SDK's session manager
    needs a task group for the life of the app).
    """

    def __init__(self, call: BrowseCall, *, timeout_s: float) -> None:
        self.server = build_server(call, timeout_s=timeout_s)
        self.manager = StreamableHTTPSessionManager(
            app=self.server, json_response=True, stateless=True
        )

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        async with self.manager.run():
            yield

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        token = _CALLER_GONE.set(_disconnect_check(receive))
        try:
            await self.manager.handle_request(scope, receive, send)
        finally:
            _CALLER_GONE.reset(token)

    def route(self, path: str = "/mcp") -> Route:
        """This app as a route at exactly `path` (a mount would answer `/mcp` with a redirect
        to `/mcp/`); add it with `app.router.routes.append(...)`.

        POST only: stateless JSON has no session to delete and offers no server-to-client
        stream, so GET and DELETE get 405 (as the MCP spec allows). The SDK would answer a
        GET with an SSE stream that is never closed, one per host session or per request.
        """
        return Route(path, endpoint=self, methods=["POST"])


def mcp_http_app(call: BrowseCall, *, settings: Settings) -> McpHttpApp:
    """The ASGI app the service routes at `/mcp` (see `McpHttpApp.route`) and enters
    `running()` for its life."""
    return McpHttpApp(call, timeout_s=call_timeout_s(settings))


@contextlib.contextmanager
def protocol_stdout() -> Any:
    """Keep fd 1 for the protocol alone: yield it as a text stream, point fd 1 at stderr.

    Anything else that writes to stdout (a stray print, a child process inheriting fd 1)
    then lands on stderr instead of corrupting the JSON-RPC stream.
    """
    sys.stdout.flush()
    proto_fd = os.dup(1)
    os.dup2(2, 1)
    saved = sys.stdout
    sys.stdout = sys.stderr
    stream = io.TextIOWrapper(os.fdopen(proto_fd, "wb", buffering=0), encoding="utf-8")
    try:
        yield stream
    finally:
        sys.stdout = saved
        with contextlib.suppress(OSError, ValueError):
            stream.close()


async def serve_stdio(call: BrowseCall, *, timeout_s: float) -> None:
    """Serve the tools over stdin/stdout until the host closes stdin."""
    server = build_server(call, timeout_s=timeout_s)
    with protocol_stdout() as out:
        stdin = anyio.wrap_file(
            io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")
        )
        async with stdio_server(stdin=stdin, stdout=anyio.wrap_file(out)) as (read, write):
            log.info("mcp.stdio_ready", tools=[tool.name for tool in TOOLS])
            await server.run(read, write, server.create_initialization_options())


def tools_summary() -> str:
    """The tool list as JSON lines (for `stream-browser mcp --list`)."""
    schema = output_schema()
    return "\n".join(
        json.dumps(tool.definition(schema).model_dump(mode="json", exclude_none=True))
        for tool in TOOLS
    )
