"""The service object: one `BrowseTool` (one driver, one owned tab), its queue and counters;
`call` is the one entry every face uses (HTTP and MCP alike)."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable, Coroutine
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any

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
        service = cls(settings, tool or BrowseTool(settings), CallQueue(settings.queue_max))
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
