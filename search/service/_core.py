"""The service object: one `BrowseTool` (one driver, one owned tab), its queue and counters;
`call` is the one entry every face uses (HTTP and MCP alike)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Awaitable, Callable, Coroutine
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol

import structlog
from pydantic import BaseModel

from browser_core import (
    FailureKind,
    Hop,
    Settings,
)

from .._routing import Walk
from .._tool import BrowseTool
from .._types import ToolContext
from .._version import version
from ._metrics import Metrics
from ._queue import CallQueue, Draining, ServiceError

log = structlog.get_logger("search.service")


LifespanHook = Callable[[], AbstractAsyncContextManager[Any]]


class CallWatcher(Protocol):
    """Told of every call at the tool boundary (the console): cheap, on the HTTP loop."""

    def started(self, face: str, action: str, query: str, url: str | None) -> Any: ...

    def finished(self, record: Any, walk: Walk) -> None: ...

    def refused(self, face: str, action: str, status: int, kind: str, reason: str) -> None: ...


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
    watcher: CallWatcher | None = None  # the console, told of every call and refusal
    # once the stop grace is over every call still waiting or running is answered 503: each
    # call waits on a future of its own loop here, all resolved at once
    grace_over: bool = False
    _grace_waiters: set[asyncio.Future[None]] = field(default_factory=set)

    @classmethod
    def create(cls, settings: Settings, tool: BrowseTool | None = None) -> Service:
        service = cls(
            settings,
            tool or BrowseTool(settings),
            CallQueue(settings.queue_max),
            Metrics(settings.instance),
        )
        # A call waiting in the service's line is one waiting for the tab: the show after an
        # answer yields to it (it reaches the driver only once the running call returns).
        sources = getattr(service.tool.driver, "waiting_sources", None)
        if isinstance(sources, list):
            queue = service.queue
            sources.append(lambda: queue.waiting > 0)
        return service

    @property
    def draining(self) -> bool:
        return self.draining_since is not None

    def drain(self) -> None:
        """Stop taking calls; the running one may finish within the stop grace (SIGTERM)."""
        if self.draining_since is None:
            self.draining_since = time.monotonic()

    def end_grace_if_due(self) -> bool:
        """Called on the server's tick while draining: once `SB_STOP_GRACE_S` has passed,
        answer every call still waiting or running with 503 "shutting down" (the engine's
        SIGKILL would cut their connections otherwise). True once the grace is over."""
        if self.draining_since is None:
            return False
        due = time.monotonic() - self.draining_since >= self.settings.stop_grace_s
        if due and not self.grace_over:
            log.warning(
                "service.stop_grace_over",
                grace_s=self.settings.stop_grace_s,
                running=self.queue.running,
                waiting=self.queue.waiting,
            )
            self.grace_over = True
            for waiter in self._grace_waiters:
                if not waiter.done():
                    waiter.set_result(None)
        return due

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
        engine: str | None = None,
        gone: Callable[[], Awaitable[bool]] | None = None,
        face: str = "http",
    ) -> Walk:
        """Wait for the turn, run the tool. Raises `QueueFull` or `Draining` (not run, or cut
        short when the stop grace ran out). `face` (http, mcp, cli) is for the console's record
        of the call."""
        try:
            return await self._call(query, action, url, ctx, (read_top, engine), gone, face)
        except ServiceError as exc:
            if self.watcher is not None and exc.status in (429, 503):
                self.watcher.refused(face, action, exc.status, exc.kind, str(exc))
            raise

    async def _call(
        self,
        query: str,
        action: str,
        url: str | None,
        ctx: ToolContext | None,
        options: tuple[int, str | None],
        gone: Callable[[], Awaitable[bool]] | None,
        face: str,
    ) -> Walk:
        """The call, answered `Draining` when the stop grace runs out before it ends;
        `options`: the search's read_top and engine."""
        if self.draining:
            raise Draining("the service is shutting down", retry_after_s=5)
        call = asyncio.ensure_future(
            self._turn_and_run(
                query, action=action, url=url, ctx=ctx, options=options, gone=gone, face=face
            )
        )
        over: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._grace_waiters.add(over)
        try:
            either: set[asyncio.Future[Any]] = {call, over}
            await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:  # the caller's own request was cancelled
            call.cancel()
            raise
        finally:
            self._grace_waiters.discard(over)
            over.cancel()
        if call.done():
            return call.result()
        call.cancel()
        with contextlib.suppress(asyncio.CancelledError, ServiceError):
            await call
        raise Draining(
            "the service is shutting down: this call did not finish within its stop grace "
            f"(SB_STOP_GRACE_S={self.settings.stop_grace_s:g} s)",
            retry_after_s=5,
        )

    async def _turn_and_run(
        self,
        query: str,
        *,
        action: str,
        url: str | None,
        ctx: ToolContext | None,
        options: tuple[int, str | None],
        gone: Callable[[], Awaitable[bool]] | None,
        face: str,
    ) -> Walk:
        read_top, engine = options
        async with self.queue.turn(action):
            if self.draining:
                raise Draining("the service is shutting down", retry_after_s=5)
            if gone is not None and await gone():  # its caller stopped waiting: skip it
                log.info("service.skipped", action=action, reason="client disconnected")
                raise Draining("the caller went away")
            watcher = self.watcher
            record = watcher.started(face, action, query, url) if watcher else None
            started = time.monotonic()
            coro = self.tool.arun(
                query, action=action, url=url, ctx=ctx, read_top=read_top, engine=engine
            )
            walk = await self._on_tool_loop(coro)
            self.metrics.observe(action, walk, time.monotonic() - started)
            if watcher is not None:
                watcher.finished(record, walk)
            return walk

    async def _on_tool_loop(self, coro: Coroutine[Any, Any, Walk]) -> Walk:
        """Run on the tool's loop thread (as in-process callers do): parsing a heavy page
        there never stalls the HTTP loop's health checks and 429s."""
        future = asyncio.run_coroutine_threadsafe(coro, self.tool.loop.loop)
        limit = getattr(self.tool, "outer_timeout_s", self.settings.call_deadline_s) + 5.0
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), limit)
        except asyncio.CancelledError:  # the stop grace ran out: the tool's call goes too
            future.cancel()
            raise
        except TimeoutError:
            future.cancel()
            log.error("service.call_overran", limit_s=limit)
            return _failed(FailureKind.TIMEOUT, int(limit * 1000))
        except Exception:  # fail open: a crash is a failed hop, never a 500
            log.exception("service.call_crashed")
            return _failed(FailureKind.INTERNAL_ERROR, 0)

    async def walk_or_refusal(
        self,
        query: str,
        *,
        action: str,
        url: str | None,
        ctx: ToolContext,
        engine: str | None = None,
        gone: Callable[[], Awaitable[bool]] | None = None,
        face: str = "mcp",
    ) -> Walk:
        """`call` for faces that speak in walks (MCP): a refusal becomes a failed hop."""
        try:
            return await self.call(
                query, action=action, url=url, ctx=ctx, engine=engine, gone=gone, face=face
            )
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

    def engines(self) -> dict[str, dict[str, Any]]:
        """Each search engine's rest after it refused (resting, why, since, until)."""
        providers = self.tool.registry.providers
        return {
            name: provider.rest.state()
            for name, provider in providers.items()
            if hasattr(provider, "rest")
        }

    def status(self) -> dict[str, Any]:
        queue = self.queue
        running_s = time.monotonic() - queue.running_since if queue.running else None
        return {
            "instance": self.settings.instance,
            "service": {
                "version": version(),
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
            "screen": self.screen(),
            "alerts": self.alerts(),
            "chrome": self.chrome(),
            "engines": self.engines(),
            "parses": self.parses(),
            "cases": self.cases()[:20],
            "stream_browser": self.settings.stream_browser,
        }

    def screen(self) -> dict[str, Any]:
        """The owned tab's address, and who holds the screen from the console (a name, or
        None: the calls drive it)."""
        driver = self.tool.driver
        hold = getattr(driver, "hold", None)
        holder = hold.current() if hold is not None else None
        return {
            "owned_tab_url": getattr(driver, "owned_url", None),
            "held_by": holder.name if holder is not None else None,
        }

    def alerts(self) -> list[dict[str, Any]]:
        """The open alerts: a search engine that refused us (captcha, consent, blocked)."""
        alerts = getattr(self.tool, "alerts", None)
        return list(alerts.active()) if alerts is not None else []

    def parses(self) -> dict[str, dict[str, Any]]:
        """Each search engine's parses by health (ok, suspect) and the last one's."""
        watch = getattr(self.tool, "parses", None)
        return watch.state() if watch is not None else {}

    def cases(self) -> list[dict[str, Any]]:
        """The results pages kept because their parse was suspect, newest first (name,
        engine, query, when, reasons)."""
        watch = getattr(self.tool, "parses", None)
        if watch is None:
            return []
        return [
            {
                "name": case.get("name"),
                "engine": case.get("engine"),
                "query": case.get("query"),
                "at": case.get("at"),
                "reasons": (case.get("health") or {}).get("reasons", []),
            }
            for case in watch.cases.list()
        ]

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
