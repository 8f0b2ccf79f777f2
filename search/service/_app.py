"""The ASGI app and its routes: `/healthz`, `/readyz`, `/metrics`, `/v1/browse`, `/mcp`, the
one error body on every route (validation errors and unknown paths included), and an OpenAPI
schema that says what the service does (the bearer scheme, every error status)."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import AsyncIterator
from typing import Any

import structlog
from fastapi import FastAPI
from fastapi import Request as HttpRequest
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import JSONResponse, PlainTextResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from .._routing import Walk
from .._types import ToolContext
from .._version import version
from ..client import CLI_AGENT, MCP_AGENT
from ._access import TOKEN_FIX, Access, Guard
from ._core import Service
from ._models import BrowseBody, BrowseReply, ErrorBody, error_body
from ._queue import Draining, QueueFull, ServiceError
from ._readiness import readiness

log = structlog.get_logger("search.service")

_ERRORS: dict[int, str] = {
    400: "the body is not JSON, nests too deep, or is not valid Unicode",
    401: "no token, or the wrong one (`Authorization: Bearer TOKEN`)",
    403: "sent by a web page (Origin, Sec-Fetch-Site) or to a Host that is not this service",
    413: "the body is over 64 KiB",
    422: "an argument is not valid (the message names it)",
    429: "the queue is full: retry after Retry-After seconds",
    503: "the service is shutting down: retry after Retry-After seconds",
}
_RETRY_AFTER = {"Retry-After": {"description": "seconds to wait", "schema": {"type": "integer"}}}
_FIXES: dict[type[ServiceError], str] = {
    QueueFull: "the service is busy with other calls: retry after Retry-After seconds",
    Draining: "the service is shutting down: retry once it is back",
}


def create_app(service: Service, access: Access) -> FastAPI:
    """The ASGI app. Faces are added with `app.mount(...)` (behind the same `Guard`) and
    `service.lifespan_hooks` (entered for the life of the app)."""

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            for hook in service.lifespan_hooks:
                await stack.enter_async_context(hook())
            try:
                yield
            finally:
                await service.close()

    app = FastAPI(
        title="stream-browser",
        summary="the broadcast Chrome as a service: search, read, play, Gemini fallback",
        version=version(),
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
    )
    app.state.service = service
    _error_handlers(app)
    _routes(app, service)
    _mount_mcp(app, service)
    console = _console(service, access)
    app.add_middleware(Guard, access=access, service=service, console=console)
    app.openapi = lambda: _openapi(app)  # type: ignore[method-assign]
    return app


def _console(service: Service, access: Access) -> Any:
    """`/console` (search.console), told of every call; the guard hands it its paths."""
    from search.console import Console

    console = Console(service, access)
    service.watcher = console
    return console


def face_of(request: HttpRequest) -> str:
    """Which face a `/v1/browse` call came through: the CLI and the stdio MCP server name
    themselves, else HTTP."""
    agent = request.headers.get("user-agent", "").split("/", 1)[0].strip()
    return {CLI_AGENT: "cli", MCP_AGENT: "mcp"}.get(agent, "http")


def _responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    return {
        status: {
            "model": ErrorBody,
            "description": _ERRORS[status],
            **({"headers": _RETRY_AFTER} if status in (429, 503) else {}),
        }
        for status in statuses
    }


def _routes(app: FastAPI, service: Service) -> None:
    @app.get("/healthz")
    async def healthz() -> dict[str, Any]:
        return {"ok": True, "draining": service.draining, "version": version()}

    @app.get("/readyz", responses=_responses(401, 403, 503))
    async def readyz() -> JSONResponse:
        checks = await asyncio.to_thread(readiness, service.settings)
        ready = all(check["ok"] for check in checks.values())
        return JSONResponse({"ready": ready, "checks": checks}, status_code=200 if ready else 503)

    @app.get("/v1/status", responses=_responses(401, 403, 503))
    async def status() -> dict[str, Any]:
        return service.status()

    @app.get("/metrics", response_class=PlainTextResponse, responses=_responses(401, 403, 503))
    async def metrics() -> PlainTextResponse:
        text = service.metrics.render(
            service.queue, service.chrome(), service.alerts(), service.engines(), service.parses()
        )
        return PlainTextResponse(text, media_type="text/plain; version=0.0.4")

    @app.post(
        "/v1/browse",
        response_model=BrowseReply,
        responses=_responses(400, 401, 403, 413, 422, 429, 503),
    )
    async def browse(body: BrowseBody, request: HttpRequest) -> Any:
        return await _browse(service, body, request)


def _error_handlers(app: FastAPI) -> None:
    """FastAPI's own errors (`{"detail"}`) in the one error body."""

    @app.exception_handler(RequestValidationError)
    async def invalid(_request: HttpRequest, exc: RequestValidationError) -> JSONResponse:
        message = "; ".join(_problem(error) for error in exc.errors()[:3]) or "not valid"
        fix = "fix the named argument and call again (see /openapi.json)"
        return JSONResponse(error_body(422, message, fix), status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_request: HttpRequest, exc: StarletteHTTPException) -> JSONResponse:
        fix = "see /openapi.json for the routes and their methods"
        return JSONResponse(
            error_body(exc.status_code, str(exc.detail), fix),
            status_code=exc.status_code,
            headers=exc.headers,
        )


def _problem(error: dict[str, Any]) -> str:
    """`read_top: Input should be less than or equal to 3` (never the input itself)."""
    where = ".".join(str(part) for part in error.get("loc", ()) if part != "body")
    message = str(error.get("msg", "not valid")).removeprefix("Value error, ")
    return f"{where}: {message}" if where else message


async def _browse(service: Service, body: BrowseBody, request: HttpRequest) -> Any:
    request_id = secrets.token_hex(6)
    started = time.monotonic()
    ctx = ToolContext(broadcasting=body.broadcasting, request_id=request_id)
    bound = log.bind(request_id=request_id, action=body.action)
    try:
        walk = await service.call(
            body.query,
            action=body.action,
            url=body.url,
            ctx=ctx,
            read_top=body.read_top,
            engine=body.engine,
            gone=request.is_disconnected,
            face=face_of(request),
        )
    except ServiceError as exc:
        service.metrics.reject(body.action, exc.kind)
        bound.info("service.rejected", status=exc.status, failure_kind=exc.kind, reason=str(exc))
        headers = {"Retry-After": str(exc.retry_after_s), "X-Request-Id": request_id}
        fix = _FIXES.get(type(exc), "retry shortly")
        payload = error_body(exc.status, str(exc), fix, kind=exc.kind)
        return JSONResponse(payload, status_code=exc.status, headers=headers)
    except ValueError as exc:  # the tool's own check of the parameters
        fix = "fix the arguments and call again"
        return JSONResponse(error_body(422, str(exc), fix), status_code=422)
    bound.info(
        "service.call",
        ok=walk.result is not None,
        provider=walk.result.provider if walk.result else None,
        elapsed_ms=int((time.monotonic() - started) * 1000),
    )
    reply = BrowseReply(result=walk.result, chain=walk.chain)
    return JSONResponse(reply.model_dump(mode="json"), headers={"X-Request-Id": request_id})


def _mount_mcp(app: FastAPI, service: Service) -> None:
    """The MCP streamable HTTP face at `/mcp`, through the same queue and the same guard; a
    caller that hung up while it waited in line is skipped, as on `/v1/browse`."""
    from search.mcp import caller_gone, mcp_http_app

    async def call(
        query: str,
        *,
        action: str,
        url: str | None,
        ctx: ToolContext,
        engine: str | None = None,
    ) -> Walk:
        return await service.walk_or_refusal(
            query, action=action, url=url, ctx=ctx, engine=engine, gone=caller_gone()
        )

    mcp = mcp_http_app(call, settings=service.settings)
    service.lifespan_hooks.append(mcp.running)
    app.router.routes.append(mcp.route("/mcp"))  # exactly /mcp: a mount would redirect


def _openapi(app: FastAPI) -> dict[str, Any]:
    """FastAPI's schema plus what the guard does: the bearer scheme on every route but
    `/healthz`, its refusals, and `/mcp` (a plain route FastAPI does not describe)."""
    if app.openapi_schema is not None:
        return app.openapi_schema
    schema = get_openapi(
        title=app.title, version=app.version, summary=app.summary, routes=app.routes
    )
    components = schema.setdefault("components", {})
    components.setdefault("securitySchemes", {})["bearer"] = {
        "type": "http",
        "scheme": "bearer",
        "description": "the service token: " + TOKEN_FIX,
    }
    schema["security"] = [{"bearer": []}]
    schema["paths"]["/mcp"] = {"post": _mcp_operation()}
    for path, item in schema["paths"].items():
        for operation in item.values():
            if path == "/healthz":
                operation["security"] = []
                continue
            for status in (401, 403, 503):
                operation["responses"].setdefault(str(status), _error_ref(status))
            for status, response in operation["responses"].items():
                if status.startswith(("4", "5")):  # JSON, whatever the route's own type
                    response["content"] = _error_ref(int(status))["content"]
    app.openapi_schema = schema
    return schema


def _error_ref(status: int) -> dict[str, Any]:
    content = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}
    extra = {"headers": _RETRY_AFTER} if status in (429, 503) else {}
    return {"description": _ERRORS[status], "content": content, **extra}


def _mcp_operation() -> dict[str, Any]:
    message = {"type": "object", "description": "a JSON-RPC 2.0 message (MCP)"}
    return {
        "summary": "MCP over streamable HTTP (stateless, JSON replies)",
        "operationId": "mcp",
        "requestBody": {"required": True, "content": {"application/json": {"schema": message}}},
        "responses": {
            "200": {
                "description": "the JSON-RPC answer",
                "content": {"application/json": {"schema": message}},
            },
            "202": {"description": "a notification or response, accepted"},
            **{str(status): _error_ref(status) for status in (400, 401, 403, 413, 503)},
        },
    }
