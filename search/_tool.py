"""`browse_and_search`: the one function the brain calls.

Never raises and never hangs: every failure degrades to the next provider, then to `None`
(so the brain falls back to its own search cascade), and the whole call is bounded by
`SB_CALL_DEADLINE_S`. Synchronous callers on any thread share one event-loop thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any, cast

import structlog

from browser_core import (
    BlockedUrl,
    Deadline,
    Driver,
    Hop,
    LoopThread,
    Settings,
    ToolExecutionResult,
    bound_request,
    load_settings,
)
from browser_core._results import utcnow
from search._routing import REFUSALS, Registry, Walk, mode_for, walk
from search._types import ACTIONS, Action, Request, ToolContext
from search.providers import GeminiProvider, GoogleProvider, ReadProvider, YoutubeProvider

log = structlog.get_logger(__name__)
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def default_registry(driver: Driver) -> Registry:
    """The production providers: three on the broadcast tab, and Gemini."""
    registry = Registry()
    registry.register(GoogleProvider(driver))
    registry.register(ReadProvider(driver))
    registry.register(YoutubeProvider(driver))
    registry.register(GeminiProvider())
    return registry


def resolve(query: str, action: str, url: str | None, read_top: int = 0) -> Request:
    """Turn the LLM's parameters into a request; `auto` reads a URL, otherwise searches."""
    if action not in ACTIONS:
        raise ValueError(f"action must be one of {', '.join(ACTIONS)}, not {action!r}")
    query = " ".join(_CONTROL.sub(" ", query or "").split())
    url = (url or "").strip() or None
    if action == "auto":
        looks_like_url = query.startswith(("http://", "https://")) and " " not in query
        if url is None and looks_like_url:
            url = query
        action = "read" if url else "search"
    if action == "read" and url is None:
        url = query
    return Request(
        action=cast(Action, action), query=query or (url or ""), url=url, read_top=read_top
    )


@dataclass
class _Cache:
    ttl_s: float
    entries: dict[tuple[str, ...], tuple[float, ToolExecutionResult]] = field(default_factory=dict)

    def get(self, key: tuple[str, ...]) -> ToolExecutionResult | None:
        hit = self.entries.get(key)
        if hit is None or hit[0] < time.monotonic():
            self.entries.pop(key, None)
            return None
        return hit[1]

    def put(self, key: tuple[str, ...], result: ToolExecutionResult) -> None:
        if self.ttl_s > 0:
            if len(self.entries) > 256:
                self.entries.clear()
            self.entries[key] = (time.monotonic() + self.ttl_s, result)


class BrowseTool:
    """The tool with its providers, driver and cache. Async core; `call` for threads."""

    def __init__(
        self,
        settings: Settings,
        *,
        registry: Registry | None = None,
        driver: Driver | None = None,
        loop: LoopThread | None = None,
    ) -> None:
        self.settings = settings
        self.driver = driver or Driver(settings)
        self.registry = registry or default_registry(self.driver)
        self.loop = loop or LoopThread()
        self.cache = _Cache(settings.cache_ttl_s)
        _warn_if_no_login(settings)

    async def arun(
        self,
        query: str,
        *,
        action: str = "auto",
        url: str | None = None,
        ctx: ToolContext | None = None,
        read_top: int = 0,
    ) -> Walk:
        """Route one call and return the walk (result or None, and every hop)."""
        ctx = ctx or ToolContext()
        request = resolve(query, action, url, read_top)
        mode = mode_for(self.settings, ctx)
        deadline = Deadline(self.settings.call_deadline_s)
        with bound_request(action=request.action, mode=mode):
            refusal = REFUSALS.get((mode, request.action))
            if refusal:
                log.info("tool.refused", reason=refusal)
                return Walk(_refused(refusal, request), [])
            if not request.query:
                return Walk(
                    None, [Hop(provider="tool", ok=False, elapsed_ms=0, failure_kind="empty-query")]
                )
            if request.action == "read" and request.url:
                try:
                    await self.driver.check(request.url)
                except BlockedUrl as exc:  # no provider may open it, Gemini included
                    log.info("tool.refused", failure_kind=exc.kind, reason=exc.message)
                    hop = Hop(
                        provider="policy",
                        ok=False,
                        elapsed_ms=0,
                        failure_kind=exc.kind,
                        detail=exc.message,
                    )
                    return Walk(_refused(f"I can't open that address: {exc}", request), [hop])
            key = (
                mode,
                request.action,
                request.query.lower(),
                request.url or "",
                str(request.read_top),
            )
            cached = self.cache.get(key) if request.action != "play" else None
            if cached is not None:
                log.info("tool.cache_hit")
                return Walk(cached, cached.chain)
            result = await walk(
                self.registry.table(mode, request.action), request, self.settings, deadline
            )
            log.info(
                "tool.done",
                ok=result.result is not None,
                elapsed_ms=deadline.elapsed_ms(),
                provider=result.result.provider if result.result else None,
            )
            if result.result is not None and result.result.success:
                self.cache.put(key, result.result)
            return result

    async def acall(
        self,
        query: str,
        *,
        action: str = "auto",
        url: str | None = None,
        ctx: ToolContext | None = None,
    ) -> ToolExecutionResult | None:
        try:
            return (await self.arun(query, action=action, url=url, ctx=ctx)).result
        except Exception:
            log.exception("tool.crashed")
            return None

    def call(
        self,
        query: str,
        *,
        action: str = "auto",
        url: str | None = None,
        ctx: ToolContext | None = None,
    ) -> ToolExecutionResult | None:
        """Synchronous, safe from any thread; bounded by the call deadline."""
        try:
            return self.loop.run(
                self.acall(query, action=action, url=url, ctx=ctx),
                self.settings.call_deadline_s + 2.0,
            )
        except Exception:
            log.warning("tool.call_failed", failure_kind="timeout")
            return None

    def run_sync(self, query: str, **kw: Any) -> Walk:
        """Like `call` but returns the walk (used by the CLI for the provider chain)."""
        return self.loop.run(self.arun(query, **kw), self.settings.call_deadline_s + 2.0)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.loop.run(self.driver.close(), 10)
        self.loop.stop()


def _warn_if_no_login(settings: Settings) -> None:
    from gemini import gemini_oauth_ready

    if settings.gemini_auth == "oauth" and not gemini_oauth_ready(settings):
        log.warning(
            "gemini.no_login",
            failure_kind="gemini-auth",
            hint="no Gemini CLI login is seeded: run `gemini` once interactively, set "
            "GEMINI_OAUTH_DIR to a seeded ~/.gemini, or use GEMINI_AUTH=apikey",
        )


def _refused(text: str, request: Request) -> ToolExecutionResult:
    return ToolExecutionResult(
        success=False,
        reply_text=text,
        provider="none",
        action=request.action,
        query=request.query,
        retrieved_at=utcnow(),
    )


_default: BrowseTool | None = None
_default_lock = threading.Lock()


def configure(settings: Settings | None = None) -> BrowseTool:
    """Set (or reset) the settings the module-level `browse_and_search` uses."""
    with _default_lock:
        return _replace_default(settings)


def _replace_default(settings: Settings | None) -> BrowseTool:
    global _default
    if _default is not None:
        _default.close()
    _default = BrowseTool(settings or load_settings())
    return _default


def _tool() -> BrowseTool:
    with _default_lock:  # one check-and-create, so racing threads share one tool
        return _default if _default is not None else _replace_default(None)


def browse_and_search(
    query: str, *, action: str = "auto", url: str | None = None, ctx: ToolContext | None = None
) -> ToolExecutionResult | None:
    """Search, read or play for the brain; `None` when every provider failed."""
    try:
        tool = _tool()
    except Exception:
        log.exception("tool.not_configured")
        return None
    return tool.call(query, action=action, url=url, ctx=ctx)


async def abrowse_and_search(
    query: str, *, action: str = "auto", url: str | None = None, ctx: ToolContext | None = None
) -> ToolExecutionResult | None:
    """The async twin. Runs on the tool's own loop thread, so any event loop may await it."""
    return await asyncio.to_thread(browse_and_search, query, action=action, url=url, ctx=ctx)
