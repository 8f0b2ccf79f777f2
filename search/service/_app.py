"""The ASGI app and its routes: `/healthz`, `/readyz`, `/metrics`, `/v1/browse`, `/mcp`."""

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
from fastapi.responses import JSONResponse, PlainTextResponse

from .._types import ACTIONS, ToolContext
from ._access import Access, Guard
from ._core import Service
from ._metrics import CONTENT_TYPE
from ._models import BrowseBody, BrowseReply
from ._queue import ServiceError
from ._readiness import readiness

log = structlog.get_logger("search.service")


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
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
    )
    app.state.service = service
    _routes(app, service)
    _mount_mcp(app, service)
    app.add_middleware(Guard, access=access, service=service)
    return app


def _routes(app: FastAPI, service: Service) -> None:
    @app.get("/healthz")
    async def healthz() -> dict[str, Any]:
        return {"ok": True, "draining": service.draining}

    @app.get("/readyz")
    async def readyz() -> JSONResponse:
        checks = await asyncio.to_thread(readiness, service.settings)
        ready = all(check["ok"] for check in checks.values())
        return JSONResponse({"ready": ready, "checks": checks}, status_code=200 if ready else 503)

    @app.get("/v1/status")
    async def status() -> dict[str, Any]:
        return service.status()

    @app.get("/metrics", response_class=PlainTextResponse)
    async def metrics() -> PlainTextResponse:
        text = service.metrics.render(service.queue, service.chrome())
        return PlainTextResponse(text, media_type=CONTENT_TYPE)

    @app.post("/v1/browse", response_model=BrowseReply)
    async def browse(body: BrowseBody, request: HttpRequest) -> Any:
        return await _browse(service, body, request)


async def _browse(service: Service, body: BrowseBody, request: HttpRequest) -> Any:
    if body.action not in ACTIONS:
        message = f"action must be one of {', '.join(ACTIONS)}, not {body.action!r}"
        return JSONResponse({"error": message}, status_code=422)
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
            gone=request.is_disconnected,
        )
    except ServiceError as exc:
        service.metrics.reject(body.action, exc.kind)
        bound.info("service.rejected", status=exc.status, failure_kind=exc.kind, reason=str(exc))
        headers = {"Retry-After": str(exc.retry_after_s), "X-Request-Id": request_id}
        payload = {"error": str(exc), "failure_kind": exc.kind}
        return JSONResponse(payload, status_code=exc.status, headers=headers)
    except ValueError as exc:  # the tool's own check of the parameters
        return JSONResponse({"error": str(exc)}, status_code=422)
    bound.info(
        "service.call",
        ok=walk.result is not None,
        provider=walk.result.provider if walk.result else None,
        elapsed_ms=int((time.monotonic() - started) * 1000),
    )
    reply = BrowseReply(result=walk.result, chain=walk.chain)
    return JSONResponse(reply.model_dump(mode="json"), headers={"X-Request-Id": request_id})


def _mount_mcp(app: FastAPI, service: Service) -> None:
    """The MCP streamable HTTP face at `/mcp`, through the same queue and the same guard."""
    from search.mcp import mcp_http_app

    mcp = mcp_http_app(service.walk_or_refusal, settings=service.settings)
    service.lifespan_hooks.append(mcp.running)
    app.router.routes.append(mcp.route("/mcp"))  # exactly /mcp: a mount would redirect
