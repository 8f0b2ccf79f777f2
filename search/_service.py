"""`stream-browser serve`: one long-lived process owns the broadcast Chrome; callers are clients.

One `BrowseTool` (one driver, one owned tab) behind one bounded FIFO queue: every caller, the
standard-library client, the CLI and MCP hosts alike, waits its turn, so two callers never
drive the screen at once (a state file is not a lock; a process is). Guards against a page in
a browser on this machine driving the service (bearer token, `Origin` and `Host` checks for
DNS rebinding, a body limit) and against a lost call on shutdown (SIGTERM drains: the running
call finishes within its deadline, new ones get 503, exit 0, Chrome keeps running).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import hmac
import ipaddress
import math
import os
import secrets
import socket
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import h11
import structlog
import uvicorn
from fastapi import FastAPI
from fastapi import Request as HttpRequest
from fastapi.responses import JSONResponse, PlainTextResponse
from pydantic import BaseModel, ConfigDict, Field
from uvicorn.protocols.http.h11_impl import H11Protocol

from browser_core import (
    CdpUnreachable,
    FailureKind,
    Hop,
    Settings,
    ToolExecutionResult,
    cdp_version,
    configure_logging,
    egress_status,
)
from search._routing import Walk
from search._tool import BrowseTool
from search._types import ACTIONS, ToolContext
from search.client import TOKEN_FILE_NAME

log = structlog.get_logger("search.service")

MAX_BODY_BYTES = 64 * 1024
# A request (head and body) must have arrived this long after its connection opened or the
# previous answer was sent (a loopback client sends it in milliseconds), else it is closed.
REQUEST_TIMEOUT_S = 10.0
# Connections open at once; more are closed on arrival, so idle sockets cannot take every
# file descriptor the process has (systemd's default soft limit is 1024).
MAX_CONNECTIONS = 128
LATENCY_BUCKETS_S = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 25.0, 60.0)
UNAUTHENTICATED_PATHS = frozenset({"/healthz"})
# What a browser adds to every request it makes on a page's behalf (a non-browser client
# such as urllib, curl or httpx sends none of them).
_BROWSER_HEADERS = (b"origin", b"sec-fetch-site", b"sec-fetch-mode")


class ServiceError(Exception):
    """A call the service did not run; `status` is the HTTP status it answers with."""

    status = 500
    kind = FailureKind.SERVICE_UNAVAILABLE

    def __init__(self, message: str, retry_after_s: int = 1) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class QueueFull(ServiceError):
    status = 429
    kind = FailureKind.QUEUE_FULL


class Draining(ServiceError):
    status = 503
    kind = FailureKind.SERVICE_UNAVAILABLE


# -- request and response bodies -------------------------------------------------------------


class BrowseBody(BaseModel):
    """`POST /v1/browse`: the tool's parameters, as the LLM declaration names them."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(default="", max_length=2000, description="what to look for")
    action: str = Field(default="auto", description="one of " + ", ".join(ACTIONS))
    url: str | None = Field(default=None, max_length=4096, description="for `read`")
    broadcasting: bool | None = Field(
        default=None, description="is the stream live? null: follow STREAM_BROWSER"
    )
    read_top: int = Field(default=0, ge=0, le=3, description="`search`: also read the top N")


class BrowseReply(BaseModel):
    """The library's answer (`null` when every provider failed) and every provider tried."""

    result: ToolExecutionResult | None
    chain: list[Hop]


# -- the queue -------------------------------------------------------------------------------


class CallQueue:
    """First come, first served, one call at a time; at most `max_waiting` wait behind it.

    `asyncio.Lock` hands the lock to its waiters in the order they asked, so arrival order is
    service order; a call that would wait beyond the bound is refused at once (429).
    """

    def __init__(self, max_waiting: int) -> None:
        self.max_waiting = max_waiting
        self.waiting = 0
        self.running: str | None = None
        self.running_since = 0.0
        self.tickets = 0
        self._lock = asyncio.Lock()
        self._recent_s: list[float] = []

    @contextlib.asynccontextmanager
    async def turn(self, label: str) -> AsyncIterator[int]:
        """Wait for the turn; yields the call's ticket (its place in arrival order)."""
        if self.waiting >= self.max_waiting:
            raise QueueFull(
                f"{self.waiting} calls are already waiting (SB_QUEUE_MAX={self.max_waiting})",
                retry_after_s=self.retry_after_s(),
            )
        self.tickets += 1
        ticket, arrived = self.tickets, time.monotonic()
        self.waiting += 1
        try:
            await self._lock.acquire()
        finally:
            self.waiting -= 1
        self.running, self.running_since = label, time.monotonic()
        log.info("service.turn", ticket=ticket, action=label, waited_ms=_ms_since(arrived))
        try:
            yield ticket
        finally:
            self._recent_s = [*self._recent_s[-19:], time.monotonic() - self.running_since]
            self.running = None
            self._lock.release()

    def retry_after_s(self) -> int:
        """Whole seconds until a place is likely free: the recent mean call times the line."""
        mean = sum(self._recent_s) / len(self._recent_s) if self._recent_s else 1.0
        return max(1, min(60, math.ceil(mean * (self.waiting + 1))))

    @property
    def idle(self) -> bool:
        return self.running is None and self.waiting == 0


def _ms_since(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


# -- metrics ---------------------------------------------------------------------------------


@dataclass
class Metrics:
    """Counters for `/metrics`, written in the Prometheus text format (version 0.0.4).

    Written by hand rather than with `prometheus_client`: five families, no extra dependency
    and no process-global registry to reset between tests.
    """

    calls: Counter[tuple[str, str]] = field(default_factory=Counter)  # (action, outcome)
    hops: Counter[tuple[str, str]] = field(default_factory=Counter)  # (provider, failure kind)
    buckets: Counter[float] = field(default_factory=Counter)
    latency_sum_s: float = 0.0
    latency_count: int = 0

    def observe(self, action: str, walk: Walk, elapsed_s: float) -> None:
        result = walk.result
        outcome = "none" if result is None else ("ok" if result.success else "unsuccessful")
        self.calls[(action, outcome)] += 1
        for hop in walk.chain:
            self.hops[(hop.provider, str(hop.failure_kind or "none"))] += 1
        self.latency_sum_s += elapsed_s
        self.latency_count += 1
        for bound in LATENCY_BUCKETS_S:
            if elapsed_s <= bound:
                self.buckets[bound] += 1

    def reject(self, action: str, kind: str) -> None:
        self.calls[(action, kind)] += 1

    def render(self, queue: CallQueue, chrome: dict[str, Any]) -> str:
        lines: list[str] = []
        _family(lines, "stream_browser_calls_total", "counter", "calls by action and outcome")
        for (action, outcome), n in sorted(self.calls.items()):
            lines.append(f'stream_browser_calls_total{{action="{action}",outcome="{outcome}"}} {n}')
        _family(lines, "stream_browser_hops_total", "counter", "providers tried, by failure kind")
        for (provider, kind), n in sorted(self.hops.items()):
            lines.append(
                f'stream_browser_hops_total{{provider="{provider}",failure_kind="{kind}"}} {n}'
            )
        self._render_latency(lines)
        _family(lines, "stream_browser_queue_waiting", "gauge", "calls waiting for their turn")
        lines.append(f"stream_browser_queue_waiting {queue.waiting}")
        _family(lines, "stream_browser_queue_running", "gauge", "1 while a call runs")
        lines.append(f"stream_browser_queue_running {int(queue.running is not None)}")
        _family(lines, "stream_browser_chrome_up", "gauge", "1 when the broadcast Chrome answers")
        lines.append(f"stream_browser_chrome_up {int(bool(chrome.get('up')))}")
        _family(lines, "stream_browser_chrome_reconnects_total", "counter", "CDP reconnects")
        lines.append(f"stream_browser_chrome_reconnects_total {int(chrome.get('reconnects', 0))}")
        return "\n".join(lines) + "\n"

    def _render_latency(self, lines: list[str]) -> None:
        name = "stream_browser_call_seconds"
        _family(lines, name, "histogram", "time from a call's turn to its answer")
        for bound in LATENCY_BUCKETS_S:
            lines.append(f'{name}_bucket{{le="{bound}"}} {self.buckets[bound]}')
        lines.append(f'{name}_bucket{{le="+Inf"}} {self.latency_count}')
        lines.append(f"{name}_sum {self.latency_sum_s:.6f}")
        lines.append(f"{name}_count {self.latency_count}")


def _family(lines: list[str], name: str, kind: str, text: str) -> None:
    lines += [f"# HELP {name} {text}", f"# TYPE {name} {kind}"]


# -- the service -----------------------------------------------------------------------------

LifespanHook = Callable[[], AbstractAsyncContextManager[Any]]


@dataclass
class Service:
    """The tool, its queue and counters. `call` is the one entry every face of the service
    uses (HTTP and MCP alike); it runs `BrowseTool.arun` on the tool's own loop thread."""

    settings: Settings
    tool: BrowseTool
    queue: CallQueue
    metrics: Metrics = field(default_factory=Metrics)
    draining_since: float | None = None
    started: float = field(default_factory=time.monotonic)
    lifespan_hooks: list[LifespanHook] = field(default_factory=list)

    @classmethod
    def create(cls, settings: Settings, tool: BrowseTool | None = None) -> Service:
        return cls(settings, tool or BrowseTool(settings), CallQueue(settings.queue_max))

    @property
    def draining(self) -> bool:
        return self.draining_since is not None

    def drain(self) -> None:
        """Stop taking calls; the running one finishes (SIGTERM)."""
        if self.draining_since is None:
            self.draining_since = time.monotonic()

    def may_exit(self) -> bool:
        """Draining and idle, or the running call overran its deadline by a wide margin."""
        if self.draining_since is None:
            return False
        overdue = time.monotonic() - self.draining_since > self.settings.call_deadline_s + 5
        return self.queue.running is None or overdue

    async def call(
        self,
        query: str,
        *,
        action: str = "auto",
        url: str | None = None,
        ctx: ToolContext | None = None,
        read_top: int = 0,
        gone: Callable[[], Awaitable[bool]] | None = None,
    ) -> Walk:
        """Wait for the turn, run the tool. Raises `QueueFull` or `Draining` (not run)."""
        if self.draining:
            raise Draining("the service is shutting down", retry_after_s=5)
        async with self.queue.turn(action):
            if self.draining:
                raise Draining("the service is shutting down", retry_after_s=5)
            if gone is not None and await gone():  # its caller stopped waiting: skip it
                log.info("service.skipped", action=action, reason="client disconnected")
                raise Draining("the caller went away")
            started = time.monotonic()
            coro = self.tool.arun(query, action=action, url=url, ctx=ctx, read_top=read_top)
            walk = await self._on_tool_loop(coro)
            self.metrics.observe(action, walk, time.monotonic() - started)
            return walk

    async def _on_tool_loop(self, coro: Coroutine[Any, Any, Walk]) -> Walk:
        """Run on the tool's loop thread (as in-process callers do): parsing a heavy page
        there never stalls the HTTP loop's health checks and 429s."""
        future = asyncio.run_coroutine_threadsafe(coro, self.tool.loop.loop)
        limit = getattr(self.tool, "outer_timeout_s", self.settings.call_deadline_s) + 5.0
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), limit)
        except TimeoutError:
            future.cancel()
            log.error("service.call_overran", limit_s=limit)
            return _failed(FailureKind.TIMEOUT, int(limit * 1000))
        except Exception:  # fail open: a crash is a failed hop, never a 500
            log.exception("service.call_crashed")
            return _failed(FailureKind.INTERNAL_ERROR, 0)

    async def walk_or_refusal(
        self, query: str, *, action: str, url: str | None, ctx: ToolContext
    ) -> Walk:
        """`call` for faces that speak in walks (MCP): a refusal becomes a failed hop."""
        try:
            return await self.call(query, action=action, url=url, ctx=ctx)
        except ServiceError as exc:
            self.metrics.reject(action, exc.kind)
            hop = Hop(provider="service", ok=False, elapsed_ms=0, failure_kind=exc.kind)
            return Walk(None, [hop.model_copy(update={"detail": str(exc)})])

    def chrome(self) -> dict[str, Any]:
        """Chrome as the driver last saw it (no CDP round trip)."""
        driver = self.tool.driver
        health = getattr(driver, "health", None)
        state: dict[str, Any] = {"endpoint": self.settings.cdp_endpoint}
        if health is not None:
            state.update(_as_dict(health))
        state.setdefault("connected", bool(driver.connected))
        state["up"] = state["state"] == "up" if "state" in state else state["connected"]
        return state

    def status(self) -> dict[str, Any]:
        queue = self.queue
        running_s = time.monotonic() - queue.running_since if queue.running else None
        return {
            "service": {
                "pid": os.getpid(),
                "uptime_s": round(time.monotonic() - self.started, 1),
                "draining": self.draining,
            },
            "queue": {
                "running": queue.running,
                "running_s": round(running_s, 2) if running_s is not None else None,
                "waiting": queue.waiting,
                "max_waiting": queue.max_waiting,
            },
            "screen": {"owned_tab_url": getattr(self.tool.driver, "owned_url", None)},
            "chrome": self.chrome(),
            "stream_browser": self.settings.stream_browser,
        }

    async def close(self) -> None:
        """Drop the CDP connection (Chrome and its tabs stay up) and stop the loop thread."""
        await asyncio.to_thread(self.tool.close)


def _failed(kind: FailureKind, elapsed_ms: int) -> Walk:
    return Walk(None, [Hop(provider="service", ok=False, elapsed_ms=elapsed_ms, failure_kind=kind)])


def _as_dict(value: Any) -> dict[str, Any]:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if hasattr(value, "__dataclass_fields__"):
        return {name: getattr(value, name) for name in value.__dataclass_fields__}
    if isinstance(value, dict):
        return dict(value)
    return {}


# -- readiness (what `doctor` checks) --------------------------------------------------------


def readiness(settings: Settings) -> dict[str, dict[str, Any]]:
    """Each part the configured mode needs: ok, detail, fix. Blocking (short timeouts)."""
    from gemini import find_gemini_binary, gemini_oauth_ready

    checks: dict[str, dict[str, Any]] = {}
    if settings.stream_browser:
        try:
            browser = cdp_version(settings.cdp_endpoint).get("Browser", "?")
            checks["chrome"] = {"ok": True, "detail": f"{browser} at {settings.cdp_endpoint}"}
            checks["egress"] = _egress_check(settings)
        except CdpUnreachable:
            checks["chrome"] = {
                "ok": False,
                "detail": f"nothing answers at {settings.cdp_endpoint}",
                "fix": "start it with `stream-browser chrome` (or set CDP_PORT / CDP_URL)",
            }
    if settings.gemini_auth == "oauth":
        binary = find_gemini_binary(settings)
        seeded = gemini_oauth_ready(settings)
        checks["gemini"] = {
            "ok": binary is not None and seeded,
            "detail": f"CLI {binary or 'not found'}, login {'seeded' if seeded else 'missing'}",
            "fix": "install the Gemini CLI and sign in once (or set GEMINI_OAUTH_DIR), "
            "or use GEMINI_AUTH=apikey",
        }
    else:
        present = settings.gemini_api_key is not None
        checks["gemini"] = {
            "ok": present,
            "detail": "API key present" if present else "GEMINI_API_KEY is not set",
            "fix": "set GEMINI_API_KEY",
        }
    for check in checks.values():
        if check["ok"]:
            check.pop("fix", None)
    return checks


def _egress_check(settings: Settings) -> dict[str, Any]:
    """Is the broadcast Chrome behind the egress guard? (`unknown`: not on this machine.)"""
    guard = egress_status(settings)
    check: dict[str, Any] = {"ok": guard.ok or guard.state == "unknown", "detail": guard.detail}
    if guard.hint:
        check["fix"] = guard.hint
    return check


# -- access control --------------------------------------------------------------------------


@dataclass(frozen=True)
class Access:
    """Who may call: the token, and the `Host` values that name the bound address."""

    token: str
    hosts: frozenset[str] | None  # None: any Host (a Unix socket, or a wildcard bind)

    def host_ok(self, host: str) -> bool:
        return self.hosts is None or host.lower() in self.hosts

    def token_ok(self, authorization: str) -> bool:
        scheme, _, given = authorization.partition(" ")
        if scheme.lower() != "bearer":
            return False
        return hmac.compare_digest(given.strip().encode(), self.token.encode())


def allowed_hosts(host: str, port: int) -> frozenset[str] | None:
    """`Host` values naming the bound address; loopback binds also accept `localhost`."""
    if host in ("0.0.0.0", "::", ""):
        return None
    names = {host.lower(), f"[{host}]" if ":" in host else host.lower()}
    if is_loopback(host):
        names |= {"localhost", "127.0.0.1", "[::1]"}
    return frozenset({*names, *(f"{name}:{port}" for name in names)})


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class Guard:
    """ASGI middleware in front of everything, mounted apps (`/mcp`) included.

    Order: browser-made requests (`Origin`, `Sec-Fetch-*`) and foreign `Host` values → 403;
    no or wrong bearer token → 401 (`/healthz` excepted); draining → 503; body over the limit
    → 413.
    """

    def __init__(self, app: Any, *, access: Access, service: Service) -> None:
        self.app = app
        self.access = access
        self.service = service

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {key.lower(): value for key, value in scope.get("headers", [])}
        refusal = self._refusal(scope, headers)
        if refusal is None:
            await self._forward(scope, receive, send, headers)
            return
        status, message, extra = refusal
        log.info("service.refused", status=status, path=scope.get("path"), reason=message)
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        await _send_json(send, status, {"error": message}, extra)

    def _refusal(
        self, scope: Any, headers: dict[bytes, bytes]
    ) -> tuple[int, str, dict[str, str]] | None:
        if any(name in headers for name in _BROWSER_HEADERS):
            return 403, "requests from web pages are refused (Origin/Sec-Fetch header)", {}
        if not self.access.host_ok(headers.get(b"host", b"").decode("latin-1")):
            return 403, "the Host header does not name this service's address", {}
        path = scope.get("path", "")
        if path not in UNAUTHENTICATED_PATHS:
            authorization = headers.get(b"authorization", b"").decode("latin-1")
            if not self.access.token_ok(authorization):
                return (
                    401,
                    "missing or wrong bearer token: send `Authorization: Bearer TOKEN` with "
                    "SB_SERVICE_TOKEN or the token file in the service's state directory",
                    {"www-authenticate": "Bearer"},
                )
        if self.service.draining and path not in UNAUTHENTICATED_PATHS:
            return 503, "the service is shutting down", {"retry-after": "5"}
        length = headers.get(b"content-length", b"0").decode("latin-1")
        if not length.isdigit() or int(length) > MAX_BODY_BYTES:
            return 413, f"the body must be at most {MAX_BODY_BYTES} bytes with a length", {}
        return None

    async def _forward(
        self, scope: Any, receive: Any, send: Any, headers: dict[bytes, bytes]
    ) -> None:
        if b"transfer-encoding" not in headers:
            await self.app(scope, receive, send)
            return
        body = await _read_bounded(receive)  # chunked: read it here, within the limit
        if body is None:
            await _send_json(send, 413, {"error": f"the body exceeds {MAX_BODY_BYTES} bytes"})
            return
        sent = False

        async def replay() -> dict[str, Any]:
            nonlocal sent
            if sent:
                return dict(await receive())
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)


async def _read_bounded(receive: Any) -> bytes | None:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks)
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            return None
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)


async def _send_json(
    send: Any, status: int, payload: dict[str, Any], extra: dict[str, str] | None = None
) -> None:
    body = JSONResponse(payload).body
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    headers += [(k.encode(), v.encode()) for k, v in (extra or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


# -- the token -------------------------------------------------------------------------------


def token_path(settings: Settings) -> Path:
    return Path(settings.state_dir).expanduser() / TOKEN_FILE_NAME


def ensure_token(settings: Settings) -> tuple[str, str]:
    """(token, where it came from): `SB_SERVICE_TOKEN`, else the token file (made at first
    start, mode 0600, in a 0700 directory) that clients on this machine read."""
    if settings.service_token is not None:
        return settings.service_token.get_secret_value(), "SB_SERVICE_TOKEN"
    path = token_path(settings)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        os.chmod(path, 0o600)
        token = path.read_text(encoding="utf-8").strip()
        if token:
            return token, str(path)
        path.unlink()
        return ensure_token(settings)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(secrets.token_urlsafe(32) + "\n")
    return path.read_text(encoding="utf-8").strip(), str(path)


# -- the app ---------------------------------------------------------------------------------


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
        return PlainTextResponse(text, media_type="text/plain; version=0.0.4")

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
    from search._mcp import mcp_http_app

    mcp = mcp_http_app(service.walk_or_refusal, settings=service.settings)
    service.lifespan_hooks.append(mcp.running)
    app.router.routes.append(mcp.route("/mcp"))  # exactly /mcp: a mount would redirect


# -- serving ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Bound:
    """A listening socket and how clients reach it."""

    sock: socket.socket
    url: str
    hosts: frozenset[str] | None


class StartRefused(Exception):
    """Settings the service will not start with; the message says how to fix them."""


def check_exposure(settings: Settings) -> None:
    if settings.service_socket or is_loopback(settings.service_host):
        return
    if settings.service_token is None:
        raise StartRefused(
            f"refusing to listen on {settings.service_host} (not a loopback address) without "
            "an explicit token: set SB_SERVICE_TOKEN to a long random secret that the "
            "clients also get, or bind to 127.0.0.1"
        )


def bind(settings: Settings) -> Bound:
    """Bind before starting, so port 0 works and the `Host` check knows the real port."""
    if settings.service_socket:
        path = Path(settings.service_socket).expanduser()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            sock.bind(str(path))
            os.chmod(path, 0o600)  # only this user may connect
        except OSError as exc:
            sock.close()
            raise StartRefused(
                f"cannot listen on the Unix socket {path} ({exc.strerror or exc}): set "
                "SB_SERVICE_SOCKET (or --socket) to a short path in a folder this user can write"
            ) from None
        sock.listen(128)
        return Bound(sock, f"unix://{path}", None)
    host = settings.service_host.strip("[]")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, settings.service_port))
    except OSError as exc:
        sock.close()
        in_use = exc.errno == errno.EADDRINUSE
        fix = (
            "another service may be running "
            f"(`curl http://{host}:{settings.service_port}/healthz`); set SB_SERVICE_PORT "
            "(or --port) to a free port"
            if in_use
            else "set SB_SERVICE_HOST (or --host) to an address of this machine, such as 127.0.0.1"
        )
        raise StartRefused(
            f"cannot listen on {host}:{settings.service_port} ({exc.strerror or exc}): {fix}"
        ) from None
    sock.listen(128)
    port = sock.getsockname()[1]
    shown = f"[{host}]" if family == socket.AF_INET6 else host
    return Bound(sock, f"http://{shown}:{port}", allowed_hosts(host, port))


class _DeadlineH11(H11Protocol):
    """uvicorn's h11 protocol with a deadline no client can stall.

    uvicorn has no timeout before a connection's first request, nor while a request head or
    body trickles in: any local user could hold sockets until the process runs out of file
    descriptors and accepts nobody, without a token. Here the whole request must arrive
    within `REQUEST_TIMEOUT_S` of the connection (or of the previous answer), and at most
    `MAX_CONNECTIONS` are open at once. A call that is running is never cut: the deadline
    only covers receiving the request.
    """

    _deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > MAX_CONNECTIONS:
            transport.close()
            return
        self._arm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm()  # the next request on this connection has the same deadline

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(REQUEST_TIMEOUT_S, self._expired)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expired(self) -> None:
        self._deadline = None
        waiting_for = {h11.IDLE: "request", h11.SEND_BODY: "body"}.get(self.conn.their_state)
        if waiting_for is None or self.transport.is_closing():
            return  # the request is in; its answer may take as long as the call does
        log.info("service.request_timeout", waiting_for=waiting_for, after_s=REQUEST_TIMEOUT_S)
        self.transport.close()


class _DrainingServer(uvicorn.Server):
    """uvicorn's server with a drain on the first SIGTERM/SIGINT instead of a quick stop.

    (uvicorn re-raises a captured signal after shutdown, which would end the process with
    status 143; a drained service exits 0.) A second signal stops at once.
    """

    def __init__(self, config: Any, service: Service) -> None:
        super().__init__(config)
        self.service = service

    def handle_exit(self, sig: int, frame: Any) -> None:
        if self.service.draining:
            self.should_exit = self.force_exit = True
            return
        self.service.drain()
        log.info("service.draining", signal=sig, running=self.service.queue.running)

    async def on_tick(self, counter: int) -> bool:
        if self.service.may_exit():
            self.should_exit = True
        return bool(await super().on_tick(counter))


@dataclass
class Prepared:
    """A bound, not yet running service: `run()` blocks until it stops (`stop()`)."""

    server: _DrainingServer
    bound: Bound
    token: str

    @property
    def url(self) -> str:
        return self.bound.url

    def run(self) -> None:
        self.server.run(sockets=[self.bound.sock])

    def stop(self) -> None:
        self.server.should_exit = True


def prepare(settings: Settings, tool: BrowseTool | None = None) -> Prepared:
    """Check the exposure, find or make the token, bind, build the app. `StartRefused`."""
    check_exposure(settings)
    try:
        token, source = ensure_token(settings)
    except OSError as exc:  # SB_STATE_DIR not writable: one line, not a traceback
        raise StartRefused(
            f"cannot keep the service token in {token_path(settings)} "
            f"({exc.strerror or exc}): set SB_STATE_DIR to a folder this user can write, "
            "or set SB_SERVICE_TOKEN"
        ) from None
    bound = bind(settings)
    service = Service.create(settings, tool)
    app = create_app(service, Access(token, bound.hosts))
    config = uvicorn.Config(
        app,
        loop="asyncio",
        http=_DeadlineH11,
        log_level="warning",
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=int(settings.call_deadline_s) + 5,
        server_header=False,
    )
    log.info("service.started", url=bound.url, auth_from=source, queue_max=settings.queue_max)
    return Prepared(_DrainingServer(config, service), bound, token)


def serve(settings: Settings, *, ready: Callable[[str], None] | None = None) -> int:
    """Run until SIGTERM/SIGINT; 0 after a clean drain. Raises `StartRefused`."""
    prepared = prepare(settings)
    # the log scrubber also knows a generated token (SB_SERVICE_TOKEN is in the settings)
    secrets_ = (*settings.secret_values(), prepared.token)
    configure_logging(settings.log_level, settings.log_format, secrets=secrets_)
    if ready is not None:
        ready(prepared.url)
    prepared.run()
    log.info("service.stopped", url=prepared.url)
    return 0
